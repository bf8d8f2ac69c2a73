"""The JSON-RPC lines between the driver and an agent, read and written by the driver.

The SDK's own stdio transport logs a line it cannot parse and reads on, and its
connection drops a response whose id it never asked: the request that line answered then
waits forever. :class:`WireTransport` is the SDK's message transport over the agent's
pipes that treats both as the end of the connection, naming the line (its number in the
agent's stdout and its start), so the run fails at once and says why. A line that does not
start with ``{`` (a stray print) is skipped, as the SDK does; so is a ``session/update``
the SDK's models cannot parse (a kind of a later protocol version): ACP asks a client to
ignore what it does not know, and the SDK would log each one as an error. An update that
arrives after its session's prompt was answered belongs to no turn (an agent sends a
turn's updates before its answer) and is skipped too, here, in the order the lines came:
whether the run would map it depended on which of two tasks ran first.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from acp import schema
from pydantic import ValidationError

__all__ = ["WireTransport"]

_SHOWN = 120


def _shown(line: bytes) -> str:
    text = line.strip().decode("utf-8", "backslashreplace")
    return text if len(text) <= _SHOWN else f"{text[:_SHOWN]}... ({len(line.strip())} bytes)"


def _session(message: dict[str, Any]) -> object:
    params = message.get("params")
    return params.get("sessionId") if isinstance(params, dict) else None


def _unparsable_update(message: dict[str, Any]) -> bool:
    """A ``session/update`` the SDK's models reject (an update kind of a later protocol
    version, say): the SDK would log it as an error with a traceback and drop it."""
    if message.get("method") != "session/update" or "id" in message:
        return False
    try:
        schema.SessionNotification.model_validate(message.get("params"))
    except ValidationError:
        return True
    return False


class WireTransport:
    """A message transport (``send``, ``receive``, ``close``) over an agent's stdin and
    stdout; ``problem`` says what ended it when the agent broke the protocol."""

    def __init__(
        self,
        writer: asyncio.StreamWriter,
        reader: asyncio.StreamReader,
        on_broken: Callable[[bytes], None],
        on_skipped: Callable[[dict[str, Any]], None],
    ) -> None:
        self._writer = writer
        self._reader = reader
        self._on_broken = on_broken
        """Gets the line that broke the protocol, before the connection ends."""
        self._on_skipped = on_skipped
        """Gets an update the SDK cannot parse, which is not handed to it."""
        self._lock = asyncio.Lock()
        self._asked: set[object] = set()
        self._prompts: dict[object, object] = {}
        """Open ``session/prompt`` requests: id to session."""
        self._answered: set[object] = set()
        """Sessions whose last prompt is answered: a later update belongs to no turn."""
        self.lines = 0
        """Lines read from the agent's stdout so far."""
        self.problem = ""

    async def send(self, message: dict[str, Any]) -> None:
        if "method" in message and "id" in message:
            self._asked.add(message["id"])  # before it is written: its answer may be quick
            if message["method"] == "session/prompt":
                session = _session(message)
                self._prompts[message["id"]] = session
                self._answered.discard(session)
        data = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        async with self._lock:
            self._writer.write(data)
            await self._writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        """The next message; None at the end of the output or once the agent broke the
        protocol."""
        while not self.problem:
            line = await self._line()
            if not line:
                return None
            self.lines += 1
            text = line.strip()
            if not text.startswith(b"{"):
                continue
            try:  # strict UTF-8: json.loads would let an encoded surrogate through
                message = json.loads(text.decode("utf-8"))
            except ValueError:
                message = None
            if not isinstance(message, dict):
                cut = "" if line.endswith(b"\n") else ", cut off by the end of the output"
                self.problem = f"line {self.lines} of its output is not JSON{cut}: {_shown(line)}"
                self._on_broken(line)
                return None
            if "method" not in message and "id" in message:
                if message["id"] not in self._asked:
                    self.problem = (
                        f"line {self.lines} of its output answers request id "
                        f"{json.dumps(message['id'])}, which the client is not waiting for: "
                        f"{_shown(line)}"
                    )
                    self._on_broken(line)
                    return None
                self._asked.discard(message["id"])
                if message["id"] in self._prompts:
                    self._answered.add(self._prompts.pop(message["id"]))
            late = message.get("method") == "session/update" and _session(message) in self._answered
            if late or _unparsable_update(message):
                self._on_skipped(message)
                continue
            return message
        return None

    async def _line(self) -> bytes:
        parts: list[bytes] = []
        while True:
            try:
                parts.append(await self._reader.readuntil(b"\n"))
            except asyncio.LimitOverrunError as exc:
                parts.append(await self._reader.readexactly(exc.consumed))
                continue
            except asyncio.IncompleteReadError as exc:
                parts.append(exc.partial)
            return b"".join(parts)

    async def close(self) -> None:
        if not self._writer.is_closing():
            self._writer.close()
