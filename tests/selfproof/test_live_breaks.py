"""The breaks a driver author makes on the live path, each named by its first line.

A driver written from the README was broken in realistic ways; each break must fail the
clause it is about, and the first line of that clause's report must say what was wrong
with no opt-in: structure (payload index and kind, ids, counts, fields, where the driver
raised) shown, provider text (messages, output) withheld. The drivers are the kill
matrix's mutants where one exists; the kill matrix proves nothing else fails.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from mutants import (
    DescriptorRaisesKeyError,
    EmitsFromThreadAfterReturn,
    EmitsViaCallLater,
    FailureEndsInRunFinished,
    FailureKeepsCheckpoint,
    FailureWithoutRunError,
    IgnoresOutputSchema,
    NoCheckpoint,
    RaisesWhenCancelled,
    ReasoningDeclaredOff,
    ReusesFirstSink,
    RunRaisesFileNotFound,
    ToolResultBeforeCall,
)

from adaptertest import ClauseStatus, ConformanceReport, Options, check_driver
from adaptertest._violation import WITHHELD
from driver import Descriptor, EventSink, Request, Response
from referencedriver import ReferenceConfig, ReferenceDriver

EXPECTED = "the reference config fails every run"
MUTANTS_FILE = "tests/selfproof/mutants.py"


class ShieldsFromCancellation(ReferenceDriver):
    """Shields its whole run from cancellation, past the live deadline."""

    async def run(self, request: Request, sink: EventSink) -> Response:
        with anyio.CancelScope(shield=True):
            await anyio.sleep(3.0)
        return await super().run(request, sink)


_RELEASE = threading.Event()


class DescriptorBlocks(ReferenceDriver):
    """descriptor() blocks its thread until the module's tests are over."""

    def descriptor(self) -> Descriptor:
        _RELEASE.wait()
        return super().descriptor()


@pytest.fixture(scope="module", autouse=True)
def release_blocked_threads() -> Iterator[None]:
    yield
    _RELEASE.set()


@dataclass(frozen=True)
class Break:
    """A broken driver, the clauses it fails, and the first line of ``clause``'s report."""

    make: Callable[[], object]
    fails: frozenset[str]
    clause: str
    first_line: str  # a regular expression the first message must match in full
    options: dict[str, Any] = field(default_factory=dict)
    withheld: str | None = None  # provider text that must not show without details


def _options(**changes: Any) -> Options:
    settings: dict[str, Any] = {"config": ReferenceConfig(), "live_run": True}
    settings.update(changes)
    return Options(**settings)


AT = rf"at {re.escape(MUTANTS_FILE)}:\d+ in"
HIDDEN = rf"{re.escape(WITHHELD)}\d+ chars, sha256:[0-9a-f]{{12}}>"

BREAKS: dict[str, Break] = {
    "tool result before its call": Break(
        ToolResultBeforeCall,
        frozenset({"EVT-05"}),
        "EVT-05",
        r"EVT-05: payload 4 \(tool_call\.result\): tool call 'call-1' in scope '' was never "
        r"started",
    ),
    "reasoning streamed with reasoning=False": Break(
        ReasoningDeclaredOff,
        frozenset({"EVT-12"}),
        "EVT-12",
        r"EVT-12: payload 1 \(reasoning\.start\): stream_capability\(\)\.reasoning is false",
    ),
    "native structured output declared, schema ignored": Break(
        IgnoresOutputSchema,
        frozenset({"SO-02"}),
        "SO-02",
        r"SO-02: the native structured run returned no structured_output",
        {"live_structured_output": True},
    ),
    "resume declared, no checkpoint": Break(
        NoCheckpoint,
        frozenset({"LIV-03"}),
        "LIV-03",
        r"LIV-03: \[live_run\] resume-capable driver returned no checkpoint",
    ),
    "emit from a thread 50 ms and 200 ms after return": Break(
        EmitsFromThreadAfterReturn,
        frozenset({"EVT-02"}),
        "EVT-02",
        r"EVT-02: \[live_run\] 2 emission\(s\) reached the sink \d+ to \d+ ms after run\(\) "
        r"returned: a driver must not keep its sink once run\(\) returns",
    ),
    "emit via loop.call_later(0.1, ...) after return": Break(
        EmitsViaCallLater,
        frozenset({"EVT-02"}),
        "EVT-02",
        r"EVT-02: \[live_run\] 1 emission\(s\) reached the sink \d+ ms after run\(\) returned: "
        r"a driver must not keep its sink once run\(\) returns",
    ),
    "previous run's sink reused (with concurrent runs)": Break(
        ReusesFirstSink,
        frozenset({"CON-01", "EVT-02"}),
        "CON-01",
        # Its own sink got nothing: every payload went to the sink it kept.
        r"CON-01: run 1: EVT-01: 0 run\.started payloads, want exactly one",
        {"concurrent_runs": 3},
    ),
    "run() raises FileNotFoundError (location shown)": Break(
        RunRaisesFileNotFound,
        frozenset({"LIV-01", "FLR-01"}),
        "LIV-01",
        rf"LIV-01: \[live_run\] live run did not succeed: run\(\) raised "
        rf"builtins\.FileNotFoundError {AT} run: {HIDDEN}; no Response",
        withheld="No such file or directory",
    ),
    "run() hangs, then raises on cancellation": Break(
        RaisesWhenCancelled,
        frozenset({"LIV-01"}),
        "LIV-01",
        rf"LIV-01: \[live_run\] run\(\) did not return within 0\.3 s; cancelled, it raised "
        rf"builtins\.RuntimeError {AT} run: {HIDDEN}",
        {"live_run_timeout": 0.3},
        withheld="cleanup failed",
    ),
    "run() shields itself from cancellation": Break(
        ShieldsFromCancellation,
        frozenset({"LIV-01"}),
        "LIV-01",
        r"LIV-01: \[live_run\] run\(\) did not return within 0\.3 s and did not respond to "
        r"cancellation .*; the call was abandoned",
        {"live_run_timeout": 0.3},
    ),
    "descriptor() raises KeyError (location shown)": Break(
        DescriptorRaisesKeyError,
        frozenset({"DRV-01"}),
        "DRV-01",
        rf"DRV-01: descriptor\(\) raised builtins\.KeyError {AT} descriptor: 'display_name'",
    ),
    "descriptor() blocks its thread": Break(
        DescriptorBlocks,
        frozenset({"DRV-01"}),
        "DRV-01",
        r"DRV-01: descriptor\(\) did not return within 0\.3 s and did not respond to "
        r"cancellation .*; the call was abandoned",
        {"probe_timeout": 0.3},
    ),
    "failed run whose stream lacks run.error": Break(
        FailureWithoutRunError,
        frozenset({"EVT-02", "FLR-01"}),
        "FLR-01",
        r"FLR-01: \[live_run\] the stream ends in run\.started \(payload 0\), not run\.error",
        {"live_expect_failure": EXPECTED},
    ),
    "failed run that still offers a valid checkpoint": Break(
        FailureKeepsCheckpoint,
        frozenset({"RSP-01", "FLR-01"}),
        "FLR-01",
        r"FLR-01: \[live_run\] the failed run offers a valid checkpoint",
        {"live_expect_failure": EXPECTED},
    ),
    "failed run whose stream ends in run.finished": Break(
        FailureEndsInRunFinished,
        frozenset({"FLR-01"}),
        "FLR-01",
        r"FLR-01: \[live_run\] the stream ends in run\.finished \(payload 1\), not run\.error",
        {"live_expect_failure": EXPECTED},
    ),
}


def _report(case: Break) -> ConformanceReport:
    return check_driver(case.make, _options(**case.options))


@pytest.mark.parametrize("name", list(BREAKS))
def test_each_break_names_its_clause_and_what_was_wrong(name: str) -> None:
    case = BREAKS[name]
    report = _report(case)
    failed = {r.clause for r in report.results if r.status is ClauseStatus.FAILED}
    assert failed == case.fails, [m for r in report.failures for m in r.messages]
    first = report.result(case.clause).messages[0]
    assert re.fullmatch(case.first_line, first), first
    everything = "\n".join(t for r in report.results for t in (*r.messages, *r.notes))
    if case.withheld is not None:
        assert case.withheld not in everything
        shown = check_driver(case.make, _options(**case.options, show_live_details=True))
        assert case.withheld in shown.result(case.clause).messages[0]


@pytest.mark.parametrize(
    "name",
    [
        "failed run whose stream lacks run.error",
        "failed run that still offers a valid checkpoint",
        "failed run whose stream ends in run.finished",
    ],
)
def test_without_the_expectation_a_failed_run_also_fails_liv01(name: str) -> None:
    case = BREAKS[name]
    options = {k: v for k, v in case.options.items() if k != "live_expect_failure"}
    report = check_driver(case.make, _options(**options))
    failed = {r.clause for r in report.results if r.status is ClauseStatus.FAILED}
    assert failed == case.fails | {"LIV-01"}
    assert report.level is None or report.level.value == "core"
