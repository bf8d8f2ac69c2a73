"""The two-way mode on control messages recorded from the real Claude Code 2.1.328.

Each ``real_permission_*.jsonl`` was recorded with ``scripts/scripted_host.py`` (the
commands are in ``docs/claude-control-protocol.md``): its stdout is the CLI's, its stderr
the lines the host wrote after ``> ``. Its stdout, fed line by line to the two-way parser
and channel with a host (a decision sink) that decides as the recording's host did, must
make the driver ask the right question, pair its ``hitl.*`` payloads, and write the same
answer for the same request id as the recorded host; the run's outcome follows the
policy. The lines are fed in process, each permission prompt answered before the next
line, as the CLI waits for it (a replayed process would not wait).
"""

from __future__ import annotations

import importlib.util
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest

from adaptertest import DecisionScript, DecisionSink, RecordingSink, recording
from adaptertest import clikit as testing
from claude_driver import ClaudeConfig, ClaudeStreamParser, build_argv
from claude_driver._control import ControlChannel
from driver import (
    DecisionRequest,
    DecisionResponse,
    DecisionResult,
    EventSink,
    FailureAction,
    FailureCode,
    HumanDecisionKind,
    HumanDecisionMode,
    HumanDecisionPolicy,
    QuestionMode,
    StreamKind,
)
from driver.clikit import ProcessOutcome, RunOutput

RECORDINGS = testing.recordings_dir(__file__)
SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"

ASK = HumanDecisionMode.ASK
CASES: dict[str, tuple[HumanDecisionPolicy, DecisionScript, HumanDecisionKind]] = {
    "real_permission_allow.jsonl": (
        HumanDecisionPolicy(permission=ASK),
        DecisionScript.APPROVE,
        HumanDecisionKind.PERMISSION,
    ),
    "real_permission_deny.jsonl": (
        HumanDecisionPolicy(permission=ASK, on_reject=FailureAction.CONTINUE),
        DecisionScript.REJECT,
        HumanDecisionKind.PERMISSION,
    ),
    "real_permission_abort.jsonl": (
        HumanDecisionPolicy(permission=ASK),
        DecisionScript.REJECT,
        HumanDecisionKind.PERMISSION,
    ),
    "real_permission_question.jsonl": (
        HumanDecisionPolicy(question=QuestionMode.ASK),
        DecisionScript.ANSWER,
        HumanDecisionKind.QUESTION,
    ),
    "real_permission_plan.jsonl": (
        HumanDecisionPolicy(),
        DecisionScript.APPROVE,
        HumanDecisionKind.PLAN_REVIEW,
    ),
}


class StdinStub(anyio.abc.ByteSendStream):
    """The CLI's stdin in a replay: keeps every byte, and says when a line was written."""

    def __init__(self) -> None:
        self.written = bytearray()
        self._changed = anyio.Event()

    async def send(self, item: bytes) -> None:
        self.written += item
        self._changed.set()
        self._changed = anyio.Event()

    async def aclose(self) -> None:
        return None

    async def answered(self, request_id: str) -> None:
        """Wait until a ``control_response`` for ``request_id`` was written."""
        while request_id not in answers(sent_lines(bytes(self.written))):
            await self._changed.wait()


@asynccontextmanager
async def conversation(
    policy: HumanDecisionPolicy, sink: EventSink
) -> AsyncIterator[tuple[ClaudeStreamParser, StdinStub]]:
    """The two-way parser and its channel, running; the caller feeds the CLI's lines. The
    channel must have returned (the turn ended) when the block is left, within a bound."""
    out = RunOutput(sink, streaming=True, run_id="run-replay", thread_id="")
    parser = ClaudeStreamParser(out)
    channel = ControlChannel(out, sink, prompt="replayed", policy=policy, run_id="run-replay")
    parser.control = channel
    stdin = StdinStub()
    with anyio.fail_after(20):  # a bound for a loaded machine; every answer is immediate
        async with anyio.create_task_group() as group:
            group.start_soon(channel, stdin)
            yield parser, stdin


async def replay_two_way(
    name: str, policy: HumanDecisionPolicy, sink: DecisionSink
) -> tuple[ClaudeStreamParser, StdinStub, ProcessOutcome]:
    """Feed the recording's stdout to the two-way parser and channel, line by line; after
    each permission prompt, wait until the channel answered it, as the CLI did."""
    kept = recording.read(RECORDINGS / name)
    async with conversation(policy, sink) as (parser, stdin):
        for line in kept.stdout.splitlines():
            parser.feed(line)
            asked = json.loads(line) if line.startswith(b"{") else {}
            if (
                asked.get("type") == "control_request"
                and asked["request"].get("subtype") == "can_use_tool"
            ):
                await stdin.answered(asked["request_id"])
    code = kept.exit_code if kept.exit_code is not None else -1
    return parser, stdin, ProcessOutcome(code, "", False, kept.stdout, kept.stderr)


def sent_lines(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.splitlines() if line.strip()]


def recorded_host_lines(name: str) -> list[dict[str, Any]]:
    """What the recording's host wrote to the CLI (its stderr lines after ``> ``)."""
    _, stderr = testing.recorded_output(RECORDINGS / name)
    return [
        json.loads(line.removeprefix(b"> "))
        for line in stderr.splitlines()
        if line.startswith(b"> ")
    ]


def answers(lines: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The ``control_response`` bodies written, by request id, without the deny message."""
    out: dict[str, dict[str, Any]] = {}
    for line in lines:
        if line.get("type") != "control_response":
            continue
        response = line["response"]
        body = {k: v for k, v in response.get("response", {}).items() if k != "message"}
        out[response["request_id"]] = {"subtype": response["subtype"], **body}
    return out


def test_every_two_way_recording_has_a_case() -> None:
    names = [n for n in testing.recording_names(RECORDINGS) if n.startswith("real_permission_")]
    assert sorted(CASES) == names


@pytest.mark.parametrize("name", CASES)
def test_each_two_way_recording_names_the_cli_and_its_version(name: str) -> None:
    assert recording.read(RECORDINGS / name).cli == {"name": "claude", "version": "2.1.328"}


def test_the_recording_host_starts_the_cli_as_the_two_way_mode_does() -> None:
    """``scripts/scripted_host.py`` keeps its own copy of the flags; they must be the
    driver's, or the recordings show another mode."""
    spec = importlib.util.spec_from_file_location("scripted_host", SCRIPTS / "scripted_host.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    argv = build_argv(ClaudeConfig(command=("claude",), two_way=True), model="", resume_id="")
    assert argv == ["claude", *module.TWO_WAY_FLAGS]


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
@pytest.mark.parametrize("name", CASES)
@pytest.mark.anyio
async def test_the_driver_answers_a_recorded_prompt_as_the_recorded_host_did(name: str) -> None:
    policy, script, kind = CASES[name]
    sink = DecisionSink(script, text="Blue")
    parser, stdin, outcome = await replay_two_way(name, policy, sink)
    written = sent_lines(bytes(stdin.written))
    assert written[0]["request"] == {"subtype": "initialize"}
    assert written[1]["type"] == "user"
    assert written[1]["message"] == {"role": "user", "content": "replayed"}
    # The same answer, for the same request id, as the recorded host wrote.
    assert answers(written) == answers(recorded_host_lines(name))
    [asked] = sink.asked
    assert asked.request.kind == kind
    rid = asked.request.request_id
    assert rid in answers(written)
    pairs = [
        (p.kind, (p.hitl_requested or p.hitl_resolved).request_id)  # type: ignore[union-attr]
        for p in sink.stream
        if p.kind in (StreamKind.HITL_REQUESTED, StreamKind.HITL_RESOLVED)
    ]
    assert pairs == [(StreamKind.HITL_REQUESTED, rid), (StreamKind.HITL_RESOLVED, rid)]
    failure = parser.failure(outcome, 60)
    if name == "real_permission_abort.jsonl":
        assert failure is not None
        assert failure.code == FailureCode.REJECT
        assert failure.human_decision is not None
        assert failure.human_decision.request is not None
        assert failure.human_decision.request.request_id == rid
    else:
        assert failure is None, failure


# -- what no recording shows: synthetic lines ----------------------------------------------------

PROMPT_ID = "req-7f3a"
CAN_USE_TOOL = {
    "type": "control_request",
    "request_id": PROMPT_ID,
    "request": {
        "subtype": "can_use_tool",
        "tool_name": "Bash",
        "input": {"command": "touch made.txt"},
        "tool_use_id": "toolu_01Touch",
        "description": "Create made.txt",
    },
}
RESULT = {"type": "result", "subtype": "success", "is_error": False, "result": "ok"}
CLEAN_EXIT = ProcessOutcome(0, "", False, b"", b"")


def feed(parser: ClaudeStreamParser, line: dict[str, Any]) -> None:
    parser.feed(json.dumps(line).encode())


def resolved(sink: RecordingSink) -> list[str]:
    return [
        str(p.hitl_resolved.result)
        for p in sink.stream
        if p.kind == StreamKind.HITL_RESOLVED and p.hitl_resolved is not None
    ]


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
@pytest.mark.anyio
async def test_a_request_the_cli_withdraws_is_never_answered() -> None:
    asked = anyio.Event()
    sink = DecisionSink(DecisionScript.SILENT, on_ask=lambda _: asked.set())
    async with conversation(HumanDecisionPolicy(permission=ASK), sink) as (parser, stdin):
        feed(parser, CAN_USE_TOOL)
        await asked.wait()
        feed(parser, {"type": "control_cancel_request", "request_id": PROMPT_ID})
        while not resolved(sink):
            await anyio.sleep(0.01)
        feed(parser, RESULT)
    assert PROMPT_ID not in answers(sent_lines(bytes(stdin.written)))
    assert resolved(sink) == ["aborted"]
    assert sink.asked[0].cancelled
    assert parser.failure(CLEAN_EXIT, 60) is None


@pytest.mark.anyio
async def test_a_control_request_of_another_subtype_gets_an_error_answer() -> None:
    sink = DecisionSink(DecisionScript.APPROVE)
    other = {"type": "control_request", "request_id": "hook-1", "request": {"subtype": "hook"}}
    async with conversation(HumanDecisionPolicy(), sink) as (parser, stdin):
        feed(parser, other)
        await stdin.answered("hook-1")
        feed(parser, RESULT)
    [reply] = [line for line in sent_lines(bytes(stdin.written)) if line["type"] != "user"][1:]
    assert reply["response"]["subtype"] == "error"
    assert "hook" in reply["response"]["error"]
    assert sink.asked == []


class RaisingSink(RecordingSink):
    async def request_decision(self, request: DecisionRequest) -> DecisionResponse:
        raise RuntimeError("the host's dialog crashed")


@pytest.mark.anyio
async def test_a_sink_that_raises_aborts_the_run_without_a_human_decision() -> None:
    sink = RaisingSink()
    async with conversation(HumanDecisionPolicy(permission=ASK), sink) as (parser, stdin):
        feed(parser, CAN_USE_TOOL)
        await stdin.answered(PROMPT_ID)
        feed(parser, RESULT)
    answer = answers(sent_lines(bytes(stdin.written)))[PROMPT_ID]
    assert answer == {"subtype": "success", "behavior": "deny", "interrupt": True}
    assert resolved(sink) == ["aborted"]
    failure = parser.failure(CLEAN_EXIT, 60)
    assert failure is not None
    assert failure.code == FailureCode.AGENT_ERROR
    assert failure.human_decision is None


@pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])
@pytest.mark.anyio
async def test_the_policy_deadline_answers_for_a_host_that_never_does() -> None:
    sink = DecisionSink(DecisionScript.SILENT)
    policy = HumanDecisionPolicy(permission=ASK, timeout=timedelta(seconds=0.5))
    async with conversation(policy, sink) as (parser, stdin):
        started = time.monotonic()
        feed(parser, CAN_USE_TOOL)
        await stdin.answered(PROMPT_ID)
        waited = time.monotonic() - started
        feed(parser, RESULT)
    assert waited >= 0.5
    answer = answers(sent_lines(bytes(stdin.written)))[PROMPT_ID]
    assert answer == {"subtype": "success", "behavior": "deny", "interrupt": True}
    assert resolved(sink) == ["timed_out"]
    failure = parser.failure(CLEAN_EXIT, 60)
    assert failure is not None
    assert failure.code == FailureCode.TIMEOUT
    assert failure.human_decision is not None
    assert failure.human_decision.decision == DecisionResult.TIMED_OUT
    assert failure.human_decision.attempts == 1
