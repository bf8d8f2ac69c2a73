"""Shape tests of the SPI models: fields, enums, JSON round trips, strictness, immutability."""

from __future__ import annotations

import enum
import functools
import types
import typing
from datetime import UTC, datetime, timedelta, timezone
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

import driver
from driver import (
    ConfigField,
    ConfigSchema,
    Descriptor,
    EnvironmentCheck,
    ModelInfo,
    RawStreams,
    Request,
    Response,
    RunEvent,
    RunEventType,
    SkillSource,
    StreamKind,
    StreamPayload,
    TranscriptItem,
    TranscriptKind,
)
from driver.descriptor import ConfigFieldType
from driver.environment import EnvironmentCheckLevel

PROPERTY_SETTINGS = settings(max_examples=25, deadline=None, derandomize=True, database=None)

# Every model of the SPI with its fields in declaration order. Written out so a
# missing, renamed or resurrected field fails here rather than in a driver.
EXPECTED_FIELDS: dict[str, tuple[str, ...]] = {
    # descriptor.py
    "Descriptor": (
        "type",
        "display_name",
        "models",
        "config_schema",
        "sessions",
        "skills",
        "mcp",
        "instructions",
        "workspace",
        "process",
        "run_policy_caps",
        "runtime",
        "structured_output",
        "observation",
        "system_prompt",
    ),
    "SessionCapability": ("supports_resume",),
    "SkillCapability": ("supported", "mode"),
    "InstructionsCapability": ("supported",),
    "WorkspaceCapability": ("supported",),
    "ProcessCapability": ("persistent",),
    "RuntimeCapability": ("reports_services",),
    "StructuredOutputHITLCapability": ("permission", "plan_review", "question"),
    "StructuredOutputCapability": (
        "json_schema_native",
        "json_schema_prompt_validate",
        "works_with_run",
        "works_with_streaming",
        "works_with_hitl",
        "native_hitl",
        "prompt_validate_hitl",
        "notes",
    ),
    "ObservationSupport": ("skills", "mcp", "subagents", "todos"),
    "ObservationCapability": ("streaming", "batch"),
    "SystemPromptCapability": ("append",),
    "StreamCapability": ("native", "token_level", "reasoning", "tool_call_args", "hitl"),
    "ConfigOption": ("value", "label", "description"),
    "ConfigField": (
        "name",
        "label",
        "type",
        "required",
        "description",
        "hint",
        "default",
        "options",
        "group",
        "meta",
    ),
    "ConfigSchema": ("fields",),
    # config.py
    "CommonConfig": (
        "command",
        "cwd",
        "env",
        "instructions",
        "prompt_template",
        "bootstrap_prompt_template",
        "workspace_strategy",
        "workspace_runtime",
        "timeout",
        "grace_period",
        "extra_args",
    ),
    "WorkspaceStrategy": ("type", "base_ref", "branch_template", "worktree_parent_dir"),
    "WorkspaceRuntimeConfig": ("services",),
    # decision.py
    "HumanDecisionPolicy": (
        "permission",
        "plan_review",
        "question",
        "timeout",
        "on_timeout",
        "on_reject",
        "max_retries",
    ),
    "HumanDecisionSupport": ("ask", "auto_approve", "auto_reject", "retry"),
    "QuestionSupport": ("ask", "auto_reject", "retry"),
    "DecisionChoice": ("key", "label", "description"),
    "DecisionRequest": (
        "request_id",
        "run_id",
        "thread_id",
        "kind",
        "source",
        "tool_call_id",
        "prompt",
        "payload",
        "choices",
        "default_decision",
        "created_at",
        "deadline",
        "retry_attempt",
    ),
    "DecisionResponse": ("request_id", "result", "choice", "answer", "text"),
    "HumanDecisionFailure": ("kind", "source", "decision", "request", "attempts"),
    "HITLRequestedPayload": (
        "request_id",
        "kind",
        "source",
        "tool_call_id",
        "prompt",
        "payload",
        "choices",
        "created_at",
        "deadline",
        "retry_attempt",
    ),
    "HITLResolvedPayload": (
        "request_id",
        "kind",
        "source",
        "retry_attempt",
        "result",
        "choice",
        "answer",
        "resolved_at",
        "latency",
    ),
    # environment.py
    "ModelInfo": ("id", "label"),
    "DetectedModel": ("model", "provider", "source", "candidates"),
    "AgentProfile": (
        "driver_type",
        "supported",
        "dir",
        "env_var",
        "source",
        "managed",
        "error",
    ),
    "EnvironmentReport": ("driver_type", "status", "healthy", "summary", "checks"),
    "EnvironmentCheck": ("code", "level", "message", "detail", "hint"),
    "QuotaReport": ("driver_type", "provider", "source", "available", "error", "windows"),
    "QuotaWindow": ("label", "used_percent", "resets_at", "value_label", "detail"),
    # events.py
    "RunEvent": (
        "type",
        "seq",
        "timestamp",
        "stream",
        "chunk",
        "item",
        "text",
        "metadata",
        "data",
    ),
    "TranscriptItem": (
        "kind",
        "text",
        "delta",
        "tool_use_id",
        "tool_name",
        "input",
        "is_error",
        "model",
        "session_id",
        "usage",
        "cost_usd",
        "subtype",
        "errors",
        "metadata",
        "data",
        "scope_id",
        "parent_scope_id",
        "parent_tool_call_id",
    ),
    "StreamPayload": (
        "kind",
        "sequence",
        "seq",
        "run_id",
        "thread_id",
        "turn_id",
        "message_id",
        "tool_call_id",
        "name",
        "delta",
        "args",
        "result",
        "usage",
        "error",
        "timestamp",
        "hitl_requested",
        "hitl_resolved",
        "role",
        "raw",
        "capability",
        "todo",
        "scope_id",
        "parent_scope_id",
        "parent_tool_call_id",
    ),
    # mcp.py
    "MCPServerSpec": (
        "key",
        "transport",
        "command",
        "args",
        "env",
        "url",
        "headers",
        "bearer_token_env_var",
        "required",
        "required_reason",
        "tools",
    ),
    "MCPToolPolicy": ("approval_mode",),
    "MCPPayload": ("servers", "fingerprint", "warnings"),
    "MCPCapability": ("supported", "stdio", "http", "sse", "tool_approvals"),
    # observation.py
    "CapabilityRef": ("kind", "key", "operation"),
    "CapabilityInvocation": (
        "invocation_id",
        "ref",
        "phase",
        "evidence",
        "source",
        "scope_id",
        "parent_scope_id",
        "parent_tool_call_id",
        "occurred_at",
        "duration",
        "error_code",
    ),
    "TodoItem": ("id", "content", "status", "synthetic_id"),
    "TodoSnapshot": (
        "items",
        "source",
        "scope_id",
        "parent_scope_id",
        "parent_tool_call_id",
        "revision",
        "occurred_at",
    ),
    # output.py
    "OutputSchema": ("format", "schema_document", "name", "description", "on_invalid"),
    "StructuredOutput": (
        "format",
        "source",
        "raw_json",
        "value",
        "valid",
        "validation_errors",
        "schema_hash",
    ),
    # policy.py
    "RunPolicy": ("isolation", "web_search", "browser", "human_decision"),
    "RunPolicyCapabilities": (
        "isolation",
        "web_search",
        "browser",
        "permission",
        "plan_review",
        "question",
    ),
    # profile.py
    "ProfileSelection": ("mode", "dir", "from_dir", "clone"),
    "CloneProfileOptions": ("include_settings", "include_mcp", "include_skills", "auth_mode"),
    "InstructionsBundleRef": (
        "id",
        "path",
        "content",
        "fingerprint",
        "scope",
        "mode",
        "native",
    ),
    "ProfilePayload": (
        "skills",
        "mcp",
        "agents",
        "hooks",
        "instructions",
        "config",
        "declared",
        "fingerprint",
        "session_compatibility_fingerprint",
        "warnings",
    ),
    "ProfileResourceDeclarations": ("agents", "hooks", "instructions", "config"),
    "AgentSpec": (
        "key",
        "runtime_name",
        "description",
        "instructions",
        "source_path",
        "source_fingerprint",
        "model",
        "reasoning_effort",
        "tool_policy",
        "permission_mode",
        "sandbox_mode",
        "mcp_servers",
        "skills",
        "hooks",
        "native",
        "metadata",
    ),
    "AgentToolPolicy": ("allow", "deny"),
    "AgentPayload": ("agents", "fingerprint", "warnings"),
    "HookSpec": (
        "key",
        "event",
        "matcher_spec",
        "handler",
        "timeout",
        "fail_policy",
        "status_message",
        "disabled",
        "native",
        "metadata",
    ),
    "HookMatcher": ("subject", "syntax", "pattern"),
    "HookHandler": (
        "type",
        "command",
        "args",
        "env",
        "prompt",
        "url",
        "server",
        "tool",
        "input",
        "agent",
    ),
    "HookPayload": ("hooks", "fingerprint", "warnings"),
    "ProfileConfigPatch": ("key", "capability", "values", "native"),
    "NativeConfigPatch": ("provider", "file_kind", "path", "section", "values"),
    "ProfileConfigPayload": ("patches", "fingerprint", "warnings"),
    # run.py
    "AgentIdentity": ("id", "tenant_id", "profile_id", "name"),
    "TerminalPayload": ("event", "raw_json"),
    "RawStreams": ("stdout", "stderr", "terminal"),
    "Usage": ("input_tokens", "output_tokens", "cached_input_tokens", "estimated_cost_milli"),
    "Request": (
        "run_id",
        "prompt",
        "config",
        "agent",
        "workspace",
        "runtime",
        "skills",
        "mcp",
        "profile_payload",
        "profile",
        "policy",
        "instructions",
        "session",
        "metadata",
        "output_schema",
        "structured_output_source",
        "spawn",
        "model_override",
        "streaming",
        "append_system_prompt",
        "observation",
    ),
    "ObservationDemand": ("capability_invocations", "todos"),
    "Response": (
        "output",
        "raw_streams",
        "transcript",
        "exit_code",
        "signal",
        "timed_out",
        "usage",
        "checkpoint",
        "metadata",
        "provider",
        "model",
        "summary",
        "structured_output",
        "runtime_services",
        "failure",
    ),
    "SessionContext": ("engine_session_id", "mode", "state", "previous_id"),
    "SessionState": ("resume_id", "display_id", "data"),
    "Checkpoint": ("state", "valid"),
    "RunFailure": ("message", "code", "metadata", "human_decision"),
    # runtime.py
    "WorkspaceLease": (
        "id",
        "mode",
        "strategy_type",
        "cwd",
        "fingerprint",
        "metadata",
        "instructions_id",
    ),
    "EnvBinding": ("name", "value"),
    "RuntimeServiceSpec": (
        "id",
        "name",
        "url",
        "description",
        "lifecycle",
        "reuse_key",
        "command",
        "cwd",
        "port",
        "metadata",
    ),
    "RuntimeServiceRef": (
        "id",
        "name",
        "url",
        "status",
        "lifecycle",
        "reuse_key",
        "command",
        "cwd",
        "port",
        "owner_agent_id",
        "health",
        "mcp",
        "metadata",
        "secret_env",
    ),
    "RuntimePayload": ("requested", "ensured", "secret_env", "fingerprint"),
    "RuntimeServiceReport": (
        "id",
        "name",
        "url",
        "status",
        "lifecycle",
        "reuse_key",
        "command",
        "cwd",
        "port",
        "owner_agent_id",
        "health",
        "metadata",
    ),
    # session.py
    "SessionParams": ("resume_id", "display_id", "values"),
    # skill.py
    "Skill": ("key", "source", "required", "reason", "metadata"),
    "SkillSource": (),
    "ResolvedSkills": ("mode", "entries", "warnings", "fingerprint"),
    "ResolvedSkill": ("key", "runtime_name", "source_path", "required", "reason", "metadata"),
    "SkillSnapshot": (
        "driver_type",
        "supported",
        "mode",
        "selected",
        "resolved",
        "entries",
        "warnings",
        "fingerprint",
    ),
    "SnapshotEntry": (
        "key",
        "runtime_name",
        "selected",
        "managed",
        "required",
        "required_reason",
        "state",
        "origin",
        "origin_label",
        "location_label",
        "read_only",
        "source_path",
        "target_path",
        "detail",
    ),
}

# Models that are immutable: Descriptor, everything reachable only from it, and StreamCapability.
EXPECTED_FROZEN = {
    "Descriptor",
    "SessionCapability",
    "SkillCapability",
    "MCPCapability",
    "InstructionsCapability",
    "WorkspaceCapability",
    "ProcessCapability",
    "RuntimeCapability",
    "RunPolicyCapabilities",
    "HumanDecisionSupport",
    "QuestionSupport",
    "StructuredOutputCapability",
    "StructuredOutputHITLCapability",
    "SystemPromptCapability",
    "ObservationSupport",
    "ObservationCapability",
    "ModelInfo",
    "ConfigSchema",
    "ConfigField",
    "ConfigOption",
    "StreamCapability",
}

# Fields removed upstream; a test forbids them from coming back.
LEGACY_FIELDS: dict[str, tuple[str, ...]] = {
    "AgentSpec": ("content",),
    "HookSpec": ("matcher", "command", "args", "env"),
    "ProfileConfigPatch": ("file_kind", "path", "section"),
    "CloneProfileOptions": ("include_auth",),
    "OutputSchema": ("mode",),
    "StructuredOutput": ("mode",),
    "Response": ("biller", "billing_type", "cost_usd", "result", "question"),
}

EXPECTED_ENUMS: dict[str, set[str]] = {
    "AgentProfileSource": {
        "binding_env",
        "profile_option",
        "process_env",
        "default",
        "managed",
        "unsupported",
    },
    "CloneProfileAuthMode": {"", "copy", "link"},
    "DecisionResult": {"approved", "rejected", "answered", "timed_out", "aborted"},
    "EnvironmentStatus": {"pass", "warn", "fail"},
    "FailureAction": {"", "abort", "continue", "retry"},
    "FailureCode": {
        "decision_rejected",
        "decision_timeout",
        "agent_error",
        "cancelled",
        "policy_error",
        "active_execution_timeout",
    },
    "FeatureLevel": {"", "allow", "deny"},
    "HookEvent": {
        "session_start",
        "session_end",
        "prompt_submit",
        "prompt_expand",
        "pre_tool",
        "post_tool",
        "tool_failure",
        "permission_request",
        "pre_shell",
        "post_shell",
        "pre_mcp",
        "post_mcp",
        "pre_file_read",
        "post_file_edit",
        "subagent_start",
        "subagent_stop",
        "pre_compact",
        "post_compact",
        "stop",
        "stop_failure",
    },
    "HookFailPolicy": {"", "open", "closed"},
    "HookHandlerType": {"command", "prompt", "http", "mcp_tool", "agent"},
    "HookMatcherSubject": {
        "",
        "tool",
        "command",
        "mcp",
        "path",
        "prompt",
        "subagent",
        "source",
    },
    "HookMatcherSyntax": {"", "exact", "regex", "prefix", "contains"},
    "HumanDecisionKind": {"permission", "plan_review", "question"},
    "HumanDecisionMode": {"", "ask", "auto_approve", "auto_reject"},
    "InstructionMode": {"", "replace"},
    "InstructionScope": {"", "user", "project", "local", "run"},
    "IsolationLevel": {"", "read_only", "workspace_write", "unrestricted"},
    "MCPToolApprovalMode": {"prompt", "approve"},
    "MCPTransport": {"stdio", "http", "sse"},
    "OutputFormat": {"json_schema"},
    "ProfileConfigFileKind": {"json", "toml"},
    "ProfileMode": {"", "native", "dedicated", "clone"},
    "QuestionMode": {"", "ask", "auto_reject"},
    "Role": {"", "user"},
    "RunEventType": {"chunk", "item", "invocation", "spawn", "runtime", "lifecycle"},
    "RuntimeServiceHealth": {"unknown", "healthy", "unhealthy"},
    "RuntimeServiceLifecycle": {"shared", "ephemeral"},
    "RuntimeServiceStatus": {"starting", "running", "stopped", "failed"},
    "SessionMode": {"continue_or_start", "continue_only", "fork", "stateless"},
    "SkillOrigin": {"company_managed", "paperclip_required", "user_installed", "external_unknown"},
    "SkillState": {"available", "configured", "installed", "missing", "stale", "external"},
    "SkillSyncMode": {"unsupported", "ephemeral", "persistent"},
    "StreamKind": {
        "run.started",
        "run.finished",
        "run.error",
        "step.started",
        "step.finished",
        "text.start",
        "text.content",
        "text.end",
        "tool_call.start",
        "tool_call.args",
        "tool_call.end",
        "tool_call.result",
        "reasoning.start",
        "reasoning.content",
        "reasoning.end",
        "hitl.requested",
        "hitl.resolved",
        "stream.dropped",
        "capability.invocation",
        "todo.updated",
    },
    "StructuredOutputInvalidPolicy": {"fail_run", "return_invalid"},
    "StructuredOutputSource": {"native", "prompt_validate"},
    "SystemPromptUnsupportedReason": {
        "unsupported_driver",
        "invalid_utf8",
        "nul_byte",
        "inline_limit",
        "command_line_limit",
        "unsafe_shell_argument",
        "conflicting_extra_args",
    },
    "TranscriptKind": {
        "assistant",
        "thinking",
        "user",
        "tool_call",
        "tool_result",
        "init",
        "result",
        "stdout",
        "stderr",
        "system",
        "summary",
        "question",
        "failure",
    },
    "WorkspaceMode": {
        "shared_workspace",
        "isolated_workspace",
        "operator_branch",
        "reuse_existing",
        "agent_default",
    },
    "WorkspaceStrategyType": {"project_primary", "git_worktree", "driver_managed", "cloud_sandbox"},
    # Observation facts (upstream capability and todo packages).
    "CapabilityKind": {"skill", "mcp", "subagent"},
    "InvocationPhase": {"started", "completed", "failed", "cancelled", "interrupted"},
    "InvocationEvidence": {
        "provider_protocol",
        "native_input_accepted",
        "host_lifecycle",
        "relayed",
    },
    "InvocationSource": {"provider", "host", "relay"},
    "InvocationErrorCode": {
        "tool_failed",
        "run_cancelled",
        "run_interrupted",
        "protocol_error",
        "delegation_failed",
    },
    "TodoStatus": {"pending", "in_progress", "completed", "cancelled"},
    "TodoSource": {"tool_result", "plan_update"},
    # Python-side lists of the usual values of open string fields.
    "ConfigFieldType": {"text", "textarea", "number", "toggle", "select"},
    "ConfigFieldGroup": {"command", "model", "permissions", "execution"},
    "EnvironmentCheckLevel": {"pass", "warn", "fail"},
}


def _exported(kind: type) -> dict[str, Any]:
    """Public names of ``driver`` that are subclasses of ``kind``."""
    found: dict[str, Any] = {}
    for name in driver.__all__:
        obj = getattr(driver, name)
        if isinstance(obj, type) and issubclass(obj, kind):
            found[name] = obj
    return found


MODELS: dict[str, type[BaseModel]] = _exported(BaseModel)
ENUMS: dict[str, type[enum.StrEnum]] = _exported(enum.StrEnum)
MODEL_NAMES = sorted(MODELS)

# ---------------------------------------------------------------------------
# Hypothesis strategies derived from the model annotations.

# Text: any length up to 40, any code point. JSON cannot carry lone surrogates (pydantic
# refuses to write them), so only the Python round trip draws them.
_TEXT = st.text(max_size=40)
_SURROGATE_TEXT = st.text(st.characters(), max_size=40)  # characters() includes them
_CONTAINER_SIZE = 6
_BIG = 2**80  # past uint64 on both sides
_JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-_BIG, max_value=_BIG)
    | st.sampled_from([2**63, 2**64, 2**64 + 1, -(2**64) - 1])
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT
)
_JSON_VALUES: st.SearchStrategy[Any] = st.recursive(
    _JSON_SCALARS,
    lambda children: (
        st.lists(children, max_size=_CONTAINER_SIZE)
        | st.dictionaries(_TEXT, children, max_size=_CONTAINER_SIZE)
    ),
    max_leaves=12,
)
# Aware datetimes in any whole-minute offset (the only ones JSON can carry), and naive ones.
_OFFSETS = st.integers(min_value=-(24 * 60 - 1), max_value=24 * 60 - 1).map(
    lambda minutes: timezone(timedelta(minutes=minutes))
)
_DATETIMES = st.datetimes(timezones=st.none() | st.just(UTC) | _OFFSETS)


def _open_set(known: type[enum.StrEnum], text: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Known values of an open string set, plus arbitrary vendor strings."""
    return st.sampled_from([member.value for member in known]) | text


# Open string fields: mix the known values with vendor strings.
_OPEN_SETS: dict[tuple[str, str], type[enum.StrEnum]] = {
    ("StreamPayload", "kind"): StreamKind,
    ("RunEvent", "type"): RunEventType,
    ("ConfigField", "type"): ConfigFieldType,
    ("EnvironmentCheck", "level"): EnvironmentCheckLevel,
}


def _int_strategy(metadata: list[Any]) -> st.SearchStrategy[int]:
    low = -_BIG
    for constraint in metadata:
        if isinstance(constraint, annotated_types.Ge):
            low = max(low, int(typing.cast(int, constraint.ge)))
    edges = [n for n in (0, 2**63 - 1, 2**64, _BIG) if n >= low]
    return st.integers(min_value=low, max_value=_BIG) | st.sampled_from(edges)


def _strategy(
    tp: Any, text: st.SearchStrategy[str], metadata: list[Any] | None = None
) -> st.SearchStrategy[Any]:
    """A strategy producing valid values of annotation ``tp``, strings drawn from ``text``."""
    origin = get_origin(tp)
    args = get_args(tp)
    if tp is Any:
        return _JSON_VALUES
    if tp is type(None):
        return st.none()
    if origin is Annotated:
        return _strategy(args[0], text, list(args[1:]))
    if origin is Literal:
        return st.sampled_from(args)
    if origin in (Union, types.UnionType):
        return st.one_of(*(_strategy(arg, text) for arg in args))
    if origin in (list, tuple, dict):
        # lists of models nest lists of models: keep those short, or examples explode
        size = _CONTAINER_SIZE // 2 if _mentions_model(args[-1]) else _CONTAINER_SIZE
        if origin is dict:
            keys, values = (_strategy(arg, text) for arg in args)
            return st.dictionaries(keys, values, max_size=size)
        items = st.lists(_strategy(args[0], text), max_size=size)
        return items if origin is list else items.map(tuple)
    if isinstance(tp, type):
        if issubclass(tp, enum.Enum):
            return st.sampled_from(list(tp))
        if issubclass(tp, BaseModel):
            return _model_strategy(tp, surrogates=text is _SURROGATE_TEXT)
        if tp is bool:
            return st.booleans()
        if tp is int:
            return _int_strategy(metadata or [])
        if tp is float:
            return st.floats(allow_nan=False, allow_infinity=False)
        if tp is str:
            return text
        if tp is bytes:
            return st.binary(max_size=64)
        if tp is datetime:
            return _DATETIMES
        if tp is timedelta:
            return st.timedeltas()
    raise TypeError(f"no strategy for {tp!r}")


def _mentions_model(tp: Any) -> bool:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return True
    return any(_mentions_model(arg) for arg in get_args(tp))


@functools.cache
def _model_strategy(model: type[BaseModel], *, surrogates: bool = False) -> st.SearchStrategy[Any]:
    """Instances of ``model`` with any subset of fields set (the rest keep defaults).

    ``surrogates`` lets text hold lone surrogates, which only Python (not JSON) carries.
    """
    text = _SURROGATE_TEXT if surrogates else _TEXT
    optional: dict[str, st.SearchStrategy[Any]] = {}
    for name, info in model.model_fields.items():
        known = _OPEN_SETS.get((model.__name__, name))
        if known is not None:
            optional[name] = _open_set(known, text)
        else:
            optional[name] = _strategy(info.annotation, text, list(info.metadata))
    return st.fixed_dictionaries({}, optional=optional).map(lambda kwargs: model(**kwargs))


# ---------------------------------------------------------------------------
# Inventory


def test_every_expected_model_is_exported_with_its_fields() -> None:
    assert set(MODELS) == set(EXPECTED_FIELDS)
    for name, fields in EXPECTED_FIELDS.items():
        assert tuple(MODELS[name].model_fields) == fields, name


def test_legacy_fields_do_not_exist() -> None:
    for name, legacy in LEGACY_FIELDS.items():
        model = MODELS[name]
        for field in legacy:
            assert field not in model.model_fields, (name, field)
            with pytest.raises(ValidationError):
                model.model_validate({field: "x"})


def test_enum_value_sets_match_upstream() -> None:
    assert set(ENUMS) == set(EXPECTED_ENUMS)
    for name, values in EXPECTED_ENUMS.items():
        members = [member.value for member in ENUMS[name]]
        assert len(members) == len(values), name
        assert set(members) == values, name
    assert len(StreamKind) == 20
    assert len(TranscriptKind) == 13
    assert len(RunEventType) == 6


def test_enum_member_names_follow_go_constants() -> None:
    assert driver.StreamKind.RUN_STARTED.value == "run.started"
    assert driver.StreamKind.DROPPED.value == "stream.dropped"
    assert driver.StreamKind.CAPABILITY_INVOCATION.value == "capability.invocation"
    assert driver.StreamKind.TODO_UPDATED.value == "todo.updated"
    assert driver.SkillOrigin.MANAGED.value == "company_managed"
    assert driver.SkillOrigin.REQUIRED.value == "paperclip_required"
    assert driver.Role.ASSISTANT.value == ""
    assert driver.Role.USER.value == "user"
    assert driver.FailureCode.REJECT.value == "decision_rejected"
    assert driver.FailureCode.TIMEOUT.value == "decision_timeout"
    assert driver.WorkspaceStrategyType.DRIVER_MANAGED.value == "driver_managed"
    assert not hasattr(driver.QuestionMode, "AUTO_APPROVE")
    assert not hasattr(driver.SessionMode, "START_NEW")


def test_constants() -> None:
    assert timedelta(seconds=30) == driver.DEFAULT_HUMAN_DECISION_TIMEOUT
    assert driver.DEFAULT_HUMAN_DECISION_MAX_RETRIES == 3
    assert driver.SESSION_PARAM_CWD == "cwd"
    assert driver.SESSION_PARAM_WORKSPACE_ID == "workspace_id"
    assert driver.SESSION_PARAM_PROFILE_FINGERPRINT == "profile_fingerprint"
    assert driver.SKILL_METADATA_RUNTIME_NAME == "_runtime_name"
    assert driver.SKILL_METADATA_DISPLAY_NAME == "_display_name"


def test_every_public_name_resolves() -> None:
    assert len(driver.__all__) == len(set(driver.__all__))
    for name in driver.__all__:
        assert getattr(driver, name) is not None, name


# ---------------------------------------------------------------------------
# Defaults and strictness


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_zero_value_construction_and_fresh_collections(name: str) -> None:
    model = MODELS[name]
    first, second = model(), model()
    assert first == second
    for field in model.model_fields:
        value = getattr(first, field)
        if isinstance(value, list | dict):
            assert not value, (name, field)
            assert value is not getattr(second, field), (name, field)


def test_absent_todo_items_differ_from_cleared() -> None:
    assert driver.TodoSnapshot().items is None
    assert driver.TodoSnapshot(items=[]).items == []


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_unknown_fields_are_rejected(name: str) -> None:
    model = MODELS[name]
    with pytest.raises(ValidationError):
        model.model_validate({"no_such_field": 1})
    with pytest.raises(ValidationError):
        model.model_validate_json('{"no_such_field": 1}')


def test_closed_enum_fields_reject_unknown_values() -> None:
    with pytest.raises(ValidationError):
        driver.RunPolicy.model_validate({"isolation": "sandboxed"})
    with pytest.raises(ValidationError):
        driver.RunFailure.model_validate({"code": "exploded"})
    with pytest.raises(ValidationError):
        driver.TranscriptItem.model_validate({"kind": "acme.note"})
    assert driver.RunFailure(code="").code == ""


def test_sequence_numbers_cannot_be_negative() -> None:
    with pytest.raises(ValidationError):
        StreamPayload(seq=-1)
    with pytest.raises(ValidationError):
        RunEvent(seq=-1)


# ---------------------------------------------------------------------------
# Immutability


def test_frozen_models_are_exactly_the_declarations() -> None:
    frozen = {name for name, model in MODELS.items() if model.model_config.get("frozen")}
    assert frozen == EXPECTED_FROZEN


def _model_types(tp: Any) -> set[type[BaseModel]]:
    """Model classes mentioned anywhere in annotation ``tp``."""
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return {tp}
    return {found for arg in get_args(tp) for found in _model_types(arg)}


def test_descriptor_graph_is_frozen_and_uses_tuples() -> None:
    pending: list[type[BaseModel]] = [Descriptor, driver.StreamCapability]
    seen: set[type[BaseModel]] = set()
    while pending:
        model = pending.pop()
        if model in seen:
            continue
        seen.add(model)
        assert model.model_config.get("frozen"), model.__name__
        for name, info in model.model_fields.items():
            assert get_origin(info.annotation) is not list, (model.__name__, name)
            pending.extend(_model_types(info.annotation))
    assert {model.__name__ for model in seen} == EXPECTED_FROZEN


@pytest.mark.parametrize("name", sorted(EXPECTED_FROZEN))
def test_frozen_models_reject_assignment(name: str) -> None:
    instance = MODELS[name]()
    field = next(iter(MODELS[name].model_fields))
    with pytest.raises(ValidationError):
        setattr(instance, field, getattr(instance, field))


def test_descriptor_built_twice_is_equal() -> None:
    def build() -> Descriptor:
        return Descriptor(
            type="acme",
            display_name="Acme",
            models=(ModelInfo(id="m-1", label="M 1"),),
            config_schema=ConfigSchema(
                fields=(ConfigField(name="model", type="select", meta={"ui": "x"}),)
            ),
            sessions=driver.SessionCapability(supports_resume=True),
            structured_output=driver.StructuredOutputCapability(
                json_schema_native=True,
                works_with_run=True,
                native_hitl=driver.StructuredOutputHITLCapability(question=True),
            ),
        )

    first, second = build(), build()
    assert first == second
    assert first is not second
    assert first.structured_output.native_hitl is not second.structured_output.native_hitl
    assert first != build().model_copy(update={"display_name": "Other"})


def test_frozen_sequences_become_tuples() -> None:
    descriptor = Descriptor.model_validate({"models": [{"id": "a"}, {"id": "b"}]})
    assert isinstance(descriptor.models, tuple)
    assert [model.id for model in descriptor.models] == ["a", "b"]


# ---------------------------------------------------------------------------
# Round trips


@pytest.mark.parametrize("name", MODEL_NAMES)
@PROPERTY_SETTINGS
@given(data=st.data())
def test_json_round_trip(name: str, data: st.DataObject) -> None:
    model = MODELS[name]
    instance = data.draw(_model_strategy(model))
    restored = model.model_validate_json(instance.model_dump_json())
    assert restored == instance
    # == compares aware datetimes by instant; JSON must keep the offset too
    assert restored.model_dump_json() == instance.model_dump_json()


@pytest.mark.parametrize("name", MODEL_NAMES)
@settings(PROPERTY_SETTINGS, max_examples=10)
@given(data=st.data())
def test_python_round_trip_keeps_any_text(name: str, data: st.DataObject) -> None:
    model = MODELS[name]
    instance = data.draw(_model_strategy(model, surrogates=True))
    assert model.model_validate(instance.model_dump()) == instance


def test_round_trip_of_times_bytes_and_unicode() -> None:
    moment = datetime(2024, 2, 29, 23, 59, 59, 999999, tzinfo=UTC)
    event = RunEvent(
        type=RunEventType.CHUNK,
        timestamp=moment,
        stream="stdout",
        chunk=b"\xff\xfe\x00 half \xe2\x82",
        item=TranscriptItem(kind=TranscriptKind.ASSISTANT, text="héllo ✓ 漢字 🚀", cost_usd=0.25),
    )
    restored = RunEvent.model_validate_json(event.model_dump_json())
    assert restored == event
    assert restored.timestamp == moment
    assert restored.chunk == b"\xff\xfe\x00 half \xe2\x82"

    policy = driver.HumanDecisionPolicy(timeout=timedelta(seconds=-1))
    assert driver.HumanDecisionPolicy.model_validate_json(policy.model_dump_json()) == policy

    streams = RawStreams(stdout=b"\x80\x81", stderr=b"")
    dumped = streams.model_dump_json()
    assert '"stdout":"gIE="' in dumped
    assert RawStreams.model_validate_json(dumped) == streams


@pytest.mark.parametrize("kind", ["acme.custom", "vendor/ping", ""])
def test_vendor_stream_kinds_round_trip(kind: str) -> None:
    payload = StreamPayload(kind=kind, raw={"acme": {"n": 1}})
    restored = StreamPayload.model_validate_json(payload.model_dump_json())
    assert restored == payload
    assert restored.kind == kind


@pytest.mark.parametrize("event_type", ["acme.heartbeat", "telemetry"])
def test_vendor_run_event_types_round_trip(event_type: str) -> None:
    event = RunEvent(type=event_type, text="t", data={"k": [1, "2"]})
    restored = RunEvent.model_validate_json(event.model_dump_json())
    assert restored == event
    assert restored.type == event_type


def test_open_sets_store_known_values_as_plain_strings() -> None:
    payload = StreamPayload(kind=StreamKind.TEXT_CONTENT, message_id="m", delta="x")
    assert payload.kind == "text.content"
    assert type(payload.kind) is str
    assert type(EnvironmentCheck(level=EnvironmentCheckLevel.WARN).level) is str


def test_response_holds_transcript_items() -> None:
    item = TranscriptItem(kind=TranscriptKind.TOOL_CALL, tool_name="bash", input={"cmd": "ls"})
    response = Response(transcript=[item], failure=driver.RunFailure(code="agent_error"))
    restored = Response.model_validate_json(response.model_dump_json())
    assert restored.transcript == [item]
    assert restored.failure is not None
    assert restored.failure.code is driver.FailureCode.AGENT_ERROR


def test_request_accepts_any_config_object() -> None:
    config = driver.CommonConfig(command="acme")
    request = Request(config=config, structured_output_source="native")
    assert request.config is config
    assert request.structured_output_source is driver.StructuredOutputSource.NATIVE


def test_skill_source_subclasses_serialize_their_own_fields() -> None:
    class DirSource(SkillSource):
        path: str = ""

    skill = driver.Skill(key="lint", source=DirSource(path="skills/lint"))
    assert skill.model_dump()["source"] == {"path": "skills/lint"}
    assert '"path":"skills/lint"' in skill.model_dump_json()
    assert isinstance(skill.source, DirSource)
    skill.source.skill_source()
    assert skill.source == DirSource(path="skills/lint")


@PROPERTY_SETTINGS
@given(data=st.data())
def test_a_config_fingerprint_survives_copies_and_json(data: st.DataObject) -> None:
    """A host may store the config as JSON and fingerprint it again: same token."""
    fingerprint = driver.canonical_session_config_fingerprint
    config = data.draw(_model_strategy(driver.CommonConfig))
    token = fingerprint("d", config)
    assert fingerprint("d", config.clone()) == token
    assert (
        fingerprint("d", driver.CommonConfig.model_validate_json(config.model_dump_json())) == token
    )


# ---------------------------------------------------------------------------
# Appended system prompt, observation demand, active-execution timeout


def test_zero_values_ask_for_no_append_and_no_observation_facts() -> None:
    request = Request()
    assert request.append_system_prompt == ""
    assert request.observation == driver.ObservationDemand()
    assert not request.observation.capability_invocations
    assert not request.observation.todos
    assert Descriptor().system_prompt == driver.SystemPromptCapability()
    assert Descriptor().system_prompt.append is False


def test_the_append_is_kept_byte_for_byte_through_json() -> None:
    text = "  line one\n\tline two \u00e9\u2603  "
    request = Request(
        append_system_prompt=text,
        observation=driver.ObservationDemand(todos=True),
    )
    back = Request.model_validate_json(request.model_dump_json())
    assert back.append_system_prompt == text
    assert back.observation == driver.ObservationDemand(todos=True)
    dumped = Descriptor(system_prompt=driver.SystemPromptCapability(append=True)).model_dump()
    assert dumped["system_prompt"] == {"append": True}


def test_active_execution_timeout_is_a_plain_failure_not_a_human_decision() -> None:
    failure = driver.RunFailure(code="active_execution_timeout", message="limit")
    assert failure.code is driver.FailureCode.ACTIVE_EXECUTION_TIMEOUT
    assert not driver.is_human_decision(failure)
    assert not driver.is_timed_out(failure)  # decision deadlines only
    assert not driver.is_rejected(failure)


def test_the_json_schema_lists_the_new_fields() -> None:
    request = Request.model_json_schema()
    assert request["properties"]["append_system_prompt"]["type"] == "string"
    assert "ObservationDemand" in request["$defs"]
    demand = request["$defs"]["ObservationDemand"]["properties"]
    assert set(demand) == {"capability_invocations", "todos"}
    failure_codes = driver.Response.model_json_schema()["$defs"]["FailureCode"]
    assert "active_execution_timeout" in failure_codes["enum"]
    descriptor = Descriptor.model_json_schema()
    assert descriptor["$defs"]["SystemPromptCapability"]["properties"] == {
        "append": {"default": False, "title": "Append", "type": "boolean"}
    }
