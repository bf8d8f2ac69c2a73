"""One ACP driver, configured per agent: Gemini CLI, Claude Code (through
claude-agent-acp), codex (through codex-acp), Qwen Code, OpenCode and GitHub Copilot CLI.

:func:`agent_config` builds the :class:`~driver.acpkit.ACPConfig` that starts an agent
in ACP mode pointed at a model endpoint (a base URL, such as the kit's emulator), with
its own home; :class:`ACPAgentDriver` is :class:`~driver.acpkit.ACPDriver` named after
the agent, with the agent's native structured output where it has one
(:data:`NATIVE_STRUCTURED`: claude-agent-acp) and only the permission modes it can honour
(:data:`UNASKED`: codex-acp never asks). docs/acp.md describes each agent's setup.
"""

from __future__ import annotations

from acp_driver._agents import AGENTS, AgentSetup, agent_config, agent_driver, model_binding
from acp_driver._driver import UNASKED, ACPAgentDriver
from acp_driver._structured import NATIVE_STRUCTURED, ClaudeAgentStructuredOutput

__all__ = [
    "AGENTS",
    "NATIVE_STRUCTURED",
    "UNASKED",
    "ACPAgentDriver",
    "AgentSetup",
    "ClaudeAgentStructuredOutput",
    "agent_config",
    "agent_driver",
    "model_binding",
]
