"""benchmarks/scenarios.py works: it times a battery and finds the runs' own time in the
report's notes (no speed is judged here)."""

from __future__ import annotations

from pathlib import Path

from load_script import load_script
from referencedriver import new_reference_driver
from referencedriver._conformance import model_binding

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "scenarios.py"
bench = load_script(SCRIPT, "benchmarks_scenarios")


def test_a_battery_is_timed_against_its_runs() -> None:
    result = bench.battery(new_reference_driver, model_binding(), only=("INP-02",))
    # INP-02 sends two prompts: two runs, each noted, both inside the wall time.
    assert result.runs == 2
    assert 0 < result.floor <= result.wall
    assert result.ratio >= 1
    assert (result.passed, result.failed) == (1, 0)
