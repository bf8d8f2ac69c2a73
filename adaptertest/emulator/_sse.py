"""Server-sent events framing (``event:``/``data:`` lines, a blank line after each)."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["sse_event"]


def sse_event(data: Any, *, event: str | None = None) -> bytes:
    """One event: an optional ``event:`` line, then the JSON ``data`` on one line."""
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, separators=(',', ':'))}\n\n".encode()
