"""Agent profiles: which profile directory to use and what to put into it.

Mirrors upstream ``profile.go``. :class:`ProfilePayload` is the desired state
of every provider-visible profile resource for one invocation; the driver
reconciles the provider's profile with it.
"""

from __future__ import annotations

from datetime import timedelta
from enum import StrEnum
from typing import Any, Literal

from pydantic import Field

from driver._base import SPIModel
from driver.mcp import MCPPayload
from driver.skill import ResolvedSkills

__all__ = [
    "AgentPayload",
    "AgentSpec",
    "AgentToolPolicy",
    "CloneProfileAuthMode",
    "CloneProfileOptions",
    "HookEvent",
    "HookFailPolicy",
    "HookHandler",
    "HookHandlerType",
    "HookMatcher",
    "HookMatcherSubject",
    "HookMatcherSyntax",
    "HookPayload",
    "HookSpec",
    "InstructionMode",
    "InstructionScope",
    "InstructionsBundleRef",
    "NativeConfigPatch",
    "ProfileConfigFileKind",
    "ProfileConfigPatch",
    "ProfileConfigPayload",
    "ProfileMode",
    "ProfilePayload",
    "ProfileResourceDeclarations",
    "ProfileSelection",
]


class ProfileMode(StrEnum):
    """Which profile directory a run uses; unset leaves it to the driver."""

    UNSET = ""
    NATIVE = "native"
    DEDICATED = "dedicated"
    CLONE = "clone"


class CloneProfileAuthMode(StrEnum):
    """How credentials reach a cloned profile; none leaves them out."""

    NONE = ""
    COPY = "copy"
    LINK = "link"


class InstructionScope(StrEnum):
    """Where instruction material is installed; default lets the driver choose."""

    DEFAULT = ""
    USER = "user"
    PROJECT = "project"
    LOCAL = "local"
    RUN = "run"


class InstructionMode(StrEnum):
    """Whether instructions add to or replace the provider's native ones."""

    ADDITIVE = ""
    REPLACE = "replace"


class HookEvent(StrEnum):
    """Agent lifecycle points a hook can attach to."""

    SESSION_START = "session_start"
    SESSION_END = "session_end"
    PROMPT_SUBMIT = "prompt_submit"
    PROMPT_EXPAND = "prompt_expand"
    PRE_TOOL = "pre_tool"
    POST_TOOL = "post_tool"
    TOOL_FAILURE = "tool_failure"
    PERMISSION_REQUEST = "permission_request"
    PRE_SHELL = "pre_shell"
    POST_SHELL = "post_shell"
    PRE_MCP = "pre_mcp"
    POST_MCP = "post_mcp"
    PRE_FILE_READ = "pre_file_read"
    POST_FILE_EDIT = "post_file_edit"
    SUBAGENT_START = "subagent_start"
    SUBAGENT_STOP = "subagent_stop"
    PRE_COMPACT = "pre_compact"
    POST_COMPACT = "post_compact"
    STOP = "stop"
    STOP_FAILURE = "stop_failure"


class HookFailPolicy(StrEnum):
    """Whether a failing hook lets the action through (open) or blocks it (closed)."""

    PROVIDER_DEFAULT = ""
    OPEN = "open"
    CLOSED = "closed"


class HookHandlerType(StrEnum):
    """What a hook runs; only ``command`` is portable to every driver."""

    COMMAND = "command"
    PROMPT = "prompt"
    HTTP = "http"
    MCP_TOOL = "mcp_tool"
    AGENT = "agent"


class HookMatcherSubject(StrEnum):
    """What a hook matcher's pattern is compared with."""

    DEFAULT = ""
    TOOL = "tool"
    COMMAND = "command"
    MCP = "mcp"
    PATH = "path"
    PROMPT = "prompt"
    SUBAGENT = "subagent"
    SOURCE = "source"


class HookMatcherSyntax(StrEnum):
    """How a hook matcher's pattern is read; provider uses the native syntax."""

    PROVIDER = ""
    EXACT = "exact"
    REGEX = "regex"
    PREFIX = "prefix"
    CONTAINS = "contains"


class ProfileConfigFileKind(StrEnum):
    """Encoding of a native provider config file."""

    JSON = "json"
    TOML = "toml"


class CloneProfileOptions(SPIModel):
    """What to copy into a cloned profile.

    ``link`` auth fails rather than silently falling back to a copy.
    """

    include_settings: bool = False
    include_mcp: bool = False
    include_skills: bool = False
    auth_mode: CloneProfileAuthMode = CloneProfileAuthMode.NONE


class ProfileSelection(SPIModel):
    """The normalized profile request of an agent.

    ``dir`` is the dedicated or managed destination, ``from_dir`` the clone source.
    """

    mode: ProfileMode = ProfileMode.UNSET
    dir: str = ""
    from_dir: str = ""
    clone: CloneProfileOptions | None = None


class InstructionsBundleRef(SPIModel):
    """Host instruction material, given by path or inline, treated as desired state.

    The driver installs it natively or injects it into the prompt.
    """

    id: str = ""
    path: str = ""
    content: str = ""
    fingerprint: str = ""
    scope: InstructionScope = InstructionScope.DEFAULT
    mode: InstructionMode = InstructionMode.ADDITIVE
    native: dict[str, Any] = Field(default_factory=dict)


class AgentToolPolicy(SPIModel):
    """Provider-neutral allow and deny lists for a sub-agent's tools."""

    allow: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)


class HookMatcher(SPIModel):
    """Which events a hook fires for; drivers match natively or in the hook script."""

    subject: HookMatcherSubject = HookMatcherSubject.DEFAULT
    syntax: HookMatcherSyntax = HookMatcherSyntax.PROVIDER
    pattern: str = ""


class HookHandler(SPIModel):
    """What a hook does when it fires; which fields apply depends on ``type``."""

    type: HookHandlerType | Literal[""] = ""
    command: str = ""
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    prompt: str = ""
    url: str = ""
    server: str = ""
    tool: str = ""
    input: dict[str, Any] = Field(default_factory=dict)
    agent: str = ""


class HookSpec(SPIModel):
    """One hook the host wants installed in the provider profile."""

    key: str = ""
    event: HookEvent | Literal[""] = ""
    matcher_spec: HookMatcher = Field(default_factory=HookMatcher)
    handler: HookHandler = Field(default_factory=HookHandler)
    timeout: timedelta = timedelta(0)
    fail_policy: HookFailPolicy = HookFailPolicy.PROVIDER_DEFAULT
    status_message: str = ""
    disabled: bool = False
    native: dict[str, Any] = Field(default_factory=dict)
    metadata: dict[str, str] = Field(default_factory=dict)


class AgentSpec(SPIModel):
    """One sub-agent the host declares for the provider profile."""

    key: str = ""
    runtime_name: str = ""
    description: str = ""
    instructions: str = ""
    source_path: str = ""
    source_fingerprint: str = ""
    model: str = ""
    reasoning_effort: str = ""
    tool_policy: AgentToolPolicy | None = None
    permission_mode: str = ""
    sandbox_mode: str = ""
    mcp_servers: list[str] = Field(default_factory=list)
    skills: list[str] = Field(default_factory=list)
    hooks: list[HookSpec] = Field(default_factory=list)
    native: dict[str, Any] = Field(default_factory=dict)
    metadata: dict[str, str] = Field(default_factory=dict)


class AgentPayload(SPIModel):
    """The sub-agents of one invocation, fingerprinted by core."""

    agents: list[AgentSpec] = Field(default_factory=list)
    fingerprint: str = ""
    warnings: list[str] = Field(default_factory=list)


class HookPayload(SPIModel):
    """The hooks of one invocation, fingerprinted by core."""

    hooks: list[HookSpec] = Field(default_factory=list)
    fingerprint: str = ""
    warnings: list[str] = Field(default_factory=list)


class NativeConfigPatch(SPIModel):
    """A config update already in the provider's native file layout."""

    provider: str = ""
    file_kind: ProfileConfigFileKind | Literal[""] = ""
    path: str = ""
    section: str = ""
    values: dict[str, Any] = Field(default_factory=dict)


class ProfileConfigPatch(SPIModel):
    """A typed config update; the driver owns the native encoding."""

    key: str = ""
    capability: str = ""
    values: dict[str, Any] = Field(default_factory=dict)
    native: NativeConfigPatch | None = None


class ProfileConfigPayload(SPIModel):
    """The config patches of one invocation, fingerprinted by core."""

    patches: list[ProfileConfigPatch] = Field(default_factory=list)
    fingerprint: str = ""
    warnings: list[str] = Field(default_factory=list)


class ProfileResourceDeclarations(SPIModel):
    """Which optional resource kinds the host declared.

    A declared but empty kind clears the managed entries; an undeclared kind is
    left alone.
    """

    agents: bool = False
    hooks: bool = False
    instructions: bool = False
    config: bool = False


class ProfilePayload(SPIModel):
    """Desired state of every provider-visible profile resource for one invocation.

    ``fingerprint`` covers exactly these resources and drives materialization;
    ``session_compatibility_fingerprint`` is the separate resume guard.
    """

    skills: ResolvedSkills = Field(default_factory=ResolvedSkills)
    mcp: MCPPayload = Field(default_factory=MCPPayload)
    agents: AgentPayload = Field(default_factory=AgentPayload)
    hooks: HookPayload = Field(default_factory=HookPayload)
    instructions: InstructionsBundleRef | None = None
    config: ProfileConfigPayload = Field(default_factory=ProfileConfigPayload)
    declared: ProfileResourceDeclarations = Field(default_factory=ProfileResourceDeclarations)
    fingerprint: str = ""
    session_compatibility_fingerprint: str = ""
    warnings: list[str] = Field(default_factory=list)

    def session_fingerprint(self) -> str:
        """Return the fingerprint resume and persistent-process guards must use.

        It is ``session_compatibility_fingerprint`` when set, else
        ``fingerprint``, so hand-built requests stay correct.
        """
        return self.session_compatibility_fingerprint or self.fingerprint
