"""Observation facts: capability invocations and todo-list snapshots.

Mirrors upstream's ``capability`` and ``todo`` packages. A driver reports
these on ``capability.invocation`` and ``todo.updated`` stream payloads, and
only when its descriptor says the transport can observe them.
"""

from __future__ import annotations

from datetime import timedelta
from enum import StrEnum
from typing import Literal

from pydantic import Field

from driver._base import SPIModel, Timestamp

__all__ = [
    "CapabilityInvocation",
    "CapabilityKind",
    "CapabilityRef",
    "InvocationErrorCode",
    "InvocationEvidence",
    "InvocationPhase",
    "InvocationSource",
    "TodoItem",
    "TodoSnapshot",
    "TodoSource",
    "TodoStatus",
]


class CapabilityKind(StrEnum):
    """The kind of capability an agent invoked."""

    SKILL = "skill"
    MCP = "mcp"
    SUBAGENT = "subagent"


class InvocationPhase(StrEnum):
    """Where an invocation is in its lifecycle."""

    STARTED = "started"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"


class InvocationEvidence(StrEnum):
    """What the driver saw that proves the invocation happened."""

    PROVIDER_PROTOCOL = "provider_protocol"
    NATIVE_INPUT_ACCEPTED = "native_input_accepted"
    HOST_LIFECYCLE = "host_lifecycle"
    RELAYED = "relayed"


class InvocationSource(StrEnum):
    """Who reported the invocation."""

    PROVIDER = "provider"
    HOST = "host"
    RELAY = "relay"


class InvocationErrorCode(StrEnum):
    """Why an invocation did not complete."""

    TOOL_FAILED = "tool_failed"
    RUN_CANCELLED = "run_cancelled"
    RUN_INTERRUPTED = "run_interrupted"
    PROTOCOL_ERROR = "protocol_error"
    DELEGATION_FAILED = "delegation_failed"


class CapabilityRef(SPIModel):
    """Which capability was invoked and what was done with it."""

    kind: CapabilityKind | Literal[""] = ""
    key: str = ""
    operation: str = ""


class CapabilityInvocation(SPIModel):
    """One phase of one capability invocation (skill, MCP tool or sub-agent).

    ``scope_id`` and the parent fields place it inside nested agent scopes;
    ``duration`` is None until a terminal phase knows it.
    """

    invocation_id: str = ""
    ref: CapabilityRef = Field(default_factory=CapabilityRef)
    phase: InvocationPhase | Literal[""] = ""
    evidence: InvocationEvidence | Literal[""] = ""
    source: InvocationSource | Literal[""] = ""
    scope_id: str = ""
    parent_scope_id: str = ""
    parent_tool_call_id: str = ""
    occurred_at: Timestamp | None = None
    duration: timedelta | None = None
    error_code: InvocationErrorCode | Literal[""] = ""


class TodoStatus(StrEnum):
    """State of one todo item."""

    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    CANCELLED = "cancelled"


class TodoSource(StrEnum):
    """Where the agent's todo list was read from."""

    TOOL_RESULT = "tool_result"
    PLAN_UPDATE = "plan_update"


class TodoItem(SPIModel):
    """One entry of the agent's todo list; ``synthetic_id`` marks a driver-made id."""

    id: str = ""
    content: str = ""
    status: TodoStatus | Literal[""] = ""
    synthetic_id: bool = False


class TodoSnapshot(SPIModel):
    """The agent's whole todo list at one moment, in order.

    ``items`` None is invalid; an empty list means the list was cleared.
    ``revision`` counts snapshots per scope starting at 1.
    """

    items: list[TodoItem] | None = None
    source: TodoSource | Literal[""] = ""
    scope_id: str = ""
    parent_scope_id: str = ""
    parent_tool_call_id: str = ""
    revision: int = 0
    occurred_at: Timestamp | None = None
