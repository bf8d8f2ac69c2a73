"""The Claude Code example driver against the whole conformance suite.

The "live" run is hermetic here: the configured command replays a recorded
successful run, so every live clause is judged without Claude Code installed.
"""

from __future__ import annotations

import pytest

import adaptertest
from adaptertest import Drift, Options
from adaptertest import clikit as testing
from claude_driver import ClaudeConfig, ClaudeDriver

RECORDINGS = testing.recordings_dir(__file__)
RESUME_ID = "3f9b6c1e-58d2-4a7f-9e0b-c4d21a8f6e53"  # the session the codec clauses start from


def replay_config(recording: str, exit_code: int = 0, stderr: str | None = None) -> ClaudeConfig:
    """A config whose ``claude`` is the kit's replay stand-in playing ``recording``."""
    command = testing.replay_command(RECORDINGS, recording, exit_code=exit_code, stderr=stderr)
    return ClaudeConfig(command=command, model="claude-sonnet-4-5")


SUCCESS = replay_config("success.jsonl")


TestClaudeDriver = adaptertest.test_driver(
    lambda: ClaudeDriver(SUCCESS),
    testing.conformance_options(SUCCESS, resume_id=RESUME_ID, concurrent_runs=2),
)
TestClaudeDriverOnTrio = adaptertest.test_driver(
    lambda: ClaudeDriver(SUCCESS),
    testing.conformance_options(SUCCESS, resume_id=RESUME_ID, backend="trio"),
)


@pytest.mark.parametrize(
    ("recording", "exit_code", "stderr"),
    [
        ("error_result.jsonl", 1, None),
        ("max_turns.jsonl", 1, None),
        ("nonzero_exit.jsonl", 1, "nonzero_exit.stderr.txt"),
        ("success.jsonl", 3, None),  # a clean result line does not excuse a bad exit code
    ],
)
def test_failed_run_fails_only_liv01(recording: str, exit_code: int, stderr: str | None) -> None:
    config = replay_config(recording, exit_code, stderr)
    options = testing.conformance_options(config, resume_id=RESUME_ID)
    testing.check_failed_run_fails_only_liv01(lambda: ClaudeDriver(config), options)


# Format drift (DFT-01..03): the recordings replayed with additive drift, corrupted and
# cut into arbitrary chunks, each run by a driver built around the replay's command.
DRIFT = Drift(
    recordings=[RECORDINGS / "success.jsonl", RECORDINGS / "tool_use.jsonl"],
    driver=lambda command: ClaudeDriver(ClaudeConfig(command=command)),
)
TestClaudeDriverUnderDrift = adaptertest.test_driver(
    lambda: ClaudeDriver(SUCCESS), Options(config=SUCCESS, drift=DRIFT)
)
