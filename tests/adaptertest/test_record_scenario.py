"""adaptertest record --scenario: a command run against the emulator, kept as a recording."""

from __future__ import annotations

import json
import platform
import sys
import textwrap
from pathlib import Path

import pytest

from adaptertest import recording
from adaptertest.record import DUMMY_KEY, EMULATOR_PLACEHOLDER, emulator_env, main
from adaptertest.recording import DEFAULT_MARKER

# A stand-in CLI: asks the emulator (Anthropic Messages, not streamed) and prints what it
# got, the URL it was given as an argument, the base URLs and the key it was handed.
AGENT = """
import json, os, sys, urllib.request
base = os.environ["ANTHROPIC_BASE_URL"]
request = urllib.request.Request(
    base + "/v1/messages",
    data=json.dumps({"model": "m", "max_tokens": 8, "tools": [{"name": "Read"}],
                     "messages": [{"role": "user", "content": "say OK"}]}).encode(),
    headers={"content-type": "application/json", "x-api-key": os.environ["ANTHROPIC_API_KEY"]},
)
with urllib.request.urlopen(request, timeout=30) as answer:
    body = json.load(answer)
print(json.dumps({"text": body["content"][0]["text"], "arg": sys.argv[1],
                  "openai": os.environ["OPENAI_BASE_URL"],
                  "gemini": os.environ["GOOGLE_GEMINI_BASE_URL"],
                  "same": os.environ["ADAPTERTEST_EMULATOR_URL"] == base,
                  "key": os.environ["ANTHROPIC_API_KEY"]}))
"""


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    agent = tmp_path / "agent.py"
    agent.write_text(textwrap.dedent(AGENT))
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"turns": [{"text": "OK from the emulator"}]}))
    return agent, scenario


def test_the_command_talks_to_the_emulator_and_the_file_says_emulator(
    tmp_path: Path, files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    agent, scenario = files
    out = tmp_path / "run.rec"
    status = main(
        [str(out), "--scenario", str(scenario), "--", sys.executable, str(agent), "{emulator}/x"]
    )
    assert status == 0, capsys.readouterr().err
    kept = recording.read(out)
    line = json.loads(kept.stdout)
    assert line["text"] == "OK from the emulator"
    # The address changes every run: the file names it {emulator}, argument and env alike.
    assert line["arg"] == f"{EMULATOR_PLACEHOLDER}/x"
    assert line["openai"] == f"{EMULATOR_PLACEHOLDER}/v1"
    assert line["gemini"] == EMULATOR_PLACEHOLDER
    assert line["same"] is True
    # The command got the dummy key, and the file does not even keep that.
    assert line["key"] == DEFAULT_MARKER
    assert DUMMY_KEY.encode() not in out.read_bytes()
    assert "emulator" in kept.redactions
    assert kept.cli is None  # a python script is no CLI the recorder knows
    assert "the emulator answered 1 requests" in capsys.readouterr().err


def test_cli_names_the_program_and_its_version_in_the_header(
    tmp_path: Path, files: tuple[Path, Path]
) -> None:
    agent, scenario = files
    out = tmp_path / "run.rec"
    argv = [str(out), "--scenario", str(scenario), "--cli", "agent"]
    assert main([*argv, "--", sys.executable, str(agent), "-"]) == 0
    kept = recording.read(out)
    # The version is what the program prints for --version (here: python's).
    assert kept.cli == {"name": "agent", "version": platform.python_version()}
    assert kept.header()["cli"] == kept.cli
    assert recording.loads(kept.dumps()).cli == kept.cli


def test_a_bad_scenario_is_refused_before_anything_runs(
    tmp_path: Path, files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    agent, _ = files
    out = tmp_path / "run.rec"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"turns": [{"deltas": 0}]}))
    assert main([str(out), "--scenario", str(bad), "--", sys.executable, str(agent)]) == 2
    err = capsys.readouterr().err
    assert "--scenario" in err, err
    assert "turns[0].deltas" in err, err
    missing = tmp_path / "missing.json"
    assert main([str(out), "--scenario", str(missing), "--", sys.executable, str(agent)]) == 2
    assert "--scenario: no such file" in capsys.readouterr().err
    assert not out.exists()


def test_the_emulator_variables_point_every_cli_at_one_address() -> None:
    env = emulator_env("http://127.0.0.1:9")
    assert env["ANTHROPIC_BASE_URL"] == env["GOOGLE_GEMINI_BASE_URL"] == "http://127.0.0.1:9"
    assert env["OPENAI_BASE_URL"] == "http://127.0.0.1:9/v1"
    assert env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert {env[k] for k in ("ANTHROPIC_API_KEY", "GEMINI_API_KEY", "OPENAI_API_KEY")} == {
        DUMMY_KEY
    }


def test_a_recording_with_a_bad_cli_field_is_refused() -> None:
    head = {
        "adaptertest_recording": 1,
        "argv": ["x"],
        "exit_code": 0,
        "signal": None,
        "cli": {"name": 3},
    }
    with pytest.raises(recording.RecordingError, match="'cli' must be an object of strings"):
        recording.loads(json.dumps(head).encode() + b"\n")
