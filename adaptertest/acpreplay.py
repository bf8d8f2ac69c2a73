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
- what follows the last response is written at once.

The client's session is followed: when it answers a recorded ``session/new`` with a
``session/load`` of a stored session (a resume), the recorded session id is replaced by
the loaded one in every later message, and the ``sessionId`` the recorded answer carried
is left out. With ``--meta RECORDING``, a session the client opens (or loads) with
``_meta`` (an agent's options for it, such as a native structured-output schema) is
played from that recording instead, from its answer to the same request on. Once
everything is played, the stand-in waits for the client to close its input and exits
with the recorded status. A client that does not send an awaited message
within ``--wait`` seconds (default 30) ends it with status 3 and a line on stderr saying
which message it was waiting for.

Standard library only, so it starts fast.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
from collections.abc import Sequence
from typing import Any

from adaptertest import recording

__all__ = ["DIVERGED", "main", "play", "recorded_messages"]

DIVERGED = 3
"""Exit status when the client did not send what the recording waits for."""
_EOF = object()


def recorded_messages(rec: recording.Recording) -> list[dict[str, Any]]:
    """The agent's JSON-RPC messages (non-JSON stdout lines are left out)."""
    messages: list[dict[str, Any]] = []
    for line in rec.stdout.split(b"\n"):
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict):
            messages.append(message)
    return messages


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
    if not renames:
        return message
    text = json.dumps(message, ensure_ascii=False)
    for old, new in renames.items():
        text = text.replace(json.dumps(old), json.dumps(new))
    renamed: dict[str, Any] = json.loads(text)
    return renamed


def _awaited(messages: Sequence[dict[str, Any]]) -> list[object]:
    """Per message: the id of the next recorded response (None after the last)."""
    awaited: list[object] = []
    upcoming: object = None
    for message in reversed(messages):
        if "method" not in message and "id" in message:
            upcoming = message["id"]
        awaited.append(upcoming)
    awaited.reverse()
    return awaited


def _opens_with_meta(asked: dict[str, Any]) -> bool:
    params = asked.get("params")
    opens = asked.get("method") in ("session/new", "session/load")
    return opens and isinstance(params, dict) and bool(params.get("_meta"))


def play(
    messages: Sequence[dict[str, Any]],
    source: Any,
    sink: Any,
    *,
    wait: float,
    meta: Sequence[dict[str, Any]] = (),
) -> str:
    """Play ``messages`` to ``sink`` against the client reading from ``source``; returns
    ``""`` or what the client failed to send. ``meta`` answers a session opened with
    ``_meta``, from its first message that waits for that request."""
    client = _Client(source, wait)
    renames: dict[str, str] = {}
    script, awaited = list(messages), _awaited(messages)
    switched = not meta
    index = 0
    while index < len(script):
        message, request_id = _rename(script[index], renames), awaited[index]
        asked = client.request(request_id) if request_id is not None else {}
        if asked is None:
            return f"the client's request id {request_id!r}"
        if not switched and _opens_with_meta(asked):
            switched = True
            script, awaited = list(meta), _awaited(meta)
            index = awaited.index(request_id) if request_id in awaited else len(script)
            continue
        index += 1
        if "method" not in message and "id" in message:
            result = message.get("result")
            if asked.get("method") == "session/load" and isinstance(result, dict):
                recorded = result.pop("sessionId", None)
                loaded = (asked.get("params") or {}).get("sessionId")
                if isinstance(recorded, str) and isinstance(loaded, str) and recorded != loaded:
                    renames[recorded] = loaded
        sink.write(json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n")
        sink.flush()
        if "method" in message and "id" in message and not client.response(message["id"]):
            return f"the client's answer to its request id {message['id']!r} ({message['method']})"
    client.wait_closed()
    return ""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: ``RECORDING [--meta RECORDING] [--wait SECONDS] [-- ignored arguments]``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if "--" in args:
        args = args[: args.index("--")]
    wait = 30.0
    if "--wait" in args:
        at = args.index("--wait")
        wait = float(args[at + 1])
        del args[at : at + 2]
    meta: list[dict[str, Any]] = []
    if "--meta" in args:
        at = args.index("--meta")
        meta = recorded_messages(recording.read(args[at + 1]))
        del args[at : at + 2]
    if len(args) != 1:
        usage = "usage: python -m adaptertest.acpreplay RECORDING [--meta RECORDING] [--wait S]"
        print(usage, file=sys.stderr)
        return 2
    rec = recording.read(args[0])
    sys.stderr.buffer.write(rec.stderr)
    sys.stderr.flush()
    missing = play(recorded_messages(rec), sys.stdin, sys.stdout, wait=wait, meta=meta)
    if missing:
        print(f"acpreplay: the replay diverged: waited {wait:g} s for {missing}", file=sys.stderr)
        return DIVERGED
    return rec.returncode if rec.returncode >= 0 else 1


if __name__ == "__main__":
    sys.exit(main())
