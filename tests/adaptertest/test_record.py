"""adaptertest record: a real command's bytes, stderr, status and timing, secrets redacted."""

from __future__ import annotations

import io
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adaptertest import recording
from adaptertest.record import MIN_SECRET, Redactor, main, record
from adaptertest.recording import DEFAULT_MARKER
from driver import is_secret_name

TOKEN = "sk-fake-0123456789abcdef"

AGENT = """
import json, os, sys
token = os.environ["ACME_API_TOKEN"]
out = sys.stdout.buffer
out.write(b'{"type":"system","subtype":"init","session_id":"s-1"}\\n')
out.flush()
out.write(json.dumps({"type": "debug", "auth": "Bearer " + token}).encode() + b"\\n")
out.flush()
sys.stderr.write("warning: slow network, token=" + token + "\\n")
sys.stderr.flush()
out.write(b'{"type":"result","subtype":"error","result":"caf\\xc3\\xa9"}\\n')
out.flush()
sys.exit(3)
"""


def script(tmp_path: Path, body: str, name: str = "agent.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def environ(**extra: str) -> dict[str, str]:
    """This environment without its secrets, with a home that appears in no path here."""
    env = {k: v for k, v in os.environ.items() if not is_secret_name(k)}
    env["HOME"] = "/nonexistent/adaptertest-home"
    env.update(extra)
    return env


def adaptertest(*args: str) -> list[str]:
    return [sys.executable, "-m", "adaptertest", *args]


def run(
    args: list[str], env: Mapping[str, str] | None = None, **kwargs: object
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(  # type: ignore[call-overload,no-any-return]
        args, capture_output=True, timeout=60, check=False, env=env, **kwargs
    )


# -- the round trip ------------------------------------------------------------------------


def test_round_trip_reproduces_bytes_and_status_and_keeps_the_token_out(tmp_path: Path) -> None:
    agent = script(tmp_path, AGENT)
    env = environ(ACME_API_TOKEN=TOKEN)
    original = run([sys.executable, str(agent)], env)
    assert original.returncode == 3
    assert TOKEN.encode() in original.stdout

    out = tmp_path / "run.jsonl"
    recorded = run(adaptertest("record", str(out), "--", sys.executable, str(agent)), env)
    assert recorded.returncode == 3, recorded.stderr
    assert recorded.stdout == original.stdout, "the output is shown live, as the command wrote it"
    assert recorded.stderr.startswith(original.stderr)
    assert b"1 chunks" not in recorded.stderr
    assert b"redacted: env:ACME_API_TOKEN" in recorded.stderr

    raw = out.read_bytes()
    assert TOKEN.encode() not in raw
    rec = recording.read(out)
    assert TOKEN.encode() not in rec.stdout + rec.stderr
    assert rec.exit_code == 3
    assert rec.signal is None
    assert rec.redactions == ["env:ACME_API_TOKEN"]
    assert rec.marker == DEFAULT_MARKER
    assert rec.argv == [sys.executable, str(agent)]
    assert [c.t for c in rec.chunks] == sorted(c.t for c in rec.chunks)
    assert 0 <= rec.chunks[0].t <= rec.duration

    replayed = run(adaptertest("replay", str(out)))
    redacted = TOKEN.encode(), DEFAULT_MARKER.encode()
    assert replayed.stdout == original.stdout.replace(*redacted)
    assert replayed.stderr == original.stderr.replace(*redacted)
    assert replayed.returncode == 3


def test_the_header_lists_what_was_replaced_and_the_file_is_jsonl(tmp_path: Path) -> None:
    agent = script(tmp_path, AGENT)
    out = tmp_path / "run.jsonl"
    env = environ(ACME_API_TOKEN=TOKEN, UNUSED_SECRET="never-printed-value")
    run(adaptertest("record", str(out), "--", sys.executable, str(agent)), env)
    lines = out.read_text(encoding="utf-8").split("\n")
    assert lines[-1] == ""
    head = json.loads(lines[0])
    assert list(head) == [
        "adaptertest_recording",
        "argv",
        "exit_code",
        "signal",
        "redactions",
        "marker",
        "duration",
        "chunks",
    ]
    assert head["adaptertest_recording"] == 1
    assert head["chunks"] == len(lines) - 2
    assert head["redactions"] == ["env:ACME_API_TOKEN"], "only what was found is listed"
    for line in lines[1:-1]:
        chunk = json.loads(line)
        assert set(chunk) in ({"t", "fd", "data"}, {"t", "fd", "b64"})


def test_a_secret_in_the_command_line_is_redacted_in_the_header(tmp_path: Path) -> None:
    agent = script(tmp_path, "import sys; print(len(sys.argv))")
    out = tmp_path / "run.jsonl"
    command = (sys.executable, str(agent), "--api-key", TOKEN)
    done = run(adaptertest("record", str(out), "--", *command), environ(ACME_API_TOKEN=TOKEN))
    assert done.returncode == 0, done.stderr
    rec = recording.read(out)
    assert rec.argv[-1] == DEFAULT_MARKER
    assert rec.stdout == b"3\n"
    assert TOKEN.encode() not in out.read_bytes()


# -- signals -------------------------------------------------------------------------------


def test_a_child_killed_by_a_signal_is_recorded_and_mirrored(tmp_path: Path) -> None:
    agent = script(
        tmp_path,
        """
        import os, signal, sys
        sys.stdout.write('{"type":"partial"}\\n')
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGTERM)
        """,
    )
    out = tmp_path / "killed.jsonl"
    done = run(adaptertest("record", str(out), "--", sys.executable, str(agent)), environ())
    assert done.returncode == -signal.SIGTERM
    rec = recording.read(out)
    assert (rec.exit_code, rec.signal) == (None, signal.SIGTERM)
    assert rec.stdout == b'{"type":"partial"}\n'
    replayed = run(adaptertest("replay", str(out)))
    assert replayed.returncode == -signal.SIGTERM
    assert replayed.stdout == b'{"type":"partial"}\n'


HANDLES_SIGNALS = """
import signal, sys

def stop(signum, frame):
    sys.stdout.write(f"got {signum}\\n")
    sys.stdout.flush()
    sys.exit(5)

signal.signal(signal.SIGINT, stop)
signal.signal(signal.SIGTERM, stop)
sys.stdout.write("ready\\n")
sys.stdout.flush()
while True:
    signal.pause()
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signals_to_the_recorder_reach_the_child_and_the_file_is_written(
    tmp_path: Path, sig: signal.Signals
) -> None:
    agent = script(tmp_path, HANDLES_SIGNALS)
    out = tmp_path / "interrupted.jsonl"
    with subprocess.Popen(
        adaptertest("record", str(out), "--", sys.executable, str(agent)),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environ(),
    ) as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"ready\n"  # the child runs, its handler is set
        proc.send_signal(sig)  # to the recorder only, not to its process group
        rest, err = proc.communicate(timeout=60)
    assert rest == f"got {int(sig)}\n".encode()
    assert proc.returncode == 5, err
    rec = recording.read(out)
    assert rec.stdout == f"ready\ngot {int(sig)}\n".encode()
    assert rec.exit_code == 5


# -- bytes ---------------------------------------------------------------------------------


def test_bytes_that_are_not_utf8_are_kept_as_base64_and_replayed(tmp_path: Path) -> None:
    payload = b'{"type":"x","raw":"\xff\xfe\x80"}\r\n\x00tail without newline'
    agent = script(tmp_path, f"import sys\nsys.stdout.buffer.write({payload!r})\n")
    out = tmp_path / "bytes.jsonl"
    done = run(adaptertest("record", str(out), "--", sys.executable, str(agent)), environ())
    assert done.returncode == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()[1:]]
    assert any("b64" in line for line in lines)
    assert run(adaptertest("replay", str(out))).stdout == payload


def test_separators_inside_chunks_survive_the_jsonl_file(tmp_path: Path) -> None:
    text = "a\u2028b\x85c\rd\x1ce\n"
    rec = recording.Recording(
        argv=["x"], chunks=[recording.Chunk(0.5, 1, text.encode())], exit_code=0
    )
    path = tmp_path / "seps.jsonl"
    path.write_bytes(rec.dumps())
    back = recording.read(path)
    assert back.stdout == text.encode()
    assert len(back.chunks) == 1


# -- redaction -----------------------------------------------------------------------------


def split_secret_agent(tmp_path: Path) -> Path:
    """Writes half of the token, waits for a line on stdin, writes the other half."""
    return script(
        tmp_path,
        """
        import os, sys
        token = os.environ["ACME_API_TOKEN"]
        half = len(token) // 2
        sys.stdout.write('{"key":"' + token[:half])
        sys.stdout.flush()
        sys.stdin.readline()
        sys.stdout.write(token[half:] + '"}\\n')
        sys.stdout.flush()
        """,
    )


def test_a_secret_split_across_two_reads_is_still_redacted(tmp_path: Path) -> None:
    agent = split_secret_agent(tmp_path)
    out = tmp_path / "split.jsonl"
    half = len(TOKEN) // 2
    with subprocess.Popen(
        adaptertest("record", str(out), "--", sys.executable, str(agent)),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environ(ACME_API_TOKEN=TOKEN),
    ) as proc:
        assert proc.stdin is not None
        assert proc.stdout is not None
        first = b""
        while not first.endswith(TOKEN[:half].encode()):  # the recorder has read half
            first += os.read(proc.stdout.fileno(), 4096)
        proc.stdin.write(b"go on\n")
        proc.stdin.flush()
        rest, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert first + rest == b'{"key":"' + TOKEN.encode() + b'"}\n'
    rec = recording.read(out)
    assert rec.stdout == b'{"key":"[REDACTED]"}\n'
    assert TOKEN[:half].encode() not in out.read_bytes()
    assert TOKEN[half:].encode() not in out.read_bytes()


def feed_in_pieces(redactor: Redactor, data: bytes, cuts: list[int]) -> bytes:
    stream = redactor.stream()
    bounds = [0, *sorted(cuts), len(data)]
    pieces = [data[a:b] for a, b in itertools.pairwise(bounds)]
    return b"".join(stream.feed(piece) for piece in pieces) + stream.flush()


def rules(*pairs: tuple[str, str], home: str | None = None) -> Redactor:
    from adaptertest.record import redaction_rules

    secrets = [value for _, value in pairs]
    return Redactor(redaction_rules({}, secrets, home))


def test_every_split_point_gives_the_same_output_as_the_whole_stream() -> None:
    redactor = rules(("a", "abcd-secret"), ("b", "abcd-secret-longer"), home="/home/al")
    data = (
        b"x abcd-secret y abcd-secret-longer z abcd-secre /home/al/p /home/alex "
        b"abcd-secretabcd-secret /home/al"
    )
    whole = redactor.redact(data)
    assert whole == (
        b"x [REDACTED] y [REDACTED] z abcd-secre ~/p /home/alex [REDACTED][REDACTED] ~"
    )
    for i in range(len(data) + 1):
        for j in range(i, len(data) + 1, 7):
            assert feed_in_pieces(redactor, data, [i, j]) == whole, (i, j)


def test_one_byte_at_a_time_gives_the_same_output() -> None:
    redactor = rules(("a", "tok-aaaa"), ("b", "aaaa-tok"))
    data = b"tok-aaaa-tok aaaa-tok tok-aaa tok-aaaa"
    assert feed_in_pieces(redactor, data, list(range(1, len(data)))) == redactor.redact(data)


def test_held_back_bytes_never_cross_into_another_stream() -> None:
    redactor = rules(("a", "secret-value"))
    out, err = redactor.stream(), redactor.stream()
    assert out.feed(b"start secret-") == b"start "
    assert err.feed(b"value") == b"value"  # not the rest of stdout's held prefix
    assert out.feed(b"value end") == b"[REDACTED] end"


def test_a_character_split_across_reads_stays_in_one_utf8_chunk() -> None:
    stream = Redactor(()).stream()
    assert stream.feed(b"caf\xc3") == b"caf"
    assert stream.feed(b"\xa9 \xe2\x82") == b"\xc3\xa9 "
    assert stream.feed(b"\xac!") == b"\xe2\x82\xac!"
    assert stream.feed(b"bad \xff") == b"bad \xff"  # not a character start: nothing to wait for
    assert stream.feed(b"\xf0\x9f") == b""
    assert stream.flush() == b"\xf0\x9f"  # the end of the stream keeps an unfinished one


def test_json_escaped_forms_of_a_secret_are_redacted(tmp_path: Path) -> None:
    secret = 'pa"ss/wörd\\x'
    agent = script(
        tmp_path,
        f"""
        import json
        print(json.dumps({{"a": {secret!r}}}))
        print(json.dumps({{"a": {secret!r}}}, ensure_ascii=False))
        print({secret!r})
        """,
    )
    out = tmp_path / "escaped.jsonl"
    done = run(
        adaptertest("record", str(out), "--secret", secret, "--", sys.executable, str(agent)),
        environ(),
    )
    assert done.returncode == 0, done.stderr
    assert recording.read(out).stdout == b'{"a": "[REDACTED]"}\n' * 2 + b"[REDACTED]\n"


def test_home_becomes_tilde_only_as_a_whole_path(tmp_path: Path) -> None:
    home = tmp_path / "al"
    home.mkdir()
    agent = script(
        tmp_path,
        """
        import os
        home = os.environ["HOME"]
        print(home + "/project/main.py")
        print(home + "ex/other")
        print(home)
        """,
    )
    out = tmp_path / "home.jsonl"
    done = run(
        adaptertest("record", str(out), "--", sys.executable, str(agent)), environ(HOME=str(home))
    )
    assert done.returncode == 0, done.stderr
    rec = recording.read(out)
    assert rec.stdout == f"~/project/main.py\n{home}ex/other\n~\n".encode()
    assert rec.redactions == ["home"]


def test_no_redact_keeps_everything_and_says_so(tmp_path: Path) -> None:
    agent = script(tmp_path, AGENT)
    out = tmp_path / "raw.jsonl"
    home = str(tmp_path)
    done = run(
        adaptertest("record", str(out), "--no-redact", "--", sys.executable, str(agent)),
        environ(ACME_API_TOKEN=TOKEN, HOME=home),
    )
    assert done.returncode == 3
    assert b"--no-redact" in done.stderr
    rec = recording.read(out)
    assert TOKEN.encode() in rec.stdout
    assert rec.redactions == []
    assert rec.argv == [sys.executable, str(agent)], "the home directory stays in argv too"


def test_short_secret_values_are_skipped_with_a_notice(tmp_path: Path) -> None:
    """The short-value rule is one rule: an environment value and a ``--secret`` value
    under MIN_SECRET characters are both left alone, with a notice."""
    agent = script(tmp_path, "print('abc and xy and tok-value')")
    out = tmp_path / "short.jsonl"
    done = run(
        adaptertest("record", str(out), "--secret", "xy", "--", sys.executable, str(agent)),
        environ(SHORT_TOKEN="abc", LONG_TOKEN="tok-value"),
    )
    assert done.returncode == 0
    assert b"not redacting env:SHORT_TOKEN" in done.stderr
    assert f"not redacting --secret #1: shorter than {MIN_SECRET} characters".encode() in (
        done.stderr
    )
    assert recording.read(out).stdout == b"abc and xy and [REDACTED]\n"
    # One chunk, or two when the redactor held back a possible start of a secret.
    assert re.search(rb": [12] chunks?, exit status 0", done.stderr), done.stderr


@pytest.mark.parametrize(
    "name",
    [
        "OPENAI_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "GH_TOKEN",
        "github_token",
        "AWS_SECRET_ACCESS_KEY",
        "PGPASSWORD",
        "DB_PASS",
        "GITHUB_PAT",
        "AUTH_HEADER",
        "AUTHORIZATION",
        "APIKEY",
        "SESSION_COOKIES",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "MY_PASSPHRASE",
    ],
)
def test_secret_looking_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name",
    [
        "PATH",
        "PWD",
        "OLDPWD",
        "HOME",
        "TOKENIZERS_PARALLELISM",
        "KEYBOARD_LAYOUT",
        "XAUTHORITY",
        "GIT_AUTHOR_NAME",
        "SSH_ASKPASS",
    ],
)
def test_ordinary_names(name: str) -> None:
    assert not is_secret_name(name)


def test_record_in_process_returns_the_recording_without_showing_it() -> None:
    code = "import sys; sys.stdout.write('out'); sys.stderr.write('err'); sys.exit(7)"
    rec = record([sys.executable, "-c", code], redactor=rules(("a", "never")))
    assert (rec.stdout, rec.stderr, rec.exit_code, rec.signal) == (b"out", b"err", 7, None)
    assert rec.redactions == []


def test_without_a_pidfd_the_exit_is_polled_and_the_live_view_is_unredacted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import adaptertest.record as module

    monkeypatch.setattr(module, "_pidfd", lambda pid: None)  # as on macOS
    shown_out, shown_err = io.BytesIO(), io.BytesIO()
    code = "import sys; print('key=sk-abcdef'); sys.stderr.write('e'); sys.exit(4)"
    rec = record(
        [sys.executable, "-c", code],
        redactor=rules(("a", "sk-abcdef")),
        stdout=shown_out,
        stderr=shown_err,
    )
    assert shown_out.getvalue() == b"key=sk-abcdef\n", "the terminal is the user's own"
    assert shown_err.getvalue() == b"e"
    assert rec.stdout == b"key=[REDACTED]\n"
    assert rec.exit_code == 4


# -- bad command lines ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["{d}/out.jsonl"], "no command to record: put it after --"),
        (["{d}/out.jsonl", "--"], "no command to record"),
        (["{d}/out.jsonl", "python", "x.py"], "put the command after --"),
        (["{d}/missing/out.jsonl", "--", "true"], "the directory of OUT does not exist"),
        (["{d}", "--", "true"], "OUT is a directory"),
        (["{d}/exists.jsonl", "--", "true"], "OUT exists"),
        (["{d}/out.jsonl", "--no-redact", "--secret", "abcdef", "--", "true"], "contradict"),
        ([], "required: OUT"),
    ],
)
def test_bad_command_lines_fail_at_once(
    tmp_path: Path, args: list[str], problem: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "exists.jsonl").write_text("keep me")
    marker = tmp_path / "ran"
    touch = [sys.executable, "-c", f"open({str(marker)!r}, 'w')"]  # proof the command ran
    argv = [part for a in args for part in (touch if a == "true" else [a.format(d=tmp_path)])]
    assert main(argv) == 2
    assert problem in capsys.readouterr().err
    assert (tmp_path / "exists.jsonl").read_text() == "keep me"
    assert not (tmp_path / "out.jsonl").exists()
    assert not marker.exists()


def test_a_missing_command_exits_127_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out.jsonl"
    assert main([str(out), "--", str(tmp_path / "no-such-cli")]) == 127
    assert "command not found" in capsys.readouterr().err
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [], "no partial file is left behind"


def test_force_replaces_an_existing_recording(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_text("old")
    command = [sys.executable, "-c", "print('new')"]
    done = run(adaptertest("record", str(out), "--force", "--", *command), environ())
    assert done.returncode == 0
    assert recording.read(out).stdout == b"new\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]


def test_help_names_the_command_and_the_redaction(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    assert "-- COMMAND" in text
    assert "--no-redact" in text
    done = run(adaptertest("--help"))
    assert b"record" in done.stdout


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    secrets=st.lists(st.text("ab-", min_size=MIN_SECRET, max_size=7), min_size=1, max_size=3),
    data=st.binary(max_size=40).map(lambda b: bytes(b"ab-"[x % 3] for x in b)),
    cuts=st.lists(st.integers(0, 40), max_size=6),
)
def test_redaction_does_not_depend_on_where_reads_end(
    secrets: list[str], data: bytes, cuts: list[int]
) -> None:
    from adaptertest.record import redaction_rules

    redactor = Redactor(redaction_rules({}, secrets, None))
    whole = redactor.redact(data)
    assert feed_in_pieces(redactor, data, [min(c, len(data)) for c in cuts]) == whole
    for secret in secrets:
        assert secret.encode() not in whole.replace(DEFAULT_MARKER.encode(), b"|")


def test_a_descendant_holding_the_output_open_does_not_hang_the_recorder(tmp_path: Path) -> None:
    agent = script(
        tmp_path,
        """
        import subprocess, sys
        lingering = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        print(lingering.pid, flush=True)
        """,
    )
    out = tmp_path / "lingering.jsonl"
    done = run(adaptertest("record", str(out), "--", sys.executable, str(agent)), environ())
    pid = int(done.stdout.split()[0])
    os.kill(pid, signal.SIGKILL)
    assert done.returncode == 0
    assert b"keeps its output open" in done.stderr
    assert recording.read(out).stdout == done.stdout
