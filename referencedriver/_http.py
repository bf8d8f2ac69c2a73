"""The reference driver's network mode: a real model API over HTTP, a real shell tool.

With ``ReferenceConfig(model_url=...)`` a run talks to an Anthropic Messages endpoint
(``POST {model_url}/v1/messages``, streamed as server-sent events), the way an agent
that calls its model itself would: it offers one tool, ``run_command``, runs each call
of it as ``/bin/sh -c COMMAND`` in the run's working directory, sends the results back
and repeats until the model answers without a tool call. The conversation of each
session is kept in ``{home}/sessions/{id}.json``, so a checkpoint resumes it from a new
driver instance or a new process.

The HTTP client is the standard library's (``http.client``) on a worker thread, so the
driver needs nothing beyond its base install and runs the same on asyncio and trio; a
cancelled or timed-out run shuts the connection down, which releases the thread.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import subprocess
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

import anyio
import anyio.to_thread

from driver import (
    FailureCode,
    RunEvent,
    RunEventType,
    RunFailure,
    StreamKind,
    StreamPayload,
    TranscriptItem,
    TranscriptKind,
    Usage,
)

__all__ = [
    "MAX_MODEL_TURNS",
    "TOOL_NAME",
    "Conversation",
    "Emitter",
    "ModelFault",
    "converse",
    "load_history",
    "save_history",
]

TOOL_NAME = "run_command"
"""The one tool the network mode offers: run a shell command in the working directory."""

MAX_MODEL_TURNS = 16
"""Model requests one run may make (tool round trips included)."""

_RETRIED_STATUSES = frozenset({429, 503, 529})
_MAX_RETRY_WAIT = 5.0
_READ_SIZE = 65536

_TOOLS = [
    {
        "name": TOOL_NAME,
        "description": "Run one shell command in the working directory; returns its output.",
        "input_schema": {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "The command line"}},
            "required": ["command"],
        },
    }
]


class Emitter(Protocol):
    """Where a run's stream payloads, run events and transcript items go."""

    def event(self, event: RunEvent) -> None: ...

    def item(self, item: TranscriptItem) -> None: ...

    def stream(self, payload: StreamPayload) -> None: ...


class ModelFault(Exception):
    """The model API failed the run: an error status, or a stream that was cut."""

    def __init__(self, message: str, *, status: int = 0, retry_after: float | None = None):
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after

    @property
    def transient(self) -> bool:
        return self.status in _RETRIED_STATUSES or self.status == 0


@dataclass
class Conversation:
    """What one run sent and got: the message history and the usage of this run."""

    messages: list[dict[str, Any]]
    output: str = ""
    usage: Usage = field(default_factory=Usage)
    model: str = ""


# -- sessions ------------------------------------------------------------------------------


def _session_file(home: str, session_id: str) -> Path:
    safe = "".join(c for c in session_id if c.isalnum() or c in "-_") or "session"
    return Path(home or ".") / "sessions" / f"{safe}.json"


def load_history(home: str, session_id: str) -> list[dict[str, Any]] | None:
    """The stored messages of a session; None when there is no such session."""
    try:
        data = json.loads(_session_file(home, session_id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    messages = data.get("messages") if isinstance(data, dict) else None
    return messages if isinstance(messages, list) else None


def save_history(home: str, session_id: str, messages: list[dict[str, Any]]) -> None:
    path = _session_file(home, session_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"messages": messages}), encoding="utf-8")


def new_session_id() -> str:
    return uuid.uuid4().hex


# -- HTTP ----------------------------------------------------------------------------------


class _Request:
    """One streamed POST on a worker thread; :meth:`close` releases a blocked read."""

    def __init__(self, url: str, body: bytes, headers: Mapping[str, str]) -> None:
        parts = urlsplit(url)
        self._path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self._conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80)
        self._body = body
        self._headers = dict(headers)
        self._response: http.client.HTTPResponse | None = None

    def _open(self) -> tuple[int, str, bytes]:
        self._conn.request("POST", self._path, body=self._body, headers=self._headers)
        response = self._conn.getresponse()
        self._response = response
        retry_after = response.getheader("retry-after") or ""
        body = response.read() if response.status >= 400 else b""
        return response.status, retry_after, body

    async def open(self) -> tuple[int, str, bytes]:
        """Send the request; the status, the retry-after header and an error's body."""
        return await anyio.to_thread.run_sync(self._open, abandon_on_cancel=True)

    async def read(self) -> bytes:
        """The next bytes of the body; b"" at its end."""
        response = self._response
        assert response is not None
        return await anyio.to_thread.run_sync(response.read1, _READ_SIZE, abandon_on_cancel=True)

    def close(self) -> None:
        sock = self._conn.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self._conn.close()


def _events(buffer: bytearray) -> Iterator[dict[str, Any]]:
    """Complete server-sent events in ``buffer`` (taken out of it), their data parsed."""
    while True:
        end = buffer.find(b"\n\n")
        if end < 0:
            return
        block = bytes(buffer[:end])
        del buffer[: end + 2]
        data = "\n".join(
            line[5:].lstrip()
            for line in block.decode("utf-8").split("\n")
            if line.startswith("data:")
        )
        if data:
            event = json.loads(data)
            if isinstance(event, dict):
                yield event


def _error_text(status: int, body: bytes) -> str:
    """The API's own error message for a failed request (never the raw body)."""
    message = ""
    with contextlib.suppress(ValueError, UnicodeDecodeError):
        data = json.loads(body)
        error = data.get("error") if isinstance(data, dict) else None
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            message = error["message"]
    return f"the model API answered HTTP {status}" + (f": {message}" if message else "")


def _retry_after(header: str) -> float | None:
    try:
        return max(0.0, float(header))
    except ValueError:
        return None


# -- one model turn ------------------------------------------------------------------------


@dataclass
class _Turn:
    """One streamed answer as it arrives: its blocks, usage and stop reason."""

    out: Emitter
    index: int
    attempt: int = 0
    blocks: dict[int, dict[str, Any]] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)
    stop_reason: str = ""
    model: str = ""
    done: bool = False

    def _id(self, slot: int) -> str:
        # A retried request streams its blocks again: they are new messages, not reopened.
        retry = f"-retry{self.attempt}" if self.attempt else ""
        return f"turn{self.index}-block{slot}{retry}"

    def feed(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "message_start":
            message = event.get("message") or {}
            self.model = str(message.get("model", ""))
            self.usage.update(message.get("usage") or {})
        elif kind == "content_block_start":
            self._start(int(event.get("index", 0)), dict(event.get("content_block") or {}))
        elif kind == "content_block_delta":
            self._delta(int(event.get("index", 0)), dict(event.get("delta") or {}))
        elif kind == "content_block_stop":
            self._stop(int(event.get("index", 0)))
        elif kind == "message_delta":
            self.stop_reason = str((event.get("delta") or {}).get("stop_reason") or "")
            self.usage.update(event.get("usage") or {})
        elif kind == "message_stop":
            self.done = True
        elif kind == "error":
            error = event.get("error") or {}
            raise ModelFault(f"the model stream reported an error: {error.get('message', '')}")

    def _start(self, slot: int, block: dict[str, Any]) -> None:
        kind = block.get("type")
        self.blocks[slot] = {"type": kind, "text": "", "json": "", "block": block, "open": True}
        ident = self._id(slot)
        if kind == "text":
            self.out.stream(StreamPayload(kind=StreamKind.TEXT_START, message_id=ident))
        elif kind == "thinking":
            self.out.stream(StreamPayload(kind=StreamKind.REASONING_START, message_id=ident))
        elif kind == "tool_use":
            self.out.stream(
                StreamPayload(
                    kind=StreamKind.TOOL_CALL_START,
                    tool_call_id=str(block.get("id", "")),
                    name=str(block.get("name", "")),
                )
            )

    def _delta(self, slot: int, delta: dict[str, Any]) -> None:
        block = self.blocks.get(slot)
        if block is None:
            return
        ident = self._id(slot)
        kind = delta.get("type")
        if kind == "text_delta":
            text = str(delta.get("text", ""))
            block["text"] += text
            self.out.stream(
                StreamPayload(kind=StreamKind.TEXT_CONTENT, message_id=ident, delta=text)
            )
        elif kind == "thinking_delta":
            text = str(delta.get("thinking", ""))
            block["text"] += text
            self.out.stream(
                StreamPayload(kind=StreamKind.REASONING_CONTENT, message_id=ident, delta=text)
            )
        elif kind == "input_json_delta":
            part = str(delta.get("partial_json", ""))
            block["json"] += part
            self.out.stream(
                StreamPayload(
                    kind=StreamKind.TOOL_CALL_ARGS,
                    tool_call_id=str(block["block"].get("id", "")),
                    delta=part,
                )
            )

    def _stop(self, slot: int) -> None:
        block = self.blocks.get(slot)
        if block is None or not block["open"]:
            return
        block["open"] = False
        ident = self._id(slot)
        if block["type"] == "text":
            self.out.stream(StreamPayload(kind=StreamKind.TEXT_END, message_id=ident))
        elif block["type"] == "thinking":
            self.out.stream(StreamPayload(kind=StreamKind.REASONING_END, message_id=ident))
        elif block["type"] == "tool_use":
            self.out.stream(
                StreamPayload(
                    kind=StreamKind.TOOL_CALL_END, tool_call_id=str(block["block"].get("id", ""))
                )
            )

    def close_open(self) -> None:
        """End every block a cut stream left open, so no lifecycle outlives the request."""
        for slot in sorted(self.blocks):
            self._stop(slot)

    def content(self) -> list[dict[str, Any]]:
        """The answer as message content blocks, for the history."""
        content: list[dict[str, Any]] = []
        for slot in sorted(self.blocks):
            block = self.blocks[slot]
            if block["type"] == "text":
                content.append({"type": "text", "text": block["text"]})
            elif block["type"] == "thinking":
                signature = block["block"].get("signature", "")
                content.append(
                    {"type": "thinking", "thinking": block["text"], "signature": signature}
                )
            elif block["type"] == "tool_use":
                content.append(
                    {
                        "type": "tool_use",
                        "id": block["block"].get("id", ""),
                        "name": block["block"].get("name", ""),
                        "input": json.loads(block["json"] or "{}"),
                    }
                )
        return content

    def token_usage(self) -> Usage:
        cached = int(self.usage.get("cache_read_input_tokens", 0))
        created = int(self.usage.get("cache_creation_input_tokens", 0))
        return Usage(
            input_tokens=int(self.usage.get("input_tokens", 0)) + cached + created,
            cached_input_tokens=cached,
            output_tokens=int(self.usage.get("output_tokens", 0)),
        )


async def _ask(
    url: str, api_key: str, body: dict[str, Any], out: Emitter, index: int, attempt: int
) -> _Turn:
    """One model request, streamed; :class:`ModelFault` on an error status or a cut."""
    request = _Request(
        url.rstrip("/") + "/v1/messages",
        json.dumps(body).encode("utf-8"),
        {
            "content-type": "application/json",
            "x-api-key": api_key,
            "anthropic-version": "2023-06-01",
        },
    )
    turn = _Turn(out, index, attempt)
    try:
        try:
            status, retry_after, error_body = await request.open()
        except (OSError, http.client.HTTPException) as exc:
            raise ModelFault(f"cannot reach the model API: {type(exc).__name__}") from None
        if status >= 400:
            raise ModelFault(
                _error_text(status, error_body),
                status=status,
                retry_after=_retry_after(retry_after),
            )
        buffer = bytearray()
        while not turn.done:
            try:
                chunk = await request.read()
            except (OSError, http.client.HTTPException):
                chunk = b""
            if not chunk:
                break
            buffer += chunk
            for event in _events(buffer):
                turn.feed(event)
        if not turn.done:
            raise ModelFault("the model stream was cut before the answer ended")
    except ModelFault:
        turn.close_open()
        raise
    finally:
        request.close()
    return turn


async def _ask_with_retries(
    url: str, api_key: str, body: dict[str, Any], out: Emitter, index: int, retries: int
) -> _Turn:
    """:func:`_ask`, retrying a rate limit, an overload, an outage or a cut stream."""
    attempt = 0
    while True:
        try:
            return await _ask(url, api_key, body, out, index, attempt)
        except ModelFault as fault:
            if not fault.transient or attempt >= retries:
                raise
            wait = fault.retry_after if fault.retry_after is not None else 0.2 * 2**attempt
            out.event(
                RunEvent(
                    type=RunEventType.LIFECYCLE,
                    text=f"retrying the model request ({fault})",
                    metadata={"attempt": str(attempt + 1)},
                )
            )
            await anyio.sleep(min(wait, _MAX_RETRY_WAIT))
            attempt += 1


# -- the tool ------------------------------------------------------------------------------


async def _run_tool(command: str, cwd: str, env: Mapping[str, str]) -> tuple[str, bool]:
    """Run ``command`` with ``/bin/sh -c`` in ``cwd``; its output and whether it failed."""
    try:
        done = await anyio.run_process(
            ["/bin/sh", "-c", command],
            cwd=cwd or None,
            env={**os.environ, **env},
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except OSError as exc:
        return f"cannot run the command: {exc}", True
    text = (done.stdout + done.stderr).decode("utf-8", "replace")
    if done.returncode != 0:
        text += f"\n(exit code {done.returncode})"
    return text, done.returncode != 0


async def _tool_results(
    turn: _Turn, cwd: str, env: Mapping[str, str], out: Emitter
) -> list[dict[str, Any]]:
    """Run every tool call of ``turn``; the tool_result blocks for the next request."""
    results: list[dict[str, Any]] = []
    for block in turn.content():
        if block["type"] != "tool_use":
            continue
        call_id = str(block["id"])
        arguments = block["input"] if isinstance(block["input"], dict) else {}
        out.item(
            TranscriptItem(
                kind=TranscriptKind.TOOL_CALL,
                tool_use_id=call_id,
                tool_name=str(block["name"]),
                input=dict(arguments),
            )
        )
        command = arguments.get("command")
        if block["name"] != TOOL_NAME or not isinstance(command, str):
            text, failed = f"unknown tool {block['name']!r} or no command", True
        else:
            text, failed = await _run_tool(command, cwd, env)
        out.stream(
            StreamPayload(
                kind=StreamKind.TOOL_CALL_RESULT,
                tool_call_id=call_id,
                result={"output": text, "is_error": failed},
            )
        )
        out.item(
            TranscriptItem(
                kind=TranscriptKind.TOOL_RESULT, tool_use_id=call_id, text=text, is_error=failed
            )
        )
        results.append(
            {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": failed}
        )
    return results


def _add(total: Usage, more: Usage) -> Usage:
    return Usage(
        input_tokens=total.input_tokens + more.input_tokens,
        cached_input_tokens=total.cached_input_tokens + more.cached_input_tokens,
        output_tokens=total.output_tokens + more.output_tokens,
    )


async def converse(
    *,
    url: str,
    api_key: str,
    model: str,
    system: str,
    history: list[dict[str, Any]],
    prompt: str,
    cwd: str,
    env: Mapping[str, str],
    out: Emitter,
    retries: int,
) -> Conversation:
    """Send ``prompt`` after ``history`` and run tool calls until the model answers.

    Emits the stream payloads and transcript items as they happen. A rate limit, an
    overload, an outage or a cut stream is retried up to ``retries`` times; raises
    :class:`ModelFault` when the model API fails for good.
    """
    talk = Conversation(messages=[*history, {"role": "user", "content": prompt}])
    for index in range(MAX_MODEL_TURNS):
        body = {
            "model": model,
            "max_tokens": 8192,
            "stream": True,
            "system": system,
            "messages": talk.messages,
            "tools": _TOOLS,
        }
        turn = await _ask_with_retries(url, api_key, body, out, index, retries)
        talk.model = turn.model or talk.model
        talk.usage = _add(talk.usage, turn.token_usage())
        content = turn.content()
        talk.messages.append({"role": "assistant", "content": content})
        for block in content:
            if block["type"] == "thinking":
                out.item(TranscriptItem(kind=TranscriptKind.THINKING, text=block["thinking"]))
        text = "".join(b["text"] for b in content if b["type"] == "text")
        if text:
            out.item(TranscriptItem(kind=TranscriptKind.ASSISTANT, text=text))
        if turn.stop_reason != "tool_use":
            talk.output = text
            return talk
        talk.messages.append({"role": "user", "content": await _tool_results(turn, cwd, env, out)})
    raise ModelFault(f"the model asked for tools {MAX_MODEL_TURNS} times without answering")


def fault_failure(fault: ModelFault) -> RunFailure:
    """The run failure for a model API that failed for good."""
    return RunFailure(code=FailureCode.AGENT_ERROR, message=str(fault))
