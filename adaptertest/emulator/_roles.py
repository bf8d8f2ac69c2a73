"""Tool roles: a scenario asks for "the agent's shell tool" and the emulator names it.

Agents call their shell tool differently (Claude Code ``Bash {command}``, codex
``exec_command {cmd}`` or ``shell {command: [argv]}``, Gemini CLI ``run_shell_command
{command}``). A scenario that must run on any of them writes the call as a role: the
tool name ``$shell`` with the command line in ``arguments.command``. When the turn is
served, the role becomes a call of the tool the request offers: one the binding named
(:class:`adaptertest.options.ToolShape`), else a known shell tool, else an offered tool
whose name says shell, bash, command, exec or terminal and whose parameters take a
``command`` or ``cmd``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from adaptertest.emulator._scenario import ToolCall, Turn
from adaptertest.options import SHELL_ROLE, ToolShape

__all__ = [
    "KNOWN_SHELL_TOOLS",
    "ROLE_PREFIX",
    "RoleError",
    "offered_tools",
    "resolve_roles",
    "role_of",
]

ROLE_PREFIX = "$"
"""A tool name starting with it is a role (``$shell``), resolved when the turn is served."""

KNOWN_SHELL_TOOLS: tuple[ToolShape, ...] = (
    ToolShape("Bash"),
    ToolShape("run_shell_command"),
    ToolShape("exec_command", "cmd"),
    ToolShape("shell_command"),
    ToolShape("shell", argv=True),
)
"""The shell tools of the agents the kit knows, tried in this order."""

_SHELL_WORDS = ("shell", "bash", "command", "exec", "terminal")
_COMMAND_PARAMETERS = ("command", "cmd")


class RoleError(ValueError):
    """A role the request offers no tool for; the message names the offered tools."""


def role_of(call: ToolCall) -> str | None:
    """The role a scenario's tool call asks for (``shell``), or None for a named tool."""
    return call.name[len(ROLE_PREFIX) :] if call.name.startswith(ROLE_PREFIX) else None


def offered_tools(body: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Tool name -> its parameters' JSON Schema, as a request offers them (Anthropic
    ``tools[].input_schema``, OpenAI ``tools[].parameters`` or ``function.parameters``,
    Gemini ``tools[].functionDeclarations[].parameters``)."""
    found: dict[str, Mapping[str, Any]] = {}
    for entry in _declarations(body.get("tools")):
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            continue
        schema: Any = {}
        for key in ("input_schema", "parameters", "parametersJsonSchema", "parameters_json_schema"):
            if isinstance(entry.get(key), Mapping):
                schema = entry[key]
                break
        found.setdefault(name, schema)
    return found


def _declarations(tools: Any) -> Iterator[Mapping[str, Any]]:
    for tool in tools if isinstance(tools, list) else ():
        if not isinstance(tool, Mapping):
            continue
        inner = tool.get("function")
        if isinstance(inner, Mapping):
            yield inner
        for key in ("functionDeclarations", "function_declarations"):
            for declaration in tool.get(key) or ():
                if isinstance(declaration, Mapping):
                    yield declaration
        yield tool


def _properties(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    properties = schema.get("properties")
    return properties if isinstance(properties, Mapping) else {}


def _fits(shape: ToolShape, schema: Mapping[str, Any]) -> bool:
    properties = _properties(schema)
    return not properties or shape.argument in properties


def _guess(offered: Mapping[str, Mapping[str, Any]]) -> ToolShape | None:
    for name, schema in offered.items():
        if not any(word in name.lower() for word in _SHELL_WORDS):
            continue
        properties = _properties(schema)
        for argument in _COMMAND_PARAMETERS:
            spec = properties.get(argument)
            if isinstance(spec, Mapping):
                return ToolShape(name, argument, argv=spec.get("type") == "array")
    return None


def shell_tool(
    offered: Mapping[str, Mapping[str, Any]], named: Mapping[str, ToolShape]
) -> ToolShape:
    """The agent's shell tool among ``offered``; :class:`RoleError` when there is none."""
    chosen = named.get(SHELL_ROLE)
    if chosen is not None:
        if chosen.name in offered:
            return chosen
        raise RoleError(
            f"the binding names {chosen.name!r} as the shell tool, but the request offers "
            f"{_names(offered)}"
        )
    for shape in KNOWN_SHELL_TOOLS:
        if shape.name in offered and _fits(shape, offered[shape.name]):
            return shape
    guessed = _guess(offered)
    if guessed is None:
        raise RoleError(
            f"the scenario calls the agent's shell tool, but the request offers none the "
            f"emulator recognises ({_names(offered)}): name it with "
            "ModelBinding(tools={'shell': ToolShape(...)})"
        )
    return guessed


def _names(offered: Mapping[str, object]) -> str:
    return f"tools {', '.join(sorted(offered))}" if offered else "no tools"


def resolve_roles(
    turn: Turn, body: Mapping[str, Any], named: Mapping[str, ToolShape] | None = None
) -> Turn:
    """``turn`` with each role call replaced by a call of the agent's own tool."""
    if not any(role_of(call) is not None for call in turn.tool_calls):
        return turn
    offered = offered_tools(body)
    calls: list[ToolCall] = []
    for call in turn.tool_calls:
        role = role_of(call)
        if role is None:
            calls.append(call)
            continue
        if role != SHELL_ROLE:
            raise RoleError(f"unknown tool role {call.name!r}: the emulator knows $shell")
        command = call.arguments.get("command")
        if not isinstance(command, str):
            raise RoleError(f"a {call.name} call needs arguments.command, a str")
        shape = shell_tool(offered, named or {})
        arguments: dict[str, Any] = shape.arguments(command)
        calls.append(ToolCall(name=shape.name, arguments=arguments, id=call.id))
    return turn.model_copy(update={"tool_calls": calls})
