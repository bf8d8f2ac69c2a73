"""DFT family (Python extension): a CLI or ACP driver survives its agent's next release
(DFT-01..03).

The commonest way a real driver breaks is the CLI changing under it: new line types, new
fields, fields in another order. The ``drift`` probe takes recordings of the CLI (the
ones the driver's replay tests use) and :class:`~adaptertest.options.Drift`'s way to
build the driver around a command line. For each recording it runs the driver on the
recording as is, twice (the baseline: the two runs must agree, or nothing can be
compared), then on variants hypothesis makes (derandomized, shrinking on, the user's
hypothesis profile untouched; see :mod:`adaptertest._drift` for what they are):

- DFT-01, additive drift: the result equals the baseline's and no stream, run-event or
  transcript clause the baseline keeps breaks;
- DFT-02, corrupt output: no raise (a ``RunError`` carrying its response is a failed run,
  not a raise), no hang, nothing illegal, the corrupt line named by the failure or
  visible as a transcript item, and no valid checkpoint;
- DFT-03, chunking: the same bytes in other chunks give the same result as line by line.

Each variant is a file the kit's replay stand-in plays in a fresh process: a plain
transcript when that plays it alike (its faster path), else a recording (format v1).
A recording whose JSON lines are all JSON-RPC 2.0 messages is an ACP agent's side of a
conversation: its variants are played by the two-way stand-in
(:mod:`adaptertest.acpreplay`), which answers the driver's requests in the recorded
order, and only the agent's side drifts (see :func:`adaptertest._drift.additive`).
"The result" is the response without its raw streams plus the stream payloads (without
``raw`` and the fields core owns); ids and timestamps the driver makes itself
(values of id or time fields that the recording does not hold) are numbered by first
appearance before comparing, and a field the drift added that the driver copies on under
its own name (vendor data, a tool's arguments) is left out: that is the CLI's data
passed on, not a change. A failure names the smallest drift hypothesis found, line
by line, and what differed; provider text is withheld unless
``Options(show_live_details=True)``, as in the live clauses. Shrinking spends at most
a fixed number of driver runs; each run is bounded by ten times the baseline's time
(at least ten seconds, at most ``Options.probe_timeout``).

A driver that never runs the command it is given (the reference driver, any driver
without a CLI) skips the probe with a reason: the replay of the baseline records its
arguments, and a driver that never started it left no record.
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adaptertest._calls import describe_error, describe_hang
from adaptertest._drift import (
    Corruption,
    Source,
    Variant,
    additive,
    as_recorded,
    content_objects,
    corrupt,
    line_by_line,
    load_source,
    rechunked,
    with_multibyte,
)
from adaptertest._probe import ProbeContext
from adaptertest._property import falsified_by_clause, falsified_for, property_settings
from adaptertest._violation import Violation, render
from adaptertest.evt import (
    verify_observation_sequence,
    verify_stream_capability,
    verify_stream_sequence,
)
from adaptertest.liv import LiveRun, error_type, live_request, run_once, stream_plan
from adaptertest.options import Drift
from adaptertest.recording import RecordingError
from adaptertest.rsp import verify_outcome
from adaptertest.run import verify_run_events, verify_transcript_mirror
from adaptertest.sink import RecordingSink
from driver.descriptor import StreamCapability
from driver.run import Request, Response

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

__all__ = [
    "DRIFT_CLAUSES",
    "DRIFT_RUN_ID",
    "corruption_problems",
    "probe_drift",
    "result_differences",
    "snapshot",
]

DRIFT_CLAUSES = ("DFT-01", "DFT-02", "DFT-03")
DRIFT_RUN_ID = "adaptertest-drift"
"""The run id of every drift run."""

_WITHHELD = "(provider details withheld: Options(show_live_details=True) shows them)"
_SHRINK_RUNS = 24
"""Driver runs hypothesis may spend shrinking a failure; then the smallest so far is kept."""
_HANG_COST = 6
"""A run that hangs counts as this many against the shrinking budget."""
_MIN_TIMEOUT = 10.0
_TIMEOUT_FACTOR = 10.0
_LOOP_SLACK = 1.0
_DIFFERENCES = 3
_SHOWN_CHARS = 60

_STREAM_OWNED = {"raw", "seq", "sequence", "timestamp"}
# Field names whose values a driver may make up: ids (``run_id``, ``messageId``,
# ``agent.pid``) and times.
_ID_KEY = re.compile(r"(?i:(^|[_.])(id|ids|uuid|pid))$|[a-z](Id|ID|Ids)$")
_TIME_KEY = re.compile(
    r"(?i:(^|_)(time|timestamp|date|datetime|duration|elapsed|latency|ts|at|ms))$"
    r"|[a-z](Time|At|Ms)$"
)
_SHOWN_KEYS = frozenset(
    {"kind", "code", "type", "subtype", "name", "tool_name", "model", "provider", "signal"}
    | {"role", "raised", "status", "event", "stream"}
)


# -- the result, normalised and compared (pure) ---------------------------------------------


def _normalised(value: Any, source: Source, names: dict[object, str], key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: _normalised(v, source, names, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalised(v, source, names, key) for v in value]
    if not key or isinstance(value, bool) or value in ("", None):
        return value
    made = (isinstance(value, str) and value not in source.vocabulary) or (
        isinstance(value, int | float) and float(value) not in source.numbers
    )
    if made and (
        (_ID_KEY.search(key) and isinstance(value, str)) or _TIME_KEY.search(key) is not None
    ):
        return names.setdefault(value, f"<made by the driver #{len(names) + 1}>")
    return value


def _without(value: Any, names: frozenset[str]) -> Any:
    if isinstance(value, dict):
        return {k: _without(v, names) for k, v in value.items() if k not in names}
    if isinstance(value, list):
        return [_without(v, names) for v in value]
    return value


def snapshot(
    run: LiveRun, source: Source, passed_on: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """What the DFT clauses compare: what ``run`` raised, its response without raw streams,
    and its stream without the fields core owns; driver-made ids and timestamps numbered.

    ``passed_on`` names fields the drift added to the recording's objects: a driver that
    copies an object's fields on (vendor data, a tool's arguments) passes a new field on
    under its own name, which is the CLI's data, not a change of the result; such keys
    are left out wherever they appear.
    """
    response = run.response
    doc = {
        "raised": error_type(run.error) if run.error is not None else None,
        "response": (
            None
            if response is None
            else response.model_dump(mode="json", exclude={"raw_streams"}, round_trip=True)
        ),
        "stream": [p.model_dump(mode="json", exclude=_STREAM_OWNED) for p in run.stream],
    }
    result: dict[str, Any] = _normalised(_without(doc, passed_on), source, {})
    return result


def _shown_key(key: str) -> bool:
    """Fields whose values are structure (kinds, codes, names, ids), not provider prose."""
    return key in _SHOWN_KEYS or _ID_KEY.search(key) is not None


def _render(key: str, value: Any, show: bool) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, str) and value and not show and not _shown_key(key):
        return "a text (withheld)"
    text = repr(value) if isinstance(value, str) else "null" if value is None else str(value)
    return text if len(text) <= _SHOWN_CHARS else f"{text[:_SHOWN_CHARS]}..."


def _changed(path: str, key: str, expected: Any, got: Any, show: bool) -> str:
    """``path is GOT, expected EXPECTED``; two long texts are shown from a little before
    the first character where they differ, so the place is visible, not two equal cuts."""
    shown = show or _shown_key(key)
    if not (isinstance(expected, str) and isinstance(got, str) and shown):
        return f"{path} is {_render(key, got, show)}, expected {_render(key, expected, show)}"
    if len(repr(expected)) <= _SHOWN_CHARS and len(repr(got)) <= _SHOWN_CHARS:
        return f"{path} is {got!r}, expected {expected!r}"
    at = next(
        (i for i, (x, y) in enumerate(zip(expected, got, strict=False)) if x != y),
        min(len(expected), len(got)),
    )
    start = max(0, at - _SHOWN_CHARS // 4)

    def window(text: str) -> str:
        part = text[start : start + _SHOWN_CHARS]
        return (
            ("..." if start else "") + repr(part) + ("..." if start + len(part) < len(text) else "")
        )

    return (
        f"{path} differs from character {at} on ({len(got)} chars, expected {len(expected)}): "
        f"{window(got)}, expected {window(expected)}"
    )


def _summary(value: Any, show: bool) -> str:
    """One entry of a list, by its kind when it has one."""
    if isinstance(value, dict):
        for key in ("kind", "type"):
            if isinstance(value.get(key), str):
                return f"{key} {_render(key, value[key], show)}"
    return _render("", value, show)


def _step(path: str, key: str) -> str:
    """``path`` one key deeper: ``.key``, or ``["key"]`` for a key that is not a name."""
    if not key.isidentifier():
        return f"{path}[{json.dumps(key, ensure_ascii=False)}]"
    return f"{path}.{key}" if path else key


def result_differences(
    expected: dict[str, Any], got: dict[str, Any], *, show: bool, limit: int = _DIFFERENCES
) -> list[str]:
    """Where ``got`` differs from ``expected`` (two :func:`snapshot` results), at most
    ``limit`` places, by path; provider text is withheld unless ``show``."""
    out: list[str] = []

    def visit(a: Any, b: Any, path: str, key: str) -> None:
        if len(out) >= limit or a == b:
            return
        if isinstance(a, dict) and isinstance(b, dict):
            for k in dict.fromkeys([*a, *b]):
                where = _step(path, str(k))
                if k not in b:
                    out.append(f"{where} is missing")
                elif k not in a:
                    out.append(f"{where} is new: {_render(str(k), b[k], show)}")
                else:
                    visit(a[k], b[k], where, str(k))
            return
        if isinstance(a, list) and isinstance(b, list):
            first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
            if len(a) != len(b):
                at = min(len(a), len(b)) if first is None else first
                mine = _summary(b[at], show) if at < len(b) else "nothing"
                theirs = _summary(a[at], show) if at < len(a) else "nothing"
                out.append(
                    f"{path} has {len(b)} entries, expected {len(a)}; at {path}[{at}]: "
                    f"{mine}, expected {theirs}"
                )
            elif first is not None:
                visit(a[first], b[first], f"{path}[{first}]", key)
            return
        out.append(_changed(path, key, a, b, show))

    visit(expected, got, "", "")
    return out


def _shows(text: str, corruption: Corruption) -> bool:
    """``text`` is the corrupt line, or holds it (when it is long enough to tell)."""
    return any(
        form == text.strip() or (len(form) >= 8 and form in text) for form in corruption.spellings()
    )


def _names(text: str, corruption: Corruption) -> bool:
    """``text`` names the corrupt line: by number (``line N``) or by its text."""
    return re.search(rf"\bline {corruption.line}\b", text) is not None or _shows(text, corruption)


def _texts(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for inner in value.values():
            yield from _texts(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _texts(inner)


def corruption_problems(response: Response, corruption: Corruption) -> list[str]:
    """DFT-02's own rules on a response to corrupt output: no valid checkpoint, and the
    corrupt line named by the failure (``line N`` or its text) or shown by an item."""
    problems: list[str] = []
    checkpoint = response.checkpoint
    if checkpoint is not None and checkpoint.valid:
        problems.append("a valid checkpoint was offered")
    failure = response.failure
    named = failure is not None and any(
        _names(text, corruption) for text in _texts(failure.model_dump(mode="json"))
    )
    shown = any(
        _shows(text, corruption)
        for item in response.transcript
        for text in _texts(item.model_dump(mode="json"))
    )
    if not named and not shown:
        how = (
            "the failure does not name it (as 'line N' or by its text)"
            if failure is not None
            else "the run succeeded"
        )
        problems.append(
            f"the corrupt line {corruption.line} is lost: {how} and no transcript item shows it"
        )
    return problems


# -- one run ---------------------------------------------------------------------------------


@dataclass
class _Observed:
    """One driver run on one variant: a problem that ends judging, or what it produced."""

    problem: str = ""
    run: LiveRun | None = None
    snapshot: dict[str, Any] = field(default_factory=dict)
    violations: list[Violation] = field(default_factory=list)
    elapsed: float = 0.0

    @property
    def response(self) -> Response | None:
        return None if self.run is None else self.run.response

    @property
    def broken(self) -> set[str]:
        return {v.clause for v in self.violations}


class _Prober:
    """Runs variants of one probe's recordings through drivers ``Drift.driver`` builds."""

    def __init__(self, ctx: ProbeContext, drift: Drift, folder: Path) -> None:
        self.ctx = ctx
        self.drift = drift
        self.folder = folder
        self.show = ctx.options.show_live_details
        self.timeout = ctx.options.probe_timeout
        self.runs = 0
        self.plan: tuple[bool, StreamCapability | None] | None = None

    def request(self) -> Request:
        options = self.ctx.options
        request = live_request(None, options.live_prompt, options.workspace)
        request.run_id = DRIFT_RUN_ID
        return request

    def play(self, variant: Variant, source: Source, witness: Path | None = None) -> _Observed:
        """Run a fresh driver on ``variant``; never raises for the driver."""
        self.runs += 1
        path = self.folder / f"variant-{self.runs}.jsonl"
        errors = path.with_suffix(".stderr")
        # A conversation is played by the stand-in that answers the client's requests.
        stand_in = ["adaptertest.acpreplay"] if source.jsonrpc else ["adaptertest", "replay"]
        command = [sys.executable, "-m", *stand_in, str(path)]
        plain = None if source.jsonrpc else variant.plain()
        if plain is None:
            path.write_bytes(variant.dumps())
            command += ["--realtime"] if variant.realtime else []
        else:
            path.write_bytes(plain)
            command += ["--exit-code", str(variant.exit_code)]
            if variant.stderr:
                errors.write_bytes(variant.stderr)
                command += ["--stderr", str(errors)]
        if witness is not None:
            command += ["--record-argv", str(witness)]
        command.append("--")
        try:
            return self._play(tuple(command), source, variant.added)
        finally:
            path.unlink(missing_ok=True)
            errors.unlink(missing_ok=True)

    def _play(
        self, command: tuple[str, ...], source: Source, passed_on: frozenset[str]
    ) -> _Observed:
        ctx = self.ctx
        made = ctx.attempt(self.drift.driver, command, timeout=self.timeout, awaitable=False)
        label = "Drift.driver(command)"
        if made.timed_out:
            return _Observed(describe_hang(label, made, self.timeout))
        if made.error is not None:
            return _Observed(describe_error(label, made.error))
        driver = made.value
        run = ctx.method("run", driver) if driver is not None else None
        if run is None:
            return _Observed(
                f"{label} returned {type(driver).__qualname__}, which has no callable run()"
            )
        if self.plan is None:
            self.plan = stream_plan(ctx, driver)
        request, sink, timeout = self.request(), RecordingSink(), self.timeout

        async def once() -> LiveRun:
            return await run_once(run, request, sink, timeout)

        outcome = ctx.runner.run_async(once, timeout=timeout + _LOOP_SLACK)
        if outcome.timed_out:
            return _Observed(describe_hang("run()", outcome, timeout), elapsed=outcome.elapsed)
        if outcome.error is not None:
            return _Observed(self.raised(outcome.error))
        result: LiveRun = outcome.value
        result.capture(sink)
        return self._judge(result, source, passed_on)

    def _judge(self, result: LiveRun, source: Source, passed_on: frozenset[str]) -> _Observed:
        seen = _Observed(run=result, elapsed=result.elapsed)
        if result.timed_out:
            seen.problem = f"run() did not return within {self.timeout:g} s"
        elif result.response is None and result.error is not None:
            seen.problem = self.raised(result.error)
        elif result.wrong_type:
            seen.problem = (
                f"run() returned {type(result.value).__qualname__}, expected driver.Response"
            )
        elif result.malformed is not None:
            seen.problem = f"run() returned a malformed Response ({result.malformed})"
        if seen.problem:
            return seen
        response = result.response
        assert response is not None  # the checks above leave only a response
        rich, capability = self.plan or (False, None)
        found = [*verify_outcome(response, result.error), *verify_run_events(result.events)]
        if rich:
            found += verify_stream_sequence(result.stream)
            if capability is not None:
                found += verify_stream_capability(capability, result.stream)
        else:
            found += verify_observation_sequence(result.stream)
        found += verify_transcript_mirror(result.events, response.transcript)
        seen.violations = found
        try:
            seen.snapshot = snapshot(result, source, passed_on)
        except ValueError as exc:  # pydantic's serialization errors are ValueErrors
            seen.problem = f"its response cannot be compared: {describe_error('dumping it', exc)}"
        return seen

    def raised(self, error: BaseException) -> str:
        """``run()`` raised: where the driver raised, always; its message, which may quote
        the replayed provider output, only with ``show_live_details``."""
        return render(describe_error("run()", error), show=self.show)

    def broken(self, seen: _Observed, kept: set[str]) -> str:
        """The clauses ``seen`` breaks that the baseline keeps, in words."""
        new = [v for v in seen.violations if v.clause not in kept]
        if not new:
            return ""
        clauses = ", ".join(dict.fromkeys(v.clause for v in new))
        if not self.show:
            return f"it breaks {clauses} {_WITHHELD}"
        return f"it breaks {clauses}: " + "; ".join(str(v) for v in new[:_DIFFERENCES])


@dataclass
class _Budget:
    """Per property: runs left for shrinking once a failure is known, and what was seen."""

    failed: dict[tuple[object, ...], str] = field(default_factory=dict)
    passed: set[tuple[object, ...]] = field(default_factory=set)
    spent: int = 0
    runs: int = 0


def _explore(
    prober: _Prober,
    clause: str,
    strategy: SearchStrategy[Variant],
    check: Callable[[Variant], str],
    name: str,
) -> None:
    """Run ``check`` over hypothesis-made variants; record the shrunk failure, if any."""
    from hypothesis import given

    cls = falsified_for(clause)
    budget = _Budget()

    @property_settings(prober.drift.max_examples)
    @given(variant=strategy)
    def drifted(variant: Variant) -> None:
        key = variant.key
        problem = budget.failed.get(key)
        if problem is None:
            if key in budget.passed or (budget.failed and budget.spent >= _SHRINK_RUNS):
                return  # already seen, or out of budget: the smallest failure so far stands
            start = time.perf_counter()
            problem = check(variant)
            budget.runs += 1
            if budget.failed:
                hung = time.perf_counter() - start >= prober.timeout
                budget.spent += _HANG_COST if hung else 1
            if not problem:
                budget.passed.add(key)
                return
            budget.failed[key] = problem
        # One raise site: hypothesis tells failures apart by where they are raised.
        raise cls(problem, variant.words)

    prober.ctx.judge(clause)
    try:
        drifted()
    except Exception as exc:  # noqa: BLE001 - the property's verdict, or a suite defect
        found, other = falsified_by_clause(exc)
        for falsified in found.values():
            prober.ctx.fail(
                clause,
                f"{name}: {falsified.example}: {falsified.message} (hypothesis, the smallest "
                f"drift found in {budget.runs} runs)",
            )
        if other and not found:
            detail = describe_error("the drift property", other[0])
            prober.ctx.fail(clause, f"{name}: could not be judged: {detail} (please report this)")


# -- the probe ---------------------------------------------------------------------------


_OFF = (
    "the drift probe is off: for a driver that runs a CLI and parses its output, pass "
    "Options(drift=Drift(recordings=[...], driver=lambda command: MyDriver(MyConfig("
    "command=command))))"
)
_NOT_RUN = (
    "the driver Drift.driver built never ran the command it was given, so it parses no CLI "
    "output to drift (the reference driver and other drivers that run no CLI skip DFT)"
)


def probe_drift(ctx: ProbeContext) -> None:
    """Run every recording of ``Options.drift`` as is and drifted; judge DFT-01..03.

    A clause a recording cannot judge is skipped for it with the reason; another recording
    that judges it decides its verdict.
    """
    drift = ctx.options.drift
    if drift is None:
        ctx.skip(DRIFT_CLAUSES, _OFF)
        return
    with tempfile.TemporaryDirectory(prefix="adaptertest-drift-") as folder:
        prober = _Prober(ctx, drift, Path(folder))
        for index, path in enumerate(drift.recordings):
            if not _recording(prober, path, first=index == 0):
                return


def _recording(prober: _Prober, path: Path, *, first: bool) -> bool:
    """Judge one recording; False when the probe must stop (the driver runs no CLI)."""
    ctx, name = prober.ctx, path.name
    try:
        source = load_source(path)
    except (OSError, RecordingError) as exc:
        for clause in DRIFT_CLAUSES:
            ctx.fail(clause, f"{name}: the recording cannot be read: {exc}")
        return True
    start, runs = time.perf_counter(), prober.runs
    prober.timeout = ctx.options.probe_timeout
    witness = prober.folder / "argv.json"
    baseline = prober.play(as_recorded(source), source, witness)
    if not witness.exists() and not baseline.problem:
        if first:
            ctx.skip(DRIFT_CLAUSES, _NOT_RUN)
            return False
        ctx.fail("DFT-01", f"{name}: {_NOT_RUN}")
        return True
    witness.unlink(missing_ok=True)
    if baseline.problem:
        ctx.fail(
            "DFT-01",
            f"{name}: on the recording as is, {baseline.problem}; drift is judged against that run",
        )
        ctx.skip(("DFT-02", "DFT-03"), f"{name} as is fails (see DFT-01), so it was not drifted")
        return True
    prober.timeout = min(
        ctx.options.probe_timeout, max(_MIN_TIMEOUT, _TIMEOUT_FACTOR * baseline.elapsed)
    )
    kept = baseline.broken
    if baseline.violations:
        ctx.note(
            f"drift: {name} as is already breaks {', '.join(sorted(kept))}; drift is judged on "
            "the clauses it keeps"
        )
    _judge_corrupt(prober, source, kept, name)
    again = prober.play(as_recorded(source), source)
    differs = again.problem or "; ".join(
        result_differences(baseline.snapshot, again.snapshot, show=prober.show)
    )
    if differs:
        ctx.fail(
            "DFT-03",
            f"{name}: two runs of the recording as is, delivered the same way, differ: "
            f"{differs}; the drift comparisons need the same result every time (ids and "
            "timestamps the driver makes are normalised only in id and time fields)",
        )
        ctx.skip(("DFT-01",), f"{name} gives a different result on every run (see DFT-03)")
    else:
        _judge_additive(prober, source, baseline, name)
        _judge_chunking(prober, source, baseline, name)
    ctx.note(
        f"drift: {name}: {prober.runs - runs} driver runs in {time.perf_counter() - start:.1f} s"
    )
    return True


def _passed_through(seen: _Observed) -> list[object]:
    """What the baseline passed on as content: item inputs and data, payload args, results."""
    response = seen.response
    found: list[object] = []
    if response is not None:
        found += [value for item in response.transcript for value in (item.input, item.data)]
    if seen.run is not None:
        found += [value for payload in seen.run.stream for value in (payload.args, payload.result)]
    return found


def _surfaced(seen: _Observed) -> set[str]:
    """Texts the baseline showed: the output, item texts, stream deltas."""
    response = seen.response
    texts = {response.output} if response is not None else set()
    if response is not None:
        texts.update(item.text for item in response.transcript)
    if seen.run is not None:
        texts.update(payload.delta for payload in seen.run.stream)
    return {text for text in texts if text}


def _against(
    prober: _Prober, source: Source, reference: _Observed, what: str
) -> Callable[[Variant], str]:
    """A check: a variant gives ``reference``'s result and breaks no clause it keeps."""
    kept = reference.broken

    def check(variant: Variant) -> str:
        seen = prober.play(variant, source)
        if seen.problem:
            return seen.problem
        found: list[str] = []
        differs = result_differences(reference.snapshot, seen.snapshot, show=prober.show)
        if differs:
            found.append(f"the result differs from {what}: {'; '.join(differs)}")
        broken = prober.broken(seen, kept)
        if broken:
            found.append(broken)
        return "; and ".join(found)

    return check


def _judge_additive(prober: _Prober, source: Source, baseline: _Observed, name: str) -> None:
    """DFT-01: additive drift leaves the result and the clauses the baseline keeps alone."""
    content = content_objects(_passed_through(baseline))
    check = _against(prober, source, baseline, "the recording's as is")
    _explore(prober, "DFT-01", additive(source, content), check, name)


def _judge_corrupt(prober: _Prober, source: Source, kept: set[str], name: str) -> None:
    """DFT-02: corrupt output fails cleanly or stays visible, never with a valid checkpoint."""
    strategy = corrupt(source)
    if strategy is None:
        prober.ctx.skip(("DFT-02",), f"{name} has no JSON object line to corrupt")
        return

    def check(variant: Variant) -> str:
        seen = prober.play(variant, source)
        if seen.problem:
            return seen.problem
        response, corruption = seen.response, variant.corruption
        assert response is not None  # a run without a problem has a response
        assert corruption is not None  # every corrupt() variant names its corrupt line
        found = corruption_problems(response, corruption)
        broken = prober.broken(seen, kept)
        if broken:
            found.append(broken)
        return "; ".join(found)

    _explore(prober, "DFT-02", strategy, check, name)


def _judge_chunking(prober: _Prober, source: Source, baseline: _Observed, name: str) -> None:
    """DFT-03: any chunking of the same bytes gives the result of line-by-line delivery.

    The bytes are the recording's with multi-byte characters added to the text the driver
    shows (so a cut can split one where it matters), run once line by line as the
    reference; a recording without such text is cut as it is.
    """
    data, changed = with_multibyte(source, _surfaced(baseline))
    reference, label = baseline, "stdout"
    if changed:
        words = f"stdout with multi-byte characters added to {changed} text values"
        tried = prober.play(line_by_line(source, data, words), source)
        if tried.problem:
            prober.ctx.note(
                f"drift: {name} with multi-byte characters added to its text: "
                f"{tried.problem}; DFT-03 cuts the recording's own bytes instead"
            )
            data = source.stdout
        else:
            reference, label = tried, words
    strategy = rechunked(source, data, label)
    if strategy is None:
        prober.ctx.skip(("DFT-03",), f"{name} has no output to cut into chunks")
        return
    check = _against(prober, source, reference, "the same bytes line by line")
    _explore(prober, "DFT-03", strategy, check, name)
