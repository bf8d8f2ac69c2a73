"""Smoke test per real CLI: pointed at the emulator by :func:`cli_setup`, each runs the
scenario's tool call in its workspace, sends the result back (the next turn) and prints
the final answer; the emulator sees the prompt. Skipped (naming
``adaptertest install-clis``) where node or the CLI is missing. The example drivers'
real-CLI tiers judge the CLIs in full; this checks only the emulator's side."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from adaptertest import realcli
from adaptertest.emulator import CLI_NAMES, CLIName, Emulator, Scenario, ToolCall, Turn, cli_setup

PROMPT = "say the word"
ARGV = {
    "claude": ["-p", PROMPT, "--output-format", "stream-json", "--verbose"],
    "codex": ["exec", "--json", "--skip-git-repo-check", "-m", "gpt-5.5"],
    "gemini": ["-p", PROMPT, "-o", "stream-json", "-m", "gemini-2.5-flash"],
}
SECRET_NAMES = ("ANTHROPIC", "OPENAI", "CODEX", "GEMINI", "GOOGLE", "CLAUDE")


TOOLS: dict[str, tuple[ToolCall, list[str]]] = {
    "claude": (ToolCall(name="Read", arguments={"file_path": "a.txt"}), ["--allowedTools", "Read"]),
    "codex": (ToolCall(name="exec_command", arguments={"cmd": "cat a.txt"}), []),
    "gemini": (ToolCall(name="read_file", arguments={"file_path": "a.txt"}), ["--yolo"]),
}


def run_cli(
    name: CLIName, emu: Emulator, tmp_path: Path, extra: list[str]
) -> subprocess.CompletedProcess[str]:
    binary = realcli.require(name)
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    (work / "a.txt").write_text("the word is PINEAPPLE\n", encoding="utf-8")
    setup = cli_setup(name, emu.base_url)
    for relative, content in setup.home_files.items():
        (home / relative).parent.mkdir(parents=True, exist_ok=True)
        (home / relative).write_text(content, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(SECRET_NAMES)}
    env.update(setup.env)
    env[setup.home_variable] = str(home)
    env["TMPDIR"] = str(tmp_path)
    argv = ARGV[name]
    if name == "codex":
        argv = [*argv[:1], *setup.args, *extra, *argv[1:], PROMPT]
    else:
        argv = [*argv, *setup.args, *extra]
    return subprocess.run(
        [str(binary), *argv],
        env=env,
        cwd=work,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("name", CLI_NAMES)
def test_real_cli_runs_the_tool_and_sends_its_result_back(name: CLIName, tmp_path: Path) -> None:
    realcli.require(name)
    call, extra = TOOLS[name]
    turns = [Turn(text="Reading it.", tool_calls=[call]), Turn(text="It says PINEAPPLE.")]
    with Emulator(Scenario(turns=turns)) as emu:
        done = run_cli(name, emu, tmp_path, extra)
        main = emu.main_requests
    assert done.returncode == 0, done.stderr[-2000:]
    assert [r.turn for r in main] == [0, 1]
    assert PROMPT in main[0].user_text
    assert all(r.stream for r in main)
    assert len(main[1].tool_results) == 1
    assert "PINEAPPLE" in main[1].tool_results[0]
    assert "It says PINEAPPLE." in done.stdout
