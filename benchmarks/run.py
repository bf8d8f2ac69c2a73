"""Benchmarks of the conformance kit: ``python benchmarks/run.py [--quick] [--profile]``.

Everything is measured on this machine in this run and printed as one table, each figure
beside its target with PASS or MISS (info rows have no target):

- the stream verifier (``verify_stream_sequence`` and the incremental ``StreamVerifier``)
  on realistic streams: throughput, linearity, overhead over a bare loop, and the peak
  memory of the incremental form fed by a generator;
- the whole suite on the reference driver with every option, in-process and as the CLI;
- the format-drift probe on the Claude example driver (the replay stand-in once per run);
- the cost of ``import adaptertest`` and which heavy modules it pulls in;
- the start-up of ``python -m adaptertest replay``, the stand-in CLI a driver's hermetic
  tests start once per run (a plain transcript and a recording), and what it loads.

Timings are medians of repeated runs. Nothing here is asserted by the test suite: the
tests only run these functions at tiny sizes to prove they work.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import dataclasses
import gc
import importlib
import importlib.util
import io
import os
import platform
import pstats
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Final

from adaptertest.dft import DRIFT_CLAUSES
from adaptertest.evt import StreamVerifier, verify_stream_sequence
from adaptertest.options import Options
from adaptertest.recording import Chunk, Recording
from driver.events import StreamKind, StreamPayload
from driver.run import SessionState, Usage
from referencedriver import ReferenceConfig, ReferenceModel, new_reference_driver

# -- figures -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Figure:
    """One row of the table. ``ok`` is None for info rows and unavailable figures."""

    name: str
    shown: str
    target: str = ""
    ok: bool | None = None
    value: float | None = None
    detail: str = ""

    @property
    def result(self) -> str:
        """PASS, MISS, info (no target) or n/a (could not be measured)."""
        if self.value is None and self.shown.startswith("unavailable"):
            return "n/a"
        if self.ok is None:
            return "info"
        return "PASS" if self.ok else "MISS"


def unavailable(name: str, reason: str, target: str = "") -> Figure:
    """A figure that could not be measured in this tree, with the reason."""
    return Figure(name, f"unavailable ({reason})", target)


def render(figures: Sequence[Figure]) -> str:
    """The figures as a fixed-width table."""
    header = ("figure", "measured", "target", "result", "detail")
    rows = [(f.name, f.shown, f.target, f.result, f.detail) for f in figures]
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(4)]
    lines = []
    for row in (header, (*("-" * w for w in widths), ""), *rows):
        cells = [cell.ljust(width) for cell, width in zip(row[:4], widths, strict=True)]
        lines.append("  ".join([*cells, row[4]]).rstrip())
    return "\n".join(lines)


def rate(payloads: int, seconds: float) -> str:
    return f"{payloads / seconds / 1e6:.2f} M payloads/s"


def size_label(n: int) -> str:
    """1000 -> 1k, 1000000 -> 1M."""
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1000 and n % 1000 == 0:
        return f"{n // 1000}k"
    return str(n)


def mebibytes(size: int) -> str:
    return f"{size / 2**20:.2f} MiB"


# -- machine -------------------------------------------------------------------------------


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo, else what ``platform`` knows."""
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
        for line in cpuinfo:
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                return value.strip()
    return platform.processor() or platform.machine() or "unknown CPU"


def machine_line() -> str:
    """Date, interpreter, CPU and how busy the machine was when the run began."""
    date = datetime.now(UTC).date().isoformat()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return (
        f"{date}, Python {platform.python_version()} ({platform.python_implementation()}), "
        f"{cpu_model()}, {os.cpu_count()} logical CPUs, {platform.system()}, load average {load}"
    )


# -- realistic streams ---------------------------------------------------------------------

VENDOR_KINDS: Final = ("acme.progress", "acme.rate_limit", "vendor.heartbeat")
"""Vendor extension kinds mixed into the streams; the verifier only passes them through."""

_K = StreamKind


def _turn(t: int) -> list[StreamPayload]:
    """One agent turn, every lifecycle with new ids and closed before the turn ends.

    Reasoning on even turns; a text message interleaved with a streamed-args tool call;
    a second tool whose args arrive whole at its start, which on every fourth turn runs
    in a sub-agent scope inside the first call; vendor kinds; now and then a drop report.
    """
    p = StreamPayload
    m, a, b = f"msg-{t}", f"call-{t}-a", f"call-{t}-b"
    out = [p(kind=_K.STEP_STARTED, name="turn")]
    if t % 2 == 0:
        r = f"reasoning-{t}"
        out.append(p(kind=_K.REASONING_START, message_id=r))
        out += [
            p(kind=_K.REASONING_CONTENT, message_id=r, delta="weighing the next step ")
            for _ in range(1 + t % 3)
        ]
        out.append(p(kind=_K.REASONING_END, message_id=r))
    scoped = t % 4 == 3
    out += [
        p(kind=_K.TEXT_START, message_id=m),
        p(kind=_K.TEXT_CONTENT, message_id=m, delta="Let me look at "),
        p(kind=_K.TOOL_CALL_START, tool_call_id=a, name="Task" if scoped else "Read"),
        p(kind=_K.TEXT_CONTENT, message_id=m, delta="the module first."),
        p(kind=_K.TOOL_CALL_ARGS, tool_call_id=a, delta='{"path": '),
        p(kind=_K.TOOL_CALL_ARGS, tool_call_id=a, delta=f'"src/mod_{t}.py"}}'),
        p(kind=VENDOR_KINDS[t % 3], raw={"turn": t}),
    ]
    inner = [
        p(
            kind=_K.TOOL_CALL_START,
            tool_call_id=b,
            name="Grep",
            args={"pattern": "def ", "path": "src"},
            scope_id=f"agent-{t}" if scoped else "",
            parent_tool_call_id=a if scoped else "",
        ),
        p(
            kind=_K.TOOL_CALL_END,
            tool_call_id=b,
            scope_id=f"agent-{t}" if scoped else "",
            parent_tool_call_id=a if scoped else "",
        ),
        p(
            kind=_K.TOOL_CALL_RESULT,
            tool_call_id=b,
            result={"ok": True, "matches": t % 7},
            scope_id=f"agent-{t}" if scoped else "",
            parent_tool_call_id=a if scoped else "",
        ),
    ]
    if scoped:
        out += inner
    out += [
        p(kind=_K.TEXT_END, message_id=m),
        p(kind=_K.TOOL_CALL_END, tool_call_id=a),
        p(kind=_K.TOOL_CALL_RESULT, tool_call_id=a, result={"ok": True, "bytes": 1024 + t}),
    ]
    if not scoped:
        out += inner
    if t % 50 == 49:
        out.append(p(kind=_K.DROPPED, raw={"dropped_count": 2}))
    out += [
        p(kind=VENDOR_KINDS[(t + 1) % 3], raw={"turn": t}),
        p(kind=_K.STEP_FINISHED, name="turn"),
    ]
    return out


def realistic_stream(n: int) -> Iterator[StreamPayload]:
    """Exactly ``n`` payloads of a compliant run, built lazily (at most one turn alive)."""
    if n < 2:
        raise ValueError("a stream needs at least run.started and its terminal")
    yield StreamPayload(kind=_K.RUN_STARTED, run_id="run-1", thread_id="thread-1")
    budget = n - 2
    turn = 0
    while True:
        block = _turn(turn)
        if len(block) > budget:
            break
        yield from block
        budget -= len(block)
        turn += 1
    for j in range(budget):  # pad to the exact size with vendor kinds
        yield StreamPayload(kind=VENDOR_KINDS[j % 3], raw={"pad": j})
    yield StreamPayload(kind=_K.RUN_FINISHED, usage=Usage(input_tokens=n, output_tokens=turn))


def build_stream(n: int) -> list[StreamPayload]:
    """The stream up front, checked compliant (a benchmark of a failing stream is moot)."""
    payloads = list(realistic_stream(n))
    found = verify_stream_sequence(payloads)
    if found:
        raise RuntimeError(f"the benchmark stream is not compliant: {found[0]}")
    return payloads


# -- timed bodies --------------------------------------------------------------------------


def run_sequence(payloads: list[StreamPayload]) -> int:
    return len(verify_stream_sequence(payloads))


def run_incremental(payloads: Iterable[StreamPayload]) -> int:
    """What a sink does: feed each payload as it arrives and look at what came back."""
    verifier = StreamVerifier()
    feed = verifier.feed
    problems = 0
    for payload in payloads:
        if feed(payload):
            problems += 1
    return problems + len(verifier.finish())


def run_bare(payloads: Iterable[StreamPayload]) -> str:
    """The floor: iterate and read each payload's kind, nothing else."""
    kind = ""
    for payload in payloads:
        kind = payload.kind
    return kind


@dataclass(frozen=True)
class Timing:
    """Medians of one body over its repeats: CPU seconds (judged) and wall seconds."""

    cpu: float
    wall: float
    repeats: int


def median_seconds(body: Callable[[], object], repeats: int) -> Timing:
    """Time ``repeats`` calls, each after a full collection.

    CPU time of this process is what the per-core targets judge: it does not count the
    time the scheduler gave to other processes, which wall time does on a busy machine.
    """
    cpu, wall = [], []
    for _ in range(repeats):
        gc.collect()
        start_cpu, start = time.process_time(), time.perf_counter()
        body()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return Timing(statistics.median(cpu), statistics.median(wall), repeats)


def calibration_loop(n: int) -> int:
    total = 0
    for i in range(n):
        total += i
    return total


def calibration_figure(repeats: int) -> Figure:
    """How fast this interpreter runs a trivial loop, to scale the figures to a machine."""
    n = 1_000_000
    timing = median_seconds(partial(calibration_loop, n), repeats)
    return Figure(
        "calibration: trivial Python loop",
        f"{timing.cpu / n * 1e9:.1f} ns/iteration",
        value=timing.cpu / n,
        detail=f"'total += i' over range(); median of {repeats}",
    )


def repeats_for(n: int, repeats: int) -> int:
    """More repeats for small streams, so that each figure rests on enough work."""
    return max(repeats, min(41, 2_000_000 // n))


@contextlib.contextmanager
def frozen_heap() -> Iterator[None]:
    """Move what exists now (the pre-built streams) out of the collector's sight.

    Otherwise full collections triggered by the verifier's own allocations would also
    walk millions of benchmark payloads, a cost no real sink pays.
    """
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@dataclass(frozen=True)
class MemoryPeak:
    peak: int
    tracked: int


def incremental_peak(n: int) -> MemoryPeak:
    """tracemalloc peak while a generator feeds ``n`` payloads to a StreamVerifier."""
    gc.collect()
    tracemalloc.start()
    try:
        verifier = StreamVerifier()
        feed = verifier.feed
        for payload in realistic_stream(n):
            feed(payload)
        verifier.finish()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return MemoryPeak(peak, verifier.tracked_count)


def generator_peak(n: int) -> int:
    """tracemalloc peak of the generator alone (the bare loop): the memory floor."""
    gc.collect()
    tracemalloc.start()
    try:
        run_bare(realistic_stream(n))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak


# -- stream figures ------------------------------------------------------------------------

MIN_RATE: Final = 1_000_000.0
MAX_OVERHEAD: Final = 10.0
LINEAR_SLACK: Final = 1.1
MAX_MEMORY_GROWTH: Final = 2.0

FORMS: Final[tuple[tuple[str, Callable[[list[StreamPayload]], object]], ...]] = (
    ("verify_stream_sequence", run_sequence),
    ("StreamVerifier.feed", run_incremental),
)


def time_forms(n: int, repeats: int) -> tuple[Timing, dict[str, Timing]]:
    """Timings of the bare loop and of each form over one pre-built stream."""
    payloads = build_stream(n)
    with frozen_heap():
        bare = median_seconds(partial(run_bare, payloads), repeats)
        took = {form: median_seconds(partial(body, payloads), repeats) for form, body in FORMS}
    return bare, took


def stream_figures(sizes: Sequence[int], repeats: int) -> list[Figure]:
    """Throughput, overhead and linearity of both forms; memory of the incremental one.

    ``sizes`` is (small, middle, large): linearity compares large with middle, memory
    large with small.
    """
    middle, large = sizes[1], sizes[2]
    figures: list[Figure] = [calibration_figure(repeats)]
    medians: dict[tuple[str, int], float] = {}
    for n in sizes:
        bare, timings = time_forms(n, repeats_for(n, repeats))
        for form, timing in timings.items():
            took = medians[form, n] = timing.cpu
            figures.append(
                Figure(
                    f"{form} {size_label(n)}: throughput",
                    rate(n, took),
                    ">= 1.00 M payloads/s",
                    n / took >= MIN_RATE,
                    n / took,
                    f"median of {timing.repeats}: {took * 1e3:.1f} ms CPU, "
                    f"{timing.wall * 1e3:.1f} ms wall",
                )
            )
            figures.append(
                Figure(
                    f"{form} {size_label(n)}: time / bare loop",
                    f"{took / bare.cpu:.2f}x",
                    f"<= {MAX_OVERHEAD:.0f}x",
                    took / bare.cpu <= MAX_OVERHEAD,
                    took / bare.cpu,
                    f"bare loop {rate(n, bare.cpu)}",
                )
            )
    limit = LINEAR_SLACK * large / middle
    for form, _ in FORMS:
        ratio = medians[form, large] / medians[form, middle]
        figures.append(
            Figure(
                f"{form}: time({size_label(large)}) / time({size_label(middle)})",
                f"{ratio:.2f}x",
                f"<= {limit:.1f}x",
                ratio <= limit,
                ratio,
                "linearity, CPU-time medians",
            )
        )
    figures += memory_figures(sizes)
    return figures


def memory_figures(sizes: Sequence[int]) -> list[Figure]:
    small, large = sizes[0], sizes[-1]
    peaks = {n: incremental_peak(n) for n in sizes}
    floor = generator_peak(small)
    figures = [
        Figure(
            f"StreamVerifier {size_label(n)}: peak memory (generator-fed)",
            mebibytes(peaks[n].peak),
            ok=None,
            value=float(peaks[n].peak),
            detail=f"{peaks[n].tracked} ids tracked, "
            f"{(peaks[n].peak - floor) / max(peaks[n].tracked, 1):.0f} B per id above the floor",
        )
        for n in sizes
    ]
    figures.append(
        Figure(
            f"generator alone {size_label(small)}: peak memory",
            mebibytes(floor),
            value=float(floor),
            detail="the floor: payloads built and dropped one turn at a time",
        )
    )
    growth = peaks[large].peak / peaks[small].peak
    figures.append(
        Figure(
            f"StreamVerifier: peak({size_label(large)}) / peak({size_label(small)})",
            f"{growth:.1f}x",
            f"<= {MAX_MEMORY_GROWTH:.0f}x",
            growth <= MAX_MEMORY_GROWTH,
            growth,
            "tracemalloc",
        )
    )
    return figures


# -- the whole suite -----------------------------------------------------------------------

SUITE_TARGET: Final = 1.0
CLI_TARGET: Final = 1.5
CLI_ARGS: Final = ("-m", "adaptertest", "check", "referencedriver:new_reference_driver", "--live")
CONCURRENT_RUNS: Final = 4


def full_options(model: ReferenceModel | None = None) -> Options:
    """Options turning every probe on for the reference driver (each clause is judged);
    ``model`` is the scripted model whose requests SYS-02 reads."""
    keys = ("cwd", "workspace_id")
    seed = SessionState(
        resume_id="bench-session", data={"cwd": "workspace-a", "workspace_id": "ws-1"}
    )
    return Options(
        config=ReferenceConfig(),
        expect_reject_foreign_config=True,
        sync_skills_probe=True,
        expected_detected_model="reference-1",
        required_config_fields=("model", "cwd"),
        session_state=seed,
        session_keys=keys,
        guard_keys=keys,
        live_run=True,
        live_structured_output=True,
        concurrent_runs=CONCURRENT_RUNS,
        strict_observation_demand=True,
        model_requests=None if model is None else model.requests_so_far,
        # The factory is a lambda (it shares the scripted model); the fresh interpreter
        # rebuilds the driver by this name to recompute the guard and the fingerprint.
        factory_ref="referencedriver:new_reference_driver",
    )


def live_missing() -> str | None:
    """Why the live probes cannot run in this tree, or None when they are there."""
    for module, name in (
        ("adaptertest.liv", "probe_live_run"),
        ("adaptertest.liv", "probe_live_structured_output"),
        ("adaptertest.con", "probe_concurrent_runs"),
    ):
        try:
            found = hasattr(importlib.import_module(module), name)
        except Exception as exc:  # noqa: BLE001 - a half-written module is a reason, not a crash
            return f"{module} does not import: {type(exc).__name__}: {exc}"
        if not found:
            return f"{module}.{name} is missing"
    return None


def check_once() -> tuple[float, list[str]]:
    """One check_driver call with every option: its seconds and the clauses not passed."""
    from adaptertest._suite import check_driver

    model = ReferenceModel()
    options = full_options(model)
    start = time.perf_counter()
    report = check_driver(lambda: new_reference_driver(model=model), options)
    took = time.perf_counter() - start
    return took, [f"{r.clause} {r.status.value}" for r in report if r.status.value != "passed"]


def suite_figures(repeats: int, cold_repeats: int) -> list[Figure]:
    """check_driver in this process (median) and its first call in fresh processes."""
    name = f"check_driver, every option, concurrent_runs={CONCURRENT_RUNS}"
    target = f"< {SUITE_TARGET:.1f} s"
    missing = live_missing()
    if missing is not None:
        return [unavailable(name, missing, target)]
    runs = [check_once() for _ in range(repeats)]
    # The drift clauses need a driver that runs a CLI: the reference skips them (see drift).
    # The scenario clauses need a model binding: their battery is timed on its own
    # (benchmarks/scenarios.py), so the whole-suite figure leaves them skipped.
    from adaptertest.clauses import CLAUSES, Mode

    apart = (*(f"{c.id} " for c in CLAUSES if c.mode is Mode.SCENARIO), "DFT-")
    not_passed = [entry for entry in runs[-1][1] if not entry.startswith(apart)]
    if any(" skipped" in entry for entry in not_passed):
        return [unavailable(name, f"not every clause judged: {', '.join(not_passed)}", target)]
    took = statistics.median(t for t, _ in runs)
    detail = f"median of {repeats} in one process; first {runs[0][0]:.3f} s"
    if not_passed:
        detail += f"; not passed: {', '.join(not_passed)}"
    figures = [Figure(name, f"{took:.3f} s", target, took < SUITE_TARGET, took, detail)]
    if cold_repeats:
        cold = [first_check_in_fresh_process() for _ in range(cold_repeats)]
        failed = [c for c in cold if isinstance(c, str)]
        if failed:
            figures.append(unavailable("check_driver, first call in a fresh process", failed[0]))
        else:
            seconds = statistics.median(c for c in cold if isinstance(c, float))
            figures.append(
                Figure(
                    "check_driver, first call in a fresh process",
                    f"{seconds:.3f} s",
                    value=seconds,
                    detail=f"median of {cold_repeats}; adds lazy imports and first-use setup",
                )
            )
    return figures


def fresh_check_figures(repeats: int) -> list[Figure]:
    """The SES-05/CAP-01 fresh-interpreter check: cached after the first suite run of a
    factory, so the median above leaves it out; here its cache is cleared before each run."""
    from adaptertest import _fresh

    runs: list[float] = []
    child: list[float] = []
    for _ in range(repeats):
        _fresh._cache.clear()
        runs.append(check_once()[0])
        child += [f.result().elapsed for f in _fresh._cache.values() if f.done()]
    took = statistics.median(runs)
    name = "check_driver, every option, fresh-interpreter check uncached"
    detail = f"median of {repeats}; the fresh interpreter alone: median "
    detail += f"{statistics.median(child):.3f} s (it runs beside the probes)" if child else "n/a"
    off = dataclasses.replace(full_options(), fresh_process=False)
    start = time.perf_counter()
    check_driver_off(off)
    without = time.perf_counter() - start
    return [
        Figure(name, f"{took:.3f} s", f"< {SUITE_TARGET:.1f} s", took < SUITE_TARGET, took, detail),
        Figure(
            "check_driver, every option, Options(fresh_process=False)",
            f"{without:.3f} s",
            value=without,
            detail="one run",
        ),
    ]


def check_driver_off(options: Options) -> None:
    from adaptertest._suite import check_driver

    check_driver(new_reference_driver, options)


def first_check_in_fresh_process() -> float | str:
    """Seconds of the first check_driver call in a new interpreter, or why it failed."""
    proc = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--child-first-check"],
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        return float(proc.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return f"exit {proc.returncode}: {tail}"


def cli_figures(repeats: int) -> list[Figure]:
    """``python -m adaptertest check referencedriver:new_reference_driver --live``, whole."""
    name = "CLI check --live, whole process"
    target = f"< {CLI_TARGET:.1f} s"
    for module in ("adaptertest.__main__", "adaptertest.cli"):
        if importlib.util.find_spec(module) is None:
            return [unavailable(name, f"{module} is missing", target)]
    took, proc = time_cli(repeats)
    if proc.returncode not in (0, 1):
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return [unavailable(name, f"exit {proc.returncode}: {tail}", target)]
    summary = (proc.stdout.strip().splitlines() or [""])[-1].strip()
    figures = [
        Figure(
            name,
            f"{took:.3f} s",
            target,
            took < CLI_TARGET,
            took,
            f"median of {repeats}; {summary}",
        )
    ]
    quiet, _ = time_cli(repeats, {"HYPOTHESIS_NO_PLUGINS": "1"})
    figures.append(
        Figure(
            "CLI check --live, HYPOTHESIS_NO_PLUGINS=1",
            f"{quiet:.3f} s",
            value=quiet,
            detail="what skipping hypothesis' plugin entry points (trio's, which imports "
            "pytest) would save",
        )
    )
    imports = import_profile([*CLI_ARGS])
    if imports is not None:
        total, top = imports
        figures.append(
            Figure(
                "CLI check --live, of which imports",
                f"{total:.3f} s",
                value=total,
                detail="-X importtime, largest: "
                + ", ".join(f"{mod} {sec:.2f}" for mod, sec in top),
            )
        )
    return figures


def time_cli(
    repeats: int, env: dict[str, str] | None = None
) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Median wall seconds of the whole CLI process, and its last run."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, *CLI_ARGS],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, **(env or {})},
        )
        times.append(time.perf_counter() - start)
        if proc.returncode not in (0, 1):
            break
    return statistics.median(times), proc


# -- format drift --------------------------------------------------------------------------

DRIFT_TARGET: Final = 5.0
DRIFT_VARIANTS: Final = 25
DRIFT_RECORDINGS: Final = ("success.jsonl", "tool_use.jsonl")
CLAUDE_DRIVER: Final = Path(__file__).resolve().parents[1] / "examples" / "claude_driver"


@dataclass(frozen=True)
class DriftProbe:
    """One drift probe: wall seconds, driver runs, CPU seconds of this process and of the
    replay processes, and the clauses not passed."""

    wall: float
    runs: int
    cpu: float
    replay_cpu: float
    not_passed: list[str]


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def drift_probe(max_examples: int) -> DriftProbe:
    """One drift probe of the Claude example driver on its two recordings, with
    ``max_examples`` variants per recording and clause."""
    if str(CLAUDE_DRIVER) not in sys.path:
        sys.path.insert(0, str(CLAUDE_DRIVER))
    from adaptertest._suite import check_driver
    from adaptertest.options import Drift
    from claude_driver import ClaudeConfig, ClaudeDriver

    def around(command: tuple[str, ...]) -> ClaudeDriver:
        return ClaudeDriver(ClaudeConfig(command=command))

    recordings = [CLAUDE_DRIVER / "recordings" / name for name in DRIFT_RECORDINGS]
    drift = Drift(recordings=recordings, driver=around, max_examples=max_examples)
    cpu, children = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    report = check_driver(lambda: around(("claude",)), Options(drift=drift), only=DRIFT_CLAUSES)
    took = time.perf_counter() - start
    notes = report.results[0].notes
    runs = sum(int(m.group(1)) for n in notes if (m := re.search(r"(\d+) driver runs", n)))
    return DriftProbe(
        took,
        runs,
        _cpu(resource.RUSAGE_SELF) - cpu,
        _cpu(resource.RUSAGE_CHILDREN) - children,
        [f"{r.clause} {r.status.value}" for r in report if r.status.value != "passed"],
    )


def drift_figures(variants: int = DRIFT_VARIANTS) -> list[Figure]:
    """A drift probe with ``variants`` variants of each of two recordings (a third of them
    per clause) on the Claude example driver: one replay stand-in process per run."""
    name = f"drift probe, {variants} variants of each of 2 recordings"
    target = f"< {DRIFT_TARGET:.0f} s"
    if not (CLAUDE_DRIVER / "claude_driver").is_dir():
        return [unavailable(name, "the Claude example driver is missing", target)]
    per_clause = max(1, round(variants / len(DRIFT_CLAUSES)))
    probe = drift_probe(per_clause)
    runs = max(probe.runs, 1)
    detail = (
        f"{probe.runs} driver runs (variants: {per_clause} per clause and recording; plus the "
        f"baselines), {probe.wall / runs * 1e3:.0f} ms each; CPU per run: "
        f"{probe.replay_cpu / runs * 1e3:.0f} ms in the replay process, "
        f"{probe.cpu / runs * 1e3:.0f} ms in the suite and the driver"
    )
    if probe.not_passed:
        detail += f"; not passed: {', '.join(probe.not_passed)}"
    shown, within = f"{probe.wall:.2f} s", probe.wall < DRIFT_TARGET
    return [Figure(name, shown, target, within, probe.wall, detail)]


# -- import cost ---------------------------------------------------------------------------

IMPORT_TARGET: Final = 0.2
HEAVY: Final = ("pytest", "_pytest", "hypothesis", "jsonschema", "rich")
"""Must not be imported by a plain ``import adaptertest``."""
NOTABLE: Final = ("pydantic", "anyio", "trio", "driver", "referencedriver", "asyncio")
"""Reported, not judged: costly but not forbidden."""


def wall(args: Sequence[str]) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, capture_output=True)
    return time.perf_counter() - start


def import_profile(args: Sequence[str]) -> tuple[float, list[tuple[str, float]]] | None:
    """(total import seconds, the four largest top-level imports) under -X importtime."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *args], capture_output=True, text=True, check=False
    )
    top: dict[str, float] = {}
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        _, cumulative, name = line.split("|", 2)
        if name[1:].startswith(" ") or not cumulative.strip().isdigit():
            continue  # nested: already counted in its importer's cumulative time
        top[name.strip()] = top.get(name.strip(), 0.0) + int(cumulative) / 1e6
    if not top:
        return None
    largest = sorted(top.items(), key=lambda item: item[1], reverse=True)[:4]
    return sum(top.values()), largest


def heavy_modules(names: Iterable[str]) -> tuple[list[str], list[str]]:
    """(forbidden heavy packages, notable packages) among imported module names."""
    packages = {name.partition(".")[0] for name in names}
    return (
        [m for m in HEAVY if m in packages],
        [m for m in NOTABLE if m in packages],
    )


def import_figures(repeats: int) -> list[Figure]:
    """``import adaptertest`` in a fresh interpreter, and what it drags in."""
    bare, loaded = [], []
    for _ in range(repeats):  # interleaved, so drift hits both alike
        bare.append(wall(["-c", "pass"]))
        loaded.append(wall(["-c", "import adaptertest"]))
    cost = statistics.median(loaded) - statistics.median(bare)
    figures = [
        Figure(
            "import adaptertest (fresh process)",
            f"{cost * 1e3:.1f} ms",
            f"< {IMPORT_TARGET * 1e3:.0f} ms",
            cost < IMPORT_TARGET,
            cost,
            f"median of {repeats}: {statistics.median(loaded) * 1e3:.1f} ms minus "
            f"{statistics.median(bare) * 1e3:.1f} ms for python -c pass",
        )
    ]
    proc = subprocess.run(
        [sys.executable, "-c", "import adaptertest, sys; print('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
    )
    names = proc.stdout.split()
    forbidden, notable = heavy_modules(names)
    figures.append(
        Figure(
            "import adaptertest: heavy modules loaded",
            ", ".join(forbidden) or "none",
            f"none of {', '.join(m for m in HEAVY if m != '_pytest')}",
            not forbidden,
            float(len(forbidden)),
            f"{len(names)} modules in sys.modules; also loaded: {', '.join(notable) or 'none'}",
        )
    )
    return figures


# -- replay start-up ------------------------------------------------------------------------

REPLAY_TARGET: Final = 0.015
"""CPU seconds ``python -m adaptertest replay`` takes above a bare interpreter."""
REPLAY_AVOIDS: Final = ("typing", "argparse", "pathlib", "json", *HEAVY, *NOTABLE)
"""Not loaded on the way to a plain transcript's first byte (judged)."""
SAMPLE_LINES: Final = (
    b'{"type":"system","subtype":"init","session_id":"s-1"}\n',
    b'{"type":"assistant","message":{"content":[{"type":"text","text":"OK"}]}}\n',
    b'{"type":"result","subtype":"success","result":"OK"}\n',
)


def replay_files(folder: str) -> tuple[str, str]:
    """A plain three-line transcript and the same run as a recording, written to ``folder``."""
    plain = os.path.join(folder, "plain.jsonl")
    with open(plain, "wb") as file:
        file.write(b"".join(SAMPLE_LINES))
    recorded = os.path.join(folder, "recorded.jsonl")
    chunks = [Chunk(0.1 * i, 1, line) for i, line in enumerate(SAMPLE_LINES)]
    with open(recorded, "wb") as file:
        file.write(Recording(argv=["agent"], chunks=chunks, exit_code=0).dumps())
    return plain, recorded


def bytecode_env(cache: str | None) -> dict[str, str]:
    """This environment with bytecode cached in ``cache`` (None: no bytecode cache at all).

    A cache folder of the benchmark's own keeps ``__pycache__`` out of the source tree
    and makes the figure independent of a PYTHONDONTWRITEBYTECODE set for this shell.
    """
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE",)}
    if cache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    else:
        env["PYTHONPYCACHEPREFIX"] = cache
    return env


def child_seconds(
    commands: dict[str, list[str]], env: dict[str, str], repeats: int
) -> dict[str, Timing]:
    """Median CPU and wall seconds of each command's process, runs interleaved.

    CPU time (user + system, from the children's resource usage) is what start-up costs
    the machine, and unlike wall time it barely moves when other processes compete.
    """
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    wall: dict[str, list[float]] = {name: [] for name in commands}
    for command in commands.values():  # warm up: caches filled, files in memory
        subprocess.run(command, env=env, capture_output=True, check=True)
    for _ in range(repeats):
        for name, command in commands.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(command, env=env, capture_output=True, check=True)
            wall[name].append(time.perf_counter() - start)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu[name].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return {
        name: Timing(statistics.median(cpu[name]), statistics.median(wall[name]), repeats)
        for name in commands
    }


def replay_figures(repeats: int) -> list[Figure]:
    """Start-up of the replay stand-in over a bare interpreter, and the modules it loads."""
    target = f"< {REPLAY_TARGET * 1e3:.0f} ms"
    with tempfile.TemporaryDirectory() as folder:
        plain, recorded = replay_files(folder)
        replay = [sys.executable, "-m", "adaptertest", "replay"]
        commands = {
            "bare": [sys.executable, "-c", "pass"],
            "plain": [*replay, plain],
            "recording": [*replay, recorded],
        }
        cached = child_seconds(commands, bytecode_env(os.path.join(folder, "pyc")), repeats)
        uncached = child_seconds(commands, bytecode_env(None), repeats)
        probe = (
            "import sys\n"
            "from adaptertest.__main__ import main\n"
            f"main(['replay', {plain!r}])\n"
            "sys.stderr.write(' '.join(sys.modules))\n"
        )
        loaded = subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=True
        ).stderr.split()
    figures = []
    bare = cached["bare"]
    for form in ("plain", "recording"):
        cost = cached[form].cpu - bare.cpu
        figures.append(
            Figure(
                f"replay start-up, {form}",
                f"{cost * 1e3:.1f} ms CPU",
                target,
                cost < REPLAY_TARGET,
                cost,
                f"median of {repeats}, bytecode cached: {cached[form].cpu * 1e3:.1f} ms minus "
                f"{bare.cpu * 1e3:.1f} ms for python -c pass; wall "
                f"{(cached[form].wall - bare.wall) * 1e3:.1f} ms above it",
            )
        )
    cost = uncached["plain"].cpu - uncached["bare"].cpu
    figures.append(
        Figure(
            "replay start-up, plain, no bytecode cache",
            f"{cost * 1e3:.1f} ms CPU",
            value=cost,
            detail="PYTHONDONTWRITEBYTECODE=1: the kit's modules compiled at each start",
        )
    )
    packages = {name.partition(".")[0] for name in loaded}
    found = [m for m in REPLAY_AVOIDS if m in packages]
    figures.append(
        Figure(
            "replay: modules it avoids, loaded",
            ", ".join(found) or "none",
            "none",
            not found,
            float(len(found)),
            f"{len(loaded)} modules in sys.modules; avoided: {', '.join(REPLAY_AVOIDS[:4])}, "
            "and the kit's heavy dependencies",
        )
    )
    return figures


# -- profile -------------------------------------------------------------------------------


def profile_verifier(payloads: list[StreamPayload], top: int = 14) -> str:
    """cProfile of verify_stream_sequence over ``payloads``, sorted by own time."""
    profiler = cProfile.Profile()
    profiler.enable()
    verify_stream_sequence(payloads)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).strip_dirs().sort_stats("tottime").print_stats(top)
    return out.getvalue()


# -- command line --------------------------------------------------------------------------

FULL_SIZES: Final = (10_000, 100_000, 1_000_000)
QUICK_SIZES: Final = (2_000, 20_000, 200_000)
SECTIONS: Final = ("streams", "suite", "cli", "import", "replay", "drift")


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Benchmarks of the driver conformance kit.")
    parser.add_argument("--quick", action="store_true", help="sizes 2k/20k/200k and fewer repeats")
    parser.add_argument(
        "--only", action="append", choices=SECTIONS, help="run only this section (repeatable)"
    )
    parser.add_argument(
        "--profile", action="store_true", help="also print a cProfile of the verifier"
    )
    parser.add_argument("--child-first-check", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    ns = parse(argv)
    if ns.child_first_check:
        print(f"{check_once()[0]:.6f}")
        return 0
    sections = ns.only or SECTIONS
    sizes = QUICK_SIZES if ns.quick else FULL_SIZES
    repeats = 3 if ns.quick else 5
    print(f"benchmarks: {machine_line()}; {'quick' if ns.quick else 'full'} sizes")
    figures: list[Figure] = []
    for section in SECTIONS:
        if section not in sections:
            continue
        print(f"  running {section} ...", file=sys.stderr, flush=True)
        if section == "streams":
            figures += stream_figures(sizes, repeats)
        elif section == "suite":
            figures += suite_figures(repeats, repeats)
            figures += fresh_check_figures(repeats)
        elif section == "cli":
            figures += cli_figures(repeats)
        elif section == "replay":
            figures += replay_figures(21 if not ns.quick else 9)
        elif section == "drift":
            figures += drift_figures()
        else:
            figures += import_figures(7 if not ns.quick else 5)
    print(render(figures))
    if ns.profile:
        print()
        print(f"cProfile of verify_stream_sequence, {size_label(sizes[1])} payloads:")
        print(profile_verifier(build_stream(sizes[1])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
