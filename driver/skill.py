"""Skills: host declarations, the resolved set handed to a run, and inspection reports.

Mirrors upstream ``skill.go``. Core resolves and materializes skills before
the driver runs; the driver consumes :class:`ResolvedSkills` and reports
provider state through :class:`SkillSnapshot`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal, NewType, TypeAlias

from pydantic import Field, SerializeAsAny

from driver._base import SPIModel

__all__ = [
    "SKILL_METADATA_DISPLAY_NAME",
    "SKILL_METADATA_RUNTIME_NAME",
    "ResolvedSkill",
    "ResolvedSkills",
    "Skill",
    "SkillKey",
    "SkillOrigin",
    "SkillRef",
    "SkillSnapshot",
    "SkillSource",
    "SkillState",
    "SkillSyncMode",
    "SnapshotEntry",
]

SKILL_METADATA_RUNTIME_NAME = "_runtime_name"
"""Skill metadata key overriding the on-disk directory name (default: a slug of the key)."""

SKILL_METADATA_DISPLAY_NAME = "_display_name"
"""Skill metadata key holding the label a host UI shows."""


class SkillSyncMode(StrEnum):
    """Whether skill state lives only for a run or persists in the provider profile."""

    UNSUPPORTED = "unsupported"
    EPHEMERAL = "ephemeral"
    PERSISTENT = "persistent"


class SkillState(StrEnum):
    """Observed or desired state of one skill in the provider layout."""

    AVAILABLE = "available"
    CONFIGURED = "configured"
    INSTALLED = "installed"
    MISSING = "missing"
    STALE = "stale"
    EXTERNAL = "external"


class SkillOrigin(StrEnum):
    """Who put a skill there (the strings are upstream's, not the member names)."""

    MANAGED = "company_managed"
    REQUIRED = "paperclip_required"
    USER = "user_installed"
    UNKNOWN = "external_unknown"


class SkillSource(SPIModel):
    """Marker base for where a skill's material comes from.

    The set is open: hosts subclass it and install a matching materializer;
    the SDK never looks inside. A subclass serializes its own fields, but
    reading that JSON back needs the host's subclass, not this base.
    """

    def skill_source(self) -> None:
        """Mark the class as a skill source; does nothing by contract."""


class Skill(SPIModel):
    """Canonical description of one skill, identified by its case-sensitive key.

    A missing ``source`` is invalid; metadata keys starting with ``_`` are
    reserved for the SDK.
    """

    key: str = ""
    source: SerializeAsAny[SkillSource] | None = None
    required: bool = False
    reason: str = ""
    metadata: dict[str, str] = Field(default_factory=dict)


SkillKey = NewType("SkillKey", str)
"""A skill named by key alone."""

SkillRef: TypeAlias = SkillKey | Skill
"""A skill given either by key or in full."""


class ResolvedSkill(SPIModel):
    """One selected skill after core materialized it."""

    key: str = ""
    runtime_name: str = ""
    source_path: str = ""
    required: bool = False
    reason: str = ""
    metadata: dict[str, str] = Field(default_factory=dict)


class ResolvedSkills(SPIModel):
    """The skills selected for a run, built by the SDK only.

    ``entries`` holds every selected skill, successfully materialized;
    ``fingerprint`` changes whenever the entries or warnings do.
    """

    mode: SkillSyncMode | Literal[""] = ""
    entries: list[ResolvedSkill] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    fingerprint: str = ""

    def keys(self) -> list[str]:
        """Return the entry keys in order (a new list, possibly empty)."""
        return [entry.key for entry in self.entries]


class SnapshotEntry(SPIModel):
    """Status of one skill as observed in, or desired for, the provider layout."""

    key: str = ""
    runtime_name: str = ""
    selected: bool = False
    managed: bool = False
    required: bool = False
    required_reason: str = ""
    state: SkillState | Literal[""] = ""
    origin: SkillOrigin | Literal[""] = ""
    origin_label: str = ""
    location_label: str = ""
    read_only: bool = False
    source_path: str = ""
    target_path: str = ""
    detail: str = ""


class SkillSnapshot(SPIModel):
    """Report of a skill listing or sync.

    ``resolved`` describes the whole catalogue passed in and is never pruned.
    """

    driver_type: str = ""
    supported: bool = False
    mode: SkillSyncMode | Literal[""] = ""
    selected: list[str] = Field(default_factory=list)
    resolved: list[Skill] = Field(default_factory=list)
    entries: list[SnapshotEntry] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)
    fingerprint: str = ""
