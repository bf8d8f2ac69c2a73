"""Construction config of the Codex example driver and the constants that name it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CODEX_DRIVER_TYPE",
    "DEFAULT_COMMAND",
    "DEFAULT_TIMEOUT",
    "FINGERPRINT_DOMAIN",
    "CodexConfig",
]

CODEX_DRIVER_TYPE = "codex"
"""``Descriptor.type``, the codec name and the ``driver_type`` of every report."""

DEFAULT_COMMAND = ("codex",)
"""The program (and leading arguments) run when the config names none."""

DEFAULT_TIMEOUT = 1800.0
"""Seconds a run may take before the process is stopped."""

FINGERPRINT_DOMAIN = "examples/codex/v1;codec/codex/v1"
"""Names the config encoding and the codec contract; bump it when either changes meaning."""


class CodexConfig(BaseModel):
    """What the driver is built with; frozen so a running driver cannot see it change.

    ``command`` is the program plus any leading arguments; the driver appends
    ``exec --json``, the model, ``extra_args``, ``resume <thread id>`` when
    resuming, and the prompt. The session-config fingerprint covers every field.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", protected_namespaces=())

    command: tuple[str, ...] = Field(default=DEFAULT_COMMAND, min_length=1)
    """Program and leading arguments, e.g. ``("codex",)`` or a wrapper script."""
    cwd: str = ""
    """Working directory when the request brings no workspace lease; empty = inherit."""
    model: str = ""
    """Value of ``--model``; empty leaves the CLI's own default."""
    extra_args: tuple[str, ...] = ()
    """More ``codex exec`` flags (``--sandbox workspace-write``, ``--skip-git-repo-check`` ...)."""
    timeout: float = Field(default=DEFAULT_TIMEOUT, ge=0)
    """Seconds before the process is stopped and the run reported as timed out; 0 = none."""
