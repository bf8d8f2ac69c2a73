"""The replay stand-in CLI: bytes, pacing, stderr, exit status, start-up weight."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from adaptertest.replay import main

TRANSCRIPT = (
    b'{"type":"system","subtype":"init","session_id":"s-1"}\n'
    b'{"type":"assistant","message":{"content":[{"type":"text","text":"caf\xc3\xa9"}]}}\r\n'
    b"\n"
    b'{"type":"result","subtype":"success","result":"OK"}'  # no final newline
)


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    path = tmp_path / "run.jsonl"
    path.write_bytes(TRANSCRIPT)
    return path


def replay_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "adaptertest", "replay", *args]


def test_writes_the_transcript_verbatim_then_stderr_and_exit_code(
    transcript: Path, tmp_path: Path
) -> None:
    err = tmp_path / "err.txt"
    err.write_bytes(b"rate limited\n")
    done = subprocess.run(
        replay_command(str(transcript), "--exit-code", "3", "--stderr", str(err)),
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert done.stdout == TRANSCRIPT
    assert done.stderr == b"rate limited\n"
    assert done.returncode == 3


def test_lines_arrive_one_by_one_with_the_delay(transcript: Path) -> None:
    start = time.monotonic()
    with subprocess.Popen(
        replay_command(str(transcript), "--delay", "200"), stdout=subprocess.PIPE
    ) as proc:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first == TRANSCRIPT.splitlines(keepends=True)[0]
        assert proc.poll() is None, "the first line must be flushed before the others are due"
        rest = proc.stdout.read()
    assert first + rest == TRANSCRIPT
    assert proc.returncode == 0
    assert time.monotonic() - start >= 3 * 0.2  # three gaps between four lines


def test_a_reader_that_goes_away_gets_no_traceback(transcript: Path) -> None:
    with subprocess.Popen(
        replay_command(str(transcript), "--delay", "50", "--exit-code", "4"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        assert proc.stdout is not None
        assert proc.stderr is not None
        proc.stdout.readline()
        proc.stdout.close()
        stderr = proc.stderr.read()
    assert proc.returncode == 4
    assert b"Traceback" not in stderr


def test_driver_arguments_are_ignored_and_can_be_recorded(
    transcript: Path, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    argv_file = tmp_path / "argv.json"
    code = main(
        [str(transcript), "--record-argv", str(argv_file), "--", "-p", "--model", "m-1", "hi"]
    )
    assert code == 0
    assert capsysbinary.readouterr().out == TRANSCRIPT
    assert json.loads(argv_file.read_text()) == ["-p", "--model", "m-1", "hi"]


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["missing.jsonl"], "transcript file not found"),
        (["{t}", "--exit-code", "256"], "--exit-code must be between 0 and 255"),
        (["{t}", "--delay", "-1"], "--delay must not be negative"),
        (["{t}", "--stderr", "nope.txt"], "--stderr file not found"),
        (["{t}", "--record-argv", "{t}.missing/argv.json"], "No such file or directory"),
    ],
)
def test_bad_arguments_exit_2(
    transcript: Path, args: list[str], problem: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([a.format(t=transcript) for a in args]) == 2
    assert problem in capsys.readouterr().err


def test_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "--exit-code" in capsys.readouterr().out


def test_replay_imports_nothing_heavy(transcript: Path) -> None:
    probe = (
        "import sys\n"
        "from adaptertest.__main__ import main\n"
        f"code = main(['replay', {str(transcript)!r}])\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules}"
        " & {'pydantic', 'rich', 'pytest', 'hypothesis', 'anyio', 'jsonschema', 'driver'})\n"
        "sys.stderr.write(repr(heavy))\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, timeout=30, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == TRANSCRIPT
    assert done.stderr == b"[]"
