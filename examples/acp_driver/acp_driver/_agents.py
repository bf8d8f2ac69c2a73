"""How each agent is started in ACP mode and pointed at a model endpoint, offline.

Every agent gets a fresh home (its own variables point into it), a dummy API key and
the endpoint's base URL; none needs ``authenticate``. What each needs is in docs/acp.md.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from acp_driver._driver import ACPAgentDriver
from adaptertest import realcli
from adaptertest.options import ModelBinding, ModelEndpoint
from driver.acpkit import ACPConfig

__all__ = ["AGENTS", "AgentSetup", "agent_config", "agent_driver", "model_binding"]

DUMMY_KEY = "sk-emulator-dummy"
ANTHROPIC_MODEL = "claude-sonnet-4-5"
GEMINI_MODEL = "gemini-2.5-flash"
OPENAI_MODEL = "gpt-5.5"
"""A model slug codex knows: for an unknown one codex-acp says "Model metadata ... not found"
as agent text."""


@dataclass(frozen=True, slots=True)
class AgentSetup:
    """One agent: the lock's name of its CLI, its ACP arguments, the model protocol it
    speaks to the endpoint, and the environment (and files) that point it there."""

    cli: str
    args: tuple[str, ...]
    protocol: str
    model: str
    env: Callable[[str, Path], dict[str, str]]
    """``(base_url, home) -> variables``; may write config files under ``home``."""


def _root_sandbox() -> dict[str, str]:
    # Claude Code refuses to skip permission prompts as root unless told it is sandboxed;
    # the Agent SDK asks it to, so session/new fails without this under root.
    return {"IS_SANDBOX": "1"} if hasattr(os, "geteuid") and os.geteuid() == 0 else {}


def _gemini(base: str, home: Path) -> dict[str, str]:
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(
        json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}}), encoding="utf-8"
    )
    return {
        "GEMINI_CLI_HOME": str(home),
        "GEMINI_API_KEY": DUMMY_KEY,
        "GOOGLE_GEMINI_BASE_URL": base,
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
    }


def _claude(base: str, home: Path) -> dict[str, str]:
    return {
        "ANTHROPIC_BASE_URL": base,
        "ANTHROPIC_API_KEY": DUMMY_KEY,
        "ANTHROPIC_MODEL": ANTHROPIC_MODEL,
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_MAX_RETRIES": "1",
        **_root_sandbox(),
    }


def _qwen(base: str, home: Path) -> dict[str, str]:
    # After a turn it asks the model in the background for memories to save and for a
    # follow-up suggestion; the model sees those as its next requests (with the session's
    # history), so they would answer in place of the user's next turn.
    settings = home / ".qwen" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    background = {
        "memory": {"enableManagedAutoMemory": False, "enableManagedAutoDream": False},
        "ui": {"enableFollowupSuggestions": False},
    }
    settings.write_text(json.dumps(background), encoding="utf-8")
    return {
        "ANTHROPIC_BASE_URL": base,
        "ANTHROPIC_API_KEY": DUMMY_KEY,
        "ANTHROPIC_MODEL": ANTHROPIC_MODEL,
    }


def _opencode_shell(home: Path, rule: str) -> tuple[str, ...]:
    # The user config under XDG_CONFIG_HOME: OPENCODE_CONFIG_CONTENT is merged over it, so
    # the permission stays out of the content for this file to decide.
    path = home / ".config" / "opencode" / "opencode.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"permission": {"bash": rule}}), encoding="utf-8")
    return ()


def _opencode(base: str, home: Path) -> dict[str, str]:
    config = {
        "$schema": "https://opencode.ai/config.json",
        "model": f"emulator/{ANTHROPIC_MODEL}",
        "provider": {
            "emulator": {
                "npm": "@ai-sdk/anthropic",
                "options": {"baseURL": f"{base}/v1", "apiKey": DUMMY_KEY},
                "models": {ANTHROPIC_MODEL: {"name": ANTHROPIC_MODEL}},
            }
        },
        # Its title agent asks the model first (no tools), taking the scenario's first turn.
        "agent": {"title": {"disable": True}},
    }
    _opencode_shell(home, "ask")
    return {
        "OPENCODE_CONFIG_CONTENT": json.dumps(config),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_SHARE": "1",
    }


def _copilot(base: str, home: Path) -> dict[str, str]:
    return {
        "COPILOT_OFFLINE": "true",
        "COPILOT_PROVIDER_BASE_URL": base,
        "COPILOT_PROVIDER_TYPE": "anthropic",
        "COPILOT_PROVIDER_API_KEY": DUMMY_KEY,
        "COPILOT_MODEL": ANTHROPIC_MODEL,
        "COPILOT_HOME": str(home / ".copilot"),
        "COPILOT_AUTO_UPDATE": "false",
    }


def _codex(base: str, home: Path) -> dict[str, str]:
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        f'model = "{OPENAI_MODEL}"\n'
        'model_provider = "emulator"\n'
        "[model_providers.emulator]\n"
        'name = "emulator"\n'
        f'base_url = "{base}/v1"\n'
        'wire_api = "responses"\n'
        'env_key = "EMULATOR_API_KEY"\n',
        encoding="utf-8",
    )
    return {"CODEX_HOME": str(codex_home), "EMULATOR_API_KEY": DUMMY_KEY}


AGENTS: Mapping[str, AgentSetup] = {
    "gemini": AgentSetup("gemini", ("--acp", "-m", GEMINI_MODEL), "gemini", GEMINI_MODEL, _gemini),
    "claude-acp": AgentSetup("claude-acp", (), "anthropic", ANTHROPIC_MODEL, _claude),
    "codex-acp": AgentSetup("codex-acp", (), "openai-responses", OPENAI_MODEL, _codex),
    "qwen": AgentSetup(
        "qwen", ("--acp", "--auth-type", "anthropic"), "anthropic", ANTHROPIC_MODEL, _qwen
    ),
    "opencode": AgentSetup("opencode", ("acp",), "anthropic", ANTHROPIC_MODEL, _opencode),
    "copilot": AgentSetup(
        "copilot", ("--acp", "--stdio", "--no-auto-update"), "anthropic", ANTHROPIC_MODEL, _copilot
    ),
}
"""The agents by the lock's name of their CLI (``examples/cli-versions.json``)."""


def _claude_allows_shell(home: Path) -> tuple[str, ...]:
    # Claude Code reads its permission rules from the settings under its config dir.
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash"]}}), encoding="utf-8")
    return ()


def _gemini_allows_shell(home: Path) -> tuple[str, ...]:
    # Qwen Code, a fork of Gemini CLI, has the same flag.
    return ("--yolo",)


ALLOW_SHELL: Mapping[str, Callable[[Path], tuple[str, ...]]] = {
    "claude-acp": _claude_allows_shell,
    "gemini": _gemini_allows_shell,
    "qwen": _gemini_allows_shell,
    "opencode": lambda home: _opencode_shell(home, "allow"),
    "copilot": lambda home: ("--allow-tool", "shell"),
}
"""``home -> extra arguments`` (may write settings under ``home``) that let an agent run its
shell tool without asking: the scenario clauses judge what a command does, not a human's
decision on it."""


_GEMINI_NO_TOOL_OUTPUT = (
    "Gemini CLI 0.61.0 over ACP ends a shell call with a tool_call_update holding only "
    "status 'completed' (no content, no rawOutput): the command's output never reaches the "
    "client, so no tool_result can carry it"
)
_GEMINI_NO_LOAD = (
    "Gemini CLI 0.61.0 answers session/load with -32603 'No previous sessions found for this "
    "project' (it writes a fresh session file before reading the old one)"
)
CANNOT: Mapping[str, Mapping[str, str]] = {
    "gemini": {
        "TOL-01": _GEMINI_NO_TOOL_OUTPUT,
        "TOL-02": "Gemini CLI 0.61.0 over ACP reports a shell command that exits non-zero as "
        "status 'completed' with no output, so the client cannot tell the call failed",
        "TOL-03": _GEMINI_NO_TOOL_OUTPUT,
        "RES-01": _GEMINI_NO_LOAD,
        "RES-02": _GEMINI_NO_LOAD,
        "FLT-02": "Gemini CLI 0.61.0 answers a model stream cut mid-event with error 500 "
        "'terminated' (its HTTP client's word), which does not say that a stream was cut "
        "(its 500, 401 and 400 failures name their status)",
    },
    "codex-acp": {
        "INP-01": "codex-acp 2.6.0 (through codex 0.166.0's app server) refuses, without "
        "asking the model, a prompt over 1048576 characters: -32603 'Internal error', details "
        "'Input exceeds the maximum length of 1048576 characters.' (the clause's 1 MiB ASCII "
        "prompt is 1048671)",
        "FLT-02": "codex-acp 2.6.0 tells a model request that failed for good (a 500 after 5 "
        "reconnects, a 400, a stream cut every time) as agent message text and answers the "
        "prompt with stop reason end_turn: a client without JetBrains AIR's session-failure "
        "capability gets no error and no status, only a session_info_update whose "
        "_meta.codex.threadStatus.type is 'systemError'",
    },
    "copilot": {
        "INP-01": "Copilot CLI 1.0.102 refuses, without asking the model, a prompt over its "
        "128000-token budget (the 1 MiB prompt: about 404000), answering with the text "
        "'Error: Request exceeds the model's prompt budget after reserving output'",
        "FLT-01": "Copilot CLI 1.0.102 tells each retry of a 529 or 503 as agent message text "
        "('Info: Request failed due to a transient API error. Retrying...') with no message "
        "id, so it runs into the answer's text and the output is not the answer alone",
        "FLT-02": "Copilot CLI 1.0.102 tells a model request that failed for good as agent "
        "message text ('Error: Failed to get response from the AI model; retried 5 times "
        "... Last error: 500 ...') and answers the prompt with stop reason end_turn: the "
        "client gets no error",
    },
    "qwen": {
        "INP-01": "Qwen Code 0.24.4 refuses, without asking the model, a prompt it estimates "
        "over its 177000-token hard limit (a 1 MiB prompt: about 281000): 'Context is too "
        "large to send safely after automatic compression'",
        "FLT-02": "Qwen Code 0.24.4 answers a model stream cut mid-event with -32603 "
        "'Internal error', details 'terminated' (its HTTP client's word), which does not say "
        "that a stream was cut (its 500, 401 and 400 failures name their status)",
    },
}
"""What each agent cannot do of the scenario battery, by clause, and why (the binding's
``cannot``: skipped with the reason, never passed)."""


def agent_config(
    name: str,
    program: str | Path,
    base_url: str,
    home: Path,
    *,
    persistent: bool = False,
    timeout: float = 120.0,
) -> ACPConfig:
    """The config that starts agent ``name`` (binary ``program``) in ACP mode, pointed at
    ``base_url``, with everything it keeps under ``home`` (created)."""
    setup = AGENTS[name]
    home.mkdir(parents=True, exist_ok=True)
    (home / "tmp").mkdir(exist_ok=True)
    env = {"HOME": str(home), "TMPDIR": str(home / "tmp"), **setup.env(base_url, home)}
    return ACPConfig(
        command=(str(program), *setup.args),
        model=setup.model,
        env=env,
        home=str(home),
        persistent=persistent,
        timeout=timeout,
    )


def agent_driver(name: str, config: ACPConfig) -> ACPAgentDriver:
    """The driver of agent ``name`` built with ``config``."""
    return ACPAgentDriver(config, agent=name)


def model_binding(
    name: str, program: str | Path, *, persistent: bool = False, allow_shell: bool = True
) -> ModelBinding:
    """How the suite's scenario clauses point agent ``name`` at the model endpoint they
    run: the agent's config on the endpoint's URL, home and workspace, with the
    endpoint's variables (its process marker among them) over the agent's own, and the
    endpoint's deadline as the run's timeout. ``allow_shell`` lets the agent run its shell
    tool without asking where :data:`ALLOW_SHELL` knows how (the scenario clauses need it);
    False keeps its permission prompts (the human-decision clauses need them). With the
    defaults and the pinned release the binding has a ``ref`` (``acp_driver.bindings``),
    so the restarted-host resume (RES-02) runs."""

    def build(endpoint: ModelEndpoint) -> ACPAgentDriver:
        config = agent_config(
            name,
            program,
            endpoint.base_url,
            endpoint.home,
            persistent=persistent,
            timeout=endpoint.deadline,
        )
        extra = ALLOW_SHELL[name](endpoint.home) if allow_shell and name in ALLOW_SHELL else ()
        update = {
            "cwd": str(endpoint.workspace),
            "env": {**config.env, **endpoint.env},
            "extra_args": (*config.extra_args, *extra),
        }
        return agent_driver(name, config.model_copy(update=update))

    return ModelBinding(
        driver=build,
        protocol=AGENTS[name].protocol,
        cannot=dict(CANNOT.get(name, {})),
        ref=_ref(name, program) if allow_shell and not persistent else None,
    )


def _ref(name: str, program: str | Path) -> str | None:
    """The importable name of this binding (``acp_driver.bindings``) when ``program`` is
    the pinned release a new interpreter finds too; else None (RES-02 says it skips)."""
    pinned = realcli.locate(name)
    if pinned is None or Path(program).resolve() != pinned.resolve():
        return None
    return f"acp_driver.bindings:{name.replace('-', '_')}"
