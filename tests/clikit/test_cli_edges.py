"""What a CLI prints at the edges of its output, and what it leaves behind outside its
process group: the kit reads the one as meant and ends the other.

The CLIs are small Python scripts; ``test_process_hygiene.py`` has the process-group
cases these build on.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from typing import Any

import pytest
from test_process_hygiene import (  # the fixtures: both backends, a short kill grace
    DoneParser,
    anyio_backend,  # noqa: F401
    short_kill_grace,  # noqa: F401
)

from adaptertest import RecordingSink
from driver import InvalidDriverConfigError, Request
from driver.clikit import (
    LineFramer,
    LineJudge,
    RunOutput,
    run_cli,
    run_turn,
)
from driver.clikit._proctable import RUN_MARKER_VARIABLE, is_running

pytestmark = pytest.mark.skipif(os.name != "posix", reason="process sessions are POSIX")


def parser() -> DoneParser:
    return DoneParser(RunOutput(RecordingSink(), streaming=False, run_id="", thread_id=""))


def reap(pid: int) -> None:
    """Kill a process a failed assertion left behind."""
    if is_running(pid):
        os.kill(pid, signal.SIGKILL)


async def collect(code: str, **kwargs: Any) -> tuple[list[bytes], float]:
    lines: list[bytes] = []
    started = time.monotonic()
    await run_cli(
        [sys.executable, "-c", code],
        cwd=None,
        timeout=60,
        on_spawn=lambda pid: None,
        on_chunk=lambda stream, data: None,
        on_line=lines.append,
        **kwargs,
    )
    return lines, time.monotonic() - started


# -- a last line without its newline ----------------------------------------------------------


@pytest.mark.parametrize(
    ("pending", "whole"),
    [
        (b'{"done": true}', True),
        (b'{"done": true}  \r', True),
        (b'\xef\xbb\xbf{"done": true}', True),  # the first line may carry the mark
        (b'{"done": {"nested": 1}', False),  # a brace inside, but not the end of the object
        (b'{"text": "}"', False),
        (b'{"done": true} tail', False),
        (b"[1, 2]", False),
        (b"", False),
        (b'{"bad": "\xff"}', False),
    ],
)
def test_an_unterminated_line_is_whole_only_when_it_is_one_object(
    pending: bytes, whole: bool
) -> None:
    judge = parser()
    assert isinstance(judge, LineJudge)
    assert judge.is_whole_line(memoryview(pending)) is whole


def test_the_mark_counts_only_before_the_first_line() -> None:
    judge = parser()
    judge.feed(b'{"other": 1}')
    assert judge.is_whole_line(memoryview(b'\xef\xbb\xbf{"done": true}')) is False


def test_the_framer_hands_on_the_pending_line_only_when_judged_whole() -> None:
    lines: list[bytes] = []
    framer = LineFramer(lines.append, keep=True)
    framer.feed(b'{"a": 1}\n{"done": tr')
    assert framer.take_pending(lambda view: bytes(view).endswith(b"}")) is False
    framer.feed(b"ue}")
    assert framer.take_pending(lambda view: bytes(view).endswith(b"}")) is True
    framer.feed(b"\n")  # the newline printed late: an empty line, nothing lost
    framer.flush()
    assert lines == [b'{"a": 1}', b'{"done": true}', b""]
    assert framer.getvalue() == b'{"a": 1}\n{"done": true}\n'


@pytest.mark.anyio
async def test_a_terminal_line_without_newline_starts_the_grace_for_a_lingering_cli() -> None:
    code = (
        "import sys, time\n"
        'sys.stdout.write(\'{"progress": 1}\\n{"done": true}\')\n'
        "sys.stdout.flush()\n"
        "time.sleep(120)\n"
    )
    started = time.monotonic()
    response = await run_turn(
        Request(prompt="hi"),
        RecordingSink(),
        driver_type="done",
        argv=lambda resume_id: [sys.executable, "-c", code],
        cwd="",
        model="",
        timeout=60,
        parser=DoneParser,
        terminal_grace=0.3,
    )
    assert response.failure is None, response.failure
    assert (
        response.metadata["ended_after_terminal"] == "still running 0.3 s after its terminal line"
    )
    assert time.monotonic() - started < 30


# -- descendants outside the process group ----------------------------------------------------

LONG_DRAIN = 60.0
"""A drain wait no run may reach: the test would notice it."""

SETSID_CHILD = (
    "import subprocess, sys\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'],"
    " start_new_session=True{pipes})\n"
    "print(f'pid {{child.pid}}', flush=True)\n"
)


@pytest.mark.anyio
async def test_every_run_marks_its_processes_with_a_fresh_value() -> None:
    code = f"import os\nprint(os.environ.get({RUN_MARKER_VARIABLE!r}, 'none'))\n"
    first, _ = await collect(code)
    second, _ = await collect(code)
    assert len(first[0]) == 32
    assert len(second[0]) == 32
    assert first != second
    assert RUN_MARKER_VARIABLE not in os.environ  # only the CLI's environment carries it


@pytest.mark.anyio
async def test_a_setsid_descendant_holding_stdout_is_ended_without_the_drain_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("driver.clikit._process.DRAIN_SECONDS", LONG_DRAIN)
    lines, elapsed = await collect(SETSID_CHILD.format(pipes=""))
    (pid,) = [int(x.split()[1]) for x in lines if x.startswith(b"pid ")]
    try:
        assert not is_running(pid)
        assert elapsed < LONG_DRAIN / 2  # ended, not waited out
    finally:
        reap(pid)


@pytest.mark.anyio
async def test_a_setsid_descendant_ignoring_sigterm_is_killed() -> None:
    ignoring = (
        "import subprocess, sys\n"
        "code = 'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "print(1, flush=True); time.sleep(120)'\n"
        "child = subprocess.Popen([sys.executable, '-c', code], start_new_session=True,"
        " stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)\n"
        "child.stdout.readline()\n"  # its handler is in place
        "print(f'pid {child.pid}', flush=True)\n"
    )
    lines, elapsed = await collect(ignoring)
    (pid,) = [int(x.split()[1]) for x in lines if x.startswith(b"pid ")]
    try:
        assert not is_running(pid)
        assert elapsed < 20
    finally:
        reap(pid)


@pytest.mark.anyio
async def test_without_a_process_table_the_group_alone_is_ended(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Where /proc is absent the marker cannot be searched: the run still returns, and a
    setsid descendant that holds no pipe of the run is left (as documented)."""
    monkeypatch.setattr("driver.clikit._process.can_scan", lambda: False)
    code = SETSID_CHILD.format(pipes=", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL")
    lines, elapsed = await collect(code)
    (pid,) = [int(x.split()[1]) for x in lines if x.startswith(b"pid ")]
    try:
        assert is_running(pid)
        assert elapsed < 30  # holds no pipe of the run: nothing to wait for
    finally:
        reap(pid)


# -- what no process can be started with ------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("prompt", "argv", "env", "where"),
    [
        ("a\0b", ["prog", "--", "a\0b"], None, "the prompt (character 1)"),
        ("hi", ["prog", "--model", "m\0"], None, "argument 2 of the command line"),
        ("hi", ["prog"], {"X": "1\0"}, "the environment"),
    ],
)
async def test_a_nul_byte_is_refused_before_anything_is_emitted(
    prompt: str, argv: list[str], env: dict[str, str] | None, where: str
) -> None:
    sink = RecordingSink()
    with pytest.raises(InvalidDriverConfigError, match="contains a NUL byte") as raised:
        await run_turn(
            Request(prompt=prompt),
            sink,
            driver_type="done",
            argv=lambda resume_id: argv,
            cwd="",
            env=env,
            model="",
            timeout=60,
            parser=DoneParser,
        )
    assert where in str(raised.value)
    assert raised.value.driver == "done"
    assert sink.events == []
    assert sink.stream == []


# -- parsing from the bytes -------------------------------------------------------------------


class TextKeeper(DoneParser):
    """Records what on_object got; only the done line's text is asked for."""

    def __init__(self, out: RunOutput) -> None:
        super().__init__(out)
        self.seen: list[tuple[dict[str, Any], str]] = []

    def needs_text(self, line: dict[str, Any]) -> bool:
        return "done" in line

    def on_object(self, line: dict[str, Any], text: str) -> None:
        self.seen.append((line, text))
        super().on_object(line, text)


def keeper() -> TextKeeper:
    return TextKeeper(RunOutput(RecordingSink(), streaming=False, run_id="", thread_id=""))


def test_only_the_lines_whose_text_is_needed_are_decoded() -> None:
    parser = keeper()
    parser.feed(b' {"say": "h\\u00e9llo \\ud83d\\ude00"}\r')
    parser.feed(b'{"done": true, "n": 1.5e300}  ')
    assert parser.seen == [
        ({"say": "h\u00e9llo \U0001f600"}, ""),
        ({"done": True, "n": 1.5e300}, '{"done": true, "n": 1.5e300}'),
    ]
    assert parser.terminal is not None
    assert parser.terminal.raw_json == '{"done": true, "n": 1.5e300}'


@pytest.mark.parametrize(
    ("line", "value", "malformed"),
    [
        (b'{"s": "\\ud800"}', {"s": "\ud800"}, 0),  # a lone surrogate: json's path decides
        (b'\x0b{"a": 1}\x0c', {"a": 1}, 0),  # whitespace JSON does not allow, str.strip does
        (b'{"x": NaN}', None, 1),
        (b'{"a": 1', None, 1),
        (b'{"bad": "\xff"}', None, 1),
    ],
)
def test_what_the_bytes_parser_refuses_is_read_as_before(
    line: bytes, value: dict[str, Any] | None, malformed: int
) -> None:
    parser = keeper()
    parser.feed(line)
    assert [seen for seen, _ in parser.seen] == ([value] if value is not None else [])
    assert parser.malformed_lines == malformed
