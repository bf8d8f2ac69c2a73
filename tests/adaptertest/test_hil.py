"""HIL: the decision-capable sink, the pure checks, and the hitl probe end to end.

The kill matrix (tests/selfproof) holds a mutant per clause; here the reference passes
on both backends, the probe skips what the declarations rule out, and the Claude Code
example driver (one-shot, no HITL declared) runs the binding path against the real CLI.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import anyio
import pytest

from adaptertest import ClauseStatus, ConformanceReport, check_driver, realcli
from adaptertest.hil import (
    HIL_CLAUSES,
    PERMISSION_PROMPT,
    DecisionCase,
    decision_cases,
    ran_token,
    shell_command,
    verify_asked,
    verify_declared_kinds,
    verify_pairs,
)
from adaptertest.options import Backend, ModelBinding, ModelEndpoint, Options
from adaptertest.sink import AskedDecision, DecisionScript, DecisionSink
from driver import (
    DecisionCapableSink,
    DecisionRequest,
    DecisionResponse,
    DecisionResult,
    Descriptor,
    EventSink,
    HITLRequestedPayload,
    HITLResolvedPayload,
    HumanDecisionKind,
    HumanDecisionPolicy,
    HumanDecisionSupport,
    QuestionSupport,
    Request,
    Response,
    RunEvent,
    RunPolicyCapabilities,
    StreamKind,
    StreamPayload,
)
from referencedriver import ReferenceDriver, ReferenceModel
from referencedriver._decisions import run_shell


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    backend: str = request.param
    return backend


# -- the sink ------------------------------------------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("script", "result"),
    [
        (DecisionScript.APPROVE, DecisionResult.APPROVED),
        (DecisionScript.REJECT, DecisionResult.REJECTED),
        (DecisionScript.ANSWER, DecisionResult.ANSWERED),
    ],
)
async def test_the_sink_answers_as_scripted_and_records_the_request(
    script: DecisionScript, result: DecisionResult
) -> None:
    sink = DecisionSink(script, text="blue")
    assert isinstance(sink, DecisionCapableSink)
    sink.emit_stream(StreamPayload(kind=StreamKind.RUN_STARTED))
    request = DecisionRequest(request_id="r-1", kind=HumanDecisionKind.PERMISSION, prompt="ls")
    response = await sink.request_decision(request)
    assert (response.request_id, response.result) == ("r-1", result)
    assert response.text == ("blue" if script is DecisionScript.ANSWER else "")
    request.prompt = "changed after the call"
    (asked,) = sink.asked
    assert asked.request.prompt == "ls"  # a snapshot, taken on arrival
    assert (asked.stream_before, asked.stream_after) == (1, 1)
    assert asked.response == response
    assert not asked.pending
    assert not asked.cancelled
    assert not asked.late


@pytest.mark.anyio
async def test_a_silent_sink_waits_until_cancelled() -> None:
    sink = DecisionSink(DecisionScript.SILENT)
    with anyio.move_on_after(0.2) as scope:
        await sink.request_decision(DecisionRequest(request_id="r-1"))
    assert scope.cancel_called
    (asked,) = sink.asked
    assert asked.cancelled
    assert asked.response is None
    assert not asked.pending


@pytest.mark.anyio
async def test_release_answers_a_silent_wait_with_aborted() -> None:
    seen: list[AskedDecision] = []
    sink = DecisionSink(DecisionScript.SILENT, on_ask=seen.append)
    answers: list[DecisionResult | str] = []

    async def ask() -> None:
        answers.append((await sink.request_decision(DecisionRequest(request_id="r"))).result)

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(ask)
            while not seen:
                await anyio.sleep(0)
            assert seen[0].pending
            sink.release()
    assert answers == [DecisionResult.ABORTED]
    assert not seen[0].cancelled


@pytest.mark.anyio
async def test_a_decision_asked_after_the_seal_is_late() -> None:
    sink = DecisionSink(DecisionScript.APPROVE)
    sink.seal()
    await sink.request_decision(DecisionRequest(request_id="r"))
    assert sink.asked[0].late
    assert sink.late_count == 1


# -- the pure checks -----------------------------------------------------------------------

_PERMISSION = DecisionCase(
    "approve", HumanDecisionKind.PERMISSION, HumanDecisionPolicy(), DecisionScript.APPROVE
)


def _asked(
    rid: str, before: int, after: int | None, result: DecisionResult | None
) -> AskedDecision:
    response = None if result is None else DecisionResponse(request_id=rid, result=result)
    return AskedDecision(
        request=DecisionRequest(request_id=rid, kind=HumanDecisionKind.PERMISSION),
        stream_before=before,
        asked_at=0.0,
        late=False,
        stream_after=after,
        ended_at=None if after is None else 1.0,
        response=response,
        cancelled=result is None,
    )


def _requested(rid: str) -> StreamPayload:
    body = HITLRequestedPayload(request_id=rid, kind=HumanDecisionKind.PERMISSION)
    return StreamPayload(kind=StreamKind.HITL_REQUESTED, hitl_requested=body)


def _resolved(rid: str, result: DecisionResult) -> StreamPayload:
    body = HITLResolvedPayload(request_id=rid, kind=HumanDecisionKind.PERMISSION, result=result)
    return StreamPayload(kind=StreamKind.HITL_RESOLVED, hitl_resolved=body)


def test_pairs_that_frame_the_call_pass() -> None:
    asked = [_asked("r", before=1, after=1, result=DecisionResult.APPROVED)]
    stream = [_requested("r"), _resolved("r", DecisionResult.APPROVED)]
    assert verify_pairs(_PERMISSION, asked, stream) == []


@pytest.mark.parametrize(
    ("stream", "expected"),
    [
        ([_requested("r")], "0 hitl.resolved, expected 1"),
        ([_resolved("r", DecisionResult.APPROVED)], "0 hitl.requested, expected 1"),
        (
            [_requested("r"), _requested("r"), _resolved("r", DecisionResult.APPROVED)],
            "2 hitl.requested, expected 1",
        ),
        (
            [_requested("r"), _resolved("r", DecisionResult.REJECTED)],
            "says result 'rejected', the decision ended 'approved'",
        ),
        (
            [_requested("r"), _resolved("r", DecisionResult.APPROVED), _requested("x")],
            "name request_id 'x', which no decision the sink received carries",
        ),
        (
            [StreamPayload(kind=StreamKind.HITL_REQUESTED), _requested("r")],
            "payload 0 (hitl.requested) carries no envelope",
        ),
        (
            [
                _requested("r"),
                StreamPayload(
                    kind=StreamKind.HITL_RESOLVED,
                    hitl_resolved=HITLResolvedPayload(
                        request_id="r",
                        kind=HumanDecisionKind.QUESTION,
                        result=DecisionResult.APPROVED,
                    ),
                ),
            ],
            "hitl.resolved has kind 'question', the request 'permission'",
        ),
    ],
    ids=[
        "no-resolved",
        "no-requested",
        "twice",
        "wrong-result",
        "stray-id",
        "no-envelope",
        "resolved-kind",
    ],
)
def test_unbalanced_pairs_are_named(stream: list[StreamPayload], expected: str) -> None:
    asked = [_asked("r", before=len(stream), after=len(stream), result=DecisionResult.APPROVED)]
    problems = verify_pairs(_PERMISSION, asked, stream)
    assert any(expected in p for p in problems), problems


def test_requested_after_the_call_and_resolved_before_its_end_are_named() -> None:
    asked = [_asked("r", before=0, after=2, result=DecisionResult.APPROVED)]
    stream = [_requested("r"), _resolved("r", DecisionResult.APPROVED)]
    problems = verify_pairs(_PERMISSION, asked, stream)
    assert any("after the sink was asked" in p for p in problems), problems
    assert any("before the sink's call ended" in p for p in problems), problems


def test_a_cancelled_wait_may_stay_open_and_an_unanswered_one_resolves_timed_out() -> None:
    open_wait = [_asked("r", before=1, after=1, result=None)]
    assert verify_pairs(_PERMISSION, open_wait, [_requested("r")], cancelled=True) == []
    assert verify_pairs(_PERMISSION, open_wait, [_requested("r")]) != []
    stream = [_requested("r"), _resolved("r", DecisionResult.TIMED_OUT)]
    assert verify_pairs(_PERMISSION, open_wait, stream) == []


def test_asked_needs_one_request_of_the_case_kind() -> None:
    assert verify_asked(_PERMISSION, [_asked("r", 0, 0, DecisionResult.APPROVED)]) == []
    assert "never reached request_decision" in verify_asked(_PERMISSION, [])[0]
    two = [_asked("a", 0, 0, DecisionResult.APPROVED), _asked("b", 0, 0, DecisionResult.APPROVED)]
    assert "2 decisions reached request_decision" in verify_asked(_PERMISSION, two)[0]
    question = dataclasses.replace(_PERMISSION, kind=HumanDecisionKind.QUESTION)
    got = verify_asked(question, [_asked("r", 0, 0, DecisionResult.APPROVED)])
    assert "has kind 'permission', expected 'question'" in got[0]


def test_declared_kinds() -> None:
    asked = [_asked("r", 0, 0, DecisionResult.APPROVED)]
    declared = RunPolicyCapabilities(permission=HumanDecisionSupport(ask=True))
    assert verify_declared_kinds(declared, asked) == []
    problems = verify_declared_kinds(RunPolicyCapabilities(), asked)
    assert problems == [
        "decision 0 (kind 'permission') reached request_decision, but run_policy_caps "
        "declares no ask for permission"
    ]


def test_the_cases_follow_the_declarations() -> None:
    assert [c.name for c in decision_cases(RunPolicyCapabilities())] == ["undeclared"]
    full = RunPolicyCapabilities(
        permission=HumanDecisionSupport(ask=True, auto_approve=True, auto_reject=True),
        question=QuestionSupport(ask=True),
    )
    assert [c.name for c in decision_cases(full)] == [
        "approve",
        "reject",
        "reject-continue",
        "timeout",
        "timeout-continue",
        "cancel",
        "question",
        "auto-approve",
        "auto-reject",
    ]
    only_questions = RunPolicyCapabilities(question=QuestionSupport(ask=True))
    assert [c.name for c in decision_cases(only_questions)] == ["question"]


def test_the_command_prints_a_token_its_text_lacks() -> None:
    command = shell_command("abc")
    assert ran_token("abc") not in command
    assert run_shell(command) == ran_token("abc")
    assert PERMISSION_PROMPT.format(command=command).endswith(command)


# -- the probe -----------------------------------------------------------------------------


def _hil(factory: Any, options: Options) -> ConformanceReport:
    return check_driver(factory, options, only=["HIL"])


def _statuses(report: ConformanceReport) -> dict[str, ClauseStatus]:
    return {r.clause: r.status for r in report}


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_reference_passes_every_hil_clause(backend: Backend) -> None:
    model = ReferenceModel()
    options = Options(live_run=True, model_requests=model.requests_so_far, backend=backend)
    report = _hil(lambda: ReferenceDriver(model=model), options)
    assert _statuses(report) == dict.fromkeys(HIL_CLAUSES, ClauseStatus.PASSED), [
        r.describe() for r in report
    ]


def test_without_a_model_side_a_driver_that_asks_is_not_judged() -> None:
    report = _hil(ReferenceDriver, Options(live_run=True))
    for result in report:
        assert result.status is ClauseStatus.SKIPPED
        assert "Options(model_binding=...)" in result.messages[0], result.messages


class _PlainSink:
    """Hands the driver only the event half of the suite's sink."""

    def __init__(self, sink: EventSink) -> None:
        self._sink = sink

    def emit(self, event: RunEvent) -> None:
        self._sink.emit(event)

    def emit_stream(self, payload: StreamPayload) -> None:
        self._sink.emit_stream(payload)


class _Undeclared(ReferenceDriver):
    """Declares no ask mode and never asks (its agent sees no host to ask)."""

    def descriptor(self) -> Descriptor:
        return super().descriptor().model_copy(update={"run_policy_caps": RunPolicyCapabilities()})

    async def run(self, request: Request, sink: EventSink) -> Response:
        return await super().run(request, _PlainSink(sink))


@pytest.mark.parametrize("model_side", [True, False], ids=["model-side", "no-model-side"])
def test_a_driver_that_declares_no_ask_is_judged_on_hil_09_alone(model_side: bool) -> None:
    """HIL-09 needs no model side: it only watches the sink."""
    model = ReferenceModel()
    options = Options(live_run=True, model_requests=model.requests_so_far if model_side else None)
    report = _hil(lambda: _Undeclared(model=model), options)
    statuses = _statuses(report)
    assert statuses.pop("HIL-09") is ClauseStatus.PASSED
    assert set(statuses.values()) == {ClauseStatus.SKIPPED}
    assert "declares no ask mode" in report.result("HIL-01").messages[0]


def test_a_short_policy_timeout_is_what_the_unanswered_case_waits_for() -> None:
    """The reference ends an unanswered decision at the policy's timeout: the whole probe
    takes seconds, well under a live deadline of a minute."""
    model = ReferenceModel()
    options = Options(live_run=True, model_requests=model.requests_so_far, live_run_timeout=60)
    report = _hil(lambda: ReferenceDriver(model=model), options)
    assert report.result("HIL-05").status is ClauseStatus.PASSED
    assert report.duration < 40, report.duration


# -- the binding path, against the real Claude Code ------------------------------------------

CLAUDE_SKIP = realcli.skip_reason("claude")


def _claude_binding(program: Path) -> ModelBinding:
    from claude_driver import ClaudeConfig, ClaudeDriver

    def driver(endpoint: ModelEndpoint) -> ClaudeDriver:
        env = {
            "ANTHROPIC_BASE_URL": endpoint.base_url,
            "ANTHROPIC_API_KEY": endpoint.api_key,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "CLAUDE_CODE_MAX_RETRIES": "1",
            **endpoint.env,
        }
        config = ClaudeConfig(
            command=(str(program),),
            model="claude-sonnet-4-5",
            home=str(endpoint.home),
            cwd=str(endpoint.workspace),
            env=env,
            timeout=60.0,
        )
        return ClaudeDriver(config)

    return ModelBinding(driver=driver, protocol="anthropic")


@pytest.mark.skipif(CLAUDE_SKIP is not None, reason=CLAUDE_SKIP or "")
def test_the_binding_path_runs_a_real_cli_that_declares_no_ask() -> None:
    """Claude Code's one-shot driver declares no HITL: with a binding the probe runs its
    one case against a fresh emulator, home and workspace, and the CLI never asks."""
    program = realcli.locate("claude")
    assert program is not None
    from claude_driver import ClaudeDriver

    options = Options(live_run=True, model_binding=_claude_binding(program), live_run_timeout=60)
    report = _hil(lambda: ClaudeDriver(), options)
    statuses = _statuses(report)
    assert statuses.pop("HIL-09") is ClauseStatus.PASSED, report.result("HIL-09").messages
    assert set(statuses.values()) == {ClauseStatus.SKIPPED}
