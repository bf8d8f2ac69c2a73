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


def adaptertest_options(backend: Backend = "asyncio") -> adaptertest.Options:
    """Every live clause on, the structured probe and CON-01 included."""
    return testing.full_options(LIVE, resume_id=RESUME_ID, backend=backend)


TestCodexDriver = adaptertest.test_driver(new_driver, adaptertest_options())
TestCodexDriverOnTrio = adaptertest.test_driver(new_driver, adaptertest_options("trio"))


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_driver_reaches_level_full(backend: Backend) -> None:
    testing.check_conformance_level(new_driver, adaptertest_options(backend), Level.FULL)


@pytest.mark.parametrize(
    ("recording", "exit_code", "stderr", "kill"),
    [
        ("error_result.jsonl", 1, "error_result.stderr.txt", ""),
        ("usage_limit.jsonl", 1, None, ""),
        ("nonzero_exit.jsonl", 1, "nonzero_exit.stderr.txt", ""),
        ("success.jsonl", 3, None, ""),  # turn.completed does not excuse a bad exit code
        ("reconnect_429.jsonl", 1, "reconnect_429.stderr.txt", ""),
        ("usage_limit_mid_tool.jsonl", 1, None, ""),
        ("killed_reconnecting.jsonl", 0, None, "SIGTERM"),
    ],
)
def test_failed_run_fails_only_liv01(
    recording: str, exit_code: int, stderr: str | None, kill: str
) -> None:
    config = testing.replay_config(
        CodexConfig,
        RECORDINGS,
        recording,
        model=MODEL,
        exit_code=exit_code,
        stderr=stderr,
        kill=kill,
    )
    options = testing.conformance_options(config, resume_id=RESUME_ID)
    testing.check_failed_run_fails_only_liv01(lambda: CodexDriver(config), options)


# Format drift (DFT-01..03): the recordings replayed with additive drift, corrupted and
# cut into arbitrary chunks, each run by a driver built around the replay's command.
DRIFT = Drift(
    recordings=[RECORDINGS / "success.jsonl", RECORDINGS / "tool_use.jsonl"],
    driver=lambda command: CodexDriver(CodexConfig(command=command)),
)
TestCodexDriverUnderDrift = adaptertest.test_driver(
    new_driver, adaptertest.Options(config=LIVE, drift=DRIFT)
)
