"""RecordingSink: the sink the suite hands to ``run`` to see exactly what was emitted."""

from __future__ import annotations

import threading

from driver.events import RunEvent, StreamPayload


class RecordingSink:
    """Records every run event and stream payload verbatim, in arrival order.

    Thread-safe: drivers may emit from several threads or tasks. Nothing is backfilled
    (no sequence numbers, no timestamps), so the verifiers see what the driver sent.
    After :meth:`seal`, further emissions are still recorded but also counted as late:
    a driver must not keep its sink once ``run`` has returned.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: list[RunEvent] = []
        self._stream: list[StreamPayload] = []
        self._sealed = False
        self._late: list[str] = []

    def emit(self, event: RunEvent) -> None:
        with self._lock:
            self._events.append(event)
            if self._sealed:
                self._late.append(f"run event {type(event).__name__}")

    def emit_stream(self, payload: StreamPayload) -> None:
        with self._lock:
            self._stream.append(payload)
            if self._sealed:
                self._late.append(f"stream payload {getattr(payload, 'kind', '?')!r}")

    @property
    def events(self) -> list[RunEvent]:
        """A copy of the run events received so far."""
        with self._lock:
            return list(self._events)

    @property
    def stream(self) -> list[StreamPayload]:
        """A copy of the stream payloads received so far."""
        with self._lock:
            return list(self._stream)

    def seal(self) -> None:
        """Mark the point where ``run`` returned; later emissions count as late."""
        with self._lock:
            self._sealed = True

    @property
    def late_emissions(self) -> list[str]:
        """What arrived after :meth:`seal`, described without provider text."""
        with self._lock:
            return list(self._late)
