"""The DRV, CFG and CAP probes (and SO-01/SO-03 of capability_declarations).

The reference driver with every hermetic option passes them on both backends; each
mutant below breaks one rule and must fail exactly the clause that states it, with a
message that starts with the clause ID.
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import pytest

from adaptertest._suite import Suite, check_driver
from adaptertest.cap import (
    structured_probe_plan,
    verify_process_capability,
    verify_session_capability,
)
from adaptertest.drv import shared_mutables
from adaptertest.options import Options
from adaptertest.report import ClauseStatus, ConformanceReport
from driver import (
    AgentIdentity,
    AgentProfile,
    ConfigField,
    ConfigSchema,
    Descriptor,
    DetectedModel,
    EnvironmentCheck,
    EnvironmentReport,
    InvalidDriverConfigError,
    ModelInfo,
    ProcessCapability,
    ProfileSelection,
    QuotaReport,
    QuotaWindow,
    ResolvedSkills,
    Skill,
    SkillCapability,
    SkillSnapshot,
    SkillSyncMode,
    StreamCapability,
    StructuredOutputCapability,
)
from driver import SessionCapability as Sessions
from referencedriver import ReferenceConfig, ReferenceDriver, ReferenceSessionCodec

DRV = ("DRV-01", "DRV-02", "DRV-03")
CFG = ("CFG-01", "CFG-02", "CFG-03")
CAP = tuple(f"CAP-{n:02d}" for n in range(1, 12))
MINE = (*DRV, *CFG, *CAP, "SO-01")

CONFIG = ReferenceConfig()
FULL = Options(
    config=CONFIG,
    expect_reject_foreign_config=True,
    sync_skills_probe=True,
    expected_detected_model="reference-1",
    required_config_fields=("model", "cwd"),
    probe_timeout=5,
)
HANG = 0.2  # probe_timeout for the rows whose driver hangs

# Released at the end of the module so blocked driver threads can finish.
_RELEASE = threading.Event()


@pytest.fixture(autouse=True, scope="module")
def _release_blocked_threads() -> Iterator[None]:
    yield
    _RELEASE.set()


def _block() -> None:
    _RELEASE.wait(30)


def _options(**changes: Any) -> Options:
    return dataclasses.replace(FULL, **changes)


def _failed(report: ConformanceReport) -> set[str]:
    failed = {r.clause for r in report if r.status is ClauseStatus.FAILED}
    for r in report:
        if r.status is ClauseStatus.FAILED:
            assert r.messages, r.clause
            for message in r.messages:
                assert message.startswith(f"{r.clause}: "), message
    return failed


def _messages(report: ConformanceReport, clause: str) -> str:
    return "\n".join(report.result(clause).messages)


# ------------------------------------------------------------------------------------
# Mutants
# ------------------------------------------------------------------------------------


class Patched(ReferenceDriver):
    """The reference driver with some descriptor fields replaced."""

    def __init__(self, **update: Any) -> None:
        super().__init__()
        self._update = update

    def descriptor(self) -> Descriptor:
        return super().descriptor().model_copy(update=self._update)


def patched(**update: Any) -> Callable[[], object]:
    return lambda: Patched(**update)


class Counting(ReferenceDriver):
    """Base for mutants whose answers change from call to call."""

    def __init__(self) -> None:
        super().__init__()
        self._calls = itertools.count()


class DriftingDescriptor(Counting):
    def descriptor(self) -> Descriptor:
        n = next(self._calls)
        return super().descriptor().model_copy(update={"display_name": f"Reference {n}"})


_SHARED_SCHEMA = ConfigSchema(
    fields=(ConfigField(name="model", meta={"ui": "wide"}), ConfigField(name="cwd"))
)


class SharedSchemaDict(ReferenceDriver):
    """Frozen schema cached at module level: its ``meta`` dicts are shared."""

    def descriptor(self) -> Descriptor:
        return super().descriptor().model_copy(update={"config_schema": _SHARED_SCHEMA})


_SHARED_MODELS = [ModelInfo(id="reference-1", label="Reference Model")]


class SharedModelList(ReferenceDriver):
    """A list smuggled in with model_construct, the same list every call."""

    def descriptor(self) -> Descriptor:
        fields = dict(super().descriptor())
        fields["models"] = _SHARED_MODELS
        return Descriptor.model_construct(**fields)


_SHARED_DEFAULT = AgentIdentity(name="shared")


class SharedMutableModel(ReferenceDriver):
    """A non-frozen model shared inside fresh frozen containers."""

    def descriptor(self) -> Descriptor:
        schema = ConfigSchema(fields=(ConfigField(name="model", default=_SHARED_DEFAULT),))
        return super().descriptor().model_copy(update={"config_schema": schema})


class SecondDescriptorRaises(Counting):
    """Only the second call fails (later ones come from list_models and config_schema)."""

    def descriptor(self) -> Descriptor:
        if next(self._calls) == 1:
            raise RuntimeError("descriptor gone")
        return super().descriptor()


class SecondDescriptorDict(Counting):
    def descriptor(self) -> Any:
        if next(self._calls) == 1:
            return {"type": "reference"}
        return super().descriptor()


def factory_sequence(*makers: Callable[[], object]) -> Callable[[], Callable[[], object]]:
    """A fresh factory per test: call i uses makers[i] (the last one repeats)."""

    def build() -> Callable[[], object]:
        calls = itertools.count()

        def factory() -> object:
            return makers[min(next(calls), len(makers) - 1)]()

        return factory

    return build


def _none() -> object:
    return None


def _raise() -> object:
    raise RuntimeError("cannot build the driver")


class DifferentInstance(Patched):
    def __init__(self) -> None:
        super().__init__(display_name="Another Reference")


# -- CFG ---------------------------------------------------------------------------------


class NoneKeyError(ReferenceDriver):
    def validate_config(self, config: object | None) -> None:
        if config is None:
            raise KeyError("config")
        super().validate_config(config)


class NoneRejected(ReferenceDriver):
    def validate_config(self, config: object | None) -> None:
        if config is None:
            raise InvalidDriverConfigError("reference", ValueError("no config captured"))
        super().validate_config(config)


class NoneHangs(ReferenceDriver):
    def validate_config(self, config: object | None) -> None:
        if config is None:
            _block()
        super().validate_config(config)


class NoValidateConfig(ReferenceDriver):
    validate_config = None  # type: ignore[assignment]


class RejectsEverything(ReferenceDriver):
    def validate_config(self, config: object | None) -> None:
        if config is not None:
            raise InvalidDriverConfigError("reference", ValueError("nothing is good enough"))


class AcceptsEverything(ReferenceDriver):
    def validate_config(self, config: object | None) -> None:
        return None


class ForeignTypeError(ReferenceDriver):
    def validate_config(self, config: object | None) -> None:
        if config is not None and not isinstance(config, ReferenceConfig):
            raise TypeError("foreign")


class AsyncValidateConfig(ReferenceDriver):
    async def validate_config(self, config: object | None) -> None:  # type: ignore[override]
        super().validate_config(config)


# -- CAP-01 (reference 5.5 rows and the codec/fingerprint details) -------------------


class NoCodecProvider(ReferenceDriver):
    session_codec = None  # type: ignore[assignment]


class NoFingerprinter(ReferenceDriver):
    session_config_fingerprint = None  # type: ignore[assignment]


class NilCodec(ReferenceDriver):
    def session_codec(self) -> Any:
        return None


class FingerprintDrifts(Counting):
    def session_config_fingerprint(self) -> str:
        return f"fp-{next(self._calls)}"


class FingerprintRaises(ReferenceDriver):
    def session_config_fingerprint(self) -> str:
        raise ValueError("cannot fingerprint")


class FingerprintBlank(ReferenceDriver):
    def session_config_fingerprint(self) -> str:
        return "  "


class _BlankNameCodec(ReferenceSessionCodec):
    def name(self) -> str:
        return ""


class _DriftingNameCodec(ReferenceSessionCodec):
    def __init__(self) -> None:
        self._calls = itertools.count()

    def name(self) -> str:
        return f"reference-{next(self._calls)}"


class CodecNameBlank(ReferenceDriver):
    def session_codec(self) -> ReferenceSessionCodec:
        return _BlankNameCodec()


class CodecNameDrifts(ReferenceDriver):
    def session_codec(self) -> ReferenceSessionCodec:
        return _DriftingNameCodec()


class CodecRaises(ReferenceDriver):
    def session_codec(self) -> ReferenceSessionCodec:
        raise RuntimeError("no codec today")


class CodecHangs(ReferenceDriver):
    def session_codec(self) -> ReferenceSessionCodec:
        _block()
        return ReferenceSessionCodec()


class CodecWithoutResume(Patched):
    def __init__(self) -> None:
        super().__init__(sessions=Sessions(supports_resume=False))


class ProviderWithoutResume(CodecWithoutResume):
    """Implements the provider but honestly returns no codec: allowed."""

    def session_codec(self) -> Any:
        return None


_instance_numbers = itertools.count()


def per_instance_fingerprint() -> object:
    # Same descriptor, different construction config: the fingerprints differ.
    return ReferenceDriver(ReferenceConfig(cwd=f"/w/{next(_instance_numbers)}"))


# -- CAP-11 -------------------------------------------------------------------------


class PersistentWithClose(Patched):
    def __init__(self) -> None:
        super().__init__(process=ProcessCapability(persistent=True))

    async def close_processes(self) -> None:
        return None


# -- CAP-03..10 ----------------------------------------------------------------------


class BogusEnvironmentStatus(ReferenceDriver):
    async def check_environment(self, config: object | None) -> EnvironmentReport:
        bogus: Any = "bogus"
        return EnvironmentReport.model_construct(
            driver_type="reference", status=bogus, healthy=False, checks=[]
        )


class EnvironmentDict(ReferenceDriver):
    async def check_environment(self, config: object | None) -> Any:
        return {"driver_type": "reference", "status": "pass"}


class EnvironmentHangs(ReferenceDriver):
    async def check_environment(self, config: object | None) -> EnvironmentReport:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")


class EnvironmentRaises(ReferenceDriver):
    async def check_environment(self, config: object | None) -> EnvironmentReport:
        raise RuntimeError("probe exploded")


class EnvironmentUnhealthyPass(ReferenceDriver):
    async def check_environment(self, config: object | None) -> EnvironmentReport:
        report = await super().check_environment(config)
        return report.model_copy(update={"healthy": False})


class EnvironmentWrongTypeAndCode(ReferenceDriver):
    async def check_environment(self, config: object | None) -> EnvironmentReport:
        return EnvironmentReport(
            driver_type="other", status="warn", checks=[EnvironmentCheck(level="warn")]
        )


class SyncEnvironment(ReferenceDriver):
    """A synchronous implementation of an async-declared probe is fine."""

    def check_environment(self, config: object | None) -> EnvironmentReport:  # type: ignore[override]
        return EnvironmentReport(driver_type="reference", status="fail")


class ModelWithoutId(ReferenceDriver):
    async def list_models(self, config: object | None) -> list[ModelInfo]:
        return [ModelInfo(id="ok"), ModelInfo(label="nameless")]


class ModelsDict(ReferenceDriver):
    async def list_models(self, config: object | None) -> Any:
        return {"id": "reference-1"}


class DetectedBlank(ReferenceDriver):
    async def detect_model(
        self, config: object | None, profile: ProfileSelection | None
    ) -> DetectedModel | None:
        return DetectedModel(model="", source="config")


class DetectedNone(ReferenceDriver):
    async def detect_model(
        self, config: object | None, profile: ProfileSelection | None
    ) -> DetectedModel | None:
        return None


class ProfileWithoutDir(ReferenceDriver):
    async def get_profile(
        self, config: object | None, agent: AgentIdentity, profile: ProfileSelection | None
    ) -> AgentProfile:
        return AgentProfile(driver_type="reference", supported=True, source="default")


class QuotaWindowWithoutLabel(ReferenceDriver):
    async def get_quota(
        self, config: object | None, profile: ProfileSelection | None
    ) -> QuotaReport:
        return QuotaReport(driver_type="reference", windows=[QuotaWindow(value_label="x")])


class QuotaRaises(ReferenceDriver):
    async def get_quota(
        self, config: object | None, profile: ProfileSelection | None
    ) -> QuotaReport:
        raise ConnectionError("offline")


class DuplicateConfigFields(ReferenceDriver):
    async def config_schema(self, config: object | None) -> ConfigSchema | None:
        return ConfigSchema(
            fields=(ConfigField(name="model"), ConfigField(name="cwd"), ConfigField(name="model"))
        )


class ConfigSchemaNone(ReferenceDriver):
    async def config_schema(self, config: object | None) -> ConfigSchema | None:
        return None


class ConfigFieldBlank(ReferenceDriver):
    async def config_schema(self, config: object | None) -> ConfigSchema | None:
        return ConfigSchema(
            fields=(ConfigField(name="model"), ConfigField(name="cwd"), ConfigField(name=" "))
        )


class SkillsEchoSelection(ReferenceDriver):
    async def list_skills(
        self,
        config: object | None,
        payload: ResolvedSkills,
        selected: list[str] | None,
        resolved: list[Skill] | None,
        profile: ProfileSelection | None,
    ) -> SkillSnapshot:
        snap = await super().list_skills(config, payload, selected, resolved, profile)
        return snap.model_copy(update={"selected": ["ghost"], "supported": False})


class SyncSkillsWrongType(ReferenceDriver):
    async def sync_skills(
        self,
        config: object | None,
        payload: ResolvedSkills,
        selected: list[str] | None,
        resolved: list[Skill] | None,
        profile: ProfileSelection | None,
    ) -> SkillSnapshot:
        snap = await super().sync_skills(config, payload, selected, resolved, profile)
        return snap.model_copy(update={"driver_type": "other", "mode": SkillSyncMode.UNSUPPORTED})


class NoSkillSupport(ReferenceDriver):
    list_skills = None  # type: ignore[assignment]


class StreamDrifts(Counting):
    def stream_capability(self) -> StreamCapability:
        return StreamCapability(native=True, reasoning=next(self._calls) % 2 == 0)


class Minimal:
    """Only the mandatory interface: every optional probe must skip."""

    def descriptor(self) -> Descriptor:
        return Descriptor(type="minimal", display_name="Minimal")

    def validate_config(self, config: object | None) -> None:
        if config is not None and not isinstance(config, ReferenceConfig):
            raise InvalidDriverConfigError("minimal")

    async def run(self, request: Any, sink: Any) -> Any:
        raise RuntimeError("not used by hermetic probes")


def _maker(factory: Callable[[], object]) -> Callable[[], Callable[[], object]]:
    return lambda: factory


_SO = StructuredOutputCapability
ROWS: list[Any] = [
    # DRV
    ("display_name_empty", _maker(patched(display_name="")), {}, {"DRV-01"}),
    (
        "type_blank",
        _maker(patched(type="  ")),
        {},
        {"DRV-01", "CAP-03", "CAP-06", "CAP-07", "CAP-09"},
    ),
    ("descriptor_drifts", _maker(DriftingDescriptor), {}, {"DRV-02"}),
    (
        "second_instance_differs",
        factory_sequence(ReferenceDriver, DifferentInstance),
        {},
        {"DRV-02"},
    ),
    ("second_descriptor_raises", _maker(SecondDescriptorRaises), {}, {"DRV-02"}),
    ("second_descriptor_dict", _maker(SecondDescriptorDict), {}, {"DRV-02"}),
    ("shared_schema_dict", _maker(SharedSchemaDict), {}, {"DRV-03"}),
    ("shared_model_list", _maker(SharedModelList), {}, {"DRV-03"}),
    (
        "shared_mutable_model",
        _maker(SharedMutableModel),
        {"required_config_fields": ()},
        {"DRV-03"},
    ),
    (
        "factory_none_on_second_call",
        factory_sequence(ReferenceDriver, _none),
        {},
        {"DRV-02", "CAP-01"},
    ),
    (
        "factory_raises_on_second_call",
        factory_sequence(ReferenceDriver, _raise),
        {},
        {"DRV-02", "CAP-01"},
    ),
    ("factory_returns_none", _maker(_none), {}, {"DRV-01"}),
    ("factory_raises", _maker(_raise), {}, {"DRV-01"}),
    # CFG
    ("validate_none_key_error", _maker(NoneKeyError), {}, {"CFG-01"}),
    ("validate_none_hangs", _maker(NoneHangs), {"probe_timeout": HANG}, {"CFG-01"}),
    ("no_validate_config", _maker(NoValidateConfig), {"only": CFG}, {"CFG-01"}),
    ("async_validate_config", _maker(AsyncValidateConfig), {"only": CFG}, {"CFG-01"}),
    ("rejects_supplied_config", _maker(RejectsEverything), {"only": CFG}, {"CFG-02"}),
    ("accepts_foreign_config", _maker(AcceptsEverything), {}, {"CFG-03"}),
    ("foreign_type_error", _maker(ForeignTypeError), {}, {"CFG-03"}),
    # CAP-01
    ("resume_without_provider", _maker(NoCodecProvider), {}, {"CAP-01"}),
    ("resume_without_fingerprinter", _maker(NoFingerprinter), {}, {"CAP-01"}),
    ("resume_nil_codec", _maker(NilCodec), {}, {"CAP-01"}),
    ("fingerprint_drifts", _maker(FingerprintDrifts), {}, {"CAP-01"}),
    ("fingerprint_raises", _maker(FingerprintRaises), {}, {"CAP-01"}),
    ("fingerprint_blank", _maker(FingerprintBlank), {}, {"CAP-01"}),
    ("codec_name_blank", _maker(CodecNameBlank), {}, {"CAP-01"}),
    ("codec_name_drifts", _maker(CodecNameDrifts), {}, {"CAP-01"}),
    ("codec_raises", _maker(CodecRaises), {}, {"CAP-01"}),
    ("codec_hangs", _maker(CodecHangs), {"probe_timeout": HANG}, {"CAP-01"}),
    ("codec_without_resume", _maker(CodecWithoutResume), {}, {"CAP-01"}),
    ("fingerprint_differs_across_instances", _maker(per_instance_fingerprint), {}, {"CAP-01"}),
    # CAP-02, CAP-11, SO-01
    (
        "skills_supported_without_mode",
        _maker(patched(skills=SkillCapability(supported=True))),
        {},
        {"CAP-02"},
    ),
    (
        "skills_mode_without_support",
        _maker(patched(skills=SkillCapability(mode=SkillSyncMode.EPHEMERAL))),
        {},
        {"CAP-02"},
    ),
    ("skills_without_skill_support", _maker(NoSkillSupport), {}, {"CAP-02"}),
    (
        "persistent_without_close",
        _maker(patched(process=ProcessCapability(persistent=True))),
        {},
        {"CAP-11"},
    ),
    (
        "streaming_without_mechanism",
        _maker(patched(structured_output=_SO(works_with_streaming=True))),
        {},
        {"SO-01"},
    ),
    (
        "native_hitl_without_run",
        _maker(patched(structured_output=_SO(json_schema_native=True, works_with_hitl=True))),
        {},
        {"SO-01"},
    ),
    (
        "prompt_validate_without_run",
        _maker(patched(structured_output=_SO(json_schema_prompt_validate=True))),
        {},
        {"SO-01"},
    ),
    # CAP-03..10
    ("environment_status_bogus", _maker(BogusEnvironmentStatus), {}, {"CAP-03"}),
    ("environment_dict", _maker(EnvironmentDict), {}, {"CAP-03"}),
    ("environment_hangs", _maker(EnvironmentHangs), {"probe_timeout": HANG}, {"CAP-03"}),
    ("environment_raises", _maker(EnvironmentRaises), {}, {"CAP-03"}),
    ("environment_pass_unhealthy", _maker(EnvironmentUnhealthyPass), {}, {"CAP-03"}),
    ("environment_type_and_code", _maker(EnvironmentWrongTypeAndCode), {}, {"CAP-03"}),
    ("model_without_id", _maker(ModelWithoutId), {}, {"CAP-04"}),
    ("models_dict", _maker(ModelsDict), {}, {"CAP-04"}),
    ("detected_model_blank", _maker(DetectedBlank), {}, {"CAP-05"}),
    ("detected_model_none_but_expected", _maker(DetectedNone), {}, {"CAP-05"}),
    (
        "detected_model_unexpected",
        _maker(ReferenceDriver),
        {"expected_detected_model": "other-model"},
        {"CAP-05"},
    ),
    ("profile_without_dir", _maker(ProfileWithoutDir), {}, {"CAP-06"}),
    ("quota_window_without_label", _maker(QuotaWindowWithoutLabel), {}, {"CAP-07"}),
    ("quota_raises", _maker(QuotaRaises), {}, {"CAP-07"}),
    ("config_fields_duplicate", _maker(DuplicateConfigFields), {}, {"CAP-08"}),
    ("config_schema_none", _maker(ConfigSchemaNone), {}, {"CAP-08"}),
    ("config_field_blank", _maker(ConfigFieldBlank), {}, {"CAP-08"}),
    (
        "required_config_field_missing",
        _maker(ReferenceDriver),
        {"required_config_fields": ("model", "api_key")},
        {"CAP-08"},
    ),
    ("list_skills_echo", _maker(SkillsEchoSelection), {}, {"CAP-09"}),
    ("sync_skills_bad", _maker(SyncSkillsWrongType), {}, {"CAP-09"}),
    ("stream_capability_drifts", _maker(StreamDrifts), {}, {"CAP-10"}),
    # rows that must pass
    ("reference", _maker(ReferenceDriver), {}, set()),
    ("validate_none_rejected_is_allowed", _maker(NoneRejected), {}, set()),
    ("provider_without_codec_or_resume", _maker(ProviderWithoutResume), {}, set()),
    ("persistent_with_close", _maker(PersistentWithClose), {}, set()),
    ("sync_probe_implementation", _maker(SyncEnvironment), {}, set()),
    ("detected_model_none", _maker(DetectedNone), {"expected_detected_model": None}, set()),
    ("sync_skills_not_probed", _maker(SyncSkillsWrongType), {"sync_skills_probe": False}, set()),
    ("minimal_driver", _maker(Minimal), {}, set()),
]


@pytest.mark.parametrize(
    ("make_factory", "changes", "expected"),
    [pytest.param(m, c, e, id=name) for name, m, c, e in ROWS],
)
def test_mutant_fails_exactly_its_clause(
    make_factory: Callable[[], Callable[[], object]], changes: dict[str, Any], expected: set[str]
) -> None:
    changes = dict(changes)
    # Rows whose breakage also breaks the reference's probes (which validate their
    # config first) run only the clauses of that breakage.
    only = changes.pop("only", MINE)
    report = check_driver(make_factory(), _options(**changes), only=only)
    assert _failed(report) == expected, [r.describe() for r in report.failures]


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_reference_passes_every_hermetic_clause(backend: str) -> None:
    options = _options(backend=backend, probe_timeout=30)
    report = check_driver(ReferenceDriver, options, only=MINE)
    assert {r.status for r in report} == {ClauseStatus.PASSED}, report.summary()
    record, _ = Suite(ReferenceDriver, options).run_probe("capability_declarations")
    assert "SO-03" in record.judged
    assert not record.violations


# ------------------------------------------------------------------------------------
# Messages, skips and notes
# ------------------------------------------------------------------------------------


def test_hang_messages_name_the_call() -> None:
    report = check_driver(EnvironmentHangs, _options(probe_timeout=HANG), only=["CAP-03"])
    assert _messages(report, "CAP-03").startswith(
        "CAP-03: check_environment did not return within 0.2 s"
    )
    report = check_driver(CodecHangs, _options(probe_timeout=HANG), only=["CAP-01"])
    assert "CAP-01: session_codec() did not return within 0.2 s" in _messages(report, "CAP-01")


def test_wrong_types_and_raises_are_described() -> None:
    report = check_driver(EnvironmentDict, FULL, only=["CAP-03"])
    assert _messages(report, "CAP-03") == (
        "CAP-03: check_environment returned dict, expected driver.EnvironmentReport"
    )
    report = check_driver(NoneKeyError, FULL, only=["CFG-01"])
    assert "validate_config(None) raised builtins.KeyError" in _messages(report, "CFG-01")
    report = check_driver(SecondDescriptorDict, FULL, only=["DRV-02"])
    assert "descriptor() (second call) returned dict" in _messages(report, "DRV-02")


def test_shared_objects_are_named_by_path() -> None:
    report = check_driver(SharedSchemaDict, FULL, only=["DRV-03"])
    text = _messages(report, "DRV-03")
    assert "descriptor().config_schema.fields[0].meta (dict)" in text
    report = check_driver(SharedMutableModel, FULL, only=["DRV-03"])
    assert "fields[0].default (AgentIdentity)" in _messages(report, "DRV-03")


def test_minimal_driver_skips_every_optional_probe_with_a_reason() -> None:
    report = check_driver(Minimal, FULL, only=MINE)
    reasons = {
        "CAP-03": "EnvironmentProbe (check_environment)",
        "CAP-04": "ModelLister (list_models)",
        "CAP-05": "ModelDetector (detect_model)",
        "CAP-06": "ProfileReporter (get_profile)",
        "CAP-07": "QuotaProbe (get_quota)",
        "CAP-08": "ConfigSchemaProvider (config_schema)",
        "CAP-10": "StreamSupport (stream_capability)",
    }
    for clause, what in reasons.items():
        result = report.result(clause)
        assert result.status is ClauseStatus.SKIPPED
        assert result.messages == (f"{clause} skipped: driver does not implement {what}",)
    assert "skills.supported" in report.result("CAP-09").messages[0]
    passed = {r.clause for r in report if r.status is ClauseStatus.PASSED}
    assert passed == {*DRV, "CFG-01", "CFG-02", "CFG-03", "CAP-01", "CAP-02", "CAP-11", "SO-01"}


def test_opt_in_config_clauses_skip_without_their_options() -> None:
    report = check_driver(ReferenceDriver, Options(), only=CFG)
    assert report.result("CFG-01").status is ClauseStatus.PASSED
    assert report.result("CFG-02").messages == (
        "CFG-02 skipped: no config given: pass Options(config=...)",
    )
    assert "expect_reject_foreign_config" in report.result("CFG-03").messages[0]


def test_allowed_outcomes_leave_notes() -> None:
    report = check_driver(NoneRejected, FULL, only=["CFG-01"])
    assert any("InvalidDriverConfigError" in n for n in report.result("CFG-01").notes)
    report = check_driver(ReferenceDriver, _options(sync_skills_probe=False), only=["CAP-09"])
    assert any("sync_skills_probe" in n for n in report.result("CAP-09").notes)


def test_missing_skill_support_skips_cap09_and_fails_cap02() -> None:
    report = check_driver(NoSkillSupport, FULL, only=["CAP-02", "CAP-09"])
    assert report.result("CAP-02").status is ClauseStatus.FAILED
    assert report.result("CAP-09").status is ClauseStatus.SKIPPED
    assert "SkillSupport" in report.result("CAP-09").messages[0]


# ------------------------------------------------------------------------------------
# Public helpers
# ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "driver",
    [
        NoCodecProvider(),
        NoFingerprinter(),
        NilCodec(),
        FingerprintDrifts(),
        CodecWithoutResume(),
        CodecNameBlank(),
        FingerprintRaises(),
        None,
    ],
    ids=lambda d: type(d).__name__,
)
def test_verify_session_capability_flags_each_breach(driver: object) -> None:
    found = verify_session_capability(driver)
    assert found
    assert {v.clause for v in found} == {"CAP-01"}


def test_verify_session_capability_accepts_honest_drivers() -> None:
    assert verify_session_capability(ReferenceDriver()) == []
    assert verify_session_capability(ProviderWithoutResume()) == []
    assert verify_session_capability(Minimal()) == []


def test_verify_process_capability() -> None:
    persistent = Patched(process=ProcessCapability(persistent=True))
    assert [v.clause for v in verify_process_capability(persistent)] == ["CAP-11"]
    assert verify_process_capability(PersistentWithClose()) == []
    assert verify_process_capability(ReferenceDriver()) == []
    assert [v.clause for v in verify_process_capability(None)] == ["CAP-11"]


def test_structured_probe_plan_follows_the_declaration() -> None:
    assert structured_probe_plan(ReferenceDriver().descriptor()) is None
    reason = structured_probe_plan(Descriptor())
    assert reason is not None
    assert "json_schema_native=False" in reason
    assert "works_with_run=False" in reason
    prompt_only = Descriptor(
        structured_output=_SO(json_schema_prompt_validate=True, works_with_run=True)
    )
    assert "works_with_run" not in (structured_probe_plan(prompt_only) or "").split(";")[0]


def test_shared_mutables_ignores_frozen_and_immutable_values() -> None:
    first = Descriptor(type="x", models=(ModelInfo(id="m"),))
    assert shared_mutables(first, first) == []
    data = {"k": [1, 2]}
    assert shared_mutables((data,), (data,)) == ["descriptor()[0] (dict)"]
    assert shared_mutables({"k": data["k"]}, {"j": data["k"]}) == ["descriptor()['j'] (list)"]
