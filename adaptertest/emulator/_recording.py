"""What the emulator keeps of each request it answered."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal

from driver import is_secret_name

__all__ = ["MASK", "Protocol", "RecordedRequest", "mask_headers", "mask_query"]

Protocol = Literal["anthropic", "openai", "gemini"]

MASK = "***"
"""What a secret value is replaced with."""

_SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "x-api-key", "x-goog-api-key", "api-key", "cookie"}
)
_SECRET_QUERY = frozenset({"key", "api_key", "access_token"})


@dataclasses.dataclass(frozen=True)
class RecordedRequest:
    """One request as the emulator received it, secrets masked.

    ``system_text``, ``user_text``, ``assistant_text`` and ``tool_results`` are read from
    the body by the request's protocol: every system, instructions, developer and
    ``systemInstruction`` text; the text of the user turns; the text of the earlier model
    turns sent back (a resumed session's history); the text of each tool result sent
    back, in order.
    """

    protocol: Protocol
    method: str
    path: str
    query: Mapping[str, str]
    headers: Mapping[str, str]
    body: Any
    side: bool
    model: str
    stream: bool
    system_text: str
    user_text: str
    assistant_text: str
    tool_results: list[str]
    turn: int | None
    """The scenario turn the request consumed or was failed on; None: a side request."""


def _secret_header(name: str) -> bool:
    lower = name.lower()
    return lower in _SECRET_HEADERS or is_secret_name(lower.replace("-", "_"))


def mask_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The headers (names in lower case) with each secret value replaced by :data:`MASK`."""
    return {k.lower(): (MASK if _secret_header(k) else v) for k, v in headers.items()}


def mask_query(query: Mapping[str, str]) -> dict[str, str]:
    """The query parameters with each secret value replaced by :data:`MASK`."""
    return {
        k: (MASK if k.lower() in _SECRET_QUERY or is_secret_name(k) else v)
        for k, v in query.items()
    }
