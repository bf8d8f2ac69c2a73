"""SES family: the session codec maps state to params and back without loss.

The ``session_codec`` probe first follows upstream on the seed state
(``Options.session_state``, else :data:`~adaptertest.options.DEFAULT_SESSION_STATE`),
one bounded call per codec method. It then checks the laws of SES-03/04/05/06/08
again as one hypothesis property over generated states (no data at all, only the
required keys, unicode, empty strings, ``=`` and newlines in keys and values, many
keys). SES-05 also asks for the same guard when the values are inserted in another
order: equal dicts are equal whatever their order. The property runs as a single
bounded call with explicit settings: the same examples on every run, no example
database, and the user's hypothesis profile untouched.

A codec that is missing, raises, or is None although resume is declared is an SES-01
fatal here; upstream reports it as CAP-01, which the capability probe also judges.
SES-09 is a live clause and lives with the live probe.
"""

from __future__ import annotations

import contextlib
import inspect
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, Protocol, TypeVar

from adaptertest._calls import describe_error, describe_hang
from adaptertest._fresh import FreshResult, for_suite
from adaptertest._probe import ProbeContext
from adaptertest._property import falsified_by_clause, falsified_for, property_settings
from adaptertest.options import DEFAULT_SESSION_STATE
from driver.protocols import SessionCodec, SessionCodecProvider
from driver.run import SessionState
from driver.session import SessionParams

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

__all__ = ["CODEC_CLAUSES", "MUTATION_SUFFIX", "PROPERTY_CLAUSES", "probe_session_codec"]

MUTATION_SUFFIX = "-adaptertest-mutated"
"""Appended to a guard key's value (SES-06); an absent key becomes just this."""

CODEC_CLAUSES = ("SES-01", "SES-02", "SES-03", "SES-04", "SES-05", "SES-06", "SES-07", "SES-08")
"""The clauses this probe judges (SES-09 is live)."""

PROPERTY_CLAUSES = ("SES-03", "SES-04", "SES-05", "SES-06", "SES-08")
"""The clauses also checked as hypothesis properties over generated states."""

_CODEC_METHODS = ("name", "to_params", "from_params", "guard_fingerprint")
_REPR_LIMIT = 300

# Strings that break codecs which join keys and values into text.
_TRICKY = (
    "",
    " ",
    "=",
    "==",
    "a=b",
    "=a",
    "\n",
    "a\nb",
    "\r\n",
    "k=v\nk2=v2",
    "\t",
    "\x00",
    ";",
    "&",
    "é",
    "ß",
    "ключ",
    "中文",
    "🙂",
    "\u200b",
    "\ufeff",
)
_SEPARATORS = "=\n\r\t ;:,&ab"

T = TypeVar("T")


# -- wording -------------------------------------------------------------------------------


def _short(value: object) -> str:
    """``repr(value)``, cut to a readable length."""
    text = repr(value)
    if len(text) <= _REPR_LIMIT:
        return text
    return f"{text[:_REPR_LIMIT]}... ({len(text) - _REPR_LIMIT} more chars)"


def _keys(keys: Sequence[str]) -> str:
    shown = ", ".join(_short(k) for k in keys[:5])
    return shown + (f" and {len(keys) - 5} more" if len(keys) > 5 else "")


def _type_problem(label: str, value: object, kind: type) -> str | None:
    """Text for a return value of the wrong type, or None when it is a ``kind``."""
    if isinstance(value, kind):
        return None
    awaitable = inspect.isawaitable(value)
    hint = " (an awaitable: SessionCodec methods are plain functions)" if awaitable else ""
    package = kind.__module__.split(".")[0]
    expected = kind.__qualname__ if package == "builtins" else f"{package}.{kind.__qualname__}"
    return f"{label} returned {type(value).__qualname__}, expected {expected}{hint}"


def _params_diff(expected: SessionParams, got: SessionParams) -> str:
    """Which parts of two params differ, with the values involved."""
    parts: list[str] = []
    if type(got) is not type(expected):
        parts.append(f"type {type(expected).__qualname__} became {type(got).__qualname__}")
    for name in ("resume_id", "display_id"):
        before, after = getattr(expected, name), getattr(got, name)
        if before != after:
            parts.append(f"{name} {_short(before)} became {_short(after)}")
    lost = [k for k in expected.values if k not in got.values]
    added = [k for k in got.values if k not in expected.values]
    changed = [
        k for k in expected.values if k in got.values and expected.values[k] != got.values[k]
    ]
    if lost:
        parts.append(f"values lost key(s) {_keys(lost)}")
    if added:
        parts.append(f"values gained key(s) {_keys(added)}")
    parts.extend(
        f"values[{_short(k)}] {_short(expected.values[k])} became {_short(got.values[k])}"
        for k in changed[:3]
    )
    return "; ".join(parts) or "the two compare unequal"


# -- the laws (pure) -----------------------------------------------------------------------


def kept_state_problems(state: SessionState, params: SessionParams, label: str) -> list[str]:
    """SES-03: ``params`` keeps resume_id and every data entry, and names a display id."""
    out: list[str] = []
    if params.resume_id != state.resume_id:
        out.append(
            f"{label} changed resume_id {_short(state.resume_id)} to {_short(params.resume_id)}"
        )
    if state.resume_id and not params.display_id:
        out.append(f"{label} left display_id empty although resume_id is {_short(state.resume_id)}")
    lost = [k for k in state.data if k not in params.values]
    if lost:
        out.append(f"{label} dropped data key(s) {_keys(lost)} from values")
    out.extend(
        f"{label} changed values[{_short(k)}] from {_short(v)} to {_short(params.values[k])}"
        for k, v in state.data.items()
        if k in params.values and params.values[k] != v
    )
    return out


def round_trip_problems(params: SessionParams, again: SessionParams) -> list[str]:
    """SES-04: ``to_params(from_params(params))`` equals ``params``."""
    if again == params:
        return []
    return [f"to_params(from_params(params)) differs from params: {_params_diff(params, again)}"]


def session_key_problems(
    keys: Iterable[str], state: SessionState, params: SessionParams, restored: SessionState
) -> list[str]:
    """SES-08: each key keeps its state value in ``params.values`` and ``restored.data``.

    Keys the state does not hold are not judged: a state without data keeps nothing.
    """
    out: list[str] = []
    for key in keys:
        if key not in state.data:
            continue
        want = state.data[key]
        for where, mapping in (("params.values", params.values), ("restored.data", restored.data)):
            if key not in mapping:
                out.append(f"session key {_short(key)} is missing from {where}")
            elif mapping[key] != want:
                out.append(
                    f"{where}[{_short(key)}] is {_short(mapping[key])}, expected {_short(want)}"
                )
    return out


def reordered(params: SessionParams) -> SessionParams:
    """A copy of ``params`` with its values inserted in reverse order: equal to ``params``
    (dict equality ignores order), so its guard must be equal too (SES-05)."""
    values = dict(reversed(params.values.items()))
    return params.model_copy(update={"values": values}, deep=True)


def mutated(params: SessionParams, key: str) -> SessionParams:
    """A copy of ``params`` whose ``key`` value has :data:`MUTATION_SUFFIX` appended (SES-06)."""
    values = dict(params.values)
    values[key] = values.get(key, "") + MUTATION_SUFFIX
    return params.model_copy(update={"values": values}, deep=True)


# -- running the laws, on the seed or inside a property ------------------------------------


class _Checker(Protocol):
    """How the laws call the codec and record what they find."""

    def call(
        self, clause: str, label: str, fn: Callable[[Any], Any], arg: object, kind: type[T]
    ) -> T:
        """``fn(arg)``, which must return a ``kind``."""
        ...

    def maybe(
        self, clause: str, label: str, fn: Callable[[Any], Any], arg: object, kind: type[T]
    ) -> T | None:
        """``fn(arg)``, which must return a ``kind`` or None."""
        ...

    def problems(self, clause: str, found: list[str]) -> None:
        """Record what one law found (empty: the law holds)."""
        ...

    def stop(self, clause: str, message: str) -> NoReturn:
        """Give up on this state: later laws depend on what just failed."""
        ...


def _check_laws(
    codec: SessionCodec,
    state: SessionState,
    what: str,
    checker: _Checker,
    *,
    session_keys: Sequence[str],
    guard_keys: Sequence[str],
) -> None:
    """SES-03, -04, -08, -05, -06 on one state; ``what`` names it in messages."""
    params = checker.call(
        "SES-03",
        f"to_params({what})",
        codec.to_params,
        state.model_copy(deep=True),
        SessionParams,
    )
    checker.problems("SES-03", kept_state_problems(state, params, f"to_params({what})"))

    restored = checker.maybe(
        "SES-04",
        "from_params(params)",
        codec.from_params,
        params.model_copy(deep=True),
        SessionState,
    )
    if restored is None:
        checker.stop("SES-04", f"from_params(params) returned None for params={_short(params)}")
    again = checker.call(
        "SES-04",
        "to_params(from_params(params))",
        codec.to_params,
        restored.model_copy(deep=True),
        SessionParams,
    )
    checker.problems("SES-04", round_trip_problems(params, again))
    if session_keys:
        checker.problems("SES-08", session_key_problems(session_keys, state, params, restored))

    # Keep every argument alive, so a guard built on id() cannot pass by address reuse.
    first_arg = params.model_copy(deep=True)
    guard = checker.call(
        "SES-05", "guard_fingerprint(params)", codec.guard_fingerprint, first_arg, str
    )
    found: list[str] = []
    if not guard:
        why = " (params.values is empty)" if not params.values else ""
        found.append(f"guard_fingerprint(params) returned an empty string{why}")
    second_arg = params.model_copy(deep=True)
    repeat = checker.call(
        "SES-05",
        "guard_fingerprint(params) (second call)",
        codec.guard_fingerprint,
        second_arg,
        str,
    )
    if repeat != guard:
        found.append(
            f"guard_fingerprint(params) returned {_short(guard)}, then {_short(repeat)} for the "
            "same params: a guard must be deterministic (no random values, clock, id() or "
            "object addresses)"
        )
    else:  # deterministic: then equal params in any shape must give the same guard
        fresh = checker.call(
            "SES-05",
            f"to_params(fresh copy of {what})",
            codec.to_params,
            state.model_copy(deep=True),
            SessionParams,
        )
        fresh_guard = checker.call(
            "SES-05",
            f"guard_fingerprint(to_params(fresh copy of {what}))",
            codec.guard_fingerprint,
            fresh,
            str,
        )
        if fresh_guard != guard:
            found.append(
                f"guard_fingerprint differs for to_params of a fresh copy of the {what}: "
                f"{_short(guard)} vs {_short(fresh_guard)}"
            )
        if len(params.values) > 1:
            other_order = reordered(params)
            other_guard = checker.call(
                "SES-05",
                "guard_fingerprint(params with values inserted in reverse order)",
                codec.guard_fingerprint,
                other_order,
                str,
            )
            if other_guard != guard:
                found.append(
                    "guard_fingerprint differs for equal params whose values were inserted in "
                    f"another order (keys {_keys(list(params.values))} vs "
                    f"{_keys(list(other_order.values))}): {_short(guard)} vs "
                    f"{_short(other_guard)}; a guard must not depend on dict insertion order "
                    "(sort the keys)"
                )
    checker.problems("SES-05", found)

    if guard_keys:
        found = []
        changed_args: list[SessionParams] = []
        for key in guard_keys:
            changed_args.append(mutated(params, key))
            label = f"guard_fingerprint(params with {_short(key)} mutated)"
            moved = checker.call("SES-06", label, codec.guard_fingerprint, changed_args[-1], str)
            if moved == guard:
                found.append(
                    f"guard_fingerprint did not change when values[{_short(key)}] became "
                    f"{_short(changed_args[-1].values[key])} (still {_short(guard)})"
                )
        checker.problems("SES-06", found)


def _plain(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap ``fn`` so the call runner never awaits it: an ``async def`` codec method
    then shows up as a returned coroutine, a wrong type."""

    def call(*args: Any) -> Any:
        return fn(*args)

    return call


class _SeedChecker:
    """Bounded calls through the probe context; violations are recorded one by one."""

    def __init__(self, ctx: ProbeContext) -> None:
        self.ctx = ctx

    def call(
        self, clause: str, label: str, fn: Callable[[Any], Any], arg: object, kind: type[T]
    ) -> T:
        value = self.maybe(clause, label, fn, arg, kind)
        if value is None:
            self.ctx.fatal(clause, _type_problem(label, value, kind) or f"{label} returned None")
        return value

    def maybe(
        self, clause: str, label: str, fn: Callable[[Any], Any], arg: object, kind: type[T]
    ) -> T | None:
        value: object = self.ctx.call(clause, label, _plain(fn), arg, awaitable=False)
        if value is None or isinstance(value, kind):
            return value
        self.ctx.fatal(clause, _type_problem(label, value, kind) or label)

    def problems(self, clause: str, found: list[str]) -> None:
        self.ctx.judge(clause)
        for message in found:
            self.ctx.fail(clause, message)

    def stop(self, clause: str, message: str) -> NoReturn:
        self.ctx.fatal(clause, message)


_FALSIFIED = {clause: falsified_for(clause) for clause in PROPERTY_CLAUSES}


class _Stopped(Exception):
    """Ends an abandoned property run early (after the probe gave up waiting)."""


class _Progress:
    """Where the property is, shared with the probe so a hang names its clause."""

    def __init__(self) -> None:
        self.clause = "SES-03"
        self.label = "to_params(state)"
        self.example = ""
        self.stop = threading.Event()


class _PropertyChecker:
    """Direct codec calls inside the property; the first broken law ends the example."""

    def __init__(self, progress: _Progress) -> None:
        self.progress = progress

    def call(
        self, clause: str, label: str, fn: Callable[[Any], Any], arg: object, kind: type[T]
    ) -> T:
        value = self.maybe(clause, label, fn, arg, kind)
        if value is None:
            self.stop(clause, _type_problem(label, value, kind) or f"{label} returned None")
        return value

    def maybe(
        self, clause: str, label: str, fn: Callable[[Any], Any], arg: object, kind: type[T]
    ) -> T | None:
        self.progress.clause, self.progress.label = clause, label
        error: BaseException | None = None
        value: object = None
        try:
            value = fn(arg)
        except BaseException as exc:  # noqa: BLE001 - driver errors are data here
            error = exc
        # Raised outside the handler, so the failure's identity is the clause alone.
        if error is not None:
            self.stop(clause, describe_error(label, error))
        if value is None or isinstance(value, kind):
            return value
        if inspect.isawaitable(value):
            _close(value)
        self.stop(clause, _type_problem(label, value, kind) or label)

    def problems(self, clause: str, found: list[str]) -> None:
        if found:
            more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
            self.stop(clause, found[0] + more)

    def stop(self, clause: str, message: str) -> NoReturn:
        raise _FALSIFIED[clause](message, self.progress.example)


def _close(obj: object) -> None:
    close = getattr(obj, "close", None)
    if callable(close):
        with contextlib.suppress(Exception):  # best effort: silence "never awaited"
            close()


def _states(required_keys: Sequence[str]) -> SearchStrategy[SessionState]:
    """Session states that stress a codec: with no data, with only ``required_keys``, or
    with ``required_keys`` among many others."""
    from hypothesis import strategies as st

    text = st.one_of(
        st.sampled_from(_TRICKY),
        st.text(max_size=16),
        st.text(alphabet=_SEPARATORS, max_size=8),
    )
    resume_id = st.one_of(
        st.sampled_from([t for t in _TRICKY if t.strip()]),
        st.text(min_size=1, max_size=24),
    ).filter(lambda s: bool(s.strip()))
    extra = st.one_of(
        st.dictionaries(text, text, max_size=6),
        st.dictionaries(text, text, min_size=20, max_size=40),
    )
    fixed = st.fixed_dictionaries(dict.fromkeys(required_keys, text))
    data = st.one_of(
        # No data at all, then only the required keys: a guard or a round trip must
        # not lean on values being there.
        st.builds(dict),
        fixed,
        st.builds(lambda more, kept: {**more, **kept}, extra, fixed),
    )
    return st.builds(SessionState, resume_id=resume_id, display_id=text, data=data)


def _check_generated(
    ctx: ProbeContext,
    codec: SessionCodec,
    seed: SessionState,
    *,
    session_keys: Sequence[str],
    guard_keys: Sequence[str],
) -> None:
    """Run the laws as one hypothesis property, bounded by the probe timeout."""
    from hypothesis import given

    progress = _Progress()
    checker = _PropertyChecker(progress)
    required = tuple(dict.fromkeys([*seed.data, *session_keys, *guard_keys]))

    # Built fresh per call, so two drivers never share a @given function.
    @property_settings(ctx.options.max_examples)
    @given(state=_states(required))
    def codec_laws(state: SessionState) -> None:
        if progress.stop.is_set():
            raise _Stopped
        progress.example = _short(state)
        _check_laws(
            codec,
            state,
            "state",
            checker,
            session_keys=session_keys,
            guard_keys=guard_keys,
        )

    timeout = ctx.options.probe_timeout
    outcome = ctx.attempt(codec_laws, timeout=timeout, awaitable=False)
    if outcome.timed_out:
        progress.stop.set()
        how = " and did not respond; it was abandoned" if outcome.blocked else ""
        ctx.fatal(
            progress.clause,
            f"on generated states (hypothesis): the property did not finish within "
            f"{timeout:g} s{how}; it was waiting on {progress.label}; state={progress.example}",
        )
    if outcome.error is None:
        return
    found, other = falsified_by_clause(outcome.error)
    for clause, falsified in found.items():
        if clause not in ctx.record.violations:  # the seed already showed this one
            ctx.fail(
                clause,
                f"on a generated state (hypothesis, shrunk): {falsified.message}; "
                f"state={falsified.example}",
            )
    if other and not found:
        detail = describe_error("the hypothesis property", other[0])
        checked = ["SES-03", "SES-04", "SES-05"]
        checked += ["SES-06"] if guard_keys else []
        checked += ["SES-08"] if session_keys else []
        for clause in checked:
            ctx.fail(
                clause, f"generated states could not be checked: {detail} (please report this)"
            )


# -- the probe -----------------------------------------------------------------------------


def _obtain_codec(ctx: ProbeContext) -> SessionCodec | None:
    """The driver's codec, None to skip, or an SES-01 fatal."""
    declared = ctx.descriptor.sessions.supports_resume
    if not ctx.implements(SessionCodecProvider):
        if not declared:
            ctx.skip(CODEC_CLAUSES, "driver exposes no session codec (session_codec)")
            return None
        ctx.fatal(
            "SES-01",
            "the descriptor declares sessions.supports_resume but the driver has no callable "
            "session_codec() method, so there is no codec to check (CAP-01 judges the declaration)",
        )
    provider = ctx.method("session_codec")
    assert provider is not None  # implements() just said so
    outcome = ctx.attempt(_plain(provider), awaitable=False)
    timeout = ctx.options.probe_timeout
    if outcome.timed_out:
        ctx.fatal(
            "SES-01", f"{describe_hang('session_codec()', outcome, timeout)} (see also CAP-01)"
        )
    if outcome.error is not None:
        ctx.fatal(
            "SES-01",
            f"{describe_error('session_codec()', outcome.error)}, so there is no codec to check "
            "(see also CAP-01)",
        )
    codec: object = outcome.value
    if codec is None:
        if not declared:
            ctx.skip(
                CODEC_CLAUSES,
                "driver exposes no session codec (session_codec() returned None and "
                "sessions.supports_resume is not declared)",
            )
            return None
        ctx.fatal(
            "SES-01",
            "session_codec() returned None although the descriptor declares "
            "sessions.supports_resume, so there is no codec to check (CAP-01 judges the "
            "declaration)",
        )
    if inspect.isawaitable(codec) or not ctx.implements(SessionCodec, codec):
        missing = [m for m in _CODEC_METHODS if ctx.method(m, codec) is None]
        what = (
            "an awaitable (session_codec is a plain method)"
            if inspect.isawaitable(codec)
            else (f"a {type(codec).__qualname__} without callable {', '.join(missing)}")
        )
        ctx.fatal(
            "SES-01", f"session_codec() returned {what}, not a SessionCodec (see also CAP-01)"
        )
    return codec  # type: ignore[return-value]


def _check_name(ctx: ProbeContext, codec: SessionCodec) -> None:
    """SES-01: name() is non-blank and the same on a second call."""
    name = _plain(codec.name)
    first = ctx.call("SES-01", "name()", name, awaitable=False)
    ctx.judge("SES-01")
    problem = _type_problem("name()", first, str)
    if problem is not None:
        ctx.fail("SES-01", problem)
        return
    if not first.strip():
        ctx.fail(
            "SES-01", f"name() returned {'an empty' if not first else 'a blank'} name {first!r}"
        )
    again = ctx.attempt(name, awaitable=False)
    if again.timed_out:
        ctx.fatal("SES-01", describe_hang("name() (second call)", again, ctx.options.probe_timeout))
    if again.error is not None:
        ctx.fail("SES-01", describe_error("name() (second call)", again.error))
    elif again.value != first:
        ctx.fail("SES-01", f"name() returned {_short(first)}, then {_short(again.value)}")


def _no_raise(
    ctx: ProbeContext, label: str, fn: Callable[[Any], Any], arg: object
) -> tuple[bool, Any]:
    """SES-07: call ``fn(arg)``; (False, None) after recording a raise, fatal on a hang."""
    outcome = ctx.attempt(_plain(fn), arg, awaitable=False)
    if outcome.timed_out:
        ctx.fatal("SES-07", describe_hang(label, outcome, ctx.options.probe_timeout))
    if outcome.error is not None:
        ctx.fail("SES-07", describe_error(label, outcome.error))
        return False, None
    return True, outcome.value


def _check_empty_inputs(ctx: ProbeContext, codec: SessionCodec) -> None:
    """SES-07: no raise on empty input; SES-02: the canonical empty mapping."""
    ctx.judge("SES-07")
    zero = SessionParams()
    seen = False
    ok, params = _no_raise(ctx, "to_params(None)", codec.to_params, None)
    if ok:
        seen = True
        problem = _type_problem("to_params(None)", params, SessionParams)
        if problem is not None:
            ctx.fail("SES-02", problem)
        elif params != zero:
            ctx.fail(
                "SES-02",
                f"to_params(None) returned {_short(params)}, not the zero SessionParams() "
                f"({_params_diff(zero, params)})",
            )
    ok, state = _no_raise(ctx, "from_params(SessionParams())", codec.from_params, SessionParams())
    if ok:
        seen = True
        if inspect.isawaitable(state):
            ctx.fail(
                "SES-02", str(_type_problem("from_params(SessionParams())", state, type(None)))
            )
        elif state is not None:
            ctx.fail("SES-02", f"from_params(SessionParams()) returned {_short(state)}, not None")
    ok, guard = _no_raise(
        ctx, "guard_fingerprint(SessionParams())", codec.guard_fingerprint, SessionParams()
    )
    if ok:
        problem = _type_problem("guard_fingerprint(SessionParams())", guard, str)
        if problem is not None:
            ctx.fail("SES-07", problem)
    if seen:
        ctx.judge("SES-02")
    else:
        ctx.skip(
            ["SES-02"],
            "to_params(None) and from_params(SessionParams()) both raised (see SES-07)",
        )


def probe_session_codec(ctx: ProbeContext) -> None:
    """The ``session_codec`` probe: SES-01..08 on the seed state, then on generated states."""
    codec = _obtain_codec(ctx)
    if codec is None:
        return
    options = ctx.options
    seed = options.session_state if options.session_state is not None else DEFAULT_SESSION_STATE

    _check_name(ctx, codec)
    _check_empty_inputs(ctx, codec)

    session_keys = [k for k in options.session_keys if k in seed.data]
    for key in options.session_keys:
        if key not in seed.data:
            ctx.fail(
                "SES-08",
                f"misconfiguration: Options(session_keys=...) names {key!r}, which the seed "
                "state's data lacks; pass a seed that holds it with Options(session_state=...)",
            )
    if not options.session_keys:
        ctx.skip(
            ["SES-08"],
            "opt-in: pass Options(session_keys=...) naming seed data keys that must survive "
            "the codec",
        )
    if not options.guard_keys:
        ctx.skip(
            ["SES-06"],
            "opt-in: pass Options(guard_keys=...) naming session-param keys whose change must "
            "change guard_fingerprint",
        )

    _check_laws(
        codec,
        seed,
        "seed",
        _SeedChecker(ctx),
        session_keys=session_keys,
        guard_keys=options.guard_keys,
    )
    _check_generated(
        ctx, codec, seed, session_keys=options.session_keys, guard_keys=options.guard_keys
    )


def check_fresh_guard(ctx: ProbeContext, found: Sequence[FreshResult]) -> None:
    """SES-05 across processes: the guard each fresh interpreter (another hash seed)
    computed for some params equals the guard this interpreter computes for the same
    params (so the fresh interpreters agree with each other too: two seeds that order a
    set differently cannot both match this one)."""
    # A missing or broken codec is the codec probe's to report (SES-01).
    get_codec = ctx.method("session_codec")
    outcome = ctx.attempt(get_codec, awaitable=False) if get_codec is not None else None
    codec: Any = outcome.value if outcome is not None and outcome.ok else None
    guard = getattr(codec, "guard_fingerprint", None)
    if not callable(guard):
        return
    for child in found:
        for problem in child.failures:
            ctx.note(
                f"in a fresh interpreter (PYTHONHASHSEED={child.hash_seed}), {problem}",
                clauses=["SES-05"],
            )
    ctx.judge("SES-05")
    advice = (
        "a guard must not depend on hash(), set order, id() or anything else that changes "
        "when the host restarts"
    )
    for child in found:
        for raw, there in child.guards:
            params = SessionParams.model_validate(raw)
            label = "guard_fingerprint(params from a fresh interpreter)"
            here = _SeedChecker(ctx).call("SES-05", label, guard, params, str)
            if here != there:
                keys = _keys(list(params.values))
                ctx.fail(
                    "SES-05",
                    f"guard_fingerprint differs in a fresh interpreter (PYTHONHASHSEED="
                    f"{child.hash_seed}) for the same params (keys {keys}): {_short(here)} "
                    f"here vs {_short(there)} there; {advice}",
                )
                return


def probe_fresh_process(ctx: ProbeContext) -> None:
    """The ``fresh_process`` probe: SES-05 and CAP-01 against a fresh interpreter's values.

    Adds to the verdicts of the codec and capability probes; a driver without resume has
    nothing to compare, and a skipped check is a note on both clauses.
    """
    from adaptertest.cap import check_fresh_fingerprint

    if not ctx.descriptor.sessions.supports_resume:
        return
    found = for_suite(ctx.factory, ctx.options)
    if found is None:
        return
    if isinstance(found, str):
        for clause in ("SES-05", "CAP-01"):
            ctx.note(f"{clause} {found}", clauses=[clause])
        return
    for child in found:
        if child.error is not None:
            why = f"not checked in a fresh interpreter (PYTHONHASHSEED={child.hash_seed})"
            for clause in ("SES-05", "CAP-01"):
                ctx.note(f"{clause} {why}: {child.error}", clauses=[clause])
    answered = [child for child in found if child.error is None]
    if answered:
        check_fresh_guard(ctx, answered)
        check_fresh_fingerprint(ctx, answered)
