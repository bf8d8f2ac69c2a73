"""DLN family (Python extension): deadlines and cancellation (DLN-01, DLN-02).

Both serve ``adaptertest/scenarios/hang.json``: the model takes the request and never
answers (the connection stays open).

- DLN-01: the endpoint asks for a short run deadline (:data:`DEADLINE` seconds, in
  ``ModelEndpoint.deadline``, which the binding passes on as the driver's own deadline).
  run() must return a Response with ``timed_out=True`` within that deadline plus the
  binding's grace.
- DLN-02: the suite cancels the run (its anyio cancel scope) once the model has the
  request. run() must end within the binding's grace, letting the cancellation
  propagate (a driver that swallows it and returns a Response hides the cancellation
  from its host).
"""

from __future__ import annotations

from adaptertest._probe import ProbeContext
from adaptertest._scenarios import (
    CancelledRun,
    Stage,
    clauses_of,
    gate,
    load_scenario,
    scenario_request,
)
from adaptertest._violation import Violation
from adaptertest.liv import LiveRun

__all__ = ["DEADLINE", "probe_scenario_deadline", "verify_cancelled", "verify_timed_out"]

DEADLINE = 8.0
"""DLN-01's run deadline, in seconds: long enough for an agent to start and ask."""

DEADLINE_PROMPT = "Reply with one short sentence."


def verify_timed_out(
    result: LiveRun, requests: int, deadline: float, grace: float
) -> list[Violation]:
    """DLN-01: a timed-out Response within ``deadline + grace`` seconds (that it offers
    no valid checkpoint is the engine's check of every failed run: RSP-01, FLR-01)."""
    clause = "DLN-01"
    out: list[Violation] = []
    limit = deadline + grace
    if result.timed_out:
        return [
            Violation(
                clause,
                f"run() did not return within {limit:g} s (deadline {deadline:g} s + grace "
                f"{grace:g} s)",
            )
        ]
    if result.elapsed > limit:
        out.append(Violation(clause, f"run() took {result.elapsed:.1f} s, more than {limit:g} s"))
    response = result.response
    if response is None:
        what = (
            f"raised {type(result.error).__qualname__}"
            if result.error is not None
            else f"returned {type(result.value).__qualname__}"
        )
        out.append(Violation(clause, f"run() {what} instead of a timed-out Response"))
        return out
    if not response.timed_out:
        out.append(
            Violation(
                clause,
                f"the Response says timed_out=False after {result.elapsed:.1f} s with a model "
                "that never answered",
            )
        )
    if not requests:
        out.append(Violation(clause, "the model got no request: the run never reached the model"))
    return out


def verify_cancelled(cancelled: CancelledRun, grace: float) -> list[Violation]:
    """DLN-02: run() ended within ``grace`` seconds of the cancellation, propagating it."""
    clause = "DLN-02"
    result, latency = cancelled.result, cancelled.latency
    if latency is None:
        return [
            Violation(
                clause,
                "the model got no request before run() ended, so there was nothing to cancel "
                f"(the run {'raised' if result.error is not None else 'returned'})",
            )
        ]
    out: list[Violation] = []
    if result.timed_out or latency > grace:
        out.append(
            Violation(
                clause,
                f"run() ended {latency:.1f} s after the cancellation, more than the grace of "
                f"{grace:g} s",
            )
        )
    if not cancelled.propagated:
        what = "returned" if result.error is None else f"raised {type(result.error).__qualname__}"
        out.append(
            Violation(
                clause,
                f"run() {what} when cancelled: the cancellation must propagate to the caller",
            )
        )
    return out


def probe_scenario_deadline(ctx: ProbeContext) -> None:
    """Serve a model that never answers; judge DLN-01 (deadline) and DLN-02 (cancel)."""
    binding, wanted = gate(ctx, clauses_of("scenario_deadline"))
    if binding is None:
        return
    if "DLN-01" in wanted:
        scenario = load_scenario("hang")
        with Stage(ctx, binding, scenario, label="hang (deadline)", deadline=DEADLINE) as stage:
            driver = stage.driver(("DLN-01",))
            request = scenario_request("hang", DEADLINE_PROMPT, stage.workspace)
            result = stage.run(driver, request, ("DLN-01",)) if driver is not None else None
            if result is not None:
                verdict = verify_timed_out(
                    result, len(stage.emulator.requests), DEADLINE, binding.grace
                )
                ctx.report(verdict, judge=("DLN-01",))
    if "DLN-02" in wanted:
        scenario = load_scenario("hang")
        with Stage(ctx, binding, scenario, label="hang (cancel)") as stage:
            driver = stage.driver(("DLN-02",))
            request = scenario_request("hang", DEADLINE_PROMPT, stage.workspace)
            ran = stage.run_and_cancel(driver, request, ("DLN-02",)) if driver is not None else None
            if ran is not None:
                ctx.report(verify_cancelled(ran, binding.grace), judge=("DLN-02",))
