"""The Claude Code driver's two-way mode against the real Claude Code and the emulator.

The emulated model asks for a tool that needs permission (a shell command that writes a
file, an edit of a workspace file, the ask-user tool, leaving plan mode); the CLI sends
its permission prompt to the driver as a ``can_use_tool`` control request, the driver
asks the host (a scripted decision sink) as the run's policy says, and answers the CLI.
What is checked is what happened: whether the file was written, what the model was sent
back, the ``hitl.*`` pairs, the failure, and that no process is left.

The suite's own HIL clauses run the same way (``TestClaudeTwoWay*``): the main driver
is in the two-way mode against the tier's shared emulator, and a ``ModelBinding`` builds
one per decision case, wired to the emulator the case runs. The probe's command writes a
file in the workspace, which Claude Code asks about in its default permission mode.

Skipped, naming ``adaptertest install-clis``, when node or the CLI is missing.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Awaitable, Callable
from datetime import timedelta
from pathlib import Path

import anyio
import pytest
from test_claude_realcli import SHARED, SKIP, claude_config, suite_options

import adaptertest
from adaptertest import Options, RecordingSink, realcli
from adaptertest.emulator import Emulator, Scenario, ToolCall, Turn
from adaptertest.options import Backend, ModelBinding, ModelEndpoint
from claude_driver import ClaudeConfig, ClaudeDriver
from claude_driver.binding import emulator_config
from driver import (
    DecisionCapableSink,
    DecisionRequest,
    DecisionResponse,
    DecisionResult,
    FailureAction,
    FailureCode,
    HumanDecisionKind,
    HumanDecisionMode,
    HumanDecisionPolicy,
    OutputSchema,
    QuestionMode,
    Request,
    Response,
    RunPolicy,
    StreamKind,
    StreamPayload,
)
from driver.clikit._proctable import can_scan, marked_pids, new_marker

Answer = Callable[[DecisionRequest], Awaitable[DecisionResponse]]

SHELL = ToolCall(
    name="Bash",
    id="toolu_01ShellWrite",
    arguments={"command": "echo approved > made.txt", "description": "write made.txt"},
)
QUESTION_TEXT = "Which colour should the button be?"
QUESTION = ToolCall(
    name="AskUserQuestion",
    id="toolu_01Question",
    arguments={
        "questions": [
            {
                "question": QUESTION_TEXT,
                "header": "Colour",
                "options": [
                    {"label": "Red", "description": "warm"},
                    {"label": "Blue", "description": "cool"},
                ],
                "multiSelect": False,
            }
        ]
    },
)
PLAN = ToolCall(name="ExitPlanMode", id="toolu_01LeavePlan", arguments={"plan": "1. Write it."})
DECISION_DEADLINE = 3.0
"""The policy's decision timeout in the no-answer tests; the run's own deadline is far."""
GRACE = 15.0
"""How long after the decision deadline a run may still take on a loaded machine."""


class AnsweringSink(RecordingSink):
    """Records the run and answers each decision with ``answer``; keeps what it was asked.

    Unlike the suite's :class:`adaptertest.DecisionSink` (one script for every call), the
    answer is a function of the request, so a test can reject, then approve a retry."""

    def __init__(self, answer: Answer) -> None:
        super().__init__()
        self._answer = answer
        self.asked: list[DecisionRequest] = []
        self.returned = 0
        """Decisions answered (a cancelled or unanswered one never counts)."""

    async def request_decision(self, request: DecisionRequest) -> DecisionResponse:
        self.asked.append(request)
        response = await self._answer(request)
        self.returned += 1
        return response


def replying(result: DecisionResult, **fields: object) -> Answer:
    async def answer(request: DecisionRequest) -> DecisionResponse:
        return DecisionResponse.model_validate(
            {"request_id": request.request_id, "result": result, **fields}
        )

    return answer


async def never(request: DecisionRequest) -> DecisionResponse:
    await anyio.sleep_forever()
    raise AssertionError("unreachable")


@pytest.fixture
def claude() -> Path:
    return realcli.require("claude")


BOTH_BACKENDS = pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])


def two_way(base_url: str, root: Path, **env: str) -> ClaudeConfig:
    """The tier's config in the two-way mode, without the one-shot binding's
    ``--allowedTools Bash`` (the shell must ask), with ``env`` added."""
    config = claude_config(base_url, root, timeout=120.0)
    # The Bash tool runs a login shell: its own home keeps the machine's profile out.
    env = {"HOME": config.home, **env}
    return config.model_copy(
        update={"two_way": True, "extra_args": (), "env": {**config.env, **env}}
    )


def asking(tool: ToolCall, answer: str = "Done.") -> Scenario:
    return Scenario(turns=[Turn(text="Let me do that.", tool_calls=[tool]), Turn(text=answer)])


async def run(
    config: ClaudeConfig, sink: RecordingSink, policy: HumanDecisionPolicy, prompt: str = "Go."
) -> Response:
    request = Request(
        prompt=prompt, streaming=True, policy=RunPolicy(human_decision=policy), run_id="run-hitl"
    )
    return await ClaudeDriver(config).run(request, sink)


def hitl(sink: RecordingSink) -> list[StreamPayload]:
    return [p for p in sink.stream if p.kind.startswith("hitl.")]


def pairs(sink: RecordingSink) -> list[tuple[str, str, str]]:
    """``(kind, request id, result)`` of every hitl payload, in order."""
    out: list[tuple[str, str, str]] = []
    for p in hitl(sink):
        if p.hitl_requested is not None:
            out.append((p.kind, p.hitl_requested.request_id, ""))
        elif p.hitl_resolved is not None:
            out.append((p.kind, p.hitl_resolved.request_id, str(p.hitl_resolved.result)))
    return out


def workspace(config: ClaudeConfig) -> Path:
    return Path(config.cwd)


ASK = HumanDecisionPolicy(permission=HumanDecisionMode.ASK)

TEST_MARKER = "CLAUDE_TWO_WAY_TEST_RUN"
"""A variable of the test's own, inherited by everything the run starts (the run's own
marker is the driver's), so the process table shows what is left."""


# -- the suite's HIL clauses (and every other one) in the two-way mode ----------------------------


def bound_driver(endpoint: ModelEndpoint) -> ClaudeDriver:
    """A two-way driver wired to the suite's per-case emulator, home and workspace: the
    one-shot binding's config without its ``--allowedTools Bash`` (the shell must ask)."""
    config = emulator_config(endpoint)
    # The Bash tool runs a login shell: the case's own home keeps the machine's shell
    # profile (a version manager's rehash, say) out of the command the host approved.
    env = {**config.env, "HOME": str(endpoint.home)}
    return ClaudeDriver(config.model_copy(update={"two_way": True, "extra_args": (), "env": env}))


def two_way_options(backend: Backend) -> Options:
    """The real-CLI tier's options, with the two-way driver and the model binding."""
    options = suite_options(backend)
    if SHARED is None:
        return options
    binding = ModelBinding(driver=bound_driver, protocol="anthropic", grace=10.0)
    return dataclasses.replace(
        options, model_binding=binding, known_failures=TWO_WAY_KNOWN_FAILURES
    )


TWO_WAY_KNOWN_FAILURES = {
    "TOL-01": "in the two-way mode a shell command that writes a file is a decision for the "
    "host, and the scenario's sink cannot decide under the default (ask) policy, so the "
    "driver refuses the run (agent_error); the HIL clauses judge the approved path",
}
"""Scenario clauses (judged through the same binding) the two-way mode does not pass."""


def new_two_way_driver() -> ClaudeDriver:
    if SHARED is None:
        return ClaudeDriver(ClaudeConfig(two_way=True))
    return ClaudeDriver(SHARED.config.model_copy(update={"two_way": True}))


TestClaudeTwoWay = adaptertest.test_driver(new_two_way_driver, two_way_options("asyncio"))
TestClaudeTwoWayOnTrio = adaptertest.test_driver(new_two_way_driver, two_way_options("trio"))


@pytest.mark.parametrize(
    "suite", [TestClaudeTwoWay, TestClaudeTwoWayOnTrio], ids=["asyncio", "trio"]
)
def test_the_two_way_mode_fails_no_clause_and_skips_no_hil_clause(suite: type) -> None:
    if SKIP is not None:
        pytest.skip(SKIP)
    report = suite.adaptertest_suite().report()  # type: ignore[attr-defined]
    failing = [r.describe() for r in report.results if r.status.is_failure]
    assert not failing, failing
    hil = [r for r in report.results if r.clause.startswith("HIL-")]
    assert hil, "the catalogue has no HIL clause"
    skipped = [r.describe() for r in hil if r.status.name == "SKIPPED"]
    assert not skipped, skipped


# -- the mode itself -----------------------------------------------------------------------------


def test_the_two_way_mode_declares_hitl_and_the_one_shot_mode_does_not() -> None:
    one_shot, both = ClaudeDriver(), ClaudeDriver(ClaudeConfig(two_way=True))
    assert not one_shot.stream_capability().hitl
    assert both.stream_capability().hitl
    assert one_shot.descriptor().run_policy_caps.permission.ask is False
    caps = both.descriptor().run_policy_caps
    assert (caps.permission.ask, caps.plan_review.ask, caps.question.ask) == (True, True, True)
    assert caps.permission.auto_approve
    assert caps.permission.auto_reject
    assert caps.permission.retry


# -- against the real CLI ----------------------------------------------------------------------


@pytest.mark.anyio
@BOTH_BACKENDS
async def test_an_approved_shell_command_runs_and_its_result_reaches_the_model(
    claude: Path, tmp_path: Path
) -> None:
    sink = AnsweringSink(replying(DecisionResult.APPROVED))
    with Emulator(asking(SHELL)) as emu:
        config = two_way(emu.base_url, tmp_path)
        response = await run(config, sink, ASK, "Write made.txt, please.")
    assert response.failure is None, response.failure
    assert response.output == "Done."
    assert (workspace(config) / "made.txt").read_text() == "approved\n"
    [asked] = sink.asked
    assert (asked.kind, asked.source, asked.tool_call_id) == (
        HumanDecisionKind.PERMISSION,
        "Bash",
        SHELL.id,
    )
    assert asked.payload["input"] == SHELL.arguments
    assert asked.deadline is not None  # the default 30 s policy deadline
    assert pairs(sink) == [
        (StreamKind.HITL_REQUESTED, asked.request_id, ""),
        (StreamKind.HITL_RESOLVED, asked.request_id, "approved"),
    ]
    # The prompt went on stdin, and the tool's result reached the model.
    first, second = emu.main_requests
    assert first.user_text.endswith("Write made.txt, please.")
    assert second.tool_results
    assert not second.tool_results[0].startswith("The host")
    # Between the request and the answer, the tool call was open; its result came after.
    kinds = [p.kind for p in sink.stream]
    assert kinds.index(StreamKind.HITL_RESOLVED) < kinds.index(StreamKind.TOOL_CALL_RESULT)


@pytest.mark.anyio
@BOTH_BACKENDS
async def test_a_rejected_shell_command_does_not_run_and_the_run_fails_with_the_decision(
    claude: Path, tmp_path: Path
) -> None:
    sink = AnsweringSink(replying(DecisionResult.REJECTED))
    with Emulator(asking(SHELL)) as emu:
        config = two_way(emu.base_url, tmp_path)
        response = await run(config, sink, ASK)
    assert not (workspace(config) / "made.txt").exists()
    failure = response.failure
    assert failure is not None
    assert failure.code == FailureCode.REJECT, failure
    assert failure.human_decision is not None
    assert failure.human_decision.decision == DecisionResult.REJECTED
    assert failure.human_decision.kind == HumanDecisionKind.PERMISSION
    assert failure.human_decision.request is not None
    assert failure.human_decision.request.request_id == sink.asked[0].request_id
    assert failure.human_decision.attempts == 1
    # The CLI ended the turn at the denial: the model was not asked again.
    assert len(emu.main_requests) == 1
    [resolved] = [p for p in hitl(sink) if p.kind == StreamKind.HITL_RESOLVED]
    assert resolved.hitl_resolved is not None
    assert resolved.hitl_resolved.result == DecisionResult.REJECTED
    assert sink.stream[-1].kind == StreamKind.RUN_ERROR


@pytest.mark.anyio
@pytest.mark.parametrize("result", [DecisionResult.APPROVED, DecisionResult.REJECTED])
async def test_a_file_write_is_asked_for_and_happens_only_when_approved(
    claude: Path, tmp_path: Path, result: DecisionResult
) -> None:
    sink = AnsweringSink(replying(result))
    config = two_way("", tmp_path)
    target = workspace(config) / "notes.md"
    write = ToolCall(
        name="Write",
        id="toolu_01WriteNotes",
        arguments={"file_path": str(target), "content": "hi\n"},
    )
    policy = ASK.model_copy(update={"on_reject": FailureAction.CONTINUE})
    with Emulator(asking(write)) as emu:
        config = two_way(emu.base_url, tmp_path)
        response = await run(config, sink, policy)
    assert response.failure is None, response.failure
    [asked] = sink.asked
    assert (asked.kind, asked.source, asked.tool_call_id) == (
        HumanDecisionKind.PERMISSION,
        "Write",
        write.id,
    )
    assert target.exists() is (result == DecisionResult.APPROVED)


@pytest.mark.anyio
async def test_native_structured_output_survives_a_permission_asked_mid_run(
    claude: Path, tmp_path: Path
) -> None:
    """What ``native_hitl.permission`` declares: the run asks, then answers with the schema."""
    schema = '{"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}'
    scenario = Scenario(
        turns=[Turn(text="Writing.", tool_calls=[SHELL]), Turn(structured={"ok": True})]
    )
    assert ClaudeDriver(ClaudeConfig(two_way=True)).descriptor().structured_output.native_hitl
    sink = AnsweringSink(replying(DecisionResult.APPROVED))
    request = Request(
        prompt="Write made.txt, then say ok.",
        streaming=True,
        structured_output_source="native",
        output_schema=OutputSchema(format="json_schema", schema_document=schema),
        policy=RunPolicy(human_decision=ASK),
    )
    with Emulator(scenario) as emu:
        config = two_way(emu.base_url, tmp_path)
        response = await ClaudeDriver(config).run(request, sink)
    assert response.failure is None, response.failure
    assert [a.kind for a in sink.asked] == [HumanDecisionKind.PERMISSION]
    assert (workspace(config) / "made.txt").exists()
    assert response.structured_output is not None
    assert response.structured_output.valid
    assert response.structured_output.value == {"ok": True}


@pytest.mark.anyio
async def test_a_rejection_under_continue_denies_the_tool_and_the_run_goes_on(
    claude: Path, tmp_path: Path
) -> None:
    sink = AnsweringSink(replying(DecisionResult.REJECTED))
    policy = ASK.model_copy(update={"on_reject": FailureAction.CONTINUE})
    with Emulator(asking(SHELL, "I will not write it then.")) as emu:
        config = two_way(emu.base_url, tmp_path)
        response = await run(config, sink, policy)
    assert response.failure is None, response.failure
    assert response.output == "I will not write it then."
    assert not (workspace(config) / "made.txt").exists()
    _first, second = emu.main_requests
    assert second.tool_results
    assert second.tool_results[0].startswith("The host did not allow")


@pytest.mark.anyio
async def test_a_rejection_under_retry_asks_again_and_a_later_approval_runs_the_tool(
    claude: Path, tmp_path: Path
) -> None:
    answers = iter([DecisionResult.REJECTED, DecisionResult.APPROVED])

    async def answer(request: DecisionRequest) -> DecisionResponse:
        return DecisionResponse(request_id=request.request_id, result=next(answers))

    sink = AnsweringSink(answer)
    policy = ASK.model_copy(update={"on_reject": FailureAction.RETRY, "max_retries": 2})
    with Emulator(asking(SHELL)) as emu:
        config = two_way(emu.base_url, tmp_path)
        response = await run(config, sink, policy)
    assert response.failure is None, response.failure
    assert (workspace(config) / "made.txt").exists()
    assert [a.retry_attempt for a in sink.asked] == [0, 1]
    first, second = (a.request_id for a in sink.asked)
    assert first != second
    assert pairs(sink) == [
        (StreamKind.HITL_REQUESTED, first, ""),
        (StreamKind.HITL_RESOLVED, first, "rejected"),
        (StreamKind.HITL_REQUESTED, second, ""),
        (StreamKind.HITL_RESOLVED, second, "approved"),
    ]


@pytest.mark.anyio
@BOTH_BACKENDS
async def test_no_answer_fails_at_the_policy_deadline_not_the_runs(
    claude: Path, tmp_path: Path
) -> None:
    sink = AnsweringSink(never)
    policy = ASK.model_copy(update={"timeout": timedelta(seconds=DECISION_DEADLINE)})
    with Emulator(asking(SHELL)) as emu:
        config = two_way(emu.base_url, tmp_path)
        started = time.monotonic()
        response = await run(config, sink, policy)
        took = time.monotonic() - started
    assert DECISION_DEADLINE <= took < DECISION_DEADLINE + GRACE, took
    assert not response.timed_out  # the run's own deadline (120 s) never fired
    failure = response.failure
    assert failure is not None
    assert failure.code == FailureCode.TIMEOUT, failure
    assert failure.human_decision is not None
    assert failure.human_decision.decision == DecisionResult.TIMED_OUT
    assert not (workspace(config) / "made.txt").exists()
    assert sink.returned == 0
    [(_, asked_id, _), (_, resolved_id, result)] = pairs(sink)
    assert asked_id == resolved_id
    assert result == "timed_out"


@pytest.mark.anyio
@BOTH_BACKENDS
async def test_a_decision_pending_at_cancellation_ends_cleanly(
    claude: Path, tmp_path: Path
) -> None:
    if not can_scan():
        pytest.skip("the process table cannot be searched by environment here (no /proc)")
    marker = new_marker()
    sink = AnsweringSink(never)
    pending: list[int] = []
    with Emulator(asking(SHELL)) as emu:
        config = two_way(emu.base_url, tmp_path, **{TEST_MARKER: marker})
        with anyio.move_on_after(60):  # a bound on the test, not part of what it checks
            async with anyio.create_task_group() as group:

                async def running() -> None:
                    await run(config, sink, ASK)

                group.start_soon(running)
                while not sink.asked:  # the decision is pending: the host is being asked
                    await anyio.sleep(0.05)
                pending = marked_pids(TEST_MARKER, marker) or []
                group.cancel_scope.cancel()
        assert sink.asked
        assert pending  # the CLI was found by the marker while it waited
        sink.seal()
        assert sink.returned == 0
        assert marked_pids(TEST_MARKER, marker) == []  # nothing left running
    assert not (workspace(config) / "made.txt").exists()
    assert len(emu.main_requests) == 1
    # One pair, closed as aborted, and the run's terminal last.
    assert [r for _, _, r in pairs(sink)] == ["", "aborted"]
    assert sink.stream[-1].kind == StreamKind.RUN_ERROR
    assert sink.late_count == 0


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("mode", "runs"),
    [(HumanDecisionMode.AUTO_APPROVE, True), (HumanDecisionMode.AUTO_REJECT, False)],
)
async def test_auto_policies_never_reach_the_sink_and_act_as_named(
    claude: Path, tmp_path: Path, mode: HumanDecisionMode, runs: bool
) -> None:
    sink = AnsweringSink(replying(DecisionResult.APPROVED if not runs else DecisionResult.REJECTED))
    with Emulator(asking(SHELL)) as emu:
        config = two_way(emu.base_url, tmp_path)
        response = await run(config, sink, HumanDecisionPolicy(permission=mode))
    assert sink.asked == []
    assert hitl(sink) == []
    assert (workspace(config) / "made.txt").exists() is runs
    if runs:
        assert response.failure is None, response.failure
    else:
        assert response.failure is not None
        assert response.failure.code == FailureCode.REJECT
        assert response.failure.human_decision is not None
        assert response.failure.human_decision.attempts == 0


@pytest.mark.anyio
async def test_a_question_is_answered_with_the_hosts_text_which_reaches_the_model(
    claude: Path, tmp_path: Path
) -> None:
    sink = AnsweringSink(replying(DecisionResult.ANSWERED, text="Blue"))
    policy = HumanDecisionPolicy(question=QuestionMode.ASK)
    with Emulator(asking(QUESTION)) as emu:
        config = two_way(emu.base_url, tmp_path)
        response = await run(config, sink, policy)
    assert response.failure is None, response.failure
    [asked] = sink.asked
    assert asked.kind == HumanDecisionKind.QUESTION
    assert asked.prompt == QUESTION_TEXT
    assert [c.key for c in asked.choices] == ["Red", "Blue"]
    _, second = emu.main_requests
    assert any(QUESTION_TEXT in r and '"Blue"' in r for r in second.tool_results), second


@pytest.mark.anyio
async def test_the_default_policy_rejects_a_question_without_asking(
    claude: Path, tmp_path: Path
) -> None:
    sink = AnsweringSink(replying(DecisionResult.ANSWERED, text="Blue"))
    with Emulator(asking(QUESTION)) as emu:
        config = two_way(emu.base_url, tmp_path)
        response = await run(config, sink, HumanDecisionPolicy())
    assert sink.asked == []
    assert response.failure is not None
    assert response.failure.code == FailureCode.REJECT
    assert response.failure.human_decision is not None
    assert response.failure.human_decision.kind == HumanDecisionKind.QUESTION


@pytest.mark.anyio
async def test_leaving_plan_mode_is_a_plan_review(claude: Path, tmp_path: Path) -> None:
    sink = AnsweringSink(replying(DecisionResult.APPROVED))
    with Emulator(asking(PLAN)) as emu:
        config = two_way(emu.base_url, tmp_path)
        config = config.model_copy(update={"extra_args": ("--permission-mode", "plan")})
        response = await run(config, sink, HumanDecisionPolicy())
    assert response.failure is None, response.failure
    [asked] = sink.asked
    assert (asked.kind, asked.source) == (HumanDecisionKind.PLAN_REVIEW, "ExitPlanMode")
    _, second = emu.main_requests
    assert any("approved" in r for r in second.tool_results), second.tool_results


@pytest.mark.anyio
async def test_a_sink_that_cannot_decide_aborts_an_asking_run(claude: Path, tmp_path: Path) -> None:
    sink = RecordingSink()
    assert not isinstance(sink, DecisionCapableSink)
    with Emulator(asking(SHELL)) as emu:
        config = two_way(emu.base_url, tmp_path)
        response = await run(config, sink, ASK)
    assert not (workspace(config) / "made.txt").exists()
    assert response.failure is not None
    assert response.failure.code == FailureCode.AGENT_ERROR
    assert response.failure.human_decision is None
    assert "cannot take decisions" in response.failure.message
