"""A toolkit for drivers that run an agent CLI printing JSON lines.

Shipped with the kit and supported: the example drivers (Claude Code, Codex,
Gemini CLI) and the projects ``adaptertest new --template cli`` writes are built on it.

Everything that does not depend on a CLI's output format: the config fields,
running the process, emitting payloads that keep the stream rules, the session
codec, the run's guard/classify/respond flow, the driver methods around it,
reading JSONL, the descriptor, and the wording of the probes. A driver adds
its command line and a parser for its format.

- ``_config.py``: :class:`CLIConfig`, the fields every CLI driver is built with (its
  environment and home included), and the masking of secret values.
- ``_program.py``: :class:`ProgramDriver`, the config, probe, session and environment
  methods of any driver of one configured program (the ACP drivers share them).
- ``_driver.py``: :class:`CLIDriver`, the driver methods a subclass configures.
- ``_process.py``: spawning the CLI, reading its pipes, the deadline, ending what it
  started, keeping stdout once and stderr capped.
- ``_emit.py``: stream payloads (whole blocks or token deltas, vendor kinds), run
  events and transcript, with lifecycle bookkeeping.
- ``_jsonl.py``: :class:`JsonlParser` (line reading, failure order) and field helpers.
- ``_codec.py``: the session codec (checkpoint state <-> session params).
- ``_turn.py``: one run, from the resume guard to the response.
- ``_probes.py``: the environment report and the config schema.
- ``_structured.py``: native structured output (the schema passed, the answer judged).

Test support for driver test files lives in :mod:`adaptertest.clikit` (it needs
the suite's test stack; nothing here imports it).
"""

from __future__ import annotations

from driver.clikit._codec import ResumeCodec
from driver.clikit._config import DEFAULT_TIMEOUT, REDACTED, CLIConfig, masked_env
from driver.clikit._driver import CLIDriver
from driver.clikit._emit import BlockKind, RunOutput
from driver.clikit._jsonl import (
    STDERR_TAIL,
    JsonlParser,
    dict_field,
    int_field,
    list_field,
    make_usage,
    read_usage,
    stderr_tail,
    str_field,
)
from driver.clikit._probes import cli_config_schema, program_report
from driver.clikit._process import (
    DRAIN_SECONDS,
    KILL_GRACE_SECONDS,
    READ_SIZE,
    STDERR_KEEP,
    TERMINAL_GRACE_SECONDS,
    LineFramer,
    ProcessOutcome,
    StderrKeeper,
    StdinWriter,
    run_cli,
)
from driver.clikit._program import ProgramDriver
from driver.clikit._structured import (
    NativeSchema,
    StructuredSource,
    judge_structured,
    native_schema,
    private_text_file,
    schema_file,
)
from driver.clikit._turn import (
    GUARDED_KEYS,
    LineJudge,
    MetadataSource,
    SessionCarry,
    SessionMismatchError,
    StderrReader,
    StreamParser,
    run_turn,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "DRAIN_SECONDS",
    "GUARDED_KEYS",
    "KILL_GRACE_SECONDS",
    "READ_SIZE",
    "REDACTED",
    "STDERR_KEEP",
    "STDERR_TAIL",
    "TERMINAL_GRACE_SECONDS",
    "BlockKind",
    "CLIConfig",
    "CLIDriver",
    "JsonlParser",
    "LineFramer",
    "LineJudge",
    "MetadataSource",
    "NativeSchema",
    "ProcessOutcome",
    "ProgramDriver",
    "ResumeCodec",
    "RunOutput",
    "SessionCarry",
    "SessionMismatchError",
    "StderrKeeper",
    "StderrReader",
    "StdinWriter",
    "StreamParser",
    "StructuredSource",
    "cli_config_schema",
    "dict_field",
    "int_field",
    "judge_structured",
    "list_field",
    "make_usage",
    "masked_env",
    "native_schema",
    "private_text_file",
    "program_report",
    "read_usage",
    "run_cli",
    "run_turn",
    "schema_file",
    "stderr_tail",
    "str_field",
]
