"""RecordingSink: the sink the suite hands to ``run`` to see exactly what was emitted."""

from __future__ import annotations

import threading
import time
from typing import TypeVar

from adaptertest.rcv import snapshot
from driver.events import RunEvent, StreamPayload

T = TypeVar("T")

_LATE_KEPT = 10_000
"""Late emissions recorded in full; beyond that they are only counted (a driver thread
that never stops emitting must not exhaust memory)."""


class RecordingSink:
    """Records every run event and stream payload verbatim, in arrival order.

    Each emission is kept twice: a deep snapshot taken at the moment it arrived (what a
    host that serialises on receipt saw, and what :attr:`events` and :attr:`stream`
    return) and the object itself (:attr:`emitted_events`, :attr:`emitted_stream`), so a
    driver that edits an object after emitting it is seen doing so (RCV-01).
    Thread-safe: drivers may emit from several threads or tasks. Nothing is backfilled
    (no sequence numbers, no timestamps), so the verifiers see what the driver sent.
    After :meth:`seal`, further emissions still arrive but count as late, with how long
    after the seal they came: a driver must not keep its sink once ``run`` has returned.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: list[tuple[RunEvent, RunEvent]] = []
        self._stream: list[tuple[StreamPayload, StreamPayload]] = []
        self._copies: dict[int, tuple[object, object]] = {}
        self._sealed_at: float | None = None
        self._late: list[str] = []
        self._late_count = 0
        self._late_first = 0.0
        self._late_last = 0.0

    def emit(self, event: RunEvent) -> None:
        with self._lock:
            if self._is_late(f"run event {type(event).__name__}"):
                return
            self._events.append((self._snapshot(event), event))

    def emit_stream(self, payload: StreamPayload) -> None:
        with self._lock:
            if self._is_late(f"stream payload {getattr(payload, 'kind', '?')!r}"):
                return
            self._stream.append((self._snapshot(payload), payload))

    def _snapshot(self, value: T) -> T:
        """A deep copy of ``value`` as it arrived (lock held). An object emitted again
        unchanged shares the copy taken before: a flood of one payload costs one
        comparison per emission, not one copy."""
        seen = self._copies.get(id(value))
        if seen is not None and seen[0] is value:
            try:
                if seen[1] == value:
                    return seen[1]
            except Exception:  # noqa: BLE001 - a value too deep to compare: copy again
                pass
        kept = snapshot(value)
        self._copies[id(value)] = (value, kept)
        return kept

    def _is_late(self, what: str) -> bool:
        """Count a late emission (lock held); True when it is no longer kept."""
        if self._sealed_at is None:
            return False
        delay = time.monotonic() - self._sealed_at
        if not self._late_count:
            self._late_first = delay
        self._late_last = delay
        self._late_count += 1
        if self._late_count > _LATE_KEPT:
            return True
        self._late.append(what)
        return False

    @property
    def events(self) -> list[RunEvent]:
        """The run events received so far, each as it was when it arrived."""
        with self._lock:
            return [kept for kept, _ in self._events]

    @property
    def stream(self) -> list[StreamPayload]:
        """The stream payloads received so far, each as it was when it arrived."""
        with self._lock:
            return [kept for kept, _ in self._stream]

    @property
    def emitted_events(self) -> list[tuple[RunEvent, RunEvent]]:
        """``(as it arrived, the object itself now)`` for each run event."""
        with self._lock:
            return list(self._events)

    @property
    def emitted_stream(self) -> list[tuple[StreamPayload, StreamPayload]]:
        """``(as it arrived, the object itself now)`` for each stream payload."""
        with self._lock:
            return list(self._stream)

    def seal(self) -> None:
        """Mark the point where ``run`` returned; later emissions count as late."""
        with self._lock:
            if self._sealed_at is None:
                self._sealed_at = time.monotonic()

    @property
    def late_emissions(self) -> list[str]:
        """What arrived after :meth:`seal` (the first ones kept), without provider text."""
        with self._lock:
            return list(self._late)

    @property
    def late_count(self) -> int:
        """How many emissions arrived after :meth:`seal`, kept or not."""
        with self._lock:
            return self._late_count

    @property
    def late_delays(self) -> tuple[float, float]:
        """Seconds after the seal of the first and the last late emission (0 if none)."""
        with self._lock:
            return self._late_first, self._late_last
