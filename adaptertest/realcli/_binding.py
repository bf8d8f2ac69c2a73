"""What every real-CLI binding does the same way: the config fields that point a CLI
driver at a scenario's endpoint, and the program it runs.

Each example driver's ``binding`` module adds its CLI's own variables and flags (see
``docs/scenarios.md``); the suite calls the binding once per scenario.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from adaptertest.options import DEFAULT_SCENARIO_DEADLINE, ModelEndpoint
from adaptertest.realcli._install import locate

__all__ = ["TIER_API_KEY", "endpoint_fields", "pinned_command", "tier_endpoint"]

TIER_API_KEY = "sk-emulator-not-a-real-key"
"""The dummy key a tier's own endpoints hand out; the emulator takes any key."""


def endpoint_fields(endpoint: ModelEndpoint, env: Mapping[str, str]) -> dict[str, Any]:
    """``CLIConfig`` fields for ``endpoint``: its home, its workspace as the working
    directory, its deadline as the run's timeout, and ``env`` (the CLI's own variables)
    followed by the endpoint's (the scenario's process marker: last, so nothing hides it)."""
    return {
        "home": str(endpoint.home),
        "cwd": str(endpoint.workspace),
        "timeout": endpoint.deadline,
        "env": {**env, **endpoint.env},
    }


def pinned_command(name: str, default: Sequence[str]) -> tuple[str, ...]:
    """The pinned release of CLI ``name`` when it is installed (or the one
    ``ADAPTERTEST_CLI_VERSION_<NAME>`` / ``ADAPTERTEST_CLI_BIN_<NAME>`` names, as a sweep
    sets them), else ``default``: the program found on PATH."""
    found = locate(name)
    return (str(found),) if found is not None else tuple(default)


def tier_endpoint(
    base_url: str, root: Path, *, protocol: str, deadline: float = DEFAULT_SCENARIO_DEADLINE
) -> ModelEndpoint:
    """An endpoint like the suite's, for a tier's own test of one CLI: ``base_url`` (an
    emulator the test started), a home and a workspace created under ``root``, no marker.
    A tier builds its driver from it with the same binding the suite uses."""
    home, workspace = root / "home", root / "workspace"
    home.mkdir(parents=True, exist_ok=True)
    workspace.mkdir(parents=True, exist_ok=True)
    return ModelEndpoint(
        base_url=base_url,
        protocol=protocol,
        home=home,
        workspace=workspace,
        env={},
        api_key=TIER_API_KEY,
        deadline=deadline,
    )
