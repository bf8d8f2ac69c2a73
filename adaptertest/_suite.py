"""The suite engine: set the driver up, run each probe once, judge every clause.

Both entry points stand on it: :func:`check_driver` runs every probe and returns a
report; :func:`adaptertest.test_driver` asks it for one clause at a time, so
``pytest -k SES-04`` runs only the probe that judges SES-04.
"""

from __future__ import annotations

import dataclasses
import inspect
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import anyio.lowlevel
from pydantic import BaseModel, SecretBytes, SecretStr

from adaptertest._calls import (
    CallRunner,
    Outcome,
    describe_error,
    describe_hang,
    driver_traceback,
)
from adaptertest._fresh import start_for
from adaptertest._imports import import_attr
from adaptertest._probe import ProbeAbort, ProbeContext, ProbeRecord, ReturnWatch
from adaptertest._runinfo import now_utc, run_info
from adaptertest._screen import SECRET_MASK, ordered, screen
from adaptertest._violation import render
from adaptertest.clauses import CLAUSE_BY_ID, CLAUSES, PROBES, clause_ids
from adaptertest.options import Options
from adaptertest.rcv import verify_returned
from adaptertest.report import ClauseResult, ClauseStatus, ConformanceReport, RunInfo
from driver.descriptor import Descriptor

Probe = Callable[[ProbeContext], None]

LAST_LOOK_WINDOW = 3.0
"""Seconds the last look at a returned response waits, at most, for what its run left
running (a reaper task, a background flush) before it compares."""

PROBE_FUNCTIONS: dict[str, tuple[str, str]] = {
    "descriptor": ("adaptertest.drv", "probe_descriptor"),
    "config": ("adaptertest.cfg", "probe_config"),
    "capability_declarations": ("adaptertest.cap", "probe_capability_declarations"),
    "environment": ("adaptertest.cap", "probe_environment"),
    "models": ("adaptertest.cap", "probe_models"),
    "detect_model": ("adaptertest.cap", "probe_detect_model"),
    "profile": ("adaptertest.cap", "probe_profile"),
    "quota": ("adaptertest.cap", "probe_quota"),
    "config_schema": ("adaptertest.cap", "probe_config_schema"),
    "skills": ("adaptertest.cap", "probe_skills"),
    "stream_capability": ("adaptertest.cap", "probe_stream_capability"),
    "session_codec": ("adaptertest.ses", "probe_session_codec"),
    "live_run": ("adaptertest.liv", "probe_live_run"),
    "live_structured_output": ("adaptertest.liv", "probe_live_structured_output"),
    "concurrent_runs": ("adaptertest.con", "probe_concurrent_runs"),
    "drift": ("adaptertest.dft", "probe_drift"),
    "fresh_process": ("adaptertest.ses", "probe_fresh_process"),
    "system_prompt": ("adaptertest.sysprompt", "probe_system_prompt"),
    "hitl": ("adaptertest.hil", "probe_hitl"),
    "scenario_tools": ("adaptertest.tol", "probe_scenario_tools"),
    "scenario_reasoning": ("adaptertest.rsn", "probe_scenario_reasoning"),
    "scenario_resume": ("adaptertest.res", "probe_scenario_resume"),
    "scenario_faults": ("adaptertest.flt", "probe_scenario_faults"),
    "scenario_deadline": ("adaptertest.dln", "probe_scenario_deadline"),
    "scenario_input": ("adaptertest.inp", "probe_scenario_input"),
    "scenario_output": ("adaptertest.out", "probe_scenario_output"),
}
"""Probe name -> (family module, function): where the code that judges it lives.

Resolved on first use, so ``pytest -k SES-04`` imports only what that clause needs.
"""


def probe_function(name: str) -> Probe:
    """The function that runs probe ``name`` (imported on first use)."""
    module, attr = PROBE_FUNCTIONS[name]
    function: Probe = import_attr(module, attr)
    return function


class Suite:
    """One suite run against one factory; probes run lazily, at most once each."""

    def __init__(self, factory: Callable[[], object], options: Options) -> None:
        if not callable(factory):
            raise TypeError(f"factory must be callable, got {type(factory).__qualname__}")
        if not isinstance(options, Options):
            raise TypeError(
                f"options must be adaptertest.Options, got {type(options).__qualname__}"
            )
        self.factory = factory
        self.options = options
        self.runner = CallRunner(options.backend)
        self._lock = threading.RLock()
        self._setup_done = False
        self._setup_error: str | None = None
        self._setup_notes: list[str] = []
        self._driver: object = None
        self._descriptor: Descriptor | None = None
        self._records: dict[str, tuple[ProbeRecord, float]] = {}
        self._secrets = _collect_secrets(options)
        self.started_at = now_utc()

    # -- setup ----------------------------------------------------------------------------

    def _setup(self) -> None:
        if self._setup_done:
            return
        self._setup_done = True
        timeout = self.options.probe_timeout
        made = self.runner.call(self.factory, timeout=timeout, awaitable=False)
        if made.timed_out or made.error is not None:
            self._setup_failed("the factory", made)
            return
        if made.value is None or inspect.isawaitable(made.value):
            self._setup_error = (
                f"the factory returned {type(made.value).__qualname__} instead of a driver"
            )
            return
        self._driver = made.value
        # A property may raise or hang: even the lookup is a bounded call.
        found = self.runner.call(getattr, self._driver, "descriptor", None, timeout=timeout)
        descriptor = found.value if found.ok else None
        if not callable(descriptor):
            self._setup_error = (
                f"{type(self._driver).__qualname__} has no callable descriptor() method"
            )
            return
        got = self.runner.call(descriptor, timeout=timeout, awaitable=False)
        if got.timed_out or got.error is not None:
            self._setup_failed("descriptor()", got)
        elif not isinstance(got.value, Descriptor):
            self._setup_error = (
                f"descriptor() returned {type(got.value).__qualname__}, expected driver.Descriptor"
            )
        else:
            self._descriptor = got.value

    def _setup_failed(self, label: str, outcome: Outcome) -> None:
        """Record why the setup call ``label`` failed: a hang, or where it raised."""
        if outcome.error is None:
            self._setup_error = describe_hang(label, outcome, self.options.probe_timeout)
            return
        # Setup runs no provider: the exception's message is shown in full.
        self._setup_error = render(describe_error(label, outcome.error), show=True)
        if self.options.show_live_details:
            self._setup_notes.append(f"driver traceback:\n{driver_traceback(outcome.error)}")

    @property
    def driver_type(self) -> str:
        """The descriptor's type once set up, with secrets masked; "" before or on failure."""
        return self.scrub(self._descriptor.type) if self._descriptor is not None else ""

    # -- probes ---------------------------------------------------------------------------

    def run_probe(self, name: str) -> tuple[ProbeRecord, float]:
        """Run probe ``name`` (once) and return its record and duration."""
        with self._lock:
            if name not in self._records:
                self._records[name] = self._run_probe(name)
            return self._records[name]

    def _run_probe(self, name: str) -> tuple[ProbeRecord, float]:
        start = time.perf_counter()
        self._setup()
        clauses = [c.id for c in CLAUSES if name in c.probes]
        if self._descriptor is None:
            record = ProbeRecord()
            if name == "descriptor":
                record.violations["DRV-01"] = [f"DRV-01: {self._setup_error}"]
                record.judged.add("DRV-01")
                record.clause_notes["DRV-01"] = list(self._setup_notes)
                reason = "not judged: there is no driver descriptor to check (see DRV-01)"
                for clause in clauses:
                    record.skipped.setdefault(clause, f"{clause} {reason}")
            else:
                for clause in clauses:
                    record.skipped[clause] = (
                        f"{clause} not judged: the driver could not be set up (see DRV-01: "
                        f"{self._setup_error})"
                    )
            return record, time.perf_counter() - start
        ctx = ProbeContext(
            name=name,
            factory=self.factory,
            driver=self._driver,
            descriptor=self._descriptor,
            options=self.options,
            runner=self.runner,
        )
        try:
            probe_function(name)(ctx)
        except ProbeAbort:
            pass
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt):
                raise
            detail = describe_error(f"the suite's {name} probe", exc)
            for clause in clauses:
                if clause not in ctx.record.judged and clause not in ctx.record.skipped:
                    ctx.fail(clause, f"could not be judged: {detail} (please report this)")
        return ctx.record, time.perf_counter() - start

    # -- verdicts -------------------------------------------------------------------------

    def clause_result(self, clause_id: str) -> ClauseResult:
        """Judge one clause, running the probes it needs."""
        clause = CLAUSE_BY_ID[clause_id]
        records = [(p, *self.run_probe(p)) for p in clause.probes]
        messages: list[str] = []
        notes: list[str] = []
        skips: list[str] = []
        judged = False
        duration = 0.0
        # The fresh-process probe only adds to what another probe judges; its messages
        # say where they come from themselves.
        shared = len([p for p, _, _ in records if p not in _UNTAGGED]) > 1
        for probe, record, took in records:
            duration += took
            for message in record.messages(clause_id):
                # A clause two probes judge says which probe saw each violation.
                tagged = shared and probe not in _UNTAGGED
                messages.append(_tag(message, clause_id, probe) if tagged else message)
            judged = judged or clause_id in record.judged
            notes.extend(record.notes)
            notes.extend(record.clause_notes.get(clause_id, ()))
            for watch in record.watches:
                later = watch.sink.late_count - watch.counted
                if watch.clause == clause_id and later > 0:
                    messages.append(
                        f"{clause_id}: {watch.label}{later} more emission(s) reached the sink "
                        "after the run was judged: a driver must not keep its sink once "
                        "run() returns"
                    )
            for returned in record.returns:
                if returned.clause == clause_id:
                    found = self._look_again(returned)
                    messages += [_tag(m, clause_id, probe) if shared else m for m in found]
            if clause_id in record.skipped:
                skips.append(record.skipped[clause_id])
            elif clause_id not in record.judged and record.stopped_by:
                skips.append(
                    f"{clause_id} not judged: the {probe} probe stopped at {record.stopped_by}"
                )
        if messages:
            status = ClauseStatus.FAILED
        elif judged:
            status = ClauseStatus.PASSED
        else:
            status = ClauseStatus.SKIPPED
            messages = skips[:1] or [f"{clause_id} not judged with these options"]
        known = self.options.known_failures.get(clause_id)
        if known is not None:
            if status is ClauseStatus.FAILED:
                status = ClauseStatus.XFAILED
                notes.append(f"known failure: {known}")
            elif status is ClauseStatus.PASSED:
                status = ClauseStatus.XPASSED
                messages = [
                    f"{clause_id}: listed in Options(known_failures=...) ({known}) but it "
                    "passes now: remove the entry"
                ]
        return ClauseResult(
            clause=clause_id,
            status=status,
            messages=tuple(self.scrub(m) for m in messages),
            duration=duration,
            notes=tuple(self.scrub(n) for n in dict.fromkeys(notes)),
        )

    def _look_again(self, watch: ReturnWatch) -> list[str]:
        """RCV-02's last look at a returned response: once what its run left running has
        settled (waited for once, at most :data:`LAST_LOOK_WINDOW` seconds, on the loop
        the run ran on), is it still what ``run`` returned?"""
        if not watch.settled:
            watch.settled = True
            leftovers = watch.leftovers

            async def settle() -> None:
                if leftovers is not None and anyio.lowlevel.current_token() == watch.loop:
                    await leftovers.settle(LAST_LOOK_WINDOW)

            self.runner.run_async(settle, timeout=LAST_LOOK_WINDOW + 2.0)
        after = time.monotonic() - watch.returned_at
        seen = (
            f"seen at the last look, when the verdicts were read, {after:.1f} s after it returned"
        )
        return [
            f"{v.clause}: {v.message}"
            for v in verify_returned(watch.returned, watch.kept, watch.label, seen=seen)
        ]

    def _watched(self) -> set[str]:
        """Clauses whose verdict still watches a sink or a returned response."""
        with self._lock:
            records = [record for record, _ in self._records.values()]
        sinks = {watch.clause for record in records for watch in record.watches}
        return sinks | {watch.clause for record in records for watch in record.returns}

    def report(self, only: Iterable[str] | None = None) -> ConformanceReport:
        """Judge every clause (or the ``only`` ones) and close the driver's event loop."""
        start = time.perf_counter()
        wanted = _select(only)
        if wanted & {"SES-05", "CAP-01"}:
            self._prefetch_fresh()
        try:
            # Probes run in their own order (the fresh-process check, started above,
            # last), then each clause reads the records.
            for probe in PROBES:
                if any(probe in CLAUSE_BY_ID[c].probes for c in wanted):
                    self.run_probe(probe)
            results = tuple(self.clause_result(c.id) for c in CLAUSES if c.id in wanted)
            # The sinks stay watched until the report is final: read those verdicts again.
            watched = self._watched()
            results = tuple(
                self.clause_result(r.clause) if r.clause in watched else r for r in results
            )
        finally:
            self.close()
        return ConformanceReport(
            driver_type=self.driver_type,
            results=results,
            duration=time.perf_counter() - start,
            run=self.run_info(),
        )

    def run_info(self) -> RunInfo:
        """The report's ``run`` block: start time, backend, driver version, options."""
        info = run_info(self.options, self._driver, self.started_at)
        return dataclasses.replace(
            info,
            options={k: self.scrub(v) for k, v in info.options.items()},
            labels={k: self.scrub(v) for k, v in info.labels.items()},
        )

    def close(self) -> None:
        self.runner.close()

    def _prefetch_fresh(self) -> None:
        """Start the fresh-interpreter check of SES-05 and CAP-01 now, so it runs beside
        the probes that come before them."""
        with self._lock:
            self._setup()
        if self._descriptor is not None and self._descriptor.sessions.supports_resume:
            start_for(self.factory, self.options)

    def scrub(self, text: str) -> str:
        """Remove every secret value from ``text`` (those of ``Options`` and of the
        environment's secret-named variables: whole, escaped, or cut short), withhold any
        provider text a probe left marked, and escape control characters."""
        return screen(render(text, show=False), self._secrets)


__all__ = ["PROBE_FUNCTIONS", "SECRET_MASK", "Suite", "check_driver", "probe_function"]

_UNTAGGED = frozenset({"fresh_process"})


def _tag(message: str, clause: str, probe: str) -> str:
    """``message`` with the probe that observed it, right after the clause ID."""
    head = f"{clause}: "
    return f"{head}[{probe}] {message.removeprefix(head)}"


def _select(only: Iterable[str] | None) -> set[str]:
    """The clauses ``only`` names (IDs or families, as ``--clause`` takes them); all for None.

    Checked before any probe runs: a name that is no clause and no family is an error.
    """
    if only is None:
        return set(CLAUSE_BY_ID)
    try:
        wanted = clause_ids([only] if isinstance(only, str) else only)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"check_driver(only=...): {exc}") from None
    if not wanted:
        raise ValueError("check_driver(only=...) names no clause; pass None to judge them all")
    return set(wanted)


def _collect_secrets(options: Options) -> tuple[str, ...]:
    found: list[str] = [s for s in options.secrets if s]
    seen: set[int] = set()

    def walk(value: Any) -> None:
        if id(value) in seen:
            return
        seen.add(id(value))
        if isinstance(value, SecretStr):
            found.append(value.get_secret_value())
        elif isinstance(value, SecretBytes):
            found.append(value.get_secret_value().decode("utf-8", "replace"))
        elif isinstance(value, BaseModel):
            for name in type(value).model_fields:
                walk(getattr(value, name, None))
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list | tuple | set | frozenset):
            for item in value:
                walk(item)
        elif hasattr(value, "__dataclass_fields__"):
            for name in value.__dataclass_fields__:
                walk(getattr(value, name, None))

    walk(options.config)
    return ordered(s for s in found if len(s) >= 3)


def check_driver(
    factory: Callable[[], object],
    options: Options | None = None,
    *,
    only: Iterable[str] | None = None,
) -> ConformanceReport:
    """Run the suite against ``factory`` and return the report; never raises for the driver.

    Works from plain code and from inside a running event loop (driver code runs on
    the suite's own threads). ``only`` limits the run to some clauses: IDs or family
    names (``["SES", "EVT-12"]``), as the CLI's ``--clause`` takes them; an unknown
    name raises ``ValueError`` before anything runs.
    """
    suite = Suite(factory, options or Options())
    return suite.report(only)
