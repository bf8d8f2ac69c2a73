"""Workspace leases and runtime services handed to a run.

Mirrors upstream ``runtime.go``. Core resolves the workspace and ensures the
runtime services; the driver only consumes the result and, if it says so in
its descriptor, reports what it observed.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import Field

from driver._base import SPIModel
from driver.mcp import MCPServerSpec

__all__ = [
    "EnvBinding",
    "RuntimePayload",
    "RuntimeServiceHealth",
    "RuntimeServiceLifecycle",
    "RuntimeServiceRef",
    "RuntimeServiceReport",
    "RuntimeServiceSpec",
    "RuntimeServiceStatus",
    "WorkspaceLease",
    "WorkspaceMode",
    "WorkspaceStrategyType",
]


class WorkspaceMode(StrEnum):
    """How a run's working directory relates to other runs."""

    SHARED = "shared_workspace"
    ISOLATED = "isolated_workspace"
    OPERATOR = "operator_branch"
    REUSE = "reuse_existing"
    AGENT_DEFAULT = "agent_default"


class WorkspaceStrategyType(StrEnum):
    """How a workspace is provisioned."""

    PROJECT_PRIMARY = "project_primary"
    GIT_WORKTREE = "git_worktree"
    DRIVER_MANAGED = "driver_managed"
    CLOUD_SANDBOX = "cloud_sandbox"


class RuntimeServiceLifecycle(StrEnum):
    """Whether a service outlives one run (shared) or belongs to it (ephemeral)."""

    SHARED = "shared"
    EPHEMERAL = "ephemeral"


class RuntimeServiceStatus(StrEnum):
    """Process state of a runtime service."""

    STARTING = "starting"
    RUNNING = "running"
    STOPPED = "stopped"
    FAILED = "failed"


class RuntimeServiceHealth(StrEnum):
    """Last known health of a runtime service."""

    UNKNOWN = "unknown"
    HEALTHY = "healthy"
    UNHEALTHY = "unhealthy"


class WorkspaceLease(SPIModel):
    """The working directory core leased for this run.

    The driver starts its process in ``cwd``; ``fingerprint`` is part of what
    makes a stored session safe to resume.
    """

    id: str = ""
    mode: WorkspaceMode | Literal[""] = ""
    strategy_type: WorkspaceStrategyType | Literal[""] = ""
    cwd: str = ""
    fingerprint: str = ""
    metadata: dict[str, str] = Field(default_factory=dict)
    instructions_id: str = ""


class EnvBinding(SPIModel):
    """One environment variable; kept in ordered lists so order and repeats survive."""

    name: str = ""
    value: str = ""


class RuntimeServiceSpec(SPIModel):
    """A service a run may need: a known URL, or a command and port to start."""

    id: str = ""
    name: str = ""
    url: str = ""
    description: str = ""
    lifecycle: RuntimeServiceLifecycle | Literal[""] = ""
    reuse_key: str = ""
    command: str = ""
    cwd: str = ""
    port: int = 0
    metadata: dict[str, str] = Field(default_factory=dict)


class RuntimeServiceRef(SPIModel):
    """A concrete service endpoint returned by the runtime manager.

    A typed ``mcp`` spec supersedes any legacy MCP metadata keys. ``secret_env``
    is meant only for the child process environment and never reaches reports.
    """

    id: str = ""
    name: str = ""
    url: str = ""
    status: RuntimeServiceStatus | Literal[""] = ""
    lifecycle: RuntimeServiceLifecycle | Literal[""] = ""
    reuse_key: str = ""
    command: str = ""
    cwd: str = ""
    port: int = 0
    owner_agent_id: str = ""
    health: RuntimeServiceHealth | Literal[""] = ""
    mcp: MCPServerSpec | None = None
    metadata: dict[str, str] = Field(default_factory=dict)
    secret_env: list[EnvBinding] = Field(default_factory=list)


class RuntimePayload(SPIModel):
    """The runtime services of one run: what was asked for and what was ensured."""

    requested: list[RuntimeServiceSpec] = Field(default_factory=list)
    ensured: list[RuntimeServiceRef] = Field(default_factory=list)
    secret_env: list[EnvBinding] = Field(default_factory=list)
    fingerprint: str = ""


class RuntimeServiceReport(SPIModel):
    """What a driver reports about one ensured service (a ref without MCP or secrets)."""

    id: str = ""
    name: str = ""
    url: str = ""
    status: RuntimeServiceStatus | Literal[""] = ""
    lifecycle: RuntimeServiceLifecycle | Literal[""] = ""
    reuse_key: str = ""
    command: str = ""
    cwd: str = ""
    port: int = 0
    owner_agent_id: str = ""
    health: RuntimeServiceHealth | Literal[""] = ""
    metadata: dict[str, str] = Field(default_factory=dict)
