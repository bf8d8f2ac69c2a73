"""Structural interfaces of the driver SPI.

Go discovers optional driver capabilities with type assertions. Here every
interface is a ``runtime_checkable`` Protocol, so ``isinstance(d, QuotaProbe)``
works, but that only checks that the member *names* exist: an attribute that
happens to be called ``session_codec`` would match. :func:`implements` is the
stricter test the conformance suite uses for capability truthfulness
(CAP-01, CAP-02, CAP-11): every member must be a callable attribute.

Probe methods are declared ``async``; the suite awaits a result only when it is
awaitable, so a synchronous implementation still works. Go's
``context.Context`` has no parameter here: callers wrap calls in anyio cancel
scopes instead.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

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
from driver.run import AgentIdentity, Request, Response, SessionState
from driver.session import SessionParams
from driver.skill import ResolvedSkills, Skill, SkillSnapshot

__all__ = [
    "ConfigSchemaProvider",
    "DecisionCapableSink",
    "Driver",
    "EnvironmentProbe",
    "EventSink",
    "ModelDetector",
    "ModelLister",
    "ProcessLifecycleDriver",
    "ProfileReporter",
    "QuotaProbe",
    "SessionCodec",
    "SessionCodecProvider",
    "SessionConfigFingerprinter",
    "SkillSupport",
    "StreamSupport",
    "implements",
]


@runtime_checkable
class EventSink(Protocol):
    """Where a running driver reports progress; implemented by core and by the suite.

    ``emit`` carries operational run events and transcript items (RUN-01..04,
    TRN-01..04); ``emit_stream`` carries normalized stream payloads, judged by
    EVT-01..14 and OBS-01..06 when the driver implements :class:`StreamSupport`.
    """

    def emit(self, event: RunEvent) -> None: ...

    def emit_stream(self, payload: StreamPayload) -> None: ...


@runtime_checkable
class DecisionCapableSink(EventSink, Protocol):
    """A sink that can also resolve human decisions (HITL) during a run.

    Drivers feature-test the sink with ``isinstance`` before asking. The call
    returns once the host decides or the policy deadline passes (the response
    then says rejected / timed out); raising means the decision was aborted.
    """

    async def request_decision(self, request: DecisionRequest) -> DecisionResponse: ...


@runtime_checkable
class Driver(Protocol):
    """The mandatory interface of every driver.

    ``descriptor`` is the static declaration (DRV-01..03); ``validate_config``
    checks a construction config and raises ``InvalidDriverConfigError`` on
    rejection (CFG-01..03); ``run`` performs one invocation, returning a
    ``Response`` (failed runs included) or raising ``RunError`` with a partial
    response (RUN, TRN and RSP families).
    """

    def descriptor(self) -> Descriptor: ...

    def validate_config(self, config: object | None) -> None: ...

    async def run(self, request: Request, sink: EventSink) -> Response: ...


@runtime_checkable
class SessionCodec(Protocol):
    """Converts between a driver's session state and host-facing session params.

    None of these methods may raise (SES-07). The laws: a stable non-blank name
    (SES-01), the canonical empty mapping (SES-02), kept resume id and data
    (SES-03), a lossless round trip (SES-04, RSP-04) and a deterministic guard
    fingerprint that changes with every guard key (SES-05, SES-06).
    """

    def name(self) -> str: ...

    def to_params(self, state: SessionState | None) -> SessionParams: ...

    def from_params(self, params: SessionParams) -> SessionState | None: ...

    def guard_fingerprint(self, params: SessionParams) -> str: ...


@runtime_checkable
class EnvironmentProbe(Protocol):
    """Reports whether the provider CLI and its environment are usable (checked by CAP-03)."""

    async def check_environment(self, config: object | None) -> EnvironmentReport: ...


@runtime_checkable
class ModelLister(Protocol):
    """Lists the models a host may pick for this driver (checked by CAP-04)."""

    async def list_models(self, config: object | None) -> list[ModelInfo]: ...


@runtime_checkable
class ModelDetector(Protocol):
    """Infers the effective model from config and profile; None if unknown (CAP-05)."""

    async def detect_model(
        self, config: object | None, profile: ProfileSelection | None
    ) -> DetectedModel | None: ...


@runtime_checkable
class ProfileReporter(Protocol):
    """Reports the effective local profile directory of a configured driver (CAP-06)."""

    async def get_profile(
        self, config: object | None, agent: AgentIdentity, profile: ProfileSelection | None
    ) -> AgentProfile: ...


@runtime_checkable
class QuotaProbe(Protocol):
    """Reports quota or credit windows of the provider account (checked by CAP-07)."""

    async def get_quota(
        self, config: object | None, profile: ProfileSelection | None
    ) -> QuotaReport: ...


@runtime_checkable
class ConfigSchemaProvider(Protocol):
    """Gives a live config schema, overriding ``Descriptor.config_schema`` (CAP-08)."""

    async def config_schema(self, config: object | None) -> ConfigSchema | None: ...


@runtime_checkable
class SkillSupport(Protocol):
    """Lists, injects and syncs skills; required when ``skills.supported`` (CAP-02).

    The echo laws of ``list_skills`` and, opt-in, ``sync_skills`` are CAP-09.
    """

    async def list_skills(
        self,
        config: object | None,
        payload: ResolvedSkills,
        selected: list[str] | None,
        resolved: list[Skill] | None,
        profile: ProfileSelection | None,
    ) -> SkillSnapshot: ...

    async def inject_skills(
        self, config: object | None, payload: ResolvedSkills, profile: ProfileSelection | None
    ) -> None: ...

    async def sync_skills(
        self,
        config: object | None,
        payload: ResolvedSkills,
        selected: list[str] | None,
        resolved: list[Skill] | None,
        profile: ProfileSelection | None,
    ) -> SkillSnapshot: ...


@runtime_checkable
class ProcessLifecycleDriver(Protocol):
    """Stops the driver's long-lived provider processes; required when
    ``process.persistent`` is declared (CAP-11)."""

    async def close_processes(self) -> None: ...


@runtime_checkable
class StreamSupport(Protocol):
    """Declares stream fidelity; without it no stream clauses run.

    The declaration must be deterministic (CAP-10) and bounds what the stream
    may contain (EVT-12).
    """

    def stream_capability(self) -> StreamCapability: ...


@runtime_checkable
class SessionCodecProvider(Protocol):
    """Hands out the session codec: a real one iff ``sessions.supports_resume`` (CAP-01)."""

    def session_codec(self) -> SessionCodec | None: ...


@runtime_checkable
class SessionConfigFingerprinter(Protocol):
    """Fingerprints the construction config that a resumed session must match.

    Required with resume support; non-blank and stable across calls and
    instances (CAP-01). Raises ``SessionConfigFingerprintError`` rather than
    skip a value it cannot encode.
    """

    def session_config_fingerprint(self) -> str: ...


# Names typing puts on every Protocol class; they are not interface members.
_PROTOCOL_MACHINERY = frozenset(
    {
        "_is_protocol",
        "_is_runtime_protocol",
        "__protocol_attrs__",
        "__non_callable_proto_members__",
        "__callable_proto_members_only__",
    }
)


def _protocol_members(protocol: type) -> list[str]:
    """Names an object must provide to satisfy ``protocol`` (methods and annotated attributes)."""
    members: dict[str, None] = {}
    for base in protocol.__mro__:
        if base is object or base is Protocol or not getattr(base, "_is_protocol", False):
            continue
        names = [*vars(base), *getattr(base, "__annotations__", {})]
        for name in names:
            if name in _PROTOCOL_MACHINERY or name.startswith("_abc_"):
                continue
            if name.startswith("__") and name.endswith("__"):
                continue
            members[name] = None
    return list(members)


def implements(obj: object, protocol: type) -> bool:
    """Report whether ``obj`` really provides every member of ``protocol``.

    Unlike ``isinstance`` on a runtime-checkable Protocol, each member must be
    a callable attribute that is not None, so a stray data attribute named like
    a capability method does not count as implementing it. ``protocol`` must be
    a Protocol class; anything else raises ``TypeError``.
    """
    if not getattr(protocol, "_is_protocol", False) or protocol is Protocol:
        raise TypeError(f"{protocol!r} is not a Protocol class")
    for name in _protocol_members(protocol):
        try:
            attribute = getattr(obj, name)
        except Exception:  # noqa: BLE001 - a failing property provides nothing
            # A missing attribute, or a property that fails, provides nothing.
            return False
        if attribute is None or not callable(attribute):
            return False
    return True
