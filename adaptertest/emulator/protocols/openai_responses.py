"""OpenAI Responses: ``POST /v1/responses``, streamed as server-sent events
(``response.created``, ``response.in_progress``, the output items with their deltas,
``response.completed`` with usage) or whole.

Thinking is a ``reasoning`` item with a summary; a tool call is a ``function_call`` item.
A structured answer (codex's ``--output-schema`` sends ``text.format`` of type
``json_schema``) is the output text holding the JSON value.
"""

from __future__ import annotations

import time
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

__all__ = ["OpenAIResponsesWire"]

ERRORS = {
    400: (
        "invalid_request_error",
        "context_length_exceeded",
        "Your input exceeds the context window of this model.",
    ),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
    429: ("rate_limit_error", "rate_limit_exceeded", "Rate limit reached. Please try again."),
    500: ("server_error", "server_error", "The server had an error processing your request."),
    503: ("server_error", "server_is_overloaded", "The server is overloaded."),
}


class OpenAIResponsesWire(Wire):
    name = "openai"

    def route(self, method: str, path: str) -> Route | None:
        if method == "POST" and path == "/v1/responses":
            return Route("generate")
        return None

    def schema(self, body: Mapping[str, Any]) -> dict[str, Any] | None:
        text = body.get("text")
        fmt = text.get("format") if isinstance(text, Mapping) else None
        if isinstance(fmt, Mapping) and fmt.get("type") == "json_schema":
            schema = fmt.get("schema")
            return dict(schema) if isinstance(schema, Mapping) else {}
        return None

    def texts(self, body: Mapping[str, Any]) -> Texts:
        found = Texts(system=list(text_of(body.get("instructions"))))
        items = body.get("input")
        if isinstance(items, str):
            found.user.append(items)
            items = []
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, Mapping):
                continue
            kind = item.get("type", "message")
            if kind == "message":
                role = item.get("role")
                content = list(_content_text(item.get("content")))
                if role in ("system", "developer"):
                    found.system.extend(content)
                elif role == "user":
                    found.user.extend(content)
                elif role == "assistant":
                    found.assistant.extend(content)
            elif kind in ("function_call_output", "custom_tool_call_output"):
                output = item.get("output")
                found.tool_results.append(
                    output if isinstance(output, str) else "\n".join(text_of(output))
                )
        return found

    def _items(self, answer: Answer, body: Mapping[str, Any]) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        if answer.thinking is not None:
            items.append(
                {
                    "id": make_id("rs_", 32),
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": answer.thinking}],
                }
            )
        text = dumps(answer.value) if answer.structured else answer.text
        if text:
            items.append(
                {
                    "id": make_id("msg_", 32),
                    "type": "message",
                    "status": "completed",
                    "role": "assistant",
                    "content": [
                        {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
                    ],
                }
            )
        custom = _custom_tools(body)
        for call in answer.tool_calls:
            if call.name in custom:  # a freeform tool (codex's apply_patch): its input is text
                given = call.arguments.get("input")
                items.append(
                    {
                        "id": make_id("ctc_", 32),
                        "type": "custom_tool_call",
                        "status": "completed",
                        "call_id": call.id or make_id("call_"),
                        "name": call.name,
                        "input": given if isinstance(given, str) else dumps(call.arguments),
                    }
                )
                continue
            items.append(
                {
                    "id": make_id("fc_", 32),
                    "type": "function_call",
                    "status": "completed",
                    "call_id": call.id or make_id("call_"),
                    "name": call.name,
                    "arguments": dumps(call.arguments),
                }
            )
        return items

    def _response(
        self, answer: Answer, body: Mapping[str, Any], rid: str, output: list[dict[str, Any]]
    ) -> dict[str, Any]:
        done = bool(output)
        text = body.get("text")
        return {
            "id": rid,
            "object": "response",
            "created_at": int(time.time()),
            "status": "completed" if done else "in_progress",
            "error": None,
            "incomplete_details": None,
            "instructions": body.get("instructions"),
            "model": answer.model,
            "output": output,
            "parallel_tool_calls": bool(body.get("parallel_tool_calls", True)),
            "tool_choice": body.get("tool_choice", "auto"),
            "tools": body.get("tools", []),
            "text": text if isinstance(text, Mapping) else {"format": {"type": "text"}},
            "reasoning": body.get("reasoning"),
            "store": bool(body.get("store", False)),
            "metadata": {},
            "usage": self._usage(answer) if done else None,
        }

    def _usage(self, answer: Answer) -> dict[str, Any]:
        usage = answer.usage
        return {
            "input_tokens": usage.input_tokens,
            "input_tokens_details": {
                "cached_tokens": usage.cached_input_tokens,
                "cache_write_tokens": usage.cache_creation_input_tokens,
            },
            "output_tokens": usage.output_tokens,
            "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
            "total_tokens": usage.input_tokens + usage.output_tokens,
        }

    def whole(self, answer: Answer, body: Mapping[str, Any]) -> dict[str, Any]:
        items = self._items(answer, body)
        response = self._response(answer, body, make_id("resp_", 48), items)
        response["status"] = "completed"
        response["usage"] = self._usage(answer)
        return response

    def events(self, answer: Answer, body: Mapping[str, Any]) -> list[bytes]:
        rid = make_id("resp_", 48)
        items = self._items(answer, body)
        payloads: list[dict[str, Any]] = []
        start = self._response(answer, body, rid, [])
        payloads.append({"type": "response.created", "response": start})
        payloads.append({"type": "response.in_progress", "response": start})
        for index, item in enumerate(items):
            payloads.extend(_item_events(index, item, answer.deltas))
        final = self._response(answer, body, rid, items)
        final["status"] = "completed"
        final["usage"] = self._usage(answer)
        payloads.append({"type": "response.completed", "response": final})
        return [
            sse_event({**p, "sequence_number": n}, event=p["type"]) for n, p in enumerate(payloads)
        ]

    def error(self, status: int, message: str | None) -> dict[str, Any]:
        kind, code, text = ERRORS.get(
            status,
            ("server_error" if status >= 500 else "invalid_request_error", None, f"HTTP {status}"),
        )
        return {"error": {"message": message or text, "type": kind, "param": None, "code": code}}


def _item_events(index: int, item: dict[str, Any], deltas: int) -> list[dict[str, Any]]:
    base = {"output_index": index, "item_id": item["id"]}
    kind = item["type"]
    out: list[dict[str, Any]] = []
    if kind == "reasoning":
        text = item["summary"][0]["text"]
        out.append(
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": {**item, "summary": []},
            }
        )
        out.append(
            {
                "type": "response.reasoning_summary_part.added",
                **base,
                "summary_index": 0,
                "part": {"type": "summary_text", "text": ""},
            }
        )
        out.extend(
            {
                "type": "response.reasoning_summary_text.delta",
                **base,
                "summary_index": 0,
                "delta": piece,
            }
            for piece in split_text(text, 1)
        )
        out.append(
            {
                "type": "response.reasoning_summary_text.done",
                **base,
                "summary_index": 0,
                "text": text,
            }
        )
        out.append(
            {
                "type": "response.reasoning_summary_part.done",
                **base,
                "summary_index": 0,
                "part": {"type": "summary_text", "text": text},
            }
        )
    elif kind == "message":
        part = item["content"][0]
        text = part["text"]
        out.append(
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": {**item, "status": "in_progress", "content": []},
            }
        )
        out.append(
            {
                "type": "response.content_part.added",
                **base,
                "content_index": 0,
                "part": {**part, "text": ""},
            }
        )
        out.extend(
            {
                "type": "response.output_text.delta",
                **base,
                "content_index": 0,
                "delta": piece,
                "logprobs": [],
            }
            for piece in split_text(text, deltas)
        )
        out.append(
            {
                "type": "response.output_text.done",
                **base,
                "content_index": 0,
                "text": text,
                "logprobs": [],
            }
        )
        out.append({"type": "response.content_part.done", **base, "content_index": 0, "part": part})
    else:
        # A tool call streams its input: freeform (custom) tools as "input", functions as
        # "arguments", each under its own event names.
        field, events = (
            ("input", "custom_tool_call_input")
            if kind == "custom_tool_call"
            else ("arguments", "function_call_arguments")
        )
        given = item[field]
        out.append(
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": {**item, "status": "in_progress", field: ""},
            }
        )
        out.extend(
            {"type": f"response.{events}.delta", **base, "delta": piece}
            for piece in split_text(given, 2)
        )
        out.append({"type": f"response.{events}.done", **base, field: given})
    out.append({"type": "response.output_item.done", "output_index": index, "item": item})
    return out


def _custom_tools(body: Mapping[str, Any]) -> set[str]:
    tools = body.get("tools")
    return {
        tool["name"]
        for tool in (tools if isinstance(tools, list) else [])
        if isinstance(tool, Mapping) and tool.get("type") == "custom" and "name" in tool
    }


def _content_text(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    return [
        part["text"]
        for part in (content if isinstance(content, list) else [])
        if isinstance(part, Mapping) and isinstance(part.get("text"), str)
    ]
