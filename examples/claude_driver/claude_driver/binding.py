"""The Claude Code driver bound to the suite's model emulator (the scenario clauses).

``Options(model_binding=model_binding())`` lets the suite run its scenario battery
against the real CLI: for each scenario it hands :func:`driver_for` an endpoint (the
emulator's URL, a fresh home and workspace, the scenario's process marker, a dummy key,
the run deadline) and judges what the CLI did. Importing this module imports the suite's
options (``adaptertest``); the driver itself does not need it.
"""

from __future__ import annotations

from collections.abc import Sequence

from adaptertest.options import ModelBinding, ModelEndpoint
from adaptertest.realcli import endpoint_fields, pinned_command
from claude_driver._config import DEFAULT_COMMAND, ClaudeConfig
from claude_driver._driver import ClaudeDriver

__all__ = ["CANNOT", "MODEL", "RETRIES", "driver_for", "emulator_config", "model_binding"]

MODEL = "claude-sonnet-4-5"
"""A model Claude Code knows; the emulator answers for any."""

RETRIES = 2
"""``CLAUDE_CODE_MAX_RETRIES``: Claude Code retries a failed request (429, 5xx, 401, a
cut stream) up to 10 times with backoff from 500 ms. Two retries outlast the transient
faults of the battery (two 429s in a row) and keep a persistent fault to seconds."""

CANNOT: dict[str, str] = {}
"""Scenario clauses Claude Code cannot do, with the reason: none on the pinned release."""


def emulator_config(
    endpoint: ModelEndpoint, *, command: Sequence[str] | None = None, retries: int = RETRIES
) -> ClaudeConfig:
    """The config that points Claude Code at ``endpoint``.

    - ``ANTHROPIC_BASE_URL`` and ``ANTHROPIC_API_KEY``: the emulator and its dummy key;
    - ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1``: no telemetry host lookups, which
      would be network traffic beyond the endpoint;
    - ``CLAUDE_CODE_MAX_RETRIES``: :data:`RETRIES`;
    - ``--allowedTools Bash``: print mode refuses a tool that needs permission, and the
      shell is one; a host that lets the agent run commands allows it the same way.

    ``command`` defaults to the pinned release when installed, else ``claude`` on PATH.
    """
    env = {
        "ANTHROPIC_BASE_URL": endpoint.base_url,
        "ANTHROPIC_API_KEY": endpoint.api_key,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_MAX_RETRIES": str(retries),
    }
    return ClaudeConfig(
        command=tuple(command) if command else pinned_command("claude", DEFAULT_COMMAND),
        model=MODEL,
        extra_args=("--allowedTools", "Bash"),
        **endpoint_fields(endpoint, env),
    )


def driver_for(endpoint: ModelEndpoint) -> ClaudeDriver:
    """A driver running Claude Code against ``endpoint`` (see :func:`emulator_config`)."""
    return ClaudeDriver(emulator_config(endpoint))


def model_binding() -> ModelBinding:
    """The binding: Anthropic Messages, :data:`CANNOT`, and a ``ref`` to this function so
    the restarted-host resume (RES-02) rebuilds it in a new interpreter."""
    return ModelBinding(
        driver=driver_for,
        protocol="anthropic",
        cannot=CANNOT,
        ref=f"{__name__}:model_binding",
    )
