"""claude-agent-acp's native structured output, through its ``_meta`` and raw messages.

claude-agent-acp hands ``_meta.claudeCode.options`` of ``session/new`` and
``session/load`` to the Claude Agent SDK as query options: ``outputFormat`` (a JSON
Schema) makes Claude Code answer through its structured-output tool, and the SDK's
``result`` message then carries the value as ``structured_output``. With
``_meta.claudeCode.emitRawSDKMessages`` set to a filter, the agent forwards the SDK
messages it matches to the client as ``_claude/sdkMessage`` extension notifications;
only the ``result`` is asked for.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from driver import OutputSchema
from driver.acpkit import StructuredOutputExtension

__all__ = ["NATIVE_STRUCTURED", "ClaudeAgentStructuredOutput"]

SDK_MESSAGE = "claude/sdkMessage"
"""The extension notification's method as the SDK hands it over (``_claude/sdkMessage``
on the wire)."""


class ClaudeAgentStructuredOutput:
    """The schema as ``outputFormat``; the answer from the forwarded ``result`` message."""

    notes = (
        "claude-agent-acp: _meta.claudeCode.options.outputFormat on session/new and "
        "session/load; the value is structured_output of the result message it forwards "
        "as _claude/sdkMessage"
    )

    def session_meta(self, schema: OutputSchema) -> dict[str, Any]:
        """The ``claudeCode`` options that ask for ``schema`` and forward the ``result``."""
        output_format = {"type": "json_schema", "schema": json.loads(schema.schema_document)}
        return {
            "claudeCode": {
                "options": {"outputFormat": output_format},
                "emitRawSDKMessages": [{"type": "result"}],
            }
        }

    def structured_json(self, method: str, params: Mapping[str, Any]) -> str | None:
        """``structured_output`` of a forwarded ``result`` message, as JSON text."""
        message = params.get("message") if method == SDK_MESSAGE else None
        if not isinstance(message, dict) or message.get("type") != "result":
            return None
        value = message.get("structured_output")
        if value is None:
            return None
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


NATIVE_STRUCTURED: Mapping[str, StructuredOutputExtension] = {
    "claude-acp": ClaudeAgentStructuredOutput(),
}
"""The agents with a native structured output, by the lock's name of their CLI."""
