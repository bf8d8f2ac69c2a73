"""Wall time of the real-CLI tiers: ``python benchmarks/realcli.py [--only NAME] [--repeat N]``.

For each example driver whose tier file exists and whose pinned CLI is installed
(``adaptertest install-clis``), this prints:

- the whole tier file under pytest, in a fresh process (what CI pays for it);
- the whole conformance suite against the real CLI and the emulator, in-process, on
  each backend, when the tier module offers ``suite_options(backend)`` and
  ``new_driver`` (target for Claude Code: under 10 s).

A tier that cannot run here is listed as ``n/a`` with the reason. Figures are wall
times of this machine and this run (medians with ``--repeat``); nothing in the test
suite judges them.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import adaptertest
from adaptertest import realcli

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Tier:
    name: str
    """The CLI's name in ``examples/cli-versions.json``."""
    path: str
    """The tier file, relative to the repository."""
    suite_target: float | None
    """Seconds the whole suite may take against the real CLI (None: no target)."""


TIERS = (
    Tier("claude", "examples/claude_driver/tests/test_claude_realcli.py", 10.0),
    Tier("codex", "examples/codex_driver/tests/test_codex_realcli.py", None),
    Tier("gemini", "examples/gemini_driver/tests/test_gemini_realcli.py", None),
)


@dataclass(frozen=True)
class Row:
    what: str
    seconds: float | None
    target: float | None
    detail: str = ""

    def verdict(self) -> str:
        if self.seconds is None:
            return "n/a"
        if self.target is None:
            return "info"
        return "PASS" if self.seconds < self.target else "MISS"


def median_of(repeat: int, measure: Callable[[], float]) -> float:
    return statistics.median(measure() for _ in range(repeat))


def time_tier_file(tier: Tier) -> tuple[float, str]:
    """Run the tier file under pytest in a fresh process; (seconds, pytest's last line)."""
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", tier.path],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.monotonic() - start
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    summary = lines[-1] if lines else f"exit {done.returncode}"
    if done.returncode != 0:
        summary = f"FAILED (exit {done.returncode}): {summary}"
    return seconds, summary


def load_tier(tier: Tier) -> ModuleType:
    """Import a tier module by path, with its driver package importable as pytest's
    ``pythonpath`` setting makes it."""
    path = ROOT / tier.path
    package_root = str(path.parents[1])
    if package_root not in sys.path:
        sys.path.insert(0, package_root)
    spec = importlib.util.spec_from_file_location(f"realcli_tier_{tier.name}", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # Registered before it runs, as an import would: dataclasses look their module up.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def time_whole_suite(module: ModuleType, backend: str) -> tuple[float, str]:
    """The whole suite once, in-process, against the real CLI; (seconds, summary). The
    tier's model binding is left out: the scenario battery is timed on its own
    (``benchmarks/scenarios.py``), so this figure stays the suite's live clauses."""
    options = dataclasses.replace(module.suite_options(backend), model_binding=None)
    start = time.monotonic()
    report = adaptertest.check_driver(module.new_driver, options)
    return time.monotonic() - start, report.summary()


def measure(tier: Tier, repeat: int) -> list[Row]:
    reason = realcli.skip_reason(tier.name)
    if not (ROOT / tier.path).is_file():
        reason = f"no tier file {tier.path}"
    if reason is not None:
        return [Row(f"{tier.name}: tier file", None, None, reason)]
    summaries: list[str] = []

    def tier_file() -> float:
        seconds, summary = time_tier_file(tier)
        summaries.append(summary)
        return seconds

    rows = [Row(f"{tier.name}: tier file (pytest)", median_of(repeat, tier_file), None)]
    rows[0] = Row(rows[0].what, rows[0].seconds, None, summaries[-1])
    module = load_tier(tier)
    if not (hasattr(module, "suite_options") and hasattr(module, "new_driver")):
        rows.append(Row(f"{tier.name}: whole suite", None, None, "no suite_options/new_driver"))
        return rows
    for backend in ("asyncio", "trio"):
        found: list[str] = []

        def suite(backend: str = backend, found: list[str] = found) -> float:
            seconds, summary = time_whole_suite(module, backend)
            found.append(summary)
            return seconds

        seconds = median_of(repeat, suite)
        rows.append(
            Row(f"{tier.name}: whole suite ({backend})", seconds, tier.suite_target, found[-1])
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", choices=[t.name for t in TIERS])
    parser.add_argument("--repeat", type=int, default=1, help="runs per figure (median)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    chosen = [t for t in TIERS if not args.only or t.name in args.only]
    rows = [row for tier in chosen for row in measure(tier, args.repeat)]
    width = max(len(r.what) for r in rows)
    print(f"{'figure':<{width}}  {'seconds':>8}  {'target':>7}  verdict  detail")
    for r in rows:
        seconds = f"{r.seconds:8.2f}" if r.seconds is not None else f"{'-':>8}"
        target = f"< {r.target:g}" if r.target is not None else "-"
        print(f"{r.what:<{width}}  {seconds}  {target:>7}  {r.verdict():<7}  {r.detail}")
    return 1 if any(r.verdict() == "MISS" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
