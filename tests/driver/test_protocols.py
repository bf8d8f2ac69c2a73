"""Tests of the SPI Protocols and of the stricter ``implements`` check."""

from __future__ import annotations

import inspect

import anyio
import pytest

from driver import protocols
from driver.decision import DecisionRequest, DecisionResponse
from driver.descriptor import ConfigSchema, Descriptor, StreamCapability
from driver.environment import (
    AgentProfile,
    DetectedModel,
    EnvironmentReport,
    ModelInfo,
    QuotaReport,
)
from driver.events import RunEvent, StreamPayload
from driver.profile import ProfileSelection
from driver.protocols import (
    ConfigSchemaProvider,
    DecisionCapableSink,
    Driver,
    EnvironmentProbe,
    EventSink,
    ModelDetector,
    ModelLister,
    ProcessLifecycleDriver,
    ProfileReporter,
    QuotaProbe,
    SessionCodec,
    SessionCodecProvider,
    SessionConfigFingerprinter,
    SkillSupport,
    StreamSupport,
    implements,
)
from driver.run import AgentIdentity, Request, Response, SessionState
from driver.session import SessionParams
from driver.skill import ResolvedSkills, Skill, SkillSnapshot

ALL_PROTOCOLS: list[type] = [
    Driver,
    EventSink,
    DecisionCapableSink,
    SessionCodec,
    EnvironmentProbe,
    ModelLister,
    ModelDetector,
    ProfileReporter,
    QuotaProbe,
    ConfigSchemaProvider,
    SkillSupport,
    ProcessLifecycleDriver,
    StreamSupport,
    SessionCodecProvider,
    SessionConfigFingerprinter,
]


class MinimalDriver:
    """Only the mandatory interface."""

    def descriptor(self) -> Descriptor:
        return Descriptor(type="minimal", display_name="Minimal")

    def validate_config(self, config: object | None) -> None:
        return None

    async def run(self, request: Request, sink: EventSink) -> Response:
        sink.emit(RunEvent(type="lifecycle", text=request.run_id))
        return Response()


class RecordingSink:
    def __init__(self) -> None:
        self.events: list[RunEvent] = []
        self.payloads: list[StreamPayload] = []

    def emit(self, event: RunEvent) -> None:
        self.events.append(event)

    def emit_stream(self, payload: StreamPayload) -> None:
        self.payloads.append(payload)


class DecidingSink(RecordingSink):
    async def request_decision(self, request: DecisionRequest) -> DecisionResponse:
        return DecisionResponse()


class Codec:
    def name(self) -> str:
        return "full/v1"

    def to_params(self, state: SessionState | None) -> SessionParams:
        return SessionParams()

    def from_params(self, params: SessionParams) -> SessionState | None:
        return None

    def guard_fingerprint(self, params: SessionParams) -> str:
        return "guard"


class FullDriver(MinimalDriver):
    """Every optional capability; probes mix async and sync implementations."""

    async def check_environment(self, config: object | None) -> EnvironmentReport:
        return EnvironmentReport()

    async def list_models(self, config: object | None) -> list[ModelInfo]:
        return []

    async def detect_model(
        self, config: object | None, profile: ProfileSelection | None
    ) -> DetectedModel | None:
        return None

    async def get_profile(
        self, config: object | None, agent: AgentIdentity, profile: ProfileSelection | None
    ) -> AgentProfile:
        return AgentProfile()

    async def get_quota(
        self, config: object | None, profile: ProfileSelection | None
    ) -> QuotaReport:
        return QuotaReport()

    async def config_schema(self, config: object | None) -> ConfigSchema | None:
        return None

    async def list_skills(
        self,
        config: object | None,
        payload: ResolvedSkills,
        selected: list[str] | None,
        resolved: list[Skill] | None,
        profile: ProfileSelection | None,
    ) -> SkillSnapshot:
        return SkillSnapshot()

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
        return SkillSnapshot()

    async def close_processes(self) -> None:
        return None

    def stream_capability(self) -> StreamCapability:
        return StreamCapability()

    def session_codec(self) -> SessionCodec | None:
        return Codec()

    def session_config_fingerprint(self) -> str:
        return "sha256:" + "0" * 64


# Static checks: mypy verifies these assignments structurally.
_driver: Driver = MinimalDriver()
_sink: DecisionCapableSink = DecidingSink()
_codec: SessionCodec = Codec()
_skills: SkillSupport = FullDriver()
_provider: SessionCodecProvider = FullDriver()


def test_public_names_are_exactly_the_spec_protocols() -> None:
    assert set(protocols.__all__) == {p.__name__ for p in ALL_PROTOCOLS} | {"implements"}


@pytest.mark.parametrize("protocol", ALL_PROTOCOLS, ids=lambda p: p.__name__)
def test_every_protocol_is_runtime_checkable(protocol: type) -> None:
    assert isinstance(object(), protocol) is False
    assert implements(object(), protocol) is False


def test_minimal_class_satisfies_driver() -> None:
    driver = MinimalDriver()
    assert isinstance(driver, Driver)
    assert implements(driver, Driver)
    for optional in ALL_PROTOCOLS:
        if optional is not Driver:
            assert not implements(driver, optional), optional.__name__


def test_minimal_driver_runs_against_a_sink() -> None:
    sink = RecordingSink()

    async def main() -> Response:
        return await MinimalDriver().run(Request(run_id="r1"), sink)

    assert anyio.run(main) == Response()
    assert [event.text for event in sink.events] == ["r1"]


@pytest.mark.parametrize(
    "protocol",
    [p for p in ALL_PROTOCOLS if p not in (EventSink, DecisionCapableSink, SessionCodec)],
    ids=lambda p: p.__name__,
)
def test_full_driver_implements_every_driver_capability(protocol: type) -> None:
    assert isinstance(FullDriver(), protocol)
    assert implements(FullDriver(), protocol)


def test_sinks_and_codecs() -> None:
    assert implements(RecordingSink(), EventSink)
    assert not implements(RecordingSink(), DecisionCapableSink)
    assert implements(DecidingSink(), DecisionCapableSink)
    assert implements(DecidingSink(), EventSink)
    assert implements(Codec(), SessionCodec)


def test_decision_sink_needs_the_event_sink_members_too() -> None:
    class OnlyDecisions:
        async def request_decision(self, request: DecisionRequest) -> DecisionResponse:
            return DecisionResponse()

    assert not implements(OnlyDecisions(), DecisionCapableSink)
    assert not isinstance(OnlyDecisions(), DecisionCapableSink)


def test_implements_rejects_a_non_callable_attribute() -> None:
    class StrayField(MinimalDriver):
        session_codec = "not a method"

    stray = StrayField()
    # runtime_checkable only looks at names, which is why ``implements`` exists.
    assert isinstance(stray, SessionCodecProvider)
    assert not implements(stray, SessionCodecProvider)


def test_implements_rejects_a_none_attribute() -> None:
    class Disabled(MinimalDriver):
        session_config_fingerprint = None

    assert not implements(Disabled(), SessionConfigFingerprinter)


def test_implements_rejects_a_failing_property() -> None:
    class Broken(MinimalDriver):
        @property
        def stream_capability(self) -> StreamCapability:
            raise RuntimeError("boom")

    assert not implements(Broken(), StreamSupport)


def test_implements_needs_every_member() -> None:
    class HalfSkills(MinimalDriver):
        async def list_skills(self) -> SkillSnapshot:
            return SkillSnapshot()

    assert not implements(HalfSkills(), SkillSupport)


def test_sync_implementation_of_an_async_probe_counts() -> None:
    class SyncQuota(MinimalDriver):
        def get_quota(self, config: object | None, profile: ProfileSelection | None) -> QuotaReport:
            return QuotaReport(provider="acme")

    assert implements(SyncQuota(), QuotaProbe)


def test_callable_instance_attribute_counts() -> None:
    driver = MinimalDriver()
    driver.close_processes = lambda: None  # type: ignore[attr-defined]
    assert implements(driver, ProcessLifecycleDriver)


@pytest.mark.parametrize("not_a_protocol", [int, MinimalDriver, object])
def test_implements_requires_a_protocol_class(not_a_protocol: type) -> None:
    with pytest.raises(TypeError, match="not a Protocol"):
        implements(MinimalDriver(), not_a_protocol)


@pytest.mark.parametrize(
    ("protocol", "method", "is_async", "parameters"),
    [
        (Driver, "descriptor", False, []),
        (Driver, "validate_config", False, ["config"]),
        (Driver, "run", True, ["request", "sink"]),
        (EventSink, "emit", False, ["event"]),
        (EventSink, "emit_stream", False, ["payload"]),
        (DecisionCapableSink, "request_decision", True, ["request"]),
        (SessionCodec, "name", False, []),
        (SessionCodec, "to_params", False, ["state"]),
        (SessionCodec, "from_params", False, ["params"]),
        (SessionCodec, "guard_fingerprint", False, ["params"]),
        (EnvironmentProbe, "check_environment", True, ["config"]),
        (ModelLister, "list_models", True, ["config"]),
        (ModelDetector, "detect_model", True, ["config", "profile"]),
        (ProfileReporter, "get_profile", True, ["config", "agent", "profile"]),
        (QuotaProbe, "get_quota", True, ["config", "profile"]),
        (ConfigSchemaProvider, "config_schema", True, ["config"]),
        (
            SkillSupport,
            "list_skills",
            True,
            ["config", "payload", "selected", "resolved", "profile"],
        ),
        (SkillSupport, "inject_skills", True, ["config", "payload", "profile"]),
        (
            SkillSupport,
            "sync_skills",
            True,
            ["config", "payload", "selected", "resolved", "profile"],
        ),
        (ProcessLifecycleDriver, "close_processes", True, []),
        (StreamSupport, "stream_capability", False, []),
        (SessionCodecProvider, "session_codec", False, []),
        (SessionConfigFingerprinter, "session_config_fingerprint", False, []),
    ],
)
def test_declared_signatures_follow_the_spec(
    protocol: type, method: str, is_async: bool, parameters: list[str]
) -> None:
    function = getattr(protocol, method)
    assert inspect.iscoroutinefunction(function) is is_async
    assert list(inspect.signature(function).parameters)[1:] == parameters
