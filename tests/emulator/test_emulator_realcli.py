"""Smoke test per real CLI: pointed at the emulator by :func:`cli_setup`, each answers
``OK`` from the scenario, and the emulator sees the prompt. Skipped (naming
``adaptertest install-clis``) where node or the CLI is missing. The example drivers'
real-CLI tiers judge the CLIs in full; this checks only the emulator's side."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from adaptertest import realcli
from adaptertest.emulator import (
    CLI_NAMES,
    CLIName,
    Emulator,
    Scenario,
    Turn,
    TurnUsage,
    cli_setup,
)

PROMPT = "say the word"
ARGV = {
    "claude": ["-p", PROMPT, "--output-format", "stream-json", "--verbose"],
    "codex": ["exec", "--json", "--skip-git-repo-check", "-m", "gpt-5.5"],
    "gemini": ["-p", PROMPT, "-o", "stream-json", "-m", "gemini-2.5-flash"],
}
SECRET_NAMES = ("ANTHROPIC", "OPENAI", "CODEX", "GEMINI", "GOOGLE", "CLAUDE")


@pytest.mark.parametrize("name", CLI_NAMES)
def test_real_cli_answers_from_the_emulator(name: CLIName, tmp_path: Path) -> None:
    binary = realcli.require(name)
    usage = TurnUsage(input_tokens=12, output_tokens=3)
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    with Emulator(Scenario(turns=[Turn(text="OK", usage=usage)], repeat_last=True)) as emu:
        setup = cli_setup(name, emu.base_url)
        for relative, content in setup.home_files.items():
            (home / relative).parent.mkdir(parents=True, exist_ok=True)
            (home / relative).write_text(content, encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith(SECRET_NAMES)}
        env.update(setup.env)
        env[setup.home_variable] = str(home)
        argv = ARGV[name]
        if name == "codex":
            argv = [*argv[:1], *setup.args, *argv[1:], PROMPT]
        done = subprocess.run(
            [str(binary), *argv, *([] if name == "codex" else setup.args)],
            env=env,
            cwd=work,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
        main = emu.main_requests
    assert done.returncode == 0, done.stderr[-2000:]
    assert '"OK"' in done.stdout
    assert main, f"{name} sent no main request; all: {[r.path for r in emu.requests]}"
    assert PROMPT in main[0].user_text
    assert main[0].stream
