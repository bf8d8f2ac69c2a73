"""CON family (Python extension): one driver instance serves concurrent runs (CON-01).

A Go driver's ``Run`` gets its request by value and usually keeps per-run state on the
stack; a Python driver is an object, and per-run state kept on ``self`` (a transcript
list, a message counter, the current run id, the current sink) leaks between
overlapping runs. The probe starts N runs of the same instance at once, each with its
own sink and run id, and judges each one's legality as ``live_run`` would: the response,
run events, stream and transcript mirror, nothing emitted after it returned, and no
payload stamped with another run's id. It judges concurrency, not success: a run that
fails legally (a Response with a failure, a legal stream) passes. It runs the provider,
so it needs ``live_run=True`` as well as ``concurrent_runs``.
"""

from __future__ import annotations

import anyio

from adaptertest._calls import Leftovers, describe_error, describe_hang
from adaptertest._probe import ProbeContext
from adaptertest.liv import (
    LOOP_SLACK,
    LiveRun,
    LiveVerdicts,
    changed_fields,
    error_type,
    judge_run_products,
    live_request,
    run_once,
    stream_plan,
)
from adaptertest.obs import demand_for
from adaptertest.options import Options
from adaptertest.rcv import shared_objects
from adaptertest.sink import RecordingSink
from driver.descriptor import StreamCapability
from driver.run import ObservationDemand, Request

__all__ = ["CONCURRENT_RUN_ID_PREFIX", "concurrent_request", "probe_concurrent_runs"]

CONCURRENT_RUN_ID_PREFIX = "adaptertest-concurrent-"
"""Run ``i`` (counted from 1) gets the run id ``adaptertest-concurrent-<i>``."""


def concurrent_request(
    options: Options, index: int, observation: ObservationDemand | None = None
) -> Request:
    """The live request with run id ``adaptertest-concurrent-<index>`` (demanding, as
    ``live_run`` does, what ``observation`` says)."""
    request = live_request(options.config, options.live_prompt, options.workspace, observation)
    request.run_id = f"{CONCURRENT_RUN_ID_PREFIX}{index}"
    return request


def probe_concurrent_runs(ctx: ProbeContext) -> None:
    """Start ``Options.concurrent_runs`` runs of one driver instance in one task group."""
    options = ctx.options
    if options.concurrent_runs <= 0:
        ctx.skip(
            ("CON-01",),
            "concurrent runs are off: pass Options(concurrent_runs=N) (with live_run=True) "
            "to start N runs on one driver instance at once",
        )
        return
    if options.skip_live_run is not None:
        ctx.skip(("CON-01",), options.live_skip_reason)
        return
    if not options.live_run:
        ctx.skip(
            ("CON-01",),
            f"concurrent runs call the provider {options.concurrent_runs} times, and live "
            "probes are off: pass Options(live_run=True) as well to run them",
        )
        return
    run = ctx.method("run")
    if run is None:
        ctx.fatal("CON-01", f"{type(ctx.driver).__qualname__} has no callable run() method")
    indices = range(1, options.concurrent_runs + 1)
    demand = demand_for(ctx.descriptor.observation.streaming)
    requests = {i: concurrent_request(options, i, demand) for i in indices}
    pristine = {i: concurrent_request(options, i, demand) for i in indices}
    sinks = {i: RecordingSink() for i in indices}
    timeout = options.live_run_timeout

    async def together() -> dict[int, LiveRun]:
        results: dict[int, LiveRun] = {}

        async def one(i: int) -> None:
            results[i] = await run_once(run, requests[i], sinks[i], timeout)

        leftovers = Leftovers()
        async with anyio.create_task_group() as group:
            for i in indices:
                group.start_soon(one, i)
        await leftovers.settle()
        for i, result in results.items():
            result.capture(sinks[i])
            result.leftovers, result.loop = leftovers, anyio.lowlevel.current_token()
        return results

    outcome = ctx.runner.run_async(together, timeout=timeout + LOOP_SLACK)
    label = f"{len(indices)} concurrent run() calls"
    if outcome.timed_out:
        ctx.fatal("CON-01", describe_hang(label, outcome, timeout))
    if outcome.error is not None:
        ctx.fatal("CON-01", f"{label} raised {error_type(outcome.error)} in the suite")
    results: dict[int, LiveRun] = outcome.value
    rich, capability = stream_plan(ctx)
    owners = {pristine[i].run_id: i for i in indices}
    ctx.judge("RCV-01", "RCV-02")
    for i in indices:
        for violation in results[i].received_violations(f"run {i}'s run()"):
            ctx.fail(violation.clause, f"run {i}: {violation.message}")
        results[i].watch_returned(ctx, f"run {i}'s run()")
    ctx.report(shared_objects({i: results[i].returned for i in indices}))
    for i in indices:
        verdicts = LiveVerdicts(ctx, structured=False, into="CON-01", label=f"run {i}")
        verdicts.run = results[i]
        _judge_run(ctx, verdicts, results[i], requests[i], pristine[i], owners, rich, capability)
        ctx.watch("CON-01", sinks[i], label=f"run {i}: EVT-02: ")
        verdicts.finish()
    ctx.judge("CON-01")


def _judge_run(
    ctx: ProbeContext,
    verdicts: LiveVerdicts,
    result: LiveRun,
    request: Request,
    pristine: Request,
    owners: dict[str, int],
    rich: bool,
    capability: StreamCapability | None,
) -> None:
    """Legality of one run (what ``live_run`` judges but success), plus crosstalk."""
    timeout = ctx.options.live_run_timeout
    changed = changed_fields(request, pristine)
    if changed:
        ctx.note(f"{verdicts.label}: run() changed the Request it was given ({', '.join(changed)})")
    if result.timed_out:
        verdicts.fail("", f"run() did not return within {timeout:g} s")
        return
    if result.wrong_type:
        verdicts.fail(
            "", f"run() returned {type(result.value).__qualname__}, expected driver.Response"
        )
        return
    if result.malformed is not None:
        verdicts.fail("", f"run() returned a malformed Response ({result.malformed})")
        return
    _crosstalk(verdicts, result, pristine.run_id, owners)
    if result.response is None and result.error is not None:
        # Nothing to judge the failure by: a legal failure comes as a Response.
        ctx.trace(result.error, clauses=("CON-01",))
        verdicts.fail("", f"{describe_error('run()', result.error)}, with no Response")
    judge_run_products(verdicts, result, rich, capability)


def _crosstalk(verdicts: LiveVerdicts, result: LiveRun, own: str, owners: dict[str, int]) -> None:
    """Payloads stamped with another run's id reached this run's sink."""
    for index, payload in enumerate(result.stream):
        run_id = getattr(payload, "run_id", None)  # malformed payloads: EVT reports them
        owner = owners.get(run_id) if isinstance(run_id, str) else None
        if run_id != own and owner is not None:
            # The run ids are the suite's own strings, so this message needs no redaction.
            verdicts.fail("crosstalk", f"payload {index} carries run_id {run_id!r} of run {owner}")
