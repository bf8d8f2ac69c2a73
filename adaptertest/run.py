"""RUN family: the run-event envelope (RUN-01..03) and the transcript mirror (RUN-04).

Events are judged exactly as the driver emitted them: core assigns ``seq`` later, so a
driver that numbers its own events would collide with core's numbering.
"""

from __future__ import annotations

from collections.abc import Sequence

from adaptertest._depth import MAX_DEPTH, too_deep
from adaptertest._shape import shape_problem
from adaptertest._violation import Violation
from adaptertest.trn import check_transcript_item
from driver.events import RunEvent, RunEventType, TranscriptItem

__all__ = ["verify_run_events", "verify_transcript_mirror"]

_CHUNK_STREAMS = ("stdout", "stderr")


def verify_run_events(events: Sequence[RunEvent]) -> list[Violation]:
    """RUN-01..03 for every event, and TRN-01..04 for the item of every item event.

    Invocation, spawn, runtime, lifecycle and vendor event types have no structural
    requirement beyond RUN-03.
    """
    out: list[Violation] = []
    for index, event in enumerate(events):
        where = f"event {index}"
        problem = shape_problem(event, RunEvent)
        if problem is not None:
            out.append(Violation("RUN-02", f"{where} is not a well-formed RunEvent: {problem}"))
            continue
        if event.seq != 0:
            out.append(Violation("RUN-03", f"{where} ({event.type!s}) carries seq={event.seq}"))
        if event.type == RunEventType.CHUNK:
            if event.stream not in _CHUNK_STREAMS:
                out.append(Violation("RUN-01", f"{where}: chunk event has stream={event.stream!r}"))
        elif event.type == RunEventType.ITEM:
            if event.item is None:
                out.append(Violation("RUN-02", f"{where}: item event has no item"))
            else:
                out.extend(check_transcript_item(event.item, where))
    return out


def _emitted_items(events: Sequence[RunEvent]) -> list[TranscriptItem]:
    return [
        item
        for event in events
        if getattr(event, "type", None) == RunEventType.ITEM
        and (item := getattr(event, "item", None)) is not None
    ]


def verify_transcript_mirror(
    events: Sequence[RunEvent], transcript: Sequence[TranscriptItem] | None
) -> list[Violation]:
    """RUN-04: the items of the item events, in order, equal ``Response.transcript``.

    Items compare with pydantic ``==``; both sides empty (or ``None``) passes.
    """
    emitted = _emitted_items(events)
    final = list(transcript or ())
    deep = [
        f"{side} item {index} is nested {depth} levels deep"
        for side, items in (("emitted", emitted), ("transcript", final))
        for index, item in enumerate(items)
        if (depth := too_deep(item)) is not None
    ]
    if deep:
        return [
            Violation(
                "RUN-04",
                f"{'; '.join(deep[:3])}: the suite compares values nested at most "
                f"{MAX_DEPTH} levels deep, so the mirror cannot be checked (cap or flatten "
                "vendor data before putting it in an item)",
            )
        ]
    if emitted == final:
        return []
    first_difference = next(
        (i for i, (a, b) in enumerate(zip(emitted, final, strict=False)) if a != b),
        min(len(emitted), len(final)),
    )
    return [
        Violation(
            "RUN-04",
            f"item events carry {len(emitted)} item(s) but the transcript has "
            f"{len(final)}; they first differ at index {first_difference}",
        )
    ]
