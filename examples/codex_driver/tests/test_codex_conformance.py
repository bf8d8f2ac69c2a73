"""The Codex example driver against the whole conformance suite.

The "live" runs are hermetic here: the configured command replays a recorded
successful run, or, when the driver passes ``--output-schema`` (the live
structured probe), a recorded run whose final message is the structured
answer. So every live clause, SO-02 included, is judged without the Codex CLI
installed, and the driver reaches level ``full``.

The same options serve the command line, from this folder::

    PYTHONPATH=.. python -m adaptertest check test_codex_conformance:new_driver --live
"""

from __future__ import annotations

import pytest

import adaptertest
from adaptertest import Level
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


def adaptertest_options(backend: Backend = "asyncio") -> adaptertest.Options:
    """Every live clause on, the structured probe and CON-01 included."""
    return testing.full_options(LIVE, resume_id=RESUME_ID, backend=backend)


TestCodexDriver = adaptertest.test_driver(new_driver, adaptertest_options())
TestCodexDriverOnTrio = adaptertest.test_driver(new_driver, adaptertest_options("trio"))


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_driver_reaches_level_full(backend: Backend) -> None:
    testing.check_conformance_level(new_driver, adaptertest_options(backend), Level.FULL)


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
