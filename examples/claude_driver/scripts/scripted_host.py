#!/usr/bin/env python3
"""A scripted host for recording Claude Code's two-way mode with ``adaptertest record``.

``adaptertest record`` runs its command with stdin closed, so it cannot answer the CLI's
permission prompts itself. This program can: it starts ``claude -p`` (``--program``)
with the two-way flags and the arguments after ``--``, writes the ``initialize`` control request
and the prompt as a stream-json user message on its stdin, answers each ``can_use_tool``
request with the next scripted answer, and closes stdin after the turn's ``result`` line.
It copies the CLI's stdout to its own unchanged (that is what the recording keeps as
stdout), and writes every line it sent to the CLI on stderr after ``> ``, so the
recording holds both sides of the conversation in order. It exits as the CLI did.

Answers, one per permission prompt, in order: ``allow``, ``deny`` (the turn goes on),
``abort`` (deny with ``interrupt``: the CLI ends the turn), ``answer=TEXT`` (allow a
question with TEXT as the answer to each of its questions) and ``silent`` (never answer;
stdin is closed after ``--silence`` seconds, which the CLI reports as a failed tool).

``--version`` prints the CLI's own version, so the recording's header names the CLI
release (``--cli claude``). Example (``docs/claude-control-protocol.md`` has the commands
behind the recordings)::

    scripted_host.py --prompt "Write made.txt" allow -- --model claude-sonnet-4-5
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import threading
from typing import IO, Any

_ANSWERS = ("allow", "deny", "abort", "silent")
TWO_WAY_FLAGS = (
    "-p",
    "--output-format",
    "stream-json",
    "--verbose",
    "--input-format",
    "stream-json",
    "--permission-prompt-tool",
    "stdio",
)
"""What the driver's two-way mode passes, before the model and the extra arguments."""


def _answer(spec: str, request_id: str, body: dict[str, Any]) -> dict[str, Any] | None:
    """The ``control_response`` for one ``can_use_tool`` request, or None for ``silent``."""
    tool_input = body.get("input") if isinstance(body.get("input"), dict) else {}
    assert isinstance(tool_input, dict)
    if spec == "silent":
        return None
    if spec == "allow":
        decision: dict[str, Any] = {"behavior": "allow", "updatedInput": tool_input}
    elif spec.startswith("answer="):
        text = spec.removeprefix("answer=")
        questions = tool_input.get("questions")
        asked = [
            q["question"]
            for q in (questions if isinstance(questions, list) else [])
            if isinstance(q, dict) and isinstance(q.get("question"), str)
        ]
        answers = dict.fromkeys(asked, text)
        decision = {"behavior": "allow", "updatedInput": {**tool_input, "answers": answers}}
    else:
        decision = {"behavior": "deny", "message": "The host did not allow this"}
        if spec == "abort":
            decision["interrupt"] = True
    return {
        "type": "control_response",
        "response": {"subtype": "success", "request_id": request_id, "response": decision},
    }


class _Host:
    def __init__(self, process: subprocess.Popen[bytes], answers: list[str], silence: float):
        assert process.stdin is not None
        self._stdin: IO[bytes] = process.stdin
        self._answers = answers
        self._silence = silence
        self._lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        line = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        with self._lock:
            if self._stdin.closed:
                return
            sys.stderr.buffer.write(b"> " + line.encode() + b"\n")
            sys.stderr.buffer.flush()
            self._stdin.write(line.encode() + b"\n")
            self._stdin.flush()

    def close(self) -> None:
        with self._lock:
            if not self._stdin.closed:
                self._stdin.close()

    def on_line(self, line: dict[str, Any]) -> None:
        kind = line.get("type")
        if kind == "result":
            self.close()
            return
        request = line.get("request")
        if kind != "control_request" or not isinstance(request, dict):
            return
        if request.get("subtype") != "can_use_tool":
            return
        spec = self._answers.pop(0) if self._answers else "deny"
        reply = _answer(spec, str(line.get("request_id", "")), request)
        if reply is not None:
            self.send(reply)
        else:
            threading.Timer(self._silence, self.close).start()


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    split = args.index("--") if "--" in args else len(args)
    own, extra = args[:split], args[split + 1 :]
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[1])
    parser.add_argument("--program", default="claude")
    parser.add_argument("--version", action="store_true", help="print the CLI's version")
    parser.add_argument("--prompt", default="")
    parser.add_argument("--silence", type=float, default=3.0)
    parser.add_argument("answers", nargs="*", help="allow, deny, abort, silent or answer=TEXT")
    options = parser.parse_args(own)
    if options.version:
        return subprocess.run([options.program, "--version"], check=False).returncode
    answers: list[str] = list(options.answers)
    bad = [a for a in answers if a not in _ANSWERS and not a.startswith("answer=")]
    if bad or not options.prompt:
        parser.error(f"--prompt TEXT, then answers: {', '.join(_ANSWERS)} or answer=TEXT")
    command = [options.program, *TWO_WAY_FLAGS, *extra]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    host = _Host(process, answers, options.silence)
    host.send(
        {
            "type": "control_request",
            "request_id": "init-1",
            "request": {"subtype": "initialize"},
        }
    )
    host.send(
        {
            "type": "user",
            "message": {"role": "user", "content": options.prompt},
            "parent_tool_use_id": None,
            "session_id": "",
        }
    )
    assert process.stdout is not None
    for raw in process.stdout:
        sys.stdout.buffer.write(raw)
        sys.stdout.buffer.flush()
        text = raw.strip()
        if text.startswith(b"{"):
            try:
                line = json.loads(text)
            except ValueError:
                continue
            if isinstance(line, dict):
                host.on_line(line)
    host.close()
    try:
        return process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait()


if __name__ == "__main__":
    sys.exit(main())
