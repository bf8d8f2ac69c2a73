"""``session/request_permission`` answered by the run's human-decision policy.

The effective policy (:func:`driver.effective_human_decision_policy`) decides:

- ``auto_approve``: the first ``allow_once`` option (else ``allow_always``), no one asked;
- ``auto_reject``: a rejection on the spot, then ``on_reject`` as for a human's;
- ``ask``: the sink decides when it is a :class:`~driver.DecisionCapableSink`. The host's
  choice may name an option id (``reject_always`` is "never ask again"); otherwise
  approval picks ``allow_once`` and rejection ``reject_once``. A sink that cannot
  decide counts as a rejection. After a rejection or a timeout, ``on_reject`` /
  ``on_timeout`` apply: ``continue`` answers the agent with the rejection and the turn
  goes on, ``retry`` asks again (up to ``max_retries``), ``abort`` answers with the
  rejection and ends the run with ``decision_rejected`` / ``decision_timeout``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from acp import schema

from driver import (
    DecisionCapableSink,
    DecisionChoice,
    DecisionRequest,
    DecisionResponse,
    DecisionResult,
    EventSink,
    FailureAction,
    FailureCode,
    HumanDecisionFailure,
    HumanDecisionKind,
    HumanDecisionMode,
    Request,
    RunFailure,
    StreamPayload,
    ask_host,
    effective_human_decision_policy,
)

__all__ = ["PermissionOutcome", "decide_permission"]

SOURCE = "acp"
"""``DecisionRequest.source`` of an ACP permission request."""

_ALLOW = ("allow_once", "allow_always")
_REJECT = ("reject_once", "reject_always")


@dataclass(frozen=True, slots=True)
class PermissionOutcome:
    """The answer for the agent, and the failure that ends the run (``abort``), if any."""

    response: schema.RequestPermissionResponse
    failure: RunFailure | None = None


def _option(options: list[schema.PermissionOption], kinds: tuple[str, ...], chosen: str) -> str:
    """``chosen`` when it is the id of an option of one of ``kinds``, else the first
    option of the first kind present; ``""`` when none is."""
    if any(o.option_id == chosen and o.kind in kinds for o in options):
        return chosen
    for kind in kinds:
        for option in options:
            if option.kind == kind:
                return option.option_id
    return ""


def _answer(option_id: str) -> schema.RequestPermissionResponse:
    if not option_id:  # the agent offered nothing of the kind wanted
        return schema.RequestPermissionResponse(outcome=schema.DeniedOutcome(outcome="cancelled"))
    return schema.RequestPermissionResponse(
        outcome=schema.AllowedOutcome(outcome="selected", option_id=option_id)
    )


def decision_request(
    request: Request,
    thread_id: str,
    tool_call: schema.ToolCallUpdate,
    options: list[schema.PermissionOption],
    attempt: int,
) -> DecisionRequest:
    """What the host is asked: the tool call and the agent's options as choices."""
    call: dict[str, Any] = tool_call.model_dump(mode="json", by_alias=True, exclude_none=True)
    return DecisionRequest(
        run_id=request.run_id,
        thread_id=thread_id,
        kind=HumanDecisionKind.PERMISSION,
        source=SOURCE,
        tool_call_id=tool_call.tool_call_id,
        prompt=tool_call.title or tool_call.kind or "tool call",
        payload={"tool_call": call},
        choices=[
            DecisionChoice(key=o.option_id, label=o.name, description=o.kind) for o in options
        ],
        default_decision=DecisionResult.REJECTED,
        retry_attempt=attempt,
    )


Emit = Callable[[StreamPayload], None]
"""Where the ``hitl.requested`` / ``hitl.resolved`` payloads of a decision go."""


async def decide_permission(
    request: Request,
    sink: EventSink,
    thread_id: str,
    tool_call: schema.ToolCallUpdate,
    options: list[schema.PermissionOption],
    emit: Emit,
) -> PermissionOutcome:
    """Answer one permission request as the run's policy says (see the module)."""
    policy = effective_human_decision_policy(request.policy.human_decision)
    if policy.permission == HumanDecisionMode.AUTO_APPROVE:
        return PermissionOutcome(_answer(_option(options, _ALLOW, "")))
    attempt = 0
    while True:
        asked = decision_request(request, thread_id, tool_call, options, attempt)
        response = DecisionResponse(result=DecisionResult.REJECTED)
        if policy.permission == HumanDecisionMode.ASK and isinstance(sink, DecisionCapableSink):
            now = datetime.now(UTC)
            seconds = policy.timeout.total_seconds()
            asked = asked.model_copy(
                update={
                    "request_id": uuid.uuid4().hex,
                    "created_at": now,
                    "deadline": now + policy.timeout if seconds > 0 else None,
                }
            )
            response = (await ask_host(sink, asked, policy, emit)).response
        result = response.result
        picked_allow = any(o.option_id == response.choice and o.kind in _ALLOW for o in options)
        if result == DecisionResult.APPROVED or (
            result == DecisionResult.ANSWERED and picked_allow
        ):
            return PermissionOutcome(_answer(_option(options, _ALLOW, response.choice)))
        rejection = _answer(_option(options, _REJECT, response.choice))
        if result == DecisionResult.ABORTED:
            action = FailureAction.ABORT
        elif result == DecisionResult.TIMED_OUT:
            action = policy.on_timeout
        else:
            action = policy.on_reject
        if action == FailureAction.CONTINUE:
            return PermissionOutcome(rejection)
        if action == FailureAction.RETRY and attempt < policy.max_retries:
            attempt += 1
            continue
        timed_out = result == DecisionResult.TIMED_OUT
        decision = result if result else DecisionResult.REJECTED
        failure = RunFailure(
            code=FailureCode.TIMEOUT if timed_out else FailureCode.REJECT,
            message=(
                f"permission for tool call {tool_call.tool_call_id!r} was "
                f"{'not decided in time' if timed_out else str(decision).replace('_', ' ')}"
                f" ({attempt + 1} attempt{'s' if attempt else ''}); the turn was cancelled"
            ),
            human_decision=HumanDecisionFailure(
                kind=HumanDecisionKind.PERMISSION,
                source=SOURCE,
                decision=decision,
                request=asked,
                attempts=attempt + 1,
            ),
        )
        return PermissionOutcome(rejection, failure)
