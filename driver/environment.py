"""Inspection reports: environment health, models, the agent profile and quota.

Mirrors upstream ``environment.go``. The optional probes return these; they
put problems into the report instead of raising.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import Field

from driver._base import FrozenSPIModel, SPIModel

__all__ = [
    "AgentProfile",
    "AgentProfileSource",
    "DetectedModel",
    "EnvironmentCheck",
    "EnvironmentCheckLevel",
    "EnvironmentReport",
    "EnvironmentStatus",
    "ModelInfo",
    "QuotaReport",
    "QuotaWindow",
]


class AgentProfileSource(StrEnum):
    """Where the effective agent profile directory was decided."""

    BINDING_ENV = "binding_env"
    PROFILE_OPTION = "profile_option"
    PROCESS_ENV = "process_env"
    DEFAULT = "default"
    MANAGED = "managed"
    UNSUPPORTED = "unsupported"


class EnvironmentStatus(StrEnum):
    """Overall verdict of an environment check."""

    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"


class EnvironmentCheckLevel(StrEnum):
    """Usual values of ``EnvironmentCheck.level`` (an open set; others are allowed)."""

    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"


class ModelInfo(FrozenSPIModel):
    """One model a user can pick; ``id`` is the value the config accepts."""

    id: str = ""
    label: str = ""


class DetectedModel(SPIModel):
    """The model a configured driver will actually use, and where that came from."""

    model: str = ""
    provider: str = ""
    source: str = ""
    candidates: list[str] = Field(default_factory=list)


class AgentProfile(SPIModel):
    """The effective local profile directory of a configured driver.

    ``managed`` is true only when the driver itself made an isolated directory.
    """

    driver_type: str = ""
    supported: bool = False
    dir: str = ""
    env_var: str = ""
    source: AgentProfileSource | Literal[""] = ""
    managed: bool = False
    error: str = ""


class EnvironmentCheck(SPIModel):
    """One probe result; ``code`` is a stable machine id, the rest is display text."""

    code: str = ""
    level: str = ""
    message: str = ""
    detail: str = ""
    hint: str = ""


class EnvironmentReport(SPIModel):
    """Whether the driver's CLI and environment look usable.

    ``status`` is authoritative; ``healthy`` mirrors ``status == "pass"``.
    """

    driver_type: str = ""
    status: EnvironmentStatus | Literal[""] = ""
    healthy: bool = False
    summary: str = ""
    checks: list[EnvironmentCheck] = Field(default_factory=list)


class QuotaWindow(SPIModel):
    """One quota or credit window.

    ``used_percent`` None means unknown, unlike 0; ``resets_at`` is free text.
    """

    label: str = ""
    used_percent: int | None = None
    resets_at: str = ""
    value_label: str = ""
    detail: str = ""


class QuotaReport(SPIModel):
    """Quota and credit state of the configured account; unavailability is data."""

    driver_type: str = ""
    provider: str = ""
    source: str = ""
    available: bool = False
    error: str = ""
    windows: list[QuotaWindow] = Field(default_factory=list)
