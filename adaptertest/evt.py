"""EVT clauses: stream payload timing and fields.

:class:`StreamVerifier` checks a stream one payload at a time, so a sink can judge a run
while it is produced. It keeps only what is open plus the ids already seen, never a
payload. Per payload it runs the envelope rules (EVT-09, EVT-10, all kinds), the
observation rules (OBS-02..06 through :class:`adaptertest.obs.ObservationTracker`) and
the tool-coordinate rule EVT-14; unless ``facts_only`` it also runs the rich lifecycle
(EVT-01..08, EVT-11, EVT-13).

The hot path dispatches on ``kind`` through a dict of bound methods, reads each field
once and allocates nothing but the list it returns. The dispatch table is swapped
rather than tested: one table until the first payload (EVT-01), the normal table, and a
catch-all after the terminal (EVT-02).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Final

from adaptertest._violation import Violation
from adaptertest.obs import Fields, ObservationTracker, parent_problems
from driver.descriptor import StreamCapability
from driver.events import StreamKind, StreamPayload

__all__ = [
    "KNOWN_STREAM_KINDS",
    "StreamVerifier",
    "verify_observation_sequence",
    "verify_stream_capability",
    "verify_stream_sequence",
]

# Handlers get the payload's field dict (see adaptertest.obs.Fields for why).
_Handler = Callable[[int, Fields, list[Violation]], None]

RUN_STARTED: Final = StreamKind.RUN_STARTED.value
RUN_FINISHED: Final = StreamKind.RUN_FINISHED.value
RUN_ERROR: Final = StreamKind.RUN_ERROR.value
STEP_STARTED: Final = StreamKind.STEP_STARTED.value
STEP_FINISHED: Final = StreamKind.STEP_FINISHED.value
TEXT_START: Final = StreamKind.TEXT_START.value
TEXT_CONTENT: Final = StreamKind.TEXT_CONTENT.value
TEXT_END: Final = StreamKind.TEXT_END.value
TOOL_START: Final = StreamKind.TOOL_CALL_START.value
TOOL_ARGS: Final = StreamKind.TOOL_CALL_ARGS.value
TOOL_END: Final = StreamKind.TOOL_CALL_END.value
TOOL_RESULT: Final = StreamKind.TOOL_CALL_RESULT.value
REASONING_START: Final = StreamKind.REASONING_START.value
REASONING_CONTENT: Final = StreamKind.REASONING_CONTENT.value
REASONING_END: Final = StreamKind.REASONING_END.value
HITL_REQUESTED: Final = StreamKind.HITL_REQUESTED.value
HITL_RESOLVED: Final = StreamKind.HITL_RESOLVED.value
DROPPED: Final = StreamKind.DROPPED.value
CAPABILITY: Final = StreamKind.CAPABILITY_INVOCATION.value
TODO_UPDATED: Final = StreamKind.TODO_UPDATED.value

KNOWN_STREAM_KINDS: Final = frozenset(k.value for k in StreamKind)
"""The 20 normalized kinds; anything else is a vendor extension."""

# Closers may trail the terminal without an immediate EVT-02; finish() still requires
# the last normalized payload to be the terminal, which catches them.
_CLOSERS: Final = frozenset({TEXT_END, TOOL_END, REASONING_END})
_TERMINALS: Final = frozenset({RUN_FINISHED, RUN_ERROR})
_NO_HANDLERS: Final[dict[str, _Handler]] = {}


# Tool lifecycle states. A record can exist before its start: a result for an unknown
# call is remembered so that a second result for it is caught too (EVT-14).
_UNSTARTED: Final = 0
_OPEN: Final = 1
_STARTED: Final = 2  # started and not open: ended, or never opened (no id, facts-only)


class _Tool:
    """One (scope_id, tool_call_id): lifecycle state and the parents of its start."""

    __slots__ = ("full_args", "parent_call", "parent_scope", "result_seen", "state")

    def __init__(self, state: int, parent_scope: str, parent_call: str, full_args: bool) -> None:
        self.state = state
        self.parent_scope = parent_scope
        self.parent_call = parent_call
        self.full_args = full_args
        self.result_seen = False


class _Messages:
    """text.* or reasoning.* lifecycles keyed by message_id (EVT-03/04 or EVT-06)."""

    __slots__ = ("content_clause", "id_clause", "open", "seen")

    def __init__(self, id_clause: str, content_clause: str) -> None:
        self.id_clause = id_clause
        self.content_clause = content_clause
        self.open: dict[str, None] = {}  # insertion-ordered, so EVT-11 reports are stable
        self.seen: set[str] = set()

    def start(self, i: int, d: Fields, out: list[Violation]) -> None:
        mid = d["message_id"]
        if mid and mid not in self.seen:
            self.seen.add(mid)
            self.open[mid] = None
        elif not mid:
            out.append(Violation(self.id_clause, f"payload {i} ({d['kind']}): no message_id"))
        else:
            out.append(
                Violation(self.id_clause, f"payload {i} ({d['kind']}): message_id {mid!r} reopened")
            )

    def content(self, i: int, d: Fields, out: list[Violation]) -> None:
        mid = d["message_id"]
        if mid not in self.open:
            self._not_open(i, d["kind"], mid, out)
        if not d["delta"]:
            out.append(Violation(self.content_clause, f"payload {i} ({d['kind']}): empty delta"))

    def end(self, i: int, d: Fields, out: list[Violation]) -> None:
        mid = d["message_id"]
        if mid in self.open:
            del self.open[mid]
        else:
            self._not_open(i, d["kind"], mid, out)

    def _not_open(self, i: int, kind: str, mid: str, out: list[Violation]) -> None:
        what = f"message_id {mid!r} is not open" if mid else "no message_id"
        out.append(Violation(self.id_clause, f"payload {i} ({kind}): {what}"))


class StreamVerifier:
    """Incremental stream checker: ``feed`` each payload as emitted, then ``finish``.

    ``facts_only`` is for transports without a rich stream (drivers without
    StreamSupport, the structured-output probe): envelope, OBS-02..06 and EVT-14 only,
    with no run.started or terminal requirement.
    """

    __slots__ = (
        "_default",
        "_dispatch",
        "_facts_only",
        "_finished",
        "_index",
        "_normal",
        "_obs",
        "_open_tools",
        "_reasoning",
        "_started",
        "_steps",
        "_tail",
        "_terminals",
        "_text",
        "_tools",
    )

    def __init__(self, *, facts_only: bool = False) -> None:
        self._facts_only = facts_only
        self._index = 0
        self._finished = False
        self._obs = ObservationTracker()
        # scope_id -> tool_call_id -> _Tool; nested so lookups build no key tuple
        self._tools: dict[str, dict[str, _Tool]] = {}
        self._open_tools = 0
        self._text = _Messages("EVT-03", "EVT-04")
        self._reasoning = _Messages("EVT-06", "EVT-06")
        self._steps: dict[str, int] = {}  # name -> open count; dropped at zero
        self._started = 0
        self._terminals = 0
        self._tail: str | None = None  # last normalized non-terminal kind after a terminal
        obs = self._obs
        if facts_only:
            self._normal: dict[str, _Handler] = {
                TOOL_START: self._tool_start,
                TOOL_ARGS: self._tool_args,
                TOOL_END: self._tool_end,
                TOOL_RESULT: self._tool_result,
                CAPABILITY: obs.capability,
                TODO_UPDATED: obs.todo,
                RUN_FINISHED: self._facts_terminal,
                RUN_ERROR: self._facts_terminal,
            }
            self._dispatch = self._normal
            self._default: _Handler = self._ignore
            return
        self._normal = {
            RUN_STARTED: self._run_started,
            RUN_FINISHED: self._run_finished,
            RUN_ERROR: self._run_error,
            STEP_STARTED: self._step_started,
            STEP_FINISHED: self._step_finished,
            TEXT_START: self._text.start,
            TEXT_CONTENT: self._text.content,
            TEXT_END: self._text.end,
            TOOL_START: self._tool_start,
            TOOL_ARGS: self._tool_args,
            TOOL_END: self._tool_end,
            TOOL_RESULT: self._tool_result,
            REASONING_START: self._reasoning.start,
            REASONING_CONTENT: self._reasoning.content,
            REASONING_END: self._reasoning.end,
            HITL_REQUESTED: self._hitl_requested,
            HITL_RESOLVED: self._hitl_resolved,
            DROPPED: self._ignore,
            CAPABILITY: obs.capability,
            TODO_UPDATED: obs.todo,
        }
        self._dispatch = _NO_HANDLERS
        self._default = self._first

    # --- public ------------------------------------------------------------------------

    def feed(self, payload: StreamPayload) -> list[Violation]:
        """Check one payload; return the violations it causes (empty = fine so far)."""
        out: list[Violation] = []
        self._check(payload, out)
        return out

    def feed_many(self, payloads: Iterable[StreamPayload]) -> list[Violation]:
        """Check payloads in turn; return all their violations, in order."""
        out: list[Violation] = []
        check = self._check
        for payload in payloads:
            check(payload, out)
        return out

    def _check(self, payload: StreamPayload, out: list[Violation]) -> None:
        i = self._index
        self._index = i + 1
        try:
            d = payload.__dict__
            kind = d["kind"]
            if not isinstance(kind, str):  # None or a number would pass as a vendor kind
                raise TypeError("kind")
            if d["role"] or d["sequence"] or d["seq"] or d["timestamp"] is not None:
                self._envelope(i, kind, d, out)
            if d["capability"] is not None or d["todo"] is not None:
                self._obs.misplaced(i, kind, d, out)
            # Handlers swap the dispatch table (first payload, terminal): read it anew.
            handler = self._dispatch.get(kind)
            if handler is None:
                handler = self._default
            handler(i, d, out)
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            # Only a payload that bypassed validation (model_construct, assignment) gets
            # here: judge it as malformed instead of crashing the run.
            out.append(_malformed(i, payload, exc))

    def finish(self) -> list[Violation]:
        """End-of-stream checks: run.started and terminal counts, invocations left open."""
        if self._finished:
            raise RuntimeError("StreamVerifier.finish() called twice")
        self._finished = True
        self._dispatch = _NO_HANDLERS
        self._default = self._after_finish
        out: list[Violation] = []
        if not self._facts_only:
            if self._started != 1:
                out.append(
                    Violation("EVT-01", f"{self._started} run.started payloads, want exactly one")
                )
            if self._terminals != 1:
                out.append(
                    Violation(
                        "EVT-02",
                        f"{self._terminals} terminal payloads (run.finished/run.error), "
                        "want exactly one",
                    )
                )
            elif self._tail is not None:
                out.append(
                    Violation(
                        "EVT-02",
                        f"the last normalized payload is {self._tail}, not the terminal",
                    )
                )
        self._obs.finish(out)
        return out

    @property
    def payloads_seen(self) -> int:
        """How many payloads were fed."""
        return self._index

    @property
    def open_count(self) -> int:
        """Lifecycles open right now (text, reasoning, tools, step names, invocations)."""
        return (
            len(self._text.open)
            + len(self._reasoning.open)
            + self._open_tools
            + len(self._steps)
            + self._obs.open_invocations
        )

    @property
    def tracked_count(self) -> int:
        """Ids remembered to catch reuse: message ids, tool keys, invocations, todo scopes."""
        return (
            len(self._text.seen)
            + len(self._reasoning.seen)
            + sum(len(ids) for ids in self._tools.values())
            + self._obs.tracked_invocations
            + self._obs.tracked_todo_scopes
        )

    # --- envelope (every kind, both modes) ---------------------------------------------

    def _envelope(self, i: int, kind: str, d: Fields, out: list[Violation]) -> None:
        role = d["role"]
        if role:
            out.append(
                Violation("EVT-09", f"payload {i} ({kind}): role is {str(role)!r}, not unset")
            )
        set_fields = [
            f"{name}={value!r}"
            for name, value in (
                ("sequence", d["sequence"]),
                ("seq", d["seq"]),
                ("timestamp", d["timestamp"]),
            )
            if value
        ]
        if set_fields:
            out.append(
                Violation("EVT-10", f"payload {i} ({kind}): driver set {', '.join(set_fields)}")
            )

    # --- dispatch states ---------------------------------------------------------------

    def _after_finish(self, i: int, d: Fields, out: list[Violation]) -> None:
        raise RuntimeError("StreamVerifier.feed() after finish()")

    def _ignore(self, i: int, d: Fields, out: list[Violation]) -> None:
        """Vendor kinds and stream.dropped before the terminal: nothing to check."""

    def _first(self, i: int, d: Fields, out: list[Violation]) -> None:
        kind = d["kind"]
        if kind != RUN_STARTED:
            out.append(
                Violation("EVT-01", f"payload {i} ({kind}): the first payload is not run.started")
            )
        self._dispatch = self._normal
        self._default = self._ignore
        handler = self._normal.get(kind)
        if handler is not None:
            handler(i, d, out)

    def _late(self, i: int, d: Fields, out: list[Violation]) -> None:
        """Everything after the first terminal."""
        kind = d["kind"]
        if kind not in _CLOSERS:
            out.append(Violation("EVT-02", f"payload {i} ({kind}): after the terminal"))
        handler = self._normal.get(kind)
        if handler is None:
            return
        if kind != DROPPED and kind not in _TERMINALS:
            self._tail = kind
        handler(i, d, out)

    # --- run frames --------------------------------------------------------------------

    def _run_frame_ids(self, i: int, d: Fields, out: list[Violation]) -> None:
        mid, tid = d["message_id"], d["tool_call_id"]
        if mid or tid:
            out.append(
                Violation(
                    "EVT-13",
                    f"payload {i} ({d['kind']}): message_id={mid!r} tool_call_id={tid!r}, "
                    "want both empty",
                )
            )

    def _run_started(self, i: int, d: Fields, out: list[Violation]) -> None:
        self._started += 1
        if self._started > 1:
            out.append(Violation("EVT-01", f"payload {i} ({d['kind']}): run.started again"))
        self._run_frame_ids(i, d, out)

    def _run_finished(self, i: int, d: Fields, out: list[Violation]) -> None:
        self._terminal(i, d, out)

    def _run_error(self, i: int, d: Fields, out: list[Violation]) -> None:
        if d["error"] is None:
            out.append(Violation("EVT-02", f"payload {i} ({d['kind']}): no error"))
        self._terminal(i, d, out)

    def _terminal(self, i: int, d: Fields, out: list[Violation]) -> None:
        kind = d["kind"]
        self._terminals += 1
        self._run_frame_ids(i, d, out)
        where = f"payload {i} ({kind})"
        for mid in self._text.open:
            out.append(Violation("EVT-11", f"{where}: text {mid!r} is still open"))
        for mid in self._reasoning.open:
            out.append(Violation("EVT-11", f"{where}: reasoning {mid!r} is still open"))
        if self._open_tools:
            for scope, ids in self._tools.items():
                for tid, tool in ids.items():
                    if tool.state == _OPEN:
                        out.append(
                            Violation(
                                "EVT-11",
                                f"{where}: tool call {tid!r} in scope {scope!r} is still open",
                            )
                        )
        for name, count in self._steps.items():
            out.append(Violation("EVT-11", f"{where}: step {name!r} is still open ({count}x)"))
        self._obs.at_terminal(i, kind, out)
        self._dispatch = _NO_HANDLERS
        self._default = self._late

    def _facts_terminal(self, i: int, d: Fields, out: list[Violation]) -> None:
        self._obs.at_terminal(i, d["kind"], out)

    # --- steps and HITL ----------------------------------------------------------------

    def _step_started(self, i: int, d: Fields, out: list[Violation]) -> None:
        name = d["name"]
        if name:
            steps = self._steps
            steps[name] = steps.get(name, 0) + 1
        else:
            out.append(Violation("EVT-07", f"payload {i} ({d['kind']}): no name"))

    def _step_finished(self, i: int, d: Fields, out: list[Violation]) -> None:
        name = d["name"]
        count = self._steps.get(name, 0)
        if count > 1:
            self._steps[name] = count - 1
        elif count == 1:
            del self._steps[name]
        elif name:
            out.append(Violation("EVT-07", f"payload {i} ({d['kind']}): step {name!r} is not open"))
        else:
            out.append(Violation("EVT-07", f"payload {i} ({d['kind']}): no name"))

    def _hitl_requested(self, i: int, d: Fields, out: list[Violation]) -> None:
        if d["hitl_requested"] is None:
            out.append(Violation("EVT-08", f"payload {i} ({d['kind']}): no hitl_requested"))

    def _hitl_resolved(self, i: int, d: Fields, out: list[Violation]) -> None:
        if d["hitl_resolved"] is None:
            out.append(Violation("EVT-08", f"payload {i} ({d['kind']}): no hitl_resolved"))

    # --- tools: EVT-05 (rich only) and EVT-14 (both modes) ------------------------------
    # Lookups are inlined: a helper call per payload costs more than the check itself.

    def _tool_start(self, i: int, d: Fields, out: list[Violation]) -> None:
        tid, scope = d["tool_call_id"], d["scope_id"]
        ps, pc = d["parent_scope_id"], d["parent_tool_call_id"]
        if scope or ps or pc:
            problems = parent_problems(scope, ps, pc, tid)
            if problems:
                out.append(Violation("EVT-14", f"payload {i} ({d['kind']}): {'; '.join(problems)}"))
        full_args = bool(d["args"])
        rich = not self._facts_only
        opens = rich and bool(tid)
        if rich and not (tid and d["name"]):
            out.append(
                Violation(
                    "EVT-05",
                    f"payload {i} ({d['kind']}): tool_call_id={tid!r} name={d['name']!r}, "
                    "both are required",
                )
            )
        ids = self._tools.get(scope)
        if ids is None:
            ids = self._tools[scope] = {}
        tool = ids.get(tid)
        if tool is None:
            ids[tid] = _Tool(_OPEN if opens else _STARTED, ps, pc, full_args)
        else:
            if opens and tool.state != _UNSTARTED:
                out.append(
                    Violation(
                        "EVT-05",
                        f"payload {i} ({d['kind']}): tool call {tid!r} in scope {scope!r} reopened",
                    )
                )
                opens = False
            if tool.state == _UNSTARTED:
                tool.state = _OPEN if opens else _STARTED
            # the newest start defines the parents later frames must repeat
            tool.parent_scope, tool.parent_call, tool.full_args = ps, pc, full_args
        if opens:
            self._open_tools += 1

    def _tool_args(self, i: int, d: Fields, out: list[Violation]) -> None:
        ids = self._tools.get(d["scope_id"])
        tool = None if ids is None else ids.get(d["tool_call_id"])
        if tool is None or tool.state == _UNSTARTED:
            if not self._facts_only:
                self._tool_not_open(i, d, out)
        else:
            if (
                d["parent_scope_id"] != tool.parent_scope
                or d["parent_tool_call_id"] != tool.parent_call
            ):
                self._parents_moved(i, d, tool, out)
            if tool.full_args:
                out.append(
                    Violation(
                        "EVT-14",
                        f"payload {i} ({d['kind']}): tool call {d['tool_call_id']!r} already "
                        "carried complete args at its start",
                    )
                )
            if tool.state != _OPEN and not self._facts_only:
                self._tool_not_open(i, d, out)
        if not d["delta"] and not self._facts_only:
            out.append(Violation("EVT-05", f"payload {i} ({d['kind']}): empty delta"))

    def _tool_end(self, i: int, d: Fields, out: list[Violation]) -> None:
        ids = self._tools.get(d["scope_id"])
        tool = None if ids is None else ids.get(d["tool_call_id"])
        if tool is None or tool.state == _UNSTARTED:
            if not self._facts_only:
                self._tool_not_open(i, d, out)
            return
        if (
            d["parent_scope_id"] != tool.parent_scope
            or d["parent_tool_call_id"] != tool.parent_call
        ):
            self._parents_moved(i, d, tool, out)
        if tool.state == _OPEN:
            tool.state = _STARTED
            self._open_tools -= 1
        elif not self._facts_only:
            self._tool_not_open(i, d, out)

    def _tool_result(self, i: int, d: Fields, out: list[Violation]) -> None:
        tid, scope = d["tool_call_id"], d["scope_id"]
        ids = self._tools.get(scope)
        if ids is None:
            ids = self._tools[scope] = {}
        tool = ids.get(tid)
        if tool is None:
            # remembered only so a second result for the same unknown call is caught
            tool = ids[tid] = _Tool(_UNSTARTED, "", "", False)
        elif tool.state != _UNSTARTED and (
            d["parent_scope_id"] != tool.parent_scope
            or d["parent_tool_call_id"] != tool.parent_call
        ):
            self._parents_moved(i, d, tool, out)
        if tool.result_seen:
            out.append(
                Violation(
                    "EVT-14",
                    f"payload {i} ({d['kind']}): second result for tool call {tid!r} in scope "
                    f"{scope!r}",
                )
            )
        tool.result_seen = True
        if self._facts_only:
            return
        if not tid:
            out.append(Violation("EVT-05", f"payload {i} ({d['kind']}): no tool_call_id"))
        elif tool.state == _UNSTARTED:
            out.append(
                Violation(
                    "EVT-05",
                    f"payload {i} ({d['kind']}): tool call {tid!r} in scope {scope!r} was never "
                    "started",
                )
            )

    def _parents_moved(self, i: int, d: Fields, tool: _Tool, out: list[Violation]) -> None:
        out.append(
            Violation(
                "EVT-14",
                f"payload {i} ({d['kind']}): tool call {d['tool_call_id']!r} has parents "
                f"({d['parent_scope_id']!r}, {d['parent_tool_call_id']!r}), its start had "
                f"({tool.parent_scope!r}, {tool.parent_call!r})",
            )
        )

    def _tool_not_open(self, i: int, d: Fields, out: list[Violation]) -> None:
        tid = d["tool_call_id"]
        what = (
            f"tool call {tid!r} in scope {d['scope_id']!r} is not open"
            if tid
            else "no tool_call_id"
        )
        out.append(Violation("EVT-05", f"payload {i} ({d['kind']}): {what}"))


def verify_stream_sequence(payloads: Iterable[StreamPayload]) -> list[Violation]:
    """Rich stream checks over a whole stream (EVT-01..11, EVT-13, EVT-14, OBS-02..06)."""
    verifier = StreamVerifier()
    out = verifier.feed_many(payloads)
    out += verifier.finish()
    return out


_REASONING_KINDS: Final = frozenset({REASONING_START, REASONING_CONTENT, REASONING_END})
_HITL_KINDS: Final = frozenset({HITL_REQUESTED, HITL_RESOLVED})


def verify_stream_capability(
    cap: StreamCapability, payloads: Iterable[StreamPayload]
) -> list[Violation]:
    """EVT-12: kinds a false StreamCapability flag rules out never appear.

    Only the first offending payload of each category is reported; true flags promise
    nothing, so their kinds may be absent.
    """
    out: list[Violation] = []
    args_ok, reasoning_ok, hitl_ok = cap.tool_call_args, cap.reasoning, cap.hitl
    for i, payload in enumerate(payloads):
        kind = getattr(payload, "kind", None)
        if not isinstance(kind, str):
            continue  # malformed: verify_stream_sequence reports it
        if kind == TOOL_ARGS and not args_ok:
            args_ok = True
            flag = "tool_call_args"
        elif kind in _REASONING_KINDS and not reasoning_ok:
            reasoning_ok = True
            flag = "reasoning"
        elif kind in _HITL_KINDS and not hitl_ok:
            hitl_ok = True
            flag = "hitl"
        else:
            continue
        out.append(
            Violation("EVT-12", f"payload {i} ({kind}): stream_capability().{flag} is false")
        )
        if args_ok and reasoning_ok and hitl_ok:
            break
    return out


# The clause a malformed payload breaks, by kind prefix: the rule its fields serve.
_MALFORMED_CLAUSE: Final = (
    ("text.", "EVT-03"),
    ("reasoning.", "EVT-06"),
    ("tool_call.", "EVT-05"),
    ("step.", "EVT-07"),
    ("hitl.", "EVT-08"),
    ("run.started", "EVT-01"),
    ("run.", "EVT-02"),
    ("capability.invocation", "OBS-03"),
    ("todo.updated", "OBS-05"),
)


def _malformed(index: int, payload: object, exc: Exception) -> Violation:
    """A payload whose fields have the wrong types, as the violation of its kind's rule."""
    kind = getattr(payload, "__dict__", {}).get("kind")
    clause = "EVT-01"  # no usable kind: the stream's order cannot be judged
    if isinstance(kind, str):
        clause = next((c for prefix, c in _MALFORMED_CLAUSE if kind.startswith(prefix)), "EVT-02")
    shown = repr(kind) if isinstance(kind, str) else type(kind).__name__
    return Violation(
        clause,
        f"payload {index} ({shown}) is malformed: {type(exc).__name__} while reading its fields "
        "(was it built with model_construct or changed after validation?)",
    )


def verify_observation_sequence(payloads: Iterable[StreamPayload]) -> list[Violation]:
    """Facts-only checks for transports without a rich stream.

    Envelope (EVT-09, EVT-10), OBS-02..06 and EVT-14, with no run.started or terminal
    requirement; open invocations are still flagged when the run returns.
    """
    verifier = StreamVerifier(facts_only=True)
    out: list[Violation] = []
    for payload in payloads:
        out += verifier.feed(payload)
    out += verifier.finish()
    return out
