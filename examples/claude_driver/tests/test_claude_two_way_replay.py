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
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest

from adaptertest import clikit as testing
from adaptertest import recording
from adaptertest.sink import DecisionScript, DecisionSink
from claude_driver import ClaudeConfig, ClaudeStreamParser, build_argv
from claude_driver._control import ControlChannel
from driver import (
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


async def replay_two_way(
    name: str, policy: HumanDecisionPolicy, sink: DecisionSink
) -> tuple[ClaudeStreamParser, StdinStub, ProcessOutcome]:
    """Feed the recording's stdout to the two-way parser and channel, line by line; after
    each permission prompt, wait (bounded) until the channel answered it, as the CLI did."""
    kept = recording.read(RECORDINGS / name)
    out = RunOutput(sink, streaming=True, run_id="run-replay", thread_id="")
    parser = ClaudeStreamParser(out)
    channel = ControlChannel(
        out,
        sink,
        prompt="replayed",
        policy=policy,
        run_id="run-replay",
    )
    parser.control = channel
    stdin = StdinStub()
    with anyio.fail_after(20):  # a bound for a loaded machine; the answers are immediate
        async with anyio.create_task_group() as group:
            group.start_soon(channel, stdin)
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
        body = {k: v for k, v in response["response"].items() if k != "message"}
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
    argv = build_argv(ClaudeConfig(command=("claude",), two_way=True), "", model="", resume_id="")
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
