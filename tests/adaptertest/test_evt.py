"""Stream verifier: the broken-stream table (EVT-01..14), EVT-12, incremental behaviour."""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from adaptertest._violation import Violation
from adaptertest.evt import (
    KNOWN_STREAM_KINDS,
    StreamVerifier,
    verify_stream_capability,
    verify_stream_sequence,
)
from driver.decision import HITLRequestedPayload, HITLResolvedPayload
from driver.descriptor import StreamCapability
from driver.events import Role, StreamKind, StreamPayload
from driver.run import RunFailure, Usage


def P(kind: str, **fields: Any) -> StreamPayload:
    return StreamPayload(kind=kind, **fields)


def clauses(found: list[Violation]) -> set[str]:
    return {v.clause for v in found}


STARTED = P("run.started")
FINISHED = P("run.finished")
FAILED = P("run.error", error=RunFailure(message="boom"))


def compliant() -> list[StreamPayload]:
    """Every normalized lifecycle, plus a vendor kind and a drop report before the end."""
    return [
        P("run.started", run_id="r1", thread_id="th"),
        P("step.started", name="turn"),
        P("reasoning.start", message_id="r1"),
        P("reasoning.content", message_id="r1", delta="thinking"),
        P("reasoning.end", message_id="r1"),
        P("text.start", message_id="m1"),
        P("text.content", message_id="m1", delta="Hel"),
        P("text.content", message_id="m1", delta="lo"),
        P("text.end", message_id="m1"),
        P("tool_call.start", tool_call_id="t1", name="Read"),
        P("tool_call.args", tool_call_id="t1", delta='{"path":'),
        P("tool_call.args", tool_call_id="t1", delta='"a"}'),
        P("tool_call.end", tool_call_id="t1"),
        P("tool_call.result", tool_call_id="t1", result={"ok": True}),
        P("tool_call.start", tool_call_id="t2", name="Grep", args={"q": "x"}),
        P("tool_call.end", tool_call_id="t2"),
        P("hitl.requested", hitl_requested=HITLRequestedPayload(request_id="h1")),
        P("hitl.resolved", hitl_resolved=HITLResolvedPayload(request_id="h1")),
        P("step.finished", name="turn"),
        P("vendor.progress", raw={"pct": 50}),
        P("stream.dropped", raw={"dropped_count": 3}),
        P("run.finished", usage=Usage(input_tokens=1)),
    ]


def test_compliant_stream_passes() -> None:
    assert verify_stream_sequence(compliant()) == []


def test_compliant_stream_ending_in_run_error_passes() -> None:
    assert verify_stream_sequence([*compliant()[:-1], FAILED]) == []


def test_known_kinds_are_the_twenty_normalized_ones() -> None:
    assert len(KNOWN_STREAM_KINDS) == 20
    assert {k.value for k in StreamKind} == KNOWN_STREAM_KINDS


Case = Callable[[], list[StreamPayload]]

# Reference §5.1: one broken behaviour each, built so that only its clause can fire.
BROKEN: list[tuple[str, Case, str]] = [
    ("only run.finished", lambda: [FINISHED], "EVT-01"),
    ("only run.started", lambda: [STARTED], "EVT-02"),
    (
        "text lifecycle before run.started",
        lambda: [
            P("text.start", message_id="m"),
            P("text.content", message_id="m", delta="x"),
            P("text.end", message_id="m"),
            STARTED,
            FINISHED,
        ],
        "EVT-01",
    ),
    ("vendor kind before run.started", lambda: [P("vendor.x"), STARTED, FINISHED], "EVT-01"),
    (
        "stream.dropped before run.started",
        lambda: [P("stream.dropped", raw={"dropped_count": 1}), STARTED, FINISHED],
        "EVT-01",
    ),
    ("run.started twice", lambda: [STARTED, STARTED, FINISHED], "EVT-01"),
    ("run.finished twice", lambda: [STARTED, FINISHED, FINISHED], "EVT-02"),
    (
        "text.start after run.finished",
        lambda: [STARTED, FINISHED, P("text.start", message_id="m")],
        "EVT-02",
    ),
    ("run.finished after run.error", lambda: [STARTED, FAILED, FINISHED], "EVT-02"),
    ("vendor kind after terminal", lambda: [STARTED, FINISHED, P("vendor.x")], "EVT-02"),
    ("run.error without error", lambda: [STARTED, P("run.error")], "EVT-02"),
    ("text.start without message_id", lambda: [STARTED, P("text.start"), FINISHED], "EVT-03"),
    (
        "text.start reusing a closed message_id",
        lambda: [
            STARTED,
            P("text.start", message_id="m"),
            P("text.end", message_id="m"),
            P("text.start", message_id="m"),
            FINISHED,
        ],
        "EVT-03",
    ),
    (
        "text.content with no open lifecycle",
        lambda: [STARTED, P("text.content", message_id="m", delta="x"), FINISHED],
        "EVT-03",
    ),
    (
        "text.content with empty delta",
        lambda: [
            STARTED,
            P("text.start", message_id="m"),
            P("text.content", message_id="m"),
            P("text.end", message_id="m"),
            FINISHED,
        ],
        "EVT-04",
    ),
    (
        "tool_call.start without name",
        lambda: [
            STARTED,
            P("tool_call.start", tool_call_id="t"),
            P("tool_call.end", tool_call_id="t"),
            FINISHED,
        ],
        "EVT-05",
    ),
    (
        "tool_call.args before start",
        lambda: [
            STARTED,
            P("tool_call.args", tool_call_id="t", delta="{}"),
            P("tool_call.start", tool_call_id="t", name="Read"),
            P("tool_call.end", tool_call_id="t"),
            FINISHED,
        ],
        "EVT-05",
    ),
    (
        "tool_call.args after end",
        lambda: [
            STARTED,
            P("tool_call.start", tool_call_id="t", name="Read"),
            P("tool_call.end", tool_call_id="t"),
            P("tool_call.args", tool_call_id="t", delta="{}"),
            FINISHED,
        ],
        "EVT-05",
    ),
    (
        "tool_call.result for unknown id",
        lambda: [STARTED, P("tool_call.result", tool_call_id="t"), FINISHED],
        "EVT-05",
    ),
    (
        "reasoning.content with no open lifecycle",
        lambda: [STARTED, P("reasoning.content", message_id="r", delta="x"), FINISHED],
        "EVT-06",
    ),
    ("step.started without name", lambda: [STARTED, P("step.started"), FINISHED], "EVT-07"),
    (
        "hitl.requested without envelope",
        lambda: [STARTED, P("hitl.requested"), FINISHED],
        "EVT-08",
    ),
    (
        "role=user on a text frame",
        lambda: [
            STARTED,
            P("text.start", message_id="m", role=Role.USER),
            P("text.end", message_id="m"),
            FINISHED,
        ],
        "EVT-09",
    ),
    ("sequence set by driver", lambda: [P("run.started", sequence=1), FINISHED], "EVT-10"),
    ("seq set by driver", lambda: [STARTED, P("run.finished", seq=2)], "EVT-10"),
    (
        "timestamp set on run.started",
        lambda: [P("run.started", timestamp=datetime(2026, 1, 1, tzinfo=UTC)), FINISHED],
        "EVT-10",
    ),
    (
        "text left open at run.finished",
        lambda: [STARTED, P("text.start", message_id="m"), FINISHED],
        "EVT-11",
    ),
    (
        "reasoning left open at run.error",
        lambda: [STARTED, P("reasoning.start", message_id="r"), FAILED],
        "EVT-11",
    ),
    ("message_id on run.started", lambda: [P("run.started", message_id="m"), FINISHED], "EVT-13"),
    (
        "args delta after a start with a full args snapshot",
        lambda: [
            STARTED,
            P("tool_call.start", tool_call_id="t", name="Read", args={"path": "a"}),
            P("tool_call.args", tool_call_id="t", delta="{}"),
            P("tool_call.end", tool_call_id="t"),
            FINISHED,
        ],
        "EVT-14",
    ),
    (
        "tool end whose parent_tool_call_id differs from its start",
        lambda: [
            STARTED,
            P("tool_call.start", tool_call_id="t", name="Read", parent_tool_call_id="p"),
            P("tool_call.end", tool_call_id="t", parent_tool_call_id="q"),
            FINISHED,
        ],
        "EVT-14",
    ),
]


@pytest.mark.parametrize(("build", "clause"), [c[1:] for c in BROKEN], ids=[c[0] for c in BROKEN])
def test_broken_stream_is_caught_by_its_clause(build: Case, clause: str) -> None:
    found = verify_stream_sequence(build())
    assert found, "the broken stream passed"
    assert clauses(found) == {clause}, found


def test_same_tool_call_id_in_two_scopes_is_valid() -> None:
    stream = [STARTED]
    for scope in ("root/child", "子"):
        stream += [
            P("tool_call.start", scope_id=scope, tool_call_id="same", name="Read"),
            P("tool_call.end", scope_id=scope, tool_call_id="same"),
            P("tool_call.result", scope_id=scope, tool_call_id="same"),
        ]
    assert verify_stream_sequence([*stream, FINISHED]) == []


def test_tool_may_name_the_same_id_in_another_scope_as_parent() -> None:
    child = {"scope_id": "child", "parent_scope_id": "root", "parent_tool_call_id": "t"}
    stream = [
        STARTED,
        P("tool_call.start", scope_id="root", tool_call_id="t", name="Task"),
        P("tool_call.start", tool_call_id="t", name="Read", **child),
        P("tool_call.end", tool_call_id="t", **child),
        P("tool_call.result", tool_call_id="t", **child),
        P("tool_call.end", scope_id="root", tool_call_id="t"),
        FINISHED,
    ]
    assert verify_stream_sequence(stream) == []


@pytest.mark.parametrize(
    "coords",
    [
        {"parent_scope_id": "root"},  # a parent scope needs a parent call
        {"parent_tool_call_id": "t"},  # itself, root scope
        {"scope_id": "s", "parent_scope_id": "s", "parent_tool_call_id": "t"},  # itself
        {"parent_tool_call_id": "bad\x07"},
        {"scope_id": "x" * 2049},
    ],
)
def test_invalid_tool_parent_coordinates_are_evt14(coords: dict[str, str]) -> None:
    stream = [
        STARTED,
        P("tool_call.start", tool_call_id="t", name="Read", **coords),
        P("tool_call.end", tool_call_id="t", **coords),
        FINISHED,
    ]
    assert clauses(verify_stream_sequence(stream)) == {"EVT-14"}


def test_second_result_for_a_call_is_evt14() -> None:
    stream = [
        STARTED,
        P("tool_call.start", tool_call_id="t", name="Read"),
        P("tool_call.end", tool_call_id="t"),
        P("tool_call.result", tool_call_id="t"),
        P("tool_call.result", tool_call_id="t"),
        FINISHED,
    ]
    found = verify_stream_sequence(stream)
    assert [(v.clause, v.message.split(":")[0]) for v in found] == [
        ("EVT-14", "payload 4 (tool_call.result)")
    ]


def test_tool_call_reopen_is_evt05_even_after_end() -> None:
    stream = [
        STARTED,
        P("tool_call.start", tool_call_id="t", name="Read"),
        P("tool_call.end", tool_call_id="t"),
        P("tool_call.start", tool_call_id="t", name="Read"),
        FINISHED,
    ]
    found = verify_stream_sequence(stream)
    assert clauses(found) == {"EVT-05"}
    assert "reopened" in found[0].message


def test_closer_after_terminal_is_caught_by_the_last_payload_rule() -> None:
    verifier = StreamVerifier()
    stream = [STARTED, P("text.start", message_id="m"), FINISHED, P("text.end", message_id="m")]
    per_payload = [verifier.feed(p) for p in stream]
    assert [clauses(v) for v in per_payload] == [set(), set(), {"EVT-11"}, set()]
    end = verifier.finish()
    assert clauses(end) == {"EVT-02"}
    assert "text.end" in end[0].message


def test_drop_report_and_vendor_kind_after_terminal_are_each_flagged() -> None:
    found = verify_stream_sequence([STARTED, FINISHED, P("stream.dropped"), P("vendor.x")])
    assert [v.clause for v in found] == ["EVT-02", "EVT-02"]
    assert "payload 2 (stream.dropped)" in found[0].message
    assert "payload 3 (vendor.x)" in found[1].message


def test_every_extra_run_started_is_flagged() -> None:
    found = verify_stream_sequence([STARTED, STARTED, STARTED, FINISHED])
    at_payload = [v for v in found if v.message.startswith("payload")]
    assert [v.message.split(" (")[0] for v in at_payload] == ["payload 1", "payload 2"]
    assert [v.clause for v in found] == ["EVT-01"] * 3  # two duplicates and the count


def test_evt11_flags_each_open_lifecycle_individually() -> None:
    stream = [
        STARTED,
        P("text.start", message_id="m1"),
        P("text.start", message_id="m2"),
        P("reasoning.start", message_id="r1"),
        P("tool_call.start", tool_call_id="t1", name="Read"),
        P("tool_call.start", scope_id="sub", tool_call_id="t1", name="Read"),
        P("step.started", name="a"),
        P("step.started", name="a"),
        P("step.started", name="b"),
        FINISHED,
    ]
    found = verify_stream_sequence(stream)
    assert [v.clause for v in found] == ["EVT-11"] * 7
    assert all(v.message.startswith("payload 9 (run.finished)") for v in found)


def test_steps_are_counted_per_name() -> None:
    ok = [STARTED, *[P("step.started", name="a")] * 2, *[P("step.finished", name="a")] * 2]
    assert verify_stream_sequence([*ok, FINISHED]) == []
    found = verify_stream_sequence([*ok, P("step.finished", name="a"), FINISHED])
    assert clauses(found) == {"EVT-07"}
    assert "payload 5 (step.finished)" in found[0].message


def test_run_frames_carry_no_tool_call_id() -> None:
    found = verify_stream_sequence([STARTED, P("run.error", error=RunFailure(), tool_call_id="t")])
    assert clauses(found) == {"EVT-13"}


def test_feed_reports_a_fault_at_the_payload_where_it_happens() -> None:
    verifier = StreamVerifier()
    stream = [
        STARTED,
        P("text.start", message_id="m1"),
        P("text.content", message_id="m1", delta="a"),
        P("text.end", message_id="m1"),
        P("vendor.x"),
        P("text.content", message_id="m1", delta="b"),
        FINISHED,
    ]
    results = [verifier.feed(p) for p in stream]
    assert [bool(r) for r in results] == [False] * 5 + [True, False]
    assert results[5] == [
        Violation("EVT-03", "payload 5 (text.content): message_id 'm1' is not open")
    ]
    assert verifier.finish() == []
    assert verifier.payloads_seen == 7


def test_finish_on_an_empty_stream_reports_evt01_and_evt02() -> None:
    found = StreamVerifier().finish()
    assert [v.clause for v in found] == ["EVT-01", "EVT-02"]


def test_verifier_refuses_use_after_finish() -> None:
    verifier = StreamVerifier()
    verifier.finish()
    with pytest.raises(RuntimeError):
        verifier.feed(STARTED)
    with pytest.raises(RuntimeError):
        verifier.finish()


def test_verify_stream_sequence_accepts_any_iterable() -> None:
    assert verify_stream_sequence(iter(compliant())) == []


def test_verifier_keeps_no_reference_to_payloads() -> None:
    verifier = StreamVerifier()
    stream = compliant()
    before = [(sys.getrefcount(p), sys.getrefcount(p.__dict__)) for p in stream]
    for found in map(verifier.feed, stream):
        assert found == []
    assert verifier.finish() == []
    assert [(sys.getrefcount(p), sys.getrefcount(p.__dict__)) for p in stream] == before


# --- facts-only mode ------------------------------------------------------------------


def test_facts_only_needs_no_run_frames_and_skips_lifecycles() -> None:
    verifier = StreamVerifier(facts_only=True)
    stream = [
        P("text.content", message_id="nowhere", delta=""),
        P("tool_call.args", tool_call_id="t"),
        P("run.finished"),
        P("text.start"),
        P("run.finished"),
    ]
    assert [verifier.feed(p) for p in stream] == [[]] * len(stream)
    assert verifier.finish() == []
    assert StreamVerifier(facts_only=True).finish() == []


def test_facts_only_still_checks_the_envelope_and_tool_coordinates() -> None:
    stream = [
        P("text.start", message_id="m", role=Role.USER),
        P("vendor.x", seq=3),
        P("tool_call.start", tool_call_id="t", args={"a": 1}),
        P("tool_call.args", tool_call_id="t", delta="{}"),
    ]
    found = verify_stream_sequence_facts(stream)
    assert [v.clause for v in found] == ["EVT-09", "EVT-10", "EVT-14"]


def verify_stream_sequence_facts(stream: list[StreamPayload]) -> list[Violation]:
    verifier = StreamVerifier(facts_only=True)
    out = [v for p in stream for v in verifier.feed(p)]
    return out + verifier.finish()


# --- EVT-12 ---------------------------------------------------------------------------


def capability_frames() -> list[StreamPayload]:
    return [
        STARTED,
        P("tool_call.start", tool_call_id="t", name="Read"),
        P("tool_call.args", tool_call_id="t", delta="{"),
        P("tool_call.args", tool_call_id="t", delta="}"),
        P("tool_call.end", tool_call_id="t"),
        P("reasoning.start", message_id="r"),
        P("reasoning.content", message_id="r", delta="x"),
        P("reasoning.end", message_id="r"),
        P("hitl.requested", hitl_requested=HITLRequestedPayload(request_id="h")),
        P("hitl.resolved", hitl_resolved=HITLResolvedPayload(request_id="h")),
        FINISHED,
    ]


def test_evt12_flags_the_first_frame_of_each_undeclared_category() -> None:
    found = verify_stream_capability(StreamCapability(), capability_frames())
    assert [v.clause for v in found] == ["EVT-12"] * 3
    assert [v.message.split(":")[0] for v in found] == [
        "payload 2 (tool_call.args)",
        "payload 5 (reasoning.start)",
        "payload 8 (hitl.requested)",
    ]


def test_evt12_passes_when_every_flag_is_true() -> None:
    cap = StreamCapability(tool_call_args=True, reasoning=True, hitl=True)
    assert verify_stream_capability(cap, capability_frames()) == []


@pytest.mark.parametrize(
    ("flag", "kind"),
    [("tool_call_args", "tool_call.args"), ("reasoning", "reasoning"), ("hitl", "hitl")],
)
def test_evt12_judges_each_flag_alone(flag: str, kind: str) -> None:
    flags = {"tool_call_args": True, "reasoning": True, "hitl": True, flag: False}
    found = verify_stream_capability(StreamCapability(**flags), capability_frames())
    assert len(found) == 1
    assert kind in found[0].message


def test_evt12_never_requires_positive_flags() -> None:
    cap = StreamCapability(native=True, token_level=True, reasoning=True, tool_call_args=True)
    assert verify_stream_capability(cap, [STARTED, FINISHED]) == []


# --- memory stays bounded -------------------------------------------------------------


def interleaved(n: int) -> list[StreamPayload]:
    """n overlapping text+tool lifecycles: each opens before the previous one closes."""
    stream = [STARTED, P("step.started", name="loop")]
    for k in range(n):
        mid, tid = f"m{k}", f"t{k}"
        stream += [
            P("text.start", message_id=mid),
            P("tool_call.start", tool_call_id=tid, name="Read", scope_id=f"s{k % 3}"),
            P("text.content", message_id=mid, delta="x"),
            P("tool_call.args", tool_call_id=tid, delta="{}", scope_id=f"s{k % 3}"),
        ]
        if k:
            prev_mid, prev_tid = f"m{k - 1}", f"t{k - 1}"
            stream += [
                P("text.end", message_id=prev_mid),
                P("tool_call.end", tool_call_id=prev_tid, scope_id=f"s{(k - 1) % 3}"),
                P("tool_call.result", tool_call_id=prev_tid, scope_id=f"s{(k - 1) % 3}"),
            ]
    last = n - 1
    stream += [
        P("text.end", message_id=f"m{last}"),
        P("tool_call.end", tool_call_id=f"t{last}", scope_id=f"s{last % 3}"),
        P("step.finished", name="loop"),
        FINISHED,
    ]
    return stream


def test_large_interleaved_stream_passes_with_small_open_state() -> None:
    n = 200_000 // 7 + 1
    stream = interleaved(n)
    assert len(stream) >= 200_000
    verifier = StreamVerifier()
    peak = 0
    for k, payload in enumerate(stream):
        assert not verifier.feed(payload), k
        peak = max(peak, verifier.open_count)
    assert verifier.finish() == []
    assert peak <= 5  # step + two texts + two tools at the overlap
    assert verifier.open_count == 0
    # only ids are remembered (to catch reuse), never one entry per payload
    assert verifier.tracked_count == 2 * n
