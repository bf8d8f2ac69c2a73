"""Properties of the stream, run-event and transcript verifiers, over generated input.

Valid streams and run events come from the interpreter in ``strategies.py``. Every
fault test takes such a stream, injects one broken behaviour and predicts the exact
reports: which clause, at which payload index (or from ``finish()``), and nothing
else. Where a fault legitimately yields a second report, its injector says so.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from strategies import (
    GarbageStream,
    GeneratedRunEvents,
    GeneratedStream,
    Lifecycle,
    capability_lifecycles,
    garbage_streams,
    run_events,
    todo_snapshots,
    valid_streams,
)

from adaptertest._violation import Violation
from adaptertest.evt import (
    StreamVerifier,
    verify_observation_sequence,
    verify_stream_capability,
    verify_stream_sequence,
)
from adaptertest.obs import (
    capability_problems,
    todo_problems,
    verify_observation_support,
)
from adaptertest.run import verify_run_events, verify_transcript_mirror
from adaptertest.trn import verify_transcript
from driver.decision import HITLRequestedPayload
from driver.descriptor import ObservationSupport, StreamCapability
from driver.events import Role, StreamKind, StreamPayload, TranscriptItem
from driver.observation import CapabilityInvocation, TodoSnapshot

T = TypeVar("T")

END: Final = -1
"""Report position for violations that ``finish()`` returns."""

Report = tuple[int, str]  # (payload index or END, clause)

ALL_STREAM_FLAGS: Final = StreamCapability(
    native=True, token_level=True, reasoning=True, tool_call_args=True, hitl=True
)
NO_STREAM_FLAGS: Final = StreamCapability()
ALL_OBSERVATIONS: Final = ObservationSupport(skills=True, mcp=True, subagents=True, todos=True)
NO_OBSERVATIONS: Final = ObservationSupport()

FACT_KINDS: Final = frozenset(
    {StreamKind.CAPABILITY_INVOCATION.value, StreamKind.TODO_UPDATED.value}
)
# Clauses only the rich lifecycle judges; facts-only mode must never report them.
RICH_ONLY: Final = frozenset({f"EVT-{n:02d}" for n in (1, 2, 3, 4, 5, 6, 7, 8, 11, 13)})

START: Final = StreamKind.TOOL_CALL_START.value
ARGS: Final = StreamKind.TOOL_CALL_ARGS.value
TOOL_END: Final = StreamKind.TOOL_CALL_END.value
RESULT: Final = StreamKind.TOOL_CALL_RESULT.value
END_KIND: Final = {"text": "text.end", "reasoning": "reasoning.end", "tool": TOOL_END}
CONTENT_KIND: Final = {"text": "text.content", "reasoning": "reasoning.content", "tool": ARGS}
# stream-capability categories (EVT-12) by kind prefix; "tool_call" counts args only
CATEGORY: Final = {"tool_call": "args", "reasoning": "reasoning", "hitl": "hitl"}
COORDINATES: Final = ("tool_call_id", "scope_id", "parent_scope_id", "parent_tool_call_id")

_PAYLOAD_AT: Final = re.compile(r"^payload (\d+) \(")
_EVENT_AT: Final = re.compile(r"^event (\d+)\b")


# --- helpers -----------------------------------------------------------------------------


def _payload_index(found: Violation) -> int:
    named = _PAYLOAD_AT.match(found.message)
    assert named is not None, found
    return int(named.group(1))


def trace(payloads: Sequence[StreamPayload], *, facts_only: bool = False) -> list[Report]:
    """Feed payloads one at a time; each report tagged with the feed that returned it.

    Also checks that every message returned by ``feed(i)`` names payload ``i``.
    """
    verifier = StreamVerifier(facts_only=facts_only)
    reports: list[Report] = []
    for i, payload in enumerate(payloads):
        for found in verifier.feed(payload):
            assert _payload_index(found) == i, f"feed({i}) gave {found}"
            reports.append((i, found.clause))
    reports += [(END, found.clause) for found in verifier.finish()]
    return reports


def fixed_settings(max_examples: int) -> settings:
    """Deterministic, database-free, deadline-free settings: CI runs the same examples."""
    return settings(
        derandomize=True,
        database=None,
        deadline=None,
        max_examples=max_examples,
        suppress_health_check=[HealthCheck.too_slow],
    )


def run_everything(payloads: Sequence[StreamPayload]) -> list[Violation]:
    """Every stream entry point, both verifier modes; returns all that they report."""
    found: list[Violation] = []
    for facts_only in (False, True):
        verifier = StreamVerifier(facts_only=facts_only)
        for payload in payloads:
            found += verifier.feed(payload)
        found += verifier.finish()
    found += verify_stream_sequence(payloads)
    found += verify_observation_sequence(payloads)
    for flags in (ALL_STREAM_FLAGS, NO_STREAM_FLAGS):
        found += verify_stream_capability(flags, payloads)
    for support in (ALL_OBSERVATIONS, NO_OBSERVATIONS):
        found += verify_observation_support(support, payloads)
    return found


def open_after(stream: GeneratedStream, i: int) -> int:
    """What ``StreamVerifier.open_count`` must say after payload ``i`` of a valid stream.

    Open texts, reasonings, tools (start to end) and invocations, plus step *names*
    with a positive count; HITL requests and todo scopes are not lifecycles it counts.
    """
    count = 0
    step_names: set[str] = set()
    for lc in stream.lifecycles:
        if lc.family in ("text", "reasoning", "capability"):
            count += lc.first <= i < lc.last
        elif lc.family == "tool":
            count += lc.first <= i < lc.at(TOOL_END)[0]
        elif lc.family == "step" and lc.first <= i < lc.last:
            step_names.add(lc.key[0])
    return count + len(step_names)


def coordinates(payload: StreamPayload) -> dict[str, Any]:
    return {name: getattr(payload, name) for name in COORDINATES}


def replace(payload: StreamPayload, **update: Any) -> StreamPayload:
    """A changed copy (no validation, so tests can build what a driver should not)."""
    return payload.model_copy(update=update)


# --- fault injection ---------------------------------------------------------------------


@dataclass(frozen=True)
class Injected:
    payloads: list[StreamPayload]
    expected: list[Report]


class Draws:
    """Labelled draws for one fault, so a failing example says what was chosen."""

    def __init__(self, data: st.DataObject, fault: str) -> None:
        self.data = data
        self.fault = fault

    def index(self, low: int, high: int, what: str) -> int:
        return self.data.draw(st.integers(low, high), label=f"{self.fault}: {what}")

    def choice(self, options: Sequence[T], what: str) -> T:
        return self.data.draw(st.sampled_from(options), label=f"{self.fault}: {what}")


Inject = Callable[[GeneratedStream, Draws], Injected]


@dataclass(frozen=True, repr=False)
class Fault:
    name: str
    inject: Inject
    require: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return self.name


def _lifecycle(s: GeneratedStream, d: Draws, family: str, **only: bool) -> Lifecycle:
    """One lifecycle of ``family``; ``snapshot=``/``result=`` narrow tools down."""
    found = s.of(family)
    if "snapshot" in only:
        found = [lc for lc in found if lc.snapshot == only["snapshot"]]
    if only.get("result"):
        found = [lc for lc in found if lc.at(RESULT)]
    return d.choice(found, family)


# run frames (EVT-01, EVT-02, EVT-13)


def drop_run_started(s: GeneratedStream, d: Draws) -> Injected:
    # two EVT-01: the new first payload is not run.started, and finish() counts zero
    return Injected(s.payloads[1:], [(0, "EVT-01"), (END, "EVT-01")])


def duplicate_run_started(s: GeneratedStream, d: Draws) -> Injected:
    # two EVT-01: the repeat itself, and finish() counts two
    ps = s.payloads
    k = d.index(1, s.terminal_index, "position")
    ps.insert(k, ps[0])
    return Injected(ps, [(k, "EVT-01"), (END, "EVT-01")])


def drop_terminal(s: GeneratedStream, d: Draws) -> Injected:
    return Injected(s.payloads[:-1], [(END, "EVT-02")])


def payload_after_terminal(s: GeneratedStream, d: Draws) -> Injected:
    # A second EVT-02 comes from finish() when the extra payload is another terminal
    # (count two) or a normalized kind (the terminal is then not the last one).
    late = [
        (StreamPayload(kind="acme.progress", raw={"pct": 100}), False),
        (StreamPayload(kind="stream.dropped", raw={"dropped_count": 2}), False),
        (s.payloads[-1], True),
        (StreamPayload(kind="text.start", message_id="late"), True),
        (StreamPayload(kind="step.started", name="late"), True),
        (
            StreamPayload(
                kind="hitl.requested", hitl_requested=HITLRequestedPayload(request_id="late")
            ),
            True,
        ),
    ]
    extra, also_at_end = d.choice(late, "extra payload")
    t = len(s.payloads)
    return Injected([*s.payloads, extra], [(t, "EVT-02")] + [(END, "EVT-02")] * also_at_end)


def run_error_without_error(s: GeneratedStream, d: Draws) -> Injected:
    ps = s.payloads
    ps[-1] = StreamPayload(kind="run.error")
    return Injected(ps, [(len(ps) - 1, "EVT-02")])


def ids_on_run_frame(s: GeneratedStream, d: Draws) -> Injected:
    ps = s.payloads
    i = d.choice([0, s.terminal_index], "run frame")
    name = d.choice(["message_id", "tool_call_id"], "field")
    ps[i] = replace(ps[i], **{name: "m-1"})
    return Injected(ps, [(i, "EVT-13")])


# text, reasoning and tool lifecycles (EVT-03..06, EVT-11)


def reopen(family: str, clause: str) -> Inject:
    def inject(s: GeneratedStream, d: Draws) -> Injected:
        lc = _lifecycle(s, d, family)
        ps = s.payloads
        k = d.index(lc.at(END_KIND[family])[0] + 1, s.terminal_index, "position")
        ps.insert(k, ps[lc.first])
        return Injected(ps, [(k, clause)])

    return inject


def _delta_payload(s: GeneratedStream, family: str, lc: Lifecycle, delta: str) -> StreamPayload:
    if family == "tool":
        return StreamPayload(kind=ARGS, delta=delta, **coordinates(s.items[lc.first]))
    return StreamPayload(kind=CONTENT_KIND[family], message_id=lc.key[0], delta=delta)


def empty_delta(family: str, clause: str) -> Inject:
    def inject(s: GeneratedStream, d: Draws) -> Injected:
        lc = _lifecycle(s, d, family, snapshot=False)
        ps = s.payloads
        k = d.index(lc.first + 1, lc.at(END_KIND[family])[0], "position")
        ps.insert(k, _delta_payload(s, family, lc, ""))
        return Injected(ps, [(k, clause)])

    return inject


def delta_after_end(family: str, clause: str) -> Inject:
    def inject(s: GeneratedStream, d: Draws) -> Injected:
        lc = _lifecycle(s, d, family, snapshot=False)
        ps = s.payloads
        k = d.index(lc.at(END_KIND[family])[0] + 1, s.terminal_index, "position")
        ps.insert(k, _delta_payload(s, family, lc, "late"))
        return Injected(ps, [(k, clause)])

    return inject


def drop_end(family: str) -> Inject:
    def inject(s: GeneratedStream, d: Draws) -> Injected:
        lc = _lifecycle(s, d, family)
        ps = s.payloads
        del ps[lc.at(END_KIND[family])[0]]
        return Injected(ps, [(len(ps) - 1, "EVT-11")])

    return inject


def drop_step_finished(s: GeneratedStream, d: Draws) -> Injected:
    lc = _lifecycle(s, d, "step")
    ps = s.payloads
    del ps[lc.last]
    return Injected(ps, [(len(ps) - 1, "EVT-11")])


def drop_capability_terminal(s: GeneratedStream, d: Draws) -> Injected:
    # two OBS-04: still open at the terminal, and again when the run returns
    lc = _lifecycle(s, d, "capability")
    ps = s.payloads
    del ps[lc.last]
    return Injected(ps, [(len(ps) - 1, "OBS-04"), (END, "OBS-04")])


# envelope (EVT-09, EVT-10)


def driver_numbering(s: GeneratedStream, d: Draws) -> Injected:
    ps = s.payloads
    i = d.index(0, s.terminal_index, "payload")
    name = d.choice(["sequence", "seq", "timestamp"], "field")
    value: object = datetime(2026, 5, 1, tzinfo=UTC) if name == "timestamp" else i + 1
    ps[i] = replace(ps[i], **{name: value})
    return Injected(ps, [(i, "EVT-10")])


def user_role(s: GeneratedStream, d: Draws) -> Injected:
    # facts included: role is EVT-09's alone, never also OBS-02
    ps = s.payloads
    i = d.index(0, s.terminal_index, "payload")
    ps[i] = replace(ps[i], role=Role.USER)
    return Injected(ps, [(i, "EVT-09")])


# required fields (EVT-05, EVT-07, EVT-08)


def tool_without_name(s: GeneratedStream, d: Draws) -> Injected:
    lc = _lifecycle(s, d, "tool")
    ps = s.payloads
    ps[lc.first] = replace(ps[lc.first], name="")
    return Injected(ps, [(lc.first, "EVT-05")])


def step_without_name(s: GeneratedStream, d: Draws) -> Injected:
    # Steps are counted per name, so the name's count is one short from here on: the
    # first later step.finished of that name met while only one was open (in the
    # original stream) finds none open, a second EVT-07.
    lc = _lifecycle(s, d, "step")
    name = lc.key[0]
    ps = s.payloads
    ps[lc.first] = replace(ps[lc.first], name="")
    depth, orphan = 0, None
    for i, payload in enumerate(s.items):
        if payload.name != name:
            continue
        if payload.kind == "step.started":
            depth += 1
        elif payload.kind == "step.finished":
            if i > lc.first and depth == 1 and orphan is None:
                orphan = i
            depth -= 1
    assert orphan is not None
    return Injected(ps, [(lc.first, "EVT-07"), (orphan, "EVT-07")])


def hitl_without_envelope(s: GeneratedStream, d: Draws) -> Injected:
    lc = _lifecycle(s, d, "hitl")
    i, name = d.choice([(lc.first, "hitl_requested"), (lc.last, "hitl_resolved")], "frame")
    ps = s.payloads
    ps[i] = replace(ps[i], **{name: None})
    return Injected(ps, [(i, "EVT-08")])


# tool coordinates (EVT-14)


def parents_move(s: GeneratedStream, d: Draws) -> Injected:
    lc = _lifecycle(s, d, "tool")
    i = d.choice(lc.indices[1:], "later frame")
    name = d.choice(["parent_scope_id", "parent_tool_call_id"], "field")
    ps = s.payloads
    ps[i] = replace(ps[i], **{name: getattr(ps[i], name) + "-moved"})
    return Injected(ps, [(i, "EVT-14")])


def args_after_snapshot(s: GeneratedStream, d: Draws) -> Injected:
    lc = _lifecycle(s, d, "tool", snapshot=True)
    ps = s.payloads
    k = d.index(lc.first + 1, lc.at(TOOL_END)[0], "position")
    ps.insert(k, StreamPayload(kind=ARGS, delta='{"more": 1}', **coordinates(ps[lc.first])))
    return Injected(ps, [(k, "EVT-14")])


def second_result(s: GeneratedStream, d: Draws) -> Injected:
    lc = _lifecycle(s, d, "tool", result=True)
    first_result = lc.at(RESULT)[0]
    ps = s.payloads
    k = d.index(first_result + 1, s.terminal_index, "position")
    ps.insert(k, ps[first_result])
    return Injected(ps, [(k, "EVT-14")])


# capability invocations (OBS-02..04)


def _with_fact(payload: StreamPayload, **update: Any) -> StreamPayload:
    fact = payload.capability
    assert fact is not None
    return replace(payload, capability=fact.model_copy(update=update))


def drop_capability_start(s: GeneratedStream, d: Draws) -> Injected:
    lc = _lifecycle(s, d, "capability")
    ps = s.payloads
    del ps[lc.first]
    return Injected(ps, [(lc.last - 1, "OBS-04")])


def duplicate_capability_start(s: GeneratedStream, d: Draws) -> Injected:
    lc = _lifecycle(s, d, "capability")
    ps = s.payloads
    k = d.index(lc.first + 1, s.terminal_index, "position")
    ps.insert(k, ps[lc.first])
    return Injected(ps, [(k, "OBS-04")])


def host_source(s: GeneratedStream, d: Draws) -> Injected:
    # changed on both phases, so the lifecycle stays consistent: OBS-03 on each
    lc = _lifecycle(s, d, "capability")
    update: dict[str, Any] = {"source": d.choice(["host", "relay"], "source")}
    evidence = d.choice(["", "host_lifecycle", "relayed"], "evidence")
    if evidence:
        update["evidence"] = evidence
    ps = s.payloads
    for i in lc.indices:
        ps[i] = _with_fact(ps[i], **update)
    return Injected(ps, [(lc.first, "OBS-03"), (lc.last, "OBS-03")])


def capability_on_text(s: GeneratedStream, d: Draws) -> Injected:
    # a valid fact (the start of one in the stream), on a text.* payload
    fact = s.items[_lifecycle(s, d, "capability").first].capability
    ps = s.payloads
    i = d.choice(_lifecycle(s, d, "text").indices, "text payload")
    ps[i] = replace(ps[i], capability=fact)
    return Injected(ps, [(i, "OBS-02")])


# todo snapshots (OBS-02, OBS-05, OBS-06)


def _with_todo(payload: StreamPayload, **update: Any) -> StreamPayload:
    snapshot = payload.todo
    assert snapshot is not None
    return replace(payload, todo=snapshot.model_copy(update=update))


def _bump_revisions(ps: list[StreamPayload], indices: Sequence[int]) -> None:
    for i in indices:
        snapshot = ps[i].todo
        assert snapshot is not None
        ps[i] = _with_todo(ps[i], revision=snapshot.revision + 1)


def skip_todo_revision(s: GeneratedStream, d: Draws) -> Injected:
    # every later snapshot of the scope moves up too, so only the gap is wrong
    lc = _lifecycle(s, d, "todo")
    m = d.index(0, len(lc.indices) - 1, "snapshot")
    ps = s.payloads
    _bump_revisions(ps, lc.indices[m:])
    return Injected(ps, [(lc.indices[m], "OBS-06")])


def repeat_todo_snapshot(s: GeneratedStream, d: Draws) -> Injected:
    lc = _lifecycle(s, d, "todo")
    m = d.index(0, len(lc.indices) - 1, "snapshot")
    ps = s.payloads
    _bump_revisions(ps, lc.indices[m + 1 :])
    following = lc.indices[m + 1] if m + 1 < len(lc.indices) else s.terminal_index
    k = d.index(lc.indices[m] + 1, following, "position")
    snapshot = ps[lc.indices[m]].todo
    assert snapshot is not None
    ps.insert(k, _with_todo(ps[lc.indices[m]], revision=snapshot.revision + 1))
    return Injected(ps, [(k, "OBS-06")])


def todo_items_none(s: GeneratedStream, d: Draws) -> Injected:
    lc = _lifecycle(s, d, "todo")
    i = d.choice(lc.indices, "snapshot")
    ps = s.payloads
    ps[i] = _with_todo(ps[i], items=None)
    return Injected(ps, [(i, "OBS-05")])


def todo_on_other_kind(s: GeneratedStream, d: Draws) -> Injected:
    ps = s.payloads
    i = d.choice([i for i, p in enumerate(ps) if p.kind not in FACT_KINDS], "payload")
    ps[i] = replace(ps[i], todo=TodoSnapshot(items=[], revision=1))
    return Injected(ps, [(i, "OBS-02")])


FAULT_GROUPS: Final[dict[str, list[Fault]]] = {
    "run-frames": [
        Fault("drop run.started", drop_run_started),
        Fault("duplicate run.started", duplicate_run_started),
        Fault("drop the terminal", drop_terminal),
        Fault("payload after the terminal", payload_after_terminal),
        Fault("run.error without error", run_error_without_error),
        Fault("ids on a run frame", ids_on_run_frame),
    ],
    "reopen": [
        Fault("reopen text", reopen("text", "EVT-03"), ("text",)),
        Fault("reopen reasoning", reopen("reasoning", "EVT-06"), ("reasoning",)),
        Fault("reopen tool", reopen("tool", "EVT-05"), ("tool_streamed",)),
    ],
    "empty-deltas": [
        Fault("empty text delta", empty_delta("text", "EVT-04"), ("text",)),
        Fault("empty reasoning delta", empty_delta("reasoning", "EVT-06"), ("reasoning",)),
        Fault("empty args delta", empty_delta("tool", "EVT-05"), ("tool_streamed",)),
    ],
    "deltas-after-end": [
        Fault("text content after end", delta_after_end("text", "EVT-03"), ("text",)),
        Fault("reasoning after end", delta_after_end("reasoning", "EVT-06"), ("reasoning",)),
        Fault("args after end", delta_after_end("tool", "EVT-05"), ("tool_streamed",)),
    ],
    "left-open": [
        Fault("drop text.end", drop_end("text"), ("text",)),
        Fault("drop reasoning.end", drop_end("reasoning"), ("reasoning",)),
        Fault("drop tool_call.end", drop_end("tool"), ("tool_streamed",)),
        Fault("drop step.finished", drop_step_finished, ("step",)),
        Fault("drop capability terminal", drop_capability_terminal, ("capability",)),
    ],
    "envelope": [
        Fault("driver numbering", driver_numbering),
        Fault("user role", user_role),
    ],
    "required-fields": [
        Fault("tool without name", tool_without_name, ("tool_streamed",)),
        Fault("step without name", step_without_name, ("step",)),
        Fault("hitl without envelope", hitl_without_envelope, ("hitl",)),
    ],
    "tool-coordinates": [
        Fault("parents move", parents_move, ("tool_streamed",)),
        Fault("args after snapshot", args_after_snapshot, ("tool_snapshot",)),
        Fault("second result", second_result, ("tool_result",)),
    ],
    "capabilities": [
        Fault("drop capability start", drop_capability_start, ("capability",)),
        Fault("duplicate capability start", duplicate_capability_start, ("capability",)),
        Fault("host source", host_source, ("capability",)),
        Fault("capability on a text payload", capability_on_text, ("capability", "text")),
    ],
    "todos": [
        Fault("skip todo revision", skip_todo_revision, ("todo",)),
        Fault("repeat todo snapshot", repeat_todo_snapshot, ("todo",)),
        Fault("todo items None", todo_items_none, ("todo",)),
        Fault("todo on another kind", todo_on_other_kind),
    ],
}


# --- valid input passes ------------------------------------------------------------------


@fixed_settings(100)
@given(stream=valid_streams(min_actions=8, max_actions=40))
def test_valid_streams_pass_every_stream_check(stream: GeneratedStream) -> None:
    payloads = stream.payloads
    assert verify_stream_sequence(payloads) == []
    assert verify_stream_capability(ALL_STREAM_FLAGS, payloads) == []
    assert verify_observation_support(ALL_OBSERVATIONS, payloads) == []
    # facts-only mode, over the whole stream and over the facts alone
    assert verify_observation_sequence(payloads) == []
    assert verify_observation_sequence([p for p in payloads if p.kind in FACT_KINDS]) == []

    # with every flag false, EVT-12 names the first payload of each category present
    firsts: dict[str, int] = {}
    for i, payload in enumerate(payloads):
        category = CATEGORY.get(payload.kind.split(".")[0])
        if category and (category != "args" or payload.kind == ARGS):
            firsts.setdefault(category, i)
    found = verify_stream_capability(NO_STREAM_FLAGS, payloads)
    assert [(v.clause, _payload_index(v)) for v in found] == [
        ("EVT-12", i) for i in sorted(firsts.values())
    ]
    # with no observation declared, OBS-01 names every fact
    found = verify_observation_support(NO_OBSERVATIONS, payloads)
    facts = [i for i, p in enumerate(payloads) if p.kind in FACT_KINDS]
    assert [(v.clause, _payload_index(v)) for v in found] == [("OBS-01", i) for i in facts]

    verifier = StreamVerifier()
    for i, payload in enumerate(payloads):
        assert verifier.feed(payload) == [], f"payload {i}"
        assert verifier.open_count == open_after(stream, i), f"open_count after payload {i}"
    assert verifier.payloads_seen == len(payloads)
    assert verifier.finish() == []


@fixed_settings(50)
@given(
    lifecycles=st.lists(
        capability_lifecycles(),
        max_size=3,
        unique_by=lambda pair: (pair[0].scope_id, pair[0].invocation_id),
    ),
    snapshots=todo_snapshots(count=3),
)
def test_free_text_facts_pass(
    lifecycles: list[tuple[CapabilityInvocation, CapabilityInvocation]],
    snapshots: list[TodoSnapshot],
) -> None:
    """Arbitrary (valid) unicode ids, keys, operations and todo text are accepted."""
    for start, end in lifecycles:
        assert capability_problems(start) == []
        assert capability_problems(end) == []
    for snapshot in snapshots:
        assert todo_problems(snapshot) == []
    cap = StreamKind.CAPABILITY_INVOCATION.value
    facts = [
        *(StreamPayload(kind=cap, capability=start) for start, _ in lifecycles),
        *(StreamPayload(kind=StreamKind.TODO_UPDATED.value, todo=s) for s in snapshots),
        *(StreamPayload(kind=cap, capability=end) for _, end in reversed(lifecycles)),
    ]
    stream = [StreamPayload(kind="run.started"), *facts, StreamPayload(kind="run.finished")]
    assert verify_stream_sequence(stream) == []
    assert verify_observation_sequence(facts) == []
    assert verify_observation_support(ALL_OBSERVATIONS, facts) == []


@fixed_settings(80)
@given(generated=run_events())
def test_valid_run_events_and_transcripts_pass(generated: GeneratedRunEvents) -> None:
    events, transcript = list(generated.events), list(generated.transcript)
    assert verify_run_events(events) == []
    assert verify_transcript(transcript) == []
    assert verify_transcript_mirror(events, transcript) == []
    if not transcript:
        assert verify_transcript_mirror(events, None) == []


# --- single faults are reported where they happen ----------------------------------------


@pytest.mark.parametrize("group", list(FAULT_GROUPS))
@fixed_settings(60)
@given(data=st.data())
def test_single_fault_is_reported_at_its_payload(group: str, data: st.DataObject) -> None:
    """Each fault of the group, injected alone into one shared valid stream."""
    faults = FAULT_GROUPS[group]
    needs = sorted({need for fault in faults for need in fault.require})
    stream = data.draw(valid_streams(require=needs, max_actions=24), label="stream")
    for fault in faults:
        injected = fault.inject(stream, Draws(data, fault.name))
        got = trace(injected.payloads)
        assert sorted(got) == sorted(injected.expected), fault.name
        # the whole-stream helper reports the same, in stream order
        batch = [v.clause for v in verify_stream_sequence(injected.payloads)]
        assert batch == [clause for _, clause in got], fault.name
        # facts-only mode reports exactly the clauses it judges
        want = sorted(r for r in injected.expected if r[1] not in RICH_ONLY)
        assert sorted(trace(injected.payloads, facts_only=True)) == want, fault.name


def _event_index(found: Violation) -> int:
    named = _EVENT_AT.match(found.message)
    assert named is not None, found
    return int(named.group(1))


def _first_difference(a: Sequence[TranscriptItem], b: Sequence[TranscriptItem]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


@fixed_settings(60)
@given(generated=run_events(min_items=1, min_chunks=1), data=st.data())
def test_run_event_faults_are_reported_at_their_event(
    generated: GeneratedRunEvents, data: st.DataObject
) -> None:
    transcript = list(generated.transcript)
    n_items = len(transcript)

    def pick(options: Sequence[int], label: str) -> int:
        return data.draw(st.sampled_from(options), label=label)

    # RUN-03: seq set by the driver
    events = list(generated.events)
    i = pick(range(len(events)), "seq on event")
    events[i] = events[i].model_copy(update={"seq": i + 1})
    found = verify_run_events(events)
    assert [(v.clause, _event_index(v)) for v in found] == [("RUN-03", i)]
    assert verify_transcript_mirror(events, transcript) == []

    # RUN-01: a chunk on neither stdout nor stderr
    events = list(generated.events)
    i = pick(generated.chunk_events, "combined chunk")
    events[i] = events[i].model_copy(update={"stream": "combined"})
    found = verify_run_events(events)
    assert [(v.clause, _event_index(v)) for v in found] == [("RUN-01", i)]

    # RUN-02: an item event without its item; the mirror then lacks one item (RUN-04)
    events = list(generated.events)
    j = pick(range(n_items), "item dropped from its event")
    i = generated.item_events[j]
    events[i] = events[i].model_copy(update={"item": None})
    found = verify_run_events(events)
    assert [(v.clause, _event_index(v)) for v in found] == [("RUN-02", i)]
    assert [v.clause for v in verify_transcript_mirror(events, transcript)] == ["RUN-04"]

    # TRN-02 through an item event: reported with the event's index; mirror differs
    events = list(generated.events)
    i = pick(generated.item_events, "tool_call item without tool_name")
    events[i] = events[i].model_copy(update={"item": TranscriptItem(kind="tool_call")})
    found = verify_run_events(events)
    assert [(v.clause, _event_index(v)) for v in found] == [("TRN-02", i)]
    assert [v.clause for v in verify_transcript_mirror(events, transcript)] == ["RUN-04"]

    # RUN-04: one item event dropped; the message gives both counts and the first
    # index where the two lists differ
    events = list(generated.events)
    j = pick(range(n_items), "item event removed")
    del events[generated.item_events[j]]
    assert verify_run_events(events) == []
    found = verify_transcript_mirror(events, transcript)
    assert [v.clause for v in found] == ["RUN-04"]
    emitted = [e.item for e in events if e.item is not None]
    first = _first_difference(emitted, transcript)
    assert first >= j  # everything before the dropped item still matches
    message = found[0].message
    assert f"carry {n_items - 1} item(s)" in message
    assert f"has {n_items}" in message
    assert message.endswith(f"first differ at index {first}")


# --- garbage is judged, never crashed on --------------------------------------------------


def declared_everything(payloads: Sequence[StreamPayload]) -> list[Violation]:
    """The stream checks with every capability declared: a valid stream reports nothing."""
    verifier = StreamVerifier()
    found = [v for payload in payloads for v in verifier.feed(payload)]
    found += verifier.finish()
    found += verify_observation_sequence(payloads)
    found += verify_stream_capability(ALL_STREAM_FLAGS, payloads)
    return found + verify_observation_support(ALL_OBSERVATIONS, payloads)


def judged(garbage: GarbageStream) -> list[Violation]:
    """Run every verifier over ``garbage``; check that each garbage payload was reported.

    Every entry point must judge without crashing. The valid stream the garbage is
    spliced into reports nothing with everything declared, so there every report is
    about the garbage; and each garbage payload holds a value no validated payload could
    hold, in a field a rule reads, so that rule's family (EVT, or OBS for a fact) reports.
    """
    for violation in run_everything(garbage.payloads):
        assert isinstance(violation, Violation)
        assert re.fullmatch(r"(EVT|OBS)-\d\d", violation.clause), violation
        assert violation.message
    found = declared_everything(garbage.payloads)
    assert set(garbage.families) <= {v.clause[:3] for v in found}, (garbage.families, found)
    return found


@fixed_settings(80)
@given(garbage=garbage_streams("scalars"))
def test_garbage_is_judged_not_crashed_on(garbage: GarbageStream) -> None:
    """Wrong-typed scalars, None for nested models, junk inside nested models."""
    judged(garbage)


# Values of the wrong type in key positions (unhashable) and non-models in fact fields:
# payloads only a driver bypassing validation can build. They are judged as malformed.


@fixed_settings(100)
@given(garbage=garbage_streams("unhashable"))
def test_unhashable_values_are_judged_not_crashed_on(garbage: GarbageStream) -> None:
    judged(garbage)


@fixed_settings(100)
@given(garbage=garbage_streams("wrong_models"))
def test_non_models_in_fact_fields_are_judged_not_crashed_on(garbage: GarbageStream) -> None:
    found = judged(garbage)
    assert any(v.clause.startswith("OBS") for v in found)


@fixed_settings(60)
@given(stream=valid_streams(min_actions=0, max_actions=12))
def test_the_streams_garbage_is_spliced_into_report_nothing(stream: GeneratedStream) -> None:
    """What makes ``judged`` meaningful: without the garbage, nothing is reported."""
    assert declared_everything(stream.payloads) == []


def test_a_kind_that_is_not_a_string_is_judged() -> None:
    """None or a number in ``kind`` once passed as a vendor kind, silently."""
    for kind in (None, 2.5, 0, True):
        payload = construct(StreamPayload, kind=kind)
        found = run_everything([_RUN_STARTED, payload, StreamPayload(kind="run.finished")])
        assert {v.clause for v in found} == {"EVT-01"}, found
        assert all(f"payload 1 ({type(kind).__name__}) is malformed" in v.message for v in found)


M = TypeVar("M", bound=BaseModel)


def construct(model: type[M], **fields: Any) -> M:
    """Build a model without validation, as a careless driver could."""
    return model.model_construct(**fields)


def _construct(kind: Any, **fields: Any) -> StreamPayload:
    return construct(StreamPayload, kind=kind, **fields)


def _crash(payloads: list[StreamPayload], error: type[Exception], name: str) -> Any:
    """A minimal input that once crashed the verifier with ``error``."""
    return pytest.param(payloads, id=name)


_RUN_STARTED: Final = StreamPayload(kind="run.started")
_CAPABILITY: Final = StreamKind.CAPABILITY_INVOCATION.value
_TODO: Final = StreamKind.TODO_UPDATED.value
CRASHES: Final = [
    # unhashable values where evt.py/obs.py use a field as a dict or set key
    _crash([_construct([])], TypeError, "kind-is-a-list"),
    _crash(
        [_RUN_STARTED, _construct("text.start", message_id=["m"])], TypeError, "message_id-list"
    ),
    _crash([_RUN_STARTED, _construct("step.started", name=["plan"])], TypeError, "step-name-list"),
    _crash(
        [_construct(START, tool_call_id="t", name="Read", scope_id=[])],
        TypeError,
        "tool-scope_id-list",
    ),
    _crash(
        [
            _construct(
                _CAPABILITY,
                capability=construct(CapabilityInvocation, invocation_id=[], phase="started"),
            )
        ],
        TypeError,
        "invocation_id-list",
    ),
    _crash(
        [_construct(_TODO, todo=construct(TodoSnapshot, items=[], scope_id={}))],
        TypeError,
        "todo-scope_id-dict",
    ),
    # non-models where obs.py expects a fact model
    _crash([_construct(_CAPABILITY, capability=0)], AttributeError, "capability-int"),
    _crash(
        [_construct(_CAPABILITY, capability=TodoSnapshot(items=[], revision=1))],
        AttributeError,
        "capability-is-a-todo",
    ),
    _crash([_construct(_TODO, todo="x")], AttributeError, "todo-str"),
    _crash(
        [_construct(_TODO, todo=construct(TodoSnapshot, items=0, revision=1))],
        TypeError,
        "todo-items-int",
    ),
    _crash(
        [_construct(_TODO, todo=construct(TodoSnapshot, items=[0], revision=1))],
        AttributeError,
        "todo-items-hold-an-int",
    ),
]


@pytest.mark.parametrize("payloads", CRASHES)
def test_minimal_garbage_is_judged_not_crashed_on(payloads: list[StreamPayload]) -> None:
    """The smallest inputs that once crashed the verifier are now malformed-payload reports."""
    found = run_everything(payloads)
    assert any("is malformed" in v.message for v in found), found
    for violation in found:
        assert isinstance(violation, Violation)
