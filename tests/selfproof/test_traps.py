"""Hostile drivers for the Python traps a host pays for: a cancellation the suite never
asked for, and vendor data nested deeper than the interpreter's recursion limit.

Each runs the whole suite on both backends and checks that the suite judged the driver
(clause-tagged failures naming what the driver did) and never failed in its own code.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from adaptertest import ClauseStatus, ConformanceReport, Options, check_driver
from driver import EventSink, Request, Response
from referencedriver import ReferenceDriver

BACKENDS = ("asyncio", "trio")
OWN_CODE = ("please report", "in the suite", "could not be judged")
"""Phrases of a failure in the suite's own code."""


def _suite_faults(report: ConformanceReport) -> list[str]:
    return [
        message
        for result in report
        for message in (*result.messages, *result.notes)
        if any(phrase in message for phrase in OWN_CODE)
    ]


def _by_clause(report: ConformanceReport) -> dict[str, Any]:
    return {result.clause: result for result in report}


# -- a cancellation nobody asked for ----------------------------------------------------------


class CancelsItselfOnAsyncio(ReferenceDriver):
    """Awaits a helper task it cancelled itself: the CancelledError escapes run()."""

    async def run(self, request: Request, sink: EventSink) -> Response:
        helper = asyncio.ensure_future(asyncio.sleep(10))
        helper.cancel()
        await helper
        raise AssertionError("unreachable")


class CancelsItselfOnTrio(ReferenceDriver):
    """Raises trio's Cancelled with no cancel scope of the suite's cancelled."""

    async def run(self, request: Request, sink: EventSink) -> Response:
        import trio

        raise trio.Cancelled._create()


_CANCELLERS = {"asyncio": CancelsItselfOnAsyncio, "trio": CancelsItselfOnTrio}


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_unrequested_cancellation_is_the_drivers_fault(backend: str) -> None:
    options = Options(live_run=True, concurrent_runs=2, backend=backend, fresh_process=False)  # type: ignore[arg-type]
    report = check_driver(_CANCELLERS[backend], options)
    results = _by_clause(report)
    assert _suite_faults(report) == []
    failed = {r.clause for r in report if r.status is ClauseStatus.FAILED}
    # What any run() that raises without a Response fails, and nothing else.
    assert failed == {"LIV-01", "FLR-01", "CON-01"}, [r.describe() for r in report]
    for clause in ("LIV-01", "CON-01"):
        message = results[clause].messages[0]
        assert message.startswith(f"{clause}: ")
        assert "Cancelled" in message
        assert "test_traps.py:" in message  # the driver's frame
        assert " in run" in message
        assert "the suite did not request" in message
    # The other live clauses are still judged, each naming why there is nothing to judge.
    evt = results["EVT-01"]
    assert evt.status is ClauseStatus.SKIPPED
    assert "the live run failed (run() raised" in evt.messages[0]
    assert "stopped at" not in evt.messages[0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_requested_cancellation_is_still_a_timeout(backend: str) -> None:
    """The suite's own deadline still reads as a timeout, not as a driver's raise."""

    class Sleeps(ReferenceDriver):
        async def run(self, request: Request, sink: EventSink) -> Response:
            import anyio

            await anyio.sleep_forever()
            raise AssertionError("unreachable")

    options = Options(live_run=True, live_run_timeout=0.2, backend=backend, fresh_process=False)  # type: ignore[arg-type]
    report = check_driver(Sleeps, options)
    message = _by_clause(report)["LIV-01"].messages[0]
    assert "did not return within 0.2 s" in message
    assert "did not request" not in message
    assert _suite_faults(report) == []
