"""TRN-01..04 through ``verify_transcript`` and the shared per-item checker."""

from __future__ import annotations

import pytest

from adaptertest.trn import TEXT_BEARING_KINDS, check_transcript_item, verify_transcript
from driver.events import TranscriptItem, TranscriptKind


def clauses(items: list[TranscriptItem]) -> list[str]:
    return [v.clause for v in verify_transcript(items)]


@pytest.mark.parametrize("kind", sorted(TEXT_BEARING_KINDS))
def test_text_bearing_kind_without_text_is_trn01(kind: TranscriptKind) -> None:
    assert clauses([TranscriptItem(kind=kind)]) == ["TRN-01"]
    assert clauses([TranscriptItem(kind=kind, text="x")]) == []


def test_text_bearing_set_is_upstreams_nine() -> None:
    assert {str(k) for k in TEXT_BEARING_KINDS} == {
        "assistant",
        "thinking",
        "user",
        "stdout",
        "stderr",
        "system",
        "summary",
        "question",
        "failure",
    }


def test_tool_call_without_tool_name_is_trn02() -> None:
    assert clauses([TranscriptItem(kind=TranscriptKind.TOOL_CALL, tool_use_id="t1")]) == ["TRN-02"]


def test_tool_result_without_tool_use_id_is_trn03() -> None:
    assert clauses([TranscriptItem(kind=TranscriptKind.TOOL_RESULT, text="done")]) == ["TRN-03"]


def test_user_delta_is_trn04() -> None:
    assert clauses([TranscriptItem(kind=TranscriptKind.USER, text="hi", delta=True)]) == ["TRN-04"]


@pytest.mark.parametrize(
    "kind",
    [TranscriptKind.TOOL_CALL, TranscriptKind.INIT, TranscriptKind.RESULT, TranscriptKind.SYSTEM],
)
def test_delta_outside_assistant_and_thinking_is_trn04(kind: TranscriptKind) -> None:
    item = TranscriptItem(kind=kind, text="x", tool_name="bash", delta=True)
    assert clauses([item]) == ["TRN-04"]


def test_one_item_can_break_two_rules() -> None:
    assert clauses([TranscriptItem(kind=TranscriptKind.USER, delta=True)]) == [
        "TRN-01",
        "TRN-04",
    ]


def test_valid_transcript_passes() -> None:
    items = [
        TranscriptItem(kind=TranscriptKind.INIT),
        TranscriptItem(kind=TranscriptKind.ASSISTANT, text="he", delta=True),
        TranscriptItem(kind=TranscriptKind.THINKING, text="hmm", delta=True),
        TranscriptItem(kind=TranscriptKind.TOOL_CALL, tool_name="bash"),
        TranscriptItem(kind=TranscriptKind.TOOL_RESULT, tool_use_id="t1"),
        TranscriptItem(kind=TranscriptKind.RESULT),
        TranscriptItem(kind=TranscriptKind.ASSISTANT, text="hello"),
    ]
    assert verify_transcript(items) == []
    assert verify_transcript([]) == []


def test_messages_name_the_item_index() -> None:
    items = [
        TranscriptItem(kind=TranscriptKind.ASSISTANT, text="ok"),
        TranscriptItem(kind=TranscriptKind.TOOL_CALL),
    ]
    [violation] = verify_transcript(items)
    assert violation.message.startswith("transcript item 1:")


def test_item_checker_uses_the_given_location() -> None:
    [violation] = check_transcript_item(TranscriptItem(kind=TranscriptKind.FAILURE), "event 7")
    assert violation.clause == "TRN-01"
    assert violation.message.startswith("event 7:")
