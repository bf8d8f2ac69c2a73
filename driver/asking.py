"""Asking the host for one human decision: the exchange every driver makes alike.

A driver that asks (``ask`` mode, a :class:`~driver.DecisionCapableSink` present) must
announce the request with ``hitl.requested``, bound the wait by the policy's timeout
whatever the sink does (H5 lets a sink block), count a raising sink as an aborted
decision, and close the request with ``hitl.resolved``. :func:`ask_host` does all four,
so drivers differ only in what they ask and what they do with the answer. The pair is
closed even when the run is cancelled while the host thinks: a ``hitl.requested`` left
open would tell the host the question is still pending.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import anyio

from driver.decision import (
    DecisionRequest,
    DecisionResponse,
    DecisionResult,
    HITLRequestedPayload,
    HITLResolvedPayload,
    HumanDecisionPolicy,
    effective_human_decision_policy,
)
from driver.events import StreamKind, StreamPayload
from driver.protocols import DecisionCapableSink

__all__ = ["HostAnswer", "ask_host"]


@dataclass(frozen=True, slots=True)
class HostAnswer:
    """How one ask ended.

    ``response.result`` is never empty: ``timed_out`` when the policy's timeout passed,
    ``aborted`` when the sink raised (``error`` holds what it raised) or answered with
    no result.
    """

    response: DecisionResponse
    error: Exception | None = None

    @property
    def result(self) -> DecisionResult:
        return DecisionResult(self.response.result)


def _resolved(request: DecisionRequest, response: DecisionResponse, waited: float) -> StreamPayload:
    return StreamPayload(
        kind=StreamKind.HITL_RESOLVED,
        tool_call_id=request.tool_call_id,
        hitl_resolved=HITLResolvedPayload.for_response(
            request, response, resolved_at=datetime.now(UTC), latency=timedelta(seconds=waited)
        ),
    )


async def ask_host(
    sink: DecisionCapableSink,
    request: DecisionRequest,
    policy: HumanDecisionPolicy,
    emit: Callable[[StreamPayload], None],
) -> HostAnswer:
    """Ask ``sink`` to decide ``request`` and wait at most ``policy``'s effective timeout
    (a negative one never expires). ``emit`` receives the ``hitl.requested`` and
    ``hitl.resolved`` payloads. The sink gets a copy, so it cannot change the request
    the driver keeps. A cancelled run closes the request ``aborted`` and re-raises."""
    seconds = effective_human_decision_policy(policy).timeout.total_seconds()
    emit(
        StreamPayload(
            kind=StreamKind.HITL_REQUESTED,
            tool_call_id=request.tool_call_id,
            hitl_requested=HITLRequestedPayload.for_request(request),
        )
    )
    started = anyio.current_time()
    response = DecisionResponse(request_id=request.request_id, result=DecisionResult.TIMED_OUT)
    error: Exception | None = None
    try:
        with anyio.move_on_after(seconds if seconds > 0 else math.inf):
            response = await sink.request_decision(request.model_copy(deep=True))
    except anyio.get_cancelled_exc_class():
        aborted = DecisionResponse(request_id=request.request_id, result=DecisionResult.ABORTED)
        emit(_resolved(request, aborted, anyio.current_time() - started))
        raise
    except Exception as exc:  # noqa: BLE001 - H5: a raising sink aborted the decision
        error = exc
        response = DecisionResponse(request_id=request.request_id, result=DecisionResult.ABORTED)
    if not response.result:
        response = response.model_copy(update={"result": DecisionResult.ABORTED})
    emit(_resolved(request, response, anyio.current_time() - started))
    return HostAnswer(response, error)
