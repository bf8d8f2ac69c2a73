"""benchmarks/emulator_speed.py works: each function runs at tiny sizes and gives its figures.
Nothing here judges speed (that is the script's job, on a quiet machine)."""

from __future__ import annotations

from pathlib import Path

from load_script import load_script

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "emulator_speed.py"


bench = load_script(SCRIPT, "benchmarks_emulator")


def test_each_benchmark_gives_named_positive_figures() -> None:
    figures = [*bench.start_stop(1), *bench.latency(1), *bench.throughput(2)]
    names = [f.name for f in figures]
    assert len(names) == len(set(names)) == 2 + 6 + 1
    assert all(f.value > 0 for f in figures)
    assert all(f.line().startswith(f.name) for f in figures)
