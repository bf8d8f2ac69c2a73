"""How each agent CLI is pointed at an emulator: its environment, its flags, its files.

The values carry no secret: the emulator takes any key, and ``EMULATOR_KEY`` is a dummy.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Literal

__all__ = ["CLI_NAMES", "CLIName", "CLISetup", "cli_setup"]

CLIName = Literal["claude", "codex", "gemini"]
CLI_NAMES: tuple[CLIName, ...] = ("claude", "codex", "gemini")

DUMMY_KEY = "emulator"
CODEX_PROVIDER = "emulator"
CODEX_KEY_VARIABLE = "EMULATOR_KEY"


@dataclasses.dataclass(frozen=True)
class CLISetup:
    """What one CLI needs to talk to the emulator."""

    env: dict[str, str]
    """Variables to set (the CLI's home variable aside: give each run its own home)."""
    home_variable: str
    """The variable naming the CLI's home (config, sessions): a fresh folder per run."""
    args: list[str]
    """Flags to add to the command line."""
    home_files: dict[str, str]
    """Files to write under the home before the run: relative path -> content."""


def cli_setup(name: CLIName, base_url: str) -> CLISetup:
    """The setup that points CLI ``name`` at the emulator at ``base_url``."""
    if name == "claude":
        return CLISetup(
            env={"ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": DUMMY_KEY},
            home_variable="CLAUDE_CONFIG_DIR",
            args=[],
            home_files={},
        )
    if name == "codex":
        provider = (
            f'{{name="{CODEX_PROVIDER}",base_url="{base_url}/v1",wire_api="responses",'
            f'env_key="{CODEX_KEY_VARIABLE}"}}'
        )
        return CLISetup(
            env={CODEX_KEY_VARIABLE: DUMMY_KEY},
            home_variable="CODEX_HOME",
            args=[
                "-c",
                f"model_provider={CODEX_PROVIDER}",
                "-c",
                f"model_providers.{CODEX_PROVIDER}={provider}",
                "-c",
                "analytics.enabled=false",
            ],
            home_files={},
        )
    if name == "gemini":
        settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
        return CLISetup(
            env={
                "GEMINI_API_KEY": DUMMY_KEY,
                "GOOGLE_GEMINI_BASE_URL": base_url,
                "GEMINI_CLI_TRUST_WORKSPACE": "true",
            },
            home_variable="GEMINI_CLI_HOME",
            args=[],
            home_files={".gemini/settings.json": json.dumps(settings)},
        )
    raise ValueError(f"name must be one of {', '.join(CLI_NAMES)}, got {name!r}")
