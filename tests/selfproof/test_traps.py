"""Hostile drivers for the Python traps a host pays for: a cancellation the suite never
asked for, vendor data nested deeper than the interpreter's recursion limit, and a guard
whose set order a lucky parent hash seed shares with a fresh interpreter.

Each runs the whole suite on both backends and checks that the suite judged the driver
(clause-tagged failures naming what the driver did) and never failed in its own code.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from mutants import Rewriting

from adaptertest import ClauseStatus, ConformanceReport, Options, check_driver
from adaptertest._depth import MAX_DEPTH, depth_of
from adaptertest.options import Backend
from driver import (
    EventSink,
    Request,
    Response,
    SessionParams,
    StreamPayload,
    TranscriptItem,
    TranscriptKind,
)
from referencedriver import ReferenceDriver, ReferenceSessionCodec

BACKENDS: tuple[Backend, ...] = ("asyncio", "trio")
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


class RaisesRuntimeError(ReferenceDriver):
    """The comparison: a run() that raises an ordinary exception."""

    async def run(self, request: Request, sink: EventSink) -> Response:
        raise RuntimeError("the connection dropped")


_CANCELLERS = {"asyncio": CancelsItselfOnAsyncio, "trio": CancelsItselfOnTrio}


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_unrequested_cancellation_is_the_drivers_fault(backend: Backend) -> None:
    options = Options(live_run=True, concurrent_runs=2, backend=backend, fresh_process=False)
    report = check_driver(_CANCELLERS[backend], options)
    results = _by_clause(report)
    assert _suite_faults(report) == []
    failed = {r.clause for r in report if r.status is ClauseStatus.FAILED}
    # What any run() that raises without a Response fails, and nothing else.
    plain = {
        r.clause for r in check_driver(RaisesRuntimeError, options) if r.status.value == "failed"
    }
    assert {"LIV-01", "FLR-01", "CON-01"} <= plain
    assert failed == plain, [r.describe() for r in report]
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
def test_a_requested_cancellation_is_still_a_timeout(backend: Backend) -> None:
    """The suite's own deadline still reads as a timeout, not as a driver's raise."""

    class Sleeps(ReferenceDriver):
        async def run(self, request: Request, sink: EventSink) -> Response:
            import anyio

            await anyio.sleep_forever()
            raise AssertionError("unreachable")

    options = Options(live_run=True, live_run_timeout=0.2, backend=backend, fresh_process=False)
    report = check_driver(Sleeps, options)
    message = _by_clause(report)["LIV-01"].messages[0]
    assert "did not return within 0.2 s" in message
    assert "did not request" not in message
    assert _suite_faults(report) == []


# -- deep vendor data ---------------------------------------------------------------------------

VENDOR_LEVELS = 3000
"""Levels of vendor nesting: past Python's recursion limit, twice over (a dict and a list
per level)."""


def _deep(levels: int) -> object:
    value: object = "leaf"
    for _ in range(levels):
        value = {"k": [value]}
    return value


class DeepToolInput(Rewriting):
    """Passes a vendor's tool input through as it came: nested thousands of levels."""

    def item(self, item: TranscriptItem) -> TranscriptItem:
        if item.kind == TranscriptKind.TOOL_CALL:
            return item.model_copy(update={"input": _deep(VENDOR_LEVELS)})
        return item


class DeepStructuredValue(Rewriting):
    """Hands the structured answer's vendor wrapper back as its value."""

    def respond(self, request: Request, response: Response) -> Response:
        so = response.structured_output
        if so is None:
            return response
        deep = so.model_copy(update={"value": _deep(VENDOR_LEVELS)})
        return response.model_copy(update={"structured_output": deep})


class DeepPayloadRaw(Rewriting):
    """Keeps the vendor's raw event on every payload (judged, never compared)."""

    def stream(self, payload: StreamPayload) -> list[StreamPayload]:
        return [payload.model_copy(update={"raw": {"vendor": _deep(VENDOR_LEVELS)}})]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("factory", "failing", "depth"),
    [
        # The item is one level more: the value sits inside it.
        (DeepToolInput, {"RUN-04", "CON-01"}, 2 * VENDOR_LEVELS + 1),
        (DeepStructuredValue, {"SO-02"}, 2 * VENDOR_LEVELS),
        (DeepPayloadRaw, set(), 0),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_deep_vendor_data_is_judged_not_crashed_on(
    factory: type[Rewriting], failing: set[str], depth: int, backend: Backend
) -> None:
    options = Options(
        live_run=True,
        live_structured_output=True,
        concurrent_runs=2,
        fresh_process=False,
        backend=backend,
    )
    assert not [r for r in check_driver(Rewriting, options) if r.status is ClauseStatus.FAILED]
    report = check_driver(factory, options)
    assert _suite_faults(report) == []
    failed = {r.clause: r.messages for r in report if r.status is ClauseStatus.FAILED}
    assert set(failed) == failing, [r.describe() for r in report]
    for clause, messages in failed.items():
        assert messages[0].startswith(f"{clause}: ")
        assert f"nested {depth} levels deep" in messages[0], messages[0]
        assert f"at most {MAX_DEPTH} levels" in messages[0]


def test_depth_is_measured_without_recursion() -> None:
    assert depth_of("leaf") == 0
    assert depth_of({"a": [1, 2]}) == 2
    assert depth_of(_deep(50_000)) == 100_000
    cycle: list[object] = []
    cycle.append(cycle)
    assert depth_of(cycle) == 1


# -- a set order that a lucky parent shares --------------------------------------------------

SMALL_SET = ("adaptertest_probe", "adaptertest_order")
"""The data keys of the suite's default seed state: a set of two strings has two orders."""
HERE = Path(__file__).resolve().parent


class _SmallSetCodec(ReferenceSessionCodec):
    def guard_fingerprint(self, params: SessionParams) -> str:
        digest = hashlib.sha256(params.resume_id.encode())
        # Built from a fixed tuple, so one interpreter always gives one order; the next
        # interpreter's hash seed may give the other.
        for key in {k for k in SMALL_SET if k in params.values}:
            digest.update(f"{key}={params.values[key]}\n".encode())
        return digest.hexdigest()


class SmallSetGuard(ReferenceDriver):
    """Hashes two guard values in the order of a set of their keys."""

    def session_codec(self) -> ReferenceSessionCodec:
        return _SmallSetCodec()


def _python(code: str, seed: int) -> subprocess.CompletedProcess[str]:
    """``python -c code`` with ``PYTHONHASHSEED=seed``, this directory importable."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    env["PYTHONHASHSEED"] = str(seed)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), *(p for p in sys.path if p)])
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )


def _order(seed: int) -> list[str]:
    done = _python(
        f"print(__import__('json').dumps([k for k in {{k for k in {SMALL_SET!r}}}]))", seed
    )
    assert done.returncode == 0, done.stderr[-2000:]
    order: list[str] = json.loads(done.stdout)
    return order


def test_a_parent_seed_that_shares_the_childs_set_order_does_not_pass_a_set_order_guard() -> None:
    """One child with the parent's seed plus one was passed whenever the two seeds order the
    set alike (about half the parent seeds for two keys). The children's fixed seeds order
    it differently, so the guard fails whatever the parent's seed."""
    assert _order(1) != _order(2), "the premise: the children's seeds order the set apart"
    parent = next(seed for seed in range(4, 40) if _order(seed) == _order(seed + 1))
    code = (
        "from adaptertest import Options, check_driver\n"
        "from test_traps import SmallSetGuard\n"
        "[r] = check_driver(SmallSetGuard, Options(max_examples=5), only=['SES-05']).results\n"
        "print(__import__('json').dumps([r.status.value, list(r.messages)]))\n"
    )
    done = _python(code, parent)
    assert done.returncode == 0, done.stderr[-2000:]
    status, messages = json.loads(done.stdout.strip().splitlines()[-1])
    assert status == "failed", (parent, messages)
    assert messages[0].startswith("SES-05: guard_fingerprint differs in a fresh interpreter")
    assert "PYTHONHASHSEED=" in messages[0]
    assert f"PYTHONHASHSEED={parent}" not in messages[0]  # the children never use the parent's


# -- a response edited after the first look ---------------------------------------------------

EDIT_DELAY = 1.0
"""Seconds after run() returned that the driver's timer rewrites the response: past the
first look (about half a second), well within the last look's wait."""


class EditsItsResponseLater(ReferenceDriver):
    """A background flush that rewrites the returned response a second after run()."""

    async def run(self, request: Request, sink: EventSink) -> Response:
        response = await super().run(request, sink)

        def flush() -> None:
            response.output = "rewritten by the background flush"

        threading.Timer(EDIT_DELAY, flush).start()
        return response


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_edit_after_the_first_look_is_seen_at_the_last(backend: Backend) -> None:
    options = Options(live_run=True, backend=backend, fresh_process=False)
    report = check_driver(EditsItsResponseLater, options)
    assert _suite_faults(report) == []
    failed = {r.clause: r for r in report if r.status is ClauseStatus.FAILED}
    assert set(failed) == {"RCV-02"}, [r.describe() for r in failed.values()]
    message = failed["RCV-02"].messages[0]
    assert message.startswith("RCV-02: ")
    assert "changed after it returned (at .output, seen at the last look" in message
    seconds = float(message.split("when the verdicts were read, ")[1].split(" s after")[0])
    assert seconds >= EDIT_DELAY  # the edit was made, and so seen, after the first look
