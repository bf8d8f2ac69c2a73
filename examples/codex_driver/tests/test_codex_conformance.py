"""The Codex example driver against the whole conformance suite.

The "live" runs are hermetic here: the configured command replays a recorded
successful run, or, when the driver passes ``--output-schema`` (the live
structured probe), a recorded run whose final message is the structured
answer. So every live clause, SO-02 included, is judged without the Codex CLI
installed, and the driver reaches level ``full``.

The same options serve the command line, from this folder::

    PYTHONPATH=.. python -m adaptertest check test_codex_conformance:new_driver --live
    PYTHONPATH=.. python -m adaptertest check test_codex_conformance:new_driver --drift
"""

from __future__ import annotations

import dataclasses

import pytest

import adaptertest
from adaptertest import Drift, Level
from adaptertest import clikit as testing
from adaptertest.options import Backend
from codex_driver import CodexConfig, CodexDriver

RECORDINGS = testing.recordings_dir(__file__)
RESUME_ID = "0199e5a2-7c41-7d30-a8f5-2b6e9c4d1f08"  # the session the codec clauses start from
MODEL = "gpt-test"


LIVE = testing.live_config(CodexConfig, RECORDINGS, structured_flag="--output-schema", model=MODEL)


def new_driver() -> CodexDriver:
    """The factory the suite builds drivers with."""
    return CodexDriver(LIVE)


# Format drift (DFT-01..03): the recordings replayed with additive drift, corrupted and
# cut into arbitrary chunks, each run by a driver built around the replay's command.
DRIFT = Drift(
    recordings=[RECORDINGS / "success.jsonl", RECORDINGS / "tool_use.jsonl"],
    driver=lambda command: CodexDriver(CodexConfig(command=command)),
)


def adaptertest_options(backend: Backend = "asyncio", *, drift: bool = True) -> adaptertest.Options:
    """Every live clause on, the structured probe and CON-01 included, and the drift
    probe (which ``adaptertest check`` runs only with ``--drift``)."""
    options = testing.full_options(LIVE, resume_id=RESUME_ID, backend=backend)
    return dataclasses.replace(options, drift=DRIFT if drift else None)


TestCodexDriver = adaptertest.test_driver(new_driver, adaptertest_options(drift=False))
TestCodexDriverOnTrio = adaptertest.test_driver(
    new_driver, adaptertest_options("trio", drift=False)
)
TestCodexDriverUnderDrift = adaptertest.test_driver(
    new_driver, adaptertest.Options(config=LIVE, drift=DRIFT, show_live_details=True)
)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_driver_reaches_level_full(backend: Backend) -> None:
    options = adaptertest_options(backend, drift=False)
    testing.check_conformance_level(new_driver, options, Level.FULL)


FAILED_RUNS = [
    testing.FailedRecording("error_result.jsonl", stderr="error_result.stderr.txt"),
    testing.FailedRecording("usage_limit.jsonl"),
    testing.FailedRecording("nonzero_exit.jsonl", stderr="nonzero_exit.stderr.txt"),
    # turn.completed does not excuse a bad exit code.
    testing.FailedRecording("success.jsonl", exit_code=3),
    testing.FailedRecording(
        "reconnect_429.jsonl",
        stderr="reconnect_429.stderr.txt",
        expected="a replayed 429: reconnect attempts, then the turn failed",
    ),
    testing.FailedRecording(
        "usage_limit_mid_tool.jsonl", expected="a replayed usage limit during a tool call"
    ),
    # Recorded from codex 0.169.0 against the model-API emulator.
    testing.FailedRecording("real_unauthorized_401.jsonl"),
    testing.FailedRecording(
        "real_error_500.jsonl", expected="a recorded persistent 500: five reconnects, then failed"
    ),
    testing.FailedRecording(
        "real_stream_cut.jsonl", expected="a recorded stream cut mid-answer on every attempt"
    ),
    testing.FailedRecording(
        "killed_reconnecting.jsonl",
        exit_code=0,
        kill="SIGTERM",
        expected="a replayed process killed while reconnecting, no terminal line",
    ),
]
"""Recordings of failed runs; those with a reason are failure paths a host must expect."""


TestCodexFailedRuns = testing.failed_run_tests(
    CodexDriver, CodexConfig, RECORDINGS, FAILED_RUNS, model=MODEL, resume_id=RESUME_ID
)
