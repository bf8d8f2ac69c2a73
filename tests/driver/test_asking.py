"""``ask_host``: the one decision exchange the reference, clikit's Claude example and
acpkit share (announce, bounded wait, raising sink, close, cancellation)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import anyio
import pytest

from driver import (
    DecisionRequest,
    DecisionResponse,
    DecisionResult,
    HumanDecisionKind,
    HumanDecisionPolicy,
    RunEvent,
    StreamKind,
    StreamPayload,
    ask_host,
)

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])]

REQUEST = DecisionRequest(
    request_id="r-1",
    run_id="run",
    thread_id="thread",
    kind=HumanDecisionKind.PERMISSION,
    source="test",
    tool_call_id="call-1",
    prompt="rm -rf build",
    payload={"command": "rm -rf build"},
    created_at=datetime(2026, 1, 1, tzinfo=UTC),
    retry_attempt=2,
)


class Sink:
    """A decision sink that answers with ``reply`` (an exception is raised; None never
    answers) and keeps what it was asked."""

    def __init__(self, reply: DecisionResponse | Exception | None) -> None:
        self.reply = reply
        self.asked: list[DecisionRequest] = []

    def emit(self, event: RunEvent) -> None:
        pass

    def emit_stream(self, payload: StreamPayload) -> None:
        pass

    async def request_decision(self, request: DecisionRequest) -> DecisionResponse:
        self.asked.append(request)
        request.payload["command"] = "changed by the host"
        if isinstance(self.reply, Exception):
            raise self.reply
        if self.reply is None:
            await anyio.sleep(math.inf)
        assert isinstance(self.reply, DecisionResponse)
        return self.reply


def policy(seconds: float) -> HumanDecisionPolicy:
    return HumanDecisionPolicy(timeout=timedelta(seconds=seconds))


async def test_an_answer_is_framed_by_requested_and_resolved() -> None:
    emitted: list[StreamPayload] = []
    reply = DecisionResponse(request_id="r-1", result=DecisionResult.APPROVED, choice="allow")
    sink = Sink(reply)
    answer = await ask_host(sink, REQUEST, policy(30), emitted.append)
    assert answer.result is DecisionResult.APPROVED
    assert answer.error is None
    assert [p.kind for p in emitted] == [StreamKind.HITL_REQUESTED, StreamKind.HITL_RESOLVED]
    requested, resolved = emitted[0].hitl_requested, emitted[1].hitl_resolved
    assert requested is not None
    assert resolved is not None
    assert requested.request_id == resolved.request_id == "r-1"
    assert emitted[1].tool_call_id == "call-1"
    assert (resolved.result, resolved.choice, resolved.retry_attempt) == ("approved", "allow", 2)
    assert resolved.latency >= timedelta(0)
    assert resolved.resolved_at is not None
    assert REQUEST.payload == {"command": "rm -rf build"}, "the sink must get a copy"


async def test_the_policy_timeout_bounds_a_silent_host() -> None:
    emitted: list[StreamPayload] = []
    with anyio.fail_after(30):
        answer = await ask_host(Sink(None), REQUEST, policy(0.05), emitted.append)
    assert answer.result is DecisionResult.TIMED_OUT
    resolved = emitted[-1].hitl_resolved
    assert resolved is not None
    assert resolved.result == "timed_out"


async def test_a_raising_sink_aborts_and_says_what_it_raised() -> None:
    emitted: list[StreamPayload] = []
    error = RuntimeError("host crashed")
    answer = await ask_host(Sink(error), REQUEST, policy(30), emitted.append)
    assert answer.result is DecisionResult.ABORTED
    assert answer.error is error
    resolved = emitted[-1].hitl_resolved
    assert resolved is not None
    assert resolved.result == "aborted"


async def test_an_answer_without_a_result_counts_as_aborted() -> None:
    emitted: list[StreamPayload] = []
    answer = await ask_host(
        Sink(DecisionResponse(request_id="r-1")), REQUEST, policy(30), emitted.append
    )
    assert answer.result is DecisionResult.ABORTED
    assert answer.error is None


async def test_a_cancelled_run_closes_the_request_and_is_not_swallowed() -> None:
    emitted: list[StreamPayload] = []
    with anyio.move_on_after(0.05) as scope:
        await ask_host(Sink(None), REQUEST, policy(-1), emitted.append)
        pytest.fail("the cancellation was swallowed")
    assert scope.cancelled_caught
    assert [p.kind for p in emitted] == [StreamKind.HITL_REQUESTED, StreamKind.HITL_RESOLVED]
    resolved = emitted[-1].hitl_resolved
    assert resolved is not None
    assert resolved.result == "aborted"


async def test_a_negative_timeout_waits_for_the_host() -> None:
    """Negative: never expires, so only the host's answer ends the wait."""
    emitted: list[StreamPayload] = []

    class Late(Sink):
        async def request_decision(self, request: DecisionRequest) -> DecisionResponse:
            await anyio.sleep(0.2)  # longer than a zero-length bound would allow
            return DecisionResponse(request_id="r-1", result=DecisionResult.REJECTED)

    answer = await ask_host(Late(None), REQUEST, policy(-1), emitted.append)
    assert answer.result is DecisionResult.REJECTED
