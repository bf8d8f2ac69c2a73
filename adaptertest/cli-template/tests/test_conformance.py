"""The Mycli driver against the whole conformance suite, the live clauses included.

The live run is hermetic: the configured command is the kit's replay stand-in
(``adaptertest replay``) playing a recorded successful run, so every clause is
judged without mycli installed. Rerun one clause alone with ``pytest -k SES-04``.
"""

from __future__ import annotations

import dataclasses

import pytest

import adaptertest
from adaptertest import clikit as testing
from mycli_driver import MycliConfig, adaptertest_options, new_mycli_driver

RECORDINGS = testing.recordings_dir(__file__)


def replay_config(recording: str, exit_code: int = 0) -> MycliConfig:
    """A config whose ``mycli`` is the replay stand-in playing ``recording``."""
    return MycliConfig(command=testing.replay_command(RECORDINGS, recording, exit_code=exit_code))


SUCCESS = replay_config("success.jsonl")
# Two concurrent runs on one instance, too (CON-01): cheap with a replayed CLI.
OPTIONS = dataclasses.replace(
    adaptertest_options(), config=SUCCESS, live_run=True, concurrent_runs=2
)

TestMycliDriver = adaptertest.test_driver(lambda: new_mycli_driver(SUCCESS), OPTIONS)


@pytest.mark.parametrize(
    ("recording", "exit_code"),
    [
        ("error.jsonl", 1),
        ("success.jsonl", 3),  # a clean result line does not excuse a bad exit code
    ],
)
def test_failed_run_fails_only_liv01(recording: str, exit_code: int) -> None:
    config = replay_config(recording, exit_code)
    options = dataclasses.replace(OPTIONS, config=config, concurrent_runs=0)
    testing.check_failed_run_fails_only_liv01(lambda: new_mycli_driver(config), options)
