"""CON-01: concurrent runs on one driver instance stay apart."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import pytest

from adaptertest import ClauseStatus, ConformanceReport, Options, check_driver
from adaptertest.con import concurrent_request
from adaptertest.liv import LIVE_REDACTED
from driver import (
    EventSink,
    Request,
    Response,
    RunEvent,
    RunEventType,
    StreamKind,
    StreamPayload,
    TranscriptItem,
    TranscriptKind,
)
from referencedriver import ReferenceConfig, ReferenceDriver, new_reference_driver


def check(factory: Callable[[], object], **overrides: Any) -> ConformanceReport:
    settings: dict[str, Any] = {
        "config": ReferenceConfig(),
        "concurrent_runs": 4,
        "live_run_timeout": 10.0,
    }
    settings.update(overrides)
    return check_driver(factory, Options(**settings), only=["CON-01"])


class SharedTranscript(ReferenceDriver):
    """Keeps the transcript on self, reset at the start of every run."""

    async def run(self, request: Request, sink: EventSink) -> Response:
        self._transcript: list[TranscriptItem] = []
        sink.emit_stream(StreamPayload(kind=StreamKind.RUN_STARTED, run_id=request.run_id))
        for text in ("first", "second", "third"):
            item = TranscriptItem(kind=TranscriptKind.ASSISTANT, text=text)
            self._transcript.append(item)
            sink.emit(RunEvent(type=RunEventType.ITEM, item=item))
            await anyio.sleep(0)
        sink.emit_stream(StreamPayload(kind=StreamKind.RUN_FINISHED, run_id=request.run_id))
        return Response(output="OK", transcript=self._transcript)


class SharedCounter(ReferenceDriver):
    """Numbers messages with a counter shared by every run of the instance."""

    def __init__(self) -> None:
        super().__init__(ReferenceConfig())
        self._messages = 0

    async def run(self, request: Request, sink: EventSink) -> Response:
        sink.emit_stream(StreamPayload(kind=StreamKind.RUN_STARTED))
        self._messages += 1
        for kind, delta in (
            (StreamKind.TEXT_START, ""),
            (StreamKind.TEXT_CONTENT, "OK"),
            (StreamKind.TEXT_END, ""),
        ):
            sink.emit_stream(StreamPayload(kind=kind, message_id=f"m{self._messages}", delta=delta))
            await anyio.sleep(0)
        sink.emit_stream(StreamPayload(kind=StreamKind.RUN_FINISHED))
        return Response(output="OK")


class SharedRunId(ReferenceDriver):
    """Remembers the current run id on self and stamps payloads with it."""

    async def run(self, request: Request, sink: EventSink) -> Response:
        self._run_id = request.run_id
        for kind in (StreamKind.RUN_STARTED, StreamKind.RUN_FINISHED):
            sink.emit_stream(StreamPayload(kind=kind, run_id=self._run_id))
            await anyio.sleep(0)
        return Response(output="OK")


def test_concurrent_request_carries_its_own_run_id() -> None:
    request = concurrent_request(Options(), 3)
    assert request.run_id == "adaptertest-concurrent-3"
    assert request.streaming


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_reference_passes(backend: str) -> None:
    report = check(new_reference_driver, backend=backend)
    assert report.result("CON-01").status is ClauseStatus.PASSED


def test_skipped_unless_asked_for() -> None:
    off = check(new_reference_driver, concurrent_runs=0)
    assert off.result("CON-01").status is ClauseStatus.SKIPPED
    assert "concurrent_runs=N" in off.result("CON-01").messages[0]
    skipped = check(new_reference_driver, skip_live_run="no CLI")
    assert skipped.result("CON-01").messages == ("CON-01 skipped: no CLI",)


def test_per_run_state_on_self_fails() -> None:
    report = check(lambda: SharedTranscript(ReferenceConfig()))
    result = report.result("CON-01")
    assert result.status is ClauseStatus.FAILED
    assert f"CON-01: run 1: RUN-04: {LIVE_REDACTED}" in result.messages
    assert any(n.startswith("live diagnostic (run 1): ") for n in result.notes)


def test_per_run_state_details_when_asked() -> None:
    report = check(lambda: SharedTranscript(ReferenceConfig()), show_live_details=True)
    messages = report.result("CON-01").messages
    assert any(m.startswith("CON-01: run 1: RUN-04: item events carry 3 item(s)") for m in messages)


def test_a_shared_message_counter_fails() -> None:
    report = check(SharedCounter, show_live_details=True)
    result = report.result("CON-01")
    assert result.status is ClauseStatus.FAILED
    assert any(": EVT-03: " in m for m in result.messages)


def test_another_runs_id_is_crosstalk() -> None:
    report = check(lambda: SharedRunId(ReferenceConfig()))
    messages = report.result("CON-01").messages
    assert (
        "CON-01: run 1: crosstalk: payload 1 carries run_id 'adaptertest-concurrent-4' of run 4"
        in messages
    )


def test_one_run_alone_cannot_cross_talk() -> None:
    report = check(lambda: SharedRunId(ReferenceConfig()), concurrent_runs=1)
    assert report.result("CON-01").status is ClauseStatus.PASSED
