"""The engine under the probes: bounded calls, options, verdict merging, levels."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import anyio
import pytest

from adaptertest._calls import CallRunner
from adaptertest.clauses import CLAUSES, Mode
from adaptertest.options import Options
from adaptertest.report import ClauseResult, ClauseStatus, ConformanceReport, Level

RELEASE = threading.Event()


@pytest.fixture(params=["asyncio", "trio"])
def runner(request: pytest.FixtureRequest) -> Iterator[CallRunner]:
    r = CallRunner(request.param)
    yield r
    RELEASE.set()
    r.close()
    RELEASE.clear()


async def _add_one(x: int) -> int:
    await anyio.sleep(0)
    return x + 1


async def _sleeps_forever() -> None:
    await anyio.sleep(3600)


async def _blocks_the_loop() -> None:
    RELEASE.wait(30)


def _blocks_the_thread() -> None:
    RELEASE.wait(30)


async def _raises() -> None:
    raise LookupError("nope")


def test_coroutine_function_is_awaited(runner: CallRunner) -> None:
    assert runner.call(_add_one, 1, timeout=5).value == 2


def test_sync_function_returning_awaitable_is_awaited(runner: CallRunner) -> None:
    assert runner.call(lambda: _add_one(2), timeout=5).value == 3


def test_awaitable_result_is_not_awaited_when_not_allowed(runner: CallRunner) -> None:
    outcome = runner.call(_add_one, 1, timeout=5, awaitable=False)
    assert outcome.ok
    assert type(outcome.value).__name__ == "coroutine"


def test_cooperative_hang_times_out_without_blocking(runner: CallRunner) -> None:
    outcome = runner.call(_sleeps_forever, timeout=0.2)
    assert outcome.timed_out
    assert not outcome.blocked


@pytest.mark.parametrize("fn", [_blocks_the_loop, _blocks_the_thread])
def test_blocking_hang_is_abandoned_and_later_calls_still_run(
    runner: CallRunner, fn: object
) -> None:
    start = time.perf_counter()
    outcome = runner.call(fn, timeout=0.2)  # type: ignore[arg-type]
    assert outcome.timed_out
    assert outcome.blocked
    assert time.perf_counter() - start < 5
    assert runner.call(_add_one, 41, timeout=5).value == 42


def test_errors_are_returned_not_raised(runner: CallRunner) -> None:
    outcome = runner.call(_raises, timeout=5)
    assert isinstance(outcome.error, LookupError)


def test_options_validate_their_input() -> None:
    with pytest.raises(ValueError, match="unknown clause"):
        Options(known_failures={"XYZ-01": "why"})
    with pytest.raises(ValueError, match="needs a reason"):
        Options(known_failures={"DRV-01": " "})
    with pytest.raises(TypeError, match="sequence of strings"):
        Options(guard_keys="cwd")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="positive"):
        Options(probe_timeout=0)
    assert Options(guard_keys=["a", "b"]).guard_keys == ("a", "b")  # type: ignore[arg-type]


def test_skip_live_run_wins_over_live_run() -> None:
    options = Options(live_run=True, skip_live_run="")
    assert not options.live_enabled
    assert options.live_skip_reason == "live run skipped"


def _report(overrides: dict[str, ClauseStatus]) -> ConformanceReport:
    results = tuple(ClauseResult(c.id, overrides.get(c.id, ClauseStatus.PASSED)) for c in CLAUSES)
    return ConformanceReport(driver_type="x", results=results)


def test_levels() -> None:
    assert _report({}).level is Level.FULL
    assert _report({"SO-02": ClauseStatus.SKIPPED}).level is Level.LIVE
    live_skipped = {c.id: ClauseStatus.SKIPPED for c in CLAUSES if c.mode is Mode.LIVE}
    assert _report(live_skipped).level is Level.CORE
    assert _report({"EVT-03": ClauseStatus.FAILED}).level is Level.CORE
    assert _report({"DRV-01": ClauseStatus.FAILED}).level is None
    assert _report({"DRV-01": ClauseStatus.XFAILED}).level is None


def test_xpassed_fails_the_run() -> None:
    report = _report({"DRV-01": ClauseStatus.XPASSED})
    assert not report.ok
    with pytest.raises(AssertionError, match="1 clause"):
        report.raise_for_violations()


def test_scrub_masks_whole_escaped_and_cut_secrets() -> None:
    from adaptertest._suite import SECRET_MASK, Suite
    from referencedriver import new_reference_driver

    secret = "tok'en-0123456789-abcdef"
    suite = Suite(new_reference_driver, Options(secrets=(secret,)))
    assert suite.scrub(f"x {secret} y") == f"x {SECRET_MASK} y"
    assert secret not in suite.scrub(f"shown {secret!r}")
    cut = repr(f"prefix {secret}")[:15] + "... (40 chars)"
    assert secret[:6] not in suite.scrub(cut)
    suite.close()
