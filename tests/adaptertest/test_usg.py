"""USG-01: the usage a live run reports is coherent, in both live probes."""

from __future__ import annotations

from typing import Any

import pytest

from adaptertest import ClauseStatus, ConformanceReport, Options, check_driver
from adaptertest._violation import WITHHELD
from adaptertest.options import Backend
from adaptertest.usg import usage_problems, verify_usage
from driver import EventSink, Request, Response, RunEvent, StreamKind, StreamPayload, Usage
from referencedriver import ReferenceConfig, ReferenceDriver

KEPT: Any = object()
"""Leave this usage as the reference driver reports it."""

# Claude Code's own counting: input excludes the cache reads (and writes).
EXCLUSIVE = Usage(input_tokens=10, cached_input_tokens=13796, output_tokens=264)
INCLUSIVE = Usage(input_tokens=89050, cached_input_tokens=81408, output_tokens=1200)


def finished(usage: Usage | None) -> StreamPayload:
    return StreamPayload(kind=StreamKind.RUN_FINISHED, usage=usage)


def problems(response_usage: Usage | None, *stream: StreamPayload) -> list[str]:
    found = verify_usage(Response(usage=response_usage), list(stream))
    assert all(v.clause == "USG-01" for v in found)
    return [v.message for v in found]


# -- the pure check ---------------------------------------------------------------------------


def test_coherent_usage_passes() -> None:
    assert (
        problems(INCLUSIVE, StreamPayload(kind=StreamKind.RUN_STARTED), finished(INCLUSIVE)) == []
    )
    assert problems(None) == []  # not observed
    assert problems(Usage()) == []  # zeros are real
    assert problems(INCLUSIVE, finished(None)) == []  # run.finished without usage


def test_more_cached_than_input_fails() -> None:
    (message,) = problems(EXCLUSIVE)
    assert message.startswith(
        "response.usage.cached_input_tokens (13796) exceeds input_tokens (10)"
    )
    assert "cache reads and writes included" in message


@pytest.mark.parametrize(
    "name", ["input_tokens", "cached_input_tokens", "output_tokens", "estimated_cost_milli"]
)
def test_a_negative_count_fails(name: str) -> None:
    found = problems(Usage(**{"input_tokens": 5, name: -1}))
    assert f"response.usage.{name} is negative (-1)" in found


def test_run_finished_usage_must_equal_the_response_usage() -> None:
    other = INCLUSIVE.model_copy(update={"output_tokens": 1})
    (message,) = problems(INCLUSIVE, finished(other))
    assert message.startswith("stream[0] (run.finished) usage (input_tokens=89050, ")
    assert "output_tokens=1," in message
    assert "differs from response.usage (input_tokens=89050" in message
    (message,) = problems(None, finished(INCLUSIVE))
    assert message.endswith("differs from response.usage None (not observed)")


def test_every_usage_in_the_stream_is_judged() -> None:
    step = StreamPayload(kind=StreamKind.STEP_FINISHED, name="turn", usage=EXCLUSIVE)
    (message,) = problems(None, StreamPayload(kind=StreamKind.RUN_STARTED), step)
    assert message.startswith("stream[1] (step.finished) usage.cached_input_tokens (13796)")


def test_garbage_is_judged_not_crashed_on() -> None:
    # Built without validation, as a driver that bypasses pydantic can.
    bogus: Any = {"input_tokens": "12", "output_tokens": True}
    found = usage_problems(Usage.model_construct(**bogus), "u")
    assert "u.input_tokens is a str, not an int" in found
    assert "u.output_tokens is a bool, not an int" in found
    assert usage_problems({"input_tokens": 1}, "u") == ["u is a dict, not a driver.Usage"]
    raw: Any = {"kind": StreamKind.RUN_FINISHED, "usage": {"input_tokens": 1}}
    stray: Any = "not a payload"
    assert problems(None, StreamPayload.model_construct(**raw), stray) == [
        "stream[0] (run.finished) usage is a dict, not a driver.Usage"
    ]


# -- through the live probes ------------------------------------------------------------------


class _FinishedUsage:
    """Forwards everything, with run.finished carrying ``usage``."""

    def __init__(self, sink: EventSink, usage: Usage | None) -> None:
        self._sink = sink
        self._usage = usage

    def emit(self, event: RunEvent) -> None:
        self._sink.emit(event)

    def emit_stream(self, payload: StreamPayload) -> None:
        if payload.kind == StreamKind.RUN_FINISHED:
            payload = payload.model_copy(update={"usage": self._usage})
        self._sink.emit_stream(payload)


class UsageDriver(ReferenceDriver):
    """The reference driver reporting chosen usages in its response and run.finished."""

    def __init__(
        self,
        response: Usage | None = KEPT,
        stream: Usage | None = KEPT,
        config: ReferenceConfig | None = None,
    ) -> None:
        super().__init__(config or ReferenceConfig())
        self._response = response
        self._stream = stream

    async def run(self, request: Request, sink: EventSink) -> Response:
        if self._stream is not KEPT:
            sink = _FinishedUsage(sink, self._stream)
        response = await super().run(request, sink)
        if self._response is KEPT:
            return response
        return response.model_copy(update={"usage": self._response})


def live(driver: UsageDriver, backend: Backend = "asyncio") -> ConformanceReport:
    options = Options(
        config=ReferenceConfig(),
        live_run=True,
        live_structured_output=True,
        live_run_timeout=10.0,
        backend=backend,
    )
    return check_driver(lambda: driver, options, only=["LIV", "USG"])


def verdict(report: ConformanceReport) -> tuple[ClauseStatus, tuple[str, ...]]:
    failing = {r.clause for r in report.results if r.status is ClauseStatus.FAILED}
    assert failing <= {"USG-01"}, failing
    (result,) = [r for r in report.results if r.clause == "USG-01"]
    return result.status, result.messages


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_reference_passes(backend: Backend) -> None:
    assert verdict(live(UsageDriver(), backend)) == (ClauseStatus.PASSED, ())


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_exclusive_input_with_more_cached_fails_in_both_probes(backend: Backend) -> None:
    status, messages = verdict(live(UsageDriver(EXCLUSIVE, EXCLUSIVE), backend))
    assert status is ClauseStatus.FAILED
    for probe in ("live_run", "live_structured_output"):
        assert any(
            m.startswith(f"USG-01: [{probe}] response.usage.cached_input_tokens (13796)")
            for m in messages
        ), messages
    # Counts are no provider text: shown without show_live_details.
    assert not any(WITHHELD in m for m in messages)


def test_a_negative_count_fails_the_run() -> None:
    negative = Usage(input_tokens=12, output_tokens=-34)
    status, messages = verdict(live(UsageDriver(negative, negative)))
    assert status is ClauseStatus.FAILED
    assert any("response.usage.output_tokens is negative (-34)" in m for m in messages)


def test_run_finished_usage_unlike_the_response_fails() -> None:
    status, messages = verdict(live(UsageDriver(stream=INCLUSIVE)))
    assert status is ClauseStatus.FAILED
    assert any("(run.finished) usage (input_tokens=89050" in m for m in messages)
    assert any("differs from response.usage (input_tokens=12," in m for m in messages)


def test_usage_only_in_the_response_passes() -> None:
    assert verdict(live(UsageDriver(stream=None))) == (ClauseStatus.PASSED, ())


def test_a_failed_run_is_judged_too() -> None:
    failing = ReferenceConfig(fail_run=True)
    report = check_driver(
        lambda: UsageDriver(EXCLUSIVE, config=failing),
        Options(config=failing, live_run=True, live_run_timeout=10.0),
        only=["LIV-01", "USG-01"],
    )
    status = {r.clause: r.status for r in report.results}
    assert status == {"LIV-01": ClauseStatus.FAILED, "USG-01": ClauseStatus.FAILED}
