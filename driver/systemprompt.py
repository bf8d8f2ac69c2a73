"""The appended system prompt's shared rules: the refusal order, the inline limit and
the session fingerprint (upstream's system-prompt package, as far as the SPI states it).

A driver calls :func:`check_append_system_prompt` at the start of ``run``, before it
starts anything or emits anything; it then refuses a conflicting config of its own
(``conflicting_extra_args``). A driver that keeps sessions stores
:func:`append_system_prompt_fingerprint` of the run's append in its checkpoint's guard
data under :data:`~driver.session.SESSION_PARAM_APPEND_SYSTEM_PROMPT_FINGERPRINT` and
refuses to resume a session whose stored fingerprint differs
(:func:`append_fingerprint_differs`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Final

from driver.errors import SystemPromptUnsupportedError, SystemPromptUnsupportedReason
from driver.session import SESSION_PARAM_APPEND_SYSTEM_PROMPT_FINGERPRINT

__all__ = [
    "APPEND_INLINE_LIMIT",
    "REDACTED_APPEND",
    "append_fingerprint_differs",
    "append_system_prompt_fingerprint",
    "check_append_system_prompt",
]

APPEND_INLINE_LIMIT: Final = 32_768
"""The most UTF-8 bytes of append a driver passes on the command line (upstream's
limit; 32,769 is refused with ``inline_limit`` before anything starts)."""

REDACTED_APPEND: Final = "[redacted]"
"""What a diagnostic that shows the command line prints in place of the append text."""


def check_append_system_prompt(
    driver: str, text: str, *, supported: bool, inline_limit: int | None = None
) -> None:
    """Refuse ``text`` the way upstream orders the checks, or return.

    An empty append passes. Otherwise, in this order: text that is not valid UTF-8 (a
    lone surrogate) is ``invalid_utf8``, a NUL is ``nul_byte``, and a driver without an
    append mechanism (``supported`` False) refuses any non-empty text, whitespace only
    included, as ``unsupported_driver``. ``inline_limit`` (for a driver that passes the
    text on the command line, usually :data:`APPEND_INLINE_LIMIT`) refuses more UTF-8
    bytes than that as ``inline_limit``.
    """
    if not text:
        return
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise SystemPromptUnsupportedError(
            driver, SystemPromptUnsupportedReason.INVALID_UTF8
        ) from None
    if "\x00" in text:
        raise SystemPromptUnsupportedError(driver, SystemPromptUnsupportedReason.NUL_BYTE)
    if not supported:
        raise SystemPromptUnsupportedError(driver, SystemPromptUnsupportedReason.UNSUPPORTED_DRIVER)
    if inline_limit is not None and size > inline_limit:
        raise SystemPromptUnsupportedError(driver, SystemPromptUnsupportedReason.INLINE_LIMIT)


def append_system_prompt_fingerprint(text: str) -> str:
    """The hex SHA-256 of the append's UTF-8 bytes; ``""`` for an empty append (whose
    checkpoint has no fingerprint key)."""
    if not text:
        return ""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def append_fingerprint_differs(stored: Mapping[str, str], text: str) -> bool:
    """Whether a session whose guard data is ``stored`` was captured under another
    append than ``text`` (a missing key compares as an empty append)."""
    recorded = stored.get(SESSION_PARAM_APPEND_SYSTEM_PROMPT_FINGERPRINT, "")
    return recorded != append_system_prompt_fingerprint(text)
