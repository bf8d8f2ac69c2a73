"""The Gemini CLI example driver against the whole conformance suite.

The "live" run is hermetic here: the configured command replays a recorded
successful run (the answer in token chunks), so every live clause is judged
without Gemini CLI installed, and the driver reaches level ``live`` (it declares
no native structured output). CON-01 runs on both backends.

The same options serve the command line, from this folder::

    PYTHONPATH=.. python -m adaptertest check test_gemini_conformance:new_driver --live
    PYTHONPATH=.. python -m adaptertest check test_gemini_conformance:new_driver --drift
"""

from __future__ import annotations

import dataclasses

import pytest

import adaptertest
from adaptertest import Drift, Level
from adaptertest import clikit as testing
from adaptertest.options import Backend
from gemini_driver import GeminiConfig, GeminiDriver

RECORDINGS = testing.recordings_dir(__file__)
RESUME_ID = "5d0c7e3a-1b42-4f69-9a8e-2c7d41e0b6f3"  # the session the codec clauses start from
MODEL = "gemini-2.5-flash"

# The kit's replay stand-in playing a successful run stands in for ``gemini``.
SUCCESS = testing.replay_config(GeminiConfig, RECORDINGS, "success.jsonl", model=MODEL)


def new_driver() -> GeminiDriver:
    """The factory the suite builds drivers with."""
    return GeminiDriver(SUCCESS)


# Format drift (DFT-01..03): the recordings replayed with additive drift, corrupted and
# cut into arbitrary chunks (token deltas included), each run by a driver built around
# the replay's command.
DRIFT = Drift(
    recordings=[RECORDINGS / "success.jsonl", RECORDINGS / "tool_use.jsonl"],
    driver=lambda command: GeminiDriver(GeminiConfig(command=command)),
)


def adaptertest_options(backend: Backend = "asyncio", *, drift: bool = True) -> adaptertest.Options:
    """Every live clause on, CON-01 included, and the drift probe (which ``adaptertest
    check`` runs only with ``--drift``)."""
    options = testing.conformance_options(
        SUCCESS, resume_id=RESUME_ID, concurrent_runs=2, backend=backend
    )
    return dataclasses.replace(options, drift=DRIFT if drift else None)


TestGeminiDriver = adaptertest.test_driver(new_driver, adaptertest_options(drift=False))
TestGeminiDriverOnTrio = adaptertest.test_driver(
    new_driver, adaptertest_options("trio", drift=False)
)
TestGeminiDriverUnderDrift = adaptertest.test_driver(
    new_driver, adaptertest.Options(config=SUCCESS, drift=DRIFT, show_live_details=True)
)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_driver_reaches_level_live(backend: Backend) -> None:
    options = adaptertest_options(backend, drift=False)
    testing.check_conformance_level(new_driver, options, Level.LIVE)


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
