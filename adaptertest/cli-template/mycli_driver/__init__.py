"""The Mycli driver: runs the ``mycli`` agent CLI once per run and parses its JSON lines.

Built on ``driver.clikit``, the kit's toolkit for JSONL-printing CLIs, which
supplies config validation, the probes, the process, the stream bookkeeping,
the session codec and the run flow. What is this CLI's own:

- ``_config.py``: the frozen construction config and the constants that name the driver.
- ``_parser.py``: the CLI's output format, line by line, and the run's verdict.
- ``_driver.py``: the descriptor and the command line.
- ``_conformance.py``: the suite options the driver is checked with.

The output format in ``_parser.py`` is a small made-up one; replace it with what
your CLI prints, and the recordings the tests replay with runs of your CLI.
"""

from __future__ import annotations

from mycli_driver._config import (
    DEFAULT_COMMAND,
    DISPLAY_NAME,
    FINGERPRINT_DOMAIN,
    MYCLI_DRIVER_TYPE,
    MycliConfig,
)
from mycli_driver._conformance import adaptertest_options
from mycli_driver._driver import MycliDriver, build_argv, new_mycli_driver
from mycli_driver._parser import MycliStreamParser

__all__ = [
    "DEFAULT_COMMAND",
    "DISPLAY_NAME",
    "FINGERPRINT_DOMAIN",
    "MYCLI_DRIVER_TYPE",
    "MycliConfig",
    "MycliDriver",
    "MycliStreamParser",
    "adaptertest_options",
    "build_argv",
    "new_mycli_driver",
]
