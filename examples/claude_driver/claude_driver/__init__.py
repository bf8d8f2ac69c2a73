"""Example driver for the Claude Code CLI (``claude -p --output-format stream-json``).

A subprocess driver built on the reference driver's template: one CLI process
per run, its stdout parsed line by line as it arrives. The format-independent
part (config fields, driver methods, process, emission, codec, run flow, JSONL
reading) lives in the ``driver.clikit`` package (shipped with the kit), shared with the Codex
driver.

- ``_config.py``: the frozen construction config and the driver's constants.
- ``_parser.py``: the stream-json format, line by line, and the run's verdict.
- ``_driver.py``: the descriptor and the ``claude -p`` command line, on
  ``driver.clikit.CLIDriver`` (probes, codec, ``run``).
"""

from __future__ import annotations

from claude_driver._config import (
    CLAUDE_DRIVER_TYPE,
    DEFAULT_COMMAND,
    DEFAULT_TIMEOUT,
    FINGERPRINT_DOMAIN,
    ClaudeConfig,
)
from claude_driver._driver import ClaudeDriver, build_argv
from claude_driver._parser import ClaudeStreamParser, claude_usage

__all__ = [
    "CLAUDE_DRIVER_TYPE",
    "DEFAULT_COMMAND",
    "DEFAULT_TIMEOUT",
    "FINGERPRINT_DOMAIN",
    "ClaudeConfig",
    "ClaudeDriver",
    "ClaudeStreamParser",
    "build_argv",
    "claude_usage",
]
