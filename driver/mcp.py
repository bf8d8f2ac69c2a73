"""MCP servers: host declarations, the resolved payload and driver support.

Mirrors upstream ``mcp.go``. Core validates and fingerprints the host's MCP
servers against :class:`MCPCapability` before the driver sees them.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import Field

from driver._base import FrozenSPIModel, SPIModel

__all__ = [
    "MCPCapability",
    "MCPPayload",
    "MCPServerSpec",
    "MCPToolApprovalMode",
    "MCPToolPolicy",
    "MCPTransport",
]


class MCPTransport(StrEnum):
    """How the agent talks to an MCP server."""

    STDIO = "stdio"
    HTTP = "http"
    SSE = "sse"


class MCPToolApprovalMode(StrEnum):
    """Approval override for one exact MCP tool."""

    PROMPT = "prompt"
    APPROVE = "approve"


class MCPToolPolicy(SPIModel):
    """Policy for one tool of a server; ``approve`` covers that tool only."""

    approval_mode: MCPToolApprovalMode | Literal[""] = ""


class MCPServerSpec(SPIModel):
    """One MCP server the host wants available to the agent.

    ``command``/``args``/``env`` apply to stdio, ``url``/``headers`` to http and
    sse. ``bearer_token_env_var`` names an environment variable and never holds
    the token itself. Keys of ``tools`` are exact tool names, never patterns.
    """

    key: str = ""
    transport: MCPTransport | Literal[""] = ""
    command: str = ""
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    url: str = ""
    headers: dict[str, str] = Field(default_factory=dict)
    bearer_token_env_var: str = ""
    required: bool = False
    required_reason: str = ""
    tools: dict[str, MCPToolPolicy] = Field(default_factory=dict)


class MCPPayload(SPIModel):
    """The MCP servers of one run after core validated, sorted and fingerprinted them."""

    servers: list[MCPServerSpec] = Field(default_factory=list)
    fingerprint: str = ""
    warnings: list[str] = Field(default_factory=list)


class MCPCapability(FrozenSPIModel):
    """Which MCP transports and per-tool approvals the driver can wire up."""

    supported: bool = False
    stdio: bool = False
    http: bool = False
    sse: bool = False
    tool_approvals: bool = False
