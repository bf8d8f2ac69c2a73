"""Hostile drivers: whatever a driver does, check_driver finishes, never raises, and
blames the right clause.

Every method the suite calls is broken in every way that applies to it (raise, raise a
BaseException, hang cooperatively, block its thread or the event loop, return the
wrong type, be a coroutine where a plain method is required). For each: the report
arrives within a generous wall-time bound, every message starts with its clause ID,
exactly the expected clauses fail, and clauses judged by later probes still pass.
Then the setup (factory, descriptor), the run's output volume and timing, a run that
mutates its request, and wrongly typed values handed to the sink or returned.

Each suite bug these tests found was fixed; its test stays as a regression test.

Cases that must wait out a deadline run concurrently, once per backend, in the
module-scoped :class:`Lab`; their tests only read the outcome.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import time
import warnings
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.lowlevel
import pytest
import sniffio
from hostile import (
    BASELINE_TYPE,
    SLOW,
    TARGETS,
    BaselineConfig,
    BaselineDriver,
    DriverInterrupt,
    Hazard,
    Target,
    hostile_factory,
    mirror_item,
    profile_checkpoint,
    refuse_append,
    respond,
)
from mutants import NO_CLI_SKIP, no_cli_drift

from adaptertest import CLAUSES, ClauseStatus, ConformanceReport, Options, check_driver
from adaptertest.dft import DRIFT_CLAUSES
from adaptertest.hil import ASKING_CLAUSES
from driver import (
    Checkpoint,
    Descriptor,
    EventSink,
    Request,
    Response,
    RunEvent,
    StreamKind,
    StreamPayload,
    TranscriptItem,
    TranscriptKind,
    protocols,
)

BACKENDS = ("asyncio", "trio")
WALL_LIMIT = 30.0
SLOW_PROBE_TIMEOUT = 1.0
"""The hermetic deadline where a call is expected to hang."""
"""Seconds any single check_driver may take here: a hang guard, not a performance figure."""
ALL = [c.id for c in CLAUSES]
SUITE_DEFECT = "please report this"
"""What the suite writes when one of its own probes crashed."""


# -- running and judging ---------------------------------------------------------------


@dataclass(frozen=True)
class Trial:
    """One check_driver call: its report and how long it took."""

    report: ConformanceReport
    wall: float


def attempt(
    factory: Callable[[], object], options: Options, only: list[str] | None = None
) -> Trial:
    start = time.perf_counter()
    report = check_driver(factory, options, only=only)
    return Trial(report, time.perf_counter() - start)


def options(backend: str, *, slow: bool = False, **extra: Any) -> Options:
    """Every opt-in on; short deadlines where something is expected to hang."""
    settings: dict[str, Any] = {
        "config": BaselineConfig(),
        "live_run": True,
        "expect_reject_foreign_config": True,
        "sync_skills_probe": True,
        "guard_keys": ("adaptertest_probe",),
        "session_keys": ("adaptertest_probe",),
        "max_examples": 2,
        # Short enough that the hang cases end quickly, long enough that the calls that do
        # not hang finish in time while 32 cases share the process (and xdist the CPUs).
        "probe_timeout": SLOW_PROBE_TIMEOUT if slow else 10.0,
        "live_run_timeout": 2.0 if slow else 10.0,
        "backend": backend,
    }
    settings.update(extra)
    return Options(**settings)


def failed(report: ConformanceReport) -> set[str]:
    return {r.clause for r in report.results if r.status is ClauseStatus.FAILED}


def status(report: ConformanceReport) -> dict[str, str]:
    return {r.clause: r.status.value for r in report.results}


def well_formed(trial: Trial, only: list[str] | None = None) -> ConformanceReport:
    """The report covers what was asked, in time, and every message names its clause."""
    report = trial.report
    assert trial.wall < WALL_LIMIT, f"check_driver took {trial.wall:.1f} s"
    assert [r.clause for r in report.results] == [c for c in ALL if only is None or c in only]
    for result in report.results:
        for message in result.messages:
            if result.status is ClauseStatus.FAILED:
                assert message.startswith(f"{result.clause}: "), message
            else:
                assert message.startswith(result.clause), message
        for text in (*result.messages, *result.notes):
            assert SUITE_DEFECT not in text, text
    return report


def messages(report: ConformanceReport, clause: str) -> str:
    return "\n".join(report.result(clause).messages)


# -- the method x hazard matrix --------------------------------------------------------

_CODEC_MUST: dict[tuple[str, Hazard], tuple[str, ...]] = {
    ("to_params", Hazard.RAISE): ("SES-03", "SES-07"),
    ("to_params", Hazard.BASE): ("SES-03", "SES-07"),
    ("to_params", Hazard.BLOCK): ("SES-07",),
    ("to_params", Hazard.WRONG): ("SES-02", "SES-03"),
    ("to_params", Hazard.CORO): ("SES-02", "SES-03"),
    ("from_params", Hazard.RAISE): ("SES-04", "SES-07"),
    ("from_params", Hazard.BASE): ("SES-04", "SES-07"),
    ("from_params", Hazard.BLOCK): ("SES-07",),
    ("from_params", Hazard.WRONG): ("SES-02", "SES-04"),
    ("from_params", Hazard.CORO): ("SES-02", "SES-04"),
    ("guard_fingerprint", Hazard.BLOCK): ("SES-07",),
}


def must_fail(target: Target, hazard: Hazard) -> set[str]:
    """Exactly the clauses a broken method fails."""
    if target.name == "validate_config":
        # A coroutine never validates (CFG-02/03 are skipped); accepting everything
        # is wrong only for the foreign config.
        return {Hazard.CORO: {"CFG-01"}, Hazard.WRONG: {"CFG-03"}}.get(hazard, set(target.home))
    if target.name in ("to_params", "from_params", "guard_fingerprint"):
        # The seed laws stop at the first broken call; the live checkpoint's round trip
        # goes through the same codec (RSP-04).
        return {*_CODEC_MUST.get((target.name, hazard), ("SES-05", "SES-07")), "RSP-04"}
    return set(target.home)


def matrix_only(target: Target) -> list[str]:
    extra = ("EVT-12",) if target.name == "stream_capability" else ()
    return list(dict.fromkeys((*target.home, *target.witness, *extra)))


def matrix_case(target: Target, hazard: Hazard, backend: str, release: threading.Event) -> Trial:
    run_twice = {"concurrent_runs": 2} if target.name == "run" else {}
    return attempt(
        hostile_factory(target, hazard, release),
        options(backend, slow=hazard in SLOW, **run_twice),
        matrix_only(target),
    )


MATRIX = [(t, h) for t in TARGETS for h in t.hazards]


def _id(case: tuple[Target, Hazard]) -> str:
    return f"{case[0].name}-{case[1].value}"


def _params(slow: bool) -> list[object]:
    """Matrix cases, the slow (deadline-bound) ones or the rest."""
    return [
        pytest.param((target, hazard), id=_id((target, hazard)))
        for target, hazard in MATRIX
        if (hazard in SLOW) == slow
    ]


def judge_matrix(trial: Trial, target: Target, hazard: Hazard) -> None:
    only = matrix_only(target)
    report = well_formed(trial, only)
    must = must_fail(target, hazard)
    assert failed(report) == must, status(report)
    for clause in target.witness:
        assert report.result(clause).status is ClauseStatus.PASSED, (clause, status(report))
    for result in report.results:
        if result.status is ClauseStatus.SKIPPED:
            # A clause left unjudged points at the failure that stopped it.
            assert any(clause in result.messages[0] for clause in must), result.messages
    if hazard is Hazard.BASE:
        assert "DriverInterrupt" in "\n".join(messages(report, c) for c in must)
        gc.collect()  # any leaked coroutine warns now, under this module's filter
    if hazard is Hazard.BLOCK and target.name != "run":
        blamed = next(c for c in sorted(must) if c != "RSP-04")
        assert "did not respond to cancellation" in messages(report, blamed)


# -- the lab: every case that waits out a deadline, run concurrently -------------------

SlowCase = Callable[[str, threading.Event], Trial]


def _factory_blocks(backend: str, release: threading.Event) -> Trial:
    def factory() -> object:
        release.wait()
        return BaselineDriver()

    return attempt(factory, options(backend, slow=True))


def _descriptor_blocks(backend: str, release: threading.Event) -> Trial:
    class Blocking(BaselineDriver):
        def descriptor(self) -> Descriptor:
            release.wait()
            return super().descriptor()

    return attempt(Blocking, options(backend, slow=True))


def _matrix_slow(target: Target, hazard: Hazard) -> SlowCase:
    return lambda backend, release: matrix_case(target, hazard, backend, release)


SLOW_CASES: dict[str, SlowCase] = {
    "factory-block": _factory_blocks,
    "descriptor-block": _descriptor_blocks,
    **{_id(case): _matrix_slow(*case) for case in MATRIX if case[1] in SLOW},
}


class Lab:
    """Runs every slow case of a backend at once, on first demand, and keeps the outcome."""

    WORKERS = 32  # the cases mostly wait, so they all wait together

    def __init__(self, release: threading.Event) -> None:
        self._release = release
        self._lock = threading.Lock()
        self._outcomes: dict[tuple[str, str], Trial | BaseException] = {}

    def trial(self, case: str, backend: str) -> Trial:
        with self._lock:
            if (case, backend) not in self._outcomes:
                self._run(backend)
        outcome = self._outcomes[(case, backend)]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    def _run(self, backend: str) -> None:
        with ThreadPoolExecutor(self.WORKERS, thread_name_prefix="selfproof-lab") as pool:
            futures = {
                name: pool.submit(case, backend, self._release) for name, case in SLOW_CASES.items()
            }
            for name, future in futures.items():
                error = future.exception()
                self._outcomes[(name, backend)] = error if error is not None else future.result()


@pytest.fixture(scope="module")
def release() -> Iterator[threading.Event]:
    """Holds every blocking hazard; set at teardown so their threads can finish."""
    event = threading.Event()
    yield event
    event.set()


@pytest.fixture(scope="module")
def lab(release: threading.Event) -> Lab:
    return Lab(release)


# -- tests: the matrix -----------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", _params(slow=False))
def test_a_broken_method_fails_exactly_its_clauses(
    case: tuple[Target, Hazard], backend: str, release: threading.Event
) -> None:
    judge_matrix(matrix_case(*case, backend, release), *case)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", _params(slow=True))
def test_a_hanging_method_fails_exactly_its_clauses(
    case: tuple[Target, Hazard], backend: str, lab: Lab
) -> None:
    judge_matrix(lab.trial(_id(case), backend), *case)


def test_every_method_the_suite_calls_is_in_the_matrix() -> None:
    # The suite calls every SPI method except these: descriptor() is setup (tested
    # below); inject_skills and close_processes are only checked for existence.
    not_called = {"descriptor", "inject_skills", "close_processes"}
    members = {
        name
        for protocol in vars(protocols).values()
        if isinstance(protocol, type) and getattr(protocol, "_is_protocol", False)
        if protocol not in (protocols.EventSink, protocols.DecisionCapableSink)
        for name in vars(protocol)
        if not name.startswith("_")
    }
    assert {t.name for t in TARGETS} == members - not_called


# -- tests: setup ----------------------------------------------------------------------


def _setup_failed(report: ConformanceReport, what: str) -> None:
    assert failed(report) == {"DRV-01"}, status(report)
    assert what in messages(report, "DRV-01")
    for result in report.results:
        if result.clause != "DRV-01":
            assert result.status is ClauseStatus.SKIPPED
            assert "could not be set up (see DRV-01" in result.messages[0] or (
                "there is no driver descriptor" in result.messages[0]
            ), result.messages


def _raise_factory() -> object:
    raise RuntimeError("no driver today")


def _base_factory() -> object:
    raise DriverInterrupt("no driver today")


def _none_factory() -> object:
    return None


async def _async_factory() -> object:
    return BaselineDriver()


def _object_factory() -> object:
    return object()


FACTORIES: dict[str, tuple[Callable[[], object], str]] = {
    "raise": (_raise_factory, "the factory raised builtins.RuntimeError"),
    "base": (_base_factory, "DriverInterrupt"),
    "none": (_none_factory, "the factory returned NoneType"),
    "coro": (_async_factory, "the factory returned coroutine"),
    "no-methods": (_object_factory, "object has no callable descriptor() method"),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(FACTORIES))
def test_a_broken_factory_fails_drv01_and_skips_the_rest(name: str, backend: str) -> None:
    factory, what = FACTORIES[name]
    report = well_formed(attempt(factory, options(backend)))
    _setup_failed(report, what)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_blocking_factory_is_abandoned(backend: str, lab: Lab) -> None:
    report = well_formed(lab.trial("factory-block", backend))
    _setup_failed(
        report, f"the factory did not return within {SLOW_PROBE_TIMEOUT:g} s and did not respond"
    )


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("outcome", ["raise", "none"])
def test_a_factory_failing_on_its_second_call_fails_drv02_and_cap01(
    outcome: str, backend: str
) -> None:
    calls = 0

    def factory() -> object:
        nonlocal calls
        calls += 1
        if calls == 1:
            return BaselineDriver()
        if outcome == "none":
            return None
        raise RuntimeError("only one driver per process")

    report = well_formed(attempt(factory, options(backend)))
    # Both probes that build a second instance blame it; everything else passes.
    assert failed(report) == {"DRV-02", "CAP-01"}, status(report)
    assert "the factory (call 2)" in messages(report, "DRV-02")
    assert report.result("LIV-01").status is ClauseStatus.PASSED


class _DictDescriptor(BaselineDriver):
    def descriptor(self) -> Descriptor:
        return super().descriptor().model_dump()  # type: ignore[return-value]


class _RaisingDescriptor(BaselineDriver):
    def descriptor(self) -> Descriptor:
        raise RuntimeError("no descriptor")


class _InterruptingDescriptor(BaselineDriver):
    def descriptor(self) -> Descriptor:
        raise DriverInterrupt("no descriptor")


class _AsyncDescriptor(BaselineDriver):
    async def descriptor(self) -> Descriptor:  # type: ignore[override]
        return super().descriptor()


DESCRIPTORS: dict[str, tuple[Callable[[], object], str]] = {
    "raise": (_RaisingDescriptor, "descriptor() raised builtins.RuntimeError"),
    "base": (_InterruptingDescriptor, "DriverInterrupt"),
    "wrong": (_DictDescriptor, "descriptor() returned dict, expected driver.Descriptor"),
    "coro": (_AsyncDescriptor, "descriptor() returned coroutine"),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", list(DESCRIPTORS))
def test_a_broken_descriptor_fails_drv01_and_skips_the_rest(name: str, backend: str) -> None:
    factory, what = DESCRIPTORS[name]
    _setup_failed(well_formed(attempt(factory, options(backend))), what)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_blocking_descriptor_is_abandoned(backend: str, lab: Lab) -> None:
    report = well_formed(lab.trial("descriptor-block", backend))
    _setup_failed(
        report, f"descriptor() did not return within {SLOW_PROBE_TIMEOUT:g} s and did not respond"
    )


class _DriftingDescriptor(BaselineDriver):
    """A different display name on every call."""

    def __init__(self) -> None:
        super().__init__()
        self._calls = 0

    def descriptor(self) -> Descriptor:
        self._calls += 1
        return super().descriptor().model_copy(update={"display_name": f"call {self._calls}"})


class _SecondCallRaises(_DriftingDescriptor):
    def descriptor(self) -> Descriptor:
        if self._calls:
            raise RuntimeError("once is enough")
        return super().descriptor()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("factory", "what"),
    [
        (_DriftingDescriptor, "a second descriptor() call differs from the first in display_name"),
        (_SecondCallRaises, "descriptor() (second call) raised builtins.RuntimeError"),
    ],
)
def test_a_descriptor_that_changes_later_fails_drv02_only(
    factory: Callable[[], object], what: str, backend: str
) -> None:
    only = ["DRV-01", "DRV-02", "DRV-03"]
    report = well_formed(attempt(factory, options(backend), only), only)
    assert failed(report) == {"DRV-02"}, status(report)
    assert what in messages(report, "DRV-02")


class _RaisingDescriptorProperty(BaselineDriver):
    @property
    def descriptor(self) -> Callable[[], Descriptor]:
        raise RuntimeError("attribute access fails")


def test_a_descriptor_property_that_raises_fails_drv01() -> None:
    report = well_formed(attempt(_RaisingDescriptorProperty, options("asyncio")))
    _setup_failed(report, "descriptor")


class _InterruptingCodecProperty(BaselineDriver):
    @property
    def session_codec(self) -> Callable[[], object]:  # type: ignore[override]
        raise DriverInterrupt("attribute access fails")


class _InterruptingStreamProperty(BaselineDriver):
    @property
    def stream_capability(self) -> Callable[[], object]:  # type: ignore[override]
        raise DriverInterrupt("attribute access fails")


@pytest.mark.parametrize(
    ("factory", "clause"),
    [(_InterruptingCodecProperty, "SES-01"), (_InterruptingStreamProperty, "EVT-12")],
)
def test_an_attribute_raising_a_base_exception_is_attributed(
    factory: Callable[[], object], clause: str
) -> None:
    report = well_formed(attempt(factory, options("asyncio"), [clause]), [clause])
    assert report.result(clause).status is not ClauseStatus.PASSED


# -- tests: what a run emits, and when -------------------------------------------------

HUGE_COUNT = 300_000


class _Flood(BaselineDriver):
    """300k one-character deltas in one message (the same payload object each time,
    so the test measures the suite, not pydantic)."""

    delta = "x"

    async def run(self, request: Request, sink: EventSink) -> Response:
        sink.emit_stream(StreamPayload(kind=StreamKind.RUN_STARTED))
        sink.emit_stream(StreamPayload(kind=StreamKind.TEXT_START, message_id="m"))
        tick = StreamPayload(kind=StreamKind.TEXT_CONTENT, message_id="m", delta=self.delta)
        for _ in range(HUGE_COUNT):
            sink.emit_stream(tick)
        sink.emit_stream(StreamPayload(kind=StreamKind.TEXT_END, message_id="m"))
        transcript: list[TranscriptItem] = []
        mirror_item(sink, transcript, TranscriptItem(kind=TranscriptKind.ASSISTANT, text="OK"))
        sink.emit_stream(StreamPayload(kind=StreamKind.RUN_FINISHED))
        return Response(output="OK", transcript=transcript, checkpoint=profile_checkpoint(request))


class _EmptyFlood(_Flood):
    delta = ""


LIVE_STREAM = ["LIV-01", "EVT-01", "EVT-02", "EVT-03", "EVT-04", "EVT-11", "RUN-04"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_flood_of_payloads_is_judged_and_passes(backend: str) -> None:
    trial = attempt(_Flood, options(backend), LIVE_STREAM)
    report = well_formed(trial, LIVE_STREAM)
    assert failed(report) == set(), status(report)


def test_a_flood_of_violations_is_reported_once() -> None:
    # 300k empty deltas: one folded, redacted EVT-04 message, not 300k of them.
    report = well_formed(attempt(_EmptyFlood, options("asyncio"), LIVE_STREAM), LIVE_STREAM)
    assert failed(report) == {"EVT-04"}, status(report)
    assert len(report.result("EVT-04").messages) == 1


_BACKGROUND: set[asyncio.Task[None]] = set()


def _spawn(work: Callable[[], Awaitable[None]]) -> None:
    """Start ``work`` as a task that outlives ``run``, on whichever loop runs the driver."""

    async def task() -> None:
        await work()

    if sniffio.current_async_library() == "trio":
        import trio

        trio.lowlevel.spawn_system_task(task)
    else:
        handle = asyncio.get_running_loop().create_task(task())
        _BACKGROUND.add(handle)
        handle.add_done_callback(_BACKGROUND.discard)


class _LateTask(BaselineDriver):
    """Leaves a task behind that emits after the terminal (and after run returned)."""

    forever = False

    async def run(self, request: Request, sink: EventSink) -> Response:
        response = respond(request, sink)

        async def later() -> None:
            await anyio.lowlevel.checkpoint()
            while True:
                sink.emit_stream(StreamPayload(kind=StreamKind.TEXT_START, message_id="late"))
                if not self.forever:
                    return
                await anyio.sleep(0.001)

        _spawn(later)
        return response


class _ChattyTask(_LateTask):
    forever = True


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("factory", [_LateTask, _ChattyTask])
def test_emitting_after_the_terminal_from_a_task_fails_evt02(
    factory: Callable[[], object], backend: str
) -> None:
    only = ["LIV-01", "EVT-02", "RUN-04", "CON-01"]
    report = well_formed(attempt(factory, options(backend, concurrent_runs=2), only), only)
    assert failed(report) == {"EVT-02", "CON-01"}, status(report)
    assert "after run() returned" in messages(report, "EVT-02")
    assert "EVT-02: " in messages(report, "CON-01")


class _WorkerThread(BaselineDriver):
    """Does the whole run, emissions included, in a worker thread."""

    async def run(self, request: Request, sink: EventSink) -> Response:
        return await anyio.to_thread.run_sync(respond, request, sink)


class _LateThread(BaselineDriver):
    """A thread it started emits once run has returned."""

    async def run(self, request: Request, sink: EventSink) -> Response:
        returned = threading.Event()

        def emit_later() -> None:
            returned.wait(5)
            sink.emit_stream(StreamPayload(kind=StreamKind.DROPPED))
            sink.emit_stream(StreamPayload(kind=StreamKind.RUN_FINISHED))

        threading.Thread(target=emit_later, daemon=True).start()
        response = respond(request, sink)
        returned.set()
        return response


@pytest.mark.parametrize("backend", BACKENDS)
def test_emitting_from_a_worker_thread_is_fine(backend: str) -> None:
    only = ["LIV-01", "EVT-01", "EVT-02", "EVT-03", "RUN-04", "CON-01"]
    report = well_formed(attempt(_WorkerThread, options(backend, concurrent_runs=3), only), only)
    assert failed(report) == set(), status(report)


@pytest.mark.parametrize("backend", BACKENDS)
def test_emitting_after_return_from_a_thread_fails_evt02(backend: str) -> None:
    only = ["LIV-01", "EVT-02", "RUN-04"]
    report = well_formed(attempt(_LateThread, options(backend), only), only)
    assert failed(report) == {"EVT-02"}, status(report)


class _ChattyThread(BaselineDriver):
    """Leaves a thread that emits until the test stops it."""

    def __init__(self, stop: threading.Event) -> None:
        super().__init__()
        self._stop = stop

    async def run(self, request: Request, sink: EventSink) -> Response:
        def chatter() -> None:
            while not self._stop.wait(0.001):
                sink.emit_stream(StreamPayload(kind="acme.noise"))
                sink.emit_stream(StreamPayload(kind=StreamKind.TEXT_END, message_id="nope"))

        threading.Thread(target=chatter, daemon=True).start()
        return respond(request, sink)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_thread_that_never_stops_emitting_does_not_stop_the_suite(backend: str) -> None:
    stop = threading.Event()
    try:
        only = ["LIV-01", "EVT-02", "EVT-03", "RUN-04"]
        report = well_formed(attempt(lambda: _ChattyThread(stop), options(backend), only), only)
    finally:
        stop.set()
    assert report.result("LIV-01").status is ClauseStatus.PASSED
    assert {"EVT-02", "EVT-03"} & failed(report), status(report)


class _Mutator(BaselineDriver):
    """Answers the request it got, then scribbles over every field it can reach."""

    async def run(self, request: Request, sink: EventSink) -> Response:
        response = respond(request, sink)
        request.prompt = "something else"
        request.run_id = "hijacked"
        request.streaming = not request.streaming
        request.metadata["adaptertest"] = "v2"
        request.metadata["extra"] = "1"
        request.profile_payload.session_compatibility_fingerprint = "forged"
        request.profile_payload.fingerprint = "forged"
        request.workspace.cwd = "elsewhere"
        request.output_schema = None
        return response


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_run_that_mutates_its_request_is_judged_on_what_was_sent(backend: str) -> None:
    live = [c.id for c in CLAUSES if c.mode.value == "live"]
    report = well_formed(
        attempt(
            _Mutator,
            options(backend, concurrent_runs=2, live_structured_output=True, workspace="."),
            live,
        ),
        live,
    )
    assert failed(report) == set(), status(report)
    notes = " ".join(report.result("LIV-01").notes)
    assert "run() changed the Request it was given" in notes
    assert "prompt" in notes
    assert "profile_payload" in notes


# -- tests: the baseline and the clean-up ----------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_unbroken_baseline_passes_every_clause(backend: str) -> None:
    drift = no_cli_drift(BaselineDriver)  # it runs no CLI: DFT is skipped, with the reason
    trial = attempt(
        BaselineDriver,
        options(
            backend,
            concurrent_runs=2,
            live_structured_output=True,
            strict_observation_demand=True,
            drift=drift,
        ),
    )
    report = well_formed(trial)
    assert report.ok, report.summary()
    skipped = {r.clause: r.messages[0] for r in report if r.status is ClauseStatus.SKIPPED}
    # It declares no appended system prompt, so nothing is delivered or stored (SYS-02/03).
    for clause in ("SYS-02", "SYS-03"):
        assert "does not declare system_prompt.append" in skipped.pop(clause)
    # It declares no ask mode: only HIL-09 (the sink is never asked) is judged.
    for clause in ASKING_CLAUSES:
        assert "declares no ask mode" in skipped.pop(clause)
    assert set(skipped) == set(DRIFT_CLAUSES), report.summary()
    assert all(NO_CLI_SKIP in reason for reason in skipped.values()), skipped


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_abandoned_event_loop_ends_once_the_driver_lets_go(backend: str) -> None:
    target = next(t for t in TARGETS if t.name == "check_environment")
    let_go = threading.Event()
    before = set(threading.enumerate())
    try:
        attempt(
            hostile_factory(target, Hazard.BLOCK, let_go),
            options(backend, slow=True),
            ["CAP-03", "CAP-04"],
        )
    finally:
        let_go.set()
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        left = [t for t in set(threading.enumerate()) - before if t.is_alive()]
        if not left:
            break
        time.sleep(0.05)
    assert not left, [t.name for t in left]


def _never_awaited(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if "was never awaited" in str(w.message)]


@pytest.mark.parametrize("method", ["session_codec", "to_params"])
def test_the_checkpoint_round_trip_closes_coroutines(method: str) -> None:
    target = next(t for t in TARGETS if t.name == method)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trial = attempt(
            hostile_factory(target, Hazard.CORO, threading.Event()),
            options("asyncio"),
            ["RSP-04"],
        )
        gc.collect()
    assert failed(trial.report) == {"RSP-04"}
    assert _never_awaited(caught) == []


def test_a_base_exception_leaves_no_unawaited_coroutine() -> None:
    target = next(t for t in TARGETS if t.name == "run")
    # Intermittent (about every other try): give it a fair number of chances.
    for _ in range(40):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            attempt(
                hostile_factory(target, Hazard.BASE, threading.Event()),
                options("trio", concurrent_runs=1),
                ["LIV-01", "CON-01"],
            )
            gc.collect()
        assert _never_awaited(caught) == []


# -- tests: garbage handed to the sink or returned from run ----------------------------

Emitter = Callable[[Request, EventSink], Response]


def _emits(first: Callable[[EventSink], None]) -> Emitter:
    def run(request: Request, sink: EventSink) -> Response:
        first(sink)
        return respond(request, sink)

    return run


def _returns(response: Callable[[Request, EventSink], Response]) -> Emitter:
    return response


class _Garbage(BaselineDriver):
    def __init__(self, emitter: Emitter) -> None:
        super().__init__()
        self._emitter = emitter

    async def run(self, request: Request, sink: EventSink) -> Response:
        refuse_append(BASELINE_TYPE, request)  # before the garbage: nothing may precede it
        return self._emitter(request, sink)


def _garbage_report(emitter: Emitter) -> Trial:
    live = [c.id for c in CLAUSES if c.mode.value == "live"]
    options_ = options("asyncio", concurrent_runs=2, show_live_details=True)
    return attempt(lambda: _Garbage(emitter), options_, live)


NOTHING: Any = None
NOT_A_MODEL: Any = "x"
"""Values of the wrong type, hidden from the type checker as a driver would hide them."""


class _ResponseSubclass(Response):
    """A Response subclass is still a Response."""


GARBAGE_HANDLED: dict[str, tuple[Emitter, set[str]]] = {
    "unvalidated payload with kind None": (
        _emits(lambda sink: sink.emit_stream(StreamPayload.model_construct(kind=NOTHING))),
        {"EVT-01", "CON-01"},
    ),
    "a Response subclass": (
        _returns(lambda request, sink: _ResponseSubclass(**respond(request, sink).model_dump())),
        set(),
    ),
}


@pytest.mark.parametrize("name", list(GARBAGE_HANDLED))
def test_odd_values_from_run_are_judged(name: str) -> None:
    emitter, must = GARBAGE_HANDLED[name]
    trial = _garbage_report(emitter)
    report = well_formed(trial, [r.clause for r in trial.report.results])
    assert failed(report) == must, status(report)


GARBAGE_BLAMED: dict[str, Emitter] = {
    "a dict as a stream payload": _emits(lambda sink: sink.emit_stream({"kind": "x"})),  # type: ignore[arg-type]
    "None as a stream payload": _emits(lambda sink: sink.emit_stream(None)),  # type: ignore[arg-type]
    "a str as a run event": _emits(lambda sink: sink.emit("an event")),  # type: ignore[arg-type]
    "an item event carrying a str": _emits(
        lambda sink: sink.emit(RunEvent.model_construct(type="item", item=NOT_A_MODEL))
    ),
    "an unvalidated Response with output None": _returns(
        lambda request, sink: Response.model_construct(output=NOTHING, transcript=[])
    ),
    "an unvalidated transcript holding a str": _returns(
        lambda request, sink: Response.model_construct(output="OK", transcript=[NOT_A_MODEL])
    ),
    "an unvalidated checkpoint whose state is a str": _returns(
        lambda request, sink: Response.model_construct(
            output="OK",
            transcript=[],
            checkpoint=Checkpoint.model_construct(valid=True, state=NOT_A_MODEL),
        )
    ),
}


@pytest.mark.parametrize("name", list(GARBAGE_BLAMED))
def test_garbage_from_run_is_blamed_on_the_driver(name: str) -> None:
    trial = _garbage_report(GARBAGE_BLAMED[name])
    report = well_formed(trial, [r.clause for r in trial.report.results])
    assert failed(report), status(report)
