"""The Mycli driver against the whole conformance suite, the live clauses included.

The live run is hermetic: the configured command is the kit's replay stand-in
(``adaptertest replay``) playing a recorded successful run, so every clause is
judged without mycli installed. Rerun one clause alone with ``pytest -k SES-04``.
"""

from __future__ import annotations

import dataclasses

import adaptertest
from adaptertest import clikit as testing
from mycli_driver import (
    MycliConfig,
    MycliDriver,
    adaptertest_options,
    new_mycli_driver,
)

RECORDINGS = testing.recordings_dir(__file__)


def replay_config(recording: str, exit_code: int = 0) -> MycliConfig:
    """A config whose ``mycli`` is the replay stand-in playing ``recording``."""
    command = testing.replay_command(RECORDINGS, recording, exit_code=exit_code)
    return MycliConfig(command=command)


SUCCESS = replay_config("success.jsonl")
# Two concurrent runs on one instance, too (CON-01): cheap with a replayed CLI. A replay
# holds no provider secret, so failures show the CLI's and the driver's own words.
OPTIONS = dataclasses.replace(
    adaptertest_options(),
    config=SUCCESS,
    live_run=True,
    concurrent_runs=2,
    show_live_details=True,
    drift=None,  # in a class of its own, below
)


def replayed_driver() -> MycliDriver:
    """The driver under test. A module-level factory, not a lambda: the suite rebuilds it by
    name in a fresh interpreter to check that the guard and the session-config
    fingerprint survive a restart (SES-05, CAP-01)."""
    return new_mycli_driver(SUCCESS)


TestMycliDriver = adaptertest.test_driver(replayed_driver, OPTIONS)


# Failed runs: each fails only LIV-01 (its stream, events and transcript still judged);
# one a host must expect also passes every clause with Options(live_expect_failure=...).
FAILED_RUNS = [
    testing.FailedRecording("error.jsonl", expected="a replayed run the CLI reports failed"),
    # A clean result line does not excuse a bad exit code.
    testing.FailedRecording("success.jsonl", exit_code=3),
]
TestMycliFailedRuns = testing.failed_run_tests(
    new_mycli_driver,
    MycliConfig,
    RECORDINGS,
    FAILED_RUNS,
    model=SUCCESS.model,
    resume_id="mycli-session-1",
)

# Format drift (DFT-01..03): the recordings replayed as the CLI's next release might
# print them (unknown lines and fields, shuffled keys, CRLF), corrupted, and cut into
# arbitrary chunks, each run by a driver built around the replay's command. The option is
# the one adaptertest_options() publishes, so `adaptertest check --drift` runs it too.
TestMycliDriverUnderDrift = adaptertest.test_driver(
    replayed_driver,
    adaptertest.Options(config=SUCCESS, drift=adaptertest_options().drift, show_live_details=True),
)
