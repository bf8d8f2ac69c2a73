"""Example driver for Gemini CLI (``gemini --output-format stream-json --prompt=…``).

A subprocess driver built on ``driver.clikit``: one CLI process per run, its
JSONL events parsed line by line as they arrive, the answer streamed token
chunk by token chunk. What it adds to the kit's toolkit is a command line and
a parser.

- ``_config.py``: the frozen construction config and the driver's constants.
- ``_parser.py``: the stream-json events, line by line, usage and the run's verdict.
- ``_driver.py``: the command line and the declarations, on
  ``driver.clikit.CLIDriver`` (descriptor, probes, codec, ``run``).
"""

from __future__ import annotations

from gemini_driver._config import (
    DEFAULT_COMMAND,
    DEFAULT_TIMEOUT,
    FINGERPRINT_DOMAIN,
    GEMINI_DRIVER_TYPE,
    GeminiConfig,
)
from gemini_driver._driver import GeminiDriver, build_argv, merge_settings, settings_path
from gemini_driver._parser import (
    ERROR_KIND,
    EXIT_REASONS,
    RETRY_KIND,
    GeminiStreamParser,
    stats_usage,
)

__all__ = [
    "DEFAULT_COMMAND",
    "DEFAULT_TIMEOUT",
    "ERROR_KIND",
    "EXIT_REASONS",
    "FINGERPRINT_DOMAIN",
    "GEMINI_DRIVER_TYPE",
    "RETRY_KIND",
    "GeminiConfig",
    "GeminiDriver",
    "GeminiStreamParser",
    "build_argv",
    "merge_settings",
    "settings_path",
    "stats_usage",
]
