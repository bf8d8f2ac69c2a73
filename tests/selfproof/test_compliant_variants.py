"""No false positives: compliant drivers that look nothing like the reference pass.

Each driver here obeys the contract in a way the reference driver does not exercise
(no optional capability at all, a stream capability with every flag off, plain ``def``
everywhere, vendor kinds and observation facts in the stream). Each must pass every
clause it can be judged on, on both anyio backends, with every option on (live run,
structured probe, concurrent runs, every opt-in). A clause may only be skipped for a
reason that names what the driver does not declare or implement.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import pytest
from hostile import (
    Answers,
    BaselineConfig,
    ProofCodec,
    answer,
    fingerprint,
    full_descriptor,
    mirror_item,
    profile_checkpoint,
    refuse_append,
    reject_foreign,
    respond,
    structured_answer,
)
from mutants import NO_CLI_SKIP, no_cli_drift

from adaptertest import ClauseStatus, Options, check_driver
from adaptertest.clauses import CLAUSES, Mode
from adaptertest.dft import DRIFT_CLAUSES
from adaptertest.hil import ASKING_CLAUSES
from adaptertest.options import Backend
from driver import (
    SESSION_PARAM_APPEND_SYSTEM_PROMPT_FINGERPRINT,
    AgentIdentity,
    AgentProfile,
    CapabilityInvocation,
    CapabilityKind,
    CapabilityRef,
    ConfigSchema,
    DecisionResult,
    Descriptor,
    DetectedModel,
    EnvironmentReport,
    EventSink,
    HITLRequestedPayload,
    HITLResolvedPayload,
    HumanDecisionKind,
    InvalidDriverConfigError,
    InvocationErrorCode,
    InvocationEvidence,
    InvocationPhase,
    InvocationSource,
    ModelInfo,
    ObservationCapability,
    ObservationSupport,
    ProfileSelection,
    QuotaReport,
    Request,
    ResolvedSkills,
    Response,
    RunError,
    Skill,
    SkillSnapshot,
    StreamCapability,
    StreamKind,
    StreamPayload,
    SystemPromptCapability,
    SystemPromptUnsupportedError,
    SystemPromptUnsupportedReason,
    TodoItem,
    TodoSnapshot,
    TodoSource,
    TodoStatus,
    TranscriptItem,
    TranscriptKind,
    Usage,
    append_fingerprint_differs,
    append_system_prompt_fingerprint,
    check_append_system_prompt,
)

T = TypeVar("T")
BACKENDS: tuple[Backend, ...] = ("asyncio", "trio")


SCENARIO_CLAUSES = [c.id for c in CLAUSES if c.mode is Mode.SCENARIO]


def options(backend: Backend) -> Options:
    """Every option on, so nothing is skipped for want of an opt-in."""
    return Options(
        config=BaselineConfig(),
        live_run=True,
        live_structured_output=True,
        concurrent_runs=2,
        live_run_timeout=10.0,
        probe_timeout=10.0,
        expect_reject_foreign_config=True,
        sync_skills_probe=True,
        guard_keys=("adaptertest_probe",),
        session_keys=("adaptertest_probe",),
        expected_detected_model="proof-1",
        required_config_fields=("model",),
        max_examples=10,
        backend=backend,
    )


# Why a clause may be skipped, keyed by the phrase the skip reason must contain.
NOT_IMPLEMENTED = "driver does not implement"
NO_CODEC = "driver exposes no session codec"
NO_STREAM_SUPPORT = "does not implement driver.StreamSupport"
NO_NATIVE = "declares structured_output.json_schema_native=False"
NO_RESUME = "returned no valid checkpoint with state"  # only for drivers without resume
NO_APPEND = "does not declare system_prompt.append"  # all but the appenders
NO_ASK = "declares no ask mode"  # none of them asks a host: HIL-09 alone is judged

CAP_PROBES = ("CAP-03", "CAP-04", "CAP-05", "CAP-06", "CAP-07", "CAP-08")
SES_CODEC = ("SES-01", "SES-02", "SES-03", "SES-04", "SES-05", "SES-06", "SES-07", "SES-08")
RICH_STREAM = (
    "EVT-01", "EVT-02", "EVT-03", "EVT-04", "EVT-05", "EVT-06", "EVT-07", "EVT-08",
    "EVT-11", "EVT-12", "EVT-13",
)  # fmt: skip


def _skips(**groups: tuple[str, ...]) -> dict[str, str]:
    reasons = {
        "not_implemented": NOT_IMPLEMENTED,
        "no_codec": NO_CODEC,
        "no_stream": NO_STREAM_SUPPORT,
        "no_native": NO_NATIVE,
        "no_resume": NO_RESUME,
    }
    return {clause: reasons[group] for group, clauses in groups.items() for clause in clauses}


# -- a minimal driver: descriptor, validate_config and run, nothing else ---------------


MINIMAL = Descriptor(type="minimal", display_name="Minimal")
"""Frozen and holding no dict, so one shared instance is a legal answer (DRV-03)."""


class MinimalDriver:
    """The three mandatory methods only: no capability, no resume, no StreamSupport.
    descriptor() hands out the same immutable object every time."""

    def descriptor(self) -> Descriptor:
        return MINIMAL

    def validate_config(self, config: object | None) -> None:
        reject_foreign(config)

    async def run(self, request: Request, sink: EventSink) -> Response:
        refuse_append(self.descriptor().type, request)
        transcript: list[TranscriptItem] = []
        output = answer(request)
        mirror_item(sink, transcript, TranscriptItem(kind=TranscriptKind.INIT, model="m-1"))
        mirror_item(sink, transcript, TranscriptItem(kind=TranscriptKind.ASSISTANT, text=output))
        mirror_item(
            sink,
            transcript,
            TranscriptItem(kind=TranscriptKind.RESULT, subtype="success", usage=Usage()),
        )
        return Response(output=output, transcript=transcript, exit_code=0)


MINIMAL_SKIPS = _skips(
    not_implemented=(*CAP_PROBES, "CAP-10"),
    no_codec=SES_CODEC,
    no_stream=RICH_STREAM,
    no_native=("SO-02",),
    no_resume=("SES-09", "RSP-04"),
)
# CAP-09 is skipped because skills are not declared (never probed).
MINIMAL_SKIPS["CAP-09"] = "does not declare skills.supported"


# -- a stream capability with every flag off: run.started, text, run.finished ----------


class PlainTextStreamer(MinimalDriver):
    """Implements StreamSupport but exposes nothing optional: only text between the frames.
    It also refuses to validate a missing config (CFG-01 allows it) and has a session-codec
    provider that returns None (allowed without declared resume)."""

    def descriptor(self) -> Descriptor:
        return Descriptor(type="plain-text", display_name="Plain text streamer")

    def validate_config(self, config: object | None) -> None:
        # Allowed by CFG-01: this driver cannot run without a config.
        if config is None:
            raise InvalidDriverConfigError("plain-text", ValueError("a config is required"))
        reject_foreign(config)

    def stream_capability(self) -> StreamCapability:
        return StreamCapability()

    def session_codec(self) -> ProofCodec | None:
        # Legal without declared resume: the provider exists, the codec does not.
        return None

    async def run(self, request: Request, sink: EventSink) -> Response:
        refuse_append(self.descriptor().type, request)
        output = answer(request)
        transcript: list[TranscriptItem] = []
        if request.streaming:
            sink.emit_stream(StreamPayload(kind=StreamKind.RUN_STARTED))
            sink.emit_stream(StreamPayload(kind=StreamKind.TEXT_START, message_id="only"))
            sink.emit_stream(
                StreamPayload(kind=StreamKind.TEXT_CONTENT, message_id="only", delta=output)
            )
            sink.emit_stream(StreamPayload(kind=StreamKind.TEXT_END, message_id="only"))
        mirror_item(sink, transcript, TranscriptItem(kind=TranscriptKind.ASSISTANT, text=output))
        if request.streaming:
            sink.emit_stream(StreamPayload(kind=StreamKind.RUN_FINISHED))
        return Response(output=output, transcript=transcript)


PLAIN_TEXT_SKIPS = _skips(
    not_implemented=CAP_PROBES,
    no_codec=SES_CODEC,
    no_native=("SO-02",),
    no_resume=("SES-09", "RSP-04"),
)
PLAIN_TEXT_SKIPS["CAP-09"] = "does not declare skills.supported"


# -- every method synchronous, run included --------------------------------------------


class SyncDriver:
    """The full SPI with plain ``def`` everywhere: the suite awaits only awaitables."""

    TYPE = "sync"

    def __init__(self) -> None:
        self._config = BaselineConfig()
        self._answers = Answers(self.TYPE)

    def descriptor(self) -> Descriptor:
        return full_descriptor(self.TYPE)

    def validate_config(self, config: object | None) -> None:
        reject_foreign(config)

    def check_environment(self, config: object | None) -> EnvironmentReport:
        return self._answers.environment()

    def list_models(self, config: object | None) -> list[ModelInfo]:
        return self._answers.models()

    def detect_model(
        self, config: object | None, profile: ProfileSelection | None
    ) -> DetectedModel | None:
        return self._answers.detected()

    def get_profile(
        self, config: object | None, agent: AgentIdentity, profile: ProfileSelection | None
    ) -> AgentProfile:
        return self._answers.profile()

    def get_quota(self, config: object | None, profile: ProfileSelection | None) -> QuotaReport:
        return self._answers.quota()

    def config_schema(self, config: object | None) -> ConfigSchema | None:
        return self._answers.schema()

    def list_skills(
        self,
        config: object | None,
        payload: ResolvedSkills,
        selected: list[str] | None,
        resolved: list[Skill] | None,
        profile: ProfileSelection | None,
    ) -> SkillSnapshot:
        return self._answers.skills()

    def inject_skills(
        self, config: object | None, payload: ResolvedSkills, profile: ProfileSelection | None
    ) -> None:
        return None

    def sync_skills(
        self,
        config: object | None,
        payload: ResolvedSkills,
        selected: list[str] | None,
        resolved: list[Skill] | None,
        profile: ProfileSelection | None,
    ) -> SkillSnapshot:
        return self._answers.skills()

    def close_processes(self) -> None:
        return None

    def stream_capability(self) -> StreamCapability:
        return StreamCapability(native=True, token_level=True)

    def session_codec(self) -> ProofCodec:
        return ProofCodec()

    def session_config_fingerprint(self) -> str:
        return fingerprint(self._config)

    def run(self, request: Request, sink: EventSink) -> Response:
        refuse_append(self.TYPE, request)  # before respond(), which names the baseline
        return respond(request, sink)


# -- plain def methods that hand back awaitables ---------------------------------------


async def _ready(value: T) -> T:
    return value


class DeferredDriver(SyncDriver):
    """Async-declared methods written as plain ``def`` returning a coroutine."""

    TYPE = "deferred"

    def check_environment(self, config: object | None) -> Awaitable[EnvironmentReport]:  # type: ignore[override]
        return _ready(self._answers.environment())

    def list_models(self, config: object | None) -> Awaitable[list[ModelInfo]]:  # type: ignore[override]
        return _ready(self._answers.models())

    def detect_model(  # type: ignore[override]
        self, config: object | None, profile: ProfileSelection | None
    ) -> Awaitable[DetectedModel | None]:
        return _ready(self._answers.detected())

    def get_profile(  # type: ignore[override]
        self, config: object | None, agent: AgentIdentity, profile: ProfileSelection | None
    ) -> Awaitable[AgentProfile]:
        return _ready(self._answers.profile())

    def get_quota(  # type: ignore[override]
        self, config: object | None, profile: ProfileSelection | None
    ) -> Awaitable[QuotaReport]:
        return _ready(self._answers.quota())

    def config_schema(self, config: object | None) -> Awaitable[ConfigSchema | None]:  # type: ignore[override]
        return _ready(self._answers.schema())

    def list_skills(  # type: ignore[override]
        self,
        config: object | None,
        payload: ResolvedSkills,
        selected: list[str] | None,
        resolved: list[Skill] | None,
        profile: ProfileSelection | None,
    ) -> Awaitable[SkillSnapshot]:
        return _ready(self._answers.skills())

    def sync_skills(  # type: ignore[override]
        self,
        config: object | None,
        payload: ResolvedSkills,
        selected: list[str] | None,
        resolved: list[Skill] | None,
        profile: ProfileSelection | None,
    ) -> Awaitable[SkillSnapshot]:
        return _ready(self._answers.skills())

    def run(self, request: Request, sink: EventSink) -> Awaitable[Response]:  # type: ignore[override]
        async def later() -> Response:
            refuse_append(self.TYPE, request)
            return respond(request, sink)

        return later()


# -- vendor kinds, stream.dropped and declared observation facts -----------------------

_NOW = datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)


def _invocation(
    invocation_id: str,
    kind: CapabilityKind,
    key: str,
    operation: str,
    phase: InvocationPhase,
    **extra: Any,
) -> StreamPayload:
    fact = CapabilityInvocation(
        invocation_id=invocation_id,
        ref=CapabilityRef(kind=kind, key=key, operation=operation),
        phase=phase,
        evidence=InvocationEvidence.PROVIDER_PROTOCOL,
        source=InvocationSource.PROVIDER,
        occurred_at=_NOW,
        **extra,
    )
    return StreamPayload(kind=StreamKind.CAPABILITY_INVOCATION, capability=fact)


def _todo(revision: int, *items: tuple[str, TodoStatus], scope: str = "") -> StreamPayload:
    snapshot = TodoSnapshot(
        items=[TodoItem(id=item_id, content=f"do {item_id}", status=s) for item_id, s in items],
        source=TodoSource.PLAN_UPDATE,
        revision=revision,
        occurred_at=_NOW,
        scope_id=scope,
    )
    return StreamPayload(kind=StreamKind.TODO_UPDATED, todo=snapshot)


def _facts() -> list[StreamPayload]:
    """Every observation kind, each invocation opened and closed, todos advancing."""
    mcp, skill, agent = CapabilityKind.MCP, CapabilityKind.SKILL, CapabilityKind.SUBAGENT
    done = InvocationPhase.COMPLETED
    return [
        _invocation("mcp-1", mcp, "files/read", "read_file", InvocationPhase.STARTED),
        _todo(1, ("plan", TodoStatus.IN_PROGRESS), ("ship", TodoStatus.PENDING)),
        _invocation("mcp-1", mcp, "files/read", "read_file", done, duration=timedelta(0)),
        _invocation("skill-1", skill, "lint", "activate", InvocationPhase.STARTED),
        _invocation(
            "skill-1",
            skill,
            "lint",
            "activate",
            InvocationPhase.FAILED,
            error_code=InvocationErrorCode.TOOL_FAILED,
        ),
        _invocation("agent-1", agent, "helper", "spawn", InvocationPhase.STARTED),
        _todo(1, ("sub", TodoStatus.COMPLETED), scope="agent-1"),
        _invocation("agent-1", agent, "helper", "spawn", done, duration=timedelta(seconds=2)),
        _todo(2, ("plan", TodoStatus.COMPLETED), ("ship", TodoStatus.IN_PROGRESS)),
        _todo(3),  # [] clears the list
    ]


def _rich_stream(output: str, facts: list[StreamPayload]) -> list[StreamPayload]:
    """Everything a rich stream may hold, in an order the reference never uses."""
    kind = StreamKind
    vendor = StreamPayload(kind="acme.heartbeat", raw={"beat": 1})
    sub = {"scope_id": "agent-1", "parent_tool_call_id": "call-0"}  # inside the sub-agent
    half = len(output) // 2 or len(output)
    permission = HumanDecisionKind.PERMISSION
    ask = HITLRequestedPayload(request_id="h1", kind=permission, tool_call_id="call-0")
    resolved = HITLResolvedPayload(request_id="h1", kind=permission, result=DecisionResult.APPROVED)
    return [
        StreamPayload(kind=kind.RUN_STARTED),
        vendor,
        StreamPayload(kind=kind.DROPPED, raw={"dropped": 3}),
        StreamPayload(kind=kind.STEP_STARTED, name="turn"),
        StreamPayload(kind=kind.STEP_STARTED, name="turn"),  # nested, same name
        *facts[:5],
        StreamPayload(kind=kind.REASONING_START, message_id="r"),
        StreamPayload(kind=kind.REASONING_CONTENT, message_id="r", delta="think"),
        StreamPayload(kind=kind.REASONING_END, message_id="r"),
        StreamPayload(kind=kind.TOOL_CALL_START, tool_call_id="call-0", name="Task"),
        StreamPayload(kind=kind.HITL_REQUESTED, tool_call_id="call-0", hitl_requested=ask),
        StreamPayload(kind=kind.HITL_RESOLVED, tool_call_id="call-0", hitl_resolved=resolved),
        StreamPayload(kind=kind.TOOL_CALL_ARGS, tool_call_id="call-0", delta='{"q":'),
        StreamPayload(kind=kind.TOOL_CALL_ARGS, tool_call_id="call-0", delta='"x"}'),
        StreamPayload(kind=kind.TOOL_CALL_END, tool_call_id="call-0"),
        # The sub-agent reuses the id "call-0" in its own scope, with complete args.
        StreamPayload(kind=kind.TOOL_CALL_START, tool_call_id="call-0", name="Read",
                      args={"path": "a"}, **sub),
        StreamPayload(kind=kind.TOOL_CALL_END, tool_call_id="call-0", **sub),
        StreamPayload(kind=kind.TOOL_CALL_RESULT, tool_call_id="call-0", result={"ok": 1}, **sub),
        StreamPayload(kind=kind.TOOL_CALL_RESULT, tool_call_id="call-0", result={"done": True}),
        StreamPayload(kind=kind.STEP_FINISHED, name="turn"),
        StreamPayload(kind=kind.TEXT_START, message_id="t"),
        StreamPayload(kind="acme.progress", name="half", raw={"pct": 50}),
        StreamPayload(kind=kind.TEXT_CONTENT, message_id="t", delta=output[:half]),
        StreamPayload(kind=kind.DROPPED),
        StreamPayload(kind=kind.TEXT_CONTENT, message_id="t", delta=output[half:] or "."),
        StreamPayload(kind=kind.TEXT_END, message_id="t"),
        *facts[5:],
        StreamPayload(kind=kind.STEP_FINISHED, name="turn"),
        vendor.model_copy(),
        StreamPayload(kind=kind.RUN_FINISHED, usage=Usage(output_tokens=1)),
    ]  # fmt: skip


class ObservingStreamer(SyncDriver):
    """A rich stream unlike the reference's: vendor kinds and stream.dropped between the
    frames, nested steps of one name, a HITL exchange, a sub-agent tool call reusing an
    id in its own scope, and every observation fact it declares.

    Batch runs (the structured probe) report the facts too, on the batch transport,
    which declares them as well.
    """

    TYPE = "observing"

    def descriptor(self) -> Descriptor:
        everything = ObservationSupport(skills=True, mcp=True, subagents=True, todos=True)
        return full_descriptor(self.TYPE).model_copy(
            update={"observation": ObservationCapability(streaming=everything, batch=everything)}
        )

    def stream_capability(self) -> StreamCapability:
        return StreamCapability(
            native=True, token_level=True, reasoning=True, tool_call_args=True, hitl=True
        )

    async def run(self, request: Request, sink: EventSink) -> Response:  # type: ignore[override]
        refuse_append(self.descriptor().type, request)
        output = answer(request)
        facts = _facts()
        for payload in _rich_stream(output, facts) if request.streaming else facts:
            sink.emit_stream(payload)
        transcript: list[TranscriptItem] = []
        for item in (
            TranscriptItem(kind=TranscriptKind.THINKING, text="think", delta=True),
            TranscriptItem(kind=TranscriptKind.TOOL_CALL, tool_use_id="call-0", tool_name="Task"),
            TranscriptItem(
                kind=TranscriptKind.TOOL_CALL,
                tool_use_id="call-0",
                tool_name="Read",
                scope_id="agent-1",
                parent_tool_call_id="call-0",
            ),
            TranscriptItem(kind=TranscriptKind.TOOL_RESULT, tool_use_id="call-0", text=""),
            TranscriptItem(kind=TranscriptKind.ASSISTANT, text=output),
        ):
            mirror_item(sink, transcript, item)
        return Response(
            output=output,
            transcript=transcript,
            checkpoint=profile_checkpoint(request),
            structured_output=structured_answer(request),
            usage=Usage(output_tokens=1),  # as run.finished reports it (USG-01)
        )


# -- drivers written to upstream's append and observation rules -----------------------


class UpstreamAppender(ObservingStreamer):
    """Declares the append and follows upstream's rules for it: the refusals in order,
    the fingerprint in the checkpoint, a changed append refused on resume. And, as
    upstream allows, it reports every declared fact on every run, demanded or not (the
    system-prompt run demands none)."""

    TYPE = "upstream-appender"

    def descriptor(self) -> Descriptor:
        return (
            super()
            .descriptor()
            .model_copy(update={"system_prompt": SystemPromptCapability(append=True)})
        )

    async def run(self, request: Request, sink: EventSink) -> Response:  # type: ignore[override]
        text = request.append_system_prompt
        check_append_system_prompt(self.TYPE, text, supported=True)
        state = request.session.state if request.session is not None else None
        if state is not None and append_fingerprint_differs(state.data, text):
            raise RunError("the session was captured under another appended system prompt")
        response = await super().run(request.model_copy(update={"append_system_prompt": ""}), sink)
        checkpoint = response.checkpoint
        if text and checkpoint is not None and checkpoint.state is not None:
            key = SESSION_PARAM_APPEND_SYSTEM_PROMPT_FINGERPRINT
            checkpoint.state.data[key] = append_system_prompt_fingerprint(text)
        return response


class ConflictingAppender(SyncDriver):
    """Declares the append, but its config already sets the CLI's system prompt: every
    append is refused with conflicting_extra_args (after upstream's earlier checks)."""

    TYPE = "conflicting-appender"

    def descriptor(self) -> Descriptor:
        return (
            super()
            .descriptor()
            .model_copy(update={"system_prompt": SystemPromptCapability(append=True)})
        )

    def run(self, request: Request, sink: EventSink) -> Response:
        text = request.append_system_prompt
        check_append_system_prompt(self.TYPE, text, supported=True)
        if text:
            raise SystemPromptUnsupportedError(
                self.TYPE,
                SystemPromptUnsupportedReason.CONFLICTING_EXTRA_ARGS,
                argument="--system-prompt",
            )
        return respond(request, sink)


CONFLICT = "conflicting_extra_args (argument '--system-prompt')"


# -- the tests -------------------------------------------------------------------------

VARIANTS: dict[str, tuple[Callable[[], object], Mapping[str, str | None], str]] = {
    "minimal": (MinimalDriver, MINIMAL_SKIPS, "live"),
    "plain-text-streamer": (PlainTextStreamer, PLAIN_TEXT_SKIPS, "live"),
    "all-sync": (SyncDriver, {}, "full"),
    "deferred-awaitables": (DeferredDriver, {}, "full"),
    "observing-streamer": (ObservingStreamer, {}, "full"),
    "upstream-appender": (
        UpstreamAppender,
        {"SYS-02": "Options(model_requests=...)", "SYS-03": None},
        "full",
    ),
    "conflicting-appender": (
        ConflictingAppender,
        dict.fromkeys(("SYS-01", "SYS-02", "SYS-03"), CONFLICT),
        "full",
    ),
}
"""Variant -> (factory, clause -> phrase its skip reason must contain, or None for a
clause that must pass although most variants skip it, expected level). Without resume no
live run can reach the full level."""


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_compliant_variant_passes_every_clause_it_can_be_judged_on(
    variant: str, backend: Backend
) -> None:
    factory, skips, level = VARIANTS[variant]
    # None of them runs a CLI: the drift probe, on, skips DFT with the reason that says so.
    # None talks to a model over the network, so none has a model binding: the scenario
    # clauses are skipped, naming the option.
    defaults: dict[str, str | None] = {
        **dict.fromkeys(DRIFT_CLAUSES, NO_CLI_SKIP),
        **dict.fromkeys(SCENARIO_CLAUSES, "Options(model_binding=ModelBinding("),
        "SYS-02": NO_APPEND,
        "SYS-03": NO_APPEND,
        "OBS-07": "strict_observation_demand",  # stricter than upstream: off
        **dict.fromkeys(ASKING_CLAUSES, NO_ASK),
    }
    allowed_skips = {
        clause: phrase for clause, phrase in {**defaults, **skips}.items() if phrase is not None
    }
    drift = no_cli_drift(factory)
    report = check_driver(factory, dataclasses.replace(options(backend), drift=drift))

    wrong = {
        r.clause: (r.status.value, r.messages)
        for r in report.results
        if r.status is not ClauseStatus.PASSED and r.clause not in allowed_skips
    }
    assert wrong == {}, report.summary()
    for clause, phrase in allowed_skips.items():
        result = report.result(clause)
        assert result.status is ClauseStatus.SKIPPED, (clause, result.status, result.messages)
        (reason,) = result.messages
        assert reason.startswith(clause), reason
        assert phrase in reason, (clause, reason)
    assert report.level is not None, report.summary()
    assert report.level.value == level, report.summary()
