"""The README stays true: generated clause table, quick start, CI command, options table."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from adaptertest._docs import TABLE_END, TABLE_START, clause_table_markdown
from adaptertest.options import Options

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")

QUICK_START = (
    "python -m pip install -e '.[dev]' && python -m adaptertest check "
    "referencedriver:new_reference_driver --live",
    "python -m pip install -e '.[dev]' && python -m pytest",
)


def section(title: str) -> str:
    """The body of the ``## title`` section."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", README, re.M | re.S)
    assert match is not None, f"README has no '## {title}' section"
    return match.group(1)


def test_clause_table_is_the_generated_one() -> None:
    assert README.count(TABLE_START) == 1
    assert README.count(TABLE_END) == 1
    table = README.split(TABLE_START, 1)[1].split(TABLE_END, 1)[0]
    assert table.strip("\n") == clause_table_markdown()


def test_quick_start_is_exactly_the_two_commands() -> None:
    blocks = re.findall(r"```sh\n(.*?)```", section("Quick start"), re.S)
    assert len(blocks) == 1
    assert blocks[0].splitlines() == list(QUICK_START)


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    last = [line for line in ci.splitlines() if line.strip()][-1]
    assert last == QUICK_START[1]


def test_options_table_lists_every_field() -> None:
    body = section("Use it on your driver")
    rows = re.findall(r"^\| `(\w+)` \|", body, re.M)
    assert rows == [f.name for f in dataclasses.fields(Options)]


def test_driver_guide_and_benchmarks_are_linked() -> None:
    assert (ROOT / "docs" / "writing-a-driver.md").is_file()
    assert "](docs/writing-a-driver.md" in section("Write your own driver")
    assert "Figures: run `python benchmarks/run.py`." in section("Benchmarks")
    assert (ROOT / "CONTRIBUTING.md").is_file()


def test_use_it_in_your_project_matches_what_new_writes() -> None:
    from adaptertest._scaffold import project_names, render

    body = section("Use it in your project")
    assert "](examples/)" in body
    assert "](docs/writing-a-driver.md)" in body
    assert "python -m pip install -e examples/<name>" in body
    generated = render("memory", project_names("acme_driver"))
    (snippet,) = re.findall(r"```python\n(.*?)```", body, re.S)
    assert generated["tests/test_conformance.py"].endswith(snippet)
    commands = re.findall(r"```sh\n(.*?)```", body, re.S)
    assert "adaptertest new acme_driver --template cli" in commands[1]
    assert "python -m pip install -e '.[test]' && python -m pytest" in commands[1]
    assert commands[1].splitlines()[-1] in generated["README.md"]
