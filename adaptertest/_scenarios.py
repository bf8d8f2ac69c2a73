"""The scenario engine: run a scripted model conversation against a bound driver.

The scenario clauses (TOL, RSN, RES, FLT, DLN, INP, OUT, PRC) need the model side. A
driver author gives the suite ``Options(model_binding=ModelBinding(...))``: a factory
taking a :class:`ModelEndpoint` and returning a driver pointed at it. For each scenario
the engine (a :class:`Stage`) starts a model-API emulator serving the scenario's file
from ``adaptertest/scenarios/``, makes a fresh home and workspace, puts a fresh marker
in the endpoint's environment (:data:`SCENARIO_MARKER_VARIABLE`), builds the driver from
the binding, runs the scenario's request(s) with a recording sink, judges each run by
the rules every run obeys (:func:`judge_run_rules`: the live run's checks, reported under
the scenario's clause), and hands the family module everything to judge: the run, the
stream, the transcript and the emulator's request log. When the stage closes it judges
PRC-01 from the process table (every
process still carrying the marker), ends whatever is left, stops the emulator and
removes the folders.

The marker is a variable of its own, not the run marker of ``driver.clikit``
(``AGENT_DRIVER_RUN_MARKER``), which a driver sets per run on its own processes and so
would replace the suite's. Where the process table cannot be searched by environment
(no ``/proc``) PRC-01 is skipped with a note saying so.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import anyio

from adaptertest._calls import LATE_WINDOW, Leftovers, describe_error, describe_hang
from adaptertest._fresh import _import_ref
from adaptertest._probe import ProbeContext
from adaptertest._violation import Violation
from adaptertest.clauses import CLAUSES
from adaptertest.emulator import Emulator, EmulatorError, RecordedRequest, Scenario
from adaptertest.flr import verify_clean_failure
from adaptertest.liv import (
    LOOP_SLACK,
    LiveRun,
    LiveVerdicts,
    error_type,
    judge_run_products,
    late_violations,
    live_request,
    outcome_summary,
    run_settled,
    stream_plan,
    verify_live_checkpoint,
)
from adaptertest.options import DEFAULT_SCENARIO_DEADLINE, ModelBinding, ModelEndpoint
from adaptertest.prc import verify_nothing_left
from adaptertest.run import verify_run_events
from adaptertest.sink import RecordingSink
from adaptertest.usg import judge_usage
from driver.clikit._proctable import can_scan, end_marked, marked_pids, new_marker
from driver.events import StreamKind, StreamPayload
from driver.run import Request, Response
from driver.transcript import TranscriptItem, TranscriptKind

__all__ = [
    "NO_BINDING",
    "SCENARIO_API_KEY",
    "SCENARIO_DIR",
    "SCENARIO_MARKER_VARIABLE",
    "Observed",
    "Stage",
    "binding_from_ref",
    "clauses_of",
    "gate",
    "items",
    "judge_run_rules",
    "load_scenario",
    "new_token",
    "outcome_of",
    "scenario_request",
    "single_run",
    "stream_text",
]

SCENARIO_MARKER_VARIABLE = "ADAPTERTEST_SCENARIO_MARKER"
"""The variable the endpoint's ``env`` sets to a value unique to one scenario."""

SCENARIO_API_KEY = "adaptertest-emulator-key"
"""The dummy key every endpoint hands out; the emulator accepts any key."""

SCENARIO_DIR = Path(__file__).with_name("scenarios")
"""The scenario files the battery serves (emulator scenario JSON, shipped in the wheel)."""

NO_BINDING = (
    "no model endpoint to run scenarios against: pass "
    "Options(model_binding=ModelBinding(driver=..., protocol=...)) to bind the driver to "
    "the suite's model emulator (see docs/scenarios.md)"
)

SETTLE = 3.0
"""Seconds the marked processes of a finished run get to disappear (a process ended
just before run() returned may still be going down)."""

_END_GRACE = 2.0

RUN_NOTE = "{label} scenario ({stage}), run {number}: a run took {seconds:.3f} s"
"""The note each scenario run leaves on its clause: what the driver itself took (the
stage's marker prefix and the run's number keep two such notes apart)."""
_POLL = 0.02


def binding_from_ref(ref: str) -> ModelBinding:
    """The binding ``"module:attr"`` names: a ModelBinding, or a function returning one."""
    found = _import_ref(ref)
    if not isinstance(found, ModelBinding) and callable(found):
        found = found()
    if not isinstance(found, ModelBinding):
        raise TypeError(f"{ref} is a {type(found).__qualname__}, not a ModelBinding")
    return found


def gate(ctx: ProbeContext, clauses: Sequence[str]) -> tuple[ModelBinding | None, list[str]]:
    """The binding and which of ``clauses`` it lets run; the others are skipped here
    (no binding: all, naming the option; ``ModelBinding.cannot``: with its reason)."""
    binding = ctx.options.model_binding
    probe_prc = ("PRC-01",)
    if binding is None:
        ctx.skip([*clauses, *probe_prc], NO_BINDING)
        return None, []
    wanted: list[str] = []
    for clause in [*clauses, *probe_prc]:
        reason = binding.cannot.get(clause)
        if reason is not None:
            ctx.skip((clause,), f"the binding declares the agent cannot do it: {reason}")
        elif clause not in probe_prc:
            wanted.append(clause)
    if not wanted:
        ctx.skip(probe_prc, f"the {ctx.name} probe ran no scenario (its clauses are skipped)")
    return binding, wanted


def load_scenario(name: str, values: Mapping[str, str] | None = None) -> Scenario:
    """The scenario file ``name`` with each ``{{key}}`` in its strings replaced by
    ``values[key]`` (a token unique to the run, a generated text)."""
    path = SCENARIO_DIR / f"{name}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    return Scenario.parse(_fill(data, values or {}), source=str(path))


def _fill(value: Any, values: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        for key, text in values.items():
            value = value.replace(f"{{{{{key}}}}}", text)
        return value
    if isinstance(value, list):
        return [_fill(item, values) for item in value]
    if isinstance(value, dict):
        return {key: _fill(item, values) for key, item in value.items()}
    return value


def scenario_request(name: str, prompt: str, workspace: Path) -> Request:
    """The request of one scenario run: the live request's shape (streaming, a profile
    payload, a workspace lease on the stage's workspace) with its own run id."""
    request = live_request(None, prompt, str(workspace))
    request.run_id = f"adaptertest-scenario-{name}"
    return request


@dataclass(frozen=True)
class CancelledRun:
    """A run the suite cancelled once the model had its request."""

    result: LiveRun
    latency: float | None
    """Seconds from the cancellation to run() ending; None: the model never got the
    request (the run ended first, or never asked), so nothing was cancelled."""
    propagated: bool
    """Whether run() let the cancellation out (raised the backend's cancellation)."""


@dataclass
class Stage:
    """One scenario's world: emulator, fresh home and workspace, process marker.

    Use it as a context manager around the runs of one scenario; leaving it judges
    PRC-01 (unless ``ModelBinding.cannot`` names it) and cleans up.
    """

    ctx: ProbeContext
    binding: ModelBinding
    scenario: Scenario
    label: str
    deadline: float = DEFAULT_SCENARIO_DEADLINE
    emulator: Emulator = field(init=False)
    endpoint: ModelEndpoint = field(init=False)
    marker: str = field(init=False, default="")
    _root: Path | None = field(init=False, default=None)
    _runs: int = field(init=False, default=0)

    def __enter__(self) -> Self:
        self._root = Path(tempfile.mkdtemp(prefix="adaptertest-scenario-"))
        home, workspace = self._root / "home", self._root / "workspace"
        home.mkdir()
        workspace.mkdir()
        self.marker = new_marker()
        self.emulator = Emulator(self.scenario, tools=self.binding.tools)
        try:
            self.emulator.start()
        except EmulatorError:
            shutil.rmtree(self._root, ignore_errors=True)
            raise
        self.endpoint = ModelEndpoint(
            base_url=self.emulator.base_url,
            protocol=self.binding.protocol,
            home=home,
            workspace=workspace,
            env={SCENARIO_MARKER_VARIABLE: self.marker},
            api_key=SCENARIO_API_KEY,
            deadline=self.deadline,
        )
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            self._judge_processes()
        finally:
            with contextlib.suppress(EmulatorError):
                self.emulator.stop()
            if self._root is not None:
                shutil.rmtree(self._root, ignore_errors=True)

    @property
    def workspace(self) -> Path:
        return self.endpoint.workspace

    @property
    def requests(self) -> list[RecordedRequest]:
        """The main requests the emulator answered (or failed) so far: side ones left out."""
        return self.emulator.main_requests

    # -- the driver -----------------------------------------------------------------------

    def driver(self, clauses: Sequence[str]) -> object | None:
        """A driver from the binding for this endpoint; a raise or a hang fails
        ``clauses`` (and gives None)."""
        label = f"ModelBinding.driver(endpoint) for the {self.label} scenario"
        outcome = self.ctx.attempt(self.binding.driver, self.endpoint, awaitable=False)
        problem = ""
        if outcome.timed_out:
            problem = describe_hang(label, outcome, self.ctx.options.probe_timeout)
        elif outcome.error is not None:
            problem = self.ctx.raised(label, outcome.error, clauses=clauses)
        elif outcome.value is None:
            problem = f"{label} returned None instead of a driver"
        if problem:
            for clause in clauses:
                self.ctx.fail(clause, problem)
            return None
        made: object = outcome.value
        return made

    def run(
        self,
        driver: object,
        request: Request,
        clauses: Sequence[str],
        *,
        label: str = "",
        refusal: bool = False,
    ) -> LiveRun | None:
        """Run ``driver`` once on the suite's loop under the stage's deadline plus the
        binding's grace, wait for what it left running, and capture its sink. A missing
        run() or a hang of the whole call fails ``clauses`` (and gives None).

        What the run produced is judged at once by the rules every run obeys (see
        :func:`judge_run_rules`); ``refusal`` says the run must be refused before it
        starts, so its raise is the expected answer rather than a failed run."""
        named = label or f"run() in the {self.label} scenario"
        run = self.ctx.method("run", driver)
        if run is None:
            for clause in clauses:
                self.ctx.fail(clause, f"{type(driver).__qualname__} has no callable run() method")
            return None
        timeout = self.deadline + self.binding.grace

        async def go() -> LiveRun:
            return await run_settled(run, request, timeout)

        ran: LiveRun | None = self._on_loop(go, timeout, named, clauses)
        if ran is not None:
            judge_run_rules(self.ctx, driver, ran, clauses, named, refusal=refusal)
        return ran

    def run_and_cancel(
        self, driver: object, request: Request, clauses: Sequence[str]
    ) -> CancelledRun | None:
        """Start a run, cancel it (its anyio cancel scope) once the model has the run's
        first main request, and say how long run() took to end after that."""
        run = self.ctx.method("run", driver)
        if run is None:
            for clause in clauses:
                self.ctx.fail(clause, f"{type(driver).__qualname__} has no callable run() method")
            return None
        wait = self.deadline
        grace = self.binding.grace
        sink = RecordingSink()
        emulator = self.emulator

        async def go() -> CancelledRun:
            result = LiveRun()
            asked: list[float] = []
            propagated = False
            leftovers = Leftovers()

            async def cancel_when_asked(scope: anyio.CancelScope) -> None:
                # Polled, not waited on a thread: the run may end first, and then this
                # task must stop at once.
                with anyio.move_on_after(wait):
                    while not emulator.main_requests:
                        await anyio.sleep(_POLL)
                    asked.append(time.monotonic())
                scope.cancel()

            start = time.monotonic()
            with anyio.move_on_after(wait + grace) as outer:
                async with anyio.create_task_group() as group:
                    group.start_soon(cancel_when_asked, group.cancel_scope)
                    try:
                        value = run(request, sink)
                        if inspect.isawaitable(value):
                            value = await value
                        result.value = value
                    except anyio.get_cancelled_exc_class() as exc:
                        result.error = exc
                        propagated = True
                        raise
                    except Exception as exc:  # noqa: BLE001 - the driver's raise is data
                        result.error = exc
                    group.cancel_scope.cancel()
            ended = time.monotonic()
            sink.seal()
            result.timed_out = outer.cancel_called
            result.elapsed = ended - start
            await leftovers.settle()
            result.capture(sink)
            latency = ended - asked[0] if asked else None
            return CancelledRun(result, latency, propagated)

        ran: CancelledRun | None = self._on_loop(go, wait + grace, "the cancelled run", clauses)
        if ran is not None:
            for clause in clauses:
                verdicts = _verdicts(self.ctx, ran.result, clause, "the cancelled run")
                verdicts.report(late_violations(ran.result))
                verdicts.report(verify_run_events(ran.result.events))
                verdicts.finish()
        return ran

    def _on_loop(self, go: Any, timeout: float, label: str, clauses: Sequence[str]) -> Any:
        outcome = self.ctx.runner.run_async(go, timeout=timeout + LOOP_SLACK + LATE_WINDOW)
        problem = ""
        if outcome.timed_out:
            problem = describe_hang(label, outcome, timeout)
        elif outcome.error is not None:
            problem = f"{label} raised {error_type(outcome.error)} in the suite"
        if problem:
            for clause in clauses:
                self.ctx.fail(clause, problem)
            return None
        self.note_run(clauses, outcome.elapsed)
        return outcome.value

    def note_run(self, clauses: Sequence[str], seconds: float) -> None:
        """Note how long a run of this scenario took (the battery's floor: the benchmark
        adds these up; see :data:`RUN_NOTE`)."""
        self._runs += 1
        note = RUN_NOTE.format(
            label=self.label, stage=self.marker[:8], number=self._runs, seconds=seconds
        )
        self.ctx.note(note, clauses=clauses)

    # -- processes ------------------------------------------------------------------------

    def _judge_processes(self) -> None:
        binding = self.binding
        judged = "PRC-01" not in binding.cannot
        if not can_scan():
            end_marked(SCENARIO_MARKER_VARIABLE, self.marker)
            if judged:
                self.ctx.skip(
                    ("PRC-01",),
                    "this machine's process table cannot be searched by environment (no "
                    "/proc), so what a run left running cannot be found",
                )
            return
        left = _settled(self.marker)
        commands = [_command_name(pid) for pid in left]
        if left:
            end_marked(SCENARIO_MARKER_VARIABLE, self.marker, grace=_END_GRACE)
        if judged:
            self.ctx.report(verify_nothing_left(self.label, commands), judge=("PRC-01",))


# -- the rules every run obeys ----------------------------------------------------------


def _verdicts(ctx: ProbeContext, result: LiveRun, clause: str, label: str) -> LiveVerdicts:
    verdicts = LiveVerdicts(ctx, structured=False, into=clause, label=label, titled=True)
    verdicts.run = result
    return verdicts


def judge_run_rules(
    ctx: ProbeContext,
    driver: object,
    result: LiveRun,
    clauses: Sequence[str],
    label: str,
    *,
    refusal: bool = False,
) -> None:
    """Judge one scenario run by the rules that judge the live run, under ``clauses``
    (the scenario's), each message naming the rule it broke.

    The products of every run (:func:`adaptertest.liv.judge_run_products`) and USG-01;
    then by outcome: a failed run must fail cleanly (FLR-01's checks, which include no
    valid checkpoint), a successful one of a resumable driver offers a checkpoint
    (LIV-03). A run that did not return in time or returned no Response is left to the
    scenario's own verdict, which says so; a ``refusal`` (RES-03) is not a failed run.
    """
    if result.timed_out or result.wrong_type:
        return
    rich, capability = stream_plan(ctx, driver)
    resumable = ctx.descriptor.sessions.supports_resume
    response = result.response
    for clause in clauses:
        verdicts = _verdicts(ctx, result, clause, label)
        if result.malformed is not None:
            verdicts.fail("", f"run() returned a malformed Response ({result.malformed})")
            verdicts.finish()
            continue
        judge_run_products(verdicts, result, rich, capability)
        if response is not None:
            judge_usage(verdicts, response, result.stream)
        if outcome_summary(response, result.error):
            if not refusal:
                stream = result.stream if rich else None
                verdicts.report(verify_clean_failure(response, result.error, stream))
        else:
            verdicts.report(verify_live_checkpoint(resumable, response))
        verdicts.finish()


def _settled(marker: str) -> list[int]:
    """The marked processes still running once those going down had :data:`SETTLE`
    seconds to go."""
    deadline = time.monotonic() + SETTLE
    while True:
        pids = marked_pids(SCENARIO_MARKER_VARIABLE, marker) or []
        if not pids or time.monotonic() >= deadline:
            return pids
        time.sleep(0.05)


def _command_name(pid: int) -> str:
    """The program name of ``pid`` (its argv[0] base name), or ``pid N``."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            first = handle.read().split(b"\0", 1)[0].decode("utf-8", "replace")
    except OSError:
        first = ""
    return f"{Path(first).name or '?'} (pid {pid})"


# -- what a run produced, read the same way by every family ---------------------------------


def stream_text(stream: Iterable[StreamPayload], kind: StreamKind) -> str:
    """The deltas of every ``kind`` payload, joined."""
    return "".join(p.delta for p in stream if p.kind == kind)


def outcome_of(result: LiveRun) -> str:
    """Why a run did not succeed, in structure only ("" when it succeeded)."""
    if result.timed_out:
        return "run() did not return in time"
    if result.error is not None:
        return describe_error("run()", result.error)
    response = result.response
    if response is None:
        return f"run() returned {type(result.value).__qualname__}, not a Response"
    if response.failure is not None:
        return f"it failed ({response.failure.code or 'no code'})"
    if response.timed_out or response.exit_code != 0 or response.signal:
        return (
            f"it ended with exit code {response.exit_code}, signal {response.signal!r}, "
            f"timed_out={response.timed_out}"
        )
    return ""


def items(response: Response | None, kind: TranscriptKind) -> list[TranscriptItem]:
    if response is None:
        return []
    return [item for item in response.transcript if item.kind == kind]


def clauses_of(probe: str) -> tuple[str, ...]:
    """The clauses a scenario probe judges (PRC-01 aside: the stage judges it)."""
    return tuple(c.id for c in CLAUSES if probe in c.probes and c.id != "PRC-01")


def new_token() -> str:
    """A word unique to one scenario run, to find in the model's requests and the files."""
    return f"adt{uuid.uuid4().hex[:16]}"


@dataclass(frozen=True)
class Observed:
    """What one single-run scenario produced, for a family's verify helper."""

    result: LiveRun
    requests: list[RecordedRequest]
    workspace: Path
    problems: list[str]
    """What the emulator could not serve as written (a tool role with no tool)."""
    values: Mapping[str, str]
    """The values filled into the scenario file (``token`` ...)."""
    all_requests: int = 0
    """Every request the emulator got, side requests included."""

    @property
    def response(self) -> Response | None:
        return self.result.response


Judge = Callable[[Observed], list[Violation]]


def single_run(
    ctx: ProbeContext,
    binding: ModelBinding,
    clause: str,
    name: str,
    prompt: str,
    judge: Judge,
    *,
    values: Mapping[str, str] | None = None,
    watch: bool = False,
    refusal: bool = False,
) -> None:
    """Run scenario ``name`` once with ``prompt`` and record ``judge``'s verdict on
    ``clause`` (the stage judges PRC-01). ``watch`` keeps the run's sink watched until
    the report is final: an emission that arrives later still fails ``clause``.
    ``refusal``: the run must be refused before it starts (see :meth:`Stage.run`)."""
    filled = dict(values or {})
    with Stage(ctx, binding, load_scenario(name, filled), label=name) as stage:
        driver = stage.driver((clause,))
        if driver is None:
            return
        request = scenario_request(name, prompt, stage.workspace)
        result = stage.run(driver, request, (clause,), refusal=refusal)
        if result is None:
            return
        if result.error is not None:
            ctx.trace(result.error, clauses=(clause,))
        observed = Observed(
            result,
            stage.requests,
            stage.workspace,
            stage.emulator.problems,
            filled,
            len(stage.emulator.requests),
        )
        ctx.report(judge(observed), judge=(clause,))
        if watch and result.sink is not None:
            ctx.watch(clause, result.sink, label=f"({name}) ")
