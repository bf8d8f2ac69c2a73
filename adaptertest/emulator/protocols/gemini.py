"""Gemini: ``POST /v1beta/models/{model}:generateContent`` (whole),
``:streamGenerateContent?alt=sse`` (server-sent events, one ``GenerateContentResponse``
per event, the last with ``finishReason`` and ``usageMetadata``) and ``:countTokens``.

Thinking is a part with ``thought: true``; a tool call is a ``functionCall`` part. A
request whose ``generationConfig`` carries ``responseJsonSchema`` or ``responseSchema``
is answered with the JSON value as the text.
"""

from __future__ import annotations

import re
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

__all__ = ["GeminiWire"]

_PATH = re.compile(r"^/v1(?:beta|alpha)?/models/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)$")

STATUSES = {
    400: (
        "INVALID_ARGUMENT",
        "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
    ),
    401: ("UNAUTHENTICATED", "API key not valid. Please pass a valid API key."),
    403: ("PERMISSION_DENIED", "Permission denied."),
    404: ("NOT_FOUND", "Model not found."),
    429: ("RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota)."),
    500: ("INTERNAL", "An internal error has occurred."),
    503: ("UNAVAILABLE", "The model is overloaded. Please try again later."),
    504: ("DEADLINE_EXCEEDED", "Deadline exceeded."),
}


class GeminiWire(Wire):
    name = "gemini"

    def route(self, method: str, path: str) -> Route | None:
        match = _PATH.match(path)
        if method != "POST" or match is None:
            return None
        model, verb = match["model"], match["method"]
        if verb == "generateContent":
            return Route("generate", model=model, stream=False)
        if verb == "streamGenerateContent":
            return Route("generate", model=model, stream=True)
        if verb == "countTokens":
            return Route("count_tokens", model=model, stream=False)
        return None

    def schema(self, body: Mapping[str, Any]) -> dict[str, Any] | None:
        config = body.get("generationConfig")
        if not isinstance(config, Mapping):
            return None
        for key in ("responseJsonSchema", "responseSchema", "response_json_schema"):
            schema = config.get(key)
            if isinstance(schema, Mapping):
                return dict(schema)
        return None

    def side(self, route: Route, body: Mapping[str, Any], headers: Mapping[str, str]) -> bool:
        # Gemini CLI streams every main turn; its router (and its other checks) ask a
        # non-streaming generateContent for JSON by a response schema.
        return route.kind != "generate" or (route.stream is False and self.schema(body) is not None)

    def side_answer(self, route: Route, body: Mapping[str, Any]) -> dict[str, Any]:
        return {"totalTokens": self.tokens(body)}

    def texts(self, body: Mapping[str, Any]) -> Texts:
        instruction = body.get("systemInstruction") or body.get("system_instruction")
        found = Texts()
        if isinstance(instruction, Mapping):
            found.system = [t for p in _list(instruction.get("parts")) for t in text_of(p)]
        elif isinstance(instruction, str):
            found.system = [instruction]
        for content in _list(body.get("contents")):
            if not isinstance(content, Mapping):
                continue
            into = found.user if content.get("role", "user") == "user" else found.assistant
            for part in _list(content.get("parts")):
                if not isinstance(part, Mapping):
                    continue
                if isinstance(part.get("text"), str) and not part.get("thought"):
                    into.append(part["text"])
                response = part.get("functionResponse")
                if isinstance(response, Mapping):
                    found.tool_results.append(_result_text(response.get("response")))
        return found

    def _usage(self, answer: Answer) -> dict[str, Any]:
        usage = answer.usage
        candidates = usage.output_tokens - usage.reasoning_tokens
        meta: dict[str, Any] = {
            "promptTokenCount": usage.input_tokens,
            "candidatesTokenCount": candidates,
            "totalTokenCount": usage.input_tokens + usage.output_tokens,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": usage.input_tokens}],
        }
        if usage.cached_input_tokens:
            meta["cachedContentTokenCount"] = usage.cached_input_tokens
        if usage.reasoning_tokens:
            meta["thoughtsTokenCount"] = usage.reasoning_tokens
        return meta

    def _chunk(
        self, answer: Answer, rid: str, parts: list[dict[str, Any]], last: bool
    ) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
        chunk: dict[str, Any] = {"candidates": [candidate]}
        if last:
            candidate["finishReason"] = "STOP"
            chunk["usageMetadata"] = self._usage(answer)
        chunk["modelVersion"] = answer.model
        chunk["responseId"] = rid
        return chunk

    def _calls(self, answer: Answer) -> list[dict[str, Any]]:
        calls = []
        for call in answer.tool_calls:
            function: dict[str, Any] = {"name": call.name, "args": call.arguments}
            if call.id is not None:
                function["id"] = call.id
            calls.append({"functionCall": function})
        return calls

    def _text(self, answer: Answer) -> str:
        return dumps(answer.value) if answer.structured else answer.text

    def whole(self, answer: Answer, body: Mapping[str, Any]) -> dict[str, Any]:
        parts: list[dict[str, Any]] = []
        if answer.thinking is not None:
            parts.append({"text": answer.thinking, "thought": True})
        if text := self._text(answer):
            parts.append({"text": text})
        parts.extend(self._calls(answer))
        return self._chunk(answer, make_id("", 22), parts, last=True)

    def events(self, answer: Answer, body: Mapping[str, Any]) -> list[bytes]:
        rid = make_id("", 22)
        groups: list[list[dict[str, Any]]] = []
        if answer.thinking is not None:
            groups.append([{"text": answer.thinking, "thought": True}])
        groups.extend([{"text": piece}] for piece in split_text(self._text(answer), answer.deltas))
        if calls := self._calls(answer):
            groups.append(calls)
        if not groups:
            groups.append([{"text": ""}])
        return [
            sse_event(self._chunk(answer, rid, parts, last=n == len(groups) - 1))
            for n, parts in enumerate(groups)
        ]

    def error(self, status: int, message: str | None) -> dict[str, Any]:
        name, text = STATUSES.get(
            status, ("INTERNAL" if status >= 500 else "INVALID_ARGUMENT", f"HTTP {status}")
        )
        return {"error": {"code": status, "message": message or text, "status": name}}


def _result_text(response: Any) -> str:
    if isinstance(response, Mapping):
        for key in ("output", "content", "result"):
            value = response.get(key)
            if isinstance(value, str):
                return value
    return dumps(response)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
