"""OBS clauses: observation facts (capability invocations and todo snapshots).

The value rules (OBS-03, OBS-05) are pure functions over one fact. The payload and
lifecycle rules (OBS-02, OBS-04, OBS-06) live in :class:`ObservationTracker`, which the
stream verifier in :mod:`adaptertest.evt` owns and feeds one payload at a time, so the
same checks run for rich streams and for facts-only (batch or non-streaming) transports.

Closed vocabularies are checked against their string values, never trusted from the
type, because a driver can build a model with ``model_construct`` and skip validation.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from adaptertest._violation import Violation
from driver.descriptor import ObservationSupport
from driver.events import StreamKind, StreamPayload
from driver.observation import (
    CapabilityInvocation,
    CapabilityKind,
    InvocationErrorCode,
    InvocationEvidence,
    InvocationPhase,
    InvocationSource,
    TodoSnapshot,
    TodoSource,
    TodoStatus,
)
from driver.run import ObservationDemand

__all__ = [
    "DEMAND_OFF",
    "ID_LIMIT",
    "MAX_TODO_ITEMS",
    "ObservationTracker",
    "capability_problems",
    "demand_for",
    "is_utc",
    "observation_verdicts",
    "parent_problems",
    "text_problem",
    "todo_problems",
    "verify_observation_demand",
    "verify_observation_support",
]

ID_LIMIT: Final = 2048  # ids and scope coordinates, in UTF-8 bytes
KEY_LIMIT: Final = 512
OPERATION_LIMIT: Final = 256
CONTENT_LIMIT: Final = 4096
MAX_TODO_ITEMS: Final = 128

CAPABILITY_KIND: Final = StreamKind.CAPABILITY_INVOCATION.value
TODO_KIND: Final = StreamKind.TODO_UPDATED.value

# Unicode category Cc is fixed by the standard: C0 controls, DEL and C1 controls.
_CC_CODEPOINTS: Final = (*range(0x00, 0x20), *range(0x7F, 0xA0))
_STRIP_CC: Final = dict.fromkeys(_CC_CODEPOINTS)
_STRIP_CC_EXCEPT_LF_TAB: Final = dict.fromkeys(c for c in _CC_CODEPOINTS if c not in (0x0A, 0x09))

_GO_ZERO_TIME: Final = datetime(1, 1, 1, tzinfo=UTC)
_ZERO: Final = timedelta(0)

_PHASES: Final = frozenset(p.value for p in InvocationPhase)
_TERMINAL_PHASES: Final = _PHASES - {InvocationPhase.STARTED.value}
_DRIVER_EVIDENCE: Final = frozenset(
    {InvocationEvidence.PROVIDER_PROTOCOL.value, InvocationEvidence.NATIVE_INPUT_ACCEPTED.value}
)
_ERROR_CODES: Final = frozenset({"", *(c.value for c in InvocationErrorCode)})
_TODO_SOURCES: Final = frozenset(s.value for s in TodoSource)
_TODO_STATUSES: Final = frozenset(s.value for s in TodoStatus)
# A skill is only ever activated and a sub-agent only spawned; MCP operations are free.
_FIXED_OPERATION: Final = {
    CapabilityKind.SKILL.value: "activate",
    CapabilityKind.SUBAGENT.value: "spawn",
}
_KNOWN_CAPABILITY_KINDS: Final = frozenset(k.value for k in CapabilityKind)

# A payload's field dict: the stream verifier reads fields through ``__dict__`` because
# pydantic routes attribute reads through a slow ``__getattr__`` hook.
Fields = dict[str, Any]

# Fields an observation payload must leave at their zero value (OBS-02). ``role`` is
# not among them: EVT-09 already holds every payload to the zero role.
_FOREIGN_FIELDS: Final = (
    "args",
    "result",
    "raw",
    "hitl_requested",
    "hitl_resolved",
    "message_id",
    "tool_call_id",
    "name",
    "delta",
    "usage",
    "error",
    "scope_id",
    "parent_scope_id",
    "parent_tool_call_id",
)


def _in(value: object, vocabulary: frozenset[str]) -> bool:
    return isinstance(value, str) and value in vocabulary


def text_problem(
    value: object, limit: int, *, required: bool, multiline: bool = False
) -> str | None:
    """Say what is wrong with an observation string, or None when it is acceptable.

    Limits count UTF-8 bytes; a lone surrogate is not valid UTF-8; category Cc characters
    are refused except LF and TAB when ``multiline`` (todo content).
    """
    if not isinstance(value, str):
        return f"is a {type(value).__name__}, not a string"
    if not value:
        return "is empty" if required else None
    if value.isascii():
        size = len(value)
        if size > limit:
            return f"is {size} bytes, over the {limit}-byte limit"
        if value.isprintable():
            return None
    else:
        try:
            size = len(value.encode("utf-8"))
        except UnicodeEncodeError:
            return "is not valid UTF-8"
        if size > limit:
            return f"is {size} bytes, over the {limit}-byte limit"
    table = _STRIP_CC_EXCEPT_LF_TAB if multiline else _STRIP_CC
    if len(value.translate(table)) == len(value):
        return None
    bad = next(ch for ch in value if ord(ch) in table)
    return f"contains control character U+{ord(bad):04X}"


def is_utc(value: object) -> bool:
    """An observation time is set (not Go's zero time) and in UTC (zero offset)."""
    if not isinstance(value, datetime) or value.tzinfo is None:
        return False
    return value.utcoffset() == _ZERO and value != _GO_ZERO_TIME


def parent_problems(
    scope_id: object, parent_scope_id: object, parent_call_id: object, own_id: str
) -> list[str]:
    """Problems with scope coordinates (shared by OBS-03, OBS-05 and EVT-14).

    A parent scope needs a parent call, and a fact may not name itself (its own id in
    its own scope) as parent.
    """
    problems = []
    for label, value in (
        ("scope_id", scope_id),
        ("parent_scope_id", parent_scope_id),
        ("parent_tool_call_id", parent_call_id),
    ):
        problem = text_problem(value, ID_LIMIT, required=False)
        if problem is not None:
            problems.append(f"{label} {problem}")
    if parent_scope_id and not parent_call_id:
        problems.append("parent_scope_id is set without parent_tool_call_id")
    if parent_call_id and parent_call_id == own_id and parent_scope_id == scope_id:
        problems.append(f"names itself ({own_id!r} in scope {scope_id!r}) as its parent")
    return problems


def capability_problems(inv: CapabilityInvocation) -> list[str]:
    """Every OBS-03 value problem of one capability invocation (empty = valid)."""
    problems: list[str] = []

    def check(label: str, value: object, limit: int) -> None:
        problem = text_problem(value, limit, required=True)
        if problem is not None:
            problems.append(f"{label} {problem}")

    invocation_id = inv.invocation_id
    check("invocation_id", invocation_id, ID_LIMIT)
    ref = inv.ref
    kind = getattr(ref, "kind", "")
    operation = getattr(ref, "operation", "")
    check("ref.key", getattr(ref, "key", ""), KEY_LIMIT)
    check("ref.operation", operation, OPERATION_LIMIT)
    problems += parent_problems(
        inv.scope_id,
        inv.parent_scope_id,
        inv.parent_tool_call_id,
        invocation_id if isinstance(invocation_id, str) else "",
    )
    if not is_utc(inv.occurred_at):
        problems.append(f"occurred_at {inv.occurred_at!r} is not a set UTC time")
    if not _in(kind, _KNOWN_CAPABILITY_KINDS):
        problems.append(f"ref.kind {kind!r} is not skill, mcp or subagent")
    else:
        wanted = _FIXED_OPERATION.get(kind)
        if wanted is not None and operation != wanted:
            problems.append(f"ref.operation {operation!r} on a {kind} must be {wanted!r}")
    # Host and relay facts reach the host by other routes, never through a driver.
    if inv.source != InvocationSource.PROVIDER.value:
        problems.append(f"source {inv.source!r} is not 'provider'")
    if not _in(inv.evidence, _DRIVER_EVIDENCE):
        problems.append(
            f"evidence {inv.evidence!r} is not 'provider_protocol' or 'native_input_accepted'"
        )
    phase, duration, error_code = inv.phase, inv.duration, inv.error_code
    if phase == InvocationPhase.STARTED.value:
        if duration is not None:
            problems.append("a started phase carries a duration")
        if error_code:
            problems.append(f"a started phase carries error_code {error_code!r}")
    elif phase == InvocationPhase.COMPLETED.value:
        if error_code:
            problems.append(f"a completed phase carries error_code {error_code!r}")
    elif not _in(phase, _PHASES):
        problems.append(f"phase {phase!r} is unknown")
    if duration is not None and (not isinstance(duration, timedelta) or duration < _ZERO):
        problems.append(f"duration {duration!r} is negative")
    if not _in(error_code, _ERROR_CODES):
        problems.append(f"error_code {error_code!r} is unknown")
    return problems


def todo_problems(snapshot: TodoSnapshot) -> list[str]:
    """Every OBS-05 value problem of one todo snapshot (empty = valid)."""
    problems: list[str] = []
    items = snapshot.items
    if items is None:
        problems.append("items is None ([] clears the list)")
    elif len(items) > MAX_TODO_ITEMS:
        problems.append(f"{len(items)} items, over the limit of {MAX_TODO_ITEMS}")
    revision = snapshot.revision
    if not isinstance(revision, int) or revision < 1:
        problems.append(f"revision {revision!r} is not a positive number")
    if not is_utc(snapshot.occurred_at):
        problems.append(f"occurred_at {snapshot.occurred_at!r} is not a set UTC time")
    problems += parent_problems(
        snapshot.scope_id, snapshot.parent_scope_id, snapshot.parent_tool_call_id, ""
    )
    if not _in(snapshot.source, _TODO_SOURCES):
        problems.append(f"source {snapshot.source!r} is not 'tool_result' or 'plan_update'")
    seen: set[str] = set()
    for n, item in enumerate(items or ()):
        item_id = item.id
        problem = text_problem(item_id, ID_LIMIT, required=True)
        if problem is not None:
            problems.append(f"item {n} id {problem}")
        elif item_id in seen:
            problems.append(f"item {n} repeats id {item_id!r}")
        else:
            seen.add(item_id)
        problem = text_problem(item.content, CONTENT_LIMIT, required=True, multiline=True)
        if problem is not None:
            problems.append(f"item {n} content {problem}")
        if not _in(item.status, _TODO_STATUSES):
            problems.append(f"item {n} status {item.status!r} is unknown")
    return problems


class _OpenInvocation:
    """What a terminal phase must repeat from its start (OBS-04)."""

    __slots__ = ("evidence", "key", "kind", "operation", "parent_call", "parent_scope", "source")

    def __init__(self, inv: CapabilityInvocation) -> None:
        ref = inv.ref
        self.kind: object = getattr(ref, "kind", "")
        self.key: object = getattr(ref, "key", "")
        self.operation: object = getattr(ref, "operation", "")
        self.parent_scope: object = inv.parent_scope_id
        self.parent_call: object = inv.parent_tool_call_id
        self.source: object = inv.source
        self.evidence: object = inv.evidence

    def changed(self, inv: CapabilityInvocation) -> list[str]:
        ref = inv.ref
        now = (
            ("ref.kind", self.kind, getattr(ref, "kind", "")),
            ("ref.key", self.key, getattr(ref, "key", "")),
            ("ref.operation", self.operation, getattr(ref, "operation", "")),
            ("parent_scope_id", self.parent_scope, inv.parent_scope_id),
            ("parent_tool_call_id", self.parent_call, inv.parent_tool_call_id),
            ("source", self.source, inv.source),
            ("evidence", self.evidence, inv.evidence),
        )
        return [f"{label} {was!r} -> {new!r}" for label, was, new in now if was != new]


# Lifecycle states of a closed (scope, invocation) pair; an open one holds _OpenInvocation.
_CLOSED_AFTER_START: Final = 1
_CLOSED_WITHOUT_START: Final = 2  # a start may still follow once, and stays closed


class _TodoState:
    """The previous snapshot of one scope, copied so later driver mutation cannot matter."""

    __slots__ = ("items", "parent_call", "parent_scope", "revision", "source")

    def __init__(self, snapshot: TodoSnapshot) -> None:
        items = snapshot.items
        self.items: tuple[tuple[object, ...], ...] | None = (
            None
            if items is None
            else tuple((i.id, i.content, i.status, i.synthetic_id) for i in items)
        )
        self.source: object = snapshot.source
        self.parent_scope: object = snapshot.parent_scope_id
        self.parent_call: object = snapshot.parent_tool_call_id
        self.revision: object = snapshot.revision

    def same_as(self, other: _TodoState) -> bool:
        return (
            self.items == other.items
            and self.source == other.source
            and self.parent_scope == other.parent_scope
            and self.parent_call == other.parent_call
        )


def _report(
    out: list[Violation], clause: str, i: int, inv_id: object, scope: object, what: str
) -> None:
    where = f"payload {i} ({CAPABILITY_KIND}): invocation {inv_id!r} in scope {scope!r}"
    out.append(Violation(clause, f"{where}: {what}"))


class ObservationTracker:
    """Incremental OBS-02..06 checks over one stream.

    It keeps per scope the open invocations, the ids of closed ones and the previous todo
    snapshot; never a payload. The caller passes the payload index and kind it already
    read, and a list to append violations to.
    """

    __slots__ = ("_invocations", "_open", "_todos")

    def __init__(self) -> None:
        # scope_id -> invocation_id -> _OpenInvocation (open) or a closed-state marker
        self._invocations: dict[str, dict[str, _OpenInvocation | int]] = {}
        self._open = 0
        self._todos: dict[str, _TodoState] = {}

    @property
    def open_invocations(self) -> int:
        """How many (scope, invocation) lifecycles are open right now."""
        return self._open

    @property
    def tracked_invocations(self) -> int:
        """How many (scope, invocation) pairs have been seen (open or closed)."""
        return sum(len(ids) for ids in self._invocations.values())

    @property
    def tracked_todo_scopes(self) -> int:
        """How many scopes have a previous todo snapshot on record."""
        return len(self._todos)

    def misplaced(self, i: int, kind: str, d: Fields, out: list[Violation]) -> None:
        """OBS-02: a fact rides only on its own kind (call when either fact is set)."""
        if d["capability"] is not None and kind != CAPABILITY_KIND:
            out.append(Violation("OBS-02", f"payload {i} ({kind}): carries a capability fact"))
        if d["todo"] is not None and kind != TODO_KIND:
            out.append(Violation("OBS-02", f"payload {i} ({kind}): carries a todo fact"))

    def _foreign(self, i: int, kind: str, d: Fields, out: list[Violation]) -> None:
        for name in _FOREIGN_FIELDS:
            if d[name]:
                fields = ", ".join(n for n in _FOREIGN_FIELDS if d[n])
                out.append(Violation("OBS-02", f"payload {i} ({kind}): also carries {fields}"))
                return

    def _scope(self, scope: str) -> dict[str, _OpenInvocation | int]:
        ids = self._invocations.get(scope)
        if ids is None:
            ids = self._invocations[scope] = {}
        return ids

    def capability(self, i: int, d: Fields, out: list[Violation]) -> None:
        """Judge one capability.invocation payload (OBS-02, OBS-03, OBS-04)."""
        kind = CAPABILITY_KIND
        self._foreign(i, kind, d, out)
        inv: CapabilityInvocation | None = d["capability"]
        if inv is None or d["todo"] is not None:
            what = "has no capability" if inv is None else "also carries a todo"
            out.append(Violation("OBS-02", f"payload {i} ({kind}): {what}"))
            return
        problems = capability_problems(inv)
        inv_id, scope = inv.invocation_id, inv.scope_id

        if problems:
            _report(out, "OBS-03", i, inv_id, scope, "; ".join(problems))
        phase = inv.phase
        if phase == InvocationPhase.STARTED.value:
            ids = self._scope(scope)
            state = ids.get(inv_id)
            if state is None:
                ids[inv_id] = _OpenInvocation(inv)
                self._open += 1
            elif state == _CLOSED_WITHOUT_START:
                ids[inv_id] = _CLOSED_AFTER_START
            else:
                _report(out, "OBS-04", i, inv_id, scope, "started again")
        elif _in(phase, _TERMINAL_PHASES):
            ids = self._scope(scope)
            state = ids.get(inv_id)
            if isinstance(state, _OpenInvocation):
                changed = state.changed(inv)
                if changed:
                    _report(
                        out, "OBS-04", i, inv_id, scope, f"{phase} changes {', '.join(changed)}"
                    )
                ids[inv_id] = _CLOSED_AFTER_START
                self._open -= 1
            else:
                _report(out, "OBS-04", i, inv_id, scope, f"{phase} without an open start")
                if state is None:
                    ids[inv_id] = _CLOSED_WITHOUT_START
        # An unknown phase is an OBS-03 value fault only; it neither opens nor closes.

    def todo(self, i: int, d: Fields, out: list[Violation]) -> None:
        """Judge one todo.updated payload (OBS-02, OBS-05, OBS-06)."""
        kind = TODO_KIND
        self._foreign(i, kind, d, out)
        snapshot: TodoSnapshot | None = d["todo"]
        if snapshot is None or d["capability"] is not None:
            what = "has no todo snapshot" if snapshot is None else "also carries a capability"
            out.append(Violation("OBS-02", f"payload {i} ({kind}): {what}"))
            return
        scope = snapshot.scope_id
        where = f"payload {i} ({kind}): scope {scope!r}"
        problems = todo_problems(snapshot)
        if problems:
            out.append(Violation("OBS-05", f"{where}: {'; '.join(problems)}"))
        state = _TodoState(snapshot)
        previous = self._todos.get(scope)
        revision = state.revision
        if previous is None:
            if revision != 1:
                out.append(Violation("OBS-06", f"{where}: first revision is {revision!r}, want 1"))
        else:
            want = previous.revision + 1 if isinstance(previous.revision, int) else None
            if revision != want:
                out.append(
                    Violation(
                        "OBS-06",
                        f"{where}: revision {revision!r} follows {previous.revision!r}, "
                        f"want {want!r}",
                    )
                )
            if previous.same_as(state):
                out.append(Violation("OBS-06", f"{where}: repeats the previous snapshot"))
        self._todos[scope] = state

    def _open_lifecycles(self) -> Iterable[tuple[str, str]]:
        for scope, ids in self._invocations.items():
            for inv_id, state in ids.items():
                if isinstance(state, _OpenInvocation):
                    yield scope, inv_id

    def at_terminal(self, i: int, kind: str, out: list[Violation]) -> None:
        """OBS-04: every invocation still open at run.finished or run.error."""
        if self._open:
            for scope, inv_id in self._open_lifecycles():
                out.append(
                    Violation(
                        "OBS-04",
                        f"payload {i} ({kind}): invocation {inv_id!r} in scope {scope!r} "
                        "is still open",
                    )
                )

    def finish(self, out: list[Violation]) -> None:
        """OBS-04: every invocation still open when the run returned."""
        if self._open:
            for scope, inv_id in self._open_lifecycles():
                out.append(
                    Violation(
                        "OBS-04",
                        f"invocation {inv_id!r} in scope {scope!r} is still open when the "
                        "run returned",
                    )
                )


_SUPPORT_FLAG: Final = {
    CapabilityKind.SKILL.value: "skills",
    CapabilityKind.MCP.value: "mcp",
    CapabilityKind.SUBAGENT.value: "subagents",
}


def demand_for(support: ObservationSupport) -> ObservationDemand:
    """The observation demand that asks for exactly what ``support`` declares."""
    return ObservationDemand(
        capability_invocations=support.skills or support.mcp or support.subagents,
        todos=support.todos,
    )


def verify_observation_support(
    support: ObservationSupport, payloads: Iterable[StreamPayload]
) -> list[Violation]:
    """OBS-01 (upstream's rule): each fact is of a kind the transport's
    ObservationSupport declares.

    One violation per offending payload; a capability of an unknown kind is never
    supported. Declared kinds that never appear are fine, and so are declared facts the
    request did not demand (OBS-07 judges those, on request).
    """
    out: list[Violation] = []
    for i, kind, cap_kind in _facts(payloads):
        if kind == TODO_KIND:
            if not support.todos:
                out.append(Violation("OBS-01", f"payload {i} ({kind}): todos are not declared"))
            continue
        flag = _SUPPORT_FLAG.get(cap_kind) if isinstance(cap_kind, str) else None
        if flag is None or not getattr(support, flag):
            out.append(
                Violation(
                    "OBS-01", f"payload {i} ({kind}): {cap_kind!r} invocations are not declared"
                )
            )
    return out


def verify_observation_demand(
    demand: ObservationDemand, payloads: Iterable[StreamPayload]
) -> list[Violation]:
    """OBS-07 (an extension, stricter than upstream): each fact is of a kind the
    request's observation demand asks for. One violation per offending payload."""
    out: list[Violation] = []
    for i, kind, _ in _facts(payloads):
        if kind == TODO_KIND and not demand.todos:
            out.append(
                Violation(
                    "OBS-07",
                    f"payload {i} ({kind}): the request did not demand todos "
                    "(request.observation.todos=False)",
                )
            )
        elif kind == CAPABILITY_KIND and not demand.capability_invocations:
            out.append(
                Violation(
                    "OBS-07",
                    f"payload {i} ({kind}): the request did not demand capability "
                    "invocations (request.observation.capability_invocations=False)",
                )
            )
    return out


DEMAND_OFF: Final = (
    "facts beyond the request's observation demand are allowed, as upstream allows them; "
    "pass Options(strict_observation_demand=True) to hold runs to their demand"
)
"""Why OBS-07 is skipped unless it is asked for."""


def observation_verdicts(
    support: ObservationSupport,
    payloads: Sequence[StreamPayload],
    demand: ObservationDemand,
    *,
    strict: bool,
) -> tuple[list[Violation], tuple[str, ...]]:
    """OBS-01 over one run's stream, and OBS-07 when ``strict``: (violations, the
    clauses judged). A probe skips OBS-07 with :data:`DEMAND_OFF` when not ``strict``."""
    found = verify_observation_support(support, payloads)
    if not strict:
        return found, ("OBS-01",)
    return found + verify_observation_demand(demand, payloads), ("OBS-01", "OBS-07")


def _facts(payloads: Iterable[StreamPayload]) -> Iterable[tuple[int, str, object]]:
    """(index, kind, capability kind) of each observation fact (a capability payload
    without its fact is OBS-02's business and not yielded)."""
    for i, payload in enumerate(payloads):
        kind = getattr(payload, "kind", None)
        if kind == TODO_KIND:
            yield i, kind, None
        elif kind == CAPABILITY_KIND and payload.capability is not None:
            # getattr throughout: a fact built with model_construct may be anything.
            yield i, kind, getattr(getattr(payload.capability, "ref", None), "kind", "")
