"""What every protocol module provides: matching a path, reading a request, writing an
answer (streamed or whole) and an error body."""

from __future__ import annotations

import dataclasses
import json
import secrets
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from typing import Any

from adaptertest.emulator._recording import Protocol
from adaptertest.emulator._scenario import ToolCall, TurnUsage

__all__ = ["Answer", "Route", "Texts", "Wire", "make_id", "split_text", "text_of"]


@dataclasses.dataclass(frozen=True)
class Route:
    """What a request path asks for."""

    kind: str
    """``generate`` (a model answer), or a side endpoint such as ``count_tokens``."""
    model: str = ""
    """The model named in the path (Gemini); empty when the body names it."""
    stream: bool | None = None
    """Whether the path asks for a stream; None: the body's ``stream`` says."""


@dataclasses.dataclass
class Texts:
    """The texts a request carries, by who wrote them, in order."""

    system: list[str] = dataclasses.field(default_factory=list)
    user: list[str] = dataclasses.field(default_factory=list)
    assistant: list[str] = dataclasses.field(default_factory=list)
    """The earlier model turns the request sends back (its history)."""
    tool_results: list[str] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class Answer:
    """One model answer, ready for a protocol to put on the wire."""

    model: str
    text: str
    deltas: int
    thinking: str | None
    tool_calls: list[ToolCall]
    usage: TurnUsage
    structured: bool = False
    """Whether ``value`` is the structured answer, given by the protocol's own mechanism."""
    value: Any = None


def make_id(prefix: str, size: int = 24) -> str:
    """A fresh id in the style of the vendor's (``msg_...``, ``toolu_...``, ``resp_...``)."""
    return prefix + secrets.token_hex(size // 2)


def split_text(text: str, deltas: int) -> list[str]:
    """``text`` in ``deltas`` pieces of near-equal length (fewer when it is shorter)."""
    if not text:
        return []
    count = max(1, min(deltas, len(text)))
    size, extra = divmod(len(text), count)
    pieces, start = [], 0
    for index in range(count):
        end = start + size + (1 if index < extra else 0)
        pieces.append(text[start:end])
        start = end
    return pieces


def text_of(value: Any) -> Iterator[str]:
    """Every ``text`` string in a content value (a string, a block, a list of them)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from text_of(item)
    elif isinstance(value, Mapping):
        text = value.get("text")
        if isinstance(text, str):
            yield text


def dumps(value: Any) -> str:
    """Compact JSON, as the APIs send arguments."""
    return json.dumps(value, separators=(",", ":"))


class Wire(ABC):
    """One model API."""

    name: Protocol

    @abstractmethod
    def route(self, method: str, path: str) -> Route | None:
        """What the path asks for; None when it is not this protocol's."""

    def stream(self, route: Route, body: Mapping[str, Any]) -> bool:
        """Whether the answer is a stream."""
        return route.stream if route.stream is not None else body.get("stream") is True

    def model(self, route: Route, body: Mapping[str, Any]) -> str:
        """The model the request names."""
        model = body.get("model")
        return route.model or (model if isinstance(model, str) else "")

    @abstractmethod
    def schema(self, body: Mapping[str, Any]) -> dict[str, Any] | None:
        """The JSON Schema the request asks the answer to follow (the CLI's structured
        output mechanism); None when it asks for none."""

    def side(self, route: Route, body: Mapping[str, Any], headers: Mapping[str, str]) -> bool:
        """Whether the request is a side request by its own look (endpoint, shape, client);
        ``headers`` have lower-case names."""
        return route.kind != "generate"

    def side_answer(self, route: Route, body: Mapping[str, Any]) -> dict[str, Any]:
        """The answer to a side endpoint (token counting). A protocol whose :meth:`route`
        names only ``generate`` has none, so reaching this is a routing bug."""
        raise LookupError(
            f"{type(self).__name__} routed a request to {route.kind!r} but answers no such endpoint"
        )

    @abstractmethod
    def texts(self, body: Mapping[str, Any]) -> Texts:
        """The texts the request carries: system, user, earlier model turns, tool results."""

    @abstractmethod
    def events(self, answer: Answer, body: Mapping[str, Any]) -> list[bytes]:
        """The answer as a stream, one framed event per item."""

    @abstractmethod
    def whole(self, answer: Answer, body: Mapping[str, Any]) -> dict[str, Any]:
        """The answer as one JSON body."""

    @abstractmethod
    def error(self, status: int, message: str | None) -> dict[str, Any]:
        """The protocol's error body for ``status`` (its usual message when None)."""

    def tokens(self, body: Mapping[str, Any]) -> int:
        """A token count for the request: about four characters a token."""
        return max(1, len(dumps(body)) // 4)
