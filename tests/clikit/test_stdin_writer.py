"""A driver's stdin writer: it talks to the CLI while the run lasts, its pipe is closed when
it returns, and it never outlives the process; without one the CLI's stdin is /dev/null.

The CLIs are small Python scripts that read stdin line by line and print what they got.
"""

from __future__ import annotations

import sys
import time

import anyio
import anyio.abc
import pytest

from driver.clikit import ProcessOutcome, StdinWriter, run_cli

ECHO = (
    "import sys\n"
    "print('ready', flush=True)\n"
    "for line in sys.stdin:\n"
    "    print('got ' + line.strip(), flush=True)\n"
    "print('eof', flush=True)\n"
)


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    backend: str = request.param
    return backend


async def run(
    code: str, stdin: StdinWriter | None, *, lines: list[bytes], timeout: float | None = None
) -> tuple[ProcessOutcome, float]:
    started = time.monotonic()
    outcome = await run_cli(
        [sys.executable, "-c", code],
        cwd=None,
        timeout=timeout,
        on_spawn=lambda pid: None,
        on_chunk=lambda stream, data: None,
        on_line=lines.append,
        stdin=stdin,
    )
    return outcome, time.monotonic() - started


@pytest.mark.anyio
async def test_without_a_writer_stdin_is_empty() -> None:
    lines: list[bytes] = []
    outcome, _ = await run(ECHO, None, lines=lines)
    assert outcome.exit_code == 0
    assert lines == [b"ready", b"eof"]


@pytest.mark.anyio
async def test_a_writer_answers_what_the_cli_printed_and_closing_ends_its_input() -> None:
    lines: list[bytes] = []
    ready = anyio.Event()

    def take(line: bytes) -> None:
        lines.append(line)
        if line == b"ready":
            ready.set()

    async def converse(stdin: anyio.abc.ByteSendStream) -> None:
        await ready.wait()  # answers only what the CLI said
        await stdin.send(b"first\n")
        await stdin.send(b"second\n")

    outcome = await run_cli(
        [sys.executable, "-c", ECHO],
        cwd=None,
        timeout=None,
        on_spawn=lambda pid: None,
        on_chunk=lambda stream, data: None,
        on_line=take,
        stdin=converse,
    )
    assert outcome.exit_code == 0
    assert lines == [b"ready", b"got first", b"got second", b"eof"]


@pytest.mark.anyio
async def test_a_writer_still_waiting_is_cancelled_when_the_cli_exits() -> None:
    lines: list[bytes] = []
    cancelled = False

    async def waiting(stdin: anyio.abc.ByteSendStream) -> None:
        nonlocal cancelled
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            cancelled = True
            raise

    outcome, took = await run("print('bye', flush=True)\n", waiting, lines=lines)
    assert outcome.exit_code == 0
    assert lines == [b"bye"]
    assert cancelled
    assert took < 20  # a bound for a loaded machine; the writer would otherwise wait forever


@pytest.mark.anyio
async def test_the_deadline_cancels_the_writer_and_stops_the_cli() -> None:
    lines: list[bytes] = []
    written_after_deadline: list[float] = []

    async def slow(stdin: anyio.abc.ByteSendStream) -> None:
        await stdin.send(b"one\n")
        await anyio.sleep(60)
        written_after_deadline.append(time.monotonic())
        await stdin.send(b"two\n")

    code = "import sys, time\nprint(sys.stdin.readline().strip(), flush=True)\ntime.sleep(60)\n"
    outcome, took = await run(code, slow, lines=lines, timeout=1.0)
    assert outcome.timed_out
    assert lines == [b"one"]
    assert written_after_deadline == []
    assert took < 20


@pytest.mark.anyio
async def test_a_cli_that_closed_its_stdin_ends_the_writing_quietly() -> None:
    lines: list[bytes] = []

    async def flood(stdin: anyio.abc.ByteSendStream) -> None:
        for _ in range(10_000):
            await stdin.send(b"x" * 1024 + b"\n")

    code = "import os\nos.close(0)\nprint('closed', flush=True)\nimport time\ntime.sleep(1)\n"
    outcome, _ = await run(code, flood, lines=lines)
    assert outcome.exit_code == 0
    assert lines == [b"closed"]
