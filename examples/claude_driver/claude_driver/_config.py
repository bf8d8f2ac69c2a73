"""Construction config of the Claude Code example driver and the constants that name it."""

from __future__ import annotations

from pydantic import Field

from driver.clikit import DEFAULT_TIMEOUT, CLIConfig

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

FINGERPRINT_DOMAIN = "examples/claude-code/v1;codec/claude-code/v1"
"""Names the config encoding and the codec contract; bump it when either changes meaning."""


class ClaudeConfig(CLIConfig):
    """What the driver is built with; frozen so a running driver cannot see it change.

    ``command`` is the program plus any leading arguments; the driver appends
    the print-mode flags, the model, the resume id, ``extra_args`` and the
    prompt. The session-config fingerprint covers every field.

    ``two_way`` switches to the two-way mode: the prompt goes on stdin as a stream-json
    user message and the CLI's permission prompts come to the driver over its control
    messages, decided by the run's human-decision policy and the host (see
    ``claude_driver._control``); the driver then declares HITL.
    """

    # The fields are driver.clikit.CLIConfig's, the default program Claude's, plus the switch.

    command: tuple[str, ...] = Field(default=DEFAULT_COMMAND, min_length=1)
    """Program and leading arguments, e.g. ``("claude",)`` or a wrapper script."""
    two_way: bool = False
    """Run with ``--input-format stream-json --permission-prompt-tool stdio``: permission
    prompts, questions and plan reviews are routed to the host."""
