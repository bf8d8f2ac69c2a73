"""driver.acpkit's wire on a recorded Gemini CLI conversation, replayed by the two-way
stand-in with the agent's side changed: what a later protocol version may add changes
nothing, a broken line or an answer to no request ends the run at once and is named,
and the DFT clauses catch a driver that ends the connection on what it does not know."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from adaptertest import Drift, RecordingSink, check_driver
from adaptertest.options import Options
from adaptertest.recording import Chunk, Recording
from adaptertest.recording import read as read_recording
from driver import Request, Response, TranscriptKind
from driver.acpkit import ACPConfig, ACPDriver
from driver.acpkit._agent import AgentProcess
from driver.acpkit._bridge import Inbox
from driver.acpkit._wire import WireTransport

GEMINI = Path(__file__).parents[2] / "examples/acp_driver/recordings/gemini_ok.jsonl"
DEADLINE = 30.0
both_backends = pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])


def recorded() -> list[dict[str, Any]]:
    """The agent's messages: initialize, session/new answers, three updates, the answer."""
    return [json.loads(line) for line in read_recording(GEMINI).stdout.splitlines()]


def session_of(messages: list[dict[str, Any]]) -> str:
    session: str = messages[1]["result"]["sessionId"]
    return session


def write(tmp_path: Path, lines: list[bytes]) -> Path:
    path = tmp_path / "agent.jsonl"
    stdout = b"".join(line + b"\n" for line in lines)
    path.write_bytes(
        Recording(argv=["gemini"], chunks=[Chunk(0.0, 1, stdout)], exit_code=0).dumps()
    )
    return path


def dump(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def replay(path: Path) -> tuple[str, ...]:
    return (sys.executable, "-m", "adaptertest.acpreplay", str(path), "--wait", "10", "--")


async def run(command: tuple[str, ...]) -> Response:
    driver = ACPDriver(ACPConfig(command=command, timeout=DEADLINE))
    with anyio.fail_after(DEADLINE):
        return await driver.run(Request(prompt="Reply with OK", streaming=True), RecordingSink())


@both_backends
@pytest.mark.anyio
async def test_what_a_later_version_adds_changes_nothing_and_logs_no_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    messages = recorded()
    baseline = await run(replay(write(tmp_path, [dump(m) for m in messages])))
    assert baseline.failure is None
    session = session_of(messages)
    later = {"sessionUpdate": "future_kind", "detail": {"level": 3}}
    chunk = json.loads(json.dumps(messages[3]))
    chunk["params"]["update"]["content"]["annotations2"] = {"new": True}
    chunk["params"]["update"]["_meta"] = {"vendor": {"trace": "t-1"}}
    drifted = [
        messages[0],
        messages[1],
        {"jsonrpc": "2.0", "method": "_vendor/thing", "params": {"x": 1}},
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": session, "update": later},
        },
        messages[2],
        chunk,
        *messages[4:],
    ]
    with caplog.at_level(logging.ERROR):
        response = await run(replay(write(tmp_path, [dump(m) for m in drifted])))
    assert response.failure is None
    assert response.output == baseline.output
    assert [i.kind for i in response.transcript] == [i.kind for i in baseline.transcript]
    assert response.raw_streams is not None
    assert b'"sessionUpdate":"future_kind"' in response.raw_streams.stdout  # kept, not mapped
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


@both_backends
@pytest.mark.parametrize("how", ["cut", "surrogate"])
@pytest.mark.anyio
async def test_a_line_that_is_not_json_fails_the_run_at_once_and_is_shown(
    tmp_path: Path, how: str
) -> None:
    lines = [dump(m) for m in recorded()]
    # An update cut short, or with an encoded surrogate (not UTF-8) in a string; the
    # output goes on after it.
    broken = (
        lines[3][:40] if how == "cut" else lines[3].replace(b'"text":"', b'"text":"\xed\xa0\x80')
    )
    lines[3] = broken
    response = await run(replay(write(tmp_path, lines)))
    assert response.failure is not None
    assert "the agent broke the protocol" in response.failure.message
    assert "line 4 of its output is not JSON" in response.failure.message
    assert response.checkpoint is None
    shown = [i.text for i in response.transcript if i.kind == TranscriptKind.STDOUT]
    assert shown == [broken.decode("utf-8", "replace")]


@both_backends
@pytest.mark.anyio
async def test_an_answer_to_no_waiting_request_fails_the_run(tmp_path: Path) -> None:
    messages = recorded()
    messages[-1] = {**messages[-1], "id": 1}  # the prompt's answer under session/new's id
    response = await run(replay(write(tmp_path, [dump(m) for m in messages])))
    assert response.failure is not None
    assert (
        "line 6 of its output answers request id 1, which the client is not waiting for"
        in response.failure.message
    )
    assert response.checkpoint is None


def test_an_update_after_the_prompts_answer_belongs_to_no_turn() -> None:
    """Decided as the lines are read: the SDK hands an update to its handler in a task of
    its own, which may run after the prompt's answer was taken or before."""
    chunk = {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": "OK"}}
    update: dict[str, Any] = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s-1", "update": chunk},
    }
    answer = {"jsonrpc": "2.0", "id": 2, "result": {"stopReason": "end_turn"}}
    skipped: list[dict[str, Any]] = []

    async def main() -> list[dict[str, Any] | None]:
        near, far = socket.socketpair()
        with near, far:
            _, writer = await asyncio.open_connection(sock=near)
            reader = asyncio.StreamReader()
            wire = WireTransport(writer, reader, lambda line: None, skipped.append)
            prompt = {"jsonrpc": "2.0", "id": 2, "method": "session/prompt"}
            await wire.send({**prompt, "params": {"sessionId": "s-1", "prompt": []}})
            reader.feed_data(b"".join(dump(m) + b"\n" for m in (update, answer, update)))
            reader.feed_eof()
            received = [await wire.receive() for _ in range(3)]
            writer.close()
            return received

    assert asyncio.run(main()) == [update, answer, None]
    assert skipped == [update]


@both_backends
@pytest.mark.anyio
async def test_an_error_answers_data_object_goes_to_the_failures_metadata(tmp_path: Path) -> None:
    messages = recorded()
    data = {"errorKind": "server_error", "retryable": True}
    messages[-1] = {
        "jsonrpc": "2.0",
        "id": 2,
        "error": {"code": -32603, "message": "Internal error", "data": data},
    }
    with anyio.fail_after(5):  # an answer, not a dead process: nothing to wait for
        response = await run(replay(write(tmp_path, [dump(m) for m in messages])))
    assert response.failure is not None
    assert response.failure.message == (
        "session/prompt failed: the agent answered -32603 Internal error"
    )
    assert response.failure.metadata["acp_error_data"] == data


class _StrictWire(WireTransport):
    """Ends the connection on a method it does not know, where ACP says to ignore it."""

    async def receive(self) -> dict[str, Any] | None:
        message = await super().receive()
        method = message.get("method") if message is not None else None
        if isinstance(method, str) and method.startswith("_"):
            self.problem = f"unknown method {method}"
            return None
        return message


class _StrictAgent(AgentProcess):
    wire_type = _StrictWire


class _StrictDriver(ACPDriver):
    def _new_agent(self, config: ACPConfig, cwd: str, owner: Inbox | None) -> AgentProcess:
        agent = super()._new_agent(config, cwd, owner)
        agent.__class__ = _StrictAgent
        return agent


def test_drift_catches_a_driver_that_ends_the_connection_on_an_extension_method() -> None:
    def strict(command: tuple[str, ...]) -> ACPDriver:
        return _StrictDriver(ACPConfig(command=command, timeout=DEADLINE))

    drift = Drift(recordings=[GEMINI], driver=strict, max_examples=4)
    report = check_driver(lambda: strict(("unused",)), Options(drift=drift), only=["DFT"])
    verdicts = {r.clause: r for r in report.results}
    assert verdicts["DFT-01"].status == "failed"
    (message,) = verdicts["DFT-01"].messages
    assert message.startswith("DFT-01")
    assert "gemini_ok.jsonl: line 1 (inserted): unknown line" in message
    assert '"method": "_' in message
    assert "the result differs from the recording's as is" in message
    assert "response.transcript[0].kind is 'failure', expected 'assistant'" in message
    assert verdicts["DFT-02"].status == "passed"
    assert verdicts["DFT-03"].status == "passed"
