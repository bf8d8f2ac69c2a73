"""The ACP driver on replays of real agents' ACP traffic (``recordings/``, made with
``adaptertest record`` through ``acp_driver._record``), played by the two-way stand-in
``python -m adaptertest.acpreplay``: what a host sees of each recorded run."""

from __future__ import annotations

import hashlib
import sys

import anyio
import pytest

from acp_driver import ACPAgentDriver
from adaptertest import RecordingSink
from adaptertest import clikit as testing
from adaptertest.so import STRUCTURED_SCHEMA, verify_structured_output_value
from driver import (
    DecisionRequest,
    DecisionResponse,
    DecisionResult,
    FailureCode,
    OutputFormat,
    Request,
    Response,
    StreamKind,
    StructuredOutput,
    StructuredOutputSource,
    TranscriptKind,
)
from driver.acpkit import ACPConfig

RECORDINGS = testing.recordings_dir(__file__)
DEADLINE = 60.0

pytestmark = [pytest.mark.anyio, pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])]


def replay(recording: str, agent: str = "replay") -> ACPAgentDriver:
    command = (sys.executable, "-m", "adaptertest.acpreplay", str(RECORDINGS / recording), "--")
    return ACPAgentDriver(ACPConfig(command=command, timeout=DEADLINE), agent=agent)


class Approving(RecordingSink):
    def __init__(self) -> None:
        super().__init__()
        self.asked: list[DecisionRequest] = []

    async def request_decision(self, request: DecisionRequest) -> DecisionResponse:
        self.asked.append(request)
        return DecisionResponse(result=DecisionResult.APPROVED)


async def run(recording: str, sink: RecordingSink) -> Response:
    with anyio.fail_after(DEADLINE + 10):
        return await replay(recording).run(Request(prompt="replayed", streaming=True), sink)


@pytest.mark.parametrize("recording", ["claude-acp_ok.jsonl", "gemini_ok.jsonl"])
async def test_a_recorded_ok_streams_its_text_and_keeps_the_session(recording: str) -> None:
    sink = RecordingSink()
    response = await run(recording, sink)
    assert response.failure is None
    assert response.output == "OK"
    kinds = [p.kind for p in sink.stream]
    assert kinds[0] == StreamKind.RUN_STARTED
    assert kinds[-1] == StreamKind.RUN_FINISHED
    assert "".join(p.delta for p in sink.stream if p.kind == StreamKind.TEXT_CONTENT) == "OK"
    assert response.checkpoint is not None
    assert response.checkpoint.state is not None
    assert response.checkpoint.state.resume_id == response.metadata["acp.session_id"]
    assert response.metadata["stop_reason"] == "end_turn"


async def test_claudes_recorded_permission_request_goes_to_the_host() -> None:
    sink = Approving()
    response = await run("claude-acp_shell.jsonl", sink)
    assert response.failure is None
    assert response.output == "Done."
    [asked] = sink.asked
    assert (asked.kind, asked.source) == ("permission", "acp")
    assert {c.description for c in asked.choices} >= {"allow_once", "reject_once"}
    starts = [p for p in sink.stream if p.kind == StreamKind.TOOL_CALL_START]
    assert [p.tool_call_id for p in starts] == [asked.tool_call_id]
    assert starts[0].args.get("command") == "touch note.txt"
    assert starts[0].name == "Terminal"  # the title Claude announced the call with
    result = next(p for p in sink.stream if p.kind == StreamKind.TOOL_CALL_RESULT)
    assert result.result["status"] == "completed"
    kinds = [i.kind for i in response.transcript]
    assert kinds.count(TranscriptKind.TOOL_CALL) == kinds.count(TranscriptKind.TOOL_RESULT) == 1


async def test_claudes_recorded_api_error_fails_the_run_with_its_message() -> None:
    sink = RecordingSink()
    response = await run("claude-acp_error_500.jsonl", sink)
    assert response.failure is not None
    assert response.failure.code == FailureCode.AGENT_ERROR
    assert "session/prompt failed: the agent answered -32603" in response.failure.message
    assert "API Error: 500" in response.failure.message
    assert response.failure.metadata["acp_error_code"] == -32603
    assert response.checkpoint is None
    assert sink.stream[-1].kind == StreamKind.RUN_ERROR


async def claude_structured(recording: str, sink: RecordingSink) -> Response:
    """A native structured run of claude-agent-acp on ``recording`` (the suite's probe)."""
    request = testing.structured_request()
    with anyio.fail_after(DEADLINE + 10):
        return await replay(recording, agent="claude-acp").run(request, sink)


async def test_claudes_recorded_structured_answer_is_the_native_structured_output() -> None:
    sink = RecordingSink()
    response = await claude_structured("claude-acp_structured.jsonl", sink)
    assert response.failure is None
    assert response.structured_output == StructuredOutput(
        format=OutputFormat.JSON_SCHEMA,
        source=StructuredOutputSource.NATIVE,
        raw_json='{"ok":true}',
        value={"ok": True},
        valid=True,
        schema_hash=hashlib.sha256(STRUCTURED_SCHEMA.encode()).hexdigest(),
    )
    assert verify_structured_output_value(response.structured_output) == []
    assert response.output == '{"ok":true}'  # the turn's only answer
    assert response.checkpoint is not None
    assert sink.stream[-1].kind == StreamKind.RUN_FINISHED
    # The value came in the forwarded SDK result, asked for in the session's _meta.
    assert response.raw_streams is not None
    assert b'"method":"_claude/sdkMessage"' in response.raw_streams.stdout


async def test_claudes_recorded_give_up_on_an_off_schema_answer_fails_the_run() -> None:
    sink = RecordingSink()
    response = await claude_structured("claude-acp_structured_off_schema.jsonl", sink)
    assert response.failure is not None
    assert "Failed to provide valid structured output after 5 attempts" in (
        response.failure.message
    )
    assert response.checkpoint is None
    assert sink.stream[-1].kind == StreamKind.RUN_ERROR
    judged = response.structured_output
    assert judged is not None
    assert not judged.valid
    assert judged.validation_errors == ["the agent ended its turn without a structured answer"]


@pytest.mark.anyio
async def test_an_agent_that_never_asks_declares_auto_approve_only() -> None:
    """codex-acp runs its shell tool without asking: a driver declaring ask or auto_reject
    for it would promise a refusal it cannot make (HIL-06 saw the command run)."""
    from acp_driver import AGENTS, UNASKED, agent_driver
    from driver import HumanDecisionSupport
    from driver.acpkit import ASKS_PERMISSION

    assert set(UNASKED) == {"codex-acp"}
    for name in AGENTS:
        config = ACPConfig(command=("agent",))
        declared = agent_driver(name, config).descriptor().run_policy_caps.permission
        expected = HumanDecisionSupport(auto_approve=True) if name in UNASKED else ASKS_PERMISSION
        assert declared == expected, name
    assert ASKS_PERMISSION.ask
    assert ASKS_PERMISSION.auto_reject
