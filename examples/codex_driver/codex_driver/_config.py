"""Construction config of the Codex example driver and the constants that name it."""

from __future__ import annotations

from pydantic import Field

from driver.clikit import DEFAULT_TIMEOUT, CLIConfig

__all__ = [
    "CODEX_DRIVER_TYPE",
    "DEFAULT_COMMAND",
    "DEFAULT_TIMEOUT",
    "FINGERPRINT_DOMAIN",
    "RUN_FLAGS",
    "CodexConfig",
]

CODEX_DRIVER_TYPE = "codex"
"""``Descriptor.type``, the codec name and the ``driver_type`` of every report."""

DEFAULT_COMMAND = ("codex",)
"""The program (and leading arguments) run when the config names none."""

RUN_FLAGS = (
    "--skip-git-repo-check",
    "-c",
    "analytics.enabled=false",
    "-c",
    "features.plugins=false",
)
"""Flags every run gets after ``exec --json``, learnt from codex 0.169 itself:

- ``--skip-git-repo-check``: a leased workspace need not be a git repository (without
  it codex exits 1, "Not inside a trusted directory and --skip-git-repo-check was not
  specified").
- ``analytics.enabled=false``: no analytics events to chatgpt.com.
- ``features.plugins=false``: no ``git clone`` of the plugin marketplace from github.com
  and no GitHub API calls at startup.

With the last two a run reaches only its model provider, so it works offline against
a local endpoint. ``extra_args`` come later, so a ``-c`` there overrides these.
"""

FINGERPRINT_DOMAIN = "examples/codex/v1;codec/codex/v1"
"""Names the config encoding and the codec contract; bump it when either changes meaning."""


class CodexConfig(CLIConfig):
    """What the driver is built with; frozen so a running driver cannot see it change.

    ``command`` is the program plus any leading arguments; the driver appends
    ``exec --json``, :data:`RUN_FLAGS`, the model, ``extra_args``, ``resume <thread id>`` when
    resuming, and the prompt. The session-config fingerprint covers every field.
    """

    # The fields are driver.clikit.CLIConfig's; only the default program is Codex's.

    command: tuple[str, ...] = Field(default=DEFAULT_COMMAND, min_length=1)
    """Program and leading arguments, e.g. ``("codex",)`` or a wrapper script."""
