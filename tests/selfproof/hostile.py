"""Drivers for the self-proof: a compliant baseline, and hostile copies of it.

:class:`BaselineDriver` implements the whole SPI with ``async`` probes and passes every
clause; it calls none of its own methods, so breaking one method breaks only what the
suite sees of that method. :func:`hostile_factory` returns a factory whose drivers break
exactly one method (a :class:`Target`) in one way (a :class:`Hazard`). Blocking hazards
wait on a ``threading.Event`` the test owns and sets at teardown, so no thread is left
blocked for good.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict

from driver import (
    SESSION_PARAM_PROFILE_FINGERPRINT,
    AgentIdentity,
    AgentProfile,
    AgentProfileSource,
    Checkpoint,
    ConfigField,
    ConfigSchema,
    Descriptor,
    DetectedModel,
    EnvironmentCheck,
    EnvironmentReport,
    EnvironmentStatus,
    EventSink,
    InvalidDriverConfigError,
    ModelInfo,
    OutputFormat,
    ProcessCapability,
    ProfileSelection,
    QuotaReport,
    QuotaWindow,
    Request,
    ResolvedSkills,
    Response,
    RunEvent,
    RunEventType,
    SessionCapability,
    SessionParams,
    SessionState,
    Skill,
    SkillCapability,
    SkillSnapshot,
    SkillSyncMode,
    StreamCapability,
    StreamKind,
    StreamPayload,
    StructuredOutput,
    StructuredOutputCapability,
    StructuredOutputSource,
    TranscriptItem,
    TranscriptKind,
    canonical_session_config_fingerprint,
    check_append_system_prompt,
)
from referencedriver import ReferenceSessionCodec

__all__ = [
    "ASYNC_TARGETS",
    "BASELINE_TYPE",
    "SLOW",
    "SYNC_TARGETS",
    "TARGETS",
    "Answers",
    "BaselineConfig",
    "BaselineDriver",
    "DriverInterrupt",
    "Hazard",
    "ProofCodec",
    "Target",
    "answer",
    "fingerprint",
    "full_descriptor",
    "hostile_factory",
    "mirror_item",
    "profile_checkpoint",
    "refuse_append",
    "reject_foreign",
    "respond",
    "structured_answer",
]

BASELINE_TYPE = "selfproof"
FINGERPRINT_DOMAIN = "selfproof/baseline/v1"
MODEL = "proof-1"
HUGE = 3600.0
"""Seconds a cooperative hang sleeps: far beyond any deadline the tests set."""


class BaselineConfig(BaseModel):
    """The construction config of every self-proof driver."""

    model_config = ConfigDict(frozen=True, extra="forbid", protected_namespaces=())

    model: str = "proof-1"


class DriverInterrupt(BaseException):
    """A BaseException that is neither KeyboardInterrupt nor SystemExit.

    Stands for the exceptions a driver can raise that ``except Exception`` misses.
    """


def reject_foreign(config: object | None) -> None:
    """``validate_config`` of every self-proof driver: None or a BaselineConfig."""
    if config is None or isinstance(config, BaselineConfig):
        return
    raise InvalidDriverConfigError(
        BASELINE_TYPE, TypeError(f"unsupported config {type(config).__qualname__}")
    )


# -- run helpers shared with the compliant variants ------------------------------------


def mirror_item(sink: EventSink, transcript: list[TranscriptItem], item: TranscriptItem) -> None:
    """Append ``item`` to the transcript and emit it as an item event (RUN-02, RUN-04)."""
    transcript.append(item)
    sink.emit(RunEvent(type=RunEventType.ITEM, item=item.model_copy(deep=True)))


def profile_checkpoint(request: Request) -> Checkpoint:
    """A valid checkpoint that keeps the session and stores the profile fingerprint."""
    state = request.session.state if request.session is not None else None
    data = dict(state.data) if state is not None else {}
    fingerprint = request.profile_payload.session_fingerprint()
    if fingerprint:
        data[SESSION_PARAM_PROFILE_FINGERPRINT] = fingerprint
    resume_id = (state.resume_id if state is not None else "") or "proof-session"
    return Checkpoint(valid=True, state=SessionState(resume_id=resume_id, data=data))


def refuse_append(driver_type: str, request: Request) -> None:
    """Refuse a non-empty appended system prompt before anything starts, in upstream's
    order (SYS-01): these drivers declare no append."""
    check_append_system_prompt(driver_type, request.append_system_prompt, supported=False)


def answer(request: Request) -> str:
    """The reply to a prompt: ``OK`` for the suite's default prompt."""
    if request.prompt == "Reply with exactly: OK":
        return "OK"
    return f"echo: {request.prompt}"


STRUCTURED_JSON = '{"ok":true}'


def structured_answer(request: Request) -> StructuredOutput | None:
    """The native structured output the suite's probe asks for, or None."""
    if request.output_schema is None:
        return None
    if request.structured_output_source != StructuredOutputSource.NATIVE:
        return None
    schema = request.output_schema.schema_document.encode("utf-8", "surrogatepass")
    return StructuredOutput(
        format=OutputFormat.JSON_SCHEMA,
        source=StructuredOutputSource.NATIVE,
        raw_json=STRUCTURED_JSON,
        value=json.loads(STRUCTURED_JSON),
        valid=True,
        schema_hash=hashlib.sha256(schema).hexdigest(),
    )


# -- the compliant baseline ------------------------------------------------------------


class ProofCodec(ReferenceSessionCodec):
    """The reference mapping under the baseline's name, with a guard that cannot collide."""

    def __init__(self) -> None:
        super().__init__(BASELINE_TYPE)

    def guard_fingerprint(self, params: SessionParams) -> str:
        # JSON keeps keys and values apart whatever characters they hold.
        text = json.dumps([params.resume_id, sorted(params.values.items())])
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def full_descriptor(type_name: str = BASELINE_TYPE) -> Descriptor:
    """Declares resume, skills, a persistent process and native structured output."""
    return Descriptor(
        type=type_name,
        display_name=f"Self-proof {type_name}",
        models=(ModelInfo(id=MODEL),),
        config_schema=ConfigSchema(fields=(ConfigField(name="model", type="text"),)),
        sessions=SessionCapability(supports_resume=True),
        skills=SkillCapability(supported=True, mode=SkillSyncMode.EPHEMERAL),
        process=ProcessCapability(persistent=True),
        structured_output=StructuredOutputCapability(json_schema_native=True, works_with_run=True),
    )


class Answers:
    """What every capability probe of a full driver returns (one instance per type)."""

    def __init__(self, type_name: str = BASELINE_TYPE) -> None:
        self.type = type_name

    def environment(self) -> EnvironmentReport:
        return EnvironmentReport(
            driver_type=self.type,
            status=EnvironmentStatus.PASS,
            healthy=True,
            checks=[EnvironmentCheck(code="ready", level="pass")],
        )

    def models(self) -> list[ModelInfo]:
        return [ModelInfo(id=MODEL)]

    def detected(self) -> DetectedModel:
        return DetectedModel(model=MODEL, provider=self.type, source="config")

    def profile(self) -> AgentProfile:
        return AgentProfile(
            driver_type=self.type,
            supported=True,
            dir="proof-home",
            source=AgentProfileSource.DEFAULT,
        )

    def quota(self) -> QuotaReport:
        return QuotaReport(
            driver_type=self.type, available=True, windows=[QuotaWindow(label="day")]
        )

    def schema(self) -> ConfigSchema:
        return ConfigSchema(fields=(ConfigField(name="model", type="text"),))

    def skills(self) -> SkillSnapshot:
        return SkillSnapshot(driver_type=self.type, supported=True, mode=SkillSyncMode.EPHEMERAL)


def respond(request: Request, sink: EventSink) -> Response:
    """One compliant run: a text lifecycle on streaming requests, the mirrored transcript,
    a resumable checkpoint and, when asked, native structured output. An appended system
    prompt is refused (the baseline declares none)."""
    refuse_append(BASELINE_TYPE, request)
    output = answer(request)
    transcript: list[TranscriptItem] = []
    if request.streaming:
        sink.emit_stream(StreamPayload(kind=StreamKind.RUN_STARTED, run_id=request.run_id))
        sink.emit_stream(StreamPayload(kind=StreamKind.TEXT_START, message_id="m1"))
        sink.emit_stream(StreamPayload(kind=StreamKind.TEXT_CONTENT, message_id="m1", delta=output))
        sink.emit_stream(StreamPayload(kind=StreamKind.TEXT_END, message_id="m1"))
    mirror_item(sink, transcript, TranscriptItem(kind=TranscriptKind.ASSISTANT, text=output))
    if request.streaming:
        sink.emit_stream(StreamPayload(kind=StreamKind.RUN_FINISHED, run_id=request.run_id))
    return Response(
        output=output,
        transcript=transcript,
        checkpoint=profile_checkpoint(request),
        structured_output=structured_answer(request),
    )


def fingerprint(config: BaselineConfig) -> str:
    """The session-config fingerprint of every full self-proof driver."""
    return canonical_session_config_fingerprint(FINGERPRINT_DOMAIN, config)


_ANSWERS = Answers()


class BaselineDriver:
    """Every SPI method, answered from memory; no method calls another one."""

    def __init__(self, config: BaselineConfig | None = None) -> None:
        self._config = config or BaselineConfig()

    def descriptor(self) -> Descriptor:
        return full_descriptor()

    def validate_config(self, config: object | None) -> None:
        reject_foreign(config)

    async def check_environment(self, config: object | None) -> EnvironmentReport:
        return _ANSWERS.environment()

    async def list_models(self, config: object | None) -> list[ModelInfo]:
        return _ANSWERS.models()

    async def detect_model(
        self, config: object | None, profile: ProfileSelection | None
    ) -> DetectedModel | None:
        return _ANSWERS.detected()

    async def get_profile(
        self, config: object | None, agent: AgentIdentity, profile: ProfileSelection | None
    ) -> AgentProfile:
        return _ANSWERS.profile()

    async def get_quota(
        self, config: object | None, profile: ProfileSelection | None
    ) -> QuotaReport:
        return _ANSWERS.quota()

    async def config_schema(self, config: object | None) -> ConfigSchema | None:
        return _ANSWERS.schema()

    async def list_skills(
        self,
        config: object | None,
        payload: ResolvedSkills,
        selected: list[str] | None,
        resolved: list[Skill] | None,
        profile: ProfileSelection | None,
    ) -> SkillSnapshot:
        return _ANSWERS.skills()

    async def inject_skills(
        self, config: object | None, payload: ResolvedSkills, profile: ProfileSelection | None
    ) -> None:
        return None

    async def sync_skills(
        self,
        config: object | None,
        payload: ResolvedSkills,
        selected: list[str] | None,
        resolved: list[Skill] | None,
        profile: ProfileSelection | None,
    ) -> SkillSnapshot:
        return _ANSWERS.skills()

    async def close_processes(self) -> None:
        return None

    def stream_capability(self) -> StreamCapability:
        return StreamCapability(native=True, token_level=True)

    def session_codec(self) -> ProofCodec:
        return ProofCodec()

    def session_config_fingerprint(self) -> str:
        return fingerprint(self._config)

    async def run(self, request: Request, sink: EventSink) -> Response:
        await anyio.lowlevel.checkpoint()
        return respond(request, sink)


# -- hazards ---------------------------------------------------------------------------


class Hazard(StrEnum):
    """One way to misbehave."""

    RAISE = "raise"  # raise RuntimeError
    BASE = "base"  # raise DriverInterrupt, a BaseException
    HANG = "hang"  # await anyio.sleep(HUGE): cancellable (async methods only)
    BLOCK = "block"  # block the thread (for async methods: the event loop) on an Event
    WRONG = "wrong"  # return a value of the wrong type
    CORO = "coro"  # a sync-declared method written as async def: returns a coroutine


SLOW = frozenset({Hazard.HANG, Hazard.BLOCK})
"""Hazards that cost a deadline."""


@dataclass(frozen=True)
class Target:
    """A method the suite calls, what a wrong value from it looks like, and the clauses
    its misbehaviour may fail (``home``); ``witness`` clauses come from later probes and
    must still pass."""

    name: str
    is_async: bool
    wrong: Callable[[], object]
    home: tuple[str, ...]
    witness: tuple[str, ...]
    on_codec: bool = False

    @property
    def hazards(self) -> tuple[Hazard, ...]:
        if self.is_async:
            return (Hazard.RAISE, Hazard.BASE, Hazard.HANG, Hazard.BLOCK, Hazard.WRONG)
        return (Hazard.RAISE, Hazard.BASE, Hazard.BLOCK, Hazard.WRONG, Hazard.CORO)


_LATER = ("SES-04", "LIV-01")  # the session-codec probe (threads), the live run (the loop)
_CODEC_HOME = ("SES-01", "SES-02", "SES-03", "SES-04", "SES-05", "SES-06", "SES-07", "SES-08")

TARGETS: tuple[Target, ...] = (
    Target("validate_config", False, lambda: None, ("CFG-01", "CFG-02", "CFG-03"),
           ("CAP-04", *_LATER)),
    Target("check_environment", True, lambda: {"status": "pass"}, ("CAP-03",),
           ("CAP-04", *_LATER)),
    Target("list_models", True, lambda: {"id": "proof-1"}, ("CAP-04",), ("CAP-05", *_LATER)),
    Target("detect_model", True, lambda: "proof-1", ("CAP-05",), ("CAP-06", *_LATER)),
    Target("get_profile", True, lambda: {"dir": "x"}, ("CAP-06",), ("CAP-07", *_LATER)),
    Target("get_quota", True, lambda: None, ("CAP-07",), ("CAP-08", *_LATER)),
    Target("config_schema", True, lambda: {"fields": []}, ("CAP-08",), ("CAP-09", *_LATER)),
    Target("list_skills", True, lambda: None, ("CAP-09",), ("CAP-10", *_LATER)),
    Target("sync_skills", True, lambda: {"supported": True}, ("CAP-09",), ("CAP-10", *_LATER)),
    Target("stream_capability", False, lambda: {"native": True}, ("CAP-10",), ("SES-04", "LIV-01")),
    Target("session_codec", False, lambda: "a codec", ("CAP-01", "SES-01", "RSP-04"),
           ("CAP-10", "LIV-01")),
    Target("session_config_fingerprint", False, lambda: 42, ("CAP-01",), _LATER),
    Target("name", False, lambda: {"name": BASELINE_TYPE}, ("CAP-01", "SES-01"), ("LIV-01",),
           on_codec=True),
    Target("to_params", False, lambda: {"resume_id": "x"}, (*_CODEC_HOME, "RSP-04"),
           ("LIV-01",), on_codec=True),
    Target("from_params", False, lambda: "state", (*_CODEC_HOME, "RSP-04"), ("LIV-01",),
           on_codec=True),
    Target("guard_fingerprint", False, lambda: 7, (*_CODEC_HOME, "RSP-04"), ("LIV-01",),
           on_codec=True),
    Target("run", True, lambda: None, ("LIV-01", "CON-01"), ()),
)  # fmt: skip
"""Every method the suite calls on a built driver (the factory and descriptor() are
setup, handled by the tests themselves)."""

SYNC_TARGETS = tuple(t for t in TARGETS if not t.is_async)
ASYNC_TARGETS = tuple(t for t in TARGETS if t.is_async)


def _broken(
    original: Callable[..., Any], target: Target, hazard: Hazard, release: threading.Event
) -> Callable[..., Any]:
    """``original`` (an unbound method) made to misbehave as ``hazard`` says."""
    label = f"{target.name} misbehaves ({hazard.value})"

    if target.is_async:

        async def async_method(self: object, *args: Any) -> Any:
            if hazard is Hazard.RAISE:
                raise RuntimeError(label)
            if hazard is Hazard.BASE:
                raise DriverInterrupt(label)
            if hazard is Hazard.HANG:
                await anyio.sleep(HUGE)
            if hazard is Hazard.BLOCK:
                release.wait()  # blocks the event loop until the test lets go
            if hazard is Hazard.WRONG:
                return target.wrong()
            return await original(self, *args)

        return async_method

    if hazard is Hazard.CORO:

        async def coroutine_method(self: object, *args: Any) -> Any:
            return original(self, *args)

        return coroutine_method

    def sync_method(self: object, *args: Any) -> Any:
        if hazard is Hazard.RAISE:
            raise RuntimeError(label)
        if hazard is Hazard.BASE:
            raise DriverInterrupt(label)
        if hazard is Hazard.BLOCK:
            release.wait()
        if hazard is Hazard.WRONG:
            return target.wrong()
        return original(self, *args)

    return sync_method


def hostile_factory(
    target: Target, hazard: Hazard, release: threading.Event
) -> Callable[[], object]:
    """A factory of baseline drivers whose ``target`` method misbehaves as ``hazard``."""
    if hazard not in target.hazards:
        raise ValueError(f"{hazard} does not apply to {target.name}")
    if target.on_codec:
        method = _broken(getattr(ProofCodec, target.name), target, hazard, release)
        codec_class = type(f"Hostile{target.name}Codec", (ProofCodec,), {target.name: method})

        def session_codec(self: object) -> object:
            return codec_class()

        cls = type("HostileCodecDriver", (BaselineDriver,), {"session_codec": session_codec})
    else:
        method = _broken(getattr(BaselineDriver, target.name), target, hazard, release)
        cls = type(f"Hostile_{target.name}", (BaselineDriver,), {target.name: method})

    def factory() -> object:
        return cls(BaselineConfig())

    return factory
