"""CON-01: concurrent runs on one driver instance stay apart."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import anyio
import pytest

from adaptertest import ClauseStatus, ConformanceReport, Options, check_driver
from adaptertest.con import concurrent_request
from adaptertest.options import Backend
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
from referencedriver import (
    ReferenceConfig,
    ReferenceDriver,
    adaptertest_options,
    new_reference_driver,
)


def check(factory: Callable[[], object], **overrides: Any) -> ConformanceReport:
    settings: dict[str, Any] = {
        "config": ReferenceConfig(),
        "live_run": True,
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


class CountsRuns(ReferenceDriver):
    """Counts every run() call made on any instance."""

    calls = 0

    async def run(self, request: Request, sink: EventSink) -> Response:
        type(self).calls += 1
        return await super().run(request, sink)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_concurrent_runs_alone_never_call_run(backend: Backend) -> None:
    CountsRuns.calls = 0
    options = Options(config=ReferenceConfig(), concurrent_runs=3, backend=backend)
    report = check_driver(lambda: CountsRuns(ReferenceConfig()), options)
    assert CountsRuns.calls == 0
    result = report.result("CON-01")
    assert result.status is ClauseStatus.SKIPPED
    assert "live_run=True" in result.messages[0]
    assert "call the provider 3 times" in result.messages[0]
    check(lambda: CountsRuns(ReferenceConfig()), concurrent_runs=3, backend=backend)
    assert CountsRuns.calls == 3


def test_the_reference_published_options_run_nothing_live() -> None:
    """A driver copied from the reference, options included, calls its CLI only on --live."""
    CountsRuns.calls = 0
    report = check_driver(lambda: CountsRuns(ReferenceConfig()), adaptertest_options())
    assert CountsRuns.calls == 0
    assert report.ok, report.summary()
    assert report.result("CON-01").status is ClauseStatus.SKIPPED


def test_per_run_state_on_self_fails() -> None:
    report = check(lambda: SharedTranscript(ReferenceConfig()))
    result = report.result("CON-01")
    assert result.status is ClauseStatus.FAILED
    # Structure is shown without any opt-in: the run, the inner clause, the counts.
    assert any(
        m.startswith("CON-01: run 1: RUN-04: item events carry 3 item(s)") for m in result.messages
    ), result.messages
    assert any(n.startswith("live diagnostic (run 1): ") for n in result.notes)


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


class FailsCleanly(ReferenceDriver):
    """Every run fails legally: a Response with a failure, a stream ending in run.error."""

    def __init__(self) -> None:
        super().__init__(ReferenceConfig(fail_run=True))


class MissingBinary(ReferenceDriver):
    async def run(self, request: Request, sink: EventSink) -> Response:
        raise FileNotFoundError(2, "No such file or directory", "agent-cli")


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_legal_failure_does_not_fail_con01(backend: Backend) -> None:
    report = check(FailsCleanly, backend=backend)
    assert report.result("CON-01").status is ClauseStatus.PASSED, report.result("CON-01")


def test_a_raise_without_a_response_fails_con01_with_its_location() -> None:
    messages = check(MissingBinary).result("CON-01").messages
    assert len(messages) == 4
    assert re.fullmatch(
        r"CON-01: run 1: run\(\) raised builtins\.FileNotFoundError at "
        r"tests/adaptertest/test_probe_con\.py:\d+ in run: "
        r"<withheld: 48 chars, sha256:[0-9a-f]{12}>, with no Response",
        messages[0],
    ), messages[0]
    assert "No such file" not in "\n".join(messages)
