"""The sinks the suite hands to ``run``: :class:`RecordingSink` sees exactly what was
emitted; :class:`DecisionSink` also answers human decisions as a probe scripts them."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

import anyio

from adaptertest.rcv import snapshot
from driver.decision import DecisionRequest, DecisionResponse, DecisionResult
from driver.events import RunEvent, StreamPayload

__all__ = ["AskedDecision", "DecisionScript", "DecisionSink", "RecordingSink"]

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


class DecisionScript(StrEnum):
    """How a :class:`DecisionSink` answers every decision it is asked."""

    APPROVE = "approve"
    """Answer ``approved``."""
    REJECT = "reject"
    """Answer ``rejected``."""
    ANSWER = "answer"
    """Answer ``answered`` with the scripted text (a question's reply)."""
    SILENT = "silent"
    """Never answer: the call waits until it is cancelled (or :meth:`DecisionSink.release`)."""


@dataclass
class AskedDecision:
    """One ``request_decision`` call as the sink saw it.

    ``request`` is a snapshot taken on arrival. ``stream_before`` is how many stream
    payloads had arrived when the call came in, ``stream_after`` how many when it
    ended (None while it waits). ``response`` is what the sink answered (None: no
    answer). ``cancelled`` says the wait ended by cancellation; ``late`` that the call
    came after :meth:`RecordingSink.seal`.
    """

    request: DecisionRequest
    stream_before: int
    asked_at: float
    late: bool
    stream_after: int | None = None
    ended_at: float | None = None
    response: DecisionResponse | None = None
    cancelled: bool = False

    @property
    def pending(self) -> bool:
        """The call has not ended yet."""
        return self.ended_at is None


class DecisionSink(RecordingSink):
    """A :class:`RecordingSink` that is also a ``DecisionCapableSink``, scripted per probe.

    Every ``request_decision`` call is answered as ``script`` says (``text`` is the reply
    of :attr:`DecisionScript.ANSWER`) and kept as an :class:`AskedDecision`, in arrival
    order. A silent sink never answers: it plays a host whose human is away and that
    leaves the policy's deadline to the driver, so the wait ends only when the driver
    stops waiting (cancels the call) or :meth:`release` lets it go. ``on_ask`` is called
    on the driver's loop as each call arrives (a probe uses it to act on the decision).
    """

    def __init__(
        self,
        script: DecisionScript,
        *,
        text: str = "",
        on_ask: Callable[[AskedDecision], None] | None = None,
    ) -> None:
        super().__init__()
        self.script = DecisionScript(script)
        self.text = text
        self._on_ask = on_ask
        self._asked: list[AskedDecision] = []
        self._released = threading.Event()
        self._wakers: list[Callable[[], None]] = []

    @property
    def asked(self) -> list[AskedDecision]:
        """Every call so far, oldest first (the records themselves, updated as calls end)."""
        with self._lock:
            return list(self._asked)

    def release(self) -> None:
        """End every silent wait (now and later) with an ``aborted`` answer; call it on
        the driver's loop, after the verdict on the wait is taken."""
        self._released.set()
        with self._lock:
            wakers, self._wakers = self._wakers, []
        for wake in wakers:
            wake()

    async def request_decision(self, request: DecisionRequest) -> DecisionResponse:
        with self._lock:
            late = self._sealed_at is not None
            self._is_late("decision request")  # counted with the late emissions
            record = AskedDecision(
                request=snapshot(request),
                stream_before=len(self._stream),
                asked_at=time.monotonic(),
                late=late,
            )
            self._asked.append(record)
        response: DecisionResponse | None = None
        try:
            if self._on_ask is not None:
                self._on_ask(record)
            response = await self._answer(request)
            return response.model_copy(deep=True)
        except BaseException:
            record.cancelled = True
            raise
        finally:
            with self._lock:
                record.response = response
                record.stream_after = len(self._stream)
                record.ended_at = time.monotonic()

    async def _answer(self, request: DecisionRequest) -> DecisionResponse:
        rid = request.request_id
        if self.script is DecisionScript.APPROVE:
            return DecisionResponse(request_id=rid, result=DecisionResult.APPROVED)
        if self.script is DecisionScript.REJECT:
            return DecisionResponse(request_id=rid, result=DecisionResult.REJECTED)
        if self.script is DecisionScript.ANSWER:
            return DecisionResponse(
                request_id=rid,
                result=DecisionResult.ANSWERED,
                text=self.text,
                answer={"text": self.text},
            )
        if not self._released.is_set():
            woken = anyio.Event()
            with self._lock:
                self._wakers.append(woken.set)
            if not self._released.is_set():
                await woken.wait()
        return DecisionResponse(request_id=rid, result=DecisionResult.ABORTED)
