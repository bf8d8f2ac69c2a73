"""RUN-01..04 through ``verify_run_events`` and ``verify_transcript_mirror``."""

from __future__ import annotations

import pytest

from adaptertest.run import verify_run_events, verify_transcript_mirror
from driver.events import RunEvent, RunEventType, TranscriptItem, TranscriptKind


def item(text: str) -> TranscriptItem:
    return TranscriptItem(kind=TranscriptKind.ASSISTANT, text=text)


def item_event(entry: TranscriptItem | None) -> RunEvent:
    return RunEvent(type=RunEventType.ITEM, item=entry)


def clauses(events: list[RunEvent]) -> list[str]:
    return [v.clause for v in verify_run_events(events)]


def test_chunk_with_combined_stream_is_run01() -> None:
    assert clauses([RunEvent(type=RunEventType.CHUNK, stream="combined", chunk=b"x")]) == ["RUN-01"]


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_chunk_on_a_named_stream_passes(stream: str) -> None:
    assert clauses([RunEvent(type=RunEventType.CHUNK, stream=stream, chunk=b"\xff")]) == []


def test_item_event_without_item_is_run02() -> None:
    assert clauses([item_event(None)]) == ["RUN-02"]


def test_lifecycle_event_with_seq_is_run03() -> None:
    [violation] = verify_run_events([RunEvent(type=RunEventType.LIFECYCLE, seq=3)])
    assert violation.clause == "RUN-03"
    assert "event 0" in violation.message
    assert "seq=3" in violation.message


def test_embedded_items_get_trn_checks_located_by_event() -> None:
    events = [
        RunEvent(type=RunEventType.LIFECYCLE, text="start"),
        item_event(item("fine")),
        item_event(TranscriptItem(kind=TranscriptKind.TOOL_RESULT)),
    ]
    [violation] = verify_run_events(events)
    assert violation.clause == "TRN-03"
    assert violation.message.startswith("event 2:")


def test_other_and_vendor_types_pass() -> None:
    events = [
        RunEvent(type=RunEventType.INVOCATION, text="argv", metadata={"k": "v"}),
        RunEvent(type=RunEventType.SPAWN),
        RunEvent(type=RunEventType.RUNTIME, data={"x": 1}),
        RunEvent(type="vendor.custom", stream="combined"),
        RunEvent(type=RunEventType.CHUNK, stream="stdout", chunk=b"part"),
        item_event(item("hi")),
    ]
    assert verify_run_events(events) == []


def test_item_events_against_empty_transcript_is_run04() -> None:
    [violation] = verify_transcript_mirror([item_event(item("a"))], [])
    assert violation.clause == "RUN-04"
    assert "1 item(s)" in violation.message
    assert "has 0" in violation.message
    assert "index 0" in violation.message


def test_item_events_against_none_transcript_is_run04() -> None:
    assert [v.clause for v in verify_transcript_mirror([item_event(item("a"))], None)] == ["RUN-04"]


def test_both_empty_passes() -> None:
    assert verify_transcript_mirror([], []) == []
    assert (
        verify_transcript_mirror([RunEvent(type=RunEventType.CHUNK, stream="stdout")], None) == []
    )


def test_equal_mirror_passes_and_ignores_other_events() -> None:
    events = [
        RunEvent(type=RunEventType.LIFECYCLE),
        item_event(item("a")),
        RunEvent(type=RunEventType.CHUNK, stream="stdout"),
        item_event(item("b")),
        item_event(None),  # RUN-02's business, not part of the mirror
    ]
    assert verify_transcript_mirror(events, [item("a"), item("b")]) == []


def test_mirror_reports_first_differing_index() -> None:
    events = [item_event(item("a")), item_event(item("b")), item_event(item("c"))]
    [violation] = verify_transcript_mirror(events, [item("a"), item("B"), item("c")])
    assert "3 item(s)" in violation.message
    assert "has 3" in violation.message
    assert "index 1" in violation.message


def test_mirror_with_missing_tail_reports_its_start() -> None:
    events = [item_event(item("a")), item_event(item("b"))]
    [violation] = verify_transcript_mirror(events, [item("a")])
    assert "index 1" in violation.message


def test_mirror_compares_every_field() -> None:
    delta = TranscriptItem(kind=TranscriptKind.ASSISTANT, text="a", delta=True)
    assert [v.clause for v in verify_transcript_mirror([item_event(delta)], [item("a")])] == [
        "RUN-04"
    ]
