"""Hypothesis strategies for stream payloads, run events and transcripts.

Valid streams come from a small interpreter. Hypothesis draws a script of
:class:`Action` values (open, continue or close one lifecycle family), and
:class:`_StreamBuilder` turns each into the payloads a compliant driver would emit.
An action that does not fit the current state is coerced into one that does, so every
script gives a valid stream and shrinking stays meaningful. The builder records which
payload indices belong to which lifecycle, so a test can inject one fault at a known
place and predict where the verifier must report it.

Each action is one drawn integer: its low digits pick verb, family and target, the
rest is a ``detail`` number that selects leaf values (deltas, refs, todo lists ...)
from tables of valid, often awkward values (multi-byte text, LF and TAB in todo
content, ids at the byte limits). Hypothesis draws are slow, so the interpreter keeps
to about one draw per action. :func:`capability_lifecycles`, :func:`todo_snapshots`
and :func:`observation_text` draw free text instead, for smaller properties.

Garbage strategies build payloads with ``model_construct`` (no validation), the way a
careless driver could, to show that the verifier judges rather than crashes. Each garbage
payload holds at least one value that pydantic would reject, in a field a rule reads, and
says which clause family must report it.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from typing import Any, Final, Literal
from zoneinfo import ZoneInfo

from hypothesis import strategies as st

from adaptertest._shape import shape_problem
from driver.decision import (
    DecisionChoice,
    DecisionResult,
    HITLRequestedPayload,
    HITLResolvedPayload,
    HumanDecisionKind,
)
from driver.events import (
    Role,
    RunEvent,
    RunEventType,
    StreamKind,
    StreamPayload,
    TranscriptItem,
    TranscriptKind,
)
from driver.observation import (
    CapabilityInvocation,
    CapabilityKind,
    CapabilityRef,
    InvocationErrorCode,
    InvocationEvidence,
    InvocationPhase,
    InvocationSource,
    TodoItem,
    TodoSnapshot,
    TodoSource,
    TodoStatus,
)
from driver.run import FailureCode, RunFailure, Usage

__all__ = [
    "FAMILIES",
    "HASHABLE_JUNK",
    "REQUIREMENTS",
    "SCOPES",
    "TEMPLATES",
    "UNHASHABLE_JUNK",
    "VERBS",
    "WRONG_MODELS",
    "Action",
    "Garbage",
    "GarbageStream",
    "GeneratedRunEvents",
    "GeneratedStream",
    "Junk",
    "Lifecycle",
    "actions",
    "capability_lifecycles",
    "garbage_payloads",
    "garbage_streams",
    "observation_text",
    "run_events",
    "stream_payloads",
    "todo_snapshots",
    "transcript_items",
    "utc_datetimes",
    "valid_streams",
]

Terminal = Literal["finished", "error", "any"]

# --- tables of valid leaf values ---------------------------------------------------------

# Scopes of nested agents; "" is the root. Ids restart per scope, so the same tool call
# or invocation id occurs in several scopes, which is valid.
SCOPES: Final = ("", "agent-1", "ägent/2")
STEP_NAMES: Final = ("plan", "act", "verify")
TOOL_NAMES: Final = ("Read", "Bash", "Task", "mcp__kb__search")
VENDOR_KINDS: Final = ("acme.progress", "acme.heartbeat")
DELTAS: Final = ("Hel", "lo", " ", "\n", "é", "日本", "🙂", "x" * 64)
ARG_DELTAS: Final = ('{"path":', ' "a.txt"', "}", "[1,", " ")
ARG_SNAPSHOTS: Final[tuple[dict[str, Any], ...]] = (
    {"path": "a.txt"},
    {"q": "x", "limit": 3},
    {"cmd": ["ls", "-la"]},
    {"nested": {"k": None}},
)
RESULTS: Final[tuple[dict[str, Any], ...]] = (
    {},
    {"ok": True},
    {"content": "done", "is_error": False},
    {"lines": [1, 2]},
)
# (parent_scope_id, parent_tool_call_id) candidates; _sound() repairs self-references.
PARENTS: Final = (("", ""), ("", "t0"), ("agent-1", "t0"), ("", "c1"), ("ägent/2", "t1"))
# kind, key (<= 512 bytes), operation (<= 256 bytes); skills activate, subagents spawn
REFS: Final = (
    (CapabilityKind.MCP, "kb", "tools/call"),
    (CapabilityKind.MCP, "ключ", "resources/read"),
    (CapabilityKind.MCP, "k" * 512, "o" * 256),
    (CapabilityKind.SKILL, "deploy", "activate"),
    (CapabilityKind.SKILL, "日本語 skill", "activate"),
    (CapabilityKind.SUBAGENT, "reviewer", "spawn"),
)
# invocation ids are prefix + counter; the last stays under the 2048-byte limit
INVOCATION_PREFIXES: Final = ("c", "call_", "é" * 1000 + "-")
ITEM_POOL: Final = (
    TodoItem(id="1", content="write tests", status=TodoStatus.PENDING),
    TodoItem(id="2", content="fix\n\tthe bug", status=TodoStatus.IN_PROGRESS),
    TodoItem(id="step-a", content="é" * 10, status=TodoStatus.COMPLETED, synthetic_id=True),
    TodoItem(id="i" * 2048, content="x" * 4096, status=TodoStatus.CANCELLED),
    TodoItem(id="日本", content="🙂", status=TodoStatus.PENDING),
)
FAILURES: Final = (
    RunFailure(message="boom", code=FailureCode.AGENT_ERROR),
    RunFailure(message="stopped", code=FailureCode.CANCELLED),
    RunFailure(message="exit 1"),
)
ZERO_OFFSET_ZONES: Final = (UTC, timezone(timedelta(0)))
BASE_TIME: Final = datetime(2026, 1, 1, tzinfo=UTC)

# Tool action variants (bit flags).
SNAPSHOT: Final = 1  # the start carries complete args; no args deltas follow
WANTS_RESULT: Final = 2  # the call must get a tool_call.result

FAMILIES: Final = (
    "text",
    "reasoning",
    "tool",
    "tool_result",
    "step",
    "hitl",
    "capability",
    "todo",
    "vendor",
    "dropped",
)
VERBS: Final = ("open", "more", "close")
# Actions decode through these wheels: tools (the richest lifecycle) and "more" (so
# lifecycles get content) come up more often.
_FAMILY_WHEEL: Final = (*FAMILIES, "tool", "text")
_VERB_WHEEL: Final = ("open", "more", "more", "close")
_DETAILS: Final = 256

# Lifecycles a test can demand; each maps to the action that guarantees one exists.
REQUIREMENTS: Final[dict[str, tuple[str, str, int]]] = {
    "text": ("open", "text", 0),
    "reasoning": ("open", "reasoning", 0),
    "tool_streamed": ("open", "tool", 0),
    "tool_snapshot": ("open", "tool", SNAPSHOT),
    "tool_result": ("open", "tool", WANTS_RESULT),
    "step": ("open", "step", 0),
    "hitl": ("open", "hitl", 0),
    "capability": ("open", "capability", 0),
    "todo": ("open", "todo", 0),
}

_TOOL_START: Final = StreamKind.TOOL_CALL_START.value
_TOOL_ARGS: Final = StreamKind.TOOL_CALL_ARGS.value
_TOOL_END: Final = StreamKind.TOOL_CALL_END.value
_TOOL_RESULT: Final = StreamKind.TOOL_CALL_RESULT.value
_CAPABILITY: Final = StreamKind.CAPABILITY_INVOCATION.value
_TERMINAL_PHASES: Final = (
    InvocationPhase.COMPLETED,
    InvocationPhase.FAILED,
    InvocationPhase.CANCELLED,
    InvocationPhase.INTERRUPTED,
)
_ERROR_CODES: Final = ("", *InvocationErrorCode)
_EVIDENCE: Final = (InvocationEvidence.PROVIDER_PROTOCOL, InvocationEvidence.NATIVE_INPUT_ACCEPTED)


def _pick(table: tuple[Any, ...], detail: int) -> Any:
    return table[detail % len(table)]


def _time(detail: int) -> datetime:
    """A set time with a zero UTC offset (UTC itself or an equal fixed zone)."""
    return (BASE_TIME + timedelta(seconds=detail * 37)).astimezone(_pick(ZERO_OFFSET_ZONES, detail))


def _sound(pair: tuple[str, str], scope: str, own_id: str) -> tuple[str, str]:
    """Repair a parent pair: a parent scope needs a parent call, and no self-parent."""
    parent_scope, parent_call = pair
    if parent_scope and not parent_call:
        parent_call = "t0"
    if parent_call == own_id and parent_scope == scope:
        parent_call = f"{own_id}-parent"
    return parent_scope, parent_call


def _todo_list(detail: int) -> list[TodoItem]:
    """A subset of the pool (unique ids by construction), rotated; [] means cleared."""
    chosen = [item for bit, item in enumerate(ITEM_POOL) if detail >> bit & 1]
    turn = detail % (len(chosen) or 1)
    return [item.model_copy() for item in chosen[turn:] + chosen[:turn]]


def _started(scope: str, inv_id: str, detail: int) -> CapabilityInvocation:
    kind, key, operation = _pick(REFS, detail)
    parent_scope, parent_call = _sound(_pick(PARENTS, detail // 7), scope, inv_id)
    return CapabilityInvocation(
        invocation_id=inv_id,
        ref=CapabilityRef(kind=kind, key=key, operation=operation),
        phase=InvocationPhase.STARTED,
        evidence=_pick(_EVIDENCE, detail // 3),
        source=InvocationSource.PROVIDER,
        scope_id=scope,
        parent_scope_id=parent_scope,
        parent_tool_call_id=parent_call,
        occurred_at=_time(detail),
    )


def _finished(start: CapabilityInvocation, detail: int) -> CapabilityInvocation:
    """The closing phase of ``start``: same ref, parents, source and evidence."""
    phase = _pick(_TERMINAL_PHASES, detail)
    code = "" if phase == InvocationPhase.COMPLETED else _pick(_ERROR_CODES, detail // 4)
    duration = None if detail % 3 == 0 else timedelta(milliseconds=detail // 3)
    return start.model_copy(
        update={
            "phase": phase,
            "error_code": code,
            "duration": duration,
            "occurred_at": _time(detail + 1),
        }
    )


# --- the stream interpreter ---------------------------------------------------------------


@dataclass(frozen=True)
class Action:
    """One step of a generated stream script.

    ``pick`` chooses among the open lifecycles of the family (modulo their count);
    ``variant`` carries tool flags (:data:`SNAPSHOT`, :data:`WANTS_RESULT`); ``detail``
    selects leaf values from the tables.
    """

    verb: str
    family: str
    pick: int = 0
    variant: int = 0
    detail: int = 0

    @classmethod
    def decode(cls, code: int) -> Action:
        """Unpack one drawn integer; 0 is the simplest action (open a text).

        The code is first scrambled (a bijection that keeps 0 at 0), because Hypothesis
        favours small integers and those would otherwise all open texts.
        """
        code = code * _SCRAMBLE % _ACTION_SPACE
        code, family = divmod(code, len(_FAMILY_WHEEL))
        code, verb = divmod(code, len(_VERB_WHEEL))
        code, pick = divmod(code, 4)
        detail, variant = divmod(code, 4)
        return cls(_VERB_WHEEL[verb], _FAMILY_WHEEL[family], pick, variant, detail)


_ACTION_SPACE: Final = len(_FAMILY_WHEEL) * len(_VERB_WHEEL) * 16 * _DETAILS
_SCRAMBLE: Final = 48271  # a prime that does not divide the action space: a bijection
_ACTION_CODES: Final = st.integers(0, _ACTION_SPACE - 1)
_CODE: Final = st.integers(0, 2**16 - 1)


def actions(min_size: int = 0, max_size: int = 24) -> st.SearchStrategy[list[Action]]:
    """Random scripts; any list is valid input for the interpreter."""
    return st.lists(_ACTION_CODES.map(Action.decode), min_size=min_size, max_size=max_size)


@dataclass(frozen=True)
class Lifecycle:
    """The payloads of one lifecycle, as indices into the stream, in emission order.

    ``key`` is (message_id,) for text and reasoning, (scope_id, tool_call_id) for tools,
    (name,) for steps, (request_id,) for HITL, (scope_id, invocation_id) for
    capabilities and (scope_id,) for a scope's todo snapshots.
    """

    family: str
    key: tuple[str, ...]
    indices: tuple[int, ...]
    kinds: tuple[str, ...]
    snapshot: bool = False  # tools: the start carried complete args

    @property
    def first(self) -> int:
        return self.indices[0]

    @property
    def last(self) -> int:
        return self.indices[-1]

    def at(self, kind: str) -> list[int]:
        """Indices of this lifecycle's payloads of ``kind``."""
        return [i for i, k in zip(self.indices, self.kinds, strict=True) if k == kind]


@dataclass(frozen=True)
class GeneratedStream:
    """A valid stream and the lifecycle map the interpreter recorded while building it.

    ``payloads`` is a fresh list on every access. The models in it are shared, so
    replace a payload (``model_copy(update=...)``) instead of changing it in place.
    """

    items: tuple[StreamPayload, ...]
    lifecycles: tuple[Lifecycle, ...]
    script: tuple[Action, ...]

    @property
    def payloads(self) -> list[StreamPayload]:
        return list(self.items)

    @property
    def terminal_index(self) -> int:
        return len(self.items) - 1

    def of(self, family: str) -> list[Lifecycle]:
        return [lc for lc in self.lifecycles if lc.family == family]

    def __repr__(self) -> str:
        # one short line per payload: failing examples stay readable
        lines = [f"  {i:>3} {_summary(p)}" for i, p in enumerate(self.items)]
        return "GeneratedStream(\n" + "\n".join(lines) + "\n)"


def _summary(payload: StreamPayload) -> str:
    def short(value: object) -> str:
        text = repr(value)
        return text if len(text) <= 60 else text[:57] + "..."

    fields = sorted(payload.model_fields_set - {"kind"})
    return " ".join([payload.kind, *(f"{n}={short(getattr(payload, n))}" for n in fields)])


@dataclass(eq=False)
class _Open:
    """A lifecycle under construction."""

    family: str
    key: tuple[str, ...]
    fields: dict[str, Any] = field(default_factory=dict)  # repeated on every later frame
    indices: list[int] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    snapshot: bool = False
    wants_result: bool = False
    start: CapabilityInvocation | None = None
    previous: tuple[object, ...] | None = None  # todo: what the last snapshot said


class _StreamBuilder:
    """Turns actions into payloads while keeping the stream valid."""

    def __init__(self, envelope: dict[str, str]) -> None:
        self.envelope = envelope
        self.payloads: list[StreamPayload] = []
        self.done: list[_Open] = []
        self.open: dict[str, list[_Open]] = {f: [] for f in FAMILIES}
        self.awaiting_result: list[_Open] = []
        self.counters: dict[tuple[str, str], int] = {}
        self.todos: dict[str, _Open] = {}

    def _next_id(self, family: str, scope: str = "") -> int:
        n = self.counters.get((family, scope), 0)
        self.counters[(family, scope)] = n + 1
        return n

    def emit(self, rec: _Open | None, kind: str, **fields: Any) -> None:
        if rec is not None:
            rec.indices.append(len(self.payloads))
            rec.kinds.append(kind)
        self.payloads.append(StreamPayload(kind=kind, **self.envelope, **fields))

    def _begin(self, family: str, key: tuple[str, ...], **extra: Any) -> _Open:
        rec = _Open(family, key, **extra)
        self.done.append(rec)
        self.open[family].append(rec)
        return rec

    def run(self, a: Action) -> None:
        getattr(self, f"_{a.family}")(a)

    # one method per family; each coerces a verb that does not fit into one that does

    def _message(self, family: str, a: Action) -> None:
        opened = self.open[family]
        if a.verb == "open" or not opened:
            mid = f"{'msg' if family == 'text' else 'rsn'}-{self._next_id(family)}"
            rec = self._begin(family, (mid,))
            self.emit(rec, f"{family}.start", message_id=mid)
            self._contents(rec, a.detail % 3, a.detail)
        elif a.verb == "more":
            self._contents(opened[a.pick % len(opened)], 1 + a.detail % 2, a.detail)
        else:
            self._message_end(opened[a.pick % len(opened)], a.detail)

    def _contents(self, rec: _Open, count: int, detail: int) -> None:
        """``count`` deltas in a row (one action may emit several, to save draws)."""
        for n in range(count):
            delta = _pick(DELTAS, detail // 3 + n)
            self.emit(rec, f"{rec.family}.content", message_id=rec.key[0], delta=delta)

    def _message_end(self, rec: _Open, detail: int) -> None:
        self.open[rec.family].remove(rec)
        self.emit(rec, f"{rec.family}.end", message_id=rec.key[0])

    def _text(self, a: Action) -> None:
        self._message("text", a)

    def _reasoning(self, a: Action) -> None:
        self._message("reasoning", a)

    def _tool(self, a: Action) -> None:
        opened = self.open["tool"]
        streamed = [r for r in opened if not r.snapshot]
        if a.verb == "open" or not opened or (a.verb == "more" and not streamed):
            # a snapshot tool takes no args deltas, so "more" opens a streamed one
            variant = a.variant if a.verb == "open" else a.variant & ~SNAPSHOT
            self._tool_start(variant, a.detail)
        elif a.verb == "more":
            self._args(streamed[a.pick % len(streamed)], 1 + a.detail % 2, a.detail)
        else:
            self._tool_end(opened[a.pick % len(opened)], a.detail)

    def _tool_start(self, variant: int, detail: int) -> None:
        scope = _pick(SCOPES, detail)
        tid = f"t{self._next_id('tool', scope)}"
        parent_scope, parent_call = _sound(_pick(PARENTS, detail // 3), scope, tid)
        coords = {
            "tool_call_id": tid,
            "scope_id": scope,
            "parent_scope_id": parent_scope,
            "parent_tool_call_id": parent_call,
        }
        snapshot = bool(variant & SNAPSHOT)
        rec = self._begin(
            "tool",
            (scope, tid),
            fields=coords,
            snapshot=snapshot,
            wants_result=bool(variant & WANTS_RESULT),
        )
        args = dict(_pick(ARG_SNAPSHOTS, detail // 15)) if snapshot else {}
        name = _pick(TOOL_NAMES, detail // 5)
        self.emit(rec, _TOOL_START, name=name, args=args, **coords)
        if not snapshot:
            self._args(rec, detail % 3, detail)

    def _args(self, rec: _Open, count: int, detail: int) -> None:
        for n in range(count):
            self.emit(rec, _TOOL_ARGS, delta=_pick(ARG_DELTAS, detail // 2 + n), **rec.fields)

    def _tool_end(self, rec: _Open, detail: int) -> None:
        self.open["tool"].remove(rec)
        self.emit(rec, _TOOL_END, **rec.fields)
        self.awaiting_result.append(rec)

    def _tool_result(self, a: Action) -> None:
        if self.awaiting_result:
            self._result(self.awaiting_result[a.pick % len(self.awaiting_result)], a.detail)

    def _result(self, rec: _Open, detail: int) -> None:
        self.awaiting_result.remove(rec)
        self.emit(rec, _TOOL_RESULT, result=dict(_pick(RESULTS, detail)), **rec.fields)

    def _step(self, a: Action) -> None:
        opened = self.open["step"]
        if a.verb == "close" and opened:
            self._step_end(opened[a.pick % len(opened)], a.detail)
        else:
            # three names only, so one name is often open several times at once
            name = _pick(STEP_NAMES, a.pick)
            self.emit(self._begin("step", (name,)), StreamKind.STEP_STARTED.value, name=name)

    def _step_end(self, rec: _Open, detail: int) -> None:
        self.open["step"].remove(rec)
        self.emit(rec, StreamKind.STEP_FINISHED.value, name=rec.key[0])

    def _hitl(self, a: Action) -> None:
        opened = self.open["hitl"]
        if a.verb == "close" and opened:
            self._hitl_end(opened[a.pick % len(opened)], a.detail)
            return
        rid = f"h{self._next_id('hitl')}"
        request = HITLRequestedPayload(
            request_id=rid,
            kind=_pick(tuple(HumanDecisionKind), a.detail),
            tool_call_id=_pick(("", "t0"), a.detail // 3),
            prompt=_pick(("Allow?", "Review the plan", "¿Seguro?"), a.detail // 6),
            choices=[DecisionChoice(key="yes"), DecisionChoice(key="no")],
            created_at=_pick((None, _time(a.detail)), a.detail // 18),
        )
        rec = self._begin("hitl", (rid,))
        self.emit(rec, StreamKind.HITL_REQUESTED.value, hitl_requested=request)

    def _hitl_end(self, rec: _Open, detail: int) -> None:
        self.open["hitl"].remove(rec)
        resolved = HITLResolvedPayload(
            request_id=rec.key[0],
            result=_pick(tuple(DecisionResult), detail),
            resolved_at=_time(detail),
            latency=timedelta(milliseconds=detail),
        )
        self.emit(rec, StreamKind.HITL_RESOLVED.value, hitl_resolved=resolved)

    def _capability(self, a: Action) -> None:
        opened = self.open["capability"]
        if a.verb == "close" and opened:
            self._capability_end(opened[a.pick % len(opened)], a.detail)
            return
        scope = _pick(SCOPES, a.pick)
        # counters restart per scope, so equal ids recur across scopes (valid)
        n = self._next_id("capability", scope)
        inv_id = f"{_pick(INVOCATION_PREFIXES, n)}{n}"
        start = _started(scope, inv_id, a.detail)
        rec = self._begin("capability", (scope, inv_id), start=start)
        self.emit(rec, _CAPABILITY, capability=start)

    def _capability_end(self, rec: _Open, detail: int) -> None:
        assert rec.start is not None
        self.open["capability"].remove(rec)
        self.emit(rec, _CAPABILITY, capability=_finished(rec.start, detail))

    def _todo(self, a: Action) -> None:
        # "open" may start a scope; other verbs revise a scope that has a list already
        known = tuple(self.todos)
        scope = _pick(SCOPES, a.pick) if a.verb == "open" or not known else _pick(known, a.pick)
        rec = self.todos.get(scope)
        if rec is None:
            parent_scope, parent_call = _sound(_pick(PARENTS, a.detail), scope, "")
            coords = {"parent_scope_id": parent_scope, "parent_tool_call_id": parent_call}
            rec = self.todos[scope] = _Open("todo", (scope,), fields=coords)
            self.done.append(rec)
        for n in range(1 + (a.verb != "open") * (a.detail % 2)):
            self._snapshot(rec, a.detail + n * 7, a.variant + n)

    def _snapshot(self, rec: _Open, detail: int, variant: int) -> None:
        items = _todo_list(detail)
        sources = tuple(TodoSource)
        source = _pick(sources, variant)
        said = (tuple(i.id for i in items), tuple(i.content for i in items), source)
        if said == rec.previous:
            # each snapshot must differ from the previous one of its scope (OBS-06)
            source = _pick(sources, variant + 1)
            said = (*said[:2], source)
        rec.previous = said
        snapshot = TodoSnapshot(
            items=items,
            source=source,
            scope_id=rec.key[0],
            revision=len(rec.indices) + 1,
            occurred_at=_time(detail),
            **rec.fields,
        )
        self.emit(rec, StreamKind.TODO_UPDATED.value, todo=snapshot)

    def _vendor(self, a: Action) -> None:
        self.emit(None, _pick(VENDOR_KINDS, a.pick), raw={"pct": a.detail % 101})

    def _dropped(self, a: Action) -> None:
        self.emit(None, StreamKind.DROPPED.value, raw={"dropped_count": a.detail + 1})

    def close_all(self, draw: st.DrawFn) -> None:
        """Close everything still open, in a drawn interleaving, plus required results."""
        closers = {
            "text": self._message_end,
            "reasoning": self._message_end,
            "tool": self._tool_end,
            "step": self._step_end,
            "hitl": self._hitl_end,
            "capability": self._capability_end,
        }
        while True:
            still_open = [r for f in closers for r in self.open[f]]
            if not still_open and not any(r.wants_result for r in self.awaiting_result):
                return
            candidates = still_open + self.awaiting_result  # optional results may come too
            choice, detail = divmod(draw(_CODE), _DETAILS)
            rec = candidates[choice % len(candidates)]
            if rec in self.awaiting_result:
                self._result(rec, detail)
            else:
                closers[rec.family](rec, detail)


@st.composite
def valid_streams(
    draw: st.DrawFn,
    *,
    require: Iterable[str] = (),
    terminal: Terminal = "any",
    min_actions: int = 4,
    max_actions: int = 32,
) -> GeneratedStream:
    """A valid rich stream: run.started, interleaved lifecycles, exactly one terminal.

    ``require`` names entries of :data:`REQUIREMENTS` that must occur at least once.
    """
    script = draw(actions(min_actions, max_actions))
    for name in require:
        verb, family, variant = REQUIREMENTS[name]
        code = draw(_CODE)
        at = code % (len(script) + 1)
        script.insert(at, Action(verb, family, code % 4, variant, code // 4 % _DETAILS))
    setup = draw(_CODE)
    envelope = _pick(({}, {"run_id": "run-1"}, {"run_id": "run-1", "thread_id": "th-1"}), setup)
    builder = _StreamBuilder(envelope)
    builder.emit(None, StreamKind.RUN_STARTED.value, turn_id=_pick(("", "turn-1"), setup // 3))
    for a in script:
        builder.run(a)
    builder.close_all(draw)
    end = terminal if terminal != "any" else _pick(("finished", "error"), setup // 6)
    if end == "finished":
        big = Usage(input_tokens=2**64 + setup, output_tokens=2**70, cached_input_tokens=2**64)
        usage = _pick((None, Usage(), Usage(input_tokens=setup, output_tokens=7), big), setup // 12)
        builder.emit(None, StreamKind.RUN_FINISHED.value, usage=usage)
    else:
        builder.emit(None, StreamKind.RUN_ERROR.value, error=_pick(FAILURES, setup // 12))
    lifecycles = tuple(
        Lifecycle(r.family, r.key, tuple(r.indices), tuple(r.kinds), r.snapshot)
        for r in builder.done
    )
    return GeneratedStream(tuple(builder.payloads), lifecycles, tuple(script))


def stream_payloads(**kwargs: Any) -> st.SearchStrategy[list[StreamPayload]]:
    """Just the payloads of :func:`valid_streams` (same keyword arguments)."""
    return valid_streams(**kwargs).map(lambda s: s.payloads)


# --- free-text leaf strategies (for smaller properties) ----------------------------------


def observation_text(*, max_size: int = 40, multiline: bool = False) -> st.SearchStrategy[str]:
    """Non-empty text observation fields accept: no Cc controls, no lone surrogates.

    ``multiline`` adds LF and TAB, which todo content allows.
    """
    chars = st.characters(exclude_categories=("Cc", "Cs"))
    if multiline:
        chars = chars | st.sampled_from("\n\t")
    return st.text(chars, min_size=1, max_size=max_size)


# Zones whose offset is zero at the drawn instant: UTC however spelt, a zone that has been
# at zero for a century, and London outside summer time (the filter keeps those instants).
_ZERO_AT_TIMES: Final = (*ZERO_OFFSET_ZONES, ZoneInfo("UTC"), ZoneInfo("Africa/Abidjan"))
_UTC_TIMES: Final = st.datetimes(
    min_value=datetime(1970, 1, 1),
    max_value=datetime(2200, 1, 1),
    timezones=st.sampled_from((*_ZERO_AT_TIMES, ZoneInfo("Europe/London"))),
).filter(lambda moment: moment.utcoffset() == timedelta(0))


def utc_datetimes() -> st.SearchStrategy[datetime]:
    """Set times with a zero UTC offset, in zones that are not always UTC too."""
    return _UTC_TIMES


def _free_ref(kind: CapabilityKind, key: str, mcp_operation: str) -> CapabilityRef:
    operation = {CapabilityKind.SKILL: "activate", CapabilityKind.SUBAGENT: "spawn"}.get(
        kind, mcp_operation
    )
    return CapabilityRef(kind=kind, key=key, operation=operation)


_FREE_REFS: Final = st.builds(
    _free_ref, st.sampled_from(CapabilityKind), observation_text(), observation_text()
)


@st.composite
def capability_lifecycles(
    draw: st.DrawFn,
) -> tuple[CapabilityInvocation, CapabilityInvocation]:
    """A valid (started, terminal) pair with free-text ids, keys and operations."""
    scope = draw(st.sampled_from(SCOPES) | observation_text())
    inv_id = draw(observation_text())
    pair = draw(st.tuples(st.sampled_from(("", *SCOPES)), observation_text() | st.just("")))
    parent_scope, parent_call = _sound(pair, scope, inv_id)
    start = CapabilityInvocation(
        invocation_id=inv_id,
        ref=draw(_FREE_REFS),
        phase=InvocationPhase.STARTED,
        evidence=draw(st.sampled_from(_EVIDENCE)),
        source=InvocationSource.PROVIDER,
        scope_id=scope,
        parent_scope_id=parent_scope,
        parent_tool_call_id=parent_call,
        occurred_at=draw(_UTC_TIMES),
    )
    phase = draw(st.sampled_from(_TERMINAL_PHASES))
    end = start.model_copy(
        update={
            "phase": phase,
            "error_code": ""
            if phase == InvocationPhase.COMPLETED
            else draw(st.sampled_from(_ERROR_CODES)),
            "duration": draw(st.none() | st.timedeltas(min_value=timedelta(0))),
            "occurred_at": draw(_UTC_TIMES),
        }
    )
    return start, end


_FREE_TODO_ITEMS: Final = st.lists(
    st.builds(
        TodoItem,
        id=observation_text(),
        content=observation_text(multiline=True),
        status=st.sampled_from(TodoStatus),
        synthetic_id=st.booleans(),
    ),
    max_size=6,
    unique_by=lambda i: i.id,
)


@st.composite
def todo_snapshots(draw: st.DrawFn, *, count: int = 1) -> list[TodoSnapshot]:
    """``count`` valid consecutive snapshots of one scope, with free-text items."""
    scope = draw(st.sampled_from(SCOPES) | observation_text())
    pair = draw(st.tuples(st.sampled_from(("", *SCOPES)), st.sampled_from(("", "t0"))))
    parent_scope, parent_call = _sound(pair, scope, "")
    out: list[TodoSnapshot] = []
    for revision in range(1, count + 1):
        items = draw(_FREE_TODO_ITEMS)
        source = draw(st.sampled_from(TodoSource))
        if out and out[-1].items == items and out[-1].source == source:
            # each snapshot must differ from the previous one (OBS-06)
            source = next(s for s in TodoSource if s != source)
        out.append(
            TodoSnapshot(
                items=items,
                source=source,
                scope_id=scope,
                parent_scope_id=parent_scope,
                parent_tool_call_id=parent_call,
                revision=revision,
                occurred_at=draw(_UTC_TIMES),
            )
        )
    return out


# --- run events and transcripts ----------------------------------------------------------

_TEXT_KINDS: Final = frozenset(
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


def _item(kind: TranscriptKind, detail: int) -> TranscriptItem:
    fields: dict[str, Any] = {"kind": kind, "scope_id": _pick(SCOPES, detail // 2)}
    if kind in _TEXT_KINDS:
        fields["text"] = _pick(DELTAS, detail)
    if kind in (TranscriptKind.ASSISTANT, TranscriptKind.THINKING):
        fields["delta"] = bool(detail & 1)
    if kind == TranscriptKind.TOOL_CALL:
        fields["tool_name"] = _pick(TOOL_NAMES, detail)
        fields["tool_use_id"] = _pick(("t0", "t1", ""), detail // 4)
        fields["input"] = dict(_pick(ARG_SNAPSHOTS, detail // 8))
    if kind == TranscriptKind.TOOL_RESULT:
        fields["tool_use_id"] = _pick(("t0", "t1"), detail)
        fields["is_error"] = bool(detail & 2)
    if kind == TranscriptKind.RESULT:
        fields["usage"] = _pick((None, Usage(input_tokens=detail)), detail)
        fields["cost_usd"] = _pick((None, detail / 1000), detail // 2)
    return TranscriptItem(**fields)


def transcript_items() -> st.SearchStrategy[TranscriptItem]:
    """A valid transcript item of any kind (TRN-01..04 hold)."""
    return st.builds(_item, st.sampled_from(TranscriptKind), st.integers(0, _DETAILS - 1))


@dataclass(frozen=True)
class GeneratedRunEvents:
    """Run events whose item events mirror ``transcript`` exactly (RUN-04 holds).

    ``item_events[j]`` is the index of the event carrying ``transcript[j]``.
    """

    events: tuple[RunEvent, ...]
    transcript: tuple[TranscriptItem, ...]
    item_events: tuple[int, ...]
    chunk_events: tuple[int, ...]


def _other_event(detail: int) -> RunEvent:
    """A chunk, lifecycle, invocation, spawn, runtime or vendor event."""
    choice, detail = divmod(detail, 4)
    if choice % 3 == 0:
        stream = _pick(("stdout", "stderr"), detail)
        chunk = _pick((b"", b"line\n", b"\xe6\x97", b"\xa5 split"), detail // 2)
        return RunEvent(type=RunEventType.CHUNK.value, stream=stream, chunk=chunk)
    if choice % 3 == 1:
        text = _pick(("spawned", "exited", "retrying"), detail)
        return RunEvent(type=RunEventType.LIFECYCLE.value, text=text, metadata={"pid": "42"})
    kinds = (RunEventType.INVOCATION, RunEventType.SPAWN, RunEventType.RUNTIME, "acme.tick")
    return RunEvent(type=_pick(kinds, detail), data=dict(_pick(RESULTS, detail // 4)))


@st.composite
def run_events(draw: st.DrawFn, *, min_items: int = 0, min_chunks: int = 0) -> GeneratedRunEvents:
    """Chunk, lifecycle and other events interleaved with item events for a transcript."""
    transcript = draw(st.lists(transcript_items(), min_size=min_items, max_size=6))
    codes = draw(st.lists(_CODE, max_size=8))
    forced = [RunEvent(type=RunEventType.CHUNK.value, stream="stdout", chunk=b"x")] * min_chunks
    # each extra event goes right before transcript item `slot` (or after all items)
    others = sorted(
        [(code % (len(transcript) + 1), n, _other_event(code // 8)) for n, code in enumerate(codes)]
        + [(draw(_CODE) % (len(transcript) + 1), -1, event) for event in forced],
        key=lambda t: (t[0], t[1]),
    )
    events: list[RunEvent] = []
    item_events: list[int] = []
    for j, item in enumerate([*transcript, None]):
        while others and others[0][0] == j:
            events.append(others.pop(0)[2])
        if item is not None:
            item_events.append(len(events))
            # an equal copy, not the same object: RUN-04 compares by value
            events.append(RunEvent(type=RunEventType.ITEM.value, item=item.model_copy(deep=True)))
    chunks = tuple(i for i, e in enumerate(events) if e.type == RunEventType.CHUNK.value)
    return GeneratedRunEvents(tuple(events), tuple(transcript), tuple(item_events), chunks)


# --- garbage (model_construct, no validation) --------------------------------------------

_KNOWN_KINDS: Final = tuple(k.value for k in StreamKind)
# Hashable wrong-typed scalars; control characters, a lone surrogate, bytes, NaN ...
HASHABLE_JUNK: Final[tuple[Any, ...]] = (
    None,
    True,
    0,
    -1,
    7,
    2.5,
    math.nan,
    "",
    "m",
    "t0",
    "plan",
    "x\x00y",
    "\ud800",
    b"\xff",
    "run.started",
    "capability.invocation",
    datetime(1, 1, 1),
    timedelta(seconds=-1),
    Role.USER,
)
UNHASHABLE_JUNK: Final[tuple[Any, ...]] = (["m"], [], {"k": 1}, {})
# Non-model values where a nested model belongs.
WRONG_MODELS: Final[tuple[Any, ...]] = (0, "x", True, b"", 1.5)

_STREAM_FIELDS: Final = tuple(StreamPayload.model_fields)
_REF_FIELDS: Final = tuple(CapabilityRef.model_fields)
_ITEM_FIELDS: Final = tuple(TodoItem.model_fields)

# One valid payload per known kind: garbage starts from these so that it reaches the
# handler of its kind, and then has some fields overwritten.
_START: Final = _started("agent-1", "c0", 0)
_SNAPSHOT: Final = TodoSnapshot(items=list(ITEM_POOL[:2]), revision=1, occurred_at=BASE_TIME)
_TOOL: Final = {"tool_call_id": "t0", "scope_id": "agent-1", "parent_tool_call_id": "t1"}
TEMPLATES: Final = (
    StreamPayload(kind="run.started"),
    StreamPayload(kind="run.finished", usage=Usage()),
    StreamPayload(kind="run.error", error=FAILURES[0]),
    StreamPayload(kind="step.started", name="plan"),
    StreamPayload(kind="step.finished", name="plan"),
    StreamPayload(kind="text.start", message_id="m"),
    StreamPayload(kind="text.content", message_id="m", delta="x"),
    StreamPayload(kind="text.end", message_id="m"),
    StreamPayload(kind="reasoning.start", message_id="m"),
    StreamPayload(kind="reasoning.content", message_id="m", delta="x"),
    StreamPayload(kind="reasoning.end", message_id="m"),
    StreamPayload(kind=_TOOL_START, name="Read", args={"a": 1}, **_TOOL),
    StreamPayload(kind=_TOOL_ARGS, delta="{}", **_TOOL),
    StreamPayload(kind=_TOOL_END, **_TOOL),
    StreamPayload(kind=_TOOL_RESULT, result={"ok": True}, **_TOOL),
    StreamPayload(kind="hitl.requested", hitl_requested=HITLRequestedPayload(request_id="h")),
    StreamPayload(kind="hitl.resolved", hitl_resolved=HITLResolvedPayload(request_id="h")),
    StreamPayload(kind="stream.dropped", raw={"dropped_count": 1}),
    StreamPayload(kind=_CAPABILITY, capability=_START),
    StreamPayload(kind=_CAPABILITY, capability=_finished(_START, 5)),
    StreamPayload(kind="todo.updated", todo=_SNAPSHOT),
    StreamPayload(kind="acme.progress", raw={"pct": 5}),
)


Junk = Literal["scalars", "unhashable", "wrong_models"]


def _value_groups(junk: Junk) -> dict[str, tuple[tuple[Any, ...], ...]]:
    """Per field, groups of garbage values; a draw picks a group, then a value in it.

    ``scalars``: plain fields get :data:`HASHABLE_JUNK`; model-typed fields get None,
    valid models, or models with that junk inside (None included for the nested ``ref``
    and ``items``). ``unhashable``: plain fields get :data:`UNHASHABLE_JUNK` instead.
    ``wrong_models``: model-typed fields (and ``ref``/``items``) get non-models or a
    model of the wrong class.
    """
    plain = UNHASHABLE_JUNK if junk == "unhashable" else HASHABLE_JUNK
    refs = tuple(CapabilityRef.model_construct(**dict.fromkeys(_REF_FIELDS, v)) for v in plain)
    items = tuple(TodoItem.model_construct(**dict.fromkeys(_ITEM_FIELDS, v)) for v in plain)
    if junk == "wrong_models":
        wrong = (*WRONG_MODELS, _START, _SNAPSHOT)
        capability: tuple[tuple[Any, ...], ...] = (
            (*WRONG_MODELS, _SNAPSHOT),
            tuple(_START.model_copy(update={"ref": v}) for v in (*WRONG_MODELS, _SNAPSHOT)),
        )
        todo: tuple[tuple[Any, ...], ...] = (
            (*WRONG_MODELS, _START),
            tuple(
                _SNAPSHOT.model_copy(update={"items": v}) for v in (*WRONG_MODELS, [0], [_START])
            ),
        )
        other: tuple[tuple[Any, ...], ...] = (wrong,)
    else:
        inner = [n for n in CapabilityInvocation.model_fields if n != "ref"]
        capability = (
            (None, _START, _finished(_START, 5), _START.model_copy(update={"ref": None})),
            tuple(_START.model_copy(update={n: v}) for n in inner for v in plain),
            tuple(_START.model_copy(update={"ref": r}) for r in refs),
        )
        fields = [n for n in TodoSnapshot.model_fields if n != "items"]
        todo = (
            (None, _SNAPSHOT, _SNAPSHOT.model_copy(update={"items": None})),
            tuple(_SNAPSHOT.model_copy(update={n: v}) for n in fields for v in plain),
            tuple(_SNAPSHOT.model_copy(update={"items": [i, i]}) for i in items),
        )
        other = ((None,), (Usage(), FAILURES[0], HITLRequestedPayload(), HITLResolvedPayload()))
    groups: dict[str, tuple[tuple[Any, ...], ...]] = dict.fromkeys(_STREAM_FIELDS, (plain,))
    groups["kind"] = (_KNOWN_KINDS, VENDOR_KINDS, plain)
    groups["capability"] = capability
    groups["todo"] = todo
    for name in ("usage", "error", "hitl_requested", "hitl_resolved"):
        groups[name] = other
    return groups


# No rule reads these fields of vendor kinds and stream.dropped (both pass unchecked), so
# junk there need not be reported; everywhere else in a field a kind uses, it must be.
_UNREAD: Final = frozenset({"raw"})
_PASSED_THROUGH: Final = frozenset({*VENDOR_KINDS, StreamKind.DROPPED.value})
_FACTS: Final = frozenset({"capability", "todo"})


def _judged_fields(template: StreamPayload, junk: Junk) -> list[str]:
    """The fields of ``template`` whose junk a verifier must report: ``kind`` and the used ones."""
    if junk == "wrong_models":
        return sorted(template.model_fields_set & _FACTS)
    used = sorted(template.model_fields_set | {"kind"})
    if template.kind in _PASSED_THROUGH:
        return [name for name in used if name not in _UNREAD]
    return used


def _illegal(template: StreamPayload, name: str, value: Any) -> bool:
    """Whether no validated payload could hold ``value`` in ``name`` (pydantic is the judge)."""
    fields = dict(template.__dict__)
    fields[name] = value
    return shape_problem(StreamPayload.model_construct(**fields), StreamPayload) is not None


@dataclass(frozen=True)
class Garbage:
    """A garbage payload and the clause family that must report it.

    ``family`` is ``"OBS"`` when the guaranteed junk sits in a fact (``capability``,
    ``todo``), ``"EVT"`` otherwise.
    """

    payload: StreamPayload
    family: str


@functools.cache
def garbage_payloads(junk: Junk = "scalars") -> st.SearchStrategy[Garbage]:
    """Payloads built with ``model_construct``: a valid template, fields overwritten.

    ``junk`` says what goes into the fields (see :func:`_value_groups`). The first
    overwrite puts a value no validated payload could hold into ``kind`` or a field the
    template's kind uses (for ``wrong_models``: its fact), so every payload is garbage a
    verifier must report. The later overwrites go anywhere but ``kind`` and that field;
    they may add reports, never take the first one away.
    """
    groups = _value_groups(junk)
    templates = [t for t in TEMPLATES if _judged_fields(t, junk)]
    firsts = [
        (template, name, illegal)
        for template in templates
        for name in _judged_fields(template, junk)
        if (illegal := tuple(v for g in groups[name] for v in g if _illegal(template, name, v)))
    ]

    def build(first_at: int, first_code: int, codes: list[int]) -> Garbage:
        template, first, illegal = firsts[first_at]
        fields = dict(template.__dict__)
        fields[first] = illegal[first_code % len(illegal)]
        others = [n for n in _STREAM_FIELDS if n not in ("kind", first)]
        used = sorted(n for n in template.model_fields_set if n in others)
        for code in codes:
            code, anywhere = divmod(code, 2)
            code, name_at = divmod(code, len(_STREAM_FIELDS))
            pool = others if anywhere or not used else used  # half hit a field the kind uses
            name = pool[name_at % len(pool)]
            value_groups = groups[name]
            code, group_at = divmod(code, len(value_groups))
            group = value_groups[group_at]
            fields[name] = group[code % len(group)]
        payload = StreamPayload.model_construct(**fields)
        return Garbage(payload, "OBS" if first in _FACTS else "EVT")

    codes = st.integers(0, 2**20)
    return st.builds(
        build,
        st.integers(0, len(firsts) - 1),
        codes,
        st.lists(codes, max_size=2),
    )


@dataclass(frozen=True)
class GarbageStream:
    """Garbage payloads spliced into a valid stream (which alone reports nothing).

    ``families`` holds, per garbage payload, the clause family that must report it.
    """

    payloads: tuple[StreamPayload, ...]
    families: tuple[str, ...]


@st.composite
def garbage_streams(draw: st.DrawFn, junk: Junk = "scalars") -> GarbageStream:
    """One to six garbage payloads anywhere in a valid stream, first and last places included.

    The stream may be as short as run.started and its terminal, or reach deep states.
    """
    garbage = draw(st.lists(garbage_payloads(junk), min_size=1, max_size=6))
    stream = draw(valid_streams(min_actions=0, max_actions=12)).payloads
    for g in garbage:
        stream.insert(draw(_CODE) % (len(stream) + 1), g.payload)
    return GarbageStream(tuple(stream), tuple(g.family for g in garbage))
