"""Bounded driver calls: nothing a driver does can hang or crash the suite.

Every call into driver code runs off the caller's thread with a deadline:

* coroutine functions run on a long-lived event loop in a daemon thread (the driver's
  loop, on the chosen anyio backend), inside a cancel scope of ``timeout`` seconds;
* plain functions run in a fresh daemon thread each.

The caller waits on a plain thread primitive with a small grace period on top of the
deadline. A call that ignores cancellation, blocks its thread, or blocks the event loop
is abandoned (the daemon thread is left behind) and reported as a hang; an event loop
that stopped responding is replaced so later calls still run.

A raise is described with the place the driver raised (the innermost frame of driver
code, outside the kit, the standard library and the kit's own dependencies), and
:class:`Leftovers` finds what a call left running (threads, tasks, loop timers), so the
suite waits for that, and only that, before it judges what the call emitted.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import inspect
import math
import os
import sys
import threading
import time
import traceback
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from types import FrameType
from typing import Any

import anyio
import anyio.lowlevel
from anyio.from_thread import BlockingPortal

from adaptertest._violation import provider_text
from driver.errors import RunError

GRACE = 0.5
"""Seconds a call may overrun its deadline before it counts as blocked."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one driver call did: returned ``value``, raised ``error``, or hung."""

    value: Any = None
    error: BaseException | None = None
    timed_out: bool = False
    blocked: bool = False
    elapsed: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None and not self.timed_out


def describe_hang(label: str, outcome: Outcome, timeout: float) -> str:
    """Text for a call that did not return in time."""
    how = (
        " and did not respond to cancellation (it blocked its thread or the event loop, or "
        "shielded itself); the call was abandoned"
        if outcome.blocked
        else ""
    )
    return f"{label} did not return within {timeout:g} s{how}"


def describe_error(label: str, error: BaseException) -> str:
    """Text for a call that raised: the exception type, where the driver raised it, and
    the first line of its message, marked as text the suite may withhold (a live run's
    exception can quote the provider)."""
    error = _unwrap(error)
    where = driver_location(error)
    at = f" at {where}" if where else ""
    text = _message_of(error)
    detail = f": {provider_text(text, quote=False)}" if text.strip() else ""
    if _is_cancellation(error):
        # Every cancellation the suite requests is handled before a raise is described.
        detail += " (a cancellation the suite did not request: the driver raised it itself)"
    return f"{label} raised {type(error).__module__}.{type(error).__qualname__}{at}{detail}"


_LAUNCH_ERRNOS = frozenset(
    {errno.ENOENT, errno.EACCES, errno.ENOEXEC, errno.ENOTDIR, errno.EISDIR, errno.ELOOP}
)
"""What the operating system answers when a program cannot be executed."""


def launch_failure(error: BaseException) -> str | None:
    """``cannot start PROGRAM: REASON`` when ``error`` is a :class:`driver.errors.RunError`
    raised from the OS refusing to execute a program (not found, not executable), as a
    ``driver.clikit`` driver raises it when its CLI cannot start; None otherwise.

    The text is built from the OS error's number, reason and file name, never from a
    message the driver or a provider wrote, so it is shown without
    ``show_live_details``: nothing reached a provider. Any other exception a driver
    raises, an ``OSError`` of its own included, keeps its message withheld."""
    error = _unwrap(error)
    cause = error.__cause__
    if not isinstance(error, RunError) or not isinstance(cause, OSError):
        return None
    if cause.errno not in _LAUNCH_ERRNOS or not isinstance(cause.filename, str | bytes):
        return None
    program = os.fsdecode(cause.filename)
    return f"cannot start {program}: {cause.strerror or os.strerror(cause.errno)}"


def _message_of(error: BaseException) -> str:
    try:
        return str(error)
    except Exception as exc:  # noqa: BLE001 - a driver's __str__ may raise too
        return f"(str() of the exception raised {type(exc).__name__})"


# Code that is not the driver's: the kit, the standard library, the kit's dependencies.
_NOT_DRIVER = frozenset(
    {
        "adaptertest",
        "anyio",
        "exceptiongroup",
        "outcome",
        "pydantic",
        "pydantic_core",
        "sniffio",
        "trio",
        "typing_extensions",
        *sys.stdlib_module_names,
    }
)
_KIT_DIR = os.path.dirname(os.path.abspath(__file__))


def _is_driver_code(frame: FrameType) -> bool:
    name = frame.f_globals.get("__name__")
    return not isinstance(name, str) or name.partition(".")[0] not in _NOT_DRIVER


def _shown_path(filename: str) -> str:
    """``filename`` relative to the working directory when it is inside it (a path an
    editor opens), else to the longest ``sys.path`` entry holding it
    (``mydriver/_driver.py``), else as it is."""
    path = os.path.abspath(filename)
    for roots in ([os.getcwd()], [os.path.abspath(p) for p in sys.path if p]):
        holding = [root for root in roots if path.startswith(root.rstrip(os.sep) + os.sep)]
        if holding:
            return os.path.relpath(path, max(holding, key=len))
    return filename


def driver_location(error: BaseException) -> str | None:
    """Where ``error`` was raised in driver code: ``path:line in function``.

    The innermost traceback frame of driver code; failing that, the innermost frame
    outside the kit; None for an exception that was never raised.
    """
    frames = list(traceback.walk_tb(error.__traceback__))
    for want in (_is_driver_code, lambda f: not _is_kit(f.f_code.co_filename)):
        for frame, line in reversed(frames):
            if want(frame):
                return f"{_shown_path(frame.f_code.co_filename)}:{line} in {frame.f_code.co_name}"
    return None


def _is_kit(filename: str) -> bool:
    return os.path.abspath(filename).startswith(_KIT_DIR + os.sep)


def driver_traceback(error: BaseException) -> str:
    """The traceback of ``error`` without the kit's own frames, as Python prints it."""
    error = _unwrap(error)
    shown = traceback.TracebackException.from_exception(error)
    kept = [frame for frame in shown.stack if not _is_kit(frame.filename)]
    shown.stack = traceback.StackSummary.from_list(kept)
    return "".join(shown.format()).rstrip()


def is_driver_fault(exc: BaseException) -> bool:
    """Whether ``exc`` is the driver's to answer for, not a cancellation or Ctrl-C.

    Any exception a driver raises is data for a clause, BaseException subclasses of its
    own included; the user's KeyboardInterrupt and the suite's own cancel scopes are not.
    """
    return not isinstance(exc, KeyboardInterrupt | anyio.get_cancelled_exc_class())


def is_unrequested_cancel(exc: BaseException, scope: anyio.CancelScope) -> bool:
    """Whether ``exc`` is a cancellation that nothing around the call asked for: not the
    call's own ``scope``, not any scope outside it. Then the driver raised it by itself,
    and it is the driver's fault like any other exception (call inside ``scope``)."""
    return (
        isinstance(exc, anyio.get_cancelled_exc_class())
        and not scope.cancel_called
        and anyio.current_effective_deadline() != -math.inf
    )


def _is_cancellation(error: BaseException) -> bool:
    kind = type(error)
    return isinstance(error, asyncio.CancelledError) or (
        kind.__module__.partition(".")[0] == "trio" and kind.__name__ == "Cancelled"
    )


def _unwrap(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    return error


class _Loop:
    """An event loop in a daemon thread, reachable through a blocking portal."""

    def __init__(self, backend: str) -> None:
        ready: Future[BlockingPortal] = Future()
        self._stopped = threading.Event()

        async def serve() -> None:
            async with BlockingPortal() as portal:
                ready.set_result(portal)
                await portal.sleep_until_stopped()

        def main() -> None:
            try:
                anyio.run(serve, backend=backend)
            except BaseException as exc:  # noqa: BLE001 - reported to the waiting caller
                if not ready.done():
                    ready.set_exception(exc)
            finally:
                self._stopped.set()

        self._thread = threading.Thread(target=main, name="adaptertest-driver-loop", daemon=True)
        self._thread.start()
        self.portal = ready.result(timeout=30)

    def stop(self, timeout: float | None) -> None:
        """Ask the loop to stop and wait up to ``timeout`` (None: until it runs again).

        A loop that stays stuck is left to die with the process (its thread is a daemon).
        """
        try:
            self.portal.start_task_soon(self.portal.stop, True).result(timeout=timeout)
        except BaseException:  # noqa: BLE001 - the loop may be gone or stuck
            return
        self._stopped.wait(timeout)


class CallRunner:
    """Runs driver callables under deadlines; one instance per suite run."""

    def __init__(self, backend: str) -> None:
        self._backend = backend
        self._loop: _Loop | None = None
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            if self._loop is not None:
                self._loop.stop(GRACE)
                self._loop = None

    def _portal(self) -> BlockingPortal:
        with self._lock:
            if self._loop is None:
                self._loop = _Loop(self._backend)
            return self._loop.portal

    def _discard_loop(self) -> None:
        with self._lock:
            stuck, self._loop = self._loop, None
        if stuck is not None:
            # Stop it whenever the driver lets go; a loop blocked for good dies with the
            # process (its thread is a daemon).
            threading.Thread(target=stuck.stop, args=(None,), daemon=True).start()

    def call(
        self,
        fn: Callable[..., Any],
        *args: Any,
        timeout: float,
        awaitable: bool = True,
    ) -> Outcome:
        """Call ``fn(*args)``; await the result when it is awaitable and ``awaitable``.

        Coroutine functions go to the event loop; everything else to a fresh thread
        (which also covers sync implementations of async-declared methods). When
        ``awaitable`` is False an awaitable result is a wrong type, returned as-is after
        closing it, so the caller can report it.
        """
        if awaitable and (inspect.iscoroutinefunction(fn) or _is_async_callable(fn)):
            return self._call_on_loop(fn, args, timeout)
        return self._call_in_thread(fn, args, timeout, awaitable)

    def run_async(self, fn: Callable[[], Awaitable[Any]], *, timeout: float) -> Outcome:
        """Run the suite's own coroutine (which calls the driver) on the driver's loop."""
        return self._call_on_loop(fn, (), timeout)

    def _call_on_loop(
        self, fn: Callable[..., Any], args: tuple[Any, ...], timeout: float
    ) -> Outcome:
        async def bounded() -> Outcome:
            start = time.perf_counter()
            with anyio.move_on_after(timeout) as scope:
                try:
                    result = fn(*args)
                    if inspect.isawaitable(result):
                        result = await result
                except BaseException as exc:
                    if not is_driver_fault(exc) and not is_unrequested_cancel(exc, scope):
                        raise
                    return Outcome(error=exc, elapsed=time.perf_counter() - start)
                return Outcome(value=result, elapsed=time.perf_counter() - start)
            assert scope.cancelled_caught
            return Outcome(timed_out=True, elapsed=time.perf_counter() - start)

        start = time.perf_counter()
        try:
            future = self._portal().start_task_soon(bounded)
        except RuntimeError:
            self._discard_loop()
            future = self._portal().start_task_soon(bounded)
        try:
            result: Outcome = future.result(timeout=timeout + GRACE)
            return result
        except FutureTimeout:
            self._discard_loop()
            return Outcome(timed_out=True, blocked=True, elapsed=time.perf_counter() - start)
        except BaseException as exc:  # noqa: BLE001 - e.g. a BaseException from the driver
            return Outcome(error=exc, elapsed=time.perf_counter() - start)

    def _call_in_thread(
        self, fn: Callable[..., Any], args: tuple[Any, ...], timeout: float, awaitable: bool
    ) -> Outcome:
        box: list[Outcome] = []
        done = threading.Event()
        start = time.perf_counter()

        def work() -> None:
            try:
                result = fn(*args)
                if inspect.isawaitable(result):
                    if not awaitable:
                        _close(result)
                    else:
                        box.append(self._await_elsewhere(result, timeout, start))
                        return
                box.append(Outcome(value=result, elapsed=time.perf_counter() - start))
            except BaseException as exc:  # noqa: BLE001 - driver errors are data here
                box.append(Outcome(error=exc, elapsed=time.perf_counter() - start))
            finally:
                done.set()

        threading.Thread(target=work, name="adaptertest-driver-call", daemon=True).start()
        if not done.wait(timeout + GRACE) or not box:
            return Outcome(timed_out=True, blocked=True, elapsed=time.perf_counter() - start)
        return box[0]

    def _await_elsewhere(self, awaitable_obj: Any, timeout: float, start: float) -> Outcome:
        remaining = max(timeout - (time.perf_counter() - start), 0.001)

        async def wait_for_it() -> Any:
            return await awaitable_obj

        outcome = self._call_on_loop(wait_for_it, (), remaining)
        return Outcome(
            value=outcome.value,
            error=outcome.error,
            timed_out=outcome.timed_out,
            blocked=outcome.blocked,
            elapsed=time.perf_counter() - start,
        )


def _is_async_callable(fn: object) -> bool:
    call = getattr(fn, "__call__", None)  # noqa: B004 - callable objects with async __call__
    return call is not None and inspect.iscoroutinefunction(call)


def _close(obj: object) -> None:
    close = getattr(obj, "close", None)
    if callable(close):
        with contextlib.suppress(Exception):  # best effort: silence "never awaited"
            close()


# -- what a call left running ------------------------------------------------------------

LATE_WINDOW = 0.5
"""Seconds the suite waits, at most, for what a driver call left running."""
_WATCH_STEP = 0.002
_STACK_LIMIT = 200


def _runs_driver_code(frame: FrameType | None) -> bool:
    """Whether a thread standing in ``frame`` is inside driver code (not idle in a pool)."""
    depth = 0
    while frame is not None and depth < _STACK_LIMIT:
        if _is_driver_code(frame):
            return True
        frame, depth = frame.f_back, depth + 1
    return False


def _busy_threads() -> dict[threading.Thread, bool]:
    """Every live thread but the caller's, and whether it is busy: a pending
    ``threading.Timer``, or a thread standing in driver code."""
    frames = sys._current_frames()
    me = threading.current_thread()
    return {
        thread: (isinstance(thread, threading.Timer) and not thread.finished.is_set())
        or _runs_driver_code(frames.get(thread.ident or -1))
        for thread in threading.enumerate()
        if thread is not me and thread.is_alive()
    }


def _loop_timers() -> list[asyncio.TimerHandle]:
    """The asyncio loop's scheduled callbacks (``call_later``/``call_at``); trio has none."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not on asyncio
        return []
    scheduled = getattr(loop, "_scheduled", None)
    return list(scheduled) if isinstance(scheduled, list) else []


class Leftovers:
    """What a driver call left running, found against a snapshot taken before it.

    Made on the driver's loop right before the call; :meth:`settle` right after it
    returns waits while anything the call started is still going: a thread that is busy
    (new, or idle before the call), a task, or a loop timer due within the window. A
    compliant driver leaves nothing, so settling costs it two loop ticks.
    """

    def __init__(self) -> None:
        self._threads = _busy_threads()
        self._tasks = {task.id for task in anyio.get_running_tasks()}
        self._timers = _loop_timers()  # kept, so their ids cannot be reused
        self._timer_ids = {id(handle) for handle in self._timers}

    def pending(self, horizon: float) -> list[str]:
        """What the call left running that may still emit within ``horizon`` seconds."""
        found: list[str] = []
        for thread, busy in _busy_threads().items():
            if busy and not self._threads.get(thread, False):
                found.append(f"thread {thread.name!r}")
        me = anyio.get_current_task().id
        found += [
            f"task {task.name!r}"
            for task in anyio.get_running_tasks()
            if task.id not in self._tasks and task.id != me
        ]
        timers = _loop_timers()
        if timers:
            due = asyncio.get_running_loop().time() + horizon
            found += [
                "loop callback"
                for handle in timers
                if id(handle) not in self._timer_ids
                and not handle.cancelled()
                and handle.when() <= due
            ]
        return found

    async def settle(self, window: float = LATE_WINDOW) -> float:
        """Wait, ``window`` seconds at most, until the call left nothing running that
        could still emit; return the seconds waited."""
        start = time.monotonic()
        deadline = start + window
        while True:
            # Two ticks run what call_soon queued and let fresh tasks take a first step.
            await anyio.lowlevel.checkpoint()
            await anyio.lowlevel.checkpoint()
            now = time.monotonic()
            if now >= deadline or not self.pending(deadline - now):
                return now - start
            await anyio.sleep(min(_WATCH_STEP, deadline - now))
