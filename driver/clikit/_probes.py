"""Declarations and probe answers that every CLI driver words the same way."""

from __future__ import annotations

import shutil

from driver import ConfigField, ConfigSchema, EnvironmentCheck, EnvironmentReport, EnvironmentStatus

__all__ = ["cli_config_schema", "program_report"]


def program_report(driver_type: str, program: str, install_hint: str) -> EnvironmentReport:
    """Whether ``program`` resolves on PATH (or as a path); nothing is executed."""
    found = shutil.which(program)
    check = EnvironmentCheck(
        code="cli_found" if found else "cli_missing",
        level="pass" if found else "fail",
        message=f"{program} resolves to {found}" if found else f"{program} is not on PATH",
        hint="" if found else install_hint,
    )
    return EnvironmentReport(
        driver_type=driver_type,
        status=EnvironmentStatus.PASS if found else EnvironmentStatus.FAIL,
        healthy=found is not None,
        summary=check.message,
        checks=[check],
    )


def cli_config_schema(*, program: str, extra_args_hint: str, timeout: float) -> ConfigSchema:
    """The host-facing form of a CLI driver config (command, model, cwd, flags, timeout,
    environment, home)."""
    return ConfigSchema(
        fields=(
            ConfigField(
                name="command",
                label="Command",
                type="text",
                group="command",
                default=program,
                description="Program and leading arguments (a list in the config).",
            ),
            ConfigField(name="model", label="Model", type="text", group="model"),
            ConfigField(name="cwd", label="Working directory", type="text", group="command"),
            ConfigField(
                name="extra_args",
                label="Extra arguments",
                type="textarea",
                group="command",
                hint="one argument per line"
                + (f", e.g. {extra_args_hint}" if extra_args_hint else ""),
            ),
            ConfigField(
                name="timeout",
                label="Timeout (seconds)",
                type="number",
                group="execution",
                default=timeout,
            ),
            ConfigField(
                name="env",
                label="Environment",
                type="textarea",
                group="execution",
                description="Variables set for the CLI over the inherited environment "
                "(a mapping in the config). Values of secret-named variables are never shown.",
                hint="one NAME=VALUE per line",
            ),
            ConfigField(
                name="home",
                label="Home directory",
                type="text",
                group="execution",
                description="An absolute directory the CLI keeps its config and sessions "
                "under; empty uses the inherited home.",
            ),
        )
    )
