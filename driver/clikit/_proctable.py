"""Finding processes by a marker in their environment.

A process that starts its own session (``setsid``) leaves the CLI's process group, so
ending the group does not reach it. Every process a run starts inherits the run's
environment, though, and that survives ``setsid``, double forks and re-parenting to
init: a variable holding a value unique to the run marks everything the run started.

Where ``/proc`` exists (Linux) its ``environ`` files are read. Elsewhere the process
table cannot be searched by environment without privileges or extra tools: the
functions say so by returning ``None`` (scan) or ``False`` (end), and callers fall
back on the process group alone.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import time

__all__ = [
    "RUN_MARKER_VARIABLE",
    "can_scan",
    "end_marked",
    "is_running",
    "marked_pids",
    "new_marker",
]

RUN_MARKER_VARIABLE = "AGENT_DRIVER_RUN_MARKER"
"""The variable a driver sets, to a fresh :func:`new_marker` value, on every process it
starts for one run."""

_PROC = "/proc"


def new_marker() -> str:
    """A value unique to one run (128 random bits, hex)."""
    return secrets.token_hex(16)


def can_scan() -> bool:
    """Whether this machine's process table can be searched by environment."""
    return os.path.isfile(f"{_PROC}/self/environ")


def marked_pids(variable: str, value: str) -> list[int] | None:
    """Live processes (zombies left out) whose environment has ``variable=value``.

    ``None`` where the table cannot be searched (no ``/proc``). A process this user may
    not read is passed over. The calling process is never listed.
    """
    found = _marked(variable, value)
    return None if found is None else sorted(found)


def end_marked(variable: str, value: str, *, grace: float = 3.0) -> bool:
    """SIGTERM every marked process, then SIGKILL what is left after ``grace`` seconds.

    A process once found is followed by its pid and start time until it is a zombie or
    gone: one that is exiting can no longer show its environment while it still runs,
    so its environment alone cannot say it ended. One marked meanwhile (started by a
    dying one) joins. Bounded: returns within about twice ``grace``. ``True`` when none
    is left (or none was found), ``False`` when the table cannot be searched or one
    survived SIGKILL. Blocking; call it from a worker thread in async code.
    """
    found = _marked(variable, value)
    if found is None:
        return False
    for sig in (signal.SIGTERM, signal.SIGKILL):
        found = _still_running({**found, **(_marked(variable, value) or {})})
        if not found:
            return True
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            found = _still_running({**found, **(_marked(variable, value) or {})})
            if not found:
                return True
            time.sleep(0.02)
    return not _still_running({**found, **(_marked(variable, value) or {})})


def _marked(variable: str, value: str) -> dict[int, bytes] | None:
    """pid -> start time of the live processes marked ``variable=value``; None where the
    table cannot be searched."""
    if not can_scan():
        return None
    needle = f"{variable}={value}".encode()
    me = os.getpid()
    found: dict[int, bytes] = {}
    with contextlib.suppress(OSError), os.scandir(_PROC) as entries:
        for entry in entries:
            if not entry.name.isdigit() or int(entry.name) == me:
                continue
            try:
                with open(f"{_PROC}/{entry.name}/environ", "rb") as handle:
                    environ = handle.read()
            except OSError:
                continue
            if needle not in environ.split(b"\0"):
                continue
            start = _start_if_alive(entry.name)
            if start is not None:
                found[int(entry.name)] = start
    return found


def _still_running(found: dict[int, bytes]) -> dict[int, bytes]:
    """Those of ``found`` still running as the same process (a reused pid is not)."""
    return {pid: start for pid, start in found.items() if _start_if_alive(str(pid)) == start}


def is_running(pid: int) -> bool:
    """Whether process ``pid`` exists and is no zombie (a zombie nobody reaps runs nothing).

    Read from ``/proc`` where there is one; elsewhere signal 0 answers, which counts a
    zombie as running.
    """
    if can_scan():
        return _alive(str(pid))
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _alive(pid: str) -> bool:
    return _start_if_alive(pid) is not None


def _start_if_alive(pid: str) -> bytes | None:
    """The start time of process ``pid`` (``/proc/PID/stat``, in clock ticks since boot),
    or None when it is gone or a zombie. With the pid it names one process: a pid the
    kernel reuses comes with another start time."""
    try:
        with open(f"{_PROC}/{pid}/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
    except OSError:
        return None
    # After the command name: state, ppid, pgrp, ... ; the start time is the 20th.
    if len(fields) < 20 or fields[0] in (b"Z", b"X"):
        return None
    return fields[19]
