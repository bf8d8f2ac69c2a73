"""Wall time of the scenario battery against the runs it makes:
``python benchmarks/scenarios.py [--binding module:attr] [--backend asyncio|trio]``.

The battery (every scenario clause, ``check_driver(..., only=<scenario clauses>)``) is
timed as a whole; its floor is the time the driver's own runs took, which each scenario
run notes on its clause ("... a run took N s"). The ratio says what the suite adds on
top of the runs: emulators, folders, judging, the process-table checks. The default
binding is the reference driver's network mode; pass a driver's own binding
(``--binding yourpkg.conformance:binding``, a ModelBinding or a function returning one)
and its factory (``--factory``) to measure it. Nothing in the test suite judges the
figures.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from adaptertest import ClauseStatus, ConformanceReport, ModelBinding, Options, check_driver
from adaptertest._fresh import _import_ref
from adaptertest._scenarios import binding_from_ref
from adaptertest.clauses import CLAUSES, Mode
from adaptertest.options import Backend

SCENARIO_CLAUSES = tuple(c.id for c in CLAUSES if c.mode is Mode.SCENARIO)
_RUN_NOTE = re.compile(r"scenario \(\w+\), run \d+: a run took ([0-9.]+) s")


@dataclass(frozen=True)
class Battery:
    """One timed battery: wall seconds, the runs' seconds, and the verdicts."""

    wall: float
    floor: float
    runs: int
    passed: int
    skipped: int
    failed: int

    @property
    def ratio(self) -> float:
        return self.wall / self.floor if self.floor else float("inf")


def run_seconds(report: ConformanceReport) -> list[float]:
    """The duration of every scenario run the report's notes record."""
    return [
        float(match.group(1))
        for result in report
        for note in result.notes
        for match in _RUN_NOTE.finditer(note)
    ]


def battery(
    factory: Callable[[], object],
    binding: ModelBinding,
    backend: Backend = "asyncio",
    only: tuple[str, ...] = SCENARIO_CLAUSES,
) -> Battery:
    """Run the scenario clauses ``only`` once and time them."""
    started = time.perf_counter()
    report = check_driver(factory, Options(model_binding=binding, backend=backend), only=only)
    wall = time.perf_counter() - started
    runs = run_seconds(report)
    counts = report.counts()
    return Battery(
        wall=wall,
        floor=sum(runs),
        runs=len(runs),
        passed=counts[ClauseStatus.PASSED],
        skipped=counts[ClauseStatus.SKIPPED],
        failed=counts[ClauseStatus.FAILED],
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binding", default="referencedriver._conformance:model_binding")
    parser.add_argument("--factory", default="referencedriver:new_reference_driver")
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    args = parser.parse_args(argv)
    factory = _import_ref(args.factory)
    if not callable(factory):
        raise SystemExit(f"{args.factory} is not callable")
    try:
        binding = binding_from_ref(args.binding)
    except (ImportError, AttributeError, TypeError) as exc:
        raise SystemExit(f"--binding {args.binding}: {exc}") from None
    result = battery(factory, binding, args.backend)
    print(
        f"scenario battery ({args.backend}): {result.wall:.1f} s wall for {result.runs} "
        f"run(s) that took {result.floor:.1f} s (ratio {result.ratio:.2f}); "
        f"{result.passed} passed, {result.skipped} skipped, {result.failed} failed"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
