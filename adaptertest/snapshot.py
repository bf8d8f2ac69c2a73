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

from adaptertest.pytest_plugin import snapshots_held

if TYPE_CHECKING:
    from syrupy.assertion import SnapshotAssertion
    from syrupy.location import PyTestLocation

    from adaptertest.sink import RecordingSink
    from driver import Response

__all__ = [
    "SNAPSHOT_DIR",
    "RecordingSnapshot",
    "compare_with_snapshot",
    "recording_snapshot",
    "result_data",
]

SNAPSHOT_DIR = "snapshots"
"""The folder, inside ``recordings/``, that holds the snapshot files."""


class RecordingSnapshot(JSONSnapshotExtension):
    """syrupy's JSON files, kept in ``recordings/snapshots/<test file>/`` beside the
    ``tests`` folder instead of next to the test file. Nothing is written or deleted
    while the kit's plugin holds ``--snapshot-update`` back (a clause failed)."""

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        tests = Path(test_location.filepath).parent
        return str(tests.parent / "recordings" / SNAPSHOT_DIR / test_location.basename)

    @classmethod
    def write_snapshot(cls, **kwargs: Any) -> None:
        if not snapshots_held():
            super().write_snapshot(**kwargs)

    def delete_snapshots(self, **kwargs: Any) -> None:
        if not snapshots_held():
            super().delete_snapshots(**kwargs)


def recording_snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    """pytest's ``snapshot`` fixture, storing as :class:`RecordingSnapshot`."""
    return snapshot.use_extension(RecordingSnapshot)


UPDATE_HINT = (
    "if the change is intended (a new recording, a parser change), "
    "`python -m pytest --snapshot-update` rewrites the snapshots; review the diff of "
    "recordings/snapshots/ before you commit it"
)
HELD_HINT = (
    "--snapshot-update is held back in this run: a clause fails (the failures above); "
    "fix the driver first"
)


def compare_with_snapshot(snapshot: SnapshotAssertion, data: dict[str, Any]) -> list[str]:
    """Compare ``data`` with the reviewed snapshot (writing it under ``--snapshot-update``);
    [] when they match, else what changed, field by field, the snapshot's value as the
    expected one, and what to do about it."""
    from adaptertest.dft import result_differences

    stored = recording_snapshot(snapshot)
    if stored == data:
        return []
    execution = stored.executions.get(stored.num_executions - 1)
    recalled = execution.recalled_data if execution is not None else None
    name = Path(execution.snapshot_location).name if execution is not None else "its snapshot"
    after = HELD_HINT if snapshots_held() else UPDATE_HINT
    if not isinstance(recalled, str):
        return [f"no reviewed snapshot ({name}) yet: {after}"]
    changed = result_differences(json.loads(recalled), data, show=True, limit=SNAPSHOT_CHANGES)
    return [
        f"what the driver made of it differs from its reviewed snapshot ({name}; "
        "'expected' is the snapshot):",
        *(f"  {change}" for change in changed),
        after,
    ]


SNAPSHOT_CHANGES = 8
"""At most this many changed fields are listed."""


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
