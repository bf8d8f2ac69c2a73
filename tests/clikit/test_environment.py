"""The CLI's own environment and home: validation, masking, the fingerprint, the process."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from adaptertest import RecordingSink
from driver import Request, TerminalPayload
from driver.clikit import REDACTED, CLIConfig, CLIDriver, JsonlParser, RunOutput, masked_env

SECRET = "sk-live-0123456789abcdef"


class EnvConfig(CLIConfig):
    command: tuple[str, ...] = (sys.executable,)


class EnvParser(JsonlParser):
    """One line ``{"env": {...}}``: what the process saw; it is the terminal line."""

    program = "env-cli"
    missing_terminal = "an env line"

    def __init__(self, out: RunOutput) -> None:
        super().__init__(out)
        self.seen: dict[str, str] = {}

    def on_object(self, line: dict[str, Any], text: str) -> None:
        self.seen = line["env"]
        self.terminal = TerminalPayload(event="env", raw_json=text)

    @property
    def succeeded(self) -> bool:
        return True

    @property
    def resume_id(self) -> str:
        return ""

    def output(self) -> str:
        return json.dumps(self.seen, sort_keys=True)

    def reported_failure(self, meta: dict[str, Any]) -> str:
        return ""


PRINT_ENV = (
    "import json, os\n"
    "names = ['HOME', 'PATH', 'CLI_MODE', 'OPENAI_API_KEY', 'TOY_CONFIG_DIR']\n"
    "print(json.dumps({'env': {n: os.environ[n] for n in names if n in os.environ}}))\n"
)


class EnvDriver(CLIDriver[EnvConfig]):
    driver_type = "env-toy"
    fingerprint_domain = "tests/env-toy/v1"
    install_hint = "nothing to install"

    def __init__(self, config: EnvConfig | None = None) -> None:
        super().__init__(EnvConfig, config)

    def command_line(
        self, config: EnvConfig, prompt: str, *, model: str, resume_id: str
    ) -> list[str]:
        return [*config.command, "-c", PRINT_ENV]

    def stream_parser(self, out: RunOutput, *, model: str) -> EnvParser:
        return EnvParser(out)


class ConfigDirDriver(EnvDriver):
    def home_env(self, home: Path) -> dict[str, str]:
        return {"TOY_CONFIG_DIR": str(home / ".toy")}


# -- validation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "home", "message"),
    [
        ({"": "x"}, "", "env: a variable name must not be empty"),
        ({"A=B": "x"}, "", "env: variable name 'A=B' must not contain '=' or NUL"),
        ({"A\0B": "x"}, "", "must not contain '=' or NUL"),
        ({"OPENAI_API_KEY": SECRET + "\0"}, "", "env['OPENAI_API_KEY']: the value must not"),
        ({}, "relative/home", "home: must be an absolute path"),
        ({}, "/abs\0olute", "home: must not contain NUL"),
    ],
)
def test_bad_environment_is_refused_naming_the_field(
    env: dict[str, str], home: str, message: str
) -> None:
    with pytest.raises(ValidationError) as caught:
        EnvConfig(env=env, home=home)
    assert message in str(caught.value)
    assert SECRET not in str(caught.value)


def test_a_wrongly_typed_secret_value_is_not_quoted() -> None:
    with pytest.raises(ValidationError) as caught:
        EnvConfig.model_validate({"env": {"OPENAI_API_KEY": [SECRET]}})
    assert "env.OPENAI_API_KEY" in str(caught.value)
    assert SECRET not in str(caught.value)
    assert SECRET not in repr(caught.value)


def test_secret_values_are_masked_in_repr_and_str_but_kept_for_the_process() -> None:
    config = EnvConfig(env={"OPENAI_API_KEY": SECRET, "CLI_MODE": "fast"})
    for shown in (repr(config), str(config), repr(EnvDriver(config).config)):
        assert SECRET not in shown
        assert REDACTED in shown
        assert "'CLI_MODE': 'fast'" in shown
    assert config.env["OPENAI_API_KEY"] == SECRET
    assert masked_env(config.env) == {"OPENAI_API_KEY": REDACTED, "CLI_MODE": "fast"}
    assert hash(config) == hash(EnvConfig(env={"CLI_MODE": "fast", "OPENAI_API_KEY": SECRET}))


# -- the fingerprint ----------------------------------------------------------------------


def fingerprint(**fields: Any) -> str:
    return EnvDriver(EnvConfig(**fields)).session_config_fingerprint()


def test_the_fingerprint_counts_names_and_plain_values_but_no_secret_value() -> None:
    base = fingerprint(env={"OPENAI_API_KEY": SECRET, "CLI_MODE": "fast"})
    assert fingerprint(env={"OPENAI_API_KEY": "rotated", "CLI_MODE": "fast"}) == base
    assert fingerprint(env={"CLI_MODE": "fast"}) != base  # the secret's name counts
    assert fingerprint(env={"OPENAI_API_KEY": SECRET, "CLI_MODE": "slow"}) != base
    assert fingerprint(env={"OPENAI_API_KEY": SECRET}, home="/srv/a") != fingerprint(
        env={"OPENAI_API_KEY": SECRET}, home="/srv/b"
    )
    assert fingerprint() == fingerprint(env={})


def test_a_secret_and_a_plain_variable_with_the_marker_value_do_not_collide() -> None:
    assert fingerprint(env={"OPENAI_API_KEY": SECRET}) != fingerprint(
        env={"OPENAI_API_KEYNAME": REDACTED}
    )


# -- the process environment --------------------------------------------------------------


def test_process_env_layers_inherited_then_home_then_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLI_MODE", "inherited")
    monkeypatch.setenv("HOME", "/inherited/home")
    plain = EnvDriver().process_env(EnvConfig())
    assert (plain["CLI_MODE"], plain["HOME"]) == ("inherited", "/inherited/home")
    homed = EnvDriver().process_env(EnvConfig(home="/srv/u1"))
    assert homed["HOME"] == "/srv/u1"
    over = EnvDriver().process_env(EnvConfig(home="/srv/u1", env={"HOME": "/x", "CLI_MODE": "c"}))
    assert (over["HOME"], over["CLI_MODE"]) == ("/x", "c")  # env wins over home
    own = ConfigDirDriver().process_env(EnvConfig(home="/srv/u1"))
    assert own["TOY_CONFIG_DIR"] == "/srv/u1/.toy"
    assert own["HOME"] == "/inherited/home"  # an override replaces the default mapping
    assert os.environ["HOME"] == "/inherited/home"  # nothing leaked into this process


@pytest.mark.anyio
async def test_the_run_starts_the_cli_with_the_process_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLI_MODE", "inherited")
    config = EnvConfig(home=str(tmp_path), env={"OPENAI_API_KEY": SECRET})
    response = await ConfigDirDriver(config).run(Request(prompt="hi"), RecordingSink())
    assert response.failure is None, response.failure
    seen = json.loads(response.output)
    assert seen["TOY_CONFIG_DIR"] == str(tmp_path / ".toy")
    assert seen["OPENAI_API_KEY"] == SECRET
    assert seen["CLI_MODE"] == "inherited"
    assert seen["PATH"] == os.environ["PATH"]


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    backend: str = request.param
    return backend


def test_the_environment_guide_snippets_run() -> None:
    guide = Path(__file__).resolve().parents[2] / "docs" / "cli-environment.md"
    snippets = re.findall(r"```python\n(.*?)```", guide.read_text(encoding="utf-8"), re.S)
    assert snippets
    for snippet in snippets:
        exec(compile(snippet, str(guide), "exec"), {"__name__": "cli_environment_guide"})


# -- the installed release against supported_cli_versions (CAP-03) ------------------------


class RangedDriver(EnvDriver):
    supported_cli_versions = ">=2.0,<3"


def npm_cli(root: Path, version: str) -> Path:
    """An npm-style install: the package's script, linked from ``node_modules/.bin``."""
    package = root / "node_modules" / "acme-cli"
    package.mkdir(parents=True)
    (package / "package.json").write_text(
        json.dumps({"name": "acme-cli", "version": version, "bin": {"acme": "bin/cli.js"}})
    )
    (package / "bin").mkdir()
    script = package / "bin" / "cli.js"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(0o755)
    link = root / "node_modules" / ".bin" / "acme"
    link.parent.mkdir()
    link.symlink_to(script)
    return link


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("version", "status", "level"),
    [("1.9.0", "warn", "warn"), ("2.4.1", "pass", "pass"), ("3.0.0", "warn", "warn")],
)
async def test_the_environment_report_compares_the_installed_release_with_the_range(
    tmp_path: Path, version: str, status: str, level: str
) -> None:
    binary = npm_cli(tmp_path, version)
    report = await RangedDriver().check_environment(EnvConfig(command=(str(binary),)))
    assert len(report.checks) == 2
    assert report.checks[0].code == "cli_found"
    release = report.checks[1]
    assert (str(report.status), release.level) == (status, level)
    assert version in release.message
    assert "'>=2.0,<3'" in release.message
    assert report.healthy is (status == "pass")
    if status == "warn":
        assert release.code == "cli_version_unsupported"
        assert report.summary == release.message


@pytest.mark.anyio
async def test_no_range_or_no_known_release_adds_no_version_check(tmp_path: Path) -> None:
    binary = npm_cli(tmp_path, "1.0.0")
    undeclared = await EnvDriver().check_environment(EnvConfig(command=(str(binary),)))
    assert [c.code for c in undeclared.checks] == ["cli_found"]
    not_npm = await RangedDriver().check_environment(EnvConfig(command=(sys.executable,)))
    assert [c.code for c in not_npm.checks] == ["cli_found"]
    assert str(not_npm.status) == "pass"


def test_the_suite_takes_a_version_warning_as_a_clean_report(tmp_path: Path) -> None:
    """CAP-03 allows warn: the driver says what it found, the clause still holds."""
    import adaptertest

    binary = npm_cli(tmp_path, "1.0.0")
    config = EnvConfig(command=(str(binary),))
    report = adaptertest.check_driver(
        lambda: RangedDriver(config), adaptertest.Options(config=config), only=["CAP-03"]
    )
    assert report.result("CAP-03").status is adaptertest.ClauseStatus.PASSED
