"""Plumbing shared by the CLI example drivers (Claude Code, Codex).

Everything that does not depend on a CLI's output format: running the
process, emitting payloads that keep the stream rules, the session codec, the
run's guard/classify/respond flow and the wording of the probes. A driver adds
its config, its command line and a :class:`StreamParser` for its format.

- ``_process.py``: spawning the CLI, reading its pipes, the deadline.
- ``_emit.py``: stream payloads, run events and transcript with lifecycle bookkeeping.
- ``_codec.py``: the session codec (checkpoint state <-> session params).
- ``_turn.py``: one run, from the resume guard to the response.
- ``_probes.py``: the environment report and the config schema.
"""

from __future__ import annotations

from cli_plumbing._codec import ResumeCodec
from cli_plumbing._emit import RunOutput
from cli_plumbing._probes import cli_config_schema, program_report
from cli_plumbing._process import (
    DRAIN_SECONDS,
    KILL_GRACE_SECONDS,
    LineFramer,
    ProcessOutcome,
    run_cli,
)
from cli_plumbing._turn import GUARDED_KEYS, SessionMismatchError, StreamParser, run_turn

__all__ = [
    "DRAIN_SECONDS",
    "GUARDED_KEYS",
    "KILL_GRACE_SECONDS",
    "LineFramer",
    "ProcessOutcome",
    "ResumeCodec",
    "RunOutput",
    "SessionMismatchError",
    "StreamParser",
    "cli_config_schema",
    "program_report",
    "run_cli",
    "run_turn",
]
