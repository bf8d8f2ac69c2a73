"""docs/scenarios.md stays true: its battery table names every scenario clause and every
scenario file (its snippets run with every other docs page, in tests/test_readme.py)."""

from __future__ import annotations

import re
from pathlib import Path

from adaptertest._scenarios import SCENARIO_DIR
from adaptertest.clauses import CLAUSES, Mode

PAGE = Path(__file__).resolve().parents[2] / "docs" / "scenarios.md"
TEXT = PAGE.read_text(encoding="utf-8")


def test_the_battery_table_names_every_clause_and_file() -> None:
    rows = [line for line in TEXT.splitlines() if re.match(r"\| [A-Z]{3}-\d\d \|", line)]
    named = {row.split("|")[1].strip() for row in rows}
    assert named == {c.id for c in CLAUSES if c.mode is Mode.SCENARIO}
    table = "\n".join(rows)
    for path in SCENARIO_DIR.glob("*.json"):
        assert f"`{path.stem}`" in table, path.name
