"""driver.acpkit against a scripted ACP agent (``fake_agent.py``, the SDK's agent side):
the mapping, permission decisions, cancellation, deadlines, crashes and both process
modes, on asyncio and trio."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest

from adaptertest import RecordingSink
from adaptertest.so import verify_structured_output_descriptor
from driver import (
    DecisionRequest,
    DecisionResponse,
    DecisionResult,
    FailureAction,
    FailureCode,
    HumanDecisionMode,
    HumanDecisionPolicy,
    InvalidOutputSchemaError,
    ObservationDemand,
    OutputFormat,
    OutputSchema,
    Request,
    Response,
    RunEventType,
    RunPolicy,
    SessionContext,
    StreamKind,
    StructuredOutput,
    StructuredOutputInvalidPolicy,
    StructuredOutputSource,
    StructuredOutputUnsupportedError,
    TodoStatus,
    TranscriptKind,
)
from driver.acpkit import ACPConfig, ACPDriver
from driver.clikit._proctable import RUN_MARKER_VARIABLE, marked_pids

FAKE_AGENT = Path(__file__).with_name("fake_agent.py")
DEADLINE = 60.0

pytestmark = pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])


class TodoDriver(ACPDriver):
    declares_todos = True


class DecidingSink(RecordingSink):
    """A sink that answers permission requests from a list, recording each request."""

    def __init__(self, *answers: DecisionResponse) -> None:
        super().__init__()
        self.answers = list(answers)
        self.asked: list[DecisionRequest] = []

    async def request_decision(self, request: DecisionRequest) -> DecisionResponse:
        self.asked.append(request)
        return self.answers.pop(0)


def config(tmp_path: Path, **fields: object) -> ACPConfig:
    return ACPConfig.model_validate(
        {"command": (sys.executable, str(FAKE_AGENT)), "cwd": str(tmp_path), **fields}
    )


async def run(
    driver: ACPDriver, prompt: str, sink: RecordingSink | None = None, **fields: object
) -> tuple[Response, RecordingSink]:
    sink = sink if sink is not None else RecordingSink()
    with anyio.fail_after(DEADLINE):
        response = await driver.run(Request(prompt=prompt, streaming=True, **fields), sink)
    return response, sink


def kinds(sink: RecordingSink) -> list[str]:
    return [p.kind for p in sink.stream]


@pytest.mark.anyio
async def test_chunks_stream_as_token_deltas_with_reasoning_and_usage(tmp_path: Path) -> None:
    response, sink = await run(ACPDriver(config(tmp_path)), "hello")
    assert response.failure is None
    assert response.output == "OK"
    assert kinds(sink) == [
        "run.started",
        "reasoning.start",
        "reasoning.content",
        "reasoning.end",
        "text.start",
        "text.content",
        "text.content",
        "text.end",
        "run.finished",
    ]
    assert [p.delta for p in sink.stream if p.kind == StreamKind.TEXT_CONTENT] == ["O", "K"]
    # ACP counts cache reads apart from input; the kit's input includes them.
    assert response.usage is not None
    assert (response.usage.input_tokens, response.usage.cached_input_tokens) == (13, 3)
    assert response.usage.output_tokens == 2
    assert sink.stream[-1].usage == response.usage
    assert [i.kind for i in response.transcript] == [TranscriptKind.THINKING, "assistant"]
    assert response.checkpoint is not None
    assert response.checkpoint.valid
    assert response.checkpoint.state is not None
    session = response.checkpoint.state.resume_id
    assert session.startswith("s-")
    # run.started goes out before the agent names the session; everything after carries it.
    assert {p.thread_id for p in sink.stream[1:]} == {session}
    assert response.metadata["stop_reason"] == "end_turn"
    assert response.metadata["agent"] == "fake-agent 1.0.0"
    # The agent's JSON-RPC lines are the run's stdout chunks.
    stdout = b"".join(
        e.chunk for e in sink.events if e.type == RunEventType.CHUNK and e.stream == "stdout"
    )
    assert response.raw_streams is not None
    assert stdout == response.raw_streams.stdout
    assert b'"sessionUpdate":"agent_message_chunk"' in stdout


@pytest.mark.anyio
async def test_a_tool_call_announced_without_input_starts_with_its_input(tmp_path: Path) -> None:
    response, sink = await run(ACPDriver(config(tmp_path)), "tool")
    assert response.failure is None
    start = next(p for p in sink.stream if p.kind == StreamKind.TOOL_CALL_START)
    assert (start.tool_call_id, start.name, start.args) == ("call-1", "Run ls", {"command": "ls"})
    result = next(p for p in sink.stream if p.kind == StreamKind.TOOL_CALL_RESULT)
    assert result.result == {
        "status": "completed",
        "content": "a.txt\n",
        "raw_output": {"exit_code": 0},
    }
    items = [(i.kind, i.tool_use_id) for i in response.transcript if i.tool_use_id]
    assert items == [(TranscriptKind.TOOL_CALL, "call-1"), (TranscriptKind.TOOL_RESULT, "call-1")]


@pytest.mark.anyio
async def test_command_output_streamed_in_meta_is_the_tool_result(tmp_path: Path) -> None:
    # codex-acp sends a shell call's output in _meta.terminal_output_delta, not in content.
    response, sink = await run(ACPDriver(config(tmp_path)), "terminal")
    assert response.failure is None
    result = next(p for p in sink.stream if p.kind == StreamKind.TOOL_CALL_RESULT)
    assert result.result == {"status": "completed", "content": "a.txt\nb.txt\n"}
    item = next(i for i in response.transcript if i.kind == TranscriptKind.TOOL_RESULT)
    assert (item.tool_use_id, item.text, item.is_error) == ("call-2", "a.txt\nb.txt\n", False)


@pytest.mark.anyio
async def test_a_completed_command_that_exited_non_zero_is_an_error_result(
    tmp_path: Path,
) -> None:
    response, _ = await run(ACPDriver(config(tmp_path)), "exits")
    assert response.failure is None
    results = [i for i in response.transcript if i.kind == TranscriptKind.TOOL_RESULT]
    assert [(i.tool_use_id, i.is_error) for i in results] == [("call-3", True), ("call-4", True)]
    assert results[0].text == "cat: x: No such file\n"
    # Exit code 0 (the "tool" script's call) is no error.
    response, _ = await run(ACPDriver(config(tmp_path)), "tool")
    item = next(i for i in response.transcript if i.kind == TranscriptKind.TOOL_RESULT)
    assert item.is_error is False


@pytest.mark.anyio
async def test_input_that_includes_cache_reads_is_not_counted_twice(tmp_path: Path) -> None:
    # Copilot CLI's total is input + output: its input already holds the cache reads.
    response, _ = await run(ACPDriver(config(tmp_path)), "inclusive")
    assert response.usage is not None
    got = (response.usage.input_tokens, response.usage.cached_input_tokens)
    assert got == (45, 20)
    assert response.usage.output_tokens == 7


@pytest.mark.anyio
async def test_usage_on_message_chunks_counts_when_the_answer_has_none(tmp_path: Path) -> None:
    # Qwen Code answers the prompt without usage; each model call's tokens ride a chunk's
    # _meta, input including cache reads (its total is input plus output).
    response, sink = await run(ACPDriver(config(tmp_path)), "metausage")
    assert response.failure is None
    assert response.output == "OK"
    assert response.usage is not None
    got = (response.usage.input_tokens, response.usage.cached_input_tokens)
    assert got == (65, 20)
    assert response.usage.output_tokens == 12
    assert sink.stream[-1].usage == response.usage


@pytest.mark.anyio
async def test_a_plan_is_a_todo_snapshot_when_declared_and_asked(tmp_path: Path) -> None:
    asked = ObservationDemand(todos=True)
    response, sink = await run(TodoDriver(config(tmp_path)), "plan", observation=asked)
    assert response.failure is None
    todo = next(p.todo for p in sink.stream if p.kind == StreamKind.TODO_UPDATED)
    assert todo is not None
    assert todo.items is not None
    assert [(i.content, i.status) for i in todo.items] == [
        ("read the code", TodoStatus.COMPLETED),
        ("fix the bug", TodoStatus.IN_PROGRESS),
    ]
    assert todo.revision == 1
    # Undeclared: the plan is a vendor payload, never a todo snapshot.
    _, plain = await run(ACPDriver(config(tmp_path)), "plan", observation=asked)
    assert "acp.plan" in kinds(plain)
    assert StreamKind.TODO_UPDATED not in kinds(plain)


@pytest.mark.anyio
async def test_a_stop_reason_other_than_end_turn_fails_the_run(tmp_path: Path) -> None:
    response, sink = await run(ACPDriver(config(tmp_path)), "refuse")
    assert response.failure is not None
    assert response.failure.code == FailureCode.AGENT_ERROR
    assert "refusal" in response.failure.message
    assert response.checkpoint is None
    assert kinds(sink)[-1] == "run.error"


def permission_policy(mode: HumanDecisionMode, **fields: object) -> RunPolicy:
    return RunPolicy(human_decision=HumanDecisionPolicy(permission=mode, **fields))


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (DecisionResponse(result=DecisionResult.APPROVED), "OK"),
        (DecisionResponse(result=DecisionResult.APPROVED, choice="always"), "OK"),
        (DecisionResponse(result=DecisionResult.REJECTED, choice="never"), "denied:never"),
    ],
    ids=["approve", "approve-always", "never"],
)
async def test_the_host_decides_a_permission_request(
    tmp_path: Path, answer: DecisionResponse, said: str
) -> None:
    sink = DecidingSink(answer)
    policy = permission_policy(HumanDecisionMode.ASK, on_reject=FailureAction.CONTINUE)
    response, _ = await run(ACPDriver(config(tmp_path)), "permission", sink, policy=policy)
    assert response.output == said
    assert response.failure is None
    [asked] = sink.asked
    assert (asked.kind, asked.source, asked.tool_call_id) == ("permission", "acp", "call-1")
    assert [c.key for c in asked.choices] == ["yes", "always", "no", "never"]
    assert asked.payload["tool_call"]["rawInput"] == {"command": "ls"}
    # The decision is framed in the stream: after the call started, one requested and one
    # resolved payload with the request's id, the resolution saying the host's answer.
    framed = [p for p in sink.stream if p.kind.startswith(("hitl.", "tool_call.start"))]
    assert [p.kind for p in framed] == ["tool_call.start", "hitl.requested", "hitl.resolved"]
    requested, resolved = framed[1].hitl_requested, framed[2].hitl_resolved
    assert requested is not None
    assert resolved is not None
    assert asked.request_id
    assert requested.request_id == resolved.request_id == asked.request_id
    assert resolved.result == answer.result


@pytest.mark.anyio
async def test_a_rejection_aborts_the_run_with_the_decision_by_default(tmp_path: Path) -> None:
    sink = DecidingSink(DecisionResponse(result=DecisionResult.REJECTED))
    response, _ = await run(ACPDriver(config(tmp_path)), "permission", sink)
    assert response.failure is not None
    assert response.failure.code == FailureCode.REJECT
    decision = response.failure.human_decision
    assert decision is not None
    assert (decision.kind, decision.decision, decision.attempts) == (
        "permission",
        DecisionResult.REJECTED,
        1,
    )
    assert kinds(sink)[-1] == "run.error"


@pytest.mark.anyio
async def test_retry_asks_again_and_a_timeout_fails_with_decision_timeout(tmp_path: Path) -> None:
    sink = DecidingSink(
        DecisionResponse(result=DecisionResult.TIMED_OUT),
        DecisionResponse(result=DecisionResult.TIMED_OUT),
    )
    policy = permission_policy(HumanDecisionMode.ASK, on_timeout=FailureAction.RETRY, max_retries=1)
    response, _ = await run(ACPDriver(config(tmp_path)), "permission", sink, policy=policy)
    assert [a.retry_attempt for a in sink.asked] == [0, 1]
    assert response.failure is not None
    assert response.failure.code == FailureCode.TIMEOUT
    assert response.failure.human_decision is not None
    assert response.failure.human_decision.attempts == 2


class SilentSink(RecordingSink):
    """A host that never answers; records when it was asked and whether its call ended."""

    def __init__(self) -> None:
        super().__init__()
        self.asked_at: list[float] = []
        self.ended = 0

    async def request_decision(self, request: DecisionRequest) -> DecisionResponse:
        self.asked_at.append(anyio.current_time())
        try:
            await anyio.sleep_forever()
        finally:
            self.ended += 1
        raise AssertionError("unreachable")


@pytest.mark.anyio
@pytest.mark.parametrize("on_timeout", [FailureAction.ABORT, FailureAction.CONTINUE])
async def test_an_unanswered_decision_times_out_at_the_policys_timeout(
    tmp_path: Path, on_timeout: FailureAction
) -> None:
    sink = SilentSink()
    policy = permission_policy(
        HumanDecisionMode.ASK, timeout=timedelta(seconds=6), on_timeout=on_timeout
    )
    # The run's own deadline is shorter than the decision's: a human's time is not the run's.
    driver = ACPDriver(config(tmp_path, timeout=5))
    response, _ = await run(driver, "permission", sink, policy=policy)
    [asked_at] = sink.asked_at
    assert sink.ended == 1  # the sink's call was ended, not left waiting
    assert anyio.current_time() - asked_at >= 6.0
    assert not response.timed_out
    resolved = [p.hitl_resolved for p in sink.stream if p.kind == StreamKind.HITL_RESOLVED]
    assert [r.result for r in resolved if r is not None] == [DecisionResult.TIMED_OUT]
    if on_timeout == FailureAction.ABORT:
        assert response.failure is not None
        assert response.failure.code == FailureCode.TIMEOUT
        assert response.failure.human_decision is not None
        assert response.failure.human_decision.decision == DecisionResult.TIMED_OUT
    else:
        assert response.failure is None
        assert response.output == "denied:no"


@pytest.mark.anyio
async def test_cancelling_while_a_decision_waits_answers_the_agent_cancelled(
    tmp_path: Path,
) -> None:
    sink = SilentSink()
    policy = permission_policy(HumanDecisionMode.ASK, timeout=timedelta(seconds=-1))
    driver = ACPDriver(config(tmp_path))
    with anyio.fail_after(DEADLINE):
        async with anyio.create_task_group() as group:

            async def turn() -> None:
                await driver.run(Request(prompt="permission", streaming=True, policy=policy), sink)

            group.start_soon(turn)
            while not sink.asked_at:
                await anyio.sleep(0.05)
            cancelled_at = anyio.current_time()
            group.cancel_scope.cancel()
    assert anyio.current_time() - cancelled_at < 15  # the answer, then closing the agent
    assert sink.ended == 1
    hitl = [p for p in sink.stream if p.kind.startswith("hitl.")]
    # The wait was cut: the request is closed as aborted, before the terminal.
    assert [p.kind for p in hitl] == ["hitl.requested", "hitl.resolved"]
    assert hitl[-1].hitl_resolved is not None
    assert hitl[-1].hitl_resolved.result == DecisionResult.ABORTED
    assert sink.stream[-1].kind == StreamKind.RUN_ERROR
    wire = b"".join(e.chunk for e in sink.events if e.type == RunEventType.CHUNK)
    # The agent was told the request was cancelled: it said so before it ended the turn.
    assert b"denied:cancelled" in wire


@pytest.mark.anyio
async def test_auto_modes_answer_without_asking(tmp_path: Path) -> None:
    driver = ACPDriver(config(tmp_path))
    sink = DecidingSink()
    approve = permission_policy(HumanDecisionMode.AUTO_APPROVE)
    response, _ = await run(driver, "permission", sink, policy=approve)
    assert response.output == "OK"
    reject = permission_policy(HumanDecisionMode.AUTO_REJECT, on_reject=FailureAction.CONTINUE)
    response, _ = await run(driver, "permission", sink, policy=reject)
    assert response.output == "denied:no"
    assert sink.asked == []


@pytest.mark.anyio
async def test_a_sink_that_cannot_decide_counts_as_a_rejection(tmp_path: Path) -> None:
    policy = permission_policy(HumanDecisionMode.ASK, timeout=timedelta(seconds=5))
    response, _ = await run(ACPDriver(config(tmp_path)), "permission", policy=policy)
    assert response.failure is not None
    assert response.failure.code == FailureCode.REJECT


@pytest.mark.anyio
async def test_cancelling_a_run_sends_session_cancel_and_ends_the_process(
    tmp_path: Path,
) -> None:
    driver = ACPDriver(config(tmp_path))
    sink = RecordingSink()
    with anyio.move_on_after(DEADLINE) as outer:
        async with anyio.create_task_group() as group:

            async def turn() -> None:
                await driver.run(Request(prompt="hang", streaming=True), sink)

            group.start_soon(turn)
            with anyio.fail_after(DEADLINE):
                while "text.content" not in kinds(sink):
                    await anyio.sleep(0.05)
            group.cancel_scope.cancel()
    assert not outer.cancelled_caught
    assert kinds(sink)[-1] == "run.error"
    assert sink.stream[-1].error is not None
    assert sink.stream[-1].error.code == FailureCode.CANCELLED
    sent = b"".join(e.chunk for e in sink.events if e.type == RunEventType.CHUNK)
    assert b'"stopReason":"cancelled"' in sent  # the agent saw session/cancel and answered
    spawned = [e for e in sink.events if e.type == RunEventType.SPAWN]
    assert len(spawned) == 1
    assert not _alive(int(spawned[0].metadata["pid"]))


@pytest.mark.anyio
async def test_a_turn_past_the_deadline_is_cancelled_and_timed_out(tmp_path: Path) -> None:
    response, sink = await run(ACPDriver(config(tmp_path, timeout=2)), "hang")
    assert response.timed_out
    assert response.failure is not None
    assert "within 2 s" in response.failure.message
    assert kinds(sink)[-1] == "run.error"


@pytest.mark.anyio
async def test_an_agent_stuck_before_the_prompt_is_timed_out_and_ended(tmp_path: Path) -> None:
    stuck = config(tmp_path, timeout=2, env={"FAKE_AGENT_STUCK_START": "1"})
    response, sink = await run(ACPDriver(stuck), "hello")
    assert response.timed_out
    assert response.failure is not None
    assert "not ready for the prompt within 2 s" in response.failure.message
    assert kinds(sink) == ["run.started", "run.error"]
    assert not _alive(int(response.metadata["agent.pid"]))


@pytest.mark.anyio
async def test_a_crashed_agent_fails_its_run_with_its_exit_and_stderr(tmp_path: Path) -> None:
    response, sink = await run(ACPDriver(config(tmp_path)), "crash")
    assert response.failure is not None
    assert response.failure.code == FailureCode.AGENT_ERROR
    assert "ended (exit 3)" in response.failure.message
    assert "crashing on purpose" in response.failure.message
    assert kinds(sink)[-1] == "run.error"


@pytest.mark.anyio
async def test_a_program_that_cannot_start_raises_with_a_partial_response(
    tmp_path: Path,
) -> None:
    from driver import RunError

    driver = ACPDriver(config(tmp_path, command=(str(tmp_path / "missing-agent"),)))
    with pytest.raises(RunError) as caught:
        await run(driver, "hello")
    assert caught.value.response is not None
    assert caught.value.response.failure is not None


@pytest.mark.anyio
async def test_a_prompt_with_a_nul_byte_is_refused_before_anything_starts(
    tmp_path: Path,
) -> None:
    from driver import InvalidDriverConfigError

    driver = ACPDriver(config(tmp_path, command=(str(tmp_path / "missing-agent"),)))
    sink = RecordingSink()
    with pytest.raises(InvalidDriverConfigError, match="NUL byte"):
        await run(driver, "before\0after", sink)
    assert not sink.stream
    assert not sink.events


@pytest.mark.anyio
async def test_a_stored_session_is_loaded_and_its_replayed_history_kept_out_of_the_run(
    tmp_path: Path,
) -> None:
    driver = ACPDriver(config(tmp_path))  # one-shot: the second run is a new process
    first, _ = await run(driver, "hello")
    assert first.checkpoint is not None
    assert first.checkpoint.state is not None
    second, sink = await run(
        driver, "history", session=SessionContext(state=first.checkpoint.state)
    )
    assert second.failure is None
    assert second.output == "2"  # the loaded session holds the first prompt
    assert second.checkpoint is not None
    assert second.checkpoint.state is not None
    assert second.checkpoint.state.resume_id == first.checkpoint.state.resume_id
    assert response_kinds(second) == ["assistant"]
    assert not [k for k in kinds(sink) if k.startswith("acp.user")]
    # The agent did replay the history on the wire (the raw output keeps it).
    assert second.raw_streams is not None
    assert b'"sessionUpdate":"user_message_chunk"' in second.raw_streams.stdout


@pytest.mark.anyio
async def test_an_unknown_session_fails_the_run_with_the_agents_error(tmp_path: Path) -> None:
    from driver import SessionState

    state = SessionState(resume_id="s-gone")
    response, sink = await run(
        ACPDriver(config(tmp_path)), "hello", session=SessionContext(state=state)
    )
    assert response.failure is not None
    assert "session/load failed" in response.failure.message
    assert "no session s-gone" in response.failure.message
    assert kinds(sink) == ["run.started", "run.error"]


def response_kinds(response: Response) -> list[str]:
    return [str(i.kind) for i in response.transcript]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            state = stat.read().rpartition(b")")[2].split()[0]
    except OSError:
        return False
    return state not in (b"Z", b"X")


@pytest.mark.anyio
async def test_persistent_mode_serves_twenty_runs_over_four_sessions_on_one_process(
    tmp_path: Path,
) -> None:
    driver = ACPDriver(config(tmp_path, persistent=True))
    assert driver.descriptor().process.persistent
    pids: set[str] = set()
    states = []
    try:
        for _ in range(4):
            response, _ = await run(driver, "spawn")
            assert response.checkpoint is not None
            states.append(response.checkpoint.state)
            pids.add(response.metadata["agent.pid"])
        for round_ in range(4):
            for state in states:
                response, _ = await run(driver, "history", session=SessionContext(state=state))
                assert response.failure is None
                assert response.output == str(round_ + 2)
                pids.add(response.metadata["agent.pid"])
        assert len(pids) == 1
        [pid] = pids
        assert _alive(int(pid))
        marker = _marker_of(int(pid))
        marked = marked_pids(RUN_MARKER_VARIABLE, marker)
        assert marked is not None
        assert len(marked) == 5  # the agent and its four grandchildren (own sessions)
    finally:
        await driver.close_processes()
    assert not _alive(int(pid))
    assert marked_pids(RUN_MARKER_VARIABLE, marker) == []
    await driver.close_processes()  # idempotent


def _marker_of(pid: int) -> str:
    """The run marker in a process's environment."""
    with open(f"/proc/{pid}/environ", "rb") as handle:
        for entry in handle.read().split(b"\0"):
            name, _, value = entry.partition(b"=")
            if name == RUN_MARKER_VARIABLE.encode():
                return value.decode()
    raise AssertionError(f"process {pid} carries no run marker")


@pytest.mark.anyio
async def test_a_killed_persistent_agent_fails_its_run_and_the_next_run_starts_another(
    tmp_path: Path,
) -> None:
    driver = ACPDriver(config(tmp_path, persistent=True))
    try:
        first, _ = await run(driver, "pid")
        old = int(first.output)
        old_marker = _marker_of(old)
        sink = RecordingSink()
        async with anyio.create_task_group() as group:

            async def hang() -> None:
                response, _ = await run(driver, "hang", sink)
                assert response.failure is not None
                assert response.failure.code == FailureCode.AGENT_ERROR
                assert "ended (signal SIGKILL)" in response.failure.message

            group.start_soon(hang)
            with anyio.fail_after(DEADLINE):
                while "text.content" not in kinds(sink):
                    await anyio.sleep(0.05)
            os.kill(old, 9)
        assert kinds(sink)[-1] == "run.error"
        second, sink = await run(driver, "pid")
        assert second.failure is None
        new = int(second.output)
        assert new != old
        new_marker = _marker_of(new)
        assert [e.type for e in sink.events].count(RunEventType.SPAWN) == 1
    finally:
        await driver.close_processes()
    assert marked_pids(RUN_MARKER_VARIABLE, old_marker) == []
    assert marked_pids(RUN_MARKER_VARIABLE, new_marker) == []
    assert not _alive(new)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            '{"error":{"code":500,"message":"Internal error.","status":"INTERNAL"}}',
            "the model API said: Internal error. (INTERNAL)",
        ),
        ('{"error":{"message":"Bad key."}}', "the model API said: Bad key."),
        ("terminated", "terminated"),
        ('{"unexpected": 1}', '{"unexpected": 1}'),
        ("[1, 2]", "[1, 2]"),
    ],
)
def test_a_model_apis_json_error_body_is_told_not_dumped(
    message: str, expected: str, anyio_backend: str
) -> None:
    from driver.acpkit._driver import _error_text

    assert _error_text(message) == expected


@pytest.mark.parametrize(
    ("details", "expected"),
    [
        (
            '500 {"type":"error","error":{"type":"api_error","message":"Internal server error"}}',
            "500 the model API said: Internal server error (api_error)",
        ),
        ("terminated", "terminated"),
        ("401 unauthorized", "401 unauthorized"),
    ],
)
def test_an_errors_details_with_a_status_and_json_body_are_told_not_dumped(
    details: str, expected: str, anyio_backend: str
) -> None:
    from driver.acpkit._driver import _details_text

    assert _details_text(details) == expected


# -- native structured output through an agent's extension ---------------------------------

PROBE_SCHEMA = '{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}'


class FakeStructured:
    """The fake agent's stand-in mechanism: the schema in ``_meta.fake``, the answer in
    the ``_fake/answer`` notification."""

    notes = "the fake agent's _fake/answer"

    def session_meta(self, schema: OutputSchema) -> dict[str, Any]:
        return {"fake": {"schema": json.loads(schema.schema_document)}}

    def structured_json(self, method: str, params: Mapping[str, Any]) -> str | None:
        return json.dumps(params["value"]) if method == "fake/answer" else None


def structured_driver(tmp_path: Path, **fields: object) -> ACPDriver:
    return ACPDriver(config(tmp_path, **fields), structured=FakeStructured())


def native(
    on_invalid: StructuredOutputInvalidPolicy | Literal[""] = "", document: str = PROBE_SCHEMA
) -> dict[str, Any]:
    """The request fields of a native structured run."""
    schema = OutputSchema(
        format=OutputFormat.JSON_SCHEMA, schema_document=document, on_invalid=on_invalid
    )
    return {"structured_output_source": StructuredOutputSource.NATIVE, "output_schema": schema}


@pytest.mark.anyio
async def test_without_an_extension_a_native_request_is_refused_before_launch(
    tmp_path: Path,
) -> None:
    driver = ACPDriver(config(tmp_path, command=(str(tmp_path / "missing-agent"),)))
    assert not driver.descriptor().structured_output.json_schema_native
    sink = RecordingSink()
    with pytest.raises(StructuredOutputUnsupportedError, match="no extension"):
        await run(driver, "answer {}", sink, **native())
    assert not sink.stream
    assert not sink.events


@pytest.mark.anyio
async def test_an_unusable_schema_is_refused_before_launch(tmp_path: Path) -> None:
    sink = RecordingSink()
    driver = structured_driver(tmp_path, command=(str(tmp_path / "missing-agent"),))
    with pytest.raises(InvalidOutputSchemaError):
        await run(driver, "answer {}", sink, **native(document='{"type": 3}'))
    assert not sink.stream


@pytest.mark.anyio
async def test_the_extensions_answer_is_the_validated_structured_output(tmp_path: Path) -> None:
    driver = structured_driver(tmp_path)
    capability = driver.descriptor().structured_output
    assert capability.json_schema_native
    assert capability.works_with_run
    assert capability.notes == FakeStructured.notes
    assert verify_structured_output_descriptor(driver.descriptor()) == []
    response, sink = await run(driver, 'answer {"ok": true}', **native())
    assert response.failure is None
    assert response.structured_output == StructuredOutput(
        format=OutputFormat.JSON_SCHEMA,
        source=StructuredOutputSource.NATIVE,
        raw_json='{"ok": true}',
        value={"ok": True},
        valid=True,
        schema_hash=hashlib.sha256(PROBE_SCHEMA.encode()).hexdigest(),
    )
    assert response.output == '{"ok": true}'  # the turn said nothing else
    assert response.checkpoint is not None
    assert kinds(sink) == ["run.started", "run.finished"]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("prompt", "problem"),
    [
        ('answer {"ok": "yes"}', "ok: 'yes' is not of type 'boolean'"),
        ("answer", "the agent ended its turn without a structured answer"),
    ],
    ids=["off-schema", "missing"],
)
async def test_an_invalid_or_missing_answer_fails_the_run(
    tmp_path: Path, prompt: str, problem: str
) -> None:
    response, sink = await run(structured_driver(tmp_path), prompt, **native())
    assert response.failure is not None
    assert response.failure.code == FailureCode.AGENT_ERROR
    assert problem in response.failure.message
    assert response.checkpoint is None
    assert kinds(sink)[-1] == "run.error"
    judged = response.structured_output
    assert judged is not None
    assert not judged.valid
    assert judged.validation_errors == [problem]
    # A request that takes an invalid answer as it is gets it, and the run succeeds.
    lenient = native(StructuredOutputInvalidPolicy.RETURN_INVALID)
    returned, _ = await run(structured_driver(tmp_path), prompt, **lenient)
    assert returned.failure is None
    assert returned.structured_output == judged


@pytest.mark.anyio
async def test_a_persistent_session_is_reopened_when_a_run_wants_other_meta(
    tmp_path: Path,
) -> None:
    driver = structured_driver(tmp_path, persistent=True)
    schema_meta = {"schema": json.loads(PROBE_SCHEMA)}
    try:
        first, _ = await run(driver, 'answer {"ok": true}', **native())
        assert first.failure is None
        assert first.checkpoint is not None
        session = SessionContext(state=first.checkpoint.state)
        # A "meta" turn gives no structured answer: taken as it is, its text is the output.
        structured = native(StructuredOutputInvalidPolicy.RETURN_INVALID)
        seen = []
        for fields in ({}, {}, structured, structured, {}):
            response, _ = await run(driver, "meta", session=session, **fields)
            assert response.failure is None
            assert response.metadata["agent.pid"] == first.metadata["agent.pid"]
            seen.append(json.loads(response.output))
    finally:
        await driver.close_processes()
    # Opened for the first run, then again at each change of _meta only.
    assert seen == [
        {"meta": None, "opened": 2},
        {"meta": None, "opened": 2},
        {"meta": schema_meta, "opened": 3},
        {"meta": schema_meta, "opened": 3},
        {"meta": None, "opened": 4},
    ]


@pytest.mark.anyio
async def test_without_load_session_a_persistent_session_keeps_its_meta(tmp_path: Path) -> None:
    env = {"FAKE_AGENT_NO_LOAD": "1"}
    driver = structured_driver(tmp_path, persistent=True, env=env)
    try:
        first, _ = await run(driver, 'answer {"ok": true}', **native())
        assert first.failure is None
        assert first.checkpoint is not None
        session = SessionContext(state=first.checkpoint.state)
        plain, sink = await run(driver, "meta", session=session)
        same, _ = await run(driver, 'answer {"ok": false}', session=session, **native())
    finally:
        await driver.close_processes()
    assert plain.failure is not None
    assert "cannot switch the session between structured and plain answers" in (
        plain.failure.message
    )
    assert kinds(sink) == ["run.started", "run.error"]
    assert same.failure is None  # the same _meta needs no reopening
    assert same.structured_output is not None
    assert same.structured_output.value == {"ok": False}
