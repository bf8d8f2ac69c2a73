"""Running the CLI: spawn it, read stdout and stderr as they arrive, enforce the deadline,
and leave nothing of it running.

Nothing here knows the CLI's format. Stdout is handed on twice: as raw chunks
(exactly the bytes read) and as complete lines for the parser; a last line
without a newline (a process killed mid-write) is handed on at end of stream. A CLI
that prints its last line without a newline and keeps running would leave that line
unread until it exits: when a read drains the pipe (it returns less than
:data:`READ_SIZE`) with such a line pending, the caller's ``whole_line`` judge (the
format's knowledge) may say it is complete already, and it is handed on then.

Process hygiene (POSIX): the CLI starts as the leader of its own session and process
group, so everything it starts (tools, shells, MCP servers) is in that group unless
it made a session of its own. When the CLI has exited, by itself or stopped by the
driver (deadline, cancellation, lingering after its terminal line), what is left of
the group gets ``SIGTERM``, then ``SIGKILL`` after :data:`KILL_GRACE_SECONDS`. A
descendant holding stdout therefore ends with the group instead of costing the run
:data:`DRAIN_SECONDS`.

A descendant that made a session of its own (``setsid``) is outside that group. Every
process a run starts carries :data:`~driver.clikit._proctable.RUN_MARKER_VARIABLE` set
to a value fresh for that run, which survives ``setsid`` and re-parenting; once the
group is ended, what still carries the run's marker is ended too (``SIGTERM``, then
``SIGKILL``, bounded by twice :data:`KILL_GRACE_SECONDS`). That search reads
``/proc`` (Linux); where there is none the group is all that is ended, and
:data:`DRAIN_SECONDS` caps the wait for pipes such a process still holds.

Stdin is ``/dev/null`` unless the caller hands a :data:`StdinWriter`: it then owns a
pipe to the CLI's stdin for as long as the process runs (a prompt, a conversation of
control messages), the pipe is closed when it returns, and it is cancelled once the
process has ended or is being stopped, so nothing is written after that.

Memory: stdout is kept once, as the lines the parser was handed (a line is copied out
of the read buffer once, then shared by the parser and the final bytes); stderr keeps
its first and last :data:`STDERR_KEEP` bytes, with its full size recorded.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

import anyio
import anyio.abc
import anyio.lowlevel
import anyio.to_thread

from driver.clikit._proctable import RUN_MARKER_VARIABLE, can_scan, end_marked, new_marker

__all__ = [
    "DRAIN_SECONDS",
    "KILL_GRACE_SECONDS",
    "READ_SIZE",
    "STDERR_KEEP",
    "TERMINAL_GRACE_SECONDS",
    "LineFramer",
    "ProcessOutcome",
    "StderrKeeper",
    "StdinWriter",
    "run_cli",
]

KILL_GRACE_SECONDS = 3.0
"""Time between SIGTERM and SIGKILL when the driver stops the process or what it left."""

DRAIN_SECONDS = 5.0
"""Time to finish reading the pipes once the process group is gone (a process that left
the group may still hold them)."""

TERMINAL_GRACE_SECONDS = 2.0
"""How long a CLI may keep running after printing its terminal line before it is ended
(its success kept); :attr:`driver.clikit.CLIDriver.terminal_grace` is the per-driver value."""

STDERR_KEEP = 64 * 1024
"""Bytes of stderr kept at each end (head and tail) when it is longer than twice this."""

READ_SIZE = 65536
"""Bytes asked for per read of a pipe; a read that returns fewer drained it."""

StdinWriter = Callable[[anyio.abc.ByteSendStream], Awaitable[None]]
"""Writes the CLI's stdin during a run; the pipe is closed when it returns."""

_TAIL_POLL_SECONDS = (0.005, 0.05)
"""How often a stdout file (``stdout_to_file=True``) is read for new bytes: at first, and at
most once the CLI has been quiet for a while."""

_GROUP_POLL_SECONDS = 0.02

_SWEEP_SECONDS = 0.5
"""How often marked processes are searched for again while a pipe stays open."""
"""How often the process table is read while waiting for a signalled group to go."""


@dataclass(frozen=True, slots=True)
class ProcessOutcome:
    """What the process did, as observed: exit status and what it wrote.

    ``exit_code`` is -1 when a signal ended the process (``signal`` names it),
    as Go's ``ExitCode()`` reports it. ``stdout`` is every byte; ``stderr`` is
    every byte unless ``stderr_size`` (the full size) is larger, then its first and
    last :data:`STDERR_KEEP` bytes. ``ended_after_terminal`` says the driver
    ended a process that was still running :data:`TERMINAL_GRACE_SECONDS` after
    it printed its terminal line (``exit_code``/``signal`` are then the driver's
    stop, as observed).
    """

    exit_code: int
    signal: str
    timed_out: bool
    stdout: bytes
    stderr: bytes
    stderr_size: int = -1
    """Bytes the process wrote to stderr; -1 means ``len(stderr)`` (nothing cut)."""
    ended_after_terminal: bool = False

    @property
    def stderr_cut(self) -> bool:
        """Whether the middle of stderr was left out."""
        return self.stderr_size > len(self.stderr)


class LineFramer:
    """Splits a byte stream into lines (without the newline), whatever the chunking.

    With ``keep=True`` it also keeps the stream: :meth:`getvalue` returns every byte
    fed. A line that spans chunks is kept as the very object handed on, and the lines
    within one chunk as one piece, so stdout is held once, in few pieces.
    """

    def __init__(self, on_line: Callable[[bytes], None], *, keep: bool = False) -> None:
        self._on_line = on_line
        self._pending = bytearray()
        self._parts: list[bytes] | None = [] if keep else None

    def feed(self, data: bytes) -> None:
        """Add bytes; every line they complete is handed on."""
        newline = data.find(b"\n")
        if newline < 0:
            self._pending += data
            return
        start = 0
        if self._pending:  # a line begun in earlier chunks: kept as the very object handed on
            self._pending += memoryview(data)[:newline]
            line = bytes(self._pending)
            self._pending = bytearray()  # release the long line's buffer before parsing
            self._keep(line, b"\n")
            self._on_line(line)
            start = newline + 1
            newline = data.find(b"\n", start)
        if newline >= 0:
            # The lines complete in this chunk are kept as one piece (the chunk itself when
            # it ends with its last line), each handed on as a short-lived slice.
            self._keep(data[start : data.rfind(b"\n") + 1])
            while newline >= 0:
                self._on_line(data[start:newline])
                start = newline + 1
                newline = data.find(b"\n", start)
        if start < len(data):
            self._pending += memoryview(data)[start:]

    def take_pending(self, whole: Callable[[memoryview], bool]) -> bool:
        """Hand on the unterminated rest now, as a line, when ``whole`` says it is one.

        ``whole`` sees the pending bytes (a view valid only during the call). The bytes
        are kept exactly as read: a newline that follows later makes an empty line.
        """
        if not self._pending:
            return False
        with memoryview(self._pending) as view:
            if not whole(view):
                return False
        line = bytes(self._pending)
        self._pending = bytearray()
        self._keep(line)
        self._on_line(line)
        return True

    def _keep(self, *pieces: bytes) -> None:
        if self._parts is not None:
            self._parts += pieces

    def flush(self) -> None:
        """Hand on an unterminated last line, if any."""
        if self._pending:
            line = bytes(self._pending)
            self._pending = bytearray()
            self._keep(line)
            self._on_line(line)

    def getvalue(self) -> bytes:
        """Every byte fed so far (``keep=True``), the unterminated rest included."""
        if self._parts is None:
            raise ValueError("LineFramer(keep=False) keeps nothing")
        if self._pending:
            return b"".join([*self._parts, bytes(self._pending)])
        return b"".join(self._parts)


class StderrKeeper:
    """Keeps the first and last ``keep`` bytes of a stream and counts all of it."""

    def __init__(self, keep: int = STDERR_KEEP) -> None:
        self._keep = keep
        self._head = bytearray()
        self._tail = bytearray()
        self.size = 0
        """Bytes fed so far."""

    def feed(self, data: bytes) -> None:
        """Add bytes; only the two ends are held."""
        self.size += len(data)
        room = self._keep - len(self._head)
        if room > 0:
            self._head += memoryview(data)[:room]
            data = data[room:]
        if data:
            self._tail += data
            if len(self._tail) > self._keep:
                del self._tail[: len(self._tail) - self._keep]

    def getvalue(self) -> bytes:
        """The head and the tail (every byte when nothing was cut)."""
        return bytes(self._head + self._tail)


async def run_cli(
    argv: Sequence[str],
    *,
    cwd: str | None,
    env: Mapping[str, str] | None = None,
    timeout: float | None,
    on_spawn: Callable[[int], None],
    on_chunk: Callable[[str, bytes], None],
    on_line: Callable[[bytes], None],
    finished: Callable[[], bool] | None = None,
    terminal_grace: float = TERMINAL_GRACE_SECONDS,
    whole_line: Callable[[memoryview], bool] | None = None,
    stdin: StdinWriter | None = None,
    stdout_to_file: bool = False,
) -> ProcessOutcome:
    """Run ``argv`` to completion; stop it after ``timeout`` seconds.

    Stdin is ``/dev/null``, or a pipe handed to ``stdin`` once the process has started:
    closed when that returns, and the writer cancelled once the process has exited or is
    being stopped (deadline, lingering, cancellation), so it never writes to an ended run.

    ``stdout_to_file`` gives the CLI a private unnamed file as stdout instead of a pipe,
    read as it grows (every few milliseconds) until the process group has ended: for a
    CLI that loses what it has not yet written to a full pipe when it exits (Node.js
    writes to a pipe asynchronously and ``process.exit()`` drops the queue; its writes
    to a file are synchronous). Where ``os.pread`` is missing it stays a pipe.

    ``env`` is the whole environment of the process (None: this process's), to which
    :data:`~driver.clikit._proctable.RUN_MARKER_VARIABLE` is added with a fresh value.
    ``finished``, asked after each stdout line, says the CLI printed its terminal
    line: a process still running ``terminal_grace`` seconds later is stopped and
    the outcome says ``ended_after_terminal``. ``whole_line`` says whether the bytes
    of an unterminated stdout line left when a read drained the pipe are a complete
    line already (see the module notes). Raises ``OSError`` when the program
    cannot be started. When the caller's scope is cancelled the process group is
    stopped before the cancellation propagates. In every case what the CLI started
    is ended before this returns: its process group, and where the process table can
    be searched, whatever carries the run's marker (see the module notes).
    """
    marker = new_marker()
    process_env = dict(os.environ if env is None else env)
    process_env[RUN_MARKER_VARIABLE] = marker
    capture = None
    if stdout_to_file and hasattr(os, "pread"):
        capture = tempfile.TemporaryFile()  # noqa: SIM115 - closed once the run is over
    try:
        process = await anyio.open_process(
            list(argv),
            cwd=cwd,
            env=process_env,
            stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
            stdout=capture if capture is not None else subprocess.PIPE,
            start_new_session=os.name == "posix",
        )
    except BaseException:
        if capture is not None:
            capture.close()
        raise
    group = _Group(process, marker)
    group_ended = anyio.Event()
    on_spawn(process.pid)
    terminal_seen = anyio.Event()
    framer = LineFramer(on_line, keep=True)
    stderr = StderrKeeper()
    timed_out = lingered = False

    def take_stdout(data: bytes) -> None:
        on_chunk("stdout", data)
        framer.feed(data)
        if whole_line is not None and len(data) < READ_SIZE:
            framer.take_pending(whole_line)  # a last line printed without its newline
        if finished is not None and not terminal_seen.is_set() and finished():
            terminal_seen.set()

    def take_stderr(data: bytes) -> None:
        on_chunk("stderr", data)
        stderr.feed(data)

    open_streams = 2
    drained = anyio.Event()

    async def pump(
        stream: anyio.abc.ByteReceiveStream | None, take: Callable[[bytes], None]
    ) -> None:
        nonlocal open_streams
        try:
            await _pump(stream, take)
        finally:
            open_streams -= 1
            if not open_streams:
                drained.set()

    try:
        async with anyio.create_task_group() as readers:
            readers.start_soon(pump, process.stdout, take_stdout)
            readers.start_soon(pump, process.stderr, take_stderr)
            if capture is not None:
                readers.start_soon(_tail, capture.fileno(), take_stdout, group_ended)
            writing = anyio.CancelScope()
            if stdin is not None and process.stdin is not None:
                readers.start_soon(_write_stdin, process.stdin, stdin, writing)
            with anyio.move_on_after(timeout) as deadline:
                lingered = await _wait_unless_lingering(process, terminal_seen, terminal_grace)
            writing.cancel()
            timed_out = deadline.cancelled_caught
            if process.returncode is None:
                await _stop(process)
            await group.end()
            group_ended.set()
            readers.cancel_scope.deadline = anyio.current_time() + DRAIN_SECONDS
            readers.start_soon(group.sweep_until, drained)
        framer.flush()
    finally:
        with anyio.CancelScope(shield=True):
            if process.returncode is None:
                await _stop(process)
            await group.end()  # a no-op unless the run was cut short (cancelled, an error)
            await process.aclose()
        if capture is not None:
            capture.close()
    code = process.returncode if process.returncode is not None else -1
    return ProcessOutcome(
        exit_code=code if code >= 0 else -1,
        signal=_signal_name(-code) if code < 0 else "",
        timed_out=timed_out,
        stdout=framer.getvalue(),
        stderr=stderr.getvalue(),
        stderr_size=stderr.size,
        ended_after_terminal=lingered and not timed_out,
    )


async def _wait_unless_lingering(
    process: anyio.abc.Process, terminal_seen: anyio.Event, grace: float
) -> bool:
    """Wait for the process to exit; True when it was still running ``grace`` seconds
    after its terminal line (the caller stops it)."""
    lingering = False
    async with anyio.create_task_group() as waiting:

        async def watch() -> None:
            nonlocal lingering
            await terminal_seen.wait()
            await anyio.sleep(grace)  # the grace is a deadline on the process, not a pause
            lingering = True
            waiting.cancel_scope.cancel()

        waiting.start_soon(watch)
        await process.wait()
        waiting.cancel_scope.cancel()
    return lingering and process.returncode is None


async def _pump(stream: anyio.abc.ByteReceiveStream | None, take: Callable[[bytes], None]) -> None:
    if stream is None:
        return
    with contextlib.suppress(
        anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream
    ):
        while True:
            take(await stream.receive(READ_SIZE))


async def _tail(fd: int, take: Callable[[bytes], None], ended: anyio.Event) -> None:
    """Hand on what the CLI appends to the file ``fd`` as it grows; once the process group
    has ended (no writer is left in it), read the rest and return.

    ``pread`` reads at an offset of its own: the CLI's write position, which it shares
    with ``fd``, is never moved.
    """
    offset = 0
    pause, longest = _TAIL_POLL_SECONDS
    while True:
        last = ended.is_set()
        data = os.pread(fd, READ_SIZE, offset)
        if data:
            offset += len(data)
            take(data)
            pause = _TAIL_POLL_SECONDS[0]
            await anyio.lowlevel.checkpoint()
        elif last:
            return
        else:
            with anyio.move_on_after(pause):
                await ended.wait()
            pause = min(pause * 2, longest)


async def _write_stdin(
    pipe: anyio.abc.ByteSendStream, writer: StdinWriter, scope: anyio.CancelScope
) -> None:
    """Run ``writer`` on the pipe inside ``scope``, then close the pipe (end of input).

    A pipe the CLI closed (it exited) ends the writing quietly.
    """
    with scope, contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
        await writer(pipe)
    with (
        anyio.CancelScope(shield=True),
        contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError),
    ):
        await pipe.aclose()


async def _stop(process: anyio.abc.Process) -> None:
    """SIGTERM the process group, then SIGKILL it if the CLI is still there after the grace."""
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


class _Group:
    """What the CLI started (POSIX), once the CLI itself has exited: its process group,
    and the processes that carry the run's marker."""

    def __init__(self, process: anyio.abc.Process, marker: str) -> None:
        self._pgid = process.pid if os.name == "posix" else 0
        self._marker = marker
        self._ended = self._pgid == 0

    async def end(self) -> None:
        """SIGTERM what is left of the group, wait until it is gone (at most
        :data:`KILL_GRACE_SECONDS`), then SIGKILL whatever is still there and wait
        (as long again, at most) for it to go; then the same for the marked processes
        outside the group, where the process table can be searched."""
        if self._ended:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if not _group_alive(self._pgid):
                break
            _kill_group(self._pgid, sig)
            with anyio.move_on_after(KILL_GRACE_SECONDS):
                while _group_alive(self._pgid):
                    await anyio.sleep(_GROUP_POLL_SECONDS)
        if can_scan():
            await anyio.to_thread.run_sync(_end_marked, self._marker)
        self._ended = True

    async def sweep_until(self, drained: anyio.Event) -> None:
        """While a pipe of the run stays open after :meth:`end`, look for marked processes
        again every :data:`_SWEEP_SECONDS` (one the first search missed may hold it); the
        caller's drain deadline bounds this."""
        while not drained.is_set() and can_scan():
            with anyio.move_on_after(_SWEEP_SECONDS):
                await drained.wait()
            if not drained.is_set():
                await anyio.to_thread.run_sync(_end_marked, self._marker)


def _end_marked(marker: str) -> None:
    """End what carries ``marker`` (blocking, bounded by twice the kill grace)."""
    end_marked(RUN_MARKER_VARIABLE, marker, grace=KILL_GRACE_SECONDS)


def _kill_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _group_alive(pgid: int) -> bool:
    """Whether a live (not zombie) process is in group ``pgid``.

    ``killpg(pgid, 0)`` alone also counts zombies, which a container's init may never
    reap; where ``/proc`` exists, the members' states are read from it.
    """
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    wanted = str(pgid).encode()
    try:
        entries = os.scandir("/proc")
    except OSError:
        return True
    with entries:
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as stat:
                    fields = stat.read().rpartition(b")")[2].split()
            except OSError:
                continue
            # After the command name: state, ppid, pgrp, ...
            if len(fields) > 2 and fields[2] == wanted and fields[0] not in (b"Z", b"X"):
                return True
    return False


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
