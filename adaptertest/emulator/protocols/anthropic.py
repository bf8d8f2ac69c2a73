"""Anthropic Messages: ``POST /v1/messages`` (``?beta=true`` as Claude Code sends it),
streamed (``message_start`` ... ``message_stop``) or whole, and
``POST /v1/messages/count_tokens``.

A structured answer is a ``tool_use`` of the tool Claude Code adds for ``--json-schema``
(``StructuredOutput``) carrying the value, with ``stop_reason: tool_use``; a request
asking for the API's own structured outputs (``output_config.format`` of type
``json_schema``) gets the JSON as the text.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from adaptertest.emulator._sse import sse_event
from adaptertest.emulator.protocols._base import (
    Answer,
    Route,
    Texts,
    Wire,
    dumps,
    make_id,
    split_text,
    text_of,
)

__all__ = ["STRUCTURED_TOOL", "AnthropicWire"]

STRUCTURED_TOOL = "StructuredOutput"
"""The tool Claude Code's ``--json-schema`` adds; the model answers by calling it."""

AUXILIARY_MAX_TOKENS = 1024
"""A tool-less Claude Code request asking for at most this many tokens is auxiliary."""

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    503: "api_error",
    529: "overloaded_error",
}
MESSAGES = {
    400: "prompt is too long: 210000 tokens > 200000 maximum",
    401: "invalid x-api-key",
    429: "Number of request tokens has exceeded your per-minute rate limit",
    500: "Internal server error",
    503: "Service unavailable",
    529: "Overloaded",
}


class AnthropicWire(Wire):
    name = "anthropic"

    def route(self, method: str, path: str) -> Route | None:
        if method != "POST":
            return None
        if path == "/v1/messages":
            return Route("generate")
        if path == "/v1/messages/count_tokens":
            return Route("count_tokens", stream=False)
        return None

    def schema(self, body: Mapping[str, Any]) -> dict[str, Any] | None:
        tool = _structured_tool(body)
        if tool is not None:
            schema = tool.get("input_schema")
            return schema if isinstance(schema, dict) else {}
        fmt = _output_format(body)
        if fmt is not None:
            schema = fmt.get("schema")
            return dict(schema) if isinstance(schema, Mapping) else {}
        return None

    def side(self, route: Route, body: Mapping[str, Any], headers: Mapping[str, str]) -> bool:
        if route.kind != "generate":
            return True
        # Claude Code's auxiliary calls (a session title, a summary, a quota check) carry no
        # tools and ask for a short answer; its main turns carry tools or a large max_tokens.
        from_claude_code = headers.get("user-agent", "").startswith("claude-cli/")
        max_tokens = body.get("max_tokens")
        short = isinstance(max_tokens, int) and max_tokens <= AUXILIARY_MAX_TOKENS
        return from_claude_code and not body.get("tools") and short

    def side_answer(self, route: Route, body: Mapping[str, Any]) -> dict[str, Any]:
        return {"input_tokens": self.tokens(body)}

    def texts(self, body: Mapping[str, Any]) -> Texts:
        found = Texts(system=list(text_of(body.get("system"))))
        for message in _list(body.get("messages")):
            if not isinstance(message, Mapping):
                continue
            content = message.get("content")
            role = message.get("role")
            if role == "system":  # Claude Code puts its environment here
                found.system.extend(text_of(content))
                continue
            into = found.user if role == "user" else found.assistant
            if isinstance(content, str):
                into.append(content)
                continue
            for block in _list(content):
                if not isinstance(block, Mapping):
                    continue
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    into.append(block["text"])
                elif block.get("type") == "tool_result":
                    found.tool_results.append("\n".join(text_of(block.get("content"))))
        return found

    def _blocks(self, answer: Answer, body: Mapping[str, Any]) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if answer.thinking is not None:
            blocks.append(
                {"type": "thinking", "thinking": answer.thinking, "signature": _sign(answer)}
            )
        if answer.text:
            blocks.append({"type": "text", "text": answer.text})
        for call in answer.tool_calls:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": call.id or make_id("toolu_01"),
                    "name": call.name,
                    "input": call.arguments,
                }
            )
        if answer.structured and _structured_tool(body) is None:
            # the API's own structured outputs (output_config.format): the text is the JSON
            blocks.append({"type": "text", "text": dumps(answer.value)})
        elif answer.structured:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": make_id("toolu_01"),
                    "name": STRUCTURED_TOOL,
                    "input": answer.value,
                }
            )
        return blocks

    def _usage(self, answer: Answer) -> dict[str, Any]:
        usage = answer.usage
        return {
            "input_tokens": usage.input_tokens
            - usage.cached_input_tokens
            - usage.cache_creation_input_tokens,
            "cache_creation_input_tokens": usage.cache_creation_input_tokens,
            "cache_read_input_tokens": usage.cached_input_tokens,
            "output_tokens": usage.output_tokens,
            "output_tokens_details": {"thinking_tokens": usage.reasoning_tokens},
            "service_tier": "standard",
        }

    def _message(self, answer: Answer, content: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": make_id("msg_01"),
            "type": "message",
            "role": "assistant",
            "model": answer.model,
            "content": content,
            "stop_reason": None,
            "stop_sequence": None,
            "usage": self._usage(answer),
        }

    def whole(self, answer: Answer, body: Mapping[str, Any]) -> dict[str, Any]:
        blocks = self._blocks(answer, body)
        message = self._message(answer, blocks)
        message["stop_reason"] = _stop_reason(blocks)
        return message

    def events(self, answer: Answer, body: Mapping[str, Any]) -> list[bytes]:
        blocks = self._blocks(answer, body)
        start = self._message(answer, [])
        start["usage"] = {**start["usage"], "output_tokens": min(1, answer.usage.output_tokens)}
        out = [
            sse_event({"type": "message_start", "message": start}, event="message_start"),
            sse_event({"type": "ping"}, event="ping"),
        ]
        for index, block in enumerate(blocks):
            out.extend(_block_events(index, block, answer.deltas))
        usage = self._usage(answer)
        out.append(
            sse_event(
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": _stop_reason(blocks), "stop_sequence": None},
                    "usage": {k: v for k, v in usage.items() if k != "service_tier"},
                },
                event="message_delta",
            )
        )
        out.append(sse_event({"type": "message_stop"}, event="message_stop"))
        return out

    def error(self, status: int, message: str | None) -> dict[str, Any]:
        kind = ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
        text = message or MESSAGES.get(status, f"HTTP {status}")
        return {"type": "error", "error": {"type": kind, "message": text}}


def _block_events(index: int, block: dict[str, Any], deltas: int) -> list[bytes]:
    kind = block["type"]
    first: dict[str, Any]
    pieces: list[dict[str, Any]]
    if kind == "thinking":
        first = {"type": "thinking", "thinking": "", "signature": ""}
        pieces = [
            {"type": "thinking_delta", "thinking": p} for p in split_text(block["thinking"], 1)
        ]
        pieces.append({"type": "signature_delta", "signature": block["signature"]})
    elif kind == "text":
        first = {"type": "text", "text": ""}
        pieces = [{"type": "text_delta", "text": p} for p in split_text(block["text"], deltas)]
    else:
        first = {**block, "input": {}}
        pieces = [
            {"type": "input_json_delta", "partial_json": p}
            for p in split_text(dumps(block["input"]), 2)
        ]
    out = [
        sse_event(
            {"type": "content_block_start", "index": index, "content_block": first},
            event="content_block_start",
        )
    ]
    out.extend(
        sse_event(
            {"type": "content_block_delta", "index": index, "delta": d}, event="content_block_delta"
        )
        for d in pieces
    )
    out.append(
        sse_event({"type": "content_block_stop", "index": index}, event="content_block_stop")
    )
    return out


def _stop_reason(blocks: list[dict[str, Any]]) -> str:
    return "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"


def _sign(answer: Answer) -> str:
    return hashlib.sha256((answer.thinking or "").encode()).hexdigest()


def _structured_tool(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for tool in _list(body.get("tools")):
        if isinstance(tool, Mapping) and tool.get("name") == STRUCTURED_TOOL:
            return tool
    return None


def _output_format(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The ``json_schema`` output format the request asks for (``output_config.format``,
    or the older ``output_format``)."""
    config = body.get("output_config")
    for fmt in (
        config.get("format") if isinstance(config, Mapping) else None,
        body.get("output_format"),
    ):
        if isinstance(fmt, Mapping) and fmt.get("type") == "json_schema":
            return fmt
    return None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
