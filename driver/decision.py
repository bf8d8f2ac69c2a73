"""Human-in-the-loop (HITL) decisions: policy knobs, support flags and envelopes.

Mirrors upstream ``decision.go``. The driver builds a :class:`DecisionRequest`
and hands it to a ``DecisionCapableSink``; core routes it, applies the policy
timeouts and retries, and answers with a :class:`DecisionResponse`.
"""

from __future__ import annotations

import copy
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Literal

from pydantic import Field

from driver._base import FrozenSPIModel, SPIModel, Timestamp

__all__ = [
    "DEFAULT_HUMAN_DECISION_MAX_RETRIES",
    "DEFAULT_HUMAN_DECISION_TIMEOUT",
    "DecisionChoice",
    "DecisionRequest",
    "DecisionResponse",
    "DecisionResult",
    "FailureAction",
    "HITLRequestedPayload",
    "HITLResolvedPayload",
    "HumanDecisionFailure",
    "HumanDecisionKind",
    "HumanDecisionMode",
    "HumanDecisionPolicy",
    "HumanDecisionSupport",
    "QuestionMode",
    "QuestionSupport",
    "decision_mode",
    "effective_human_decision_policy",
]

DEFAULT_HUMAN_DECISION_TIMEOUT = timedelta(seconds=30)
"""Decision deadline used when ``HumanDecisionPolicy.timeout`` is zero."""

DEFAULT_HUMAN_DECISION_MAX_RETRIES = 3
"""Retry budget used when ``HumanDecisionPolicy.max_retries`` is zero."""


class HumanDecisionKind(StrEnum):
    """Which class of question a decision is about."""

    PERMISSION = "permission"
    PLAN_REVIEW = "plan_review"
    QUESTION = "question"


class HumanDecisionMode(StrEnum):
    """How permission and plan-review decisions are handled; unset takes the SDK default."""

    UNSET = ""
    ASK = "ask"
    AUTO_APPROVE = "auto_approve"
    AUTO_REJECT = "auto_reject"


class QuestionMode(StrEnum):
    """How free-form questions are handled.

    There is no auto-approve: a structured answer cannot be made up.
    """

    UNSET = ""
    ASK = "ask"
    AUTO_REJECT = "auto_reject"


class DecisionResult(StrEnum):
    """Outcome of one human decision."""

    APPROVED = "approved"
    REJECTED = "rejected"
    ANSWERED = "answered"
    TIMED_OUT = "timed_out"
    ABORTED = "aborted"


class FailureAction(StrEnum):
    """What happens after a rejection or a timeout; unset means abort."""

    UNSET = ""
    ABORT = "abort"
    CONTINUE = "continue"
    RETRY = "retry"


class HumanDecisionPolicy(SPIModel):
    """Every HITL knob of a run policy; zero fields inherit the SDK defaults.

    A zero ``timeout`` means :data:`DEFAULT_HUMAN_DECISION_TIMEOUT`, a negative
    one never expires; a zero ``max_retries`` means
    :data:`DEFAULT_HUMAN_DECISION_MAX_RETRIES`, a negative one is invalid.
    """

    permission: HumanDecisionMode = HumanDecisionMode.UNSET
    plan_review: HumanDecisionMode = HumanDecisionMode.UNSET
    question: QuestionMode = QuestionMode.UNSET
    timeout: timedelta = timedelta(0)
    on_timeout: FailureAction = FailureAction.UNSET
    on_reject: FailureAction = FailureAction.UNSET
    max_retries: int = 0


def effective_human_decision_policy(policy: HumanDecisionPolicy) -> HumanDecisionPolicy:
    """Return a copy of ``policy`` with every zero field replaced by its default.

    Drivers use it to show the deadlines and actions the SDK will really apply.
    Non-zero values, including a negative timeout, pass through unchanged.
    """
    updates: dict[str, object] = {}
    if policy.permission == HumanDecisionMode.UNSET:
        updates["permission"] = HumanDecisionMode.ASK
    if policy.plan_review == HumanDecisionMode.UNSET:
        updates["plan_review"] = HumanDecisionMode.ASK
    if policy.question == QuestionMode.UNSET:
        updates["question"] = QuestionMode.AUTO_REJECT
    if policy.timeout == timedelta(0):
        updates["timeout"] = DEFAULT_HUMAN_DECISION_TIMEOUT
    if policy.on_timeout == FailureAction.UNSET:
        updates["on_timeout"] = FailureAction.ABORT
    if policy.on_reject == FailureAction.UNSET:
        updates["on_reject"] = FailureAction.ABORT
    if policy.max_retries == 0:
        updates["max_retries"] = DEFAULT_HUMAN_DECISION_MAX_RETRIES
    return policy.model_copy(update=updates, deep=True)


def decision_mode(
    policy: HumanDecisionPolicy, kind: HumanDecisionKind
) -> HumanDecisionMode | QuestionMode:
    """The mode ``policy`` sets for decisions of ``kind``, as given (pass the
    :func:`effective_human_decision_policy` for the mode that applies)."""
    if kind == HumanDecisionKind.QUESTION:
        return policy.question
    if kind == HumanDecisionKind.PLAN_REVIEW:
        return policy.plan_review
    return policy.permission


class HumanDecisionSupport(FrozenSPIModel):
    """Which permission or plan-review modes a driver can honour.

    A false flag makes core reject the matching explicit host setting before launch.
    """

    ask: bool = False
    auto_approve: bool = False
    auto_reject: bool = False
    retry: bool = False


class QuestionSupport(FrozenSPIModel):
    """Which question modes a driver can honour (no auto-approve by design)."""

    ask: bool = False
    auto_reject: bool = False
    retry: bool = False


class DecisionChoice(SPIModel):
    """One option a host can render for the human to pick."""

    key: str = ""
    label: str = ""
    description: str = ""


class DecisionRequest(SPIModel):
    """What a driver asks the host to decide.

    The SDK fills or normalizes ``request_id``, ``created_at``, ``deadline`` and
    ``retry_attempt`` before routing, so a driver may leave them zero.
    """

    request_id: str = ""
    run_id: str = ""
    thread_id: str = ""
    kind: HumanDecisionKind | Literal[""] = ""
    source: str = ""
    tool_call_id: str = ""
    prompt: str = ""
    payload: dict[str, Any] = Field(default_factory=dict)
    choices: list[DecisionChoice] = Field(default_factory=list)
    default_decision: DecisionResult | Literal[""] = ""
    created_at: Timestamp | None = None
    deadline: Timestamp | None = None
    retry_attempt: int = 0


class DecisionResponse(SPIModel):
    """The host's answer to a :class:`DecisionRequest`."""

    request_id: str = ""
    result: DecisionResult | Literal[""] = ""
    choice: str = ""
    answer: dict[str, Any] = Field(default_factory=dict)
    text: str = ""


class HumanDecisionFailure(SPIModel):
    """Why a human decision ended the run; attached to ``RunFailure.human_decision``."""

    kind: HumanDecisionKind | Literal[""] = ""
    source: str = ""
    decision: DecisionResult | Literal[""] = ""
    request: DecisionRequest | None = None
    attempts: int = 0


class HITLRequestedPayload(SPIModel):
    """Body of a ``hitl.requested`` stream payload: a decision being asked."""

    request_id: str = ""
    kind: HumanDecisionKind | Literal[""] = ""
    source: str = ""
    tool_call_id: str = ""
    prompt: str = ""
    payload: dict[str, Any] = Field(default_factory=dict)
    choices: list[DecisionChoice] = Field(default_factory=list)
    created_at: Timestamp | None = None
    deadline: Timestamp | None = None
    retry_attempt: int = 0

    @classmethod
    def for_request(cls, request: DecisionRequest) -> HITLRequestedPayload:
        """The body announcing ``request``: its fields but ``run_id``, ``thread_id`` and
        ``default_decision`` (the payload itself carries the run and thread), copied."""
        fields = request.model_dump(exclude={"run_id", "thread_id", "default_decision"})
        return cls.model_validate(fields)


class HITLResolvedPayload(SPIModel):
    """Body of a ``hitl.resolved`` stream payload: how and when a decision ended."""

    request_id: str = ""
    kind: HumanDecisionKind | Literal[""] = ""
    source: str = ""
    retry_attempt: int = 0
    result: DecisionResult | Literal[""] = ""
    choice: str = ""
    answer: dict[str, Any] = Field(default_factory=dict)
    resolved_at: Timestamp | None = None
    latency: timedelta = timedelta(0)

    @classmethod
    def for_response(
        cls,
        request: DecisionRequest,
        response: DecisionResponse,
        *,
        resolved_at: datetime,
        latency: timedelta,
    ) -> HITLResolvedPayload:
        """The body closing ``request`` with ``response``: the request's identity and
        attempt, the response's result, choice and answer (copied)."""
        return cls(
            request_id=request.request_id,
            kind=request.kind,
            source=request.source,
            retry_attempt=request.retry_attempt,
            result=response.result,
            choice=response.choice,
            answer=copy.deepcopy(response.answer),
            resolved_at=resolved_at,
            latency=max(latency, timedelta(0)),
        )
