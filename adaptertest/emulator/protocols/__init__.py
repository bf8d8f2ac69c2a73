"""The model APIs the emulator speaks, one module each, behind one interface."""

from __future__ import annotations

from adaptertest.emulator.protocols._base import Answer, Route, Wire
from adaptertest.emulator.protocols.anthropic import AnthropicWire
from adaptertest.emulator.protocols.gemini import GeminiWire
from adaptertest.emulator.protocols.openai_responses import OpenAIResponsesWire

__all__ = ["WIRES", "Answer", "AnthropicWire", "GeminiWire", "OpenAIResponsesWire", "Route", "Wire"]

WIRES: tuple[Wire, ...] = (AnthropicWire(), OpenAIResponsesWire(), GeminiWire())
"""Every protocol, in the order a request path is matched against them."""
