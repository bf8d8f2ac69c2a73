"""The unit every verify helper returns: one broken rule, tagged with its clause.

A message is structure (clause, payload index and kind, field names, ids, counts, enum
values, booleans) and, now and then, a piece of provider-controlled free text: output,
deltas, stdout, a failure or exception message. :func:`provider_text` marks such a piece
where it sits, carrying two spellings of it: the text itself, and a short marker with its
size and a digest prefix. :func:`render` picks one for the whole message, so the suite can
withhold provider text from live failures (unless ``Options(show_live_details=True)``)
while every word of structure stays readable.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from adaptertest._screen import mask_keys

WITHHELD = "<withheld: "
"""How every withheld piece of provider text starts in a rendered message."""

# ASCII group, record and unit separators frame a marked piece. Both spellings escape
# control characters, so text inside a piece can never forge or break a frame.
_OPEN, _SEP, _CLOSE = "\x1e", "\x1f", "\x1d"
_PIECE = re.compile("\x1e([^\x1d\x1e\x1f]*)\x1f([^\x1d\x1e\x1f]*)\x1d")
_SHOWN_CHARS = 300
_DIGEST_CHARS = 12


def _printable(text: str) -> str:
    """``text`` with every non-printable character spelled as its escape."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def withheld_marker(value: str | bytes) -> str:
    """The short stand-in for withheld text: its size and a sha256 prefix of its bytes."""
    if isinstance(value, bytes):
        raw, size = value, f"{len(value)} bytes"
    else:
        raw, size = value.encode("utf-8", "surrogatepass"), f"{len(value)} chars"
    return f"{WITHHELD}{size}, sha256:{hashlib.sha256(raw).hexdigest()[:_DIGEST_CHARS]}>"


def provider_text(value: str | bytes, *, quote: bool = True, limit: int = _SHOWN_CHARS) -> str:
    """Mark provider-controlled ``value`` inside a message (see :func:`render`).

    Shown, it is quoted with ``repr`` (or, with ``quote=False``, its first line as is)
    and cut to ``limit`` characters, the full size following the cut. Credentials of
    well-known formats are masked before the cut, so no cut can leave part of one.
    """
    text = value.decode("utf-8", "backslashreplace") if isinstance(value, bytes) else value
    text = mask_keys(text)
    if quote:
        shown = repr(text) if len(text) <= limit else f"{text[:limit]!r}... ({len(text)} chars)"
    else:
        lines = text.strip().splitlines()
        first = lines[0] if lines else ""
        shown = _printable(first[:limit]) + ("..." if len(first) > limit or len(lines) > 1 else "")
    return f"{_OPEN}{shown}{_SEP}{withheld_marker(value)}{_CLOSE}"


def render(message: str, *, show: bool) -> str:
    """``message`` with each marked piece spelled out (``show``) or withheld."""
    if _OPEN not in message:
        return message
    return _PIECE.sub(lambda m: m.group(1 if show else 2), message)


@dataclass(frozen=True, slots=True)
class Violation:
    """One observed breach of a clause.

    ``message`` says what was observed and where (payload or item index); the suite adds
    the rule text and the rerun hint when it reports the violation. Provider text marked
    with :func:`provider_text` is spelled out in ``message``; :meth:`text` can withhold it.
    """

    clause: str
    message: str
    marked: str = field(default="", compare=False, repr=False)
    """The message with its provider text still marked ("" when it has none)."""

    def __post_init__(self) -> None:
        if _OPEN in self.message:
            object.__setattr__(self, "marked", self.message)
            object.__setattr__(self, "message", render(self.message, show=True))

    def text(self, *, show: bool) -> str:
        """The message, with provider text spelled out or withheld."""
        return render(self.marked, show=False) if self.marked and not show else self.message

    def __str__(self) -> str:
        return f"{self.clause}: {self.message}"
