"""Construction config of the Claude Code example driver and the constants that name it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CLAUDE_DRIVER_TYPE",
    "DEFAULT_COMMAND",
    "DEFAULT_TIMEOUT",
    "FINGERPRINT_DOMAIN",
    "ClaudeConfig",
]

CLAUDE_DRIVER_TYPE = "claude-code"
"""``Descriptor.type``, the codec name and the ``driver_type`` of every report."""

DEFAULT_COMMAND = ("claude",)
"""The program (and leading arguments) run when the config names none."""

DEFAULT_TIMEOUT = 1800.0
"""Seconds a run may take before the process is stopped."""

FINGERPRINT_DOMAIN = "examples/claude-code/v1;codec/claude-code/v1"
"""Names the config encoding and the codec contract; bump it when either changes meaning."""


class ClaudeConfig(BaseModel):
    """What the driver is built with; frozen so a running driver cannot see it change.

    ``command`` is the program plus any leading arguments; the driver appends
    the print-mode flags, the model, the resume id, ``extra_args`` and the
    prompt. The session-config fingerprint covers every field.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", protected_namespaces=())

    command: tuple[str, ...] = Field(default=DEFAULT_COMMAND, min_length=1)
    """Program and leading arguments, e.g. ``("claude",)`` or a wrapper script."""
    cwd: str = ""
    """Working directory when the request brings no workspace lease; empty = inherit."""
    model: str = ""
    """Value of ``--model``; empty leaves the CLI's own default."""
    extra_args: tuple[str, ...] = ()
    """More CLI flags, placed before the prompt (``--permission-mode``, ``--max-turns`` ...)."""
    timeout: float = Field(default=DEFAULT_TIMEOUT, ge=0)
    """Seconds before the process is stopped and the run reported as timed out; 0 = none."""
