"""``adaptertest emulate`` as a subprocess: its URL line, a request, SIGTERM, exit 0."""

from __future__ import annotations

import json
import select
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from adaptertest.emulate import instructions
from adaptertest.emulator import Emulator

Post = Callable[..., tuple[int, dict[str, str], bytes]]


def emulate(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "adaptertest", "emulate", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def first_line(proc: subprocess.Popen[str], timeout: float = 20) -> str:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, f"no output from adaptertest emulate within {timeout} s"
    return proc.stdout.readline()


def test_emulate_serves_a_scenario_until_sigterm(tmp_path: Path, post: Post) -> None:
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"turns": [{"text": "from the file"}]}), encoding="utf-8")
    with emulate("--scenario", str(scenario)) as proc:
        try:
            line = first_line(proc)
            assert line.startswith("emulator listening on http://127.0.0.1:")
            url = line.split()[-1]
            status, _, data = post(
                url + "/v1/messages",
                {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]},
            )
            assert status == 200
            assert json.loads(data)["content"] == [{"type": "text", "text": "from the file"}]
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=20)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.stdout is not None
        assert proc.stderr is not None
        out, err = line + proc.stdout.read(), proc.stderr.read()
    assert proc.returncode == 0, err
    assert f"ANTHROPIC_BASE_URL={url}" in out
    assert f'base_url="{url}/v1"' in out
    assert f"GOOGLE_GEMINI_BASE_URL={url}" in out
    assert "POST /v1/messages anthropic m: turn 0" in err
    assert "stopped after 1 request(s)" in err


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--port", "http"], "argument --port: expected a port number, got 'http'"),
        (["--port", "70000"], "argument --port: expected a port from 0 to 65535"),
        (["--scenario"], "argument --scenario: expected one argument"),
        (["--color"], "unrecognized arguments: --color"),
    ],
)
def test_bad_arguments_fail_at_once_naming_themselves(args: list[str], named: str) -> None:
    with emulate(*args) as proc:
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 2
    assert named in err


def test_a_bad_scenario_and_a_busy_port_are_named(tmp_path: Path) -> None:
    scenario = tmp_path / "bad.json"
    scenario.write_text(json.dumps({"turns": [{"deltas": "many"}]}), encoding="utf-8")
    with emulate("--scenario", str(scenario)) as proc:
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 2
    assert "--scenario" in err
    assert "turns[0].deltas" in err
    with Emulator() as busy:
        port = busy.port
        with emulate("--port", str(port)) as proc:
            _, err = proc.communicate(timeout=20)
    assert proc.returncode == 2
    assert f"--port {port}" in err


def test_instructions_name_each_cli_its_home_and_the_url() -> None:
    text = instructions("http://127.0.0.1:4321")
    assert text.splitlines()[0] == "emulator listening on http://127.0.0.1:4321"
    for variable in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"):
        assert f"export {variable}=$(mktemp -d)" in text
    assert '"$GEMINI_CLI_HOME"/.gemini/settings.json' in text
