"""Example driver for the OpenAI Codex CLI (``codex exec --json``).

A subprocess driver built on the reference driver's template: one CLI process
per run, its JSONL events parsed line by line as they arrive. The
format-independent part (config fields, driver methods, process, emission,
codec, run flow, JSONL reading) lives in the ``driver.clikit`` package (shipped with the kit),
shared with the Claude Code driver.

- ``_config.py``: the frozen construction config and the driver's constants.
- ``_parser.py``: the ``exec --json`` events, line by line, and the run's verdict.
- ``_driver.py``: the descriptor and the ``codex exec`` command line, on
  ``driver.clikit.CLIDriver`` (probes, codec, ``run``).
"""

from __future__ import annotations

from codex_driver._config import (
    CODEX_DRIVER_TYPE,
    DEFAULT_COMMAND,
    DEFAULT_TIMEOUT,
    FINGERPRINT_DOMAIN,
    RUN_FLAGS,
    CodexConfig,
)
from codex_driver._driver import (
    RESERVED_CONFIG_KEYS,
    CodexDriver,
    build_argv,
    provider_args,
    toml_string,
)
from codex_driver._parser import THREAD_USAGE_KEY, CodexStreamParser

__all__ = [
    "CODEX_DRIVER_TYPE",
    "DEFAULT_COMMAND",
    "DEFAULT_TIMEOUT",
    "FINGERPRINT_DOMAIN",
    "RESERVED_CONFIG_KEYS",
    "RUN_FLAGS",
    "THREAD_USAGE_KEY",
    "CodexConfig",
    "CodexDriver",
    "CodexStreamParser",
    "build_argv",
    "provider_args",
    "toml_string",
]
