"""One invocation: the resolved request, the response and the session checkpoint.

Mirrors upstream ``run.go``. Core resolves every default into a
:class:`Request`; the driver runs the provider once and fills a
:class:`Response` from a single parse of its output.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import Field

from driver._base import RawBytes, SPIModel
from driver.decision import HumanDecisionFailure
from driver.mcp import MCPPayload
from driver.output import OutputSchema, StructuredOutput, StructuredOutputSource
from driver.policy import RunPolicy
from driver.profile import InstructionsBundleRef, ProfilePayload, ProfileSelection
from driver.runtime import RuntimePayload, RuntimeServiceReport, WorkspaceLease
from driver.skill import ResolvedSkills
from driver.transcript import TranscriptItem
from driver.usage import Usage

__all__ = [
    "AgentIdentity",
    "Checkpoint",
    "FailureCode",
    "ObservationDemand",
    "RawStreams",
    "Request",
    "Response",
    "RunFailure",
    "SessionContext",
    "SessionMode",
    "SessionState",
    "TerminalPayload",
    "Usage",
    "is_human_decision",
    "is_rejected",
    "is_timed_out",
]


class SessionMode(StrEnum):
    """How core resolves the thread's session before a run."""

    CONTINUE_OR_START = "continue_or_start"
    CONTINUE_ONLY = "continue_only"
    FORK = "fork"
    STATELESS = "stateless"


class FailureCode(StrEnum):
    """Business classification of a failed run."""

    REJECT = "decision_rejected"
    TIMEOUT = "decision_timeout"
    AGENT_ERROR = "agent_error"
    CANCELLED = "cancelled"
    POLICY_ERROR = "policy_error"
    ACTIVE_EXECUTION_TIMEOUT = "active_execution_timeout"
    """The host stopped the run because it executed past the host's active-execution
    limit; distinct from the driver's own deadline (``Response.timed_out``) and from a
    decision deadline (``decision_timeout``). Never carries a human decision."""


class ObservationDemand(SPIModel):
    """Which observation facts the host wants from this run.

    A driver emits ``capability.invocation`` facts only when
    ``capability_invocations`` is set and ``todo.updated`` facts only when ``todos`` is
    set, and in either case only for kinds its descriptor declares for the transport.
    The zero value asks for none.
    """

    capability_invocations: bool = False
    todos: bool = False


class AgentIdentity(SPIModel):
    """Who is calling, as told by the host; informational, never used for routing."""

    id: str = ""
    tenant_id: str = ""
    profile_id: str = ""
    name: str = ""


class TerminalPayload(SPIModel):
    """The provider's official terminal protocol event, kept verbatim.

    ``raw_json`` is the exact text the parser recognized, before normalization.
    """

    event: str = ""
    raw_json: str = ""


class RawStreams(SPIModel):
    """The complete, untransformed output of one run (bytes; base64 in JSON).

    A ``str`` given in Python is the text itself, encoded as UTF-8 with
    ``surrogateescape`` (see :data:`driver._base.RawBytes`).
    """

    stdout: RawBytes = b""
    stderr: RawBytes = b""
    terminal: TerminalPayload | None = None


class SessionState(SPIModel):
    """The driver-owned checkpoint the thread store keeps after a successful run.

    ``data`` holds driver-specific guard values (cwd, profile fingerprint ...).
    """

    resume_id: str = ""
    display_id: str = ""
    data: dict[str, str] = Field(default_factory=dict)


class SessionContext(SPIModel):
    """The session a resume-capable driver is asked to continue or fork."""

    engine_session_id: str = ""
    mode: SessionMode | Literal[""] = ""
    state: SessionState | None = None
    previous_id: str = ""


class Checkpoint(SPIModel):
    """Session state to persist; ``valid`` only after a clean, successful run."""

    state: SessionState | None = None
    valid: bool = False


class RunFailure(SPIModel):
    """Structured reason a run failed.

    ``human_decision`` is set exactly when ``code`` is ``decision_rejected`` or
    ``decision_timeout``.
    """

    message: str = ""
    code: FailureCode | Literal[""] = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    human_decision: HumanDecisionFailure | None = None


def is_human_decision(failure: RunFailure | None) -> bool:
    """Report whether a human decision ended the run."""
    return failure is not None and failure.human_decision is not None


def is_rejected(failure: RunFailure | None) -> bool:
    """Report whether the run ended on a rejected decision (auto-reject included)."""
    return failure is not None and failure.code == FailureCode.REJECT


def is_timed_out(failure: RunFailure | None) -> bool:
    """Report whether a decision deadline ended the run (not the outer deadline)."""
    return failure is not None and failure.code == FailureCode.TIMEOUT


class Request(SPIModel):
    """A fully resolved invocation; the driver applies all of it on every run.

    ``structured_output_source`` is set exactly when ``output_schema`` is;
    a non-empty ``model_override`` beats the model of the construction config.
    ``append_system_prompt`` is resolved text for the CLI's own system-prompt append
    mechanism, passed unchanged (never folded into ``prompt``); the refusals
    (``SystemPromptUnsupportedError``, upstream's order) are
    :func:`driver.check_append_system_prompt`'s. ``observation`` is the observation
    demand the host resolved from the run's attachments: it chose the transport, and a
    driver may still report declared facts beyond it.
    """

    run_id: str = ""
    prompt: str = ""
    config: Any = None
    agent: AgentIdentity = Field(default_factory=AgentIdentity)
    workspace: WorkspaceLease = Field(default_factory=WorkspaceLease)
    runtime: RuntimePayload = Field(default_factory=RuntimePayload)
    skills: ResolvedSkills = Field(default_factory=ResolvedSkills)
    mcp: MCPPayload = Field(default_factory=MCPPayload)
    profile_payload: ProfilePayload = Field(default_factory=ProfilePayload)
    profile: ProfileSelection | None = None
    policy: RunPolicy = Field(default_factory=RunPolicy)
    instructions: InstructionsBundleRef | None = None
    session: SessionContext | None = None
    metadata: dict[str, str] = Field(default_factory=dict)
    output_schema: OutputSchema | None = None
    structured_output_source: StructuredOutputSource | Literal[""] = ""
    spawn: bool = False
    model_override: str = ""
    streaming: bool = False
    append_system_prompt: str = ""
    observation: ObservationDemand = Field(default_factory=ObservationDemand)


class Response(SPIModel):
    """What one run produced, all from the same parse of the provider output.

    ``output`` is the final assistant text only. ``exit_code``, ``signal`` and
    ``timed_out`` report the observed process outcome.
    """

    output: str = ""
    raw_streams: RawStreams | None = None
    transcript: list[TranscriptItem] = Field(default_factory=list)
    exit_code: int = 0
    signal: str = ""
    timed_out: bool = False
    usage: Usage | None = None
    checkpoint: Checkpoint | None = None
    metadata: dict[str, str] = Field(default_factory=dict)
    provider: str = ""
    model: str = ""
    summary: str = ""
    structured_output: StructuredOutput | None = None
    runtime_services: list[RuntimeServiceReport] = Field(default_factory=list)
    failure: RunFailure | None = None
