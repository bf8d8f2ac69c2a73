"""The construction config of an ACP driver: the agent's command line, its environment
and home, and whether one agent process serves many runs."""

from __future__ import annotations

from pydantic import Field

from driver.clikit import CLIConfig

__all__ = ["DEFAULT_CLOSE_GRACE", "ACPConfig"]

DEFAULT_CLOSE_GRACE = 3.0
"""Seconds an agent process may take to exit once its stdin is closed, before it (and
everything it started) is sent SIGTERM, then SIGKILL."""


class ACPConfig(CLIConfig):
    """:class:`~driver.clikit.CLIConfig` (command, cwd, model, extra args, deadline, env,
    home) plus the process mode.

    ``command`` starts the agent in ACP mode (``gemini --acp``, ``claude-agent-acp``);
    ``extra_args`` go after it. ``model`` is reported, not passed: an ACP agent takes
    its model from its own flags, environment or configuration, which the driver's
    ``command``/``env`` carry.
    """

    persistent: bool = False
    """One agent process serves every run and session of the driver until
    ``close_processes`` (a new one replaces a process that died); False starts a
    process per run and ends it with the run."""
    close_grace: float = Field(default=DEFAULT_CLOSE_GRACE, gt=0)
    """Seconds an agent gets to exit on its own when it is closed."""
