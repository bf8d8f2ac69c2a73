"""The Gemini CLI example driver against the whole conformance suite.

The "live" run is hermetic here: the configured command replays a recorded
successful run (the answer in two token chunks), so every live clause is
judged without Gemini CLI installed. CON-01 runs on both backends.
"""

from __future__ import annotations

import adaptertest
from adaptertest import clikit as testing
from gemini_driver import GeminiConfig, GeminiDriver

RECORDINGS = testing.recordings_dir(__file__)
RESUME_ID = "5d0c7e3a-1b42-4f69-9a8e-2c7d41e0b6f3"  # the session the codec clauses start from


MODEL = "gemini-2.5-flash"

# The kit's replay stand-in playing a successful run stands in for ``gemini``.
SUCCESS = testing.replay_config(GeminiConfig, RECORDINGS, "success.jsonl", model=MODEL)


TestGeminiDriver = adaptertest.test_driver(
    lambda: GeminiDriver(SUCCESS),
    testing.conformance_options(SUCCESS, resume_id=RESUME_ID, concurrent_runs=2),
)
TestGeminiDriverOnTrio = adaptertest.test_driver(
    lambda: GeminiDriver(SUCCESS),
    testing.conformance_options(SUCCESS, resume_id=RESUME_ID, concurrent_runs=2, backend="trio"),
)


FAILED_RUNS = [
    testing.FailedRecording(
        "error_result.jsonl", expected="a replayed API error reported in the result line"
    ),
    testing.FailedRecording("turn_limit.jsonl", exit_code=53, stderr="turn_limit.stderr.txt"),
    testing.FailedRecording("nonzero_exit.jsonl", stderr="nonzero_exit.stderr.txt"),
    testing.FailedRecording(
        "auth_error.jsonl",
        exit_code=41,
        stderr="auth_error.stderr.txt",
        expected="a replayed authentication failure (exit 41)",
    ),
    # A success result does not excuse a bad exit code.
    testing.FailedRecording("success.jsonl", exit_code=3),
]
"""Recordings of failed runs; those with a reason are failure paths a host must expect."""


TestGeminiFailedRuns = testing.failed_run_tests(
    GeminiDriver, GeminiConfig, RECORDINGS, FAILED_RUNS, model=MODEL, resume_id=RESUME_ID
)
