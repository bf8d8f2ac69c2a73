"""Tests of the SPI exception types: categories, message shapes and cause chaining."""

from __future__ import annotations

import pytest

from driver.errors import (
    DriverError,
    HumanDecisionModeUnsupportedError,
    InvalidDriverConfigError,
    InvalidOutputSchemaError,
    InvalidPolicyError,
    PolicyCapabilityUnsupportedError,
    RunError,
    SessionConfigFingerprintError,
    StructuredOutputUnsupportedError,
    SystemPromptUnsupportedError,
    SystemPromptUnsupportedReason,
    error_matches,
    find_error,
)
from driver.run import Response

ALL_ERRORS: list[type[DriverError]] = [
    InvalidDriverConfigError,
    InvalidPolicyError,
    PolicyCapabilityUnsupportedError,
    HumanDecisionModeUnsupportedError,
    StructuredOutputUnsupportedError,
    SystemPromptUnsupportedError,
    InvalidOutputSchemaError,
    SessionConfigFingerprintError,
    RunError,
]


@pytest.mark.parametrize("cls", ALL_ERRORS)
def test_every_error_is_a_driver_error_and_builds_without_arguments(
    cls: type[DriverError],
) -> None:
    error = cls()
    assert isinstance(error, DriverError)
    assert isinstance(error, Exception)


def test_invalid_driver_config_is_a_value_error() -> None:
    assert issubclass(InvalidDriverConfigError, ValueError)
    with pytest.raises(ValueError, match="invalid driver config"):
        raise InvalidDriverConfigError(driver="acme")


def test_categories_do_not_overlap() -> None:
    error = InvalidPolicyError(field="isolation")
    assert not isinstance(error, PolicyCapabilityUnsupportedError)
    assert not isinstance(error, HumanDecisionModeUnsupportedError)
    assert not isinstance(PolicyCapabilityUnsupportedError(), InvalidPolicyError)


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (InvalidDriverConfigError(), "agentadaptor: invalid driver config"),
        (
            InvalidDriverConfigError(driver="acme"),
            "agentadaptor: invalid driver config: driver=acme",
        ),
        (
            InvalidDriverConfigError(driver="acme", cause=TypeError("want AcmeConfig")),
            "agentadaptor: invalid driver config: driver=acme: want AcmeConfig",
        ),
        (
            InvalidDriverConfigError(cause=TypeError("want AcmeConfig")),
            "agentadaptor: invalid driver config: want AcmeConfig",
        ),
        (InvalidPolicyError(), "agentadaptor: invalid run policy"),
        (
            InvalidPolicyError(driver="acme", field="isolation", value="sideways"),
            'agentadaptor: invalid run policy: driver=acme field=isolation value="sideways"',
        ),
        (
            InvalidPolicyError(driver="acme", field="max_retries", value='-1 "x"'),
            'agentadaptor: invalid run policy: driver=acme field=max_retries value="-1 \\"x\\""',
        ),
        (
            PolicyCapabilityUnsupportedError(driver="acme", dimension="web_search", value="allow"),
            "agentadaptor: policy capability unsupported by driver: "
            "driver=acme dimension=web_search value=allow",
        ),
        (
            HumanDecisionModeUnsupportedError(driver="acme", kind="question", mode="ask"),
            "agentadaptor: human decision mode unsupported by driver: "
            "driver=acme kind=question mode=ask",
        ),
        (
            StructuredOutputUnsupportedError(driver="acme", reason="no native schema"),
            "agentadaptor: structured output unsupported by adapter: "
            "driver=acme reason=no native schema",
        ),
        (
            SystemPromptUnsupportedError(),
            "agentadaptor: system prompt append unsupported by driver",
        ),
        (
            SystemPromptUnsupportedError(driver="acme", reason="unsupported_driver"),
            "agentadaptor: system prompt append unsupported by driver: "
            "driver=acme reason=unsupported_driver",
        ),
        (
            SystemPromptUnsupportedError(
                "acme", "conflicting_extra_args", argument="--system-prompt"
            ),
            "agentadaptor: system prompt append unsupported by driver: "
            "driver=acme reason=conflicting_extra_args argument=--system-prompt",
        ),
        (
            SystemPromptUnsupportedError(
                driver="acme", reason=SystemPromptUnsupportedReason.CONFLICTING_EXTRA_ARGS
            ),
            "agentadaptor: system prompt append unsupported by driver: "
            "driver=acme reason=conflicting_extra_args",
        ),
        (InvalidOutputSchemaError(), "agentadaptor: invalid output schema"),
        (
            InvalidOutputSchemaError(reason="not an object"),
            "agentadaptor: invalid output schema: not an object",
        ),
        (SessionConfigFingerprintError(), "session config cannot be fingerprinted"),
        (
            SessionConfigFingerprintError(
                path="$config.hooks[value]",
                type_name="builtins.function",
                kind="callable",
                why="code has no stable cross-process representation",
            ),
            "session config cannot be fingerprinted at $config.hooks[value] "
            "(type builtins.function): unsupported callable: "
            "code has no stable cross-process representation",
        ),
    ],
)
def test_message_shapes(error: DriverError, expected: str) -> None:
    assert str(error) == expected


def test_fields_are_kept() -> None:
    policy = InvalidPolicyError(driver="d", field="f", value="v")
    assert (policy.driver, policy.field, policy.value) == ("d", "f", "v")
    capability = PolicyCapabilityUnsupportedError(driver="d", dimension="x", value="v")
    assert (capability.driver, capability.dimension, capability.value) == ("d", "x", "v")
    mode = HumanDecisionModeUnsupportedError(driver="d", kind="permission", mode="ask")
    assert (mode.driver, mode.kind, mode.mode) == ("d", "permission", "ask")
    structured = StructuredOutputUnsupportedError(driver="d", reason="r")
    assert (structured.driver, structured.reason) == ("d", "r")
    fingerprint = SessionConfigFingerprintError("$config", "t", "cycle", "w")
    assert (fingerprint.path, fingerprint.type_name, fingerprint.kind, fingerprint.why) == (
        "$config",
        "t",
        "cycle",
        "w",
    )


def test_invalid_driver_config_chains_its_cause() -> None:
    cause = TypeError("foreign config type")
    error = InvalidDriverConfigError(driver="acme", cause=cause)
    assert error.cause is cause
    assert error.__cause__ is cause
    assert error_matches(error, InvalidDriverConfigError)
    assert error_matches(error, TypeError)
    assert error_matches(error, cause)
    assert not error_matches(error, KeyError)


def test_invalid_output_schema_chains_its_cause() -> None:
    cause = ValueError("Expecting value: line 1 column 1")
    error = InvalidOutputSchemaError(reason="malformed JSON", cause=cause)
    assert error.cause is cause
    assert error.__cause__ is cause
    assert error_matches(error, InvalidOutputSchemaError)
    assert error_matches(error, cause)
    assert not error_matches(InvalidOutputSchemaError(reason="x"), cause)


def test_error_matches_walks_groups_and_survives_cycles() -> None:
    inner = InvalidPolicyError(field="isolation")
    group = ExceptionGroup("several", [KeyError("k"), inner])
    assert error_matches(group, InvalidPolicyError)
    assert error_matches(group, inner)
    first = RuntimeError("a")
    second = RuntimeError("b")
    first.__cause__ = second
    second.__cause__ = first
    assert not error_matches(first, KeyError)


def test_raise_keeps_identity() -> None:
    error = PolicyCapabilityUnsupportedError(driver="acme")
    with pytest.raises(PolicyCapabilityUnsupportedError) as info:
        raise error
    assert info.value is error


def test_run_error_carries_the_partial_response() -> None:
    partial = Response()
    error = RunError("provider crashed after checkpoint", response=partial)
    assert str(error) == "provider crashed after checkpoint"
    assert error.message == "provider crashed after checkpoint"
    assert error.response is partial
    assert RunError("transport failed").response is None


def test_system_prompt_refusal_keeps_driver_and_reason() -> None:
    error = SystemPromptUnsupportedError("acme", SystemPromptUnsupportedReason.UNSUPPORTED_DRIVER)
    assert (error.driver, error.reason, error.argument) == ("acme", "unsupported_driver", "")
    assert error.reason == SystemPromptUnsupportedReason.UNSUPPORTED_DRIVER
    assert not isinstance(error, StructuredOutputUnsupportedError)
    assert not error_matches(RunError("unrelated"), SystemPromptUnsupportedError)
    wrapped = RunError("launch refused")
    wrapped.__cause__ = error
    assert error_matches(wrapped, SystemPromptUnsupportedError)


def test_the_old_unsupported_reason_is_still_read() -> None:
    """The port spelled unsupported_driver "unsupported" before it took upstream's
    names (the full set is in test_models); a stored value keeps its meaning."""
    assert SystemPromptUnsupportedReason("unsupported") is (
        SystemPromptUnsupportedReason.UNSUPPORTED_DRIVER
    )
    with pytest.raises(ValueError, match="unsupported_drivers"):
        SystemPromptUnsupportedReason("unsupported_drivers")


def test_find_error_returns_the_matched_error_from_causes_and_groups() -> None:
    refusal = SystemPromptUnsupportedError("acme", "nul_byte")
    group = ExceptionGroup("tasks", [ValueError("x"), ExceptionGroup("inner", [refusal])])
    wrapped = RunError("launch refused")
    wrapped.__cause__ = group
    assert find_error(wrapped, SystemPromptUnsupportedError) is refusal
    assert find_error(wrapped, ValueError) is group.exceptions[0]
    assert find_error(wrapped, RunError) is wrapped
    assert find_error(RunError("unrelated"), SystemPromptUnsupportedError) is None
    assert error_matches(wrapped, refusal)
