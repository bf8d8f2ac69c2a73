"""Static declarations of a driver: the descriptor and its capability structs.

Mirrors the data part of upstream ``driver.go``. Every model here is frozen
and uses tuples for sequences, so a descriptor snapshot cannot be changed by
whoever holds it.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import Field

from driver._base import FrozenSPIModel
from driver.environment import ModelInfo
from driver.mcp import MCPCapability
from driver.policy import RunPolicyCapabilities
from driver.skill import SkillSyncMode

__all__ = [
    "ConfigField",
    "ConfigFieldGroup",
    "ConfigFieldType",
    "ConfigOption",
    "ConfigSchema",
    "Descriptor",
    "InstructionsCapability",
    "ObservationCapability",
    "ObservationSupport",
    "ProcessCapability",
    "RuntimeCapability",
    "SessionCapability",
    "SkillCapability",
    "StreamCapability",
    "StructuredOutputCapability",
    "StructuredOutputHITLCapability",
    "SystemPromptCapability",
    "WorkspaceCapability",
]


class SessionCapability(FrozenSPIModel):
    """Whether provider sessions can be resumed (requires a codec and a config fingerprinter)."""

    supports_resume: bool = False


class SkillCapability(FrozenSPIModel):
    """Whether resolved skills are consumed, and whether their state is per run or persistent."""

    supported: bool = False
    mode: SkillSyncMode | Literal[""] = ""


class InstructionsCapability(FrozenSPIModel):
    """Whether explicit instruction bundles are accepted besides the prompt."""

    supported: bool = False


class SystemPromptCapability(FrozenSPIModel):
    """Whether the driver can append host text to the agent's own system prompt.

    The zero value means unsupported: a request whose ``append_system_prompt`` is
    non-empty must then be refused with ``SystemPromptUnsupportedError`` before any
    provider process starts. A driver that declares ``append`` hands the text, byte
    for byte, to the CLI's own append mechanism and never folds it into the prompt.
    """

    append: bool = False


class WorkspaceCapability(FrozenSPIModel):
    """Whether SDK-resolved workspace leases are honoured."""

    supported: bool = False


class ProcessCapability(FrozenSPIModel):
    """Whether one provider process can serve several turns of a thread."""

    persistent: bool = False


class RuntimeCapability(FrozenSPIModel):
    """Whether the driver reports runtime-service state in its response."""

    reports_services: bool = False


class StructuredOutputHITLCapability(FrozenSPIModel):
    """Which decision kinds may be asked while one structured-output mechanism runs."""

    permission: bool = False
    plan_review: bool = False
    question: bool = False


class StructuredOutputCapability(FrozenSPIModel):
    """An honest matrix of structured-output mechanisms and the transports they work with.

    A ``works_with_*`` flag needs a mechanism, and a mechanism needs
    ``works_with_run``. A non-None per-mechanism HITL matrix replaces the coarse
    ``works_with_hitl`` flag for that mechanism.
    """

    json_schema_native: bool = False
    json_schema_prompt_validate: bool = False
    works_with_run: bool = False
    works_with_streaming: bool = False
    works_with_hitl: bool = False
    native_hitl: StructuredOutputHITLCapability | None = None
    prompt_validate_hitl: StructuredOutputHITLCapability | None = None
    notes: str = ""


class ObservationSupport(FrozenSPIModel):
    """Which observation facts one transport can report."""

    skills: bool = False
    mcp: bool = False
    subagents: bool = False
    todos: bool = False


class ObservationCapability(FrozenSPIModel):
    """Observation support per transport (provider streaming and batch)."""

    streaming: ObservationSupport = Field(default_factory=ObservationSupport)
    batch: ObservationSupport = Field(default_factory=ObservationSupport)


class StreamCapability(FrozenSPIModel):
    """How faithful the driver's stream payloads are; not part of the descriptor.

    Flags only add detail: a false flag means the matching kinds never appear.
    """

    native: bool = False
    token_level: bool = False
    reasoning: bool = False
    tool_call_args: bool = False
    hitl: bool = False


class ConfigFieldType(StrEnum):
    """Usual values of ``ConfigField.type`` (an open set; others are allowed)."""

    TEXT = "text"
    TEXTAREA = "textarea"
    NUMBER = "number"
    TOGGLE = "toggle"
    SELECT = "select"


class ConfigFieldGroup(StrEnum):
    """Usual values of ``ConfigField.group`` (free text; others are allowed)."""

    COMMAND = "command"
    MODEL = "model"
    PERMISSIONS = "permissions"
    EXECUTION = "execution"


class ConfigOption(FrozenSPIModel):
    """One choice of a ``select`` field; ``value`` is the serialized config value."""

    value: str = ""
    label: str = ""
    description: str = ""


class ConfigField(FrozenSPIModel):
    """One configurable property as a host form should show it.

    ``meta`` carries UI hints only and never changes how the driver runs.
    """

    name: str = ""
    label: str = ""
    type: str = ""
    required: bool = False
    description: str = ""
    hint: str = ""
    default: Any = None
    options: tuple[ConfigOption, ...] = ()
    group: str = ""
    meta: dict[str, str] = Field(default_factory=dict)


class ConfigSchema(FrozenSPIModel):
    """The host-facing config contract of one bound driver."""

    fields: tuple[ConfigField, ...] = ()


class Descriptor(FrozenSPIModel):
    """A driver's static declaration of what it is and what it can do.

    Core checks requests against it before launch and hosts use it to grey
    out options. Two calls must return equal, independent values.
    """

    type: str = ""
    display_name: str = ""
    models: tuple[ModelInfo, ...] = ()
    config_schema: ConfigSchema | None = None
    sessions: SessionCapability = Field(default_factory=SessionCapability)
    skills: SkillCapability = Field(default_factory=SkillCapability)
    mcp: MCPCapability = Field(default_factory=MCPCapability)
    instructions: InstructionsCapability = Field(default_factory=InstructionsCapability)
    workspace: WorkspaceCapability = Field(default_factory=WorkspaceCapability)
    process: ProcessCapability = Field(default_factory=ProcessCapability)
    run_policy_caps: RunPolicyCapabilities = Field(default_factory=RunPolicyCapabilities)
    runtime: RuntimeCapability = Field(default_factory=RuntimeCapability)
    structured_output: StructuredOutputCapability = Field(
        default_factory=StructuredOutputCapability
    )
    observation: ObservationCapability = Field(default_factory=ObservationCapability)
    system_prompt: SystemPromptCapability = Field(default_factory=SystemPromptCapability)
