"""The Gemini CLI example driver against the whole conformance suite.

The "live" run is hermetic here: the configured command replays a recorded
successful run (the answer in two token chunks), so every live clause is
judged without Gemini CLI installed. CON-01 runs on both backends.
"""

from __future__ import annotations

import pytest

import adaptertest
from adaptertest import clikit as testing
from gemini_driver import GeminiConfig, GeminiDriver

RECORDINGS = testing.recordings_dir(__file__)
RESUME_ID = "5d0c7e3a-1b42-4f69-9a8e-2c7d41e0b6f3"  # the session the codec clauses start from


def replay_config(recording: str, exit_code: int = 0, stderr: str | None = None) -> GeminiConfig:
    """A config whose ``gemini`` is the kit's replay stand-in playing ``recording``."""
    command = testing.replay_command(RECORDINGS, recording, exit_code=exit_code, stderr=stderr)
    return GeminiConfig(command=command, model="gemini-2.5-flash")


SUCCESS = replay_config("success.jsonl")


TestGeminiDriver = adaptertest.test_driver(
    lambda: GeminiDriver(SUCCESS),
    testing.conformance_options(SUCCESS, resume_id=RESUME_ID, concurrent_runs=2),
)
TestGeminiDriverOnTrio = adaptertest.test_driver(
    lambda: GeminiDriver(SUCCESS),
    testing.conformance_options(SUCCESS, resume_id=RESUME_ID, concurrent_runs=2, backend="trio"),
)


@pytest.mark.parametrize(
    ("recording", "exit_code", "stderr"),
    [
        ("error_result.jsonl", 1, None),
        ("turn_limit.jsonl", 53, "turn_limit.stderr.txt"),
        ("nonzero_exit.jsonl", 1, "nonzero_exit.stderr.txt"),
        ("auth_error.jsonl", 41, "auth_error.stderr.txt"),
        ("success.jsonl", 3, None),  # a success result does not excuse a bad exit code
    ],
)
def test_failed_run_fails_only_liv01(recording: str, exit_code: int, stderr: str | None) -> None:
    config = replay_config(recording, exit_code, stderr)
    options = testing.conformance_options(config, resume_id=RESUME_ID)
    testing.check_failed_run_fails_only_liv01(lambda: GeminiDriver(config), options)
