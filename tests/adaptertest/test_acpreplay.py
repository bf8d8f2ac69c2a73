"""The two-way ACP replay stand-in: it answers in recorded order, waits for the client,
follows a loaded session and says when the client diverged."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from adaptertest import acpreplay
from adaptertest.recording import Chunk, Recording

NEW = {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "rec-1", "modes": None}}
UPDATE = {
    "jsonrpc": "2.0",
    "method": "session/update",
    "params": {"sessionId": "rec-1", "update": {"sessionUpdate": "agent_message_chunk"}},
}
ANSWER = {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}}


def lines(*messages: dict[str, Any]) -> str:
    return "".join(json.dumps(m) + "\n" for m in messages)


def played(out: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_the_recorded_answers_follow_the_clients_requests() -> None:
    client = lines(
        {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": "/w"}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": "rec-1"}},
    )
    out = io.StringIO()
    assert acpreplay.play([NEW, UPDATE, ANSWER], io.StringIO(client), out, wait=5) == ""
    assert played(out) == [NEW, UPDATE, ANSWER]


def test_a_loaded_session_takes_the_recorded_sessions_place() -> None:
    client = lines(
        {"jsonrpc": "2.0", "id": 1, "method": "session/load", "params": {"sessionId": "old-9"}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {"sessionId": "old-9"}},
    )
    out = io.StringIO()
    assert acpreplay.play([NEW, UPDATE, ANSWER], io.StringIO(client), out, wait=5) == ""
    load, update, answer = played(out)
    assert "sessionId" not in load["result"]  # a load answer names no session
    assert update["params"]["sessionId"] == "old-9"
    assert answer == ANSWER


def test_the_agents_own_request_waits_for_the_clients_answer() -> None:
    ask = {"jsonrpc": "2.0", "id": 0, "method": "session/request_permission", "params": {}}
    client = lines({"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {}})
    out = io.StringIO()
    missing = acpreplay.play([ask, ANSWER], io.StringIO(client), out, wait=0.5)
    assert missing == "the client's answer to its request id 0 (session/request_permission)"
    assert played(out) == [ask]  # nothing after the unanswered request


def test_a_client_that_never_asks_ends_the_replay_with_a_clear_line(tmp_path: Path) -> None:
    rec = Recording(argv=["agent"], chunks=[Chunk(0.1, 1, lines(NEW).encode())], exit_code=0)
    path = tmp_path / "agent.jsonl"
    path.write_bytes(rec.dumps())
    done = subprocess.run(
        [sys.executable, "-m", "adaptertest.acpreplay", str(path), "--wait", "1", "--"],
        input=lines({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}).encode(),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == acpreplay.DIVERGED
    assert done.stdout == b""
    assert b"the replay diverged: waited 1 s for the client's request id 1" in done.stderr


def test_non_json_output_is_left_out_of_the_messages() -> None:
    rec = Recording(
        argv=["agent"], chunks=[Chunk(0.1, 1, b"booting\n" + lines(NEW).encode())], exit_code=0
    )
    assert acpreplay.recorded_messages(rec) == [NEW]


def test_a_session_opened_with_meta_is_played_from_the_meta_recording() -> None:
    init = {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": 1}}
    other_new = {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "rec-2"}}
    other_answer = {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "refusal"}}
    meta = [{"jsonrpc": "2.0", "id": 0, "result": {}}, other_new, other_answer]
    prompt = {"jsonrpc": "2.0", "id": 2, "method": "session/prompt", "params": {}}
    asked = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
    plain = {"cwd": "/w"}
    for params, expected in (
        (plain, [init, NEW, UPDATE, ANSWER]),
        ({**plain, "_meta": {"agent": {"x": 1}}}, [init, other_new, other_answer]),
    ):
        opened = {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": params}
        client = io.StringIO(lines(asked, opened, prompt))
        out = io.StringIO()
        assert acpreplay.play([init, NEW, UPDATE, ANSWER], client, out, wait=5, meta=meta) == ""
        assert played(out) == expected
