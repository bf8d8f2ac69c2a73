"""The JSON-RPC lines between the driver and an agent, read and written by the driver.

The SDK's own stdio transport logs a line it cannot parse and reads on, and its
connection drops a response whose id it never asked: the request that line answered then
waits forever. :class:`WireTransport` is the SDK's message transport over the agent's
pipes that treats both as the end of the connection, naming the line (its number in the
agent's stdout and its start), so the run fails at once and says why. A line that does not
start with ``{`` (a stray print) is skipped, as the SDK does.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

__all__ = ["WireTransport"]

_SHOWN = 120


def _shown(line: bytes) -> str:
    text = line.strip().decode("utf-8", "backslashreplace")
    return text if len(text) <= _SHOWN else f"{text[:_SHOWN]}... ({len(line.strip())} bytes)"


class WireTransport:
    """A message transport (``send``, ``receive``, ``close``) over an agent's stdin and
    stdout; ``problem`` says what ended it when the agent broke the protocol."""

    def __init__(self, writer: asyncio.StreamWriter, reader: asyncio.StreamReader) -> None:
        self._writer = writer
        self._reader = reader
        self._lock = asyncio.Lock()
        self._asked: set[object] = set()
        self.lines = 0
        """Lines read from the agent's stdout so far."""
        self.problem = ""

    async def send(self, message: dict[str, Any]) -> None:
        if "method" in message and "id" in message:
            self._asked.add(message["id"])  # before it is written: its answer may be quick
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
            try:
                message = json.loads(text)
            except ValueError:
                message = None
            if not isinstance(message, dict):
                cut = "" if line.endswith(b"\n") else ", cut off by the end of the output"
                self.problem = f"line {self.lines} of its output is not JSON{cut}: {_shown(line)}"
                return None
            if "method" not in message and "id" in message:
                if message["id"] not in self._asked:
                    self.problem = (
                        f"line {self.lines} of its output answers request id "
                        f"{json.dumps(message['id'])}, which the client is not waiting for: "
                        f"{_shown(line)}"
                    )
                    return None
                self._asked.discard(message["id"])
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
