"""Declarations and probe answers that every CLI driver words the same way."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

from driver import ConfigField, ConfigSchema, EnvironmentCheck, EnvironmentReport, EnvironmentStatus
from driver.clikit._versions import RangeError, in_range

__all__ = ["cli_config_schema", "npm_package_version", "program_report", "version_check"]


def npm_package_version(binary: str) -> str | None:
    """The version of the npm package whose ``bin`` entry ``binary`` is (links followed):
    the ``package.json`` nearest above the file it resolves to, when that package names
    the file as a binary; None otherwise (not an npm CLI, or unreadable). Nothing runs."""
    real = Path(binary).resolve()
    for folder in real.parents:
        manifest = folder / "package.json"
        if not manifest.is_file():
            continue
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict):
            return None
        bins = data.get("bin")
        listed = (
            [bins]
            if isinstance(bins, str)
            else list(bins.values())
            if isinstance(bins, dict)
            else []
        )
        version = data.get("version")
        owns = any(isinstance(b, str) and (folder / b).resolve() == real for b in listed)
        return version if owns and isinstance(version, str) else None
    return None


def version_check(program: str, version: str | None, supported: str) -> EnvironmentCheck | None:
    """How the installed release of ``program`` compares with the driver's declared
    ``supported_cli_versions``: ``warn`` outside it, naming both; None when nothing is
    declared or the version is unknown."""
    if not supported.strip() or version is None:
        return None
    try:
        inside = in_range(version, supported)
    except RangeError as exc:
        return EnvironmentCheck(
            code="cli_version_range_invalid",
            level="warn",
            message=f"supported_cli_versions cannot be read: {exc}",
            hint="declare a range such as '>=2.1.323,<2.2'",
        )
    if inside:
        return EnvironmentCheck(
            code="cli_version_supported",
            level="pass",
            message=f"{program} {version} is within the supported range {supported!r}",
        )
    return EnvironmentCheck(
        code="cli_version_unsupported",
        level="warn",
        message=f"{program} {version} is outside the supported range {supported!r}",
        detail=f"installed: {version}; supported_cli_versions: {supported}",
        hint=f"install a release in {supported!r}, or widen supported_cli_versions once "
        "the driver is tested against this one",
    )


def program_report(
    driver_type: str,
    program: str,
    install_hint: str,
    *,
    supported: str = "",
    version_of: Callable[[str], str | None] = npm_package_version,
) -> EnvironmentReport:
    """Whether ``program`` resolves on PATH (or as a path), and, when the driver declares
    ``supported``, whether its release (``version_of`` the resolved file) is in that
    range; nothing is executed."""
    found = shutil.which(program)
    check = EnvironmentCheck(
        code="cli_found" if found else "cli_missing",
        level="pass" if found else "fail",
        message=f"{program} resolves to {found}" if found else f"{program} is not on PATH",
        hint="" if found else install_hint,
    )
    checks = [check]
    release = None if found is None else version_check(program, version_of(found), supported)
    if release is not None:
        checks.append(release)
    status = (
        EnvironmentStatus.FAIL
        if found is None
        else EnvironmentStatus.WARN
        if any(c.level == "warn" for c in checks)
        else EnvironmentStatus.PASS
    )
    warned = [c.message for c in checks if c.level == "warn"]
    return EnvironmentReport(
        driver_type=driver_type,
        status=status,
        healthy=status is EnvironmentStatus.PASS,
        summary="; ".join(warned) if warned else check.message,
        checks=checks,
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
