"""The normalized transcript: what a run said and did, item by item.

Its own module so that ``driver.run`` (the response lists items) and
``driver.events`` (item events carry one) both import it without importing each
other; upstream keeps it in ``events.go`` (``driver.events`` re-exports it).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import Field

from driver._base import SPIModel
from driver.usage import Usage

__all__ = ["TranscriptItem", "TranscriptKind"]


class TranscriptKind(StrEnum):
    """Kinds of normalized transcript items."""

    ASSISTANT = "assistant"
    THINKING = "thinking"
    USER = "user"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    INIT = "init"
    RESULT = "result"
    STDOUT = "stdout"
    STDERR = "stderr"
    SYSTEM = "system"
    SUMMARY = "summary"
    QUESTION = "question"
    FAILURE = "failure"


class TranscriptItem(SPIModel):
    """One normalized transcript unit; which fields apply depends on ``kind``.

    ``usage`` None means not observed. Values that have their own field are
    never repeated in ``metadata`` or ``data``.
    """

    kind: TranscriptKind | Literal[""] = ""
    text: str = ""
    delta: bool = False
    tool_use_id: str = ""
    tool_name: str = ""
    input: Any = None
    is_error: bool = False
    model: str = ""
    session_id: str = ""
    usage: Usage | None = None
    cost_usd: float | None = None
    subtype: str = ""
    errors: list[str] = Field(default_factory=list)
    metadata: dict[str, str] = Field(default_factory=dict)
    data: dict[str, Any] = Field(default_factory=dict)
    scope_id: str = ""
    parent_scope_id: str = ""
    parent_tool_call_id: str = ""
