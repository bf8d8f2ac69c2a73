"""Nothing the CLI started outlives the run; a CLI lingering after its terminal line is
ended and its success kept; stdout is kept whole and stderr capped.

The CLIs are small Python scripts. A descendant reports its pid on stdout, and the
process table is read after the run: the pid must be gone (or a zombie nobody reaps,
which runs nothing).
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from adaptertest import RecordingSink
from driver import Request, Response, TerminalPayload
from driver.clikit import (
    DRAIN_SECONDS,
    STDERR_KEEP,
    CLIConfig,
    CLIDriver,
    JsonlParser,
    LineFramer,
    ProcessOutcome,
    RunOutput,
    StderrKeeper,
    run_cli,
    run_turn,
)
from driver.clikit._proctable import is_running

pytestmark = pytest.mark.skipif(os.name != "posix", reason="process groups are POSIX")

SLEEPER = "import signal, sys, time\n{ignore}time.sleep(60)\n"


def spawn_code(*, hold_stdout: bool = True, ignore_term: bool = False) -> str:
    """Python that starts a 60 s sleeper (in the CLI's process group) and prints its pid."""
    ignore = "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n" if ignore_term else ""
    out = "None" if hold_stdout else "subprocess.DEVNULL"
    return (
        "import subprocess, sys\n"
        f"child = subprocess.Popen([sys.executable, '-c', {SLEEPER.format(ignore=ignore)!r}],"
        f" stdout={out}, stderr={out})\n"
        "print(f'pid {child.pid}', flush=True)\n"
    )


def cli(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def gone(pid: int) -> bool:
    """The process no longer runs: absent from the table, or a zombie."""
    return not is_running(pid)


def pids(lines: list[bytes]) -> list[int]:
    return [int(line.split()[1]) for line in lines if line.startswith(b"pid ")]


async def run(
    command: list[str], *, timeout: float | None = None, **kwargs: Any
) -> tuple[ProcessOutcome, list[bytes], float]:
    lines: list[bytes] = []
    started = time.monotonic()
    outcome = await run_cli(
        command,
        cwd=None,
        timeout=timeout,
        on_spawn=lambda pid: None,
        on_chunk=lambda stream, data: None,
        on_line=lines.append,
        **kwargs,
    )
    return outcome, lines, time.monotonic() - started


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    backend: str = request.param
    return backend


@pytest.fixture(autouse=True)
def short_kill_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("driver.clikit._process.KILL_GRACE_SECONDS", 0.5)


# -- what the CLI started ----------------------------------------------------------------


@pytest.mark.anyio
async def test_a_descendant_holding_stdout_ends_with_the_run_without_the_drain_wait() -> None:
    outcome, lines, elapsed = await run(cli(spawn_code()))
    (child,) = pids(lines)
    assert outcome.exit_code == 0
    assert elapsed < DRAIN_SECONDS  # the group was ended, not waited out
    assert gone(child)


@pytest.mark.anyio
async def test_a_descendant_ignoring_sigterm_is_killed() -> None:
    outcome, lines, elapsed = await run(cli(spawn_code(hold_stdout=False, ignore_term=True)))
    (child,) = pids(lines)
    assert outcome.exit_code == 0
    assert gone(child)
    assert elapsed < DRAIN_SECONDS


@pytest.mark.anyio
async def test_the_deadline_ends_the_cli_and_its_descendants() -> None:
    code = spawn_code() + "import time\ntime.sleep(60)\n"
    outcome, lines, elapsed = await run(cli(code), timeout=1.0)
    (child,) = pids(lines)
    assert outcome.timed_out
    assert outcome.signal == "SIGTERM"
    assert gone(child)
    assert elapsed < 10


@pytest.mark.anyio
async def test_cancellation_ends_the_cli_and_its_descendants() -> None:
    lines: list[bytes] = []
    seen = anyio.Event()

    def take(line: bytes) -> None:
        lines.append(line)
        seen.set()

    code = spawn_code() + "import time\ntime.sleep(60)\n"
    with anyio.move_on_after(20):  # a bound on the test, not part of what it checks
        async with anyio.create_task_group() as group:

            async def running() -> None:
                await run_cli(
                    cli(code),
                    cwd=None,
                    timeout=None,
                    on_spawn=lambda pid: None,
                    on_chunk=lambda stream, data: None,
                    on_line=take,
                )

            group.start_soon(running)
            await seen.wait()
            group.cancel_scope.cancel()
    (child,) = pids(lines)
    assert gone(child)


# -- lingering after the terminal line -----------------------------------------------------


class DoneParser(JsonlParser):
    """``{"done": true|false, "session": ID}`` is the terminal line; ``pid N`` lines are text."""

    program = "done-cli"
    missing_terminal = "a done line"

    def __init__(self, out: RunOutput) -> None:
        super().__init__(out)
        self._done: dict[str, Any] = {}

    def on_object(self, line: dict[str, Any], text: str) -> None:
        if "done" in line:
            self._done = line
            self.terminal = TerminalPayload(event="done", raw_json=text)

    @property
    def succeeded(self) -> bool:
        return self._done.get("done") is True

    @property
    def resume_id(self) -> str:
        return str(self._done.get("session", ""))

    def output(self) -> str:
        return "answer" if self.succeeded else ""

    def reported_failure(self, meta: dict[str, Any]) -> str:
        return "done-cli said it failed"


def lingering(done: bool) -> list[str]:
    """Starts a descendant, prints its terminal line, then keeps running (60 s)."""
    terminal = json.dumps({"done": done, "session": "s-1"})
    return cli(spawn_code() + f"print({terminal!r}, flush=True)\nimport time\ntime.sleep(60)\n")


async def turn(
    command: list[str],
    *,
    grace: float | None = None,
    parser: type[DoneParser] = DoneParser,
    sink: RecordingSink | None = None,
    streaming: bool = False,
) -> Response:
    """One ``run_turn`` of ``command`` with the done-cli parser (``grace``: the terminal
    grace, None for run_turn's own)."""
    extra: dict[str, Any] = {} if grace is None else {"terminal_grace": grace}
    return await run_turn(
        Request(prompt="hi", streaming=streaming),
        sink if sink is not None else RecordingSink(),
        driver_type="done",
        argv=lambda resume_id: command,
        cwd="",
        model="",
        timeout=60,
        parser=parser,
        **extra,
    )


@pytest.mark.anyio
async def test_a_cli_lingering_after_its_terminal_line_is_ended_and_its_success_kept() -> None:
    sink = RecordingSink()
    started = time.monotonic()
    response = await turn(lingering(True), grace=0.3, sink=sink, streaming=True)
    assert time.monotonic() - started < 10
    assert response.failure is None
    assert response.output == "answer"
    assert (response.exit_code, response.signal, response.timed_out) == (0, "", False)
    assert response.checkpoint is not None
    assert response.checkpoint.valid
    assert (
        response.metadata["ended_after_terminal"] == "still running 0.3 s after its terminal line"
    )
    assert response.metadata["ended_by"] == "SIGTERM"
    exited = [e for e in sink.events if e.text == "ended after its terminal line"]
    assert len(exited) == 1
    assert exited[0].metadata["signal"] == "SIGTERM"  # the event says what was observed
    assert response.raw_streams is not None
    (child,) = pids(response.raw_streams.stdout.splitlines())
    assert gone(child)


@pytest.mark.anyio
async def test_a_failed_terminal_line_stays_a_failure_when_the_cli_lingers() -> None:
    response = await turn(lingering(False), grace=0.3)
    assert response.failure is not None
    assert response.failure.message == "done-cli said it failed"
    assert response.checkpoint is None
    assert "ended_after_terminal" in response.metadata


@pytest.mark.anyio
async def test_a_cli_that_exits_within_the_grace_is_not_noted() -> None:
    terminal = json.dumps({"done": True, "session": "s-1"})
    response = await turn(cli(f"print({terminal!r})"), grace=30)
    assert response.failure is None
    assert response.metadata == {}


class LingerDriver(CLIDriver[CLIConfig]):
    driver_type = "done"
    fingerprint_domain = "tests/done/v1"
    install_hint = "nothing to install"
    terminal_grace = 0.2

    def __init__(self) -> None:
        super().__init__(CLIConfig, CLIConfig(command=(sys.executable,)))

    def command_line(
        self, config: CLIConfig, prompt: str, *, model: str, resume_id: str
    ) -> list[str]:
        return lingering(True)

    def stream_parser(self, out: RunOutput, *, model: str) -> DoneParser:
        return DoneParser(out)


@pytest.mark.anyio
async def test_the_driver_class_sets_the_grace() -> None:
    assert CLIDriver.terminal_grace == 2.0
    response = await LingerDriver().run(Request(prompt="hi"), RecordingSink())
    assert response.failure is None
    assert (
        response.metadata["ended_after_terminal"] == "still running 0.2 s after its terminal line"
    )


# -- what is kept ----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_stderr_is_capped_to_its_head_and_tail_with_its_size_recorded() -> None:
    size = 5 * STDERR_KEEP + 123
    code = (
        "import sys\n"
        f"data = bytes(i % 251 for i in range({size}))\n"
        "sys.stderr.buffer.write(data)\n"
        "print('{\"done\": true}')\n"
    )
    data = bytes(i % 251 for i in range(size))
    response = await turn(cli(code))
    assert response.raw_streams is not None
    assert response.raw_streams.stderr == data[:STDERR_KEEP] + data[-STDERR_KEEP:]
    assert response.metadata["stderr_bytes"] == str(size)
    assert response.metadata["stderr_cut"] == f"kept the first and last {STDERR_KEEP} bytes"


@pytest.mark.parametrize("size", [0, 10, STDERR_KEEP, 2 * STDERR_KEEP, 2 * STDERR_KEEP + 1])
def test_stderr_keeper_keeps_everything_up_to_twice_its_size(size: int) -> None:
    data = random.Random(size).randbytes(size)
    keeper = StderrKeeper()
    for start in range(0, size, 999):
        keeper.feed(data[start : start + 999])
    assert keeper.size == size
    if size <= 2 * STDERR_KEEP:
        assert keeper.getvalue() == data
    else:
        assert keeper.getvalue() == data[:STDERR_KEEP] + data[-STDERR_KEEP:]


@pytest.mark.parametrize("seed", range(20))
def test_the_kept_stdout_is_every_byte_whatever_the_chunking(seed: int) -> None:
    rng = random.Random(seed)
    pieces = [
        rng.choice([b"\n", b"ab", b"x" * rng.randrange(300), b"\r\n", b"\xff"]) for _ in range(60)
    ]
    data = b"".join(pieces)
    lines: list[bytes] = []
    framer = LineFramer(lines.append, keep=True)
    position = 0
    while position < len(data):
        step = rng.randrange(1, 200)
        framer.feed(data[position : position + step])
        position += step
    framer.flush()
    assert framer.getvalue() == data
    expected = data.split(b"\n")
    assert lines == (expected if expected[-1] else expected[:-1])


def test_a_framer_that_keeps_nothing_says_so() -> None:
    with pytest.raises(ValueError, match="keeps nothing"):
        LineFramer(print).getvalue()


@pytest.mark.anyio
async def test_a_signal_ending_the_cli_is_still_reported(tmp_path: Path) -> None:
    outcome, _, _ = await run(cli(f"import os\nos.kill(os.getpid(), {int(signal.SIGKILL)})"))
    assert (outcome.exit_code, outcome.signal, outcome.ended_after_terminal) == (
        -1,
        "SIGKILL",
        False,
    )


class RetryingDoneParser(DoneParser):
    def run_metadata(self) -> dict[str, str]:
        return {"done.retries": "1"}


@pytest.mark.anyio
async def test_the_parsers_metadata_and_the_process_notes_are_both_kept() -> None:
    response = await turn(lingering(True), grace=0.2, parser=RetryingDoneParser)
    assert response.failure is None
    assert response.metadata["done.retries"] == "1"
    assert response.metadata["ended_by"] == "SIGTERM"
