"""The Claude Code example driver against the whole conformance suite.

The "live" runs are hermetic here: the configured command replays a recorded
successful run, or, when the driver passes ``--json-schema`` (the live
structured probe), a recorded run that carries the structured answer. So every
live clause, SO-02 included, is judged without Claude Code installed, and the
driver reaches level ``full``.

The same options serve the command line, from this folder::

    PYTHONPATH=.. python -m adaptertest check test_claude_conformance:new_driver --live
"""

from __future__ import annotations

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


def adaptertest_options(backend: Backend = "asyncio") -> adaptertest.Options:
    """Every live clause on, the structured probe and CON-01 included."""
    return testing.full_options(LIVE, resume_id=RESUME_ID, backend=backend)


TestClaudeDriver = adaptertest.test_driver(new_driver, adaptertest_options())
TestClaudeDriverOnTrio = adaptertest.test_driver(new_driver, adaptertest_options("trio"))


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_driver_reaches_level_full(backend: Backend) -> None:
    testing.check_conformance_level(new_driver, adaptertest_options(backend), Level.FULL)


@pytest.mark.parametrize(
    ("recording", "exit_code", "stderr", "kill"),
    [
        ("error_result.jsonl", 1, None, ""),
        ("max_turns.jsonl", 1, None, ""),
        ("nonzero_exit.jsonl", 1, "nonzero_exit.stderr.txt", ""),
        ("success.jsonl", 3, None, ""),  # a clean result line does not excuse a bad exit code
        ("rate_limited.jsonl", 1, None, ""),
        ("budget_stop.jsonl", 1, None, ""),
        ("compaction_failed.jsonl", 1, None, ""),
        ("killed_after_retries.jsonl", 0, None, "SIGTERM"),
    ],
)
def test_failed_run_fails_only_liv01(
    recording: str, exit_code: int, stderr: str | None, kill: str
) -> None:
    config = testing.replay_config(
        ClaudeConfig,
        RECORDINGS,
        recording,
        model=MODEL,
        exit_code=exit_code,
        stderr=stderr,
        kill=kill,
    )
    options = testing.conformance_options(config, resume_id=RESUME_ID)
    testing.check_failed_run_fails_only_liv01(lambda: ClaudeDriver(config), options)


# Format drift (DFT-01..03): the recordings replayed with additive drift, corrupted and
# cut into arbitrary chunks, each run by a driver built around the replay's command.
DRIFT = Drift(
    recordings=[RECORDINGS / "success.jsonl", RECORDINGS / "tool_use.jsonl"],
    driver=lambda command: ClaudeDriver(ClaudeConfig(command=command)),
)
TestClaudeDriverUnderDrift = adaptertest.test_driver(
    new_driver, adaptertest.Options(config=LIVE, drift=DRIFT)
)
