"""Tests of the behaviour attached to SPI models: fingerprints, keys, clones, policy defaults."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from driver import (
    CommonConfig,
    DecisionChoice,
    DecisionRequest,
    DecisionResult,
    EnvBinding,
    FailureAction,
    FailureCode,
    HITLRequestedPayload,
    HumanDecisionFailure,
    HumanDecisionKind,
    HumanDecisionMode,
    HumanDecisionPolicy,
    InstructionsBundleRef,
    ProfilePayload,
    QuestionMode,
    ResolvedSkill,
    ResolvedSkills,
    RunFailure,
    WorkspaceStrategy,
    WorkspaceStrategyType,
    decision_mode,
    effective_human_decision_policy,
    is_human_decision,
    is_rejected,
    is_timed_out,
)

# ---------------------------------------------------------------------------
# ProfilePayload.session_fingerprint


def test_session_fingerprint_is_empty_for_an_empty_payload() -> None:
    assert ProfilePayload().session_fingerprint() == ""


def test_session_fingerprint_falls_back_to_the_exact_fingerprint() -> None:
    assert ProfilePayload(fingerprint="exact").session_fingerprint() == "exact"


def test_session_fingerprint_prefers_the_compatibility_fingerprint() -> None:
    payload = ProfilePayload(fingerprint="exact", session_compatibility_fingerprint="compat")
    assert payload.session_fingerprint() == "compat"
    assert payload.fingerprint == "exact"


# ---------------------------------------------------------------------------
# ResolvedSkills.keys


def test_keys_of_empty_skills_is_an_empty_list() -> None:
    keys = ResolvedSkills().keys()
    assert keys == []
    assert isinstance(keys, list)


def test_keys_keep_entry_order_and_are_a_fresh_list() -> None:
    skills = ResolvedSkills(
        entries=[ResolvedSkill(key="zeta"), ResolvedSkill(key="alpha"), ResolvedSkill(key="Zeta")]
    )
    keys = skills.keys()
    assert keys == ["zeta", "alpha", "Zeta"]
    keys.append("mutated")
    assert skills.keys() == ["zeta", "alpha", "Zeta"]


# ---------------------------------------------------------------------------
# CommonConfig.clone


def _config() -> CommonConfig:
    return CommonConfig(
        command="acme",
        cwd="work",
        env=[EnvBinding(name="A", value="1"), EnvBinding(name="A", value="2")],
        instructions=InstructionsBundleRef(
            id="rules",
            native={"limits": {"depth": 3, "ratio": 0.5}, "pair": (1, 2), "tags": ["x"]},
        ),
        workspace_strategy=WorkspaceStrategy(
            type=WorkspaceStrategyType.GIT_WORKTREE, base_ref="main"
        ),
        timeout=timedelta(minutes=5),
        extra_args=["--fast"],
    )


def test_clone_is_equal_but_not_shared() -> None:
    original = _config()
    clone = original.clone()
    assert clone == original
    assert clone is not original
    assert clone.instructions is not original.instructions
    assert clone.workspace_strategy is not original.workspace_strategy
    assert clone.env is not original.env


def test_clone_is_independent_of_later_mutation() -> None:
    original = _config()
    clone = original.clone()
    assert original.instructions is not None
    assert original.workspace_strategy is not None
    original.instructions.native["limits"]["depth"] = 99
    original.instructions.native["tags"].append("y")
    original.workspace_strategy.base_ref = "changed"
    original.env.append(EnvBinding(name="B"))
    original.env[0].value = "mutated"
    original.extra_args.clear()

    assert clone == _config()


def test_clone_preserves_value_types() -> None:
    clone = _config().clone()
    assert clone.instructions is not None
    native = clone.instructions.native
    assert type(native["limits"]["depth"]) is int
    assert type(native["limits"]["ratio"]) is float
    assert type(native["pair"]) is tuple
    assert type(clone.workspace_strategy) is WorkspaceStrategy
    assert type(clone.timeout) is timedelta


# ---------------------------------------------------------------------------
# effective_human_decision_policy


def test_effective_policy_fills_every_zero_field() -> None:
    effective = effective_human_decision_policy(HumanDecisionPolicy())
    assert effective == HumanDecisionPolicy(
        permission=HumanDecisionMode.ASK,
        plan_review=HumanDecisionMode.ASK,
        question=QuestionMode.AUTO_REJECT,
        timeout=timedelta(seconds=30),
        on_timeout=FailureAction.ABORT,
        on_reject=FailureAction.ABORT,
        max_retries=3,
    )


def test_decision_mode_reads_the_field_of_the_kind() -> None:
    policy = HumanDecisionPolicy(
        permission=HumanDecisionMode.AUTO_APPROVE,
        plan_review=HumanDecisionMode.AUTO_REJECT,
        question=QuestionMode.ASK,
    )
    assert decision_mode(policy, HumanDecisionKind.PERMISSION) == HumanDecisionMode.AUTO_APPROVE
    assert decision_mode(policy, HumanDecisionKind.PLAN_REVIEW) == HumanDecisionMode.AUTO_REJECT
    assert decision_mode(policy, HumanDecisionKind.QUESTION) == QuestionMode.ASK
    assert decision_mode(HumanDecisionPolicy(), HumanDecisionKind.QUESTION) == QuestionMode.UNSET


def test_the_requested_payload_is_the_request_but_its_run_thread_and_default() -> None:
    request = DecisionRequest(
        request_id="d-1",
        run_id="run-1",
        thread_id="thread-1",
        kind=HumanDecisionKind.PERMISSION,
        source="Bash",
        tool_call_id="toolu_1",
        prompt="Run it?",
        payload={"input": {"command": "ls"}},
        choices=[DecisionChoice(key="allow", label="Allow")],
        default_decision=DecisionResult.REJECTED,
        created_at=datetime(2026, 1, 2, tzinfo=UTC),
        deadline=datetime(2026, 1, 2, 0, 0, 30, tzinfo=UTC),
        retry_attempt=2,
    )
    body = HITLRequestedPayload.for_request(request)
    kept = request.model_dump(exclude={"run_id", "thread_id", "default_decision"})
    assert body.model_dump() == kept
    body.payload["input"]["command"] = "rm"
    assert request.payload == {"input": {"command": "ls"}}  # a copy


def test_effective_policy_keeps_explicit_values() -> None:
    explicit = HumanDecisionPolicy(
        permission=HumanDecisionMode.AUTO_APPROVE,
        plan_review=HumanDecisionMode.AUTO_REJECT,
        question=QuestionMode.ASK,
        timeout=timedelta(seconds=-1),
        on_timeout=FailureAction.CONTINUE,
        on_reject=FailureAction.RETRY,
        max_retries=7,
    )
    assert effective_human_decision_policy(explicit) == explicit


def test_effective_policy_does_not_touch_its_input() -> None:
    policy = HumanDecisionPolicy(permission=HumanDecisionMode.AUTO_REJECT)
    effective = effective_human_decision_policy(policy)
    assert effective is not policy
    assert policy == HumanDecisionPolicy(permission=HumanDecisionMode.AUTO_REJECT)
    assert effective.permission is HumanDecisionMode.AUTO_REJECT
    assert effective.plan_review is HumanDecisionMode.ASK


def test_effective_policy_of_a_negative_timeout_never_expires() -> None:
    policy = HumanDecisionPolicy(timeout=timedelta(microseconds=-1))
    assert effective_human_decision_policy(policy).timeout == timedelta(microseconds=-1)


# ---------------------------------------------------------------------------
# RunFailure helpers


def test_failure_helpers_accept_none() -> None:
    assert not is_human_decision(None)
    assert not is_rejected(None)
    assert not is_timed_out(None)


def _decision(result: DecisionResult) -> HumanDecisionFailure:
    return HumanDecisionFailure(kind=HumanDecisionKind.PERMISSION, decision=result, attempts=1)


@pytest.mark.parametrize(
    ("failure", "human", "rejected", "timed_out"),
    [
        (RunFailure(), False, False, False),
        (RunFailure(code=FailureCode.AGENT_ERROR, message="exit 1"), False, False, False),
        (RunFailure(code=FailureCode.CANCELLED), False, False, False),
        (
            RunFailure(code=FailureCode.REJECT, human_decision=_decision(DecisionResult.REJECTED)),
            True,
            True,
            False,
        ),
        (
            RunFailure(
                code=FailureCode.TIMEOUT, human_decision=_decision(DecisionResult.TIMED_OUT)
            ),
            True,
            False,
            True,
        ),
        (RunFailure(code=FailureCode.REJECT), False, True, False),
        (RunFailure(human_decision=_decision(DecisionResult.ABORTED)), True, False, False),
    ],
)
def test_failure_helpers_on_values(
    failure: RunFailure, human: bool, rejected: bool, timed_out: bool
) -> None:
    assert is_human_decision(failure) is human
    assert is_rejected(failure) is rejected
    assert is_timed_out(failure) is timed_out


def test_failure_helpers_accept_codes_read_from_json() -> None:
    failure = RunFailure.model_validate_json('{"code": "decision_timeout"}')
    assert is_timed_out(failure)
    assert not is_rejected(failure)


def test_session_mapping_laws() -> None:
    """params_from_state / state_from_params: the codec laws SES-02..04 hold by themselves."""
    from driver import SessionParams, SessionState, params_from_state, state_from_params

    assert params_from_state(None) == SessionParams()
    assert state_from_params(SessionParams()) is None
    state = SessionState(resume_id="r-1", data={"cwd": "/w", "a": "1"})
    params = params_from_state(state)
    assert params == SessionParams(resume_id="r-1", display_id="r-1", values=state.data)
    params.values["cwd"] = "/elsewhere"  # the params own their values
    assert state.data["cwd"] == "/w"
    restored = state_from_params(params_from_state(state))
    assert restored is not None
    assert params_from_state(restored) == params_from_state(state)
    only_display = SessionParams(display_id="label")
    assert state_from_params(only_display) == SessionState(display_id="label")
