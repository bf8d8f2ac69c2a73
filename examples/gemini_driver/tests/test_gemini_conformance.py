"""The Gemini CLI example driver against the whole conformance suite.

The "live" run is hermetic here: the configured command replays a recorded
successful run (the answer in two token chunks), so every live clause is
judged without Gemini CLI installed. CON-01 runs on both backends.
"""

from __future__ import annotations

import pytest

import adaptertest
from adaptertest import clikit as testing
from adaptertest.options import Backend
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


@pytest.mark.parametrize("failed", FAILED_RUNS, ids=str)
def test_failed_run_fails_only_liv01(failed: testing.FailedRecording) -> None:
    testing.check_failed_recording(
        GeminiDriver, GeminiConfig, RECORDINGS, failed, model=MODEL, resume_id=RESUME_ID
    )


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("failed", [f for f in FAILED_RUNS if f.expected], ids=str)
def test_expected_failure_fails_cleanly(failed: testing.FailedRecording, backend: Backend) -> None:
    """Options(live_expect_failure=...): no clause fails, FLR-01 and the stream clauses
    are judged on what the failed run produced."""
    testing.check_failed_recording(
        GeminiDriver,
        GeminiConfig,
        RECORDINGS,
        failed,
        model=MODEL,
        resume_id=RESUME_ID,
        backend=backend,
        expect_failure=True,
    )
