"""Running the CLI: spawn it, read stdout and stderr as they arrive, enforce the deadline.

Nothing here knows the CLI's format. Stdout is handed on twice: as raw chunks
(exactly the bytes read) and as complete lines for the parser; a last line
without a newline (a process killed mid-write) is handed on at end of stream.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import anyio
import anyio.abc

__all__ = ["DRAIN_SECONDS", "KILL_GRACE_SECONDS", "LineFramer", "ProcessOutcome", "run_cli"]

KILL_GRACE_SECONDS = 3.0
"""Time between SIGTERM and SIGKILL when the driver stops the process."""

DRAIN_SECONDS = 5.0
"""Time to finish reading the pipes once the process is gone (a grandchild may hold them)."""


@dataclass(frozen=True, slots=True)
class ProcessOutcome:
    """What the process did, as observed: exit status and every byte it wrote.

    ``exit_code`` is -1 when a signal ended the process (``signal`` names it),
    as Go's ``ExitCode()`` reports it.
    """

    exit_code: int
    signal: str
    timed_out: bool
    stdout: bytes
    stderr: bytes


class LineFramer:
    """Splits a byte stream into lines (without the newline), whatever the chunking."""

    def __init__(self, on_line: Callable[[bytes], None]) -> None:
        self._on_line = on_line
        self._pending = bytearray()

    def feed(self, data: bytes) -> None:
        """Add bytes; every line they complete is handed on."""
        search_from = len(self._pending)
        self._pending += data
        while (newline := self._pending.find(b"\n", search_from)) >= 0:
            line = bytes(self._pending[:newline])
            del self._pending[: newline + 1]
            search_from = 0
            self._on_line(line)

    def flush(self) -> None:
        """Hand on an unterminated last line, if any."""
        if self._pending:
            line = bytes(self._pending)
            self._pending.clear()
            self._on_line(line)


async def run_cli(
    argv: Sequence[str],
    *,
    cwd: str | None,
    env: Mapping[str, str] | None = None,
    timeout: float | None,
    on_spawn: Callable[[int], None],
    on_chunk: Callable[[str, bytes], None],
    on_line: Callable[[bytes], None],
) -> ProcessOutcome:
    """Run ``argv`` to completion with stdin closed; stop it after ``timeout`` seconds.

    ``env`` is the whole environment of the process (None: this process's).

    Raises ``OSError`` when the program cannot be started. When the caller's
    scope is cancelled the process group is stopped before the cancellation
    propagates, so no CLI outlives its run.
    """
    process = await anyio.open_process(
        list(argv),
        cwd=cwd,
        env=dict(env) if env is not None else None,
        stdin=subprocess.DEVNULL,
        start_new_session=os.name == "posix",
    )
    on_spawn(process.pid)
    stdout, stderr = bytearray(), bytearray()
    framer = LineFramer(on_line)
    timed_out = False

    def take_stdout(data: bytes) -> None:
        stdout.extend(data)
        on_chunk("stdout", data)
        framer.feed(data)

    def take_stderr(data: bytes) -> None:
        stderr.extend(data)
        on_chunk("stderr", data)

    try:
        async with anyio.create_task_group() as readers:
            readers.start_soon(_pump, process.stdout, take_stdout)
            readers.start_soon(_pump, process.stderr, take_stderr)
            with anyio.move_on_after(timeout) as deadline:
                await process.wait()
            if deadline.cancelled_caught:
                timed_out = True
                await _stop(process)
            readers.cancel_scope.deadline = anyio.current_time() + DRAIN_SECONDS
        framer.flush()
    finally:
        with anyio.CancelScope(shield=True):
            if process.returncode is None:
                await _stop(process)
            await process.aclose()
    code = process.returncode if process.returncode is not None else -1
    return ProcessOutcome(
        exit_code=code if code >= 0 else -1,
        signal=_signal_name(-code) if code < 0 else "",
        timed_out=timed_out,
        stdout=bytes(stdout),
        stderr=bytes(stderr),
    )


async def _pump(stream: anyio.abc.ByteReceiveStream | None, take: Callable[[bytes], None]) -> None:
    if stream is None:
        return
    with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
        async for data in stream:
            take(data)


async def _stop(process: anyio.abc.Process) -> None:
    """SIGTERM the process group, then SIGKILL it if it is still there after the grace."""
    _signal_group(process, signal.SIGTERM)
    with anyio.move_on_after(KILL_GRACE_SECONDS):
        await process.wait()
    if process.returncode is None:
        _signal_group(process, signal.SIGKILL if os.name == "posix" else signal.SIGTERM)
        await process.wait()


def _signal_group(process: anyio.abc.Process, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if os.name == "posix":
            os.killpg(process.pid, sig)  # the CLI's own children (tools, shells) too
        else:
            process.send_signal(sig)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
