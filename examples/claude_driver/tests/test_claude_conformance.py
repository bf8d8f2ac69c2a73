"""The Claude Code example driver against the whole conformance suite.

The "live" run is hermetic here: the configured command replays a recorded
successful run, so every live clause is judged without Claude Code installed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import adaptertest
from adaptertest import CLAUSES, ClauseStatus, Options
from adaptertest.options import Backend
from claude_driver import ClaudeConfig, ClaudeDriver
from driver import SESSION_PARAM_CWD, SESSION_PARAM_PROFILE_FINGERPRINT, SessionState

RECORDINGS = Path(__file__).resolve().parent.parent / "recordings"


def replay_config(recording: str, exit_code: int = 0, stderr: str | None = None) -> ClaudeConfig:
    """A config whose ``claude`` is the kit's replay stand-in playing ``recording``."""
    command = [sys.executable, "-m", "adaptertest", "replay", str(RECORDINGS / recording)]
    command += ["--exit-code", str(exit_code)]
    if stderr is not None:
        command += ["--stderr", str(RECORDINGS / stderr)]
    return ClaudeConfig(command=(*command, "--"), model="claude-sonnet-4-5")


SUCCESS = replay_config("success.jsonl")
SESSION = SessionState(
    resume_id="3f9b6c1e-58d2-4a7f-9e0b-c4d21a8f6e53",
    data={
        SESSION_PARAM_CWD: "/home/ana/projects/demo-repo",
        SESSION_PARAM_PROFILE_FINGERPRINT: "p-1",
    },
)


def options(
    config: ClaudeConfig, *, concurrent_runs: int = 0, backend: Backend = "asyncio"
) -> Options:
    return Options(
        config=config,
        live_run=True,
        live_prompt=adaptertest.DEFAULT_LIVE_PROMPT,
        live_expected_output="OK",
        live_run_timeout=30,
        session_state=SESSION,
        session_keys=(SESSION_PARAM_CWD,),
        guard_keys=(SESSION_PARAM_CWD, SESSION_PARAM_PROFILE_FINGERPRINT),
        required_config_fields=("command", "model", "cwd", "extra_args", "timeout"),
        expect_reject_foreign_config=True,
        max_examples=10,
        concurrent_runs=concurrent_runs,
        backend=backend,
    )


TestClaudeDriver = adaptertest.test_driver(
    lambda: ClaudeDriver(SUCCESS), options(SUCCESS, concurrent_runs=2)
)
TestClaudeDriverOnTrio = adaptertest.test_driver(
    lambda: ClaudeDriver(SUCCESS), options(SUCCESS, backend="trio")
)

# Clauses the live run judges; the hermetic ones are covered by the classes above.
LIVE_RUN_CLAUSES = [c.id for c in CLAUSES if "live_run" in c.probes]


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
    report = adaptertest.check_driver(
        lambda: ClaudeDriver(config), options(config), only=LIVE_RUN_CLAUSES
    )
    status = {r.clause: r.status for r in report.results}
    failed = {clause for clause, s in status.items() if s is ClauseStatus.FAILED}
    assert failed == {"LIV-01"}, [m for r in report.results for m in r.messages]
    # The response is still judged before the probe stops at LIV-01: it must be legal.
    judged = ("RSP-01", "RSP-02", "RSP-03", "RSP-05", "TRN-01", "TRN-02", "TRN-03", "TRN-04")
    assert all(status[clause] is ClauseStatus.PASSED for clause in judged)
