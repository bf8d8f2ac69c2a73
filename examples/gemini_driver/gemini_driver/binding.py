"""The Gemini CLI driver bound to the suite's model emulator (the scenario clauses).

``Options(model_binding=model_binding())`` lets the suite run its scenario battery
against the real CLI: for each scenario it hands :func:`driver_for` an endpoint (the
emulator's URL, a fresh home and workspace, the scenario's process marker, a dummy key,
the run deadline) and judges what the CLI did. Importing this module imports the suite's
options (``adaptertest``); the driver itself does not need it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from adaptertest.options import ModelBinding, ModelEndpoint
from adaptertest.realcli import endpoint_fields, pinned_command
from gemini_driver._config import DEFAULT_COMMAND, GeminiConfig
from gemini_driver._driver import GeminiDriver

__all__ = ["CANNOT", "MAX_ATTEMPTS", "MODEL", "driver_for", "emulator_config", "model_binding"]

MODEL = "gemini-2.5-flash"
"""Named explicitly: with ``auto`` the CLI first asks a lite model to route the prompt."""

MAX_ATTEMPTS = 3
"""The settings' ``general.maxAttempts`` (10 by default): three attempts outlast the
battery's transient faults (two 429s in a row) and keep a persistent fault short, since
the CLI's backoff starts at 5 s and cannot be shortened."""

CANNOT: dict[str, str] = {
    "TOL-02": (
        "Gemini CLI's stream-json reports a shell command that exits non-zero as a "
        "tool_result with status 'success' and only its output; the exit code goes to the "
        "model alone ('Exit Code: 1' in the function response; 0.61), so the driver "
        "cannot mark the result is_error"
    ),
}
"""Scenario clauses Gemini CLI cannot do, with the reason (skipped, never passed)."""


def emulator_config(
    endpoint: ModelEndpoint, *, command: Sequence[str] | None = None
) -> GeminiConfig:
    """The config that points Gemini CLI at ``endpoint``.

    - ``GEMINI_API_KEY`` and ``GOOGLE_GEMINI_BASE_URL``: the dummy key and the emulator;
      the home's settings select API-key auth (else exit 41) and cap the attempts at
      :data:`MAX_ATTEMPTS`;
    - ``GEMINI_CLI_TRUST_WORKSPACE=true``: a fresh workspace is not a trusted folder
      (else exit 55);
    - ``TMPDIR`` inside the home: the CLI writes an error report there for each failed
      API call, which must not outlive the scenario;
    - ``--approval-mode yolo``: headless mode offers no tool that needs approval, and
      the shell is one; a host that lets the agent run commands says so the same way.

    ``command`` defaults to the pinned release when installed, else ``gemini`` on PATH.
    """
    scratch = Path(endpoint.home) / "tmp"
    scratch.mkdir(parents=True, exist_ok=True)
    env = {
        "GEMINI_API_KEY": endpoint.api_key,
        "GOOGLE_GEMINI_BASE_URL": endpoint.base_url,
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
        "TMPDIR": str(scratch),
    }
    return GeminiConfig(
        command=tuple(command) if command else pinned_command("gemini", DEFAULT_COMMAND),
        model=MODEL,
        extra_args=("--approval-mode", "yolo"),
        settings={
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "general": {"maxAttempts": MAX_ATTEMPTS},
        },
        **endpoint_fields(endpoint, env),
    )


def driver_for(endpoint: ModelEndpoint) -> GeminiDriver:
    """A driver running Gemini CLI against ``endpoint`` (see :func:`emulator_config`)."""
    return GeminiDriver(emulator_config(endpoint))


def model_binding() -> ModelBinding:
    """The binding: Gemini ``generateContent``, :data:`CANNOT`, and a ``ref`` to this
    function so the restarted-host resume (RES-02) rebuilds it in a new interpreter."""
    return ModelBinding(
        driver=driver_for,
        protocol="gemini",
        cannot=CANNOT,
        ref=f"{__name__}:model_binding",
    )
