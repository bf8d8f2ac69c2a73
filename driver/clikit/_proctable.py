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
    if not can_scan():
        return None
    needle = f"{variable}={value}".encode()
    me = os.getpid()
    found: list[int] = []
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
            if _alive(entry.name):
                found.append(int(entry.name))
    return sorted(found)


def end_marked(variable: str, value: str, *, grace: float = 3.0) -> bool:
    """SIGTERM every marked process, then SIGKILL what is left after ``grace`` seconds.

    Bounded: returns within about twice ``grace``. ``True`` when none is left (or none
    was found), ``False`` when the table cannot be searched or one survived SIGKILL.
    Blocking; call it from a worker thread in async code.
    """
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, grace)):
        pids = marked_pids(variable, value)
        if pids is None:
            return False
        if not pids:
            return True
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not marked_pids(variable, value):
                return True
            time.sleep(0.02)
    return not marked_pids(variable, value)


def _alive(pid: str) -> bool:
    try:
        with open(f"{_PROC}/{pid}/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()
    except OSError:
        return False
    return bool(fields) and fields[0] not in (b"Z", b"X")
