"""The drift variants of a two-way (JSON-RPC) recording: only the agent's side changes,
the JSON-RPC envelope stays the protocol's, and every variant is played by the two-way
stand-in, which keeps the recorded chunking and ends with output cut mid-line."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adaptertest import acpreplay
from adaptertest._drift import Source, additive, corrupt, load_source
from adaptertest.recording import Chunk, Recording

ROOT = Path(__file__).resolve().parents[2]
GEMINI = ROOT / "examples/acp_driver/recordings/gemini_ok.jsonl"
CLAUDE_CLI = ROOT / "examples/claude_driver/recordings/success.jsonl"


@pytest.fixture(scope="module")
def source() -> Source:
    return load_source(GEMINI)


def messages(data: bytes) -> list[dict[str, Any] | None]:
    """Each non-blank line's JSON object, None for a line that is not one."""
    found: list[dict[str, Any] | None] = []
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        try:
            value = json.loads(line.decode("utf-8"))
        except ValueError:
            value = None
        found.append(value if isinstance(value, dict) else None)
    return found


def stdout_of(chunks: tuple[Chunk, ...]) -> bytes:
    return b"".join(c.data for c in chunks if c.fd == 1)


def test_a_recording_of_json_rpc_messages_is_a_conversation(source: Source) -> None:
    assert source.jsonrpc
    assert source.discriminator == "method"
    assert source.kind(0) == "recording line 1, the answer to request id 0"
    assert source.kind(2) == 'recording line 3, method "session/update"'
    assert not load_source(CLAUDE_CLI).jsonrpc


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_additive_drift_leaves_the_envelope_and_adds_only_notifications(
    source: Source, data: st.DataObject
) -> None:
    variant = data.draw(additive(source, frozenset()))
    recorded = [obj for obj in source.objects if obj is not None]
    kept: list[dict[str, Any]] = []
    for obj in messages(stdout_of(variant.chunks)):
        assert obj is not None
        assert obj["jsonrpc"] == "2.0"
        update = (obj.get("params") or {}).get("update") if "method" in obj else None
        kind = update.get("sessionUpdate") if isinstance(update, dict) else None
        if obj.get("method", "") in source.vocabulary | {""} and kind in source.vocabulary | {None}:
            kept.append(obj)
            continue
        assert "id" not in obj  # an inserted message is a notification, never an answer
        if obj["method"] == "session/update":
            assert obj["params"]["sessionId"] in source.vocabulary
        else:
            assert obj["method"].startswith("_")
    # The recorded messages keep their envelope (same top-level keys, same ids), in order.
    assert [(sorted(o), o.get("id"), o.get("method")) for o in kept] == [
        (sorted(r), r.get("id"), r.get("method")) for r in recorded
    ]


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_a_corrupt_conversation_has_one_broken_line_or_one_misaddressed_answer(
    source: Source, data: st.DataObject
) -> None:
    strategy = corrupt(source)
    assert strategy is not None
    variant = data.draw(strategy)
    corruption = variant.corruption
    assert corruption is not None
    lines = stdout_of(variant.chunks).split(b"\n")
    assert lines[corruption.line - 1] == corruption.data
    original = source.objects[corruption.line - 1]
    assert original is not None
    if "its id changed" in variant.words:
        changed = json.loads(corruption.data)
        earlier = [
            o["id"] for o in source.objects[: corruption.line - 1] if o and "method" not in o
        ]
        assert changed["id"] in earlier
        assert {**changed, "id": original["id"]} == original
    else:
        assert messages(corruption.data) == [None]


def test_the_stand_in_writes_each_line_in_its_recorded_pieces() -> None:
    update = b'{"jsonrpc":"2.0","method":"_x/y","params":{}}\n'
    rec = Recording(
        argv=["agent"],
        chunks=[
            Chunk(0.0, 1, update[:10]),
            Chunk(0.02, 1, update[10:30]),
            Chunk(0.03, 1, update[30:]),
        ],
        exit_code=0,
    )
    (line,) = acpreplay.recorded_lines(rec, realtime=True)
    assert [offset for offset, _ in line.pieces] == [0, 10, 30]
    assert [round(pause, 3) for _, pause in line.pieces] == [0.0, 0.02, 0.01]
    written: list[bytes] = []
    assert acpreplay.play_lines([line], io.StringIO(""), written.append, wait=1) == ""
    assert written == [update[:10], update[10:30], update[30:]]


def test_output_cut_mid_line_ends_the_stand_in_without_waiting_for_the_client(
    tmp_path: Path,
) -> None:
    answer = b'{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}\n'
    rec = Recording(
        argv=["agent"], chunks=[Chunk(0.0, 1, answer + b'{"jsonrpc":"2.0","me')], exit_code=0
    )
    path, argv = tmp_path / "agent.jsonl", tmp_path / "argv.json"
    path.write_bytes(rec.dumps())
    command = [sys.executable, "-m", "adaptertest.acpreplay", str(path), "--record-argv", str(argv)]
    with subprocess.Popen(
        [*command, "--", "--acp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    ) as agent:
        assert agent.stdin is not None
        assert agent.stdout is not None
        agent.stdin.write(b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}\n')
        agent.stdin.flush()  # and left open: the agent is gone mid-message all the same
        assert agent.wait(timeout=30) == 0
        assert agent.stdout.read() == answer + b'{"jsonrpc":"2.0","me'
        agent.stdin.close()
    assert json.loads(argv.read_text()) == ["--acp"]


def test_a_broken_answer_does_not_hold_back_the_lines_before_it() -> None:
    """The notification before a cut answer waited for the request after that answer,
    which the client cannot send: it is written after the line before it instead."""
    lines = [
        acpreplay.Line(b'{"jsonrpc":"2.0","id":0,"result":{}}\n'),
        acpreplay.Line(b'{"jsonrpc":"2.0","method":"_auth/status","params":{}}\n'),
        acpreplay.Line(b'{"jsonrpc":"2.0","id":1,"res\n'),
        acpreplay.Line(b"\n"),
        acpreplay.Line(b'{"jsonrpc":"2.0","id":2,"result":{}}\n'),
    ]
    client = io.StringIO('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}\n')
    written: list[bytes] = []
    missing = acpreplay.play_lines(lines, client, written.append, wait=0.5)
    assert written == [line.data for line in lines[:4]]  # the blank line follows at once
    assert missing == "the client's request id 2"
