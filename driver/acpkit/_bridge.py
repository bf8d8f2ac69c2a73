"""The SDK runs on asyncio; the driver may be run on any anyio backend (trio too).

:class:`LoopThread` owns an asyncio event loop in a thread of its own: every call of
the SDK and every agent process live there. The driver's side awaits those calls
through worker threads (:meth:`LoopThread.call`) and reads what the agent sends from a
per-run :class:`Inbox`, a thread-safe queue, so nothing of one event loop is touched
from the other.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

import anyio
import anyio.to_thread

__all__ = ["Inbox", "LoopThread"]

T = TypeVar("T")


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
    """Messages from the loop thread to one run, in the order they were put.

    A waiting :meth:`get` only watches for an item in a worker thread and takes it on the
    run's side, so a wait abandoned by a cancellation takes nothing from the next one.
    """

    def __init__(self) -> None:
        self._items: collections.deque[object] = collections.deque()
        self._ready = threading.Condition()
        self._closed = False

    def put(self, item: object) -> None:
        """Add an item; safe from any thread, never blocks for long."""
        with self._ready:
            self._items.append(item)
            self._ready.notify_all()

    def _wait(self) -> None:
        with self._ready:
            self._ready.wait_for(lambda: bool(self._items) or self._closed)

    async def get(self) -> object | None:
        """The next item, waited for in a worker thread; None once closed and empty."""
        while True:
            item = self.get_nowait()
            if item is not None or self._closed:
                return item
            await anyio.to_thread.run_sync(self._wait, abandon_on_cancel=True)

    def get_nowait(self) -> object | None:
        """The next item if one is there, else None."""
        with self._ready:
            return self._items.popleft() if self._items else None

    def close(self) -> None:
        """Wake every waiting (or abandoned) :meth:`get` so its worker thread ends; items
        already in stay readable."""
        with self._ready:
            self._closed = True
            self._ready.notify_all()
