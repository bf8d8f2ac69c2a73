"""The Codex driver bound to the suite's model emulator (the scenario clauses).

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
from codex_driver._config import DEFAULT_COMMAND, CodexConfig
from codex_driver._driver import CodexDriver, provider_args

__all__ = [
    "CANNOT",
    "KEY_VARIABLE",
    "MODEL",
    "REQUEST_RETRIES",
    "STREAM_RETRIES",
    "driver_for",
    "emulator_config",
    "model_binding",
]

MODEL = "gpt-5.5"
"""A model slug codex knows: an unknown one adds a "Model metadata" warning item."""

KEY_VARIABLE = "EMULATOR_API_KEY"
"""The variable the emulator provider reads its key from (``env_key``)."""

REQUEST_RETRIES = 2
"""The provider's ``request_max_retries``: codex retries a failed request (429, 5xx)
with backoff; two retries outlast the battery's transient faults (two 429s in a row)."""

STREAM_RETRIES = 1
"""The provider's ``stream_max_retries``: one reconnect after a cut stream instead of
codex's five (about a second of backoff each), so a stream that is always cut fails
within seconds."""

CANNOT: dict[str, str] = {
    "INP-01": (
        "codex refuses a prompt longer than 1,048,576 characters before any model request "
        "(turn/start: input_too_large, max_chars 1048576; 0.169): a prompt of 1 MiB of "
        "ASCII text plus the clause's closing line is over it. A prompt of 1 MiB in bytes "
        "but fewer characters reaches the model whole (the tier checks one)"
    ),
}
"""Scenario clauses codex cannot do, with the reason (skipped, never passed)."""


def emulator_config(
    endpoint: ModelEndpoint, *, command: Sequence[str] | None = None
) -> CodexConfig:
    """The config that points codex at ``endpoint``.

    - a model provider named ``emulator`` at ``<base_url>/v1`` (Responses API) whose key
      is read from :data:`KEY_VARIABLE`, with :data:`REQUEST_RETRIES` and
      :data:`STREAM_RETRIES` (``-c`` overrides, see :func:`codex_driver.provider_args`);
    - ``--sandbox workspace-write``: the shell tool may write in the workspace, as a
      host that lets the agent work there allows it.

    ``command`` defaults to the pinned release when installed, else ``codex`` on PATH.
    """
    provider = provider_args(
        endpoint.base_url + "/v1",
        name="emulator",
        env_key=KEY_VARIABLE,
        request_max_retries=REQUEST_RETRIES,
        stream_max_retries=STREAM_RETRIES,
    )
    return CodexConfig(
        command=tuple(command) if command else pinned_command("codex", DEFAULT_COMMAND),
        model=MODEL,
        extra_args=(*provider, "--sandbox", "workspace-write"),
        **endpoint_fields(endpoint, {KEY_VARIABLE: endpoint.api_key}),
    )


def driver_for(endpoint: ModelEndpoint) -> CodexDriver:
    """A driver running codex against ``endpoint`` (see :func:`emulator_config`)."""
    return CodexDriver(emulator_config(endpoint))


def model_binding() -> ModelBinding:
    """The binding: OpenAI Responses, :data:`CANNOT`, and a ``ref`` to this function so
    the restarted-host resume (RES-02) rebuilds it in a new interpreter."""
    return ModelBinding(
        driver=driver_for,
        protocol="openai-responses",
        cannot=CANNOT,
        ref=f"{__name__}:model_binding",
    )
