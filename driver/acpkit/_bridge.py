"""The SDK runs on asyncio; the driver may be run on any anyio backend (trio too).

:class:`LoopThread` owns an asyncio event loop in a thread of its own: every call of
the SDK and every agent process live there. The driver's side awaits those calls
through worker threads (:meth:`LoopThread.call`) and reads what the agent sends from a
per-run :class:`Inbox`, a thread-safe queue, so nothing of one event loop is touched
from the other.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

import anyio
import anyio.to_thread

__all__ = ["Inbox", "LoopThread"]

T = TypeVar("T")

_CLOSED = object()


class LoopThread:
    """An asyncio event loop running in a daemon thread until :meth:`stop`."""

    def __init__(self, name: str) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_forever()
        finally:
            self._loop.close()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop every SDK object of this thread belongs to."""
        return self._loop

    @property
    def running(self) -> bool:
        """Whether the loop still takes work."""
        return self._thread.is_alive() and not self._loop.is_closed()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the loop; safe from any thread."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    async def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the loop and wait for it from the caller's event loop.

        Cancelling the caller cancels ``coro`` (the wait itself is abandoned at once).
        """
        future = self.submit(coro)
        try:
            return await anyio.to_thread.run_sync(future.result, abandon_on_cancel=True)
        except BaseException:
            future.cancel()
            raise

    def call_soon(self, callback: Any, *args: Any) -> None:
        """Run a plain callback on the loop (resolving one of its futures, say)."""
        if self.running:
            self._loop.call_soon_threadsafe(callback, *args)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the loop and join the thread (blocking; bounded by ``timeout``)."""
        if self._thread.is_alive() and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._loop.stop)
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)


class Inbox:
    """Messages from the loop thread to one run, in the order they were put."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()

    def put(self, item: object) -> None:
        """Add an item; safe from any thread, never blocks."""
        self._queue.put(item)

    async def get(self) -> object | None:
        """The next item, waited for in a worker thread; None once :meth:`close` ran."""
        item = await anyio.to_thread.run_sync(self._queue.get, abandon_on_cancel=True)
        return None if item is _CLOSED else item

    def get_nowait(self) -> object | None:
        """The next item if one is there, else None."""
        try:
            item = self._queue.get_nowait()
        except queue.Empty:
            return None
        return None if item is _CLOSED else item

    def close(self) -> None:
        """Wake a pending (or abandoned) :meth:`get` so its worker thread ends."""
        self._queue.put(_CLOSED)
