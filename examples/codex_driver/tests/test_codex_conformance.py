"""The Codex example driver against the whole conformance suite.

The "live" run is hermetic here: the configured command replays a recorded
successful run, so every live clause is judged without the Codex CLI installed.
"""

from __future__ import annotations

import pytest

import adaptertest
from adaptertest import Drift, Options
from adaptertest import clikit as testing
from codex_driver import CodexConfig, CodexDriver

RECORDINGS = testing.recordings_dir(__file__)
RESUME_ID = "0199e5a2-7c41-7d30-a8f5-2b6e9c4d1f08"  # the session the codec clauses start from


def replay_config(recording: str, exit_code: int = 0, stderr: str | None = None) -> CodexConfig:
    """A config whose ``codex`` is the kit's replay stand-in playing ``recording``."""
    command = testing.replay_command(RECORDINGS, recording, exit_code=exit_code, stderr=stderr)
    return CodexConfig(command=command, model="gpt-test")


SUCCESS = replay_config("success.jsonl")


TestCodexDriver = adaptertest.test_driver(
    lambda: CodexDriver(SUCCESS),
    testing.conformance_options(SUCCESS, resume_id=RESUME_ID, concurrent_runs=2),
)
TestCodexDriverOnTrio = adaptertest.test_driver(
    lambda: CodexDriver(SUCCESS),
    testing.conformance_options(SUCCESS, resume_id=RESUME_ID, backend="trio"),
)


@pytest.mark.parametrize(
    ("recording", "exit_code", "stderr"),
    [
        ("error_result.jsonl", 1, "error_result.stderr.txt"),
        ("usage_limit.jsonl", 1, None),
        ("nonzero_exit.jsonl", 1, "nonzero_exit.stderr.txt"),
        ("success.jsonl", 3, None),  # turn.completed does not excuse a bad exit code
    ],
)
def test_failed_run_fails_only_liv01(recording: str, exit_code: int, stderr: str | None) -> None:
    config = replay_config(recording, exit_code, stderr)
    options = testing.conformance_options(config, resume_id=RESUME_ID)
    testing.check_failed_run_fails_only_liv01(lambda: CodexDriver(config), options)


# Format drift (DFT-01..03): the recordings replayed with additive drift, corrupted and
# cut into arbitrary chunks, each run by a driver built around the replay's command.
DRIFT = Drift(
    recordings=[RECORDINGS / "success.jsonl", RECORDINGS / "tool_use.jsonl"],
    driver=lambda command: CodexDriver(CodexConfig(command=command)),
)
TestCodexDriverUnderDrift = adaptertest.test_driver(
    lambda: CodexDriver(SUCCESS), Options(config=SUCCESS, drift=DRIFT)
)
