"""The Claude Code example driver against the whole conformance suite.

The "live" runs are hermetic here: the configured command replays a recorded
successful run, or, when the driver passes ``--json-schema`` (the live
structured probe), a recorded run that carries the structured answer. So every
live clause, SO-02 included, is judged without Claude Code installed, and the
driver reaches level ``full``.

The same options serve the command line, from this folder::

    PYTHONPATH=.. python -m adaptertest check test_claude_conformance:new_driver --live
    PYTHONPATH=.. python -m adaptertest check test_claude_conformance:new_driver --drift
"""

from __future__ import annotations

import dataclasses

import pytest

import adaptertest
from adaptertest import Drift, Level
from adaptertest import clikit as testing
from adaptertest.options import Backend
from claude_driver import ClaudeConfig, ClaudeDriver

RECORDINGS = testing.recordings_dir(__file__)
RESUME_ID = "3f9b6c1e-58d2-4a7f-9e0b-c4d21a8f6e53"  # the session the codec clauses start from
MODEL = "claude-sonnet-4-5"


LIVE = testing.live_config(ClaudeConfig, RECORDINGS, structured_flag="--json-schema", model=MODEL)


def new_driver() -> ClaudeDriver:
    """The factory the suite builds drivers with."""
    return ClaudeDriver(LIVE)


# Format drift (DFT-01..03): the recordings replayed with additive drift, corrupted and
# cut into arbitrary chunks, each run by a driver built around the replay's command.
DRIFT = Drift(
    recordings=[RECORDINGS / "success.jsonl", RECORDINGS / "tool_use.jsonl"],
    driver=lambda command: ClaudeDriver(ClaudeConfig(command=command)),
)


def adaptertest_options(backend: Backend = "asyncio", *, drift: bool = True) -> adaptertest.Options:
    """Every live clause on, the structured probe and CON-01 included, and the drift
    probe (which ``adaptertest check`` runs only with ``--drift``)."""
    options = testing.full_options(LIVE, resume_id=RESUME_ID, backend=backend)
    return dataclasses.replace(options, drift=DRIFT if drift else None)


TestClaudeDriver = adaptertest.test_driver(new_driver, adaptertest_options(drift=False))
TestClaudeDriverOnTrio = adaptertest.test_driver(
    new_driver, adaptertest_options("trio", drift=False)
)
TestClaudeDriverUnderDrift = adaptertest.test_driver(
    new_driver, adaptertest.Options(config=LIVE, drift=DRIFT, show_live_details=True)
)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_driver_reaches_level_full(backend: Backend) -> None:
    options = adaptertest_options(backend, drift=False)
    testing.check_conformance_level(new_driver, options, Level.FULL)


FAILED_RUNS = [
    testing.FailedRecording("error_result.jsonl"),
    testing.FailedRecording("max_turns.jsonl"),
    testing.FailedRecording("nonzero_exit.jsonl", stderr="nonzero_exit.stderr.txt"),
    # A clean result line does not excuse a bad exit code.
    testing.FailedRecording("success.jsonl", exit_code=3),
    testing.FailedRecording(
        "rate_limited.jsonl", expected="a replayed 429: rate limited, retried, gave up"
    ),
    testing.FailedRecording(
        "budget_stop.jsonl", expected="a replayed budget stop during a tool call"
    ),
    testing.FailedRecording("compaction_failed.jsonl"),
    testing.FailedRecording(
        "killed_after_retries.jsonl",
        exit_code=0,
        kill="SIGTERM",
        expected="a replayed process killed after 529 retries, no result line",
    ),
]
"""Recordings of failed runs; those with a reason are failure paths a host must expect."""


TestClaudeFailedRuns = testing.failed_run_tests(
    ClaudeDriver, ClaudeConfig, RECORDINGS, FAILED_RUNS, model=MODEL, resume_id=RESUME_ID
)


def test_a_config_that_sets_the_system_prompt_skips_the_sys_clauses() -> None:
    """``extra_args`` that set Claude Code's system prompt are the author's choice: the
    driver refuses the append (conflicting_extra_args, upstream's rule) and the suite
    skips SYS-01..03 naming the flag, failing nothing."""
    config = LIVE.model_copy(update={"extra_args": ("--system-prompt", "You are terse.")})
    options = dataclasses.replace(adaptertest_options(drift=False), config=config)
    report = adaptertest.check_driver(
        lambda: ClaudeDriver(config), options, only=["SYS", "OBS-01", "LIV-01"]
    )
    assert [r.clause for r in report.results if r.status.is_failure] == []
    for clause in ("SYS-01", "SYS-02", "SYS-03"):
        [reason] = report.result(clause).messages
        assert "conflicting_extra_args (argument '--system-prompt')" in reason, reason
