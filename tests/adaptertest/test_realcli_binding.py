"""The example drivers' bindings and what they share (``adaptertest.realcli``), without
a CLI: each builds a driver whose config points at the endpoint it is handed, and
declares what its CLI cannot do with a reason."""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path
from types import ModuleType

import pytest

from adaptertest import realcli
from adaptertest._scenarios import binding_from_ref
from adaptertest.clauses import CLAUSE_BY_ID, Mode
from adaptertest.options import ModelBinding, ModelEndpoint
from driver.clikit import CLIConfig, CLIDriver

BINDINGS = {
    "claude": ("claude_driver.binding", "anthropic"),
    "codex": ("codex_driver.binding", "openai-responses"),
    "gemini": ("gemini_driver.binding", "gemini"),
}


def endpoint(tmp_path: Path) -> ModelEndpoint:
    return ModelEndpoint(
        base_url="http://127.0.0.1:9",
        protocol="anthropic",
        home=tmp_path / "home",
        workspace=tmp_path / "workspace",
        env={"ADAPTERTEST_SCENARIO_MARKER": "m-1"},
        api_key="k-1",
        deadline=12.5,
    )


def test_endpoint_fields_put_the_endpoints_environment_last(tmp_path: Path) -> None:
    marked = dict(endpoint(tmp_path).env, ANTHROPIC_API_KEY="from-the-endpoint")
    fields = realcli.endpoint_fields(
        dataclasses.replace(endpoint(tmp_path), env=marked),
        {"ANTHROPIC_API_KEY": "the-clis", "X": "1"},
    )
    assert fields == {
        "home": str(tmp_path / "home"),
        "cwd": str(tmp_path / "workspace"),
        "timeout": 12.5,
        "env": {
            "ANTHROPIC_API_KEY": "from-the-endpoint",
            "X": "1",
            "ADAPTERTEST_SCENARIO_MARKER": "m-1",
        },
    }


def test_a_tier_endpoint_makes_its_folders(tmp_path: Path) -> None:
    made = realcli.tier_endpoint("http://127.0.0.1:9", tmp_path, protocol="gemini", deadline=3)
    assert (made.home, made.workspace) == (tmp_path / "home", tmp_path / "workspace")
    assert made.home.is_dir()
    assert made.workspace.is_dir()
    assert (made.protocol, made.deadline, made.api_key, dict(made.env)) == (
        "gemini",
        3,
        realcli.TIER_API_KEY,
        {},
    )


def test_pinned_command_falls_back_to_the_program_on_path(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ADAPTERTEST_CLI_BIN_CLAUDE", str(tmp_path / "missing"))
    assert realcli.pinned_command("claude", ("claude",)) == ("claude",)
    binary = tmp_path / "claude"
    binary.write_text("#!/bin/sh\n", encoding="utf-8")
    monkeypatch.setenv("ADAPTERTEST_CLI_BIN_CLAUDE", str(binary))
    assert realcli.pinned_command("claude", ("claude",)) == (str(binary),)


def module(name: str) -> ModuleType:
    return importlib.import_module(BINDINGS[name][0])


@pytest.mark.parametrize("name", BINDINGS)
def test_a_binding_points_its_driver_at_the_endpoint(name: str, tmp_path: Path) -> None:
    given = endpoint(tmp_path)
    given.home.mkdir()
    binding = module(name).model_binding()
    assert isinstance(binding, ModelBinding)
    assert binding.protocol == BINDINGS[name][1]
    driver = binding.driver(given)
    assert isinstance(driver, CLIDriver)
    assert driver.prompt_on_stdin  # a prompt of any size, out of the process table
    config = driver.config
    assert isinstance(config, CLIConfig)
    assert (config.home, config.cwd, config.timeout) == (
        str(given.home),
        str(given.workspace),
        given.deadline,
    )
    assert config.env["ADAPTERTEST_SCENARIO_MARKER"] == "m-1"
    assert "http://127.0.0.1:9" in " ".join([*config.env.values(), *config.extra_args])
    assert given.api_key in config.env.values()


@pytest.mark.parametrize("name", BINDINGS)
def test_a_binding_can_be_rebuilt_by_its_ref_and_declares_only_scenario_clauses(
    name: str,
) -> None:
    binding = module(name).model_binding()
    assert binding.ref is not None
    rebuilt = binding_from_ref(binding.ref)
    assert (rebuilt.protocol, dict(rebuilt.cannot)) == (binding.protocol, dict(binding.cannot))
    for clause, reason in binding.cannot.items():
        assert CLAUSE_BY_ID[clause].mode is Mode.SCENARIO, clause
        assert len(reason) > 40, (clause, reason)  # a reason a reader can act on
