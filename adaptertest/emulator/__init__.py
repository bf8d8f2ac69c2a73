"""A model-API emulator: a real HTTP server on 127.0.0.1 that speaks Anthropic Messages,
OpenAI Responses and Gemini generateContent, answering from a scripted :class:`Scenario`
and recording every request, so a real agent CLI can run offline against it.

See ``docs/emulator.md``.
"""

from __future__ import annotations

from adaptertest.emulator._clients import CLI_NAMES, CLIName, CLISetup, cli_setup
from adaptertest.emulator._recording import RecordedRequest
from adaptertest.emulator._scenario import (
    Fault,
    Scenario,
    ScenarioError,
    ToolCall,
    Turn,
    TurnUsage,
)
from adaptertest.emulator._schema import minimal_instance
from adaptertest.emulator._server import Emulator, EmulatorError

__all__ = [
    "CLI_NAMES",
    "CLIName",
    "CLISetup",
    "Emulator",
    "EmulatorError",
    "Fault",
    "RecordedRequest",
    "Scenario",
    "ScenarioError",
    "ToolCall",
    "Turn",
    "TurnUsage",
    "cli_setup",
    "minimal_instance",
]
