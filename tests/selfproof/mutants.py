"""The mutant catalogue: for every clause, a driver that breaks that rule and nothing else.

Each mutant is a small variation of the reference driver: a subclass overriding one
method, or one hook of :class:`Rewriting`, which passes everything a run emits and
returns through overridable hooks. ``test_kill_matrix.py`` runs the whole suite
against each mutant and requires the set of failing clauses to be exactly the
mutant's clause (plus a documented ``also_fails`` set where no more precise bug
exists). ``docs/mutants.md`` is generated from this catalogue by
:func:`mutant_table_markdown`.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import functools
import hashlib
import itertools
import json
import math
import sys
import threading
import time
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any, ClassVar
from unittest.mock import patch

import anyio
from scenario_mutants import SCENARIO_MUTANTS

import adaptertest.cap
import adaptertest.liv
from adaptertest.clauses import CLAUSE_BY_ID, CLAUSES
from adaptertest.options import Drift, ModelBinding, Options
from adaptertest.so import structured_request
from claude_driver import ClaudeConfig, ClaudeDriver, ClaudeStreamParser
from driver import (
    APPEND_INLINE_LIMIT,
    SESSION_PARAM_APPEND_SYSTEM_PROMPT_FINGERPRINT,
    SESSION_PARAM_PROFILE_FINGERPRINT,
    AgentIdentity,
    AgentProfile,
    CapabilityInvocation,
    CapabilityKind,
    CapabilityRef,
    Checkpoint,
    ConfigSchema,
    DecisionCapableSink,
    DecisionRequest,
    DecisionResponse,
    DecisionResult,
    Descriptor,
    DetectedModel,
    EnvironmentCheck,
    EnvironmentReport,
    EventSink,
    FailureCode,
    HumanDecisionKind,
    HumanDecisionMode,
    InvalidDriverConfigError,
    InvocationEvidence,
    InvocationPhase,
    InvocationSource,
    ModelInfo,
    ObservationCapability,
    ObservationDemand,
    ObservationSupport,
    ProcessCapability,
    ProfileSelection,
    QuotaReport,
    QuotaWindow,
    Request,
    ResolvedSkills,
    Response,
    Role,
    RunError,
    RunEvent,
    RunEventType,
    RunFailure,
    RunPolicyCapabilities,
    SessionCapability,
    SessionContext,
    SessionParams,
    SessionState,
    Skill,
    SkillCapability,
    SkillSnapshot,
    StreamCapability,
    StreamKind,
    StreamPayload,
    StructuredOutputCapability,
    SystemPromptCapability,
    SystemPromptUnsupportedError,
    SystemPromptUnsupportedReason,
    TerminalPayload,
    TodoItem,
    TodoSnapshot,
    TodoSource,
    TodoStatus,
    TranscriptItem,
    TranscriptKind,
    Usage,
    append_system_prompt_fingerprint,
    check_append_system_prompt,
)
from driver.clikit import ProcessOutcome, RunOutput
from referencedriver import (
    REFERENCE_DRIVER_TYPE,
    ReferenceConfig,
    ReferenceDriver,
    ReferenceModel,
    ReferenceSessionCodec,
)
from referencedriver._decisions import Action, Decision, run_shell

__all__ = [
    "BASELINE",
    "CLAUDE_RECORDINGS",
    "CODEC_EXAMPLES",
    "CONTROL_MODEL",
    "DRIFT_EXAMPLES",
    "FULL_OPTIONS",
    "LIVE_TIMEOUT",
    "MUTANTS",
    "NO_CLI_SKIP",
    "SMOKE_EXAMPLES",
    "DriftBase",
    "Mutant",
    "NoResumeReference",
    "ObservingReference",
    "Rewriting",
    "clause_mutant_map",
    "drift_options",
    "mutant_table_markdown",
    "no_cli_drift",
    "options_summary",
]


@dataclass(frozen=True)
class Mutant:
    """One deliberately broken driver and the clause that must catch it.

    ``options`` is the smallest option set that lets the suite reach ``clause`` while
    every other clause keeps passing. ``also_fails`` lists clauses the bug trips by
    necessity (with ``why_also`` saying why no narrower bug exists). ``suite_patch``
    mutates the suite instead of the driver, for clauses that are promises of the
    suite itself. ``suite_bug`` marks a case that exposes a defect in the suite.
    """

    name: str
    clause: str
    description: str
    make: Callable[[], object]
    options: Options
    also_fails: frozenset[str] = frozenset()
    why_also: str = ""
    suite_patch: Callable[[], AbstractContextManager[None]] = nullcontext
    suite_bug: str = ""
    names: frozenset[str] = frozenset()
    """Other clauses the failure message of ``clause`` must name: the bug breaks a rule
    every run obeys, on a path only ``clause``'s scenario takes."""

    @property
    def expected_failures(self) -> frozenset[str]:
        """Exactly the clauses that must fail for this mutant."""
        return frozenset({self.clause}) | self.also_fails


# ------------------------------------------------------------------------------------
# Options
# ------------------------------------------------------------------------------------

# The session-codec property runs for every driver with a codec. Mutants of the codec
# get CODEC_EXAMPLES hypothesis examples; the others keep the reference's codec, so a
# smoke-sized budget keeps the matrix fast without weakening any kill.
CODEC_EXAMPLES = 10
SMOKE_EXAMPLES = 2
# No live mutant takes long, so a hang fails within seconds rather than minutes.
LIVE_TIMEOUT = 10.0

BASELINE = Options(max_examples=SMOKE_EXAMPLES, live_run_timeout=LIVE_TIMEOUT, fresh_process=False)
"""What every mutant's options start from (and what the table leaves out). The
fresh-interpreter check costs a process start per mutant, so only the mutants it is about
(and the positive controls) turn it on."""


def _opts(**changes: Any) -> Options:
    """Hermetic options: nothing opted in."""
    return dataclasses.replace(BASELINE, **changes)


def _codec(**changes: Any) -> Options:
    """Hermetic options for a mutant of the session codec."""
    return _opts(max_examples=CODEC_EXAMPLES, **changes)


def _live(**changes: Any) -> Options:
    """Options that run the provider once (the live_run probe only)."""
    return _opts(live_run=True, **changes)


_SEED = SessionState(
    resume_id="adaptertest-session", data={"cwd": "project", "workspace_id": "ws-1"}
)

CLAUDE_RECORDINGS = Path(__file__).resolve().parents[2] / "examples/claude_driver/recordings"


NO_CLI_SKIP = "never ran the command it was given"
"""What the skip reason of DFT says for a driver that runs no CLI."""


def no_cli_drift(factory: Callable[[], object]) -> Drift:
    """A drift option for a driver without a CLI (``factory`` ignores the command): it
    turns the probe on, and the driver skips DFT with :data:`NO_CLI_SKIP`."""
    return Drift(recordings=[CLAUDE_RECORDINGS / "success.jsonl"], driver=lambda _: factory())


CONTROL_MODEL = ReferenceModel()
"""The scripted model of the positive controls (build them with ``model=CONTROL_MODEL``)."""


FULL_OPTIONS = _opts(
    fresh_process=True,
    max_examples=CODEC_EXAMPLES,
    config=ReferenceConfig(cwd="project"),
    session_state=_SEED,
    session_keys=("cwd", "workspace_id"),
    guard_keys=("cwd", "workspace_id"),
    workspace="adaptertest-workspace",
    expected_detected_model="reference-1",
    required_config_fields=("model", "cwd"),
    expect_reject_foreign_config=True,
    sync_skills_probe=True,
    live_run=True,
    live_structured_output=True,
    strict_observation_demand=True,
    concurrent_runs=3,
    drift=no_cli_drift(lambda: ReferenceDriver(ReferenceConfig(cwd="project"))),
    model_requests=CONTROL_MODEL.requests_so_far,
)
"""Every opt-in any mutant uses, switched on at once, for the positive control.

Left out: a custom ``live_prompt`` (it turns LIV-02 off), the short deadline of the
hanging-run mutant, and ``model_binding``: the hitl probe would run its decisions through
the binding, which the reference's network mode does not make; the positive control
judges the scenario clauses in a second run, bound to the network mode
(:func:`referencedriver._conformance.model_binding`).
``model_requests`` reads :data:`CONTROL_MODEL`, so a control built without it fails
SYS-02 (its model side recorded nothing). The drift probe builds a reference driver,
which runs no CLI: the reference skips DFT with the reason that says so.
"""


# ------------------------------------------------------------------------------------
# Shared machinery
# ------------------------------------------------------------------------------------


def _with(desc: Descriptor, **changes: Any) -> Descriptor:
    """A descriptor with some top-level fields replaced (built fresh per call)."""
    return desc.model_copy(update=changes)


def _like(anchor: StreamPayload, payload: StreamPayload) -> StreamPayload:
    """``payload`` stamped with the run and thread of ``anchor``, as the driver stamps."""
    return payload.model_copy(update={"run_id": anchor.run_id, "thread_id": anchor.thread_id})


class _HookedSink:
    """Passes one run's emissions through the driver's hooks before the real sink."""

    def __init__(self, driver: Rewriting, sink: EventSink) -> None:
        self._driver = driver
        self._sink = sink

    def emit(self, event: RunEvent) -> None:
        if event.type == RunEventType.ITEM and event.item is not None:
            event = event.model_copy(update={"item": self._driver.item(event.item)})
        for out in self._driver.event(event):
            self._sink.emit(out)

    def emit_stream(self, payload: StreamPayload) -> None:
        for out in self._driver.stream(payload):
            self._sink.emit_stream(out)


class _HookedDecisionSink(_HookedSink):
    """A hooked sink over a decision-capable one: decisions pass straight through."""

    def __init__(self, driver: Rewriting, sink: DecisionCapableSink) -> None:
        super().__init__(driver, sink)
        self._decider = sink

    async def request_decision(self, request: DecisionRequest) -> DecisionResponse:
        return await self._decider.request_decision(request)


class Rewriting(ReferenceDriver):
    """The reference driver with a hook over each thing a run emits or returns.

    Every hook passes its input through unchanged, so this class alone is the
    reference driver. ``item`` applies to item events and to the transcript alike, so
    a changed item still mirrors (RUN-04).
    """

    def stream(self, payload: StreamPayload) -> list[StreamPayload]:
        """The stream payloads to emit in place of ``payload``."""
        return [payload]

    def event(self, event: RunEvent) -> list[RunEvent]:
        """The run events to emit in place of ``event``."""
        return [event]

    def item(self, item: TranscriptItem) -> TranscriptItem:
        """The transcript item to report in place of ``item``."""
        return item

    def respond(self, request: Request, response: Response) -> Response:
        """The response to return in place of ``response``."""
        return response

    async def run(self, request: Request, sink: EventSink) -> Response:
        hooked = (
            _HookedDecisionSink(self, sink)
            if isinstance(sink, DecisionCapableSink)
            else _HookedSink(self, sink)
        )
        response = await super().run(request, hooked)
        transcript = [self.item(item) for item in response.transcript]
        return self.respond(request, response.model_copy(update={"transcript": transcript}))


class _Facade:
    """Forwards every attribute to a wrapped reference driver.

    A subclass can replace one public method while the driver's own code keeps
    calling the original, which a plain subclass cannot do.
    """

    def __init__(self) -> None:
        self.inner = ReferenceDriver()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class _Codec(ReferenceDriver):
    """The reference driver handing out a codec of class ``codec``."""

    codec: type[ReferenceSessionCodec] = ReferenceSessionCodec

    def session_codec(self) -> ReferenceSessionCodec:
        return self.codec()


class NoResumeReference(Rewriting):
    """A legal driver without resume: declares none, has no codec, returns no checkpoint."""

    def descriptor(self) -> Descriptor:
        return _with(super().descriptor(), sessions=SessionCapability())

    # A driver without resume hands out no codec (SessionCodecProvider allows None).
    def session_codec(self) -> None:  # type: ignore[override]
        return None

    def respond(self, request: Request, response: Response) -> Response:
        return response.model_copy(update={"checkpoint": None})


_OBSERVED_AT = datetime(2025, 1, 1, 12, 0, tzinfo=UTC)


_DEMAND: contextvars.ContextVar[ObservationDemand] = contextvars.ContextVar("demand")
"""The observation demand of the run in progress (each run's task has its own context)."""


class ObservingReference(Rewriting):
    """A legal driver that declares and streams MCP and todo observations.

    After the echo tool's result it reports what the request demands of: an MCP call
    started, a todo list (revision 1), the list cleared (revision 2), the MCP call
    completed. The OBS mutants each override one of :meth:`facts`, :meth:`invocation`,
    :meth:`todos` or :meth:`demanded`.
    """

    def descriptor(self) -> Descriptor:
        streaming = ObservationSupport(mcp=True, todos=True)
        return _with(super().descriptor(), observation=ObservationCapability(streaming=streaming))

    async def run(self, request: Request, sink: EventSink) -> Response:
        token = _DEMAND.set(request.observation)
        try:
            return await super().run(request, sink)
        finally:
            _DEMAND.reset(token)

    def demanded(self) -> ObservationDemand:
        """What the current run asks for."""
        return _DEMAND.get(ObservationDemand())

    def stream(self, payload: StreamPayload) -> list[StreamPayload]:
        if payload.kind == StreamKind.TOOL_CALL_RESULT:
            return [payload, *(_like(payload, fact) for fact in self.facts())]
        return [payload]

    def facts(self) -> list[StreamPayload]:
        """The observation payloads of one run, in order: the demanded ones."""
        demand = self.demanded()
        item = TodoItem(id="todo-1", content="Echo the text", status=TodoStatus.IN_PROGRESS)
        invocations = demand.capability_invocations
        return [
            *([self.invocation(InvocationPhase.STARTED)] if invocations else []),
            *([self.todos(1, [item]), self.todos(2, [])] if demand.todos else []),
            *([self.invocation(InvocationPhase.COMPLETED)] if invocations else []),
        ]

    def invocation(self, phase: InvocationPhase) -> StreamPayload:
        """One phase of the run's MCP call."""
        fact = CapabilityInvocation(
            invocation_id="inv-1",
            ref=CapabilityRef(kind=CapabilityKind.MCP, key="files", operation="read_file"),
            phase=phase,
            evidence=InvocationEvidence.PROVIDER_PROTOCOL,
            source=InvocationSource.PROVIDER,
            occurred_at=_OBSERVED_AT,
            duration=None if phase == InvocationPhase.STARTED else timedelta(0),
        )
        return StreamPayload(kind=StreamKind.CAPABILITY_INVOCATION, capability=fact)

    def todos(self, revision: int, items: list[TodoItem] | None) -> StreamPayload:
        """One snapshot of the run's todo list."""
        snapshot = TodoSnapshot(
            items=items, source=TodoSource.PLAN_UPDATE, revision=revision, occurred_at=_OBSERVED_AT
        )
        return StreamPayload(kind=StreamKind.TODO_UPDATED, todo=snapshot)


# ------------------------------------------------------------------------------------
# DRV: the descriptor
# ------------------------------------------------------------------------------------


class BlankDisplayName(ReferenceDriver):
    def descriptor(self) -> Descriptor:
        return _with(super().descriptor(), display_name="")


class DescriptorCountsCalls(ReferenceDriver):
    def __init__(self, config: ReferenceConfig | None = None) -> None:
        super().__init__(config)
        self._calls = itertools.count(1)

    def descriptor(self) -> Descriptor:
        name = f"Adaptertest Reference Driver (snapshot {next(self._calls)})"
        return _with(super().descriptor(), display_name=name)


class CachesDescriptor(ReferenceDriver):
    @functools.cached_property
    def _snapshot(self) -> Descriptor:
        return super().descriptor()

    def descriptor(self) -> Descriptor:
        return self._snapshot


# ------------------------------------------------------------------------------------
# CFG: validate_config
# ------------------------------------------------------------------------------------


class ValidateNoneRaisesTypeError(ReferenceDriver):
    def validate_config(self, config: object | None) -> None:
        if config is None:
            raise TypeError("a config is required")
        super().validate_config(config)


class ValidateConfigTooStrict(_Facade):
    def validate_config(self, config: object | None) -> None:
        if isinstance(config, ReferenceConfig) and not config.cwd:
            raise InvalidDriverConfigError(REFERENCE_DRIVER_TYPE, ValueError("cwd is required"))
        self.inner.validate_config(config)


class AcceptsAnyConfig(ReferenceDriver):
    def validate_config(self, config: object | None) -> None:
        return None


# ------------------------------------------------------------------------------------
# CAP: capability declarations and probes
# ------------------------------------------------------------------------------------


class UnstableConfigFingerprint(ReferenceDriver):
    def __init__(self, config: ReferenceConfig | None = None) -> None:
        super().__init__(config)
        self._calls = itertools.count(1)

    def session_config_fingerprint(self) -> str:
        return f"{super().session_config_fingerprint()}-{next(self._calls)}"


class _RetryPolicy:
    """A config default without a __repr__ of its own."""

    attempts = 3


_DEFAULT_RETRY = _RetryPolicy()


class FingerprintWithDefaultRepr(ReferenceDriver):
    """Folds the retry policy into the fingerprint by its repr: the object's address."""

    def session_config_fingerprint(self) -> str:
        text = f"{super().session_config_fingerprint()}|retry={_DEFAULT_RETRY!r}"
        return hashlib.sha256(text.encode()).hexdigest()


class SkillsWithoutMode(ReferenceDriver):
    def descriptor(self) -> Descriptor:
        return _with(super().descriptor(), skills=SkillCapability(supported=True))


class EnvironmentCheckWithoutCode(ReferenceDriver):
    async def check_environment(self, config: object | None) -> EnvironmentReport:
        report = await super().check_environment(config)
        return report.model_copy(update={"checks": [EnvironmentCheck(level="pass")]})


class ModelWithoutId(ReferenceDriver):
    async def list_models(self, config: object | None) -> list[ModelInfo]:
        return [ModelInfo(label="Reference Model")]


class DetectsProviderDefault(ReferenceDriver):
    async def detect_model(
        self, config: object | None, profile: ProfileSelection | None
    ) -> DetectedModel | None:
        return DetectedModel(model="provider-default", provider="reference", source="provider")


class DetectsBlankModel(ReferenceDriver):
    async def detect_model(
        self, config: object | None, profile: ProfileSelection | None
    ) -> DetectedModel | None:
        return DetectedModel(model=" ", provider="reference", source="config")


class ProfileWithoutDir(ReferenceDriver):
    async def get_profile(
        self, config: object | None, agent: AgentIdentity, profile: ProfileSelection | None
    ) -> AgentProfile:
        found = await super().get_profile(config, agent, profile)
        return found.model_copy(update={"dir": ""})


class QuotaWindowWithoutLabel(ReferenceDriver):
    async def get_quota(
        self, config: object | None, profile: ProfileSelection | None
    ) -> QuotaReport:
        report = await super().get_quota(config, profile)
        return report.model_copy(update={"windows": [QuotaWindow(value_label="unlimited")]})


class SchemaForgetsCwd(ReferenceDriver):
    async def config_schema(self, config: object | None) -> ConfigSchema | None:
        schema = await super().config_schema(config)
        assert schema is not None  # the reference always has one
        kept = tuple(f for f in schema.fields if f.name != "cwd")
        return schema.model_copy(update={"fields": kept})


class SchemaRepeatsField(ReferenceDriver):
    async def config_schema(self, config: object | None) -> ConfigSchema | None:
        schema = await super().config_schema(config)
        assert schema is not None  # the reference always has one
        return schema.model_copy(update={"fields": (*schema.fields, schema.fields[0])})


class ListSkillsReportsStaleSelection(ReferenceDriver):
    async def list_skills(
        self,
        config: object | None,
        payload: ResolvedSkills,
        selected: list[str] | None,
        resolved: list[Skill] | None,
        profile: ProfileSelection | None,
    ) -> SkillSnapshot:
        snap = await super().list_skills(config, payload, selected, resolved, profile)
        return snap.model_copy(update={"selected": ["last-session-skill"]})


class StreamCapabilityFlips(ReferenceDriver):
    def __init__(self, config: ReferenceConfig | None = None) -> None:
        super().__init__(config)
        self._calls = itertools.count()

    def stream_capability(self) -> StreamCapability:
        token_level = next(self._calls) % 2 == 0
        return super().stream_capability().model_copy(update={"token_level": token_level})


class PersistentWithoutClose(ReferenceDriver):
    def descriptor(self) -> Descriptor:
        return _with(super().descriptor(), process=ProcessCapability(persistent=True))


# ------------------------------------------------------------------------------------
# SO: structured output
# ------------------------------------------------------------------------------------


class StreamingWithoutMechanism(ReferenceDriver):
    def descriptor(self) -> Descriptor:
        cap = StructuredOutputCapability(works_with_streaming=True)
        return _with(super().descriptor(), structured_output=cap)


class StructuredOutputNotValid(Rewriting):
    def respond(self, request: Request, response: Response) -> Response:
        if response.structured_output is None:
            return response
        so = response.structured_output.model_copy(update={"valid": False})
        return response.model_copy(update={"structured_output": so})


class BatchOnlyStructuredOutput(ReferenceDriver):
    """Legal on its own: native structured output on batch runs only."""

    def descriptor(self) -> Descriptor:
        desc = super().descriptor()
        cap = desc.structured_output.model_copy(update={"works_with_streaming": False})
        return _with(desc, structured_output=cap)


@contextmanager
def _structured_probe_asks_streaming() -> Iterator[None]:
    """Suite mutant: the structured probe's request asks for a streaming run."""

    def streaming_request(config: object | None, workspace_cwd: str | None) -> Request:
        request = structured_request(config, workspace_cwd)
        request.streaming = True
        return request

    with (
        patch.object(adaptertest.cap, "structured_request", streaming_request),
        patch.object(adaptertest.liv, "structured_request", streaming_request),
    ):
        yield


# ------------------------------------------------------------------------------------
# SES: the session codec
# ------------------------------------------------------------------------------------


class _ThreadBoundName(ReferenceSessionCodec):
    def __init__(self) -> None:
        self._local = threading.local()
        self._local.name = super().name()

    def name(self) -> str:
        return str(getattr(self._local, "name", ""))


class _EmptyStateForEmptyParams(ReferenceSessionCodec):
    def from_params(self, params: SessionParams) -> SessionState | None:
        return super().from_params(params) or SessionState()


class _NoDisplayFallback(ReferenceSessionCodec):
    def to_params(self, state: SessionState | None) -> SessionParams:
        params = super().to_params(state)
        if state is None:
            return params
        return params.model_copy(update={"display_id": state.display_id})

    def from_params(self, params: SessionParams) -> SessionState | None:
        state = super().from_params(params)
        if state is None:
            return None
        return state.model_copy(update={"display_id": params.display_id})


class _DropsDataOnRestore(ReferenceSessionCodec):
    def from_params(self, params: SessionParams) -> SessionState | None:
        state = super().from_params(params)
        return state if state is None else state.model_copy(update={"data": {}})


class _GuardOnObjectIdentity(ReferenceSessionCodec):
    def guard_fingerprint(self, params: SessionParams) -> str:
        return hashlib.sha256(str(id(params)).encode()).hexdigest()


class _GuardIgnoresValues(ReferenceSessionCodec):
    def guard_fingerprint(self, params: SessionParams) -> str:
        return super().guard_fingerprint(SessionParams(resume_id=params.resume_id))


class _NoneStateRaises(ReferenceSessionCodec):
    def to_params(self, state: SessionState | None) -> SessionParams:
        if state is None:
            raise TypeError("no session state to encode")
        return super().to_params(state)


class _NamespacedRestore(ReferenceSessionCodec):
    """Restores data under ``saved.<key>``; to_params strips the prefix again."""

    prefix = "saved."

    def to_params(self, state: SessionState | None) -> SessionParams:
        params = super().to_params(state)
        values = {k.removeprefix(self.prefix): v for k, v in params.values.items()}
        return params.model_copy(update={"values": values})

    def from_params(self, params: SessionParams) -> SessionState | None:
        state = super().from_params(params)
        if state is None:
            return None
        data = {self.prefix + k: v for k, v in state.data.items()}
        return state.model_copy(update={"data": data})


class _ForgetsProfileFingerprint(ReferenceSessionCodec):
    def from_params(self, params: SessionParams) -> SessionState | None:
        state = super().from_params(params)
        if state is not None:
            state.data.pop(SESSION_PARAM_PROFILE_FINGERPRINT, None)
        return state


class CodecNameThreadLocal(_Codec):
    codec = _ThreadBoundName


class EmptyStateForEmptyParams(_Codec):
    codec = _EmptyStateForEmptyParams


class CodecWithoutDisplayFallback(_Codec):
    codec = _NoDisplayFallback


class CodecDropsDataOnRestore(_Codec):
    codec = _DropsDataOnRestore


class GuardOnObjectIdentity(_Codec):
    codec = _GuardOnObjectIdentity


class GuardIgnoresValues(_Codec):
    codec = _GuardIgnoresValues


class ToParamsNoneRaises(_Codec):
    codec = _NoneStateRaises


class RestoresNamespacedKeys(_Codec):
    codec = _NamespacedRestore


class _GuardInInsertionOrder(ReferenceSessionCodec):
    def guard_fingerprint(self, params: SessionParams) -> str:
        text = json.dumps([params.resume_id, params.values])  # no sort_keys: dict order leaks in
        return hashlib.sha256(text.encode()).hexdigest()


class _GuardNeedsData(ReferenceSessionCodec):
    def guard_fingerprint(self, params: SessionParams) -> str:
        return super().guard_fingerprint(params) if params.values else ""


class GuardInInsertionOrder(_Codec):
    codec = _GuardInInsertionOrder


class _GuardOnStrHash(ReferenceSessionCodec):
    def guard_fingerprint(self, params: SessionParams) -> str:
        text = "\n".join(f"{k}={params.values[k]}" for k in sorted(params.values))
        return format(hash(f"{params.resume_id}\n{text}") & 0xFFFFFFFFFFFFFFFF, "016x")


class _GuardFromKeySet(ReferenceSessionCodec):
    def guard_fingerprint(self, params: SessionParams) -> str:
        digest = hashlib.sha256(params.resume_id.encode())
        # Sorted, then filtered into a set: the set's order is the hash seed's, not sorted.
        for key in {k for k in sorted(params.values) if not k.startswith("_")}:
            digest.update(f"{key}={params.values[key]}\n".encode())
        return digest.hexdigest()


class GuardOnStrHash(_Codec):
    codec = _GuardOnStrHash


class GuardFromKeySet(_Codec):
    codec = _GuardFromKeySet


class GuardEmptyWithoutData(_Codec):
    codec = _GuardNeedsData


class StoresExactProfileFingerprint(Rewriting):
    def respond(self, request: Request, response: Response) -> Response:
        assert response.checkpoint is not None
        assert response.checkpoint.state is not None
        response.checkpoint.state.data[SESSION_PARAM_PROFILE_FINGERPRINT] = (
            request.profile_payload.fingerprint
        )
        return response


# ------------------------------------------------------------------------------------
# EVT: stream payloads
# ------------------------------------------------------------------------------------


class VendorPayloadBeforeStart(Rewriting):
    def stream(self, payload: StreamPayload) -> list[StreamPayload]:
        if payload.kind == StreamKind.RUN_STARTED:
            return [_like(payload, StreamPayload(kind="vendor.session")), payload]
        return [payload]


class RunStartedTwice(Rewriting):
    def stream(self, payload: StreamPayload) -> list[StreamPayload]:
        return [payload, payload] if payload.kind == StreamKind.RUN_STARTED else [payload]


class RunFinishedTwice(Rewriting):
    def stream(self, payload: StreamPayload) -> list[StreamPayload]:
        return [payload, payload] if payload.kind == StreamKind.RUN_FINISHED else [payload]


class VendorPayloadAfterTerminal(Rewriting):
    def stream(self, payload: StreamPayload) -> list[StreamPayload]:
        if payload.kind == StreamKind.RUN_FINISHED:
            return [payload, _like(payload, StreamPayload(kind="vendor.stats"))]
        return [payload]


_TEXT_KINDS = frozenset({StreamKind.TEXT_START, StreamKind.TEXT_CONTENT, StreamKind.TEXT_END})


class TextWithoutMessageId(Rewriting):
    def stream(self, payload: StreamPayload) -> list[StreamPayload]:
        if payload.kind in _TEXT_KINDS:
            return [payload.model_copy(update={"message_id": ""})]
        return [payload]


class EmptyTextDelta(Rewriting):
    def stream(self, payload: StreamPayload) -> list[StreamPayload]:
        if payload.kind == StreamKind.TEXT_START:
            empty = payload.model_copy(update={"kind": StreamKind.TEXT_CONTENT, "delta": ""})
            return [payload, empty]
        return [payload]


class ToolStartWithoutName(Rewriting):
    def stream(self, payload: StreamPayload) -> list[StreamPayload]:
        if payload.kind == StreamKind.TOOL_CALL_START:
            return [payload.model_copy(update={"name": ""})]
        return [payload]


class EmptyReasoningDelta(Rewriting):
    def stream(self, payload: StreamPayload) -> list[StreamPayload]:
        if payload.kind == StreamKind.REASONING_CONTENT:
            return [payload.model_copy(update={"delta": ""})]
        return [payload]


class StepsWithoutName(Rewriting):
    def stream(self, payload: StreamPayload) -> list[StreamPayload]:
        if payload.kind == StreamKind.RUN_STARTED:
            return [payload, _like(payload, StreamPayload(kind=StreamKind.STEP_STARTED))]
        if payload.kind == StreamKind.RUN_FINISHED:
            return [_like(payload, StreamPayload(kind=StreamKind.STEP_FINISHED)), payload]
        return [payload]


class HitlWithoutEnvelope(Rewriting):
    def stream_capability(self) -> StreamCapability:
        return super().stream_capability().model_copy(update={"hitl": True})

    def stream(self, payload: StreamPayload) -> list[StreamPayload]:
        if payload.kind == StreamKind.TOOL_CALL_START:
            asked = _like(payload, StreamPayload(kind=StreamKind.HITL_REQUESTED))
            answered = _like(payload, StreamPayload(kind=StreamKind.HITL_RESOLVED))
            return [asked, answered, payload]
        return [payload]


class TextRoleUser(Rewriting):
    def stream(self, payload: StreamPayload) -> list[StreamPayload]:
        if payload.kind in _TEXT_KINDS:
            return [payload.model_copy(update={"role": Role.USER})]
        return [payload]


class StampsTimestamps(Rewriting):
    def stream(self, payload: StreamPayload) -> list[StreamPayload]:
        return [payload.model_copy(update={"timestamp": datetime.now(UTC)})]


class TextLeftOpen(Rewriting):
    def stream(self, payload: StreamPayload) -> list[StreamPayload]:
        return [] if payload.kind == StreamKind.TEXT_END else [payload]


class ReasoningDeclaredOff(Rewriting):
    def stream_capability(self) -> StreamCapability:
        return super().stream_capability().model_copy(update={"reasoning": False})


class RunStartedWithMessageId(Rewriting):
    def stream(self, payload: StreamPayload) -> list[StreamPayload]:
        if payload.kind == StreamKind.RUN_STARTED:
            return [payload.model_copy(update={"message_id": "msg-0"})]
        return [payload]


class ArgsAfterFullSnapshot(Rewriting):
    def stream(self, payload: StreamPayload) -> list[StreamPayload]:
        if payload.kind == StreamKind.TOOL_CALL_START:
            return [payload.model_copy(update={"args": {"text": "ok"}})]
        return [payload]


# ------------------------------------------------------------------------------------
# OBS: observation facts (on top of ObservingReference)
# ------------------------------------------------------------------------------------


class UndeclaredMcpFacts(ObservingReference):
    def descriptor(self) -> Descriptor:
        streaming = ObservationSupport(todos=True)
        return _with(super().descriptor(), observation=ObservationCapability(streaming=streaming))

    def demanded(self) -> ObservationDemand:
        return super().demanded().model_copy(update={"capability_invocations": True})


class RawOnObservation(ObservingReference):
    def invocation(self, phase: InvocationPhase) -> StreamPayload:
        fact = super().invocation(phase)
        return fact.model_copy(update={"raw": {"provider_event": "mcp_call"}})


class LocalTimeObservation(ObservingReference):
    def invocation(self, phase: InvocationPhase) -> StreamPayload:
        fact = super().invocation(phase)
        assert fact.capability is not None
        local = _OBSERVED_AT.astimezone(timezone(timedelta(hours=2)))
        inv = fact.capability.model_copy(update={"occurred_at": local})
        return fact.model_copy(update={"capability": inv})


class InvocationNeverCompletes(ObservingReference):
    def facts(self) -> list[StreamPayload]:
        return super().facts()[:-1]


class ClearedTodosAsNone(ObservingReference):
    def todos(self, revision: int, items: list[TodoItem] | None) -> StreamPayload:
        return super().todos(revision, items or None)


class TodoRevisionSkips(ObservingReference):
    def todos(self, revision: int, items: list[TodoItem] | None) -> StreamPayload:
        return super().todos(1 if revision == 1 else revision + 1, items)


class TodosNobodyAskedFor(ObservingReference):
    def demanded(self) -> ObservationDemand:
        return super().demanded().model_copy(update={"todos": True})


# ------------------------------------------------------------------------------------
# SYS: the appended system prompt
# ------------------------------------------------------------------------------------


class AcceptsUndeclaredAppend(ReferenceDriver):
    """Declares no append, and runs an append request anyway (dropping the text)."""

    def descriptor(self) -> Descriptor:
        return _with(super().descriptor(), system_prompt=SystemPromptCapability())

    async def run(self, request: Request, sink: EventSink) -> Response:
        return await super().run(request.model_copy(update={"append_system_prompt": ""}), sink)


class ChecksDeclarationFirst(AcceptsUndeclaredAppend):
    """Declares no append and refuses every one as unsupported_driver, NUL and invalid
    UTF-8 included: upstream checks those first."""

    async def run(self, request: Request, sink: EventSink) -> Response:
        if request.append_system_prompt:
            raise SystemPromptUnsupportedError(
                REFERENCE_DRIVER_TYPE, SystemPromptUnsupportedReason.UNSUPPORTED_DRIVER
            )
        return await super().run(request, sink)


class InlineLimitOffByOne(ReferenceDriver):
    """Passes the append inline and refuses it from 32,768 UTF-8 bytes on, one too soon."""

    async def run(self, request: Request, sink: EventSink) -> Response:
        check_append_system_prompt(
            REFERENCE_DRIVER_TYPE,
            request.append_system_prompt,
            supported=True,
            inline_limit=APPEND_INLINE_LIMIT - 1,
        )
        return await super().run(request, sink)


class _ShowingSink:
    """Forwards to ``sink``, adding ``text`` to the invocation event's metadata."""

    def __init__(self, sink: EventSink, text: str) -> None:
        self._sink = sink
        self._text = text

    def emit(self, event: RunEvent) -> None:
        if event.type == RunEventType.INVOCATION and self._text:
            metadata = {**event.metadata, "append_system_prompt": self._text}
            event = event.model_copy(update={"metadata": metadata})
        self._sink.emit(event)

    def emit_stream(self, payload: StreamPayload) -> None:
        self._sink.emit_stream(payload)


class ShowsAppendInInvocation(ReferenceDriver):
    """Describes its invocation with the appended text itself instead of [redacted]."""

    async def run(self, request: Request, sink: EventSink) -> Response:
        return await super().run(request, _ShowingSink(sink, request.append_system_prompt))


class ConflictRefusedAfterStart(ReferenceDriver):
    """Its config sets a system prompt, so it refuses every append as
    conflicting_extra_args, but only after it reported its invocation."""

    async def run(self, request: Request, sink: EventSink) -> Response:
        text = request.append_system_prompt
        check_append_system_prompt(REFERENCE_DRIVER_TYPE, text, supported=True)
        if text:
            sink.emit(RunEvent(type=RunEventType.INVOCATION, text="reference invocation"))
            raise SystemPromptUnsupportedError(
                REFERENCE_DRIVER_TYPE,
                SystemPromptUnsupportedReason.CONFLICTING_EXTRA_ARGS,
                argument="--system-prompt",
            )
        return await super().run(request, sink)


def _model_side(driver: Callable[..., ReferenceDriver]) -> tuple[Callable[[], object], Options]:
    """A mutant factory with a scripted model of its own, and live options that read it."""
    model = ReferenceModel()
    return (lambda: driver(model=model)), _live(model_requests=model.requests_so_far)


def _edit_guard_data(response: Response, edit: Callable[[dict[str, str]], object]) -> Response:
    """``response`` with ``edit`` applied to a copy of its checkpoint's state data (as it
    is when there is no checkpoint state)."""
    checkpoint = response.checkpoint
    if checkpoint is None or checkpoint.state is None:
        return response
    data = dict(checkpoint.state.data)
    edit(data)
    state = checkpoint.state.model_copy(update={"data": data})
    return response.model_copy(
        update={"checkpoint": checkpoint.model_copy(update={"state": state})}
    )


class _ChangesAppend(ReferenceDriver):
    """Hands its model the append as :meth:`changed` makes it (the refusals see the
    original)."""

    def changed(self, request: Request) -> str:
        return request.append_system_prompt

    def rewrite(self, request: Request) -> Request:
        """The request the reference runs: by default the append as :meth:`changed`."""
        return request.model_copy(update={"append_system_prompt": self.changed(request)})

    async def run(self, request: Request, sink: EventSink) -> Response:
        check_append_system_prompt(
            REFERENCE_DRIVER_TYPE, request.append_system_prompt, supported=True
        )
        response = await super().run(self.rewrite(request), sink)
        text = request.append_system_prompt
        if not text:
            return response

        def fingerprint(data: dict[str, str]) -> None:
            # The session belongs to the append the host asked for.
            data[SESSION_PARAM_APPEND_SYSTEM_PROMPT_FINGERPRINT] = append_system_prompt_fingerprint(
                text
            )

        return _edit_guard_data(response, fingerprint)


class FlattensAppendNewlines(_ChangesAppend):
    """Puts the append on one line (newlines become spaces)."""

    def changed(self, request: Request) -> str:
        return " ".join(request.append_system_prompt.splitlines())


class NormalisesAppend(_ChangesAppend):
    """Hands the model the append in Unicode normal form C."""

    def changed(self, request: Request) -> str:
        return unicodedata.normalize("NFC", request.append_system_prompt)


class DropsAppendWhenBatch(_ChangesAppend):
    """Passes the append on streaming runs only; its batch path forgets it."""

    def changed(self, request: Request) -> str:
        return request.append_system_prompt if request.streaming else ""


class PrependsAppend(_ChangesAppend):
    """Sends the appended text as the start of the prompt instead of the system prompt."""

    def rewrite(self, request: Request) -> Request:
        if not request.append_system_prompt:
            return request
        folded = f"{request.append_system_prompt}\n\n{request.prompt}"
        return request.model_copy(update={"prompt": folded, "append_system_prompt": ""})


class IgnoresAppend(_ChangesAppend):
    """Declares the append and drops it."""

    def changed(self, request: Request) -> str:
        return ""


class ForgetsAppendFingerprint(ReferenceDriver):
    """Guards resumes by the append but leaves its fingerprint out of the checkpoint."""

    async def run(self, request: Request, sink: EventSink) -> Response:
        response = await super().run(request, sink)
        return _edit_guard_data(
            response, lambda data: data.pop(SESSION_PARAM_APPEND_SYSTEM_PROMPT_FINGERPRINT, None)
        )


class ResumesChangedAppend(ReferenceDriver):
    """Stores the fingerprint but resumes a session whatever append it was captured with."""

    async def run(self, request: Request, sink: EventSink) -> Response:
        state = request.session.state if request.session is not None else None
        if state is not None and request.append_system_prompt:
            data = dict(state.data)
            data[SESSION_PARAM_APPEND_SYSTEM_PROMPT_FINGERPRINT] = append_system_prompt_fingerprint(
                request.append_system_prompt
            )
            session = SessionContext(state=state.model_copy(update={"data": data}))
            request = request.model_copy(update={"session": session})
        return await super().run(request, sink)


# ------------------------------------------------------------------------------------
# HIL: human decisions
# ------------------------------------------------------------------------------------


def _hil(make: Callable[[ReferenceModel], object]) -> tuple[Callable[[], object], Options]:
    """A HIL mutant's factory and options: its own scripted model, whose requests show
    the probe whether a tool ran."""
    model = ReferenceModel()
    return (lambda: make(model)), _live(model_requests=model.requests_so_far)


def _with_decisions(request: Request, **changes: Any) -> Request:
    """``request`` with some fields of its human-decision policy replaced."""
    policy = request.policy.human_decision.model_copy(update=changes)
    return request.model_copy(
        update={"policy": request.policy.model_copy(update={"human_decision": policy})}
    )


class NeverAsks(ReferenceDriver):
    """Ignores an Ask policy for permission: runs the command as if auto-approved."""

    async def run(self, request: Request, sink: EventSink) -> Response:
        if request.policy.human_decision.permission in (HumanDecisionMode.UNSET, _ASK_MODE):
            request = _with_decisions(request, permission=HumanDecisionMode.AUTO_APPROVE)
        return await super().run(request, sink)


class ApprovedButNotRun(ReferenceDriver):
    """Reports a command the host approved as done without running it."""

    @staticmethod
    def _perform(action: Action, decision: Decision) -> str:
        if decision.request is not None and decision.result == DecisionResult.APPROVED:
            return "done"
        return ReferenceDriver._perform(action, decision)


class RejectedButRun(ReferenceDriver):
    """Runs a command the host rejected (the run then goes on or fails as the policy says)."""

    @staticmethod
    def _perform(action: Action, decision: Decision) -> str:
        if (
            decision.result == DecisionResult.REJECTED
            and action.kind == HumanDecisionKind.PERMISSION
        ):
            return run_shell(action.detail)
        return ReferenceDriver._perform(action, decision)


class RejectionReportedAsTimeout(ReferenceDriver):
    """Ends a run whose decision the host rejected with decision_timeout."""

    def _decision_failure(self, action: Action, decision: Decision) -> RunFailure:
        failure = super()._decision_failure(action, decision)
        if decision.request is not None and decision.result == DecisionResult.REJECTED:
            return failure.model_copy(update={"code": FailureCode.TIMEOUT})
        return failure


class RejectionWithoutHumanDecision(ReferenceDriver):
    """Ends a run whose decision the host rejected without failure.human_decision."""

    def _decision_failure(self, action: Action, decision: Decision) -> RunFailure:
        failure = super()._decision_failure(action, decision)
        if decision.request is not None and decision.result == DecisionResult.REJECTED:
            return failure.model_copy(update={"human_decision": None})
        return failure


class WaitsForTheRunDeadline(ReferenceDriver):
    """Ignores the policy's timeout: waits for an answer until the run itself is stopped."""

    async def run(self, request: Request, sink: EventSink) -> Response:
        return await super().run(_with_decisions(request, timeout=timedelta(seconds=-1)), sink)


class ResolvedNeverStreamed(Rewriting):
    """Announces each decision with hitl.requested and never closes it with hitl.resolved."""

    def stream(self, payload: StreamPayload) -> list[StreamPayload]:
        return [] if payload.kind == StreamKind.HITL_RESOLVED else [payload]


class AsksUnderAutoApprove(ReferenceDriver):
    """Asks the host even when the policy says auto_approve."""

    async def run(self, request: Request, sink: EventSink) -> Response:
        if request.policy.human_decision.permission == HumanDecisionMode.AUTO_APPROVE:
            request = _with_decisions(request, permission=_ASK_MODE)
        return await super().run(request, sink)


class DropsTheAnswer(ReferenceDriver):
    """Tells the model a question was answered, without the host's text."""

    @staticmethod
    def _perform(action: Action, decision: Decision) -> str:
        if decision.result == DecisionResult.ANSWERED:
            return "answered"
        return ReferenceDriver._perform(action, decision)


class _ShieldedDecisions:
    """Forwards to a sink, shielding each decision wait from cancellation: only the
    decision's own deadline ends it."""

    def __init__(self, sink: DecisionCapableSink) -> None:
        self._sink = sink

    def emit(self, event: RunEvent) -> None:
        self._sink.emit(event)

    def emit_stream(self, payload: StreamPayload) -> None:
        self._sink.emit_stream(payload)

    async def request_decision(self, request: DecisionRequest) -> DecisionResponse:
        response = DecisionResponse(request_id=request.request_id, result=DecisionResult.TIMED_OUT)
        with anyio.CancelScope(shield=True):
            left = math.inf
            if request.deadline is not None:
                left = (request.deadline - datetime.now(UTC)).total_seconds()
            with anyio.move_on_after(left):
                response = await self._sink.request_decision(request)
        return response


class KeepsWaitingWhenCancelled(ReferenceDriver):
    """Keeps waiting for a pending decision after the run is cancelled."""

    async def run(self, request: Request, sink: EventSink) -> Response:
        if isinstance(sink, DecisionCapableSink):
            return await super().run(request, _ShieldedDecisions(sink))
        return await super().run(request, sink)


class AsksWithoutDeclaring(ReferenceDriver):
    """Declares no ask mode, and asks the host anyway."""

    def descriptor(self) -> Descriptor:
        return _with(super().descriptor(), run_policy_caps=RunPolicyCapabilities())


_ASK_MODE = HumanDecisionMode.ASK


# ------------------------------------------------------------------------------------
# RUN and TRN: run events and transcript items
# ------------------------------------------------------------------------------------


def _is_lifecycle(event: RunEvent) -> bool:
    return event.type == RunEventType.LIFECYCLE


class CombinedOutputChunk(Rewriting):
    def event(self, event: RunEvent) -> list[RunEvent]:
        if _is_lifecycle(event):
            chunk = RunEvent(type=RunEventType.CHUNK, stream="combined", chunk=b"ok\n")
            return [chunk, event]
        return [event]


class ItemEventWithoutItem(Rewriting):
    def event(self, event: RunEvent) -> list[RunEvent]:
        return [RunEvent(type=RunEventType.ITEM), event] if _is_lifecycle(event) else [event]


class NumbersLifecycleEvents(Rewriting):
    def event(self, event: RunEvent) -> list[RunEvent]:
        return [event.model_copy(update={"seq": 1})] if _is_lifecycle(event) else [event]


class InitItemNotEmitted(Rewriting):
    def event(self, event: RunEvent) -> list[RunEvent]:
        if event.item is not None and event.item.kind == TranscriptKind.INIT:
            return []
        return [event]


class AssistantItemWithoutText(Rewriting):
    def item(self, item: TranscriptItem) -> TranscriptItem:
        if item.kind == TranscriptKind.ASSISTANT:
            return item.model_copy(update={"text": ""})
        return item


class ToolCallItemWithoutName(Rewriting):
    def item(self, item: TranscriptItem) -> TranscriptItem:
        if item.kind == TranscriptKind.TOOL_CALL:
            return item.model_copy(update={"tool_name": ""})
        return item


class ToolResultItemWithoutCallId(Rewriting):
    def item(self, item: TranscriptItem) -> TranscriptItem:
        if item.kind == TranscriptKind.TOOL_RESULT:
            return item.model_copy(update={"tool_use_id": ""})
        return item


class ResultItemMarkedDelta(Rewriting):
    def item(self, item: TranscriptItem) -> TranscriptItem:
        if item.kind == TranscriptKind.RESULT:
            return item.model_copy(update={"delta": True})
        return item


# ------------------------------------------------------------------------------------
# LIV: live success
# ------------------------------------------------------------------------------------


class RunRaises(ReferenceDriver):
    async def run(self, request: Request, sink: EventSink) -> Response:
        raise RunError("the provider closed the connection")


class RunHangs(ReferenceDriver):
    async def run(self, request: Request, sink: EventSink) -> Response:
        await anyio.sleep_forever()  # until the suite's live deadline cancels it
        raise AssertionError("unreachable")


class AnswersWithPunctuation(Rewriting):
    def respond(self, request: Request, response: Response) -> Response:
        return response.model_copy(update={"output": response.output + "."})


class NoCheckpoint(Rewriting):
    def respond(self, request: Request, response: Response) -> Response:
        return response.model_copy(update={"checkpoint": None})


# ------------------------------------------------------------------------------------
# RSP: response invariants
# ------------------------------------------------------------------------------------


class ValidCheckpointWithoutState(NoResumeReference):
    def respond(self, request: Request, response: Response) -> Response:
        return response.model_copy(update={"checkpoint": Checkpoint(valid=True)})


class RejectionWithoutDecision(Rewriting):
    def __init__(self) -> None:
        super().__init__(ReferenceConfig(fail_run=True))

    def respond(self, request: Request, response: Response) -> Response:
        assert response.failure is not None
        failure = response.failure.model_copy(update={"code": FailureCode.REJECT})
        return response.model_copy(update={"failure": failure})


_STDOUT_DUMP = '{"type":"text","text":"hello"}\n{"type":"result","subtype":"success"}\n'


class OutputIsStdoutDump(Rewriting):
    def respond(self, request: Request, response: Response) -> Response:
        assert response.raw_streams is not None
        raw = response.raw_streams.model_copy(update={"stdout": _STDOUT_DUMP.encode()})
        return response.model_copy(update={"output": _STDOUT_DUMP, "raw_streams": raw})


_TERMINAL_LINE = '{"type":"result","subtype":"success"}'


class _ProtocolOutput(Rewriting):
    """Returns part of a JSONL stdout as its output, in a shape of its own."""

    def dump(self) -> str:
        raise NotImplementedError

    def respond(self, request: Request, response: Response) -> Response:
        assert response.raw_streams is not None
        terminal = TerminalPayload(event="result", raw_json=_TERMINAL_LINE)
        raw = response.raw_streams.model_copy(
            update={"stdout": _STDOUT_DUMP.encode(), "terminal": terminal}
        )
        return response.model_copy(update={"output": self.dump(), "raw_streams": raw})


class OutputIsJoinedJsonl(_ProtocolOutput):
    def dump(self) -> str:
        return _STDOUT_DUMP.rstrip("\n")


class OutputIsCrlfJsonl(_ProtocolOutput):
    def dump(self) -> str:
        return _STDOUT_DUMP.replace("\n", "\r\n")


class OutputIsTerminalLine(_ProtocolOutput):
    def dump(self) -> str:
        return _TERMINAL_LINE


class CodecForgetsProfileFingerprint(_Codec):
    codec = _ForgetsProfileFingerprint


class TruncatedTerminalJson(Rewriting):
    def respond(self, request: Request, response: Response) -> Response:
        assert response.raw_streams is not None
        assert response.raw_streams.terminal is not None
        terminal = response.raw_streams.terminal.model_copy(update={"raw_json": '{"subtype":'})
        raw = response.raw_streams.model_copy(update={"terminal": terminal})
        return response.model_copy(update={"raw_streams": raw})


# ------------------------------------------------------------------------------------
# CON: concurrent runs
# ------------------------------------------------------------------------------------


class _CurrentRunSink:
    """Emits through whatever sink the driver holds at the moment of each emission."""

    def __init__(self, driver: SinkKeptOnSelf) -> None:
        self._driver = driver

    def _sink(self) -> EventSink:
        assert self._driver.current_sink is not None
        return self._driver.current_sink

    def emit(self, event: RunEvent) -> None:
        self._sink().emit(event)

    def emit_stream(self, payload: StreamPayload) -> None:
        self._sink().emit_stream(payload)


class _OneBufferSink:
    """Streams every text delta through one payload object, refilled before each emit
    and cleared after it."""

    def __init__(self, sink: EventSink) -> None:
        self._sink = sink
        self._buffer: StreamPayload | None = None

    def emit(self, event: RunEvent) -> None:
        self._sink.emit(event)

    def emit_stream(self, payload: StreamPayload) -> None:
        if payload.kind != StreamKind.TEXT_CONTENT:
            self._sink.emit_stream(payload)
            return
        if self._buffer is None:
            self._buffer = payload.model_copy()
        self._buffer.delta = payload.delta
        self._sink.emit_stream(self._buffer)
        self._buffer.delta = ""  # ready for the next chunk


class ReusesOnePayload(ReferenceDriver):
    async def run(self, request: Request, sink: EventSink) -> Response:
        return await super().run(request, _OneBufferSink(sink))


class _EarlyItemSink:
    """Emits the assistant item on its first character, then completes it in place."""

    def __init__(self, sink: EventSink) -> None:
        self._sink = sink

    def emit(self, event: RunEvent) -> None:
        item = event.item
        if item is None or item.kind != TranscriptKind.ASSISTANT or len(item.text) < 2:
            self._sink.emit(event)
            return
        full = item.text
        item.text = full[:1]
        self._sink.emit(event)
        item.text = full  # the same object is in the transcript: it ends complete

    def emit_stream(self, payload: StreamPayload) -> None:
        self._sink.emit_stream(payload)


class CompletesItemAfterEvent(ReferenceDriver):
    async def run(self, request: Request, sink: EventSink) -> Response:
        return await super().run(request, _EarlyItemSink(sink))


class SharesCheckpointState(ReferenceDriver):
    """Keeps one SessionState on the instance and hands it out in every checkpoint."""

    def __init__(self, config: ReferenceConfig | None = None) -> None:
        super().__init__(config)
        self._state: SessionState | None = None

    async def run(self, request: Request, sink: EventSink) -> Response:
        response = await super().run(request, sink)
        checkpoint = response.checkpoint
        if checkpoint is None or checkpoint.state is None:
            return response
        if self._state is None:
            self._state = checkpoint.state
        else:
            self._state.resume_id = checkpoint.state.resume_id
            self._state.data = checkpoint.state.data  # the guard values of this run
        checkpoint.state = self._state
        return response


class SinkKeptOnSelf(ReferenceDriver):
    current_sink: EventSink | None = None

    async def run(self, request: Request, sink: EventSink) -> Response:
        self.current_sink = sink
        return await super().run(request, _CurrentRunSink(self))


_FAILING_CONFIG = ReferenceConfig(fail_run=True)
_EXPECTED = "the reference config fails every run"


# ------------------------------------------------------------------------------------
# Breaks a driver author makes on the live path (each fails with its clause named)
# ------------------------------------------------------------------------------------


class IgnoresOutputSchema(Rewriting):
    """Declares native structured output, then answers the schema with plain text."""

    def respond(self, request: Request, response: Response) -> Response:
        return response.model_copy(update={"structured_output": None})


class ToolResultBeforeCall(Rewriting):
    def stream(self, payload: StreamPayload) -> list[StreamPayload]:
        if payload.kind == StreamKind.TOOL_CALL_START:
            early = StreamPayload(
                kind=StreamKind.TOOL_CALL_RESULT,
                tool_call_id=payload.tool_call_id,
                result={"text": "ok"},
            )
            return [_like(payload, early), payload]
        if payload.kind == StreamKind.TOOL_CALL_RESULT:
            return []
        return [payload]


class EmitsFromThreadAfterReturn(ReferenceDriver):
    """A thread it started emits 50 ms and 200 ms after run() returned."""

    async def run(self, request: Request, sink: EventSink) -> Response:
        response = await super().run(request, sink)
        returned = threading.Event()

        def later() -> None:
            returned.wait()
            for delay in (0.05, 0.15):
                time.sleep(delay)
                sink.emit_stream(StreamPayload(kind="vendor.telemetry"))

        threading.Thread(target=later, daemon=True).start()
        returned.set()
        return response


class EmitsViaCallLater(ReferenceDriver):
    """Leaves a loop callback behind that emits 100 ms after run() returned (asyncio)."""

    async def run(self, request: Request, sink: EventSink) -> Response:
        response = await super().run(request, sink)
        payload = StreamPayload(kind="vendor.telemetry")
        asyncio.get_running_loop().call_later(0.1, sink.emit_stream, payload)
        return response


class ReusesFirstSink(ReferenceDriver):
    """Keeps the sink of its first run and emits every later run into it."""

    kept_sink: EventSink | None = None

    async def run(self, request: Request, sink: EventSink) -> Response:
        if self.kept_sink is None:
            self.kept_sink = sink
        return await super().run(request, self.kept_sink)


class RunRaisesFileNotFound(ReferenceDriver):
    async def run(self, request: Request, sink: EventSink) -> Response:
        # provider: the CLI binary is missing
        raise FileNotFoundError(2, "No such file or directory", "agent-cli")


class RaisesWhenCancelled(ReferenceDriver):
    async def run(self, request: Request, sink: EventSink) -> Response:
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            raise RuntimeError("cleanup failed while cancelled") from None
        raise AssertionError("unreachable")


class DescriptorRaisesKeyError(ReferenceDriver):
    def descriptor(self) -> Descriptor:
        return {"type": REFERENCE_DRIVER_TYPE}["display_name"]  # type: ignore[return-value]


class _CleanFailure(Rewriting):
    """The reference's failing run (a clean agent_error), ready to be made unclean."""

    def __init__(self) -> None:
        super().__init__(_FAILING_CONFIG)


class FailureEndsInRunFinished(_CleanFailure):
    def stream(self, payload: StreamPayload) -> list[StreamPayload]:
        if payload.kind == StreamKind.RUN_ERROR:
            return [payload.model_copy(update={"kind": StreamKind.RUN_FINISHED, "error": None})]
        return [payload]


class FailureWithoutRunError(_CleanFailure):
    def stream(self, payload: StreamPayload) -> list[StreamPayload]:
        return [] if payload.kind == StreamKind.RUN_ERROR else [payload]


class FailureKeepsCheckpoint(_CleanFailure):
    def respond(self, request: Request, response: Response) -> Response:
        state = SessionState(resume_id="reference-session")
        return response.model_copy(update={"checkpoint": Checkpoint(valid=True, state=state)})


class FailureDropsItsResponse(_CleanFailure):
    """Fails, then raises RunError without the Response it has: what the run did is lost
    (upstream: errors keep what was done)."""

    async def run(self, request: Request, sink: EventSink) -> Response:
        await super().run(request, sink)
        raise RunError("the provider connection dropped")


class FailureWithoutTranscriptItem(_CleanFailure):
    def event(self, event: RunEvent) -> list[RunEvent]:
        if event.item is not None and event.item.kind == TranscriptKind.FAILURE:
            return []
        return [event]

    def respond(self, request: Request, response: Response) -> Response:
        kept = [i for i in response.transcript if i.kind != TranscriptKind.FAILURE]
        return response.model_copy(update={"transcript": kept})


# ------------------------------------------------------------------------------------
# USG: usage
# ------------------------------------------------------------------------------------

# Claude Code's counting passed through unconverted: input without its cache reads.
_EXCLUSIVE_USAGE = Usage(input_tokens=10, cached_input_tokens=13796, output_tokens=264)


class UsageExclusiveOfCache(Rewriting):
    def stream(self, payload: StreamPayload) -> list[StreamPayload]:
        if payload.kind == StreamKind.RUN_FINISHED:
            payload = payload.model_copy(update={"usage": _EXCLUSIVE_USAGE.model_copy()})
        return [payload]

    def respond(self, request: Request, response: Response) -> Response:
        return response.model_copy(update={"usage": _EXCLUSIVE_USAGE.model_copy()})


# ------------------------------------------------------------------------------------
# DFT: format drift, on the Claude Code example driver
# ------------------------------------------------------------------------------------

DRIFT_EXAMPLES = 10
"""Variants per recording and clause for the drift mutants (each is a process)."""

_CLAUDE_TYPES = frozenset({"system", "assistant", "user", "result"})


def _replay(recording: str) -> tuple[str, ...]:
    return (sys.executable, "-m", "adaptertest", "replay", str(CLAUDE_RECORDINGS / recording), "--")


class DriftBase(ClaudeDriver):
    """The Claude example driver, built from a command alone, with a swappable parser; it
    passes every drift clause (the legal base of the drift mutants)."""

    parser: ClassVar[type[ClaudeStreamParser]] = ClaudeStreamParser

    def __init__(self, command: tuple[str, ...] = _replay("success.jsonl")) -> None:
        super().__init__(ClaudeConfig(command=command))

    def stream_parser(self, out: RunOutput, *, model: str) -> ClaudeStreamParser:
        return self.parser(out)


def drift_options(cls: type[DriftBase], *recordings: str, **changes: Any) -> Options:
    """Hermetic options with the drift probe on ``recordings`` (success.jsonl by default)."""
    paths = [CLAUDE_RECORDINGS / r for r in recordings or ("success.jsonl",)]
    return _opts(drift=Drift(recordings=paths, driver=cls, max_examples=DRIFT_EXAMPLES), **changes)


class _CrashesOnUnknownType(ClaudeStreamParser):
    def on_object(self, line: dict[str, Any], text: str) -> None:
        if line.get("type") not in _CLAUDE_TYPES:
            raise ValueError(f"unknown line type {line.get('type')!r}")
        super().on_object(line, text)


class _TypeMustComeFirst(ClaudeStreamParser):
    def on_object(self, line: dict[str, Any], text: str) -> None:
        if next(iter(line), None) == "type":  # a line whose type is not its first key is skipped
            super().on_object(line, text)


class _UnknownLineIsCorrupt(ClaudeStreamParser):
    def on_object(self, line: dict[str, Any], text: str) -> None:
        if line.get("type") in _CLAUDE_TYPES:
            super().on_object(line, text)
            return
        self.malformed_lines += 1
        self._out.item(TranscriptItem(kind=TranscriptKind.STDOUT, text=text))


class _DecodesEachRead(ClaudeStreamParser):
    """Reads stdout itself: decodes each read on its own, then splits the text on newlines.

    A read that is not valid UTF-8 marks the lines it touches as corrupt, which is right for
    a line with invalid bytes and wrong for a character cut between two reads.
    """

    def __init__(self, out: RunOutput) -> None:
        super().__init__(out)
        self._pending = ""
        self._pending_bad = False
        forward = out.chunk

        def take(stream: str, data: bytes) -> None:
            forward(stream, data)
            if stream == "stdout":
                self._read(data)

        object.__setattr__(out, "chunk", take)

    def feed(self, raw: bytes) -> None:
        """Lines come from the reads instead."""

    def _read(self, data: bytes) -> None:
        try:
            text, bad = data.decode("utf-8"), False
        except UnicodeDecodeError:
            text, bad = data.decode("utf-8", errors="replace"), True
        *lines, rest = (self._pending + text).split("\n")
        for line in lines:
            self._line(line, bad or self._pending_bad)
        self._pending = rest
        self._pending_bad = bad if lines else bad or self._pending_bad

    def _line(self, text: str, bad: bool) -> None:
        if not bad:
            super().feed(text.encode("utf-8"))
        elif text.strip():
            self.malformed_lines += 1
            self._out.item(TranscriptItem(kind=TranscriptKind.STDOUT, text=text.strip()))

    def failure(self, outcome: ProcessOutcome, timeout: float) -> RunFailure | None:
        if self._pending:
            self._line(self._pending, self._pending_bad)
            self._pending = ""
        return super().failure(outcome, timeout)


class _ForgetsCorruptLines(ClaudeStreamParser):
    def feed(self, raw: bytes) -> None:
        super().feed(raw)
        self.malformed_lines = 0  # so a run with a cut line still offers its checkpoint


class CrashesOnUnknownType(DriftBase):
    parser = _CrashesOnUnknownType


class TypeMustComeFirst(DriftBase):
    parser = _TypeMustComeFirst


class UnknownLineIsCorrupt(DriftBase):
    parser = _UnknownLineIsCorrupt


class DecodesEachRead(DriftBase):
    parser = _DecodesEachRead


class CheckpointAfterCutLine(DriftBase):
    parser = _ForgetsCorruptLines


# ------------------------------------------------------------------------------------
# The catalogue
# ------------------------------------------------------------------------------------


def _unclean(
    name: str, description: str, make: Callable[[], object], also: tuple[str, str] | None = None
) -> Mutant:
    """An FLR-01 mutant: the reference's failing run, expected to fail, made unclean;
    ``also`` is a clause the bug trips by necessity, and why."""
    return Mutant(
        name,
        "FLR-01",
        description,
        make,
        _live(live_expect_failure=_EXPECTED),
        also_fails=frozenset({also[0]} if also else ()),
        why_also=also[1] if also else "",
    )


MUTANTS: tuple[Mutant, ...] = (
    # --- DRV ---
    Mutant(
        "BlankDisplayName",
        "DRV-01",
        "descriptor() leaves display_name empty",
        BlankDisplayName,
        _opts(),
    ),
    Mutant(
        "DescriptorCountsCalls",
        "DRV-02",
        "descriptor() embeds a call counter in display_name",
        DescriptorCountsCalls,
        _opts(),
    ),
    Mutant(
        "CachesDescriptor",
        "DRV-03",
        "descriptor() returns one cached snapshot, so its mutable dicts are shared",
        CachesDescriptor,
        _opts(),
    ),
    # --- CFG ---
    Mutant(
        "ValidateNoneRaisesTypeError",
        "CFG-01",
        "validate_config(None) raises TypeError instead of using the captured config",
        ValidateNoneRaisesTypeError,
        _opts(config=ReferenceConfig()),
    ),
    Mutant(
        "ValidateConfigTooStrict",
        "CFG-02",
        "validate_config demands a cwd that the driver's own methods never need",
        ValidateConfigTooStrict,
        _opts(config=ReferenceConfig()),
    ),
    Mutant(
        "AcceptsAnyConfig",
        "CFG-03",
        "validate_config accepts a config of any type",
        AcceptsAnyConfig,
        _opts(expect_reject_foreign_config=True),
    ),
    # --- CAP ---
    Mutant(
        "UnstableConfigFingerprint",
        "CAP-01",
        "session_config_fingerprint() changes on every call",
        UnstableConfigFingerprint,
        _opts(),
    ),
    Mutant(
        "FingerprintWithDefaultRepr",
        "CAP-01",
        "session_config_fingerprint() includes a config default's repr, which is its "
        "memory address: equal across instances, different in the next process",
        FingerprintWithDefaultRepr,
        _opts(fresh_process=True),
    ),
    Mutant(
        "SkillsWithoutMode",
        "CAP-02",
        "declares skills.supported with no sync mode",
        SkillsWithoutMode,
        _opts(),
    ),
    Mutant(
        "EnvironmentCheckWithoutCode",
        "CAP-03",
        "check_environment reports a check without a code",
        EnvironmentCheckWithoutCode,
        _opts(),
    ),
    Mutant(
        "ModelWithoutId",
        "CAP-04",
        "list_models returns a model without an id",
        ModelWithoutId,
        _opts(),
    ),
    Mutant(
        "DetectsProviderDefault",
        "CAP-05",
        "detect_model reports the provider's default model, not the configured one",
        DetectsProviderDefault,
        _opts(expected_detected_model="reference-1"),
    ),
    Mutant(
        "DetectsBlankModel",
        "CAP-05",
        "detect_model returns a result whose model is blank",
        DetectsBlankModel,
        _opts(),
    ),
    Mutant(
        "ProfileWithoutDir",
        "CAP-06",
        "get_profile reports a supported profile without a dir",
        ProfileWithoutDir,
        _opts(),
    ),
    Mutant(
        "QuotaWindowWithoutLabel",
        "CAP-07",
        "get_quota reports a window without a label",
        QuotaWindowWithoutLabel,
        _opts(),
    ),
    Mutant(
        "SchemaForgetsCwd",
        "CAP-08",
        "config_schema() omits the cwd field the descriptor's schema has",
        SchemaForgetsCwd,
        _opts(required_config_fields=("model", "cwd")),
    ),
    Mutant(
        "SchemaRepeatsField",
        "CAP-08",
        "config_schema() lists the model field twice",
        SchemaRepeatsField,
        _opts(),
    ),
    Mutant(
        "ListSkillsReportsStaleSelection",
        "CAP-09",
        "list_skills reports a skill from an earlier session as selected",
        ListSkillsReportsStaleSelection,
        _opts(),
    ),
    Mutant(
        "StreamCapabilityFlips",
        "CAP-10",
        "stream_capability() flips token_level on every call",
        StreamCapabilityFlips,
        _opts(),
    ),
    Mutant(
        "PersistentWithoutClose",
        "CAP-11",
        "declares a persistent process but has no close_processes()",
        PersistentWithoutClose,
        _opts(),
    ),
    # --- SO ---
    Mutant(
        "StreamingWithoutMechanism",
        "SO-01",
        "declares structured works_with_streaming with no structured-output mechanism",
        StreamingWithoutMechanism,
        _opts(),
    ),
    Mutant(
        "StructuredOutputNotValid",
        "SO-02",
        "a native structured run returns structured_output with valid=False",
        StructuredOutputNotValid,
        _live(live_structured_output=True),
    ),
    Mutant(
        "StructuredProbeAsksStreaming",
        "SO-03",
        "suite mutant: the structured probe's request asks for streaming from a driver "
        "that declares batch-only structured output (SO-03 is the suite's own promise, "
        "so the mutation is in the suite's request builder, not in the driver)",
        BatchOnlyStructuredOutput,
        _opts(),
        suite_patch=_structured_probe_asks_streaming,
    ),
    # --- SES ---
    Mutant(
        "CodecNameThreadLocal",
        "SES-01",
        "the codec keeps its name in a threading.local, so name() is empty on any thread "
        "but the one that built it",
        CodecNameThreadLocal,
        _codec(),
    ),
    Mutant(
        "EmptyStateForEmptyParams",
        "SES-02",
        "from_params(SessionParams()) returns an empty state instead of None",
        EmptyStateForEmptyParams,
        _codec(),
    ),
    Mutant(
        "CodecWithoutDisplayFallback",
        "SES-03",
        "to_params leaves display_id empty instead of falling back to resume_id",
        CodecWithoutDisplayFallback,
        _codec(),
    ),
    Mutant(
        "CodecDropsDataOnRestore",
        "SES-04",
        "from_params drops the data values",
        CodecDropsDataOnRestore,
        _codec(),
    ),
    Mutant(
        "GuardOnObjectIdentity",
        "SES-05",
        "guard_fingerprint hashes the params object's id() instead of its content",
        GuardOnObjectIdentity,
        _codec(),
    ),
    Mutant(
        "GuardInInsertionOrder",
        "SES-05",
        "guard_fingerprint hashes json.dumps(values) without sort_keys, so equal params "
        "whose values were inserted in another order get another guard",
        GuardInInsertionOrder,
        _codec(),
    ),
    Mutant(
        "GuardOnStrHash",
        "SES-05",
        "guard_fingerprint is Python's hash() of the params text: stable in one interpreter, "
        "different after a restart (PYTHONHASHSEED)",
        GuardOnStrHash,
        _codec(fresh_process=True),
    ),
    Mutant(
        "GuardFromKeySet",
        "SES-05",
        "guard_fingerprint sorts the keys, then filters them into a set and hashes in the "
        "set's order, which changes with the interpreter's hash seed",
        GuardFromKeySet,
        _codec(fresh_process=True),
    ),
    Mutant(
        "GuardEmptyWithoutData",
        "SES-05",
        "guard_fingerprint returns an empty string when params.values is empty",
        GuardEmptyWithoutData,
        _codec(),
    ),
    Mutant(
        "GuardIgnoresValues",
        "SES-06",
        "guard_fingerprint covers resume_id only, not the values",
        GuardIgnoresValues,
        _codec(guard_keys=("adaptertest_probe",)),
    ),
    Mutant(
        "ToParamsNoneRaises",
        "SES-07",
        "to_params(None) raises instead of returning the zero params",
        ToParamsNoneRaises,
        _codec(),
    ),
    Mutant(
        "RestoresNamespacedKeys",
        "SES-08",
        "from_params restores data under 'saved.<key>' (to_params strips it again, so the "
        "round trip holds but resumed runs cannot find their keys)",
        RestoresNamespacedKeys,
        _codec(session_keys=("adaptertest_probe",)),
    ),
    Mutant(
        "StoresExactProfileFingerprint",
        "SES-09",
        "the checkpoint stores the exact profile fingerprint, not the session one",
        StoresExactProfileFingerprint,
        _live(),
    ),
    # --- EVT ---
    Mutant(
        "VendorPayloadBeforeStart",
        "EVT-01",
        "a vendor payload precedes run.started",
        VendorPayloadBeforeStart,
        _live(),
    ),
    Mutant(
        "RunStartedTwice",
        "EVT-01",
        "run.started is emitted twice",
        RunStartedTwice,
        _live(),
    ),
    Mutant(
        "RunFinishedTwice",
        "EVT-02",
        "run.finished is emitted twice",
        RunFinishedTwice,
        _live(),
    ),
    Mutant(
        "VendorPayloadAfterTerminal",
        "EVT-02",
        "a vendor payload follows run.finished",
        VendorPayloadAfterTerminal,
        _live(),
    ),
    Mutant(
        "TextWithoutMessageId",
        "EVT-03",
        "text payloads carry no message_id",
        TextWithoutMessageId,
        _live(),
    ),
    Mutant(
        "EmptyTextDelta",
        "EVT-04",
        "an empty text.content follows text.start",
        EmptyTextDelta,
        _live(),
    ),
    Mutant(
        "ToolStartWithoutName",
        "EVT-05",
        "tool_call.start carries no tool name",
        ToolStartWithoutName,
        _live(),
    ),
    Mutant(
        "EmptyReasoningDelta",
        "EVT-06",
        "reasoning.content carries an empty delta",
        EmptyReasoningDelta,
        _live(),
    ),
    Mutant(
        "StepsWithoutName",
        "EVT-07",
        "step.started and step.finished carry no name",
        StepsWithoutName,
        _live(),
    ),
    Mutant(
        "HitlWithoutEnvelope",
        "EVT-08",
        "hitl.requested and hitl.resolved carry no envelope (HITL streaming is declared)",
        HitlWithoutEnvelope,
        _live(),
    ),
    Mutant(
        "TextRoleUser",
        "EVT-09",
        "text payloads set role=user",
        TextRoleUser,
        _live(),
    ),
    Mutant(
        "StampsTimestamps",
        "EVT-10",
        "every payload is stamped with the driver's own timestamp",
        StampsTimestamps,
        _live(),
    ),
    Mutant(
        "TextLeftOpen",
        "EVT-11",
        "text.end is never emitted, so the text is open at run.finished",
        TextLeftOpen,
        _live(),
    ),
    Mutant(
        "ReasoningDeclaredOff",
        "EVT-12",
        "stream_capability() says reasoning=False but reasoning is streamed",
        ReasoningDeclaredOff,
        _live(),
    ),
    Mutant(
        "RunStartedWithMessageId",
        "EVT-13",
        "run.started carries a message_id",
        RunStartedWithMessageId,
        _live(),
    ),
    Mutant(
        "ArgsAfterFullSnapshot",
        "EVT-14",
        "tool_call.start carries the complete args and args deltas follow anyway",
        ArgsAfterFullSnapshot,
        _live(),
    ),
    # --- OBS ---
    Mutant(
        "UndeclaredMcpFacts",
        "OBS-01",
        "streams MCP invocation facts while declaring only todo observations",
        UndeclaredMcpFacts,
        _live(),
    ),
    Mutant(
        "TodosNobodyAskedFor",
        "OBS-07",
        "declares todos and reports its todo list on every run, also on one whose "
        "request demands no observation facts (legal upstream; caught under "
        "strict_observation_demand)",
        TodosNobodyAskedFor,
        _live(strict_observation_demand=True),
    ),
    Mutant(
        "RawOnObservation",
        "OBS-02",
        "capability.invocation payloads also carry the provider's raw event",
        RawOnObservation,
        _live(),
    ),
    Mutant(
        "LocalTimeObservation",
        "OBS-03",
        "capability invocations are stamped in local time (+02:00), not UTC",
        LocalTimeObservation,
        _live(),
    ),
    Mutant(
        "InvocationNeverCompletes",
        "OBS-04",
        "the MCP invocation starts but never reaches a terminal phase",
        InvocationNeverCompletes,
        _live(),
    ),
    Mutant(
        "ClearedTodosAsNone",
        "OBS-05",
        "a cleared todo list is reported with items=None instead of []",
        ClearedTodosAsNone,
        _live(),
    ),
    Mutant(
        "TodoRevisionSkips",
        "OBS-06",
        "todo revisions jump from 1 to 3",
        TodoRevisionSkips,
        _live(),
    ),
    # --- RUN ---
    Mutant(
        "CombinedOutputChunk",
        "RUN-01",
        "a chunk event names stream 'combined'",
        CombinedOutputChunk,
        _live(),
    ),
    Mutant(
        "ItemEventWithoutItem",
        "RUN-02",
        "an item event carries no item",
        ItemEventWithoutItem,
        _live(),
    ),
    Mutant(
        "NumbersLifecycleEvents",
        "RUN-03",
        "the lifecycle run event carries seq=1",
        NumbersLifecycleEvents,
        _live(),
    ),
    Mutant(
        "InitItemNotEmitted",
        "RUN-04",
        "the init transcript item is never emitted as an item event",
        InitItemNotEmitted,
        _live(),
    ),
    # --- TRN ---
    Mutant(
        "AssistantItemWithoutText",
        "TRN-01",
        "the assistant transcript item has no text",
        AssistantItemWithoutText,
        _live(),
    ),
    Mutant(
        "ToolCallItemWithoutName",
        "TRN-02",
        "the tool_call transcript item has no tool_name",
        ToolCallItemWithoutName,
        _live(),
    ),
    Mutant(
        "ToolResultItemWithoutCallId",
        "TRN-03",
        "the tool_result transcript item has no tool_use_id",
        ToolResultItemWithoutCallId,
        _live(),
    ),
    Mutant(
        "ResultItemMarkedDelta",
        "TRN-04",
        "the result transcript item is marked delta=True",
        ResultItemMarkedDelta,
        _live(),
    ),
    # --- LIV ---
    Mutant(
        "FailingRuns",
        "LIV-01",
        "every run ends in a faithfully reported agent_error (exit 1, no checkpoint)",
        functools.partial(ReferenceDriver, _FAILING_CONFIG),
        _live(),
    ),
    Mutant(
        "RunRaises",
        "LIV-01",
        "run raises RunError without a response",
        RunRaises,
        _live(),
        also_fails=frozenset({"FLR-01"}),
        why_also="a raise without a Response is a failure not reported as data",
    ),
    Mutant(
        "RunHangs",
        "LIV-01",
        "run never returns (cancelled at the live deadline)",
        RunHangs,
        _live(live_run_timeout=0.3),
    ),
    Mutant(
        "AnswersWithPunctuation",
        "LIV-02",
        "answers the default prompt with 'OK.'",
        AnswersWithPunctuation,
        _live(),
    ),
    Mutant(
        "NoCheckpoint",
        "LIV-03",
        "a resumable driver returns no checkpoint",
        NoCheckpoint,
        _live(),
    ),
    # --- RSP ---
    Mutant(
        "ValidCheckpointWithoutState",
        "RSP-01",
        "a driver without resume returns checkpoint valid=True with no state",
        ValidCheckpointWithoutState,
        _live(),
    ),
    Mutant(
        "RejectionWithoutDecision",
        "RSP-02",
        "a failed run reports decision_rejected without failure.human_decision",
        RejectionWithoutDecision,
        _live(live_expect_failure=_EXPECTED),
    ),
    Mutant(
        "OutputIsStdoutDump",
        "RSP-03",
        "output is the whole JSONL stdout (custom prompt, so LIV-02 has no answer to check)",
        OutputIsStdoutDump,
        _live(live_prompt="Say hello."),
    ),
    Mutant(
        "OutputIsJoinedJsonl",
        "RSP-03",
        "output is the JSONL stdout's lines joined without the trailing newline",
        OutputIsJoinedJsonl,
        _live(live_prompt="Say hello."),
    ),
    Mutant(
        "OutputIsCrlfJsonl",
        "RSP-03",
        "output is the JSONL stdout with CRLF line ends",
        OutputIsCrlfJsonl,
        _live(live_prompt="Say hello."),
    ),
    Mutant(
        "OutputIsTerminalLine",
        "RSP-03",
        "output is the terminal JSON line alone",
        OutputIsTerminalLine,
        _live(live_prompt="Say hello."),
    ),
    Mutant(
        "CodecForgetsProfileFingerprint",
        "RSP-04",
        "from_params drops the profile_fingerprint value, so the live checkpoint does not "
        "round-trip (the codec laws' states never hold that key)",
        CodecForgetsProfileFingerprint,
        _live(max_examples=CODEC_EXAMPLES),
    ),
    Mutant(
        "TruncatedTerminalJson",
        "RSP-05",
        "raw_streams.terminal.raw_json is cut off mid-object",
        TruncatedTerminalJson,
        _live(),
    ),
    # --- CON ---
    Mutant(
        "SinkKeptOnSelf",
        "CON-01",
        "keeps the current run's sink on the shared instance, so overlapping runs emit "
        "into the last-started run's sink",
        SinkKeptOnSelf,
        _live(concurrent_runs=3),
    ),
    # --- RCV ---
    Mutant(
        "ReusesOnePayload",
        "RCV-01",
        "streams every text delta through one payload object, refilled before each emit and "
        "cleared after it (the stream clauses judge what was emitted: no empty delta)",
        ReusesOnePayload,
        _live(),
    ),
    Mutant(
        "CompletesItemAfterEvent",
        "RCV-01",
        "emits the assistant item on its first character, then completes its text in place",
        CompletesItemAfterEvent,
        _live(),
    ),
    Mutant(
        "SharesCheckpointState",
        "RCV-02",
        "keeps one SessionState on the instance and hands it out in every run's checkpoint, "
        "so concurrent responses share (and overwrite) it",
        SharesCheckpointState,
        _live(concurrent_runs=3),
    ),
    # --- breaks on the live path: each names its clause without any opt-in ---
    Mutant(
        "IgnoresOutputSchema",
        "SO-02",
        "declares native structured output, then ignores the schema (no structured_output)",
        IgnoresOutputSchema,
        _live(live_structured_output=True),
    ),
    Mutant(
        "ToolResultBeforeCall",
        "EVT-05",
        "tool_call.result arrives before its tool_call.start",
        ToolResultBeforeCall,
        _live(),
    ),
    Mutant(
        "EmitsFromThreadAfterReturn",
        "EVT-02",
        "a thread it started emits 50 ms and 200 ms after run() returned",
        EmitsFromThreadAfterReturn,
        _live(),
    ),
    Mutant(
        "EmitsViaCallLater",
        "EVT-02",
        "loop.call_later(0.1, ...) emits after run() returned",
        EmitsViaCallLater,
        _live(),
    ),
    Mutant(
        "ReusesFirstSink",
        "CON-01",
        "keeps its first run's sink and emits every later run into it",
        ReusesFirstSink,
        _live(concurrent_runs=3),
        also_fails=frozenset({"EVT-02"}),
        why_also="the later runs emit into the live run's sink after that run returned",
    ),
    Mutant(
        "RunRaisesFileNotFound",
        "LIV-01",
        "run raises FileNotFoundError (a missing CLI binary)",
        RunRaisesFileNotFound,
        _live(),
        also_fails=frozenset({"FLR-01"}),
        why_also="a raise without a Response is a failure not reported as data",
    ),
    Mutant(
        "RaisesWhenCancelled",
        "LIV-01",
        "run hangs, then raises when the live deadline cancels it",
        RaisesWhenCancelled,
        _live(live_run_timeout=0.3),
    ),
    Mutant(
        "DescriptorRaisesKeyError",
        "DRV-01",
        "descriptor() raises KeyError",
        DescriptorRaisesKeyError,
        _opts(),
    ),
    Mutant(
        "SucceedsDespiteExpectedFailure",
        "FLR-01",
        "the live run succeeds although Options(live_expect_failure=...) says it fails",
        ReferenceDriver,
        _live(live_expect_failure="a replayed 429"),
    ),
    _unclean(
        "FailureEndsInRunFinished",
        "a failed run's stream ends in run.finished",
        FailureEndsInRunFinished,
    ),
    _unclean(
        "FailureWithoutRunError",
        "a failed run's stream has no terminal payload",
        FailureWithoutRunError,
        also=("EVT-02", "a stream without a terminal breaks EVT-02 whatever the outcome"),
    ),
    _unclean(
        "FailureKeepsCheckpoint",
        "a failed run still offers a valid checkpoint",
        FailureKeepsCheckpoint,
        also=("RSP-01", "a valid checkpoint on a failed outcome is RSP-01's rule too"),
    ),
    _unclean(
        "FailureDropsItsResponse",
        "a failed run raises RunError without the Response it has (its transcript, usage "
        "and failure are lost)",
        FailureDropsItsResponse,
    ),
    _unclean(
        "FailureWithoutTranscriptItem",
        "a failed run's transcript (and its item events) carry no failure item",
        FailureWithoutTranscriptItem,
    ),
    # --- USG ---
    Mutant(
        "UsageExclusiveOfCache",
        "USG-01",
        "reports input_tokens without the cache reads (10 input, 13796 cached), as "
        "Claude Code counts them, in the response and in run.finished alike",
        UsageExclusiveOfCache,
        _live(),
    ),
    # --- DFT ---
    Mutant(
        "CrashesOnUnknownType",
        "DFT-01",
        "the Claude parser raises on a line type it does not know",
        CrashesOnUnknownType,
        drift_options(CrashesOnUnknownType),
    ),
    Mutant(
        "TypeMustComeFirst",
        "DFT-01",
        "the Claude parser skips a line whose type is not its first key",
        TypeMustComeFirst,
        drift_options(TypeMustComeFirst),
    ),
    Mutant(
        "UnknownLineIsCorrupt",
        "DFT-01",
        "the Claude parser counts a line of an unknown type as corrupt (shown, no checkpoint)",
        UnknownLineIsCorrupt,
        drift_options(UnknownLineIsCorrupt),
    ),
    Mutant(
        "CheckpointAfterCutLine",
        "DFT-02",
        "the Claude parser forgets corrupt lines, so a run with a cut line offers a checkpoint",
        CheckpointAfterCutLine,
        drift_options(CheckpointAfterCutLine),
    ),
    Mutant(
        "DecodesEachRead",
        "DFT-03",
        "the Claude driver decodes each read of stdout on its own before splitting on "
        "newlines, so a character cut between two reads corrupts its line",
        DecodesEachRead,
        drift_options(DecodesEachRead, "tool_use.jsonl"),
    ),
    # --- SYS ---
    Mutant(
        "AcceptsUndeclaredAppend",
        "SYS-01",
        "declares no system-prompt append, yet runs a request that carries one instead of "
        "raising SystemPromptUnsupportedError",
        AcceptsUndeclaredAppend,
        _live(),
    ),
    Mutant(
        "ChecksDeclarationFirst",
        "SYS-01",
        "declares no append and refuses an append holding NUL or invalid UTF-8 as "
        "unsupported_driver: upstream checks UTF-8, then NUL, then the declaration",
        ChecksDeclarationFirst,
        _live(),
    ),
    Mutant(
        "InlineLimitOffByOne",
        "SYS-01",
        "passes the append on the command line and refuses it as inline_limit from 32,768 "
        "UTF-8 bytes on (the limit is 32,768 inclusive)",
        InlineLimitOffByOne,
        _live(),
    ),
    Mutant(
        "ShowsAppendInInvocation",
        "SYS-01",
        "describes its invocation in a run event with the appended text instead of [redacted]",
        ShowsAppendInInvocation,
        _live(),
    ),
    Mutant(
        "ConflictRefusedAfterStart",
        "SYS-01",
        "its config sets a system prompt, and it refuses the append as "
        "conflicting_extra_args only after reporting its invocation",
        ConflictRefusedAfterStart,
        _live(),
    ),
    Mutant(
        "PrependsAppend",
        "SYS-02",
        "declares the append and puts the text in front of the prompt (the user turn) "
        "instead of the system prompt",
        *_model_side(PrependsAppend),
    ),
    Mutant(
        "IgnoresAppend",
        "SYS-02",
        "declares the append and never passes the text on",
        *_model_side(IgnoresAppend),
    ),
    Mutant(
        "FlattensAppendNewlines",
        "SYS-02",
        "declares the append and hands it to the model on one line",
        *_model_side(FlattensAppendNewlines),
    ),
    Mutant(
        "NormalisesAppend",
        "SYS-02",
        "declares the append and hands it to the model in Unicode normal form C",
        *_model_side(NormalisesAppend),
    ),
    Mutant(
        "DropsAppendWhenBatch",
        "SYS-02",
        "declares the append and passes it on streaming runs only",
        *_model_side(DropsAppendWhenBatch),
    ),
    Mutant(
        "ForgetsAppendFingerprint",
        "SYS-03",
        "leaves append_system_prompt_fingerprint out of the checkpoint of a run with an append",
        ForgetsAppendFingerprint,
        _live(),
    ),
    Mutant(
        "ResumesChangedAppend",
        "SYS-03",
        "resumes a session captured under one append with another",
        ResumesChangedAppend,
        _live(),
    ),
    # --- HIL ---
    Mutant(
        "NeverAsks",
        "HIL-01",
        "ignores an Ask policy for permission: runs the command without asking the host",
        *_hil(lambda m: NeverAsks(model=m)),
    ),
    Mutant(
        "ResolvedNeverStreamed",
        "HIL-02",
        "streams hitl.requested for each decision but never hitl.resolved",
        *_hil(lambda m: ResolvedNeverStreamed(model=m)),
    ),
    Mutant(
        "ApprovedButNotRun",
        "HIL-03",
        "reports a command the host approved as done without running it",
        *_hil(lambda m: ApprovedButNotRun(model=m)),
    ),
    Mutant(
        "RejectedButRun",
        "HIL-04",
        "runs a command the host rejected",
        *_hil(lambda m: RejectedButRun(model=m)),
    ),
    Mutant(
        "RejectionReportedAsTimeout",
        "HIL-04",
        "ends a run whose decision the host rejected with decision_timeout",
        *_hil(lambda m: RejectionReportedAsTimeout(model=m)),
    ),
    Mutant(
        "RejectionWithoutHumanDecision",
        "HIL-04",
        "ends a run whose decision the host rejected with decision_rejected but no "
        "failure.human_decision",
        *_hil(lambda m: RejectionWithoutHumanDecision(model=m)),
    ),
    Mutant(
        "WaitsForTheRunDeadline",
        "HIL-05",
        "ignores the policy's timeout and waits for an answer until the run is stopped",
        *_hil(lambda m: WaitsForTheRunDeadline(model=m)),
    ),
    Mutant(
        "AsksUnderAutoApprove",
        "HIL-06",
        "asks the host although the policy says auto_approve",
        *_hil(lambda m: AsksUnderAutoApprove(model=m)),
    ),
    Mutant(
        "DropsTheAnswer",
        "HIL-07",
        "tells the model the question was answered, without the host's text",
        *_hil(lambda m: DropsTheAnswer(model=m)),
    ),
    Mutant(
        "KeepsWaitingWhenCancelled",
        "HIL-08",
        "shields a pending decision from the run's cancellation and keeps waiting",
        *_hil(lambda m: KeepsWaitingWhenCancelled(model=m)),
    ),
    Mutant(
        "AsksWithoutDeclaring",
        "HIL-09",
        "declares no ask mode in run_policy_caps, and asks the host anyway",
        *_hil(lambda m: AsksWithoutDeclaring(model=m)),
    ),
    # --- scenario clauses: the network mode, bound to the suite's model emulator ---
    *(
        Mutant(
            m.cls.__name__,
            m.clause,
            m.description,
            m.cls,
            _opts(model_binding=m.binding),
            names=m.names,
        )
        for m in SCENARIO_MUTANTS
    ),
)


# ------------------------------------------------------------------------------------
# The generated table (docs/mutants.md)
# ------------------------------------------------------------------------------------


def _shown(value: object) -> str:
    if isinstance(value, Drift):
        names = ", ".join(repr(path.name) for path in value.recordings)
        return f"Drift(recordings=[{names}], max_examples={value.max_examples})"
    if isinstance(value, ReferenceConfig | SessionState):
        fields = value.model_dump(exclude_defaults=True)
        inner = ", ".join(f"{k}={v!r}" for k, v in fields.items())
        return f"{type(value).__name__}({inner})"
    if isinstance(value, tuple):
        return "(" + ", ".join(repr(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, ModelBinding):
        ref = f", ref={value.ref!r}" if value.ref else ""
        return f"ModelBinding(the network mode, protocol={value.protocol!r}{ref})"
    if callable(value):
        return "(the scripted model's requests)"
    return repr(value)


def options_summary(options: Options) -> str:
    """The options that differ from :data:`BASELINE`, as ``name=value`` (True flags by
    name)."""
    parts: list[str] = []
    for f in dataclasses.fields(Options):
        value = getattr(options, f.name)
        if value == getattr(BASELINE, f.name):
            continue
        parts.append(f.name if value is True else f"{f.name}={_shown(value)}")
    return ", ".join(parts) or "(defaults)"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def mutant_table_markdown() -> str:
    """docs/mutants.md: every clause with the mutants that must trip it, and nothing else."""
    by_clause: dict[str, list[Mutant]] = {c.id: [] for c in CLAUSES}
    for mutant in MUTANTS:
        by_clause[mutant.clause].append(mutant)
    covered = sum(1 for found in by_clause.values() if found)
    lines = [
        "# Mutant catalogue and kill matrix",
        "",
        "<!-- Generated by tests/selfproof/mutants.py:mutant_table_markdown(); "
        "test_kill_matrix.py checks it is current. -->",
        "",
        "Each mutant is a small variation of the reference driver (for the drift clauses, "
        "of the Claude Code example driver) that breaks one rule. "
        "The kill matrix (`tests/selfproof/test_kill_matrix.py`) runs the whole suite "
        "against each one and requires the failing clauses to be exactly the mutant's "
        "clause, plus the listed extras where no narrower bug exists. Options are the "
        f"ones that differ from `Options(max_examples={SMOKE_EXAMPLES}, "
        f"live_run_timeout={LIVE_TIMEOUT:g})`: mutants that keep the reference's session "
        "codec run the codec property as a smoke test only.",
        "",
        f"Clauses covered: {covered}/{len(CLAUSES)}; mutants: {len(MUTANTS)}.",
        "",
        "| Clause | Mutant | Broken behaviour | Options | Also fails |",
        "|---|---|---|---|---|",
    ]
    for clause_id, found in by_clause.items():
        if not found:
            lines.append(f"| {clause_id} | **none** | | | |")
        for mutant in found:
            extra = ", ".join(sorted(mutant.also_fails))
            if extra:
                extra = f"{extra} ({mutant.why_also})"
            if mutant.suite_bug:
                extra = f"{extra} suite bug: {mutant.suite_bug}".strip()
            lines.append(
                f"| {clause_id} | `{mutant.name}` | {_cell(mutant.description)} | "
                f"{_cell(options_summary(mutant.options))} | {_cell(extra)} |"
            )
    return "\n".join(lines) + "\n"


def clause_mutant_map() -> str:
    """One line per clause: its ID and the names of the mutants that target it."""
    lines = []
    for clause in CLAUSES:
        names = [m.name for m in MUTANTS if m.clause == clause.id]
        lines.append(f"{clause.id:<7} -> {', '.join(names) or 'UNCOVERED'}")
    return "\n".join(lines)


def _check_catalogue() -> None:
    """Catch typos at import: every target is a known clause, every name unique."""
    unknown = [m.name for m in MUTANTS if m.clause not in CLAUSE_BY_ID]
    unknown += [m.name for m in MUTANTS if not m.also_fails <= set(CLAUSE_BY_ID)]
    names = [m.name for m in MUTANTS]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if unknown or repeated:
        raise ValueError(f"bad catalogue: unknown clauses in {unknown}, repeated names {repeated}")


_check_catalogue()
