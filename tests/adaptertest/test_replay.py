"""The replay stand-in CLI: plain transcripts and recordings; bytes, pacing, stderr, exit
status or signal, bad input, start-up weight."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from adaptertest import recording
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


def replayed(*args: str) -> subprocess.CompletedProcess[bytes]:
    """Run the replay tool to its end, output captured."""
    return subprocess.run(replay_command(*args), capture_output=True, timeout=30, check=False)


def test_writes_the_transcript_verbatim_then_stderr_and_exit_code(
    transcript: Path, tmp_path: Path
) -> None:
    err = tmp_path / "err.txt"
    err.write_bytes(b"rate limited\n")
    done = replayed(str(transcript), "--exit-code", "3", "--stderr", str(err))
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


def test_stdin_is_read_to_its_end_and_recorded(transcript: Path, tmp_path: Path) -> None:
    stdin_file = tmp_path / "stdin.bin"
    prompt = ("a prompt on stdin, ünïcödé ✓\n" * 20_000).encode()  # more than a pipe holds
    done = subprocess.run(
        replay_command(str(transcript), "--record-stdin", str(stdin_file)),
        input=prompt,
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert (done.returncode, done.stdout) == (0, TRANSCRIPT)
    assert stdin_file.read_bytes() == prompt


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


# -- recordings (format v1) ------------------------------------------------------------------


def write_recording(path: Path, *chunks: tuple[float, int, bytes], **header: object) -> Path:
    rec = recording.Recording(
        argv=["agent", "-p", "hi"],
        chunks=[recording.Chunk(t, fd, data) for t, fd, data in chunks],
        exit_code=header.pop("exit_code", 0),  # type: ignore[arg-type]
        signal=header.pop("signal", None),  # type: ignore[arg-type]
    )
    path.write_bytes(rec.dumps())
    return path


def test_a_recording_replays_both_streams_in_order_with_its_exit_code(tmp_path: Path) -> None:
    rec = write_recording(
        tmp_path / "rec.jsonl",
        (0.01, 1, b'{"type":"system"}\n'),
        (0.02, 2, b"warning: \xff not utf-8\n"),
        (0.03, 1, b'{"type":"result"}'),
        exit_code=3,
    )
    # Both streams into one pipe: the interleaving is kept, each chunk flushed in turn.
    merged = subprocess.run(
        replay_command(str(rec)),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=30,
        check=False,
    )
    assert merged.stdout == b'{"type":"system"}\nwarning: \xff not utf-8\n{"type":"result"}'
    assert merged.returncode == 3
    split = replayed(str(rec))
    assert split.stdout == b'{"type":"system"}\n{"type":"result"}'
    assert split.stderr == b"warning: \xff not utf-8\n"


def test_exit_code_and_stderr_options_override_the_recording(tmp_path: Path) -> None:
    rec = write_recording(
        tmp_path / "rec.jsonl", (0.0, 1, b"out\n"), (0.0, 2, b"recorded err\n"), exit_code=3
    )
    err = tmp_path / "err.txt"
    err.write_bytes(b"other err\n")
    done = replayed(str(rec), "--exit-code", "0", "--stderr", str(err))
    assert (done.stdout, done.stderr, done.returncode) == (b"out\n", b"other err\n", 0)


def test_a_recorded_signal_kills_the_replay_the_same_way(tmp_path: Path) -> None:
    rec = write_recording(
        tmp_path / "rec.jsonl", (0.0, 1, b"partial\n"), exit_code=None, signal=signal.SIGTERM
    )
    done = replayed(str(rec))
    assert done.returncode == -signal.SIGTERM
    assert done.stdout == b"partial\n"


def test_realtime_waits_for_each_chunks_time(tmp_path: Path) -> None:
    rec = write_recording(tmp_path / "rec.jsonl", (0.0, 1, b"first\n"), (0.4, 1, b"second\n"))
    start = time.monotonic()
    with subprocess.Popen(replay_command(str(rec), "--realtime"), stdout=subprocess.PIPE) as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"first\n"
        assert proc.poll() is None, "the second chunk is not due yet"
        rest = proc.stdout.read()
    assert rest == b"second\n"
    assert proc.returncode == 0
    assert time.monotonic() - start >= 0.4


GOOD_HEAD = {"adaptertest_recording": 1, "exit_code": 0, "signal": None}
GOOD_CHUNK = '{"t": 0, "fd": 1, "data": "fine"}'


def bad_head(**change: object) -> tuple[str, str]:
    head = {k: v for k, v in {**GOOD_HEAD, **change}.items() if v != "-"}
    return json.dumps(head), GOOD_CHUNK


@pytest.mark.parametrize(
    ("lines", "line", "problem"),
    [
        (bad_head(adaptertest_recording=2), 1, "format 2 is unknown"),
        (bad_head(exit_code=None), 1, "exactly one of"),
        (bad_head(signal=9), 1, "exactly one of"),
        (bad_head(exit_code="-"), 1, "lacks 'exit_code'"),
        (bad_head(exit_code=True), 1, "'exit_code' must"),
        (bad_head(exit_code=256), 1, "'exit_code' must"),
        (bad_head(argv="x"), 1, "'argv' must be a list"),
        (bad_head(duration=-1), 1, "'duration' must be finite"),
        (bad_head(chunks="1"), 1, "'chunks' must be a count"),
        ((json.dumps(GOOD_HEAD), '{"t": 0, "fd": 3, "data": "x"}'), 2, "'fd' must be 1 or 2"),
        ((json.dumps(GOOD_HEAD), '{"t": 0, "fd": true, "data": "x"}'), 2, "got True"),
        ((json.dumps(GOOD_HEAD), '{"t": NaN, "fd": 1, "data": "x"}'), 2, "'t' must be finite"),
        ((json.dumps(GOOD_HEAD), '{"t": -1, "fd": 1, "data": "x"}'), 2, "finite and >= 0"),
        ((json.dumps(GOOD_HEAD), '{"t": "0", "fd": 1, "data": "x"}'), 2, "'t' must be a number"),
        ((json.dumps(GOOD_HEAD), '{"t": 0, "fd": 1}'), 2, "exactly one of 'data' and 'b64'"),
        ((json.dumps(GOOD_HEAD), '{"t": 0, "fd": 1, "data": "x", "b64": "eA=="}'), 2, "exactly"),
        ((json.dumps(GOOD_HEAD), '{"t": 0, "fd": 1, "b64": "not base64!"}'), 2, "not valid"),
        ((json.dumps(GOOD_HEAD), '{"t": 0, "fd": 1, "data": "\\ud800"}'), 2, "not encodable"),
        ((json.dumps(GOOD_HEAD), '{"t": 0, "fd": 1, "data": 5}'), 2, "'data' must be a string"),
        ((json.dumps(GOOD_HEAD), GOOD_CHUNK, "[1, 2]"), 3, "a chunk is a JSON object"),
        ((json.dumps(GOOD_HEAD), GOOD_CHUNK, "{broken"), 3, "not a JSON line"),
        # A header cut off mid-object is an error naming it, never a plain transcript.
        ((json.dumps(GOOD_HEAD)[:30], GOOD_CHUNK), 1, "the recording header"),
        ((json.dumps(GOOD_HEAD)[:-1],), 1, "is cut off or not one JSON object"),
    ],
)
def test_a_bad_recording_is_refused_before_any_output(
    tmp_path: Path,
    lines: tuple[str, ...],
    line: int,
    problem: str,
    capsysbinary: pytest.CaptureFixture[bytes],
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert main([str(path)]) == 2
    out, err = capsysbinary.readouterr()
    assert out == b""
    assert problem.encode() in err
    assert f"{path}:{line}:".encode() in err


@pytest.mark.parametrize("content", [b"", b"\n", b"  \n\n"], ids=["empty", "newline", "blank"])
def test_an_empty_file_is_an_error_naming_it(
    tmp_path: Path, content: bytes, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_bytes(content)
    assert main([str(path)]) == 2
    out, err = capsysbinary.readouterr()
    assert out == b""
    assert f"{path} is empty".encode() in err
    assert main([str(path), "--exit-code", "0"]) == 2


def test_an_empty_transcript_of_a_cli_that_failed_before_printing_replays(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    path = tmp_path / "auth_error.jsonl"
    path.write_bytes(b"")
    stderr = tmp_path / "auth_error.stderr.txt"
    stderr.write_bytes(b"no credentials\n")
    assert main([str(path), "--exit-code", "41"]) == 41
    assert main([str(path), "--stderr", str(stderr)]) == 0
    out, err = capsysbinary.readouterr()
    assert out == b""
    assert err == b"no credentials\n"


def test_a_recording_cut_at_a_line_boundary_is_an_error_naming_it(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """The stderr chunk at the end is gone, the file still ends with a whole line."""
    path = write_recording(
        tmp_path / "run.jsonl", (0.0, 1, b'{"type":"result"}\n'), (0.1, 2, b"warning\n")
    )
    assert main([str(path)]) == 0
    capsysbinary.readouterr()
    lines = path.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join(lines[:2]) + b"\n")
    assert main([str(path)]) == 2
    out, err = capsysbinary.readouterr()
    assert out == b""
    assert f"{path}: the header counts 2 chunk lines, the file has 1".encode() in err
    assert b"cut short" in err


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["{t}", "--realtime"], "--realtime needs a recording"),
        (["{r}", "--realtime", "--delay", "5"], "contradict"),
        (["{t}", "--delay", "nan"], "--delay must be a finite number"),
        (["{t}", "--exit-code", "x"], "--exit-code expects N, got 'x'"),
        (["{t}", "--exit-code"], "--exit-code expects N"),
        (["{t}", "--bogus"], "unknown option --bogus"),
        ([], "FILE is missing"),
    ],
)
def test_more_bad_arguments_exit_2(
    transcript: Path,
    tmp_path: Path,
    args: list[str],
    problem: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    rec = write_recording(tmp_path / "rec.jsonl", (0.0, 1, b"x"))
    assert main([a.format(t=transcript, r=rec) for a in args]) == 2
    assert problem in capsys.readouterr().err


def test_options_take_the_equals_form_and_sit_anywhere(
    transcript: Path, tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    argv_file = tmp_path / "argv.json"
    code = main(["--exit-code=4", str(transcript), "-1", f"--record-argv={argv_file}", "x"])
    assert code == 4
    assert capsysbinary.readouterr().out == TRANSCRIPT
    assert json.loads(argv_file.read_text()) == ["-1", "x"]


def test_the_plain_path_loads_no_parser_and_no_json(transcript: Path) -> None:
    probe = (
        "import sys\n"
        "from adaptertest.__main__ import main\n"
        f"code = main(['replay', {str(transcript)!r}, '--delay', '0'])\n"
        "loaded = sorted({'argparse', 'json', 'pathlib', 'typing'} & set(sys.modules))\n"
        "sys.stderr.write(repr(loaded))\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-S", "-c", probe],
        capture_output=True,
        timeout=30,
        check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == TRANSCRIPT
    assert done.stderr == b"[]"
