"""Each agent's model binding under a name a new interpreter can import.

The restarted-host resume (RES-02) rebuilds the binding in a fresh Python process from
``ModelBinding.ref``; :func:`acp_driver.model_binding` names the function here for the
agent's pinned release (``adaptertest install-clis NAME``), which each function binds
with the defaults: a process per run, the shell tool allowed.
"""

from __future__ import annotations

from acp_driver._agents import model_binding
from adaptertest import realcli
from adaptertest.options import ModelBinding

__all__ = ["claude_acp", "codex_acp", "copilot", "gemini", "opencode", "qwen"]


def _pinned(name: str) -> ModelBinding:
    return model_binding(name, realcli.require(name))


def claude_acp() -> ModelBinding:
    """claude-agent-acp's binding."""
    return _pinned("claude-acp")


def codex_acp() -> ModelBinding:
    """codex-acp's binding."""
    return _pinned("codex-acp")


def copilot() -> ModelBinding:
    """Copilot CLI's binding."""
    return _pinned("copilot")


def gemini() -> ModelBinding:
    """Gemini CLI's binding."""
    return _pinned("gemini")


def opencode() -> ModelBinding:
    """OpenCode's binding."""
    return _pinned("opencode")


def qwen() -> ModelBinding:
    """Qwen Code's binding."""
    return _pinned("qwen")
