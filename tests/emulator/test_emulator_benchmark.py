"""benchmarks/emulator_speed.py works: each function runs at tiny sizes and gives its figures.
Nothing here judges speed (that is the script's job, on a quiet machine)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "emulator_speed.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("benchmarks_emulator", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bench = _load()


def test_each_benchmark_gives_named_positive_figures() -> None:
    figures = [*bench.start_stop(1), *bench.latency(1), *bench.throughput(2)]
    names = [f.name for f in figures]
    assert len(names) == len(set(names)) == 2 + 6 + 1
    assert all(f.value > 0 for f in figures)
    assert all(f.line().startswith(f.name) for f in figures)
