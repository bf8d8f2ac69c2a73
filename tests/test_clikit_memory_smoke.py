"""benchmarks/clikit_memory.py works: each shape runs at tiny sizes and the table is
well-formed. Nothing here judges memory (that is the script's job, on a quiet machine)."""

from __future__ import annotations

from pathlib import Path

import pytest

from load_script import load_script

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "clikit_memory.py"


bench = load_script(SCRIPT, "benchmarks_clikit_memory")


@pytest.mark.parametrize("shape", bench.SHAPES)
def test_each_shape_runs_and_reports_what_the_response_kept(shape: str) -> None:
    size = 300_000
    peak, kept_stdout, kept_stderr = bench.run_peak(shape, size)
    assert peak > 0
    if shape == "stderr":
        assert kept_stderr == 2 * 64 * 1024  # capped: head and tail
        assert kept_stdout == len(b'{"done": true}\n')
    else:
        assert kept_stdout >= size - 200  # every line, and the terminal line
        assert kept_stderr == 0


def test_the_table_has_one_row_per_figure_with_a_verdict() -> None:
    rows = [bench.Row("stdout-line", 10**6, 2.5, 10**6, 0), bench.Row("stderr", 10**6, 0.9, 1, 2)]
    table = bench.render(rows).splitlines()
    assert len(table) == 3
    assert "PASS" in table[1]
    assert "MISS" in table[2]
    assert set(bench.TARGETS) == set(bench.SHAPES)
