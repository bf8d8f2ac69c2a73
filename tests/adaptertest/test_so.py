"""SO-01 (declarations, HITL matrices) and SO-02 (the native probe's value), plus the
structured probe's request."""

from __future__ import annotations

import json
from typing import Any

import pytest

from adaptertest._violation import Violation
from adaptertest.so import (
    STRUCTURED_PROMPT,
    STRUCTURED_SCHEMA,
    STRUCTURED_SCHEMA_NAME,
    StrictJSONError,
    parse_strict_json,
    probe_value_matches,
    structured_request,
    verify_structured_output_capability,
    verify_structured_output_descriptor,
    verify_structured_output_value,
)
from driver.decision import HumanDecisionSupport, QuestionSupport
from driver.descriptor import (
    Descriptor,
    StructuredOutputCapability,
    StructuredOutputHITLCapability,
)
from driver.output import OutputFormat, StructuredOutput, StructuredOutputSource
from driver.policy import RunPolicyCapabilities


def clauses(violations: list[Violation]) -> list[str]:
    return [v.clause for v in violations]


Cap = StructuredOutputCapability
Matrix = StructuredOutputHITLCapability
ALL = Matrix(permission=True, plan_review=True, question=True)
ALL_ASK = RunPolicyCapabilities(
    permission=HumanDecisionSupport(ask=True),
    plan_review=HumanDecisionSupport(ask=True),
    question=QuestionSupport(ask=True),
)

# ------------------------------------------------------------------------------------
# SO-01
# ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cap",
    [
        Cap(),
        Cap(json_schema_native=True, works_with_run=True),
        Cap(json_schema_prompt_validate=True, works_with_run=True, works_with_streaming=True),
        Cap(
            json_schema_native=True,
            json_schema_prompt_validate=True,
            works_with_run=True,
            works_with_streaming=True,
            works_with_hitl=True,
        ),
        # an all-false matrix is an explicit "no Ask", legal on any declaration
        Cap(native_hitl=Matrix(), prompt_validate_hitl=Matrix()),
        Cap(json_schema_native=True, works_with_run=True, native_hitl=ALL),
        Cap(
            json_schema_prompt_validate=True,
            works_with_run=True,
            prompt_validate_hitl=Matrix(question=True),
        ),
    ],
)
def test_consistent_capabilities_pass(cap: StructuredOutputCapability) -> None:
    assert verify_structured_output_capability(cap) == []


@pytest.mark.parametrize(
    "cap",
    [
        Cap(works_with_streaming=True),
        Cap(works_with_run=True),
        Cap(works_with_hitl=True),
    ],
    ids=["streaming", "run", "hitl"],
)
def test_works_with_flag_without_mechanism_is_so01(cap: StructuredOutputCapability) -> None:
    assert clauses(verify_structured_output_capability(cap)) == ["SO-01"]


def test_native_with_hitl_but_without_run_is_so01() -> None:
    cap = Cap(json_schema_native=True, works_with_hitl=True)
    [violation] = verify_structured_output_capability(cap)
    assert violation.clause == "SO-01"
    assert "works_with_run=False" in violation.message


def test_prompt_validate_without_run_is_so01() -> None:
    cap = Cap(json_schema_prompt_validate=True)
    assert clauses(verify_structured_output_capability(cap)) == ["SO-01"]


def test_matrix_without_its_mechanism_is_so01() -> None:
    cap = Cap(
        json_schema_prompt_validate=True, works_with_run=True, native_hitl=Matrix(question=True)
    )
    [violation] = verify_structured_output_capability(cap)
    assert "native_hitl" in violation.message
    assert "json_schema_native=False" in violation.message


def test_matrix_without_run_is_so01_next_to_the_mechanism_rule() -> None:
    cap = Cap(json_schema_prompt_validate=True, prompt_validate_hitl=Matrix(permission=True))
    violations = verify_structured_output_capability(cap)
    assert clauses(violations) == ["SO-01", "SO-01"]
    assert "prompt_validate_hitl declares permission" in violations[1].message


def test_capability_check_ignores_run_policy_caps() -> None:
    # The Ask requirement needs the descriptor; the capability alone cannot break it.
    cap = Cap(json_schema_native=True, works_with_run=True, native_hitl=ALL)
    assert verify_structured_output_capability(cap) == []
    assert len(verify_structured_output_descriptor(Descriptor(structured_output=cap))) == 3


@pytest.mark.parametrize(
    ("matrix", "caps", "missing"),
    [
        (Matrix(permission=True), RunPolicyCapabilities(), ["permission"]),
        (
            Matrix(plan_review=True, question=True),
            RunPolicyCapabilities(question=QuestionSupport(ask=True)),
            ["plan_review"],
        ),
        (
            Matrix(question=True),
            RunPolicyCapabilities(question=QuestionSupport(auto_reject=True)),
            ["question"],
        ),
        (ALL, ALL_ASK, []),
        (Matrix(), RunPolicyCapabilities(), []),
    ],
)
def test_true_matrix_kind_needs_the_run_policy_ask(
    matrix: StructuredOutputHITLCapability, caps: RunPolicyCapabilities, missing: list[str]
) -> None:
    for field in ("native_hitl", "prompt_validate_hitl"):
        cap = Cap(
            json_schema_native=True,
            json_schema_prompt_validate=True,
            works_with_run=True,
            **{field: matrix},
        )
        violations = verify_structured_output_descriptor(
            Descriptor(structured_output=cap, run_policy_caps=caps)
        )
        assert clauses(violations) == ["SO-01"] * len(missing)
        for kind, violation in zip(missing, violations, strict=True):
            assert f"{field}.{kind}=True" in violation.message
            assert f"run_policy_caps.{kind}.ask=False" in violation.message


def test_descriptor_check_includes_the_capability_rules() -> None:
    desc = Descriptor(structured_output=Cap(works_with_streaming=True))
    assert clauses(verify_structured_output_descriptor(desc)) == ["SO-01"]


def test_descriptor_with_both_matrices_and_asks_passes() -> None:
    cap = Cap(
        json_schema_native=True,
        json_schema_prompt_validate=True,
        works_with_run=True,
        works_with_hitl=False,
        native_hitl=Matrix(plan_review=True, question=True),
        prompt_validate_hitl=ALL,
    )
    desc = Descriptor(structured_output=cap, run_policy_caps=ALL_ASK)
    assert verify_structured_output_descriptor(desc) == []


# ------------------------------------------------------------------------------------
# SO-02
# ------------------------------------------------------------------------------------


def native(raw_json: str = '{"ok": true}', value: Any = None, **fields: Any) -> StructuredOutput:
    base: dict[str, Any] = {
        "format": OutputFormat.JSON_SCHEMA,
        "source": StructuredOutputSource.NATIVE,
        "raw_json": raw_json,
        "value": value,
        "valid": True,
    }
    base.update(fields)
    return StructuredOutput.model_validate(base)


class Opaque:
    pass


@pytest.mark.parametrize(
    "so",
    [
        native(),
        native('{"ok":true}'),
        native(' \n{ "ok" : true }\n'),
        native(value={"ok": True}),
        native(value=None),
    ],
)
def test_probe_value_passes(so: StructuredOutput) -> None:
    assert verify_structured_output_value(so) == []


def test_missing_structured_output_is_so02() -> None:
    assert clauses(verify_structured_output_value(None)) == ["SO-02"]


@pytest.mark.parametrize(
    "so",
    [
        native(source=StructuredOutputSource.PROMPT_VALIDATE),
        native(source=""),
        native(valid=False),
        native(""),
        native('{"ok": tru'),
        native("null"),
        native("[]"),
        native("{}"),
        native('{"ok":false}'),
        native('{"ok":"true"}'),
        native('{"ok":1}'),
        native('{"ok":true,"extra":1}'),
        native('{"ok":true,"ok":true}'),
        native('{"ok":true}{"ok":true}'),
        native('{"ok":true} {"ok":true}'),
        native('{"ok":NaN}'),
        native('{"result":{"ok":true}}'),
        native(value={"ok": False}),
        native(value={"ok": True, "extra": 1}),
        native(value={"ok": 1}),
        native(value=Opaque()),
        native(value={"ok": float("nan")}),
    ],
    ids=[
        "prompt-validate-source",
        "empty-source",
        "not-valid",
        "raw-empty",
        "raw-malformed",
        "raw-null",
        "raw-array",
        "raw-empty-object",
        "raw-ok-false",
        "raw-ok-string",
        "raw-ok-one",
        "raw-extra-key",
        "raw-duplicate-ok",
        "raw-two-documents",
        "raw-two-documents-spaced",
        "raw-nan",
        "raw-wrapper",
        "value-ok-false",
        "value-extra-key",
        "value-ok-one",
        "value-not-encodable",
        "value-nan",
    ],
)
def test_broken_probe_value_is_exactly_one_so02(so: StructuredOutput) -> None:
    assert clauses(verify_structured_output_value(so)) == ["SO-02"]


def test_so02_messages_name_the_schema_failure_without_the_value() -> None:
    [violation] = verify_structured_output_value(native('{"ok":true,"secret-key":1}'))
    assert "additionalProperties" in violation.message
    assert "secret-key" not in violation.message
    [violation] = verify_structured_output_value(native('{"ok":false}'))
    assert "satisfies the schema" in violation.message


def test_every_so02_problem_is_reported() -> None:
    so = native("[]", value={"ok": False}, valid=False, source="")
    assert clauses(verify_structured_output_value(so)) == ["SO-02"] * 4


def test_strict_parser() -> None:
    assert parse_strict_json('{"a": [1, {"b": null}]}') == {"a": [1, {"b": None}]}
    for text in ['{"a":1,"a":1}', "NaN", "[1] [2]", "", '{"a":{"b":1,"b":2}}']:
        with pytest.raises(StrictJSONError):
            parse_strict_json(text)
    assert probe_value_matches('{"ok":true}')
    assert not probe_value_matches('{"ok":1.0}')


# ------------------------------------------------------------------------------------
# The structured probe's request
# ------------------------------------------------------------------------------------


def test_schema_constant_is_the_probe_schema() -> None:
    assert json.loads(STRUCTURED_SCHEMA) == {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"],
        "additionalProperties": False,
    }
    assert STRUCTURED_SCHEMA_NAME == "adaptertest_result"


def test_structured_request_without_workspace() -> None:
    config = {"model": "m-1"}
    request = structured_request(config, None)
    assert request.run_id == "adaptertest-live-structured"
    assert request.prompt == STRUCTURED_PROMPT
    assert request.config is config
    assert request.streaming is False
    assert request.structured_output_source == StructuredOutputSource.NATIVE
    assert request.output_schema is not None
    assert request.output_schema.format == OutputFormat.JSON_SCHEMA
    assert request.output_schema.schema_document == STRUCTURED_SCHEMA
    assert request.output_schema.name == STRUCTURED_SCHEMA_NAME
    assert request.workspace.id == ""
    assert request.workspace.cwd == ""
    # no profile payload on the structured probe
    assert request.profile_payload.fingerprint == ""
    assert request.metadata == {}


def test_structured_request_with_workspace() -> None:
    request = structured_request(None, "workspace-dir")
    assert request.workspace.id == "adaptertest-ws-structured"
    assert request.workspace.cwd == "workspace-dir"
