"""Construction config of the Gemini CLI example driver and the constants that name it."""

from __future__ import annotations

from typing import Self

from pydantic import Field, JsonValue, model_validator

from driver.clikit import DEFAULT_TIMEOUT, CLIConfig

__all__ = [
    "DEFAULT_COMMAND",
    "DEFAULT_TIMEOUT",
    "FINGERPRINT_DOMAIN",
    "GEMINI_DRIVER_TYPE",
    "GeminiConfig",
]

GEMINI_DRIVER_TYPE = "gemini-cli"
"""``Descriptor.type``, the codec name and the ``driver_type`` of every report."""

DEFAULT_COMMAND = ("gemini",)
"""The program (and leading arguments) run when the config names none."""

FINGERPRINT_DOMAIN = "examples/gemini-cli/v1;codec/gemini-cli/v1"
"""Names the config encoding and the codec contract; bump it when either changes meaning."""


class GeminiConfig(CLIConfig):
    """What the driver is built with; frozen so a running driver cannot see it change.

    ``command`` is the program plus any leading arguments; the driver appends
    ``--output-format stream-json``, the model, the resume id, ``extra_args``
    and the prompt. The session-config fingerprint covers every field.
    """

    # The fields are driver.clikit.CLIConfig's; only the default program is Gemini's.

    command: tuple[str, ...] = Field(default=DEFAULT_COMMAND, min_length=1)
    """Program and leading arguments, e.g. ``("gemini",)`` or a wrapper script."""
    settings: dict[str, JsonValue] = Field(default_factory=dict)
    """Gemini CLI settings merged into ``<home>/.gemini/settings.json`` before each run
    (objects key by key, other values replaced; the file's other keys kept), e.g.
    ``{"security": {"auth": {"selectedType": "gemini-api-key"}}}``, which an API key with
    ``GOOGLE_GEMINI_BASE_URL`` needs (else exit 41), or ``{"general": {"maxAttempts": 2}}``.
    Needs ``home``: the driver never writes to the user's own settings."""

    @model_validator(mode="after")
    def _settings_need_a_home(self) -> Self:
        if self.settings and not self.home:
            raise ValueError("settings: needs home (the driver writes only into its own home)")
        return self
