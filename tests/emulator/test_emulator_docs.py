"""docs/emulator.md stays true: its python snippets run, its JSON scenario loads, its
field table lists every scenario field."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from adaptertest.emulator import Fault, Scenario, ToolCall, Turn, TurnUsage

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "emulator.md").read_text(encoding="utf-8")
SNIPPETS = re.findall(r"```python\n(.*?)```", PAGE, re.S)


def test_the_page_has_snippets() -> None:
    assert len(SNIPPETS) >= 4


@pytest.mark.parametrize("index", range(len(SNIPPETS)))
def test_python_snippet_runs(index: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    exec(compile(SNIPPETS[index], f"docs/emulator.md snippet {index + 1}", "exec"), {})


def test_json_scenario_loads(tmp_path: Path) -> None:
    (block,) = re.findall(r"```json\n(.*?)```", PAGE, re.S)
    path = tmp_path / "scenario.json"
    path.write_text(block, encoding="utf-8")
    scenario = Scenario.load(path)
    assert scenario.turns[0].tool_calls[0].name == "Read"
    assert scenario.turns[1].fault is not None


def test_field_table_names_every_field() -> None:
    rows = set(re.findall(r"^\| (?:(\w+) )?`(\w+)` \|", PAGE, re.M))
    expected = {("", name) for name in Scenario.model_fields}
    for model in (Turn, ToolCall, TurnUsage, Fault):
        expected |= {(model.__name__, name) for name in model.model_fields}
    assert expected <= rows, sorted(expected - rows)
