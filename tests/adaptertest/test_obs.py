"""Observation facts: the broken-fact table (OBS-01..06 and their EVT neighbours)."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any, TypeVar

import pytest
from pydantic import BaseModel

from adaptertest._violation import Violation
from adaptertest.evt import StreamVerifier, verify_observation_sequence, verify_stream_sequence
from adaptertest.obs import (
    capability_problems,
    is_utc,
    text_problem,
    todo_problems,
    verify_observation_support,
)
from driver.descriptor import ObservationSupport
from driver.events import Role, StreamPayload
from driver.observation import (
    CapabilityInvocation,
    CapabilityKind,
    CapabilityRef,
    InvocationEvidence,
    InvocationPhase,
    InvocationSource,
    TodoItem,
    TodoSnapshot,
    TodoSource,
    TodoStatus,
)

AT = datetime(2026, 9, 7, tzinfo=UTC)


M = TypeVar("M", bound=BaseModel)


def construct(model: type[M], **fields: Any) -> M:
    """Build a model without validation, as a careless driver could."""
    return model.model_construct(**fields)


def clauses(found: list[Violation]) -> set[str]:
    return {v.clause for v in found}


def invocation(**changes: Any) -> CapabilityInvocation:
    """A valid MCP start; ``changes`` bypass validation so tests can build bad values."""
    start = CapabilityInvocation(
        invocation_id="call",
        ref=CapabilityRef(kind=CapabilityKind.MCP, key="knowledge", operation="search"),
        phase=InvocationPhase.STARTED,
        evidence=InvocationEvidence.PROVIDER_PROTOCOL,
        source=InvocationSource.PROVIDER,
        occurred_at=AT,
    )
    return start.model_copy(update=changes)


def completed(**changes: Any) -> CapabilityInvocation:
    return invocation(**{"phase": InvocationPhase.COMPLETED, "duration": timedelta(0), **changes})


def fact(inv: CapabilityInvocation | None) -> StreamPayload:
    return StreamPayload(kind="capability.invocation", capability=inv)


def snapshot(revision: int, items: list[TodoItem] | None, **changes: Any) -> TodoSnapshot:
    snap = TodoSnapshot(
        items=items, source=TodoSource.TOOL_RESULT, revision=revision, occurred_at=AT
    )
    return snap.model_copy(update=changes)


def item(**changes: Any) -> TodoItem:
    return TodoItem(id="91", content="中文 task", status=TodoStatus.PENDING).model_copy(
        update=changes
    )


def todo(snap: TodoSnapshot | None) -> StreamPayload:
    return StreamPayload(kind="todo.updated", todo=snap)


def base() -> list[StreamPayload]:
    """Reference §5.3 base: start, todo rev 1, todo cleared at rev 2, zero-duration end."""
    return [
        StreamPayload(kind="run.started"),
        fact(invocation()),
        todo(snapshot(1, [item()])),
        todo(snapshot(2, [])),
        fact(completed()),
        StreamPayload(kind="run.finished"),
    ]


def test_base_passes_every_verifier() -> None:
    assert verify_stream_sequence(base()) == []
    assert verify_observation_sequence(base()) == []
    assert verify_observation_support(ObservationSupport(mcp=True, todos=True), base()) == []


def test_facts_alone_pass_the_facts_only_verifier() -> None:
    assert verify_observation_sequence([fact(invocation()), fact(completed())]) == []


Mutation = Callable[[list[StreamPayload]], list[StreamPayload]]


def _set(index: int, **fields: Any) -> Mutation:
    def mutate(stream: list[StreamPayload]) -> list[StreamPayload]:
        stream[index] = stream[index].model_copy(update=fields)
        return stream

    return mutate


def _both(**changes: Any) -> Mutation:
    """Change start and end alike, so the lifecycle stays consistent (OBS-04 silent)."""

    def mutate(stream: list[StreamPayload]) -> list[StreamPayload]:
        stream[1] = fact(invocation(**changes))
        stream[4] = fact(completed(**changes))
        return stream

    return mutate


def _insert(index: int, payload: StreamPayload) -> Mutation:
    def mutate(stream: list[StreamPayload]) -> list[StreamPayload]:
        stream.insert(index, payload)
        return stream

    return mutate


def _drop(index: int) -> Mutation:
    def mutate(stream: list[StreamPayload]) -> list[StreamPayload]:
        del stream[index]
        return stream

    return mutate


# Reference §5.3 (rich verifier): (name, mutation, clause, other clauses the same fault
# necessarily trips, exactly one violation?)
BROKEN: list[tuple[str, Mutation, str, set[str], bool]] = [
    ("capability.invocation without capability", _insert(2, fact(None)), "OBS-02", set(), False),
    ("raw set on an observation", _set(1, raw={"secret": "x"}), "OBS-02", set(), False),
    (
        "capability attached to run.started",
        _set(0, capability=invocation()),
        "OBS-02",
        set(),
        False,
    ),
    ("role=user on an observation", _set(1, role=Role.USER), "EVT-09", set(), True),
    ("seq=1 on an observation", _set(1, seq=1), "EVT-10", set(), True),
    (
        "sequence, seq and timestamp on a fact",
        _set(2, sequence=4, seq=4, timestamp=AT),
        "EVT-10",
        set(),
        True,
    ),
    (
        "source host with host_lifecycle evidence",
        _both(source=InvocationSource.HOST, evidence=InvocationEvidence.HOST_LIFECYCLE),
        "OBS-03",
        set(),
        False,
    ),
    (
        "unknown phase",
        _insert(2, fact(invocation(invocation_id="other", phase="almost_done"))),
        "OBS-03",
        set(),
        True,
    ),
    (
        "negative duration on terminal",
        _set(4, capability=completed(duration=timedelta(seconds=-1))),
        "OBS-03",
        set(),
        True,
    ),
    (
        "invalid UTF-8 in ref.key",
        _both(ref=CapabilityRef(kind=CapabilityKind.MCP, key="\udcff", operation="search")),
        "OBS-03",
        set(),
        False,
    ),
    (
        "duration on a started phase",
        _set(1, capability=invocation(duration=timedelta(0))),
        "OBS-03",
        set(),
        True,
    ),
    (
        "capability names itself as parent in its scope",
        _both(scope_id="s", parent_scope_id="s", parent_tool_call_id="call"),
        "OBS-03",
        set(),
        False,
    ),
    (
        "capability names itself as parent in the root scope",
        _both(parent_tool_call_id="call"),
        "OBS-03",
        set(),
        False,
    ),
    (
        "terminal changes ref.key",
        _set(
            4, capability=completed(ref=CapabilityRef(kind="mcp", key="other", operation="search"))
        ),
        "OBS-04",
        set(),
        True,
    ),
    ("start removed", _drop(1), "OBS-04", set(), True),
    ("terminal removed", _drop(4), "OBS-04", set(), False),  # open at terminal and at return
    ("duplicate start", _insert(2, fact(invocation())), "OBS-04", set(), True),
    ("items None instead of empty", _set(3, todo=snapshot(2, None)), "OBS-05", set(), True),
    (
        "duplicate todo item id",
        _set(2, todo=snapshot(1, [item(), item(content="again")])),
        "OBS-05",
        set(),
        True,
    ),
    (
        "unknown todo status",
        _set(2, todo=snapshot(1, [item(status="unknown")])),
        "OBS-05",
        set(),
        True,
    ),
    ("revision jumps 1 to 3", _set(3, todo=snapshot(3, [])), "OBS-06", set(), True),
    ("identical snapshot repeated", _set(3, todo=snapshot(2, [item()])), "OBS-06", set(), True),
    (
        "todo emitted after run.finished",
        lambda s: [*s, todo(snapshot(3, [item(id="92")]))],
        "EVT-02",
        set(),
        False,  # flagged where it happens and again as the last normalized payload
    ),
]


@pytest.mark.parametrize(
    ("mutate", "clause", "also", "exactly_one"),
    [c[1:] for c in BROKEN],
    ids=[c[0] for c in BROKEN],
)
def test_broken_fact_is_caught_by_its_clause(
    mutate: Mutation, clause: str, also: set[str], exactly_one: bool
) -> None:
    found = verify_stream_sequence(mutate(base()))
    assert clause in clauses(found), found
    assert clauses(found) <= {clause} | also, found
    if exactly_one:
        assert len(found) == 1, found


def test_envelope_numbering_on_a_fact_is_one_evt10_in_both_verifiers() -> None:
    stamped = _set(1, sequence=1, seq=1, timestamp=AT)
    for found in (
        verify_stream_sequence(stamped(base())),
        verify_observation_sequence(stamped(base())),
        verify_observation_sequence(stamped(base())[1:5]),
    ):
        assert [v.clause for v in found] == ["EVT-10"]
        assert "sequence=1" in found[0].message
        assert "timestamp" in found[0].message


@pytest.mark.parametrize(
    "coords",
    [
        {"scope_id": "child", "parent_scope_id": "root", "parent_tool_call_id": "call"},
        {"parent_tool_call_id": "other"},
    ],
    ids=["same id in another scope", "another id"],
)
def test_capability_parent_in_another_scope_or_with_another_id_is_valid(
    coords: dict[str, str],
) -> None:
    assert verify_stream_sequence(_both(**coords)(base())) == []


def test_facts_only_start_without_terminal_is_exactly_one_obs04() -> None:
    found = verify_observation_sequence([fact(invocation())])
    assert [v.clause for v in found] == ["OBS-04"]
    assert "when the run returned" in found[0].message


def test_facts_only_flags_open_invocations_at_a_terminal_too() -> None:
    found = verify_observation_sequence([fact(invocation()), StreamPayload(kind="run.finished")])
    assert [v.message.split(":")[0] for v in found] == [
        "payload 1 (run.finished)",
        found[1].message.split(":")[0],
    ]
    assert [v.clause for v in found] == ["OBS-04", "OBS-04"]


def test_invocation_lifecycles_are_per_scope() -> None:
    stream = [
        fact(invocation(scope_id="a")),
        fact(invocation(scope_id="b")),
        fact(completed(scope_id="b")),
        fact(completed(scope_id="a")),
    ]
    assert verify_observation_sequence(stream) == []
    found = verify_observation_sequence([*stream, fact(invocation(scope_id="a"))])
    assert clauses(found) == {"OBS-04"}  # restarted after its end, and then left open


def test_second_terminal_is_obs04() -> None:
    found = verify_observation_sequence(
        [
            fact(invocation()),
            fact(completed()),
            fact(completed(phase=InvocationPhase.FAILED, duration=None)),
        ]
    )
    assert [v.clause for v in found] == ["OBS-04"]
    assert "payload 2" in found[0].message


def test_todo_revisions_are_per_scope() -> None:
    stream = [
        todo(snapshot(1, [item()])),
        todo(snapshot(1, [item()], scope_id="sub", parent_tool_call_id="task")),
        todo(snapshot(2, [item(status=TodoStatus.COMPLETED)])),
    ]
    assert verify_observation_sequence(stream) == []
    found = verify_observation_sequence([todo(snapshot(2, [item()]))])
    assert clauses(found) == {"OBS-06"}


def test_todo_snapshot_is_copied_not_kept() -> None:
    items = [item()]
    verifier = StreamVerifier(facts_only=True)
    assert verifier.feed(todo(snapshot(1, items))) == []
    items[0] = item(status=TodoStatus.COMPLETED)  # the driver reuses its list
    assert verifier.feed(todo(snapshot(2, [item(status=TodoStatus.COMPLETED)]))) == []


@pytest.mark.parametrize(
    ("payload", "count"),
    [
        (StreamPayload(kind="todo.updated", todo=snapshot(1, []), name="x"), 1),
        (StreamPayload(kind="todo.updated"), 1),
        (StreamPayload(kind="todo.updated", todo=snapshot(1, []), capability=invocation()), 2),
        (
            StreamPayload(
                kind="capability.invocation", capability=invocation(), todo=snapshot(1, [])
            ),
            2,
        ),
        (StreamPayload(kind="text.content", todo=snapshot(1, [])), 1),
        (StreamPayload(kind="capability.invocation", capability=invocation(), scope_id="s"), 1),
    ],
    ids=[
        "foreign field",
        "no todo",
        "todo with capability",
        "capability with todo",
        "todo on text",
        "scope on payload",
    ],
)
def test_obs02_purity(payload: StreamPayload, count: int) -> None:
    found = verify_observation_sequence([payload])
    assert [v.clause for v in found if v.clause == "OBS-02"] == ["OBS-02"] * count
    assert clauses(found) <= {"OBS-02", "OBS-04"}  # a lone start also stays open


# --- value rules ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "needle"),
    [
        ({"invocation_id": ""}, "invocation_id is empty"),
        ({"invocation_id": "x" * 2049}, "invocation_id is 2049 bytes"),
        ({"ref": CapabilityRef(kind="skill", key="k", operation="run")}, "must be 'activate'"),
        ({"ref": CapabilityRef(kind="subagent", key="k", operation="run")}, "must be 'spawn'"),
        (
            {"ref": construct(CapabilityRef, kind="plugin", key="k", operation="x")},
            "ref.kind 'plugin'",
        ),
        ({"ref": CapabilityRef(kind="mcp", key="é" * 257, operation="x")}, "ref.key is 514 bytes"),
        ({"ref": CapabilityRef(kind="mcp", key="k", operation="o" * 257)}, "ref.operation is 257"),
        ({"occurred_at": None}, "occurred_at"),
        ({"occurred_at": datetime(2026, 1, 1)}, "occurred_at"),  # naive
        ({"occurred_at": datetime(2026, 1, 1, tzinfo=timezone(timedelta(hours=2)))}, "occurred_at"),
        ({"occurred_at": datetime(1, 1, 1, tzinfo=UTC)}, "occurred_at"),  # Go's zero time
        ({"evidence": "relayed"}, "evidence 'relayed'"),
        ({"source": "relay"}, "source 'relay'"),
        ({"error_code": "tool_failed"}, "started phase carries error_code"),
        ({"phase": "completed", "error_code": "tool_failed"}, "completed phase carries error_code"),
        ({"phase": "failed", "error_code": "kaboom"}, "error_code 'kaboom' is unknown"),
        ({"phase": ""}, "phase '' is unknown"),
        ({"parent_scope_id": "root"}, "parent_scope_id is set without parent_tool_call_id"),
        ({"scope_id": "a\nb"}, "scope_id contains control character U+000A"),
    ],
)
def test_capability_value_problems(changes: dict[str, Any], needle: str) -> None:
    problems = capability_problems(invocation(**changes))
    assert any(needle in p for p in problems), problems


@pytest.mark.parametrize(
    "changes",
    [
        {"phase": "failed", "error_code": "tool_failed", "duration": timedelta(seconds=2)},
        {"phase": "cancelled", "error_code": "run_cancelled"},
        {"phase": "interrupted", "error_code": "run_interrupted"},
        {"ref": CapabilityRef(kind="skill", key="pdf", operation="activate")},
        {"ref": CapabilityRef(kind="subagent", key="explorer", operation="spawn")},
        {"evidence": "native_input_accepted"},
        {"occurred_at": datetime(2026, 1, 1, tzinfo=timezone(timedelta(0), "Z"))},
    ],
)
def test_capability_values_that_are_valid(changes: dict[str, Any]) -> None:
    assert capability_problems(invocation(**changes)) == []


@pytest.mark.parametrize(
    ("snap", "needle"),
    [
        (snapshot(1, None), "items is None"),
        (snapshot(1, [item(id=str(n)) for n in range(129)]), "129 items"),
        (snapshot(0, []), "revision 0"),
        (snapshot(1, [], occurred_at=None), "occurred_at"),
        (snapshot(1, [], source="memory"), "source 'memory'"),
        (snapshot(1, [], parent_scope_id="root"), "parent_scope_id is set"),
        (snapshot(1, [item(id="")]), "item 0 id is empty"),
        (snapshot(1, [item(content="")]), "item 0 content is empty"),
        (snapshot(1, [item(content="é" * 2049)]), "content is 4098 bytes"),
        (snapshot(1, [item(content="a\rb")]), "content contains control character U+000D"),
        (snapshot(1, [item(id="a\tb")]), "id contains control character U+0009"),
        (snapshot(1, [item(status="")]), "status '' is unknown"),
    ],
)
def test_todo_value_problems(snap: TodoSnapshot, needle: str) -> None:
    problems = todo_problems(snap)
    assert any(needle in p for p in problems), problems


def test_todo_content_may_hold_newlines_and_tabs() -> None:
    snap = snapshot(
        1, [item(content="line one\n\tline two"), item(id="x" * 2048, synthetic_id=True)]
    )
    assert todo_problems(snap) == []
    assert todo_problems(snapshot(1, [item(id=str(n)) for n in range(128)])) == []


def test_text_limits_count_utf8_bytes() -> None:
    assert text_problem("é" * 1024, 2048, required=True) is None
    assert (
        text_problem("é" * 1025, 2048, required=True) == "is 2050 bytes, over the 2048-byte limit"
    )
    assert text_problem("x" * 2048, 2048, required=True) is None
    assert text_problem("", 10, required=False) is None
    assert text_problem("", 10, required=True) == "is empty"
    assert text_problem(5, 10, required=False) == "is a int, not a string"


def test_lone_surrogates_are_not_utf8() -> None:
    assert text_problem("ok\ud800", 100, required=True) == "is not valid UTF-8"


def test_control_characters_are_exactly_category_cc() -> None:
    cc = {chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Cc"}
    for ch in sorted(cc):
        assert text_problem(f"a{ch}b", 100, required=True) is not None, hex(ord(ch))
        allowed = ch in "\n\t"
        assert (text_problem(f"a{ch}b", 100, required=True, multiline=True) is None) == allowed
    for ch in ("\u2028", "\u200b", "\xa0", "\ufeff", "😀"):  # not Cc: line sep, format, space
        assert text_problem(f"a{ch}b", 100, required=True) is None


def test_utc_means_aware_with_zero_offset() -> None:
    assert is_utc(AT)
    assert is_utc(datetime(2026, 1, 1, tzinfo=timezone(timedelta(0))))
    assert not is_utc(datetime(2026, 1, 1))
    assert not is_utc(datetime(2026, 1, 1, tzinfo=timezone(timedelta(minutes=-30))))
    assert not is_utc(None)
    assert not is_utc("2026-01-01T00:00:00Z")


def test_closed_vocabularies_are_checked_on_raw_strings() -> None:
    raw = construct(
        CapabilityInvocation,
        invocation_id="c",
        ref=construct(CapabilityRef, kind="mcp", key="k", operation="o"),
        phase="started",
        evidence="provider_protocol",
        source="provider",
        occurred_at=AT,
    )
    assert capability_problems(raw) == []
    assert capability_problems(raw.model_copy(update={"evidence": "hearsay"})) != []
    snap = construct(
        TodoSnapshot,
        items=[construct(TodoItem, id="1", content="c", status="in_progress")],
        source="plan_update",
        revision=1,
        occurred_at=AT,
    )
    assert todo_problems(snap) == []
    bad = construct(TodoItem, id="1", content="c", status=["pending"])
    assert todo_problems(snap.model_copy(update={"items": [bad]})) != []


# --- OBS-01 ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["skill", "mcp", "subagent"])
def test_fact_with_empty_support_is_exactly_one_obs01(kind: str) -> None:
    stream = base()[:2]
    operation = {"skill": "activate", "subagent": "spawn"}.get(kind, "search")
    stream[1] = fact(invocation(ref=CapabilityRef(kind=kind, key="k", operation=operation)))
    found = verify_observation_support(ObservationSupport(), stream)
    assert [v.clause for v in found] == ["OBS-01"]
    assert found[0].message.startswith("payload 1 (capability.invocation)")


def test_todos_with_mcp_only_support_are_two_obs01() -> None:
    found = verify_observation_support(ObservationSupport(mcp=True), base())
    assert [v.message.split(":")[0] for v in found] == [
        "payload 2 (todo.updated)",
        "payload 3 (todo.updated)",
    ]
    assert clauses(found) == {"OBS-01"}


def test_unknown_capability_kind_is_never_supported() -> None:
    everything = ObservationSupport(skills=True, mcp=True, subagents=True, todos=True)
    odd = fact(invocation(ref=construct(CapabilityRef, kind="plugin", key="k", operation="x")))
    assert clauses(verify_observation_support(everything, [odd])) == {"OBS-01"}


def test_declared_support_never_requires_facts() -> None:
    everything = ObservationSupport(skills=True, mcp=True, subagents=True, todos=True)
    assert verify_observation_support(everything, []) == []
    assert verify_observation_support(ObservationSupport(), [fact(None)]) == []  # OBS-02's job
