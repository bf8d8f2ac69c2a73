"""The failed-run helpers of ``adaptertest.clikit`` put the failing clause's message first.

When a clause other than the expected one fails, the test's failure starts with that
clause's whole text (observation, rule, rerun command), never with a set comparison.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import adaptertest
from adaptertest import Level
from adaptertest import clikit as testing
from driver import StreamCapability
from mycli_driver import MycliConfig, MycliDriver

RECORDINGS = Path(adaptertest.__file__).parent / "cli-template" / "recordings"
RESUME_ID = "mycli-session-1"


class HidesReasoning(MycliDriver):
    """Streams reasoning but declares it does not: EVT-12 fails on every run."""

    capability = StreamCapability(native=True)


def _config(recording: str, exit_code: int) -> MycliConfig:
    return testing.replay_config(MycliConfig, RECORDINGS, recording, model="", exit_code=exit_code)


def test_failed_run_shows_the_other_failing_clause_first() -> None:
    config = _config("success.jsonl", 3)
    options = testing.conformance_options(config, resume_id=RESUME_ID)
    with pytest.raises(pytest.fail.Exception) as raised:
        testing.check_failed_run_fails_only_liv01(lambda: HidesReasoning(config), options)
    text = str(raised.value)
    lines = text.splitlines()
    assert lines[0] == "EVT-12: payload 1 (reasoning.start): stream_capability().reasoning is false"
    assert lines[1].startswith("  rule: No tool_call.args, reasoning.* or hitl.* payload")
    assert "rerun alone: " in lines[2]
    assert text.rstrip().endswith("also failed: EVT-12")
    assert "{'" not in lines[0]


def test_expected_failure_that_succeeds_shows_flr01_first() -> None:
    config = _config("success.jsonl", 0)
    options = testing.conformance_options(config, resume_id=RESUME_ID)
    with pytest.raises(pytest.fail.Exception) as raised:
        testing.check_expected_failure_is_clean(
            lambda: MycliDriver(config), options, "a replayed 429"
        )
    first = str(raised.value).splitlines()[0]
    assert first.startswith("FLR-01: ")


def test_a_clean_failed_run_passes() -> None:
    config = _config("success.jsonl", 3)
    options = testing.conformance_options(config, resume_id=RESUME_ID)
    testing.check_failed_run_fails_only_liv01(lambda: MycliDriver(config), options)


def test_level_helper_shows_what_failed_first() -> None:
    config = _config("success.jsonl", 0)
    options = testing.conformance_options(config, resume_id=RESUME_ID)
    with pytest.raises(pytest.fail.Exception) as raised:
        testing.check_conformance_level(lambda: HidesReasoning(config), options, Level.LIVE)
    lines = str(raised.value).splitlines()
    assert lines[0].startswith("EVT-12: ")
    assert lines[-1].startswith("expected level live, got: ")
