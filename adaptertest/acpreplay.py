"""``python -m adaptertest.acpreplay RECORDING``: a recorded ACP agent that answers.

``adaptertest replay`` plays a recording's output whatever its input; an Agent Client
Protocol agent is a conversation, so a replay of one has to wait for the client. This
stand-in plays the recorded agent's JSON-RPC messages (its stdout, one per line) in
order, and before each one it waits for what the recorded agent was waiting for:

- every message waits for the client's request that the next recorded response answers
  (the SDKs number requests from 0, so a driver making the recorded calls in the
  recorded order gets the recorded answers): a response waits for its own request, and
  the updates the agent sent while a prompt ran wait for that prompt, whose answer comes
  after them;
- a request of the agent's (``session/request_permission``) is written, then the
  client's response to it is awaited before anything later is played;
- what follows the last response is written at once;
- a line that is not a message (a drifted recording's broken line) is written straight
  after the line before it, and when it is not blank the lines before it are too: it
  may have been the answer they waited for.

Each line is written as recorded, byte for byte, in the pieces the recorded chunks cut it
into (with ``--realtime``, after the recorded pause before each). The client's session is
followed: when it answers a recorded ``session/new`` with a
``session/load`` of a stored session (a resume), the recorded session id is replaced by
the loaded one in every later message, and the ``sessionId`` the recorded answer carried
is left out (that answer is then written anew). With ``--meta RECORDING``, a session
the client opens (or loads) with ``_meta`` (an agent's options for it, such as a native
structured-output schema) is played from that recording instead, from its answer to the
same request on. Once everything is played, the
stand-in waits for the client to close its input and exits with the recorded status (or
dies by the recorded signal); output that ends inside a line ends there, without
waiting. ``--record-argv FILE`` writes the arguments after ``--`` to FILE as JSON. A
client that does not send an awaited message within ``--wait`` seconds (default 30) ends
it with status 3 and a line on stderr saying which message it was waiting for.

Standard library only, so it starts fast.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

from adaptertest import recording
from adaptertest.replay import finish

__all__ = ["DIVERGED", "Line", "main", "play", "play_lines", "recorded_lines", "recorded_messages"]

DIVERGED = 3
"""Exit status when the client did not send what the recording waits for."""
_EOF = object()


def recorded_messages(rec: recording.Recording) -> list[dict[str, Any]]:
    """The agent's JSON-RPC messages (non-JSON stdout lines are left out)."""
    return [line.message for line in recorded_lines(rec) if line.message is not None]


class Line:
    """One line of the agent's stdout: its bytes, the message they hold (None for a line
    that is not a JSON object) and the pieces it is written in (offset, pause before)."""

    __slots__ = ("data", "message", "pieces")

    def __init__(self, data: bytes, pieces: list[tuple[int, float]] | None = None) -> None:
        self.data = data
        self.pieces = pieces or [(0, 0.0)]
        self.message: dict[str, Any] | None = None
        try:
            message = json.loads(data)
        except ValueError:
            return
        if isinstance(message, dict):
            self.message = message


def recorded_lines(rec: recording.Recording, *, realtime: bool = False) -> list[Line]:
    """The recorded stdout line by line, each cut where a recorded chunk starts inside
    it, with the chunk's pause before it when ``realtime``."""
    starts: dict[int, float] = {}
    offset, clock = 0, 0.0
    for chunk in rec.chunks:
        if chunk.fd == recording.STDOUT and chunk.data:
            starts[offset] = max(0.0, chunk.t - clock) if realtime and offset else 0.0
            clock = chunk.t
            offset += len(chunk.data)
    data = rec.stdout
    lines: list[Line] = []
    start = 0
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end + 1
        pieces = [(at - start, pause) for at, pause in starts.items() if start < at < end]
        lines.append(Line(data[start:end], [(0, starts.get(start, 0.0)), *sorted(pieces)]))
        start = end
    return lines


class _Client:
    """The client's messages, read from stdin in a thread of their own."""

    def __init__(self, source: Any, wait: float) -> None:
        self._lines: queue.Queue[object] = queue.Queue()
        self._wait = wait
        self.requests: dict[object, dict[str, Any]] = {}
        self.responses: set[object] = set()
        self.closed = False
        threading.Thread(target=self._read, args=(source,), daemon=True).start()

    def _read(self, source: Any) -> None:
        for line in source:
            self._lines.put(line)
        self._lines.put(_EOF)

    def _take(self, timeout: float | None) -> bool:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            return False
        if line is _EOF:
            self.closed = True
            return True
        try:
            message = json.loads(line)  # type: ignore[arg-type]
        except ValueError:
            return True
        if isinstance(message, dict) and "id" in message:
            if "method" in message:
                self.requests[message["id"]] = message
            else:
                self.responses.add(message["id"])
        return True

    def request(self, request_id: object) -> dict[str, Any] | None:
        """The client's request ``request_id``, waited for; None if it never came."""
        while request_id not in self.requests:
            if self.closed or not self._take(self._wait):
                return None
        return self.requests[request_id]

    def response(self, request_id: object) -> bool:
        """Whether the client answered the agent's request ``request_id`` in time."""
        while request_id not in self.responses:
            if self.closed or not self._take(self._wait):
                return False
        return True

    def wait_closed(self) -> None:
        while not self.closed:
            self._take(None)


def _rename(message: dict[str, Any], renames: dict[str, str]) -> dict[str, Any]:
    text = json.dumps(message, ensure_ascii=False)
    for old, new in renames.items():
        text = text.replace(json.dumps(old), json.dumps(new))
    renamed: dict[str, Any] = json.loads(text)
    return renamed


_BEFORE = object()
"""Written straight after the line before it."""


def _awaited(lines: Sequence[Line]) -> list[object]:
    """Per line, the id of the client's request it waits for (None: none).

    A line that is not a message is written straight after the line before it. One that
    is not blank may have been the answer the lines before it waited for, which is then
    lost: those lines are written straight after the line before them too, rather than
    wait for a request the client cannot send without that answer.
    """
    awaited: list[object] = []
    upcoming: object = None
    for line in reversed(lines):
        message = line.message
        if message is not None and "method" not in message and "id" in message:
            upcoming = message["id"]
        elif message is None and line.data.strip():
            upcoming = _BEFORE
        awaited.append(upcoming if message is not None else _BEFORE)
    awaited.reverse()
    before: object = None
    for index, request_id in enumerate(awaited):
        if request_id is _BEFORE:
            awaited[index] = before
        before = awaited[index]
    return awaited


def _followed(message: dict[str, Any], asked: dict[str, Any], renames: dict[str, str]) -> bool:
    """Follow a ``session/load`` answering a recorded ``session/new``; whether the answer
    changed (it names no session then)."""
    result = message.get("result")
    if "method" in message or asked.get("method") != "session/load" or not isinstance(result, dict):
        return False
    recorded = result.pop("sessionId", None)
    loaded = (asked.get("params") or {}).get("sessionId")
    if isinstance(recorded, str) and isinstance(loaded, str) and recorded != loaded:
        renames[recorded] = loaded
    return recorded is not None


def _opens_with_meta(asked: dict[str, Any]) -> bool:
    params = asked.get("params")
    opens = asked.get("method") in ("session/new", "session/load")
    return opens and isinstance(params, dict) and bool(params.get("_meta"))


def play_lines(
    lines: Sequence[Line],
    source: Any,
    write: Any,
    *,
    wait: float,
    until_closed: bool = True,
    meta: Sequence[Line] = (),
) -> str:
    """Play ``lines`` through ``write`` (a callable taking bytes) against the client
    reading from ``source``; returns ``""`` or what the client failed to send. ``meta``
    answers a session opened with ``_meta``, from its first line that waits for that
    request. Then, if ``until_closed``, wait for the client to close its input."""
    client = _Client(source, wait)
    renames: dict[str, str] = {}
    script, awaited = list(lines), _awaited(lines)
    switched = not meta
    index = 0
    while index < len(script):
        line, request_id = script[index], awaited[index]
        asked = client.request(request_id) if request_id is not None else {}
        if asked is None:
            return f"the client's request id {request_id!r}"
        if not switched and _opens_with_meta(asked):
            switched = True
            script, awaited = list(meta), _awaited(meta)
            index = awaited.index(request_id) if request_id in awaited else len(script)
            continue
        index += 1
        message, changed = line.message, False
        if message is not None:
            if renames:
                message, changed = _rename(message, renames), True
            changed = _followed(message, asked, renames) or changed
        if message is not None and changed:
            text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
            write(text.encode() + b"\n")
        else:
            bounds = [offset for offset, _ in line.pieces[1:]] + [len(line.data)]
            for (offset, pause), until in zip(line.pieces, bounds, strict=True):
                if pause:
                    time.sleep(pause)
                write(line.data[offset:until])
        asks = message is not None and "method" in message and "id" in message
        if asks and message is not None and not client.response(message["id"]):
            return f"the client's answer to its request id {message['id']!r} ({message['method']})"
    if until_closed:
        client.wait_closed()
    return ""


def _lines(messages: Sequence[dict[str, Any]]) -> list[Line]:
    return [
        Line(json.dumps(m, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
        for m in messages
    ]


def play(
    messages: Sequence[dict[str, Any]],
    source: Any,
    sink: Any,
    *,
    wait: float,
    meta: Sequence[dict[str, Any]] = (),
) -> str:
    """Play ``messages`` to the text ``sink`` against the client reading from ``source``;
    returns ``""`` or what the client failed to send. ``meta`` answers a session opened
    with ``_meta``, from its first message that waits for that request."""

    def write(data: bytes) -> None:
        sink.write(data.decode())
        sink.flush()

    return play_lines(_lines(messages), source, write, wait=wait, meta=_lines(meta))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: ``RECORDING [--meta RECORDING] [--wait SECONDS] [--realtime]
    [--record-argv FILE] [-- ignored arguments]``."""
    args = list(sys.argv[1:] if argv is None else argv)
    ignored: list[str] = []
    if "--" in args:
        ignored = args[args.index("--") + 1 :]
        args = args[: args.index("--")]
    wait = 30.0
    if "--wait" in args:
        at = args.index("--wait")
        wait = float(args[at + 1])
        del args[at : at + 2]
    witness = ""
    if "--record-argv" in args:
        at = args.index("--record-argv")
        witness = args[at + 1]
        del args[at : at + 2]
    realtime = "--realtime" in args
    if realtime:
        args.remove("--realtime")
    meta: list[Line] = []
    if "--meta" in args:
        at = args.index("--meta")
        meta = recorded_lines(recording.read(args[at + 1]), realtime=realtime)
        del args[at : at + 2]
    if len(args) != 1:
        print(
            "usage: python -m adaptertest.acpreplay RECORDING [--meta RECORDING] "
            "[--wait SECONDS] [--realtime] [--record-argv FILE]",
            file=sys.stderr,
        )
        return 2
    if witness:
        with open(witness, "w", encoding="utf-8") as file:
            file.write(json.dumps(ignored) + "\n")
    rec = recording.read(args[0])
    sys.stderr.buffer.write(rec.stderr)
    sys.stderr.flush()
    out = sys.stdout.buffer

    def write(data: bytes) -> None:
        out.write(data)
        out.flush()

    lines = recorded_lines(rec, realtime=realtime)
    # Output that ends inside a line ends there: the agent is gone mid-message.
    whole = not lines or lines[-1].data.endswith(b"\n")
    missing = play_lines(lines, sys.stdin, write, wait=wait, until_closed=whole, meta=meta)
    if missing:
        print(f"acpreplay: the replay diverged: waited {wait:g} s for {missing}", file=sys.stderr)
        return DIVERGED
    return finish(rec.returncode)


if __name__ == "__main__":
    sys.exit(main())
