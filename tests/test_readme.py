"""The README and docs/ stay true: generated tables, quick start, CI command, snippets.

Every ``python`` and ``sh`` block in README.md and docs/*.md runs as written (python
in-process, sh with bash from the repository root, ``python`` and the kit's commands
being those of the interpreter that runs the tests), unless the line before it opts out
with ``<!-- snippet: not run (why) -->``, for a block that cannot run offline or here.
A block that downloads (npm, pip, a URL) never runs: the test command stays offline.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from adaptertest._docs import (
    CLAUSES_PAGE,
    COMMANDS_END,
    COMMANDS_PAGE,
    COMMANDS_START,
    GENERATED,
    TABLE_END,
    TABLE_START,
    clause_table_markdown,
    command_parsers,
    command_reference_markdown,
    main,
)
from adaptertest.options import Options

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MAX_README_LINES = 300

QUICK_START = (
    "python -m pip install -e '.[dev]' && python -m adaptertest check "
    "referencedriver:new_reference_driver --live",
    "python -m pip install -e '.[dev]' && python -m pytest",
)

_BLOCK = re.compile(
    r"^(?:<!-- snippet: not run \((?P<why>[^\n]+?)\) -->\n)?"
    r"```(?P<lang>python|sh)\n(?P<code>.*?)^```",
    re.M | re.S,
)


def section(title: str, text: str = README) -> str:
    """The body of the ``## title`` section."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match is not None, f"no '## {title}' section"
    return match.group(1)


def _snippets() -> list[Any]:
    cases: list[Any] = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in _BLOCK.finditer(text):
            line = text.count("\n", 0, match.start("code"))
            where = f"{page.relative_to(ROOT)}:{line}"
            marks = [pytest.mark.skip(reason=match["why"])] if match["why"] else []
            cases.append(pytest.param(match["lang"], match["code"], where, id=where, marks=marks))
    return cases


DOWNLOADS = re.compile(
    r"\b(?:install-clis|npm (?:install|i|ci)|npx|pip install|pip download|curl|wget|"
    r"apt-get|git clone|adaptertest sweep)\b|https?://(?!127\.0\.0\.1|localhost)"
)
"""What a shell block that fetches from the network says: such a block is never run."""


def snippet_env() -> dict[str, str]:
    """The environment of a shell block: ``python``, ``adaptertest`` and the other
    commands of the interpreter running the tests come first on ``PATH``, so an
    unactivated ``.venv/bin/python -m pytest`` runs the blocks with its own install."""
    bindir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": os.pathsep.join([bindir, os.environ.get("PATH", "")])}


def run_shell_block(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", code],
        cwd=ROOT,
        env=snippet_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(("lang", "code", "where"), _snippets())
def test_snippet_runs_as_written(lang: str, code: str, where: str) -> None:
    if lang == "python":
        exec(compile(code, where, "exec"), {"__name__": "__snippet__"})
        return
    done = run_shell_block(code)
    assert done.returncode == 0, f"{where}\n{done.stdout}\n{done.stderr}"


def test_no_block_that_downloads_is_run() -> None:
    running = [p for p in _snippets() if not getattr(p, "marks", ())]
    downloading = [p.values[2] for p in running if DOWNLOADS.search(p.values[1])]
    assert downloading == [], (
        f"these docs blocks download and would run in the test command: {downloading}; "
        "mark each with <!-- snippet: not run (why) -->"
    )


@pytest.mark.parametrize(
    "block",
    ["adaptertest install-clis", "python -m pip install -e .", "curl -sSf https://x", "npm i x"],
)
def test_the_download_check_knows_a_download(block: str) -> None:
    assert DOWNLOADS.search(block)


def test_shell_blocks_run_with_the_interpreter_running_the_tests() -> None:
    done = run_shell_block('python -c "import sys; print(sys.prefix)"\ncommand -v adaptertest')
    assert done.returncode == 0, done.stderr
    prefix, command = done.stdout.splitlines()
    assert prefix == sys.prefix
    assert Path(command).parent == Path(sys.executable).parent


def test_every_page_runs_or_says_why_not() -> None:
    runnable = [p for p in _snippets() if not getattr(p, "marks", ())]
    assert len(runnable) >= 3  # the opt-out is the exception


def test_the_readme_is_a_page_a_newcomer_reads_once() -> None:
    assert README.count("\n") <= MAX_README_LINES
    for title in ("Quick start", "Use it in your project", "Where to go next"):
        section(title)
    assert "](docs/glossary.md)" in README
    assert "](docs/README.md)" in README


def test_the_docs_index_links_every_page() -> None:
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    for page in PAGES[1:]:
        if page.name != "README.md":
            assert f"]({page.name})" in index, page.name


def test_the_glossary_defines_the_words_newcomers_meet() -> None:
    glossary = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    words = ("SPI", "probe", "hermetic", "checkpoint", "guard fingerprint", "replay")
    for word in (*words, "recording", "live", "level", "snapshot"):
        assert f"**{word}**" in glossary, word


def test_the_glossary_names_every_level_a_report_prints() -> None:
    from adaptertest.report import Level

    glossary = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    level = glossary.split("**level**", 1)[1].split("\n\n", 1)[0]
    for name in (*(str(member) for member in Level), "none"):
        assert f"`{name}`" in level, name


TEMPLATE_LEVELS = {"cli": "live", "memory": "full"}
"""The level each template's generated project reaches (test_scaffold.py checks it)."""


def test_the_readme_says_the_level_each_template_reaches() -> None:
    body = " ".join(section("Use it in your project").split())
    for template, level in TEMPLATE_LEVELS.items():
        assert f"a `{template}` project at level `{level}`" in body or (
            f"a `{template}` project at `{level}`" in body
        ), template
    assert "at level live as written" not in body


def test_links_between_pages_resolve() -> None:
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text):
            assert (page.parent / target).exists(), f"{page.relative_to(ROOT)}: {target}"


@pytest.mark.parametrize(
    ("relative", "start", "end", "generate"),
    [(relative, start, end, generate) for relative, start, end, generate, _ in GENERATED],
    ids=[what.replace(" ", "-") for *_, what in GENERATED],
)
def test_generated_blocks_are_current(
    relative: str, start: str, end: str, generate: Callable[[], str]
) -> None:
    """The clause table (docs/clauses.md) and the command reference (docs/cli.md)."""
    page = (ROOT / relative).read_text(encoding="utf-8")
    assert page.count(start) == 1
    assert page.count(end) == 1
    block = page.split(start, 1)[1].split(end, 1)[0]
    assert block.strip("\n") == generate(), f"{relative} is stale: run python -m adaptertest._docs"


def test_the_generator_rewrites_a_stale_table(tmp_path: Path) -> None:
    page = tmp_path / CLAUSES_PAGE
    page.parent.mkdir()
    page.write_text(f"# Clauses\n\n{TABLE_START}\n| old |\n{TABLE_END}\n", encoding="utf-8")
    commands = tmp_path / COMMANDS_PAGE
    commands.write_text(f"# CLI\n\n{COMMANDS_START}\nold\n{COMMANDS_END}\n", encoding="utf-8")
    assert main([str(tmp_path)]) == 0
    assert clause_table_markdown() in page.read_text(encoding="utf-8")
    assert command_reference_markdown() in commands.read_text(encoding="utf-8")
    page.write_text("no markers\n", encoding="utf-8")
    assert main([str(tmp_path)]) == 2


def test_the_command_page_covers_every_command_and_option() -> None:
    from adaptertest.cli import build_parser

    page = (ROOT / COMMANDS_PAGE).read_text(encoding="utf-8")
    commands = command_parsers(build_parser())
    assert {"check", "clauses", "record", "replay", "new", "install-clis", "matrix"} <= set(
        commands
    )
    for name, command in commands.items():
        assert f"### `adaptertest {name}`" in page, name
        for action in command._actions:
            for flag in action.option_strings:
                if flag not in ("-h", "--help"):
                    assert f"`{flag}" in page or f"| {flag}" in page, (name, flag)


def test_token_deltas_are_documented() -> None:
    page = (ROOT / "docs" / "token-deltas.md").read_text(encoding="utf-8")
    for name in ("block_start", "block_delta", "block_end", "token_level=True"):
        assert name in page


def test_quick_start_is_exactly_the_two_commands() -> None:
    blocks = re.findall(r"```sh\n(.*?)```", section("Quick start"), re.S)
    assert len(blocks) == 1
    assert blocks[0].splitlines() == list(QUICK_START)


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    last = [line for line in ci.splitlines() if line.strip()][-1]
    assert last == QUICK_START[1]


def test_options_table_lists_every_field() -> None:
    body = (ROOT / "docs" / "options.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)` \|", body, re.M)
    assert rows == [f.name for f in dataclasses.fields(Options)]
    assert not re.search(r"\[(With\w+|SkipLiveRun|ExpectRejectForeignConfig)\]", body)


def test_go_names_live_on_their_own_page() -> None:
    body = (ROOT / "docs" / "go-mapping.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)` \| `(\w+)` \|", body, re.M)
    fields = {f.name for f in dataclasses.fields(Options)}
    assert rows
    assert {field for field, _ in rows} <= fields
    assert "[WithConfig]" not in README


def test_driver_guide_and_benchmarks_are_linked() -> None:
    assert (ROOT / "docs" / "writing-a-driver.md").is_file()
    assert "](docs/writing-a-driver.md" in section("Where to go next")
    benchmarks = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    assert "Figures: run `python benchmarks/run.py`." in benchmarks
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
