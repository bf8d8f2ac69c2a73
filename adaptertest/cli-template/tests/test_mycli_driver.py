"""Behaviour of the Mycli driver on recorded ``mycli --json`` output.

Parser tests feed a recording straight into the parser; driver tests run the
whole path, the process included, with the kit's replay stand-in as the CLI, so
mycli need not be installed. The checks are the kit's shared ones for drivers
built on ``driver.clikit`` (``adaptertest.clikit``); this file gives them this
CLI's data. Record a run of every kind you meet into ``recordings/`` and run
``python -m pytest --snapshot-update``: each recording's result is kept as a reviewed
snapshot in ``recordings/snapshots/``; review the diff, there is no test to edit.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from adaptertest import clikit as testing
from driver import Request, SessionContext, SessionState
from mycli_driver import (
    MYCLI_DRIVER_TYPE,
    MycliConfig,
    MycliDriver,
    MycliStreamParser,
    build_argv,
)

RECORDINGS = testing.recordings_dir(__file__)
REPLAY = testing.Replay(RECORDINGS, lambda command: MycliDriver(MycliConfig(command=command)))


# -- every recording, against its reviewed snapshot ---------------------------------------------


@pytest.mark.parametrize("recording", testing.recording_names(RECORDINGS))
def test_recording(recording: str, snapshot: SnapshotAssertion) -> None:
    """What the driver makes of each recording (kinds, output, usage, failure,
    checkpoint), on asyncio and trio, equals ``recordings/snapshots/``;
    ``--snapshot-update`` rewrites it."""
    testing.check_recording(REPLAY, recording, snapshot)


# -- the parser on lines no recording has -------------------------------------------------------


def test_parser_survives_corrupt_and_odd_lines() -> None:
    testing.check_parser_survives_odd_lines(
        MycliStreamParser,
        truncated=b'{"type": "message", "text": ',
        not_an_object=b'{"type": "message", "text": ["not", "a", "string"]}',
        unexpected=b'{"type": "progress", "percent": 40}',
        nan_terminal=b'{"type": "result", "status": "success", "usage": NaN}',
    )


# -- the driver, through a replayed process ----------------------------------------------------


@pytest.mark.anyio
async def test_streaming_off_sends_no_payloads_but_the_same_transcript() -> None:
    await testing.check_streaming_off(REPLAY, "tool_use.jsonl")


@pytest.mark.anyio
async def test_command_line_carries_model_resume_and_prompt(tmp_path: Path) -> None:
    argv_file = tmp_path / "argv.json"
    command = REPLAY.command("success.jsonl", record_argv=argv_file)
    driver = MycliDriver(MycliConfig(command=command, extra_args=("--max-turns", "3")))
    state = SessionState(resume_id="7d1e4a90-2c5b-4f8e-9a36-5b0c8d2f1e47")
    request = Request(
        prompt="-v is a prompt, not a flag",
        model_override="mycli-small",
        session=SessionContext(state=state),
    )
    passed = await testing.passed_argv(driver, request, argv_file)
    expected = build_argv(
        driver.config, request.prompt, model="mycli-small", resume_id=state.resume_id
    )
    assert passed == expected[len(command) :]
    assert passed == [
        "--json",
        "--model",
        "mycli-small",
        "--resume",
        "7d1e4a90-2c5b-4f8e-9a36-5b0c8d2f1e47",
        "--max-turns",
        "3",
        "--",
        "-v is a prompt, not a flag",
    ]


@pytest.mark.anyio
async def test_an_appended_system_prompt_is_refused_before_launch(tmp_path: Path) -> None:
    # mycli declares no append (Descriptor.system_prompt.append is False). Once your CLI
    # has a way to add to its system prompt, declare it, override system_prompt_args and
    # system_prompt_flags in _driver.py, and check the argv with testing.appended_argv.
    await testing.check_append_refused(REPLAY, "unsupported_driver", tmp_path)


# -- declarations and config -------------------------------------------------------------------


def test_config_validation() -> None:
    testing.check_config_validation(
        MycliDriver,
        MycliConfig,
        default_command=("mycli",),
        other=MycliConfig(model="mycli-small"),
    )


def test_descriptor_and_stream_capability_are_honest(snapshot: SnapshotAssertion) -> None:
    capability = MycliDriver().stream_capability()
    models = testing.check_descriptor_and_stream_capability(
        MycliDriver,
        MycliConfig(model="mycli-large"),
        MYCLI_DRIVER_TYPE,
        capability=capability,
    )
    declared = {"models": models, "stream_capability": capability.model_dump(mode="json")}
    assert declared == testing.recording_snapshot(snapshot)


@pytest.mark.anyio
async def test_environment_check_looks_for_the_program() -> None:
    missing = "mycli-is-not-installed-here"
    await testing.check_environment_probe(MycliDriver, MycliConfig, missing)
