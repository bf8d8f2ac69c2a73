"""What a driver emits while it runs: run events, transcript items and stream payloads.

Mirrors upstream ``events.go`` plus the observation fields added later. Run
events and stream payloads feed one public event stream; core assigns their
sequence numbers and timestamps, so drivers leave those zero.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import Field

from driver._base import RawBytes, SPIModel, Timestamp
from driver.decision import HITLRequestedPayload, HITLResolvedPayload
from driver.observation import CapabilityInvocation, TodoSnapshot
from driver.run import RunFailure
from driver.transcript import TranscriptItem, TranscriptKind
from driver.usage import Usage

__all__ = [
    "Role",
    "RunEvent",
    "RunEventType",
    "StreamKind",
    "StreamPayload",
    "TranscriptItem",
    "TranscriptKind",
]


class RunEventType(StrEnum):
    """Known run-event types; the field is an open string, so vendor types are kept."""

    CHUNK = "chunk"
    ITEM = "item"
    INVOCATION = "invocation"
    SPAWN = "spawn"
    RUNTIME = "runtime"
    LIFECYCLE = "lifecycle"


class StreamKind(StrEnum):
    """Known stream-payload kinds; the field is an open string, so vendor kinds are kept."""

    RUN_STARTED = "run.started"
    RUN_FINISHED = "run.finished"
    RUN_ERROR = "run.error"
    STEP_STARTED = "step.started"
    STEP_FINISHED = "step.finished"
    TEXT_START = "text.start"
    TEXT_CONTENT = "text.content"
    TEXT_END = "text.end"
    TOOL_CALL_START = "tool_call.start"
    TOOL_CALL_ARGS = "tool_call.args"
    TOOL_CALL_END = "tool_call.end"
    TOOL_CALL_RESULT = "tool_call.result"
    REASONING_START = "reasoning.start"
    REASONING_CONTENT = "reasoning.content"
    REASONING_END = "reasoning.end"
    HITL_REQUESTED = "hitl.requested"
    HITL_RESOLVED = "hitl.resolved"
    DROPPED = "stream.dropped"
    CAPABILITY_INVOCATION = "capability.invocation"
    TODO_UPDATED = "todo.updated"


class Role(StrEnum):
    """Speaker of a text lifecycle; drivers always leave the assistant zero value."""

    ASSISTANT = ""
    USER = "user"


class RunEvent(SPIModel):
    """The operational event envelope a driver emits (chunks, items, lifecycle notes).

    ``chunk`` holds raw output bytes (base64 in JSON) and may split lines or
    UTF-8 sequences; a ``str`` given in Python is encoded as UTF-8 with
    ``surrogateescape``.
    """

    type: str = ""
    seq: int = Field(default=0, ge=0)
    timestamp: Timestamp | None = None
    stream: str = ""
    chunk: RawBytes = b""
    item: TranscriptItem | None = None
    text: str = ""
    metadata: dict[str, str] = Field(default_factory=dict)
    data: dict[str, Any] = Field(default_factory=dict)


class StreamPayload(SPIModel):
    """One normalized streaming event; which fields apply depends on ``kind``.

    ``sequence``, ``seq``, ``timestamp`` and ``role`` belong to core and the
    bridges; a driver leaves them zero.
    """

    kind: str = ""
    sequence: int = Field(default=0, ge=0)
    seq: int = Field(default=0, ge=0)
    run_id: str = ""
    thread_id: str = ""
    turn_id: str = ""
    message_id: str = ""
    tool_call_id: str = ""
    name: str = ""
    delta: str = ""
    args: dict[str, Any] = Field(default_factory=dict)
    result: dict[str, Any] = Field(default_factory=dict)
    usage: Usage | None = None
    error: RunFailure | None = None
    timestamp: Timestamp | None = None
    hitl_requested: HITLRequestedPayload | None = None
    hitl_resolved: HITLResolvedPayload | None = None
    role: Role = Role.ASSISTANT
    raw: dict[str, Any] = Field(default_factory=dict)
    capability: CapabilityInvocation | None = None
    todo: TodoSnapshot | None = None
    scope_id: str = ""
    parent_scope_id: str = ""
    parent_tool_call_id: str = ""
