"""Per-recording expectations as reviewed snapshot files beside the recordings (syrupy).

A CLI driver's tests replay every recording in its ``recordings/`` folder and compare
what the driver made of it (transcript and stream kinds, output, usage, failure,
checkpoint, exit status) with a JSON file in ``recordings/snapshots/``. A new
recording, or a parser change, needs no test code: ``python -m pytest
--snapshot-update`` writes the files, and the diff of the folder is what to review.
A mismatch fails with a line diff of the JSON.

How each recording is replayed (its exit status, signal and stderr) is
:func:`adaptertest.clikit.replay_settings`'s business. Needs syrupy (in the kit's
``test`` extra), pytest and the rest of the suite.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from syrupy.extensions.json import JSONSnapshotExtension

if TYPE_CHECKING:
    from syrupy.assertion import SnapshotAssertion
    from syrupy.location import PyTestLocation

    from adaptertest.sink import RecordingSink
    from driver import Response

__all__ = ["SNAPSHOT_DIR", "RecordingSnapshot", "recording_snapshot", "result_data"]

SNAPSHOT_DIR = "snapshots"
"""The folder, inside ``recordings/``, that holds the snapshot files."""


class RecordingSnapshot(JSONSnapshotExtension):
    """syrupy's JSON files, kept in ``recordings/snapshots/<test file>/`` beside the
    ``tests`` folder instead of next to the test file."""

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        tests = Path(test_location.filepath).parent
        return str(tests.parent / "recordings" / SNAPSHOT_DIR / test_location.basename)


def recording_snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    """pytest's ``snapshot`` fixture, storing as :class:`RecordingSnapshot`."""
    return snapshot.use_extension(RecordingSnapshot)


def result_data(response: Response, sink: RecordingSink) -> dict[str, Any]:
    """What a run made of a recording, as the JSON a snapshot holds."""
    failure = response.failure
    checkpoint = response.checkpoint
    state = checkpoint.state if checkpoint is not None else None
    raw = response.raw_streams
    return {
        "exit_code": response.exit_code,
        "signal": response.signal,
        "output": response.output,
        "transcript": [item.kind for item in response.transcript],
        "stream": [payload.kind for payload in sink.stream],
        "usage": None
        if response.usage is None
        else response.usage.model_dump(mode="json", exclude_defaults=True),
        "failure": None
        if failure is None
        else {
            "code": str(failure.code),
            "message": failure.message,
            "metadata": json.loads(json.dumps(failure.metadata, default=str, sort_keys=True)),
        },
        "checkpoint": None
        if checkpoint is None
        else {
            "valid": checkpoint.valid,
            "resume_id": state.resume_id if state is not None else None,
        },
        "terminal_line": raw is not None and raw.terminal is not None,
    }
