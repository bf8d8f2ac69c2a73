"""TRN family: field rules for transcript items (TRN-01..04).

The same per-item checker runs over ``Response.transcript`` (``verify_transcript``) and
over the items carried by ``item`` run events (``adaptertest.run``), so one rule has one
implementation whichever way the item reached the host.
"""

from __future__ import annotations

from collections.abc import Iterable

from adaptertest._violation import Violation
from driver.events import TranscriptItem, TranscriptKind

__all__ = ["TEXT_BEARING_KINDS", "check_transcript_item", "verify_transcript"]

#: Kinds whose whole content is their text: an empty ``text`` says nothing (TRN-01).
TEXT_BEARING_KINDS: frozenset[str] = frozenset(
    {
        TranscriptKind.ASSISTANT,
        TranscriptKind.THINKING,
        TranscriptKind.USER,
        TranscriptKind.STDOUT,
        TranscriptKind.STDERR,
        TranscriptKind.SYSTEM,
        TranscriptKind.SUMMARY,
        TranscriptKind.QUESTION,
        TranscriptKind.FAILURE,
    }
)

# Only streamed assistant text and reasoning come in pieces (TRN-04).
_DELTA_KINDS: frozenset[str] = frozenset({TranscriptKind.ASSISTANT, TranscriptKind.THINKING})


def _kind_label(item: TranscriptItem) -> str:
    return repr(str(item.kind))


def check_transcript_item(item: TranscriptItem, where: str) -> list[Violation]:
    """Judge one item against TRN-01..04; ``where`` prefixes every message
    (for example ``"transcript item 2"`` or ``"event 5"``)."""
    out: list[Violation] = []
    kind = str(item.kind)
    if kind in TEXT_BEARING_KINDS and item.text == "":
        out.append(Violation("TRN-01", f"{where}: {kind} item has empty text"))
    elif kind == TranscriptKind.TOOL_CALL and item.tool_name == "":
        out.append(Violation("TRN-02", f"{where}: tool_call item has empty tool_name"))
    elif kind == TranscriptKind.TOOL_RESULT and item.tool_use_id == "":
        out.append(Violation("TRN-03", f"{where}: tool_result item has empty tool_use_id"))
    if item.delta and kind not in _DELTA_KINDS:
        out.append(Violation("TRN-04", f"{where}: delta=True on kind {_kind_label(item)}"))
    return out


def verify_transcript(items: Iterable[TranscriptItem]) -> list[Violation]:
    """TRN-01..04 over a whole transcript, item by item (an empty one passes)."""
    out: list[Violation] = []
    for index, item in enumerate(items):
        out.extend(check_transcript_item(item, f"transcript item {index}"))
    return out
