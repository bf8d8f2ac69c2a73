"""CAP family: capability declarations tell the truth, and the inspection probes work.

Two public helpers judge declarations against what the driver implements:
:func:`verify_session_capability` (CAP-01) and :func:`verify_process_capability`
(CAP-11). They call the driver directly, catching its exceptions; the probes run them
(and every other driver call) under the suite's deadline, so a hanging codec or probe
cannot hang the suite. Capabilities are detected with :func:`driver.protocols.implements`
(every member must be a callable attribute), and an optional probe the driver does not
implement is skipped with a reason, never passed.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from adaptertest._calls import describe_error, describe_hang
from adaptertest._probe import ProbeContext
from adaptertest._violation import Violation
from adaptertest.so import structured_request, verify_structured_output_descriptor
from driver.descriptor import ConfigField, ConfigSchema, Descriptor, StreamCapability
from driver.environment import (
    AgentProfile,
    DetectedModel,
    EnvironmentCheck,
    EnvironmentReport,
    EnvironmentStatus,
    ModelInfo,
    QuotaReport,
    QuotaWindow,
)
from driver.output import OutputFormat, StructuredOutputSource
from driver.policy import RunPolicy
from driver.protocols import (
    ConfigSchemaProvider,
    EnvironmentProbe,
    ModelDetector,
    ModelLister,
    ProcessLifecycleDriver,
    ProfileReporter,
    QuotaProbe,
    SessionCodecProvider,
    SessionConfigFingerprinter,
    SkillSupport,
    StreamSupport,
    implements,
)
from driver.run import AgentIdentity, Request

if TYPE_CHECKING:
    from adaptertest._fresh import FreshResult
from driver.skill import ResolvedSkills, SkillSnapshot, SkillSyncMode

__all__ = [
    "probe_capability_declarations",
    "probe_config_schema",
    "probe_detect_model",
    "probe_environment",
    "probe_models",
    "probe_profile",
    "probe_quota",
    "probe_skills",
    "probe_stream_capability",
    "structured_probe_plan",
    "verify_process_capability",
    "verify_session_capability",
]

T = TypeVar("T")

_SKILL_MODES = frozenset({SkillSyncMode.EPHEMERAL.value, SkillSyncMode.PERSISTENT.value})
_ENV_STATUSES = frozenset(s.value for s in EnvironmentStatus)
_CODEC_MEMBERS = ("name", "to_params", "from_params", "guard_fingerprint")


def _blank(value: object) -> bool:
    return not isinstance(value, str) or not value.strip()


def _text(value: object) -> str:
    """How a value that should be non-blank text looked."""
    if isinstance(value, str):
        return f"blank ({value!r})" if value else "empty"
    return f"a {type(value).__qualname__}, not a string"


def _show(value: object) -> str:
    """``repr`` that prints a str enum member as its plain string value."""
    return repr(str(value)) if isinstance(value, str) else repr(value)


def _kind(value: object) -> str:
    return type(value).__qualname__


# ------------------------------------------------------------------------------------
# Direct calls (used by the pure helpers; the probes bound the helpers as a whole)
# ------------------------------------------------------------------------------------


class _Raised(Exception):
    """A driver call raised; carries the text the violation shows."""


def _invoke(trace: list[str], label: str, fn: Callable[[], T]) -> T:
    """Call ``fn`` after naming the step in ``trace`` (so a hang can say where it stuck).

    A coroutine returned by a method that must be synchronous is closed (so it never
    warns) and returned as-is: it is then reported as a wrong type.
    """
    trace.append(label)
    try:
        value = fn()
    except Exception as exc:
        raise _Raised(describe_error(label, exc)) from exc
    if inspect.iscoroutine(value):
        value.close()
    return value


def _descriptor_of(driver: object, trace: list[str]) -> Descriptor:
    desc = _invoke(trace, "descriptor()", lambda: driver.descriptor())  # type: ignore[attr-defined]
    if not isinstance(desc, Descriptor):
        raise _Raised(f"descriptor() returned {_kind(desc)}, expected driver.Descriptor")
    return desc


# ------------------------------------------------------------------------------------
# CAP-01: resume declaration
# ------------------------------------------------------------------------------------


@dataclass
class _SessionFacts:
    """CAP-01 violations of one instance, plus what the cross-instance check compares."""

    violations: list[Violation] = field(default_factory=list)
    codec_name: str | None = None
    fingerprint: str | None = None

    def add(self, message: str) -> None:
        self.violations.append(Violation("CAP-01", message))


def _stable_text(
    facts: _SessionFacts, trace: list[str], label: str, fn: Callable[[], object]
) -> str | None:
    """Call ``fn`` twice; it must return the same non-blank string, without raising."""
    values: list[object] = []
    for call in ("first", "second"):
        try:
            values.append(_invoke(trace, f"{label} ({call} call)", fn))
        except _Raised as exc:
            facts.add(str(exc))
            return None
    first, second = values
    if not isinstance(first, str) or not first.strip():
        facts.add(f"{label} returned {_text(first)}")
        return None
    if first != second:
        facts.add(f"{label} is not stable: {first!r} then {second!r}")
        return None
    return first


def _session_facts(driver: object, desc: Descriptor | None, trace: list[str]) -> _SessionFacts:
    facts = _SessionFacts()
    if driver is None:
        facts.add("the driver is None")
        return facts
    if desc is None:
        try:
            desc = _descriptor_of(driver, trace)
        except _Raised as exc:
            facts.add(str(exc))
            return facts
    declared = bool(desc.sessions.supports_resume)

    trace.append("looking up session_codec")
    codec: object = None
    if implements(driver, SessionCodecProvider):
        try:
            codec = _invoke(trace, "session_codec()", lambda: driver.session_codec())  # type: ignore[attr-defined]
        except _Raised as exc:
            facts.add(str(exc))
            return facts
    elif declared:
        facts.add(
            "sessions.supports_resume is True but the driver does not implement "
            "SessionCodecProvider (session_codec)"
        )

    if codec is None:
        if declared and implements(driver, SessionCodecProvider):
            facts.add("sessions.supports_resume is True but session_codec() returned None")
    else:
        if not declared:
            facts.add(
                f"session_codec() returned a codec ({_kind(codec)}) but "
                "sessions.supports_resume is False"
            )
        missing = [m for m in _CODEC_MEMBERS if not callable(getattr(codec, m, None))]
        if missing:
            facts.add(f"session_codec() returned {_kind(codec)}, which lacks {', '.join(missing)}")
        if "name" not in missing:
            name = getattr(codec, "name")  # noqa: B009 - a codec's name() method
            facts.codec_name = _stable_text(facts, trace, "codec name()", name)

    if declared:
        trace.append("looking up session_config_fingerprint")
        if not implements(driver, SessionConfigFingerprinter):
            facts.add(
                "sessions.supports_resume is True but the driver does not implement "
                "SessionConfigFingerprinter (session_config_fingerprint)"
            )
        else:
            method = getattr(driver, "session_config_fingerprint")  # noqa: B009
            facts.fingerprint = _stable_text(facts, trace, "session_config_fingerprint()", method)
    return facts


def verify_session_capability(driver: object) -> list[Violation]:
    """CAP-01: ``sessions.supports_resume`` holds exactly when ``session_codec()`` gives a
    codec, and a resumable driver has a stable, non-blank codec name and
    ``session_config_fingerprint()``. Driver exceptions become violations."""
    return _session_facts(driver, None, []).violations


# ------------------------------------------------------------------------------------
# CAP-02, CAP-11: skills and process declarations
# ------------------------------------------------------------------------------------


def _skill_declaration_violations(driver: object, desc: Descriptor) -> list[Violation]:
    skills = desc.skills
    mode = str(skills.mode)
    out: list[Violation] = []
    if skills.supported:
        if not implements(driver, SkillSupport):
            out.append(
                Violation(
                    "CAP-02",
                    "skills.supported is True but the driver does not implement SkillSupport "
                    "(list_skills, inject_skills, sync_skills)",
                )
            )
        if mode not in _SKILL_MODES:
            out.append(
                Violation(
                    "CAP-02",
                    f"skills.supported is True but skills.mode is {mode!r}, not ephemeral or "
                    "persistent",
                )
            )
    elif mode in _SKILL_MODES:
        out.append(Violation("CAP-02", f"skills.supported is False but skills.mode is {mode!r}"))
    return out


def _process_violations(driver: object, desc: Descriptor) -> list[Violation]:
    if desc.process.persistent and not implements(driver, ProcessLifecycleDriver):
        return [
            Violation(
                "CAP-11",
                "process.persistent is True but the driver does not implement "
                "ProcessLifecycleDriver (close_processes)",
            )
        ]
    return []


def verify_process_capability(driver: object) -> list[Violation]:
    """CAP-11: a driver declaring ``process.persistent`` implements ``close_processes()``."""
    if driver is None:
        return [Violation("CAP-11", "the driver is None")]
    try:
        desc = _descriptor_of(driver, [])
    except _Raised as exc:
        return [Violation("CAP-11", str(exc))]
    return _process_violations(driver, desc)


# ------------------------------------------------------------------------------------
# SO-03: what the structured probe may send
# ------------------------------------------------------------------------------------


def structured_probe_plan(descriptor: Descriptor) -> str | None:
    """Why the live structured probe must not run, or None when it may.

    It runs only on a declared native mechanism that works with ``run``; it sends
    ``streaming=False``, so it never needs ``works_with_streaming``.
    """
    cap = descriptor.structured_output
    off = [
        f"{name}=False"
        for name in ("json_schema_native", "works_with_run")
        if not getattr(cap, name)
    ]
    if not off:
        return None
    return (
        f"the descriptor declares structured_output.{' and '.join(off)}; the structured "
        "probe runs only when json_schema_native and works_with_run are declared"
    )


def _request_overreach(desc: Descriptor, request: Request) -> list[str]:
    """What the structured request asks for beyond the descriptor's declarations."""
    cap = desc.structured_output
    out: list[str] = []
    if request.streaming and not cap.works_with_streaming:
        out.append("it sets streaming=True but works_with_streaming is not declared")
    if request.structured_output_source != StructuredOutputSource.NATIVE:
        out.append(f"its structured_output_source is {str(request.structured_output_source)!r}")
    elif not (cap.json_schema_native and cap.works_with_run):
        out.append("it asks for native output that the descriptor does not declare on run")
    schema = request.output_schema
    if schema is None or schema.format != OutputFormat.JSON_SCHEMA:
        out.append("it does not carry a json_schema output_schema")
    if request.policy != RunPolicy():
        out.append("it sets a run policy")
    if request.session is not None:
        out.append("it carries a session")
    if request.skills.entries and not desc.skills.supported:
        out.append("it carries skills that the descriptor does not declare")
    if request.mcp.servers:
        out.append("it carries MCP servers")
    if request.instructions is not None and not desc.instructions.supported:
        out.append("it carries instructions that the descriptor does not declare")
    return out


# ------------------------------------------------------------------------------------
# The capability_declarations probe
# ------------------------------------------------------------------------------------


def _bounded(
    ctx: ProbeContext, clause: str, what: str, fn: Callable[[list[str]], T], prefix: str = ""
) -> T | None:
    """Run a helper that calls the driver under the probe deadline.

    A hang or an unexpected raise is a ``clause`` violation naming the step it was at.
    """
    trace: list[str] = []
    outcome = ctx.attempt(fn, trace, awaitable=False)
    label = trace[-1] if trace else what
    if outcome.timed_out:
        ctx.fail(clause, prefix + describe_hang(label, outcome, ctx.options.probe_timeout))
        return None
    if outcome.error is not None:
        ctx.fail(clause, prefix + describe_error(label, outcome.error))
        return None
    value: T = outcome.value
    return value


def _declarations(
    ctx: ProbeContext, clause: str, check: Callable[[object, Descriptor], list[Violation]]
) -> None:
    def run(trace: list[str]) -> list[Violation]:
        trace.append("looking up the driver's capability methods")
        return check(ctx.driver, ctx.descriptor)

    found = _bounded(ctx, clause, "looking up the driver's capability methods", run)
    if found is not None:
        ctx.report(found, judge=[clause])


def probe_capability_declarations(ctx: ProbeContext) -> None:
    """CAP-02, CAP-11, SO-01, SO-03, then CAP-01 (which may need a second instance)."""
    desc = ctx.descriptor
    _declarations(ctx, "CAP-02", _skill_declaration_violations)
    _declarations(ctx, "CAP-11", _process_violations)
    ctx.report(verify_structured_output_descriptor(desc), judge=["SO-01"])

    if structured_probe_plan(desc) is None:
        request = structured_request(ctx.options.config, ctx.options.workspace)
        for problem in _request_overreach(desc, request):
            ctx.fail(
                "SO-03",
                f"the structured probe's request oversteps: {problem} "
                "(a suite defect: please report it)",
            )
        if request.workspace.cwd and not desc.workspace.supported:
            ctx.note(
                "the structured probe sends the Options(workspace=...) lease although "
                "workspace.supported is False"
            )
    ctx.judge("SO-03")

    own = _bounded(
        ctx,
        "CAP-01",
        "session capability checks",
        lambda trace: _session_facts(ctx.driver, desc, trace),
    )
    if own is None:
        return
    ctx.report(own.violations, judge=["CAP-01"])
    if not desc.sessions.supports_resume:
        return
    other_driver = ctx.new_driver("CAP-01")
    other = _bounded(
        ctx,
        "CAP-01",
        "session capability checks",
        lambda trace: _session_facts(other_driver, None, trace),
        prefix="second factory instance: ",
    )
    if other is None:
        return
    for v in other.violations:
        ctx.fail("CAP-01", f"second factory instance: {v.message}")
    if own.violations or other.violations:
        return
    if own.codec_name != other.codec_name:
        ctx.fail(
            "CAP-01",
            f"codec name() differs across factory instances: "
            f"{own.codec_name!r} then {other.codec_name!r}",
        )
    if own.fingerprint != other.fingerprint:
        ctx.fail(
            "CAP-01",
            f"session_config_fingerprint() differs across factory instances: "
            f"{own.fingerprint!r} then {other.fingerprint!r}",
        )


def check_fresh_fingerprint(ctx: ProbeContext, found: Sequence[FreshResult]) -> None:
    """CAP-01 across processes: fresh interpreters (other hash seeds) built a driver from
    the factory; the session_config_fingerprint() of each equals this driver's (so they
    agree with each other too)."""
    # Violations here are the capability probe's to report: only a clean driver is compared.
    outcome = ctx.attempt(_session_facts, ctx.driver, ctx.descriptor, [], awaitable=False)
    facts: _SessionFacts | None = outcome.value if outcome.ok else None
    if facts is None or facts.violations or facts.fingerprint is None:
        return
    here = facts.fingerprint
    ctx.judge("CAP-01")
    advice = (
        "a fingerprint must not include hash(), set order or a default object repr (a memory "
        "address)"
    )
    for child in found:
        if child.fingerprint is None:
            why = "; ".join(child.failures) or "it returned no str"
            ctx.note(
                f"CAP-01 not checked in a fresh interpreter (PYTHONHASHSEED={child.hash_seed}): "
                f"{why}",
                clauses=["CAP-01"],
            )
        elif child.fingerprint != here:
            ctx.fail(
                "CAP-01",
                f"session_config_fingerprint() differs in a fresh interpreter (PYTHONHASHSEED="
                f"{child.hash_seed}): {here!r} here vs {child.fingerprint!r} there; {advice}",
            )
            return


# ------------------------------------------------------------------------------------
# Optional-interface probes (CAP-03..10)
# ------------------------------------------------------------------------------------


def _capability(
    ctx: ProbeContext, clause: str, protocol: type, method: str, why: str = ""
) -> Callable[..., Any] | None:
    """The driver's ``method`` when it implements ``protocol``; else skip ``clause``."""

    def look_up() -> Callable[..., Any] | None:
        if not implements(ctx.driver, protocol):
            return None
        found: Callable[..., Any] = getattr(ctx.driver, method)
        return found

    fn = ctx.call(clause, f"looking up {method} on the driver", look_up, awaitable=False)
    if fn is None:
        ctx.skip([clause], f"driver does not implement {protocol.__name__} ({method}){why}")
    return fn if callable(fn) else None


def _items(ctx: ProbeContext, clause: str, label: str, value: object) -> Sequence[object]:
    if not isinstance(value, list | tuple):
        ctx.fatal(clause, f"{label} is {_kind(value)}, expected a list")
    return value


def _driver_type(clause: str, label: str, value: object, desc: Descriptor) -> list[Violation]:
    if value != desc.type:
        return [
            Violation(
                clause,
                f"{label} reports driver_type {_show(value)}; the descriptor's type is "
                f"{desc.type!r}",
            )
        ]
    return []


def _environment_violations(report: EnvironmentReport, desc: Descriptor) -> list[Violation]:
    out = _driver_type("CAP-03", "check_environment", report.driver_type, desc)
    status = report.status
    if not isinstance(status, str) or status not in _ENV_STATUSES:
        out.append(
            Violation(
                "CAP-03", f"check_environment status is {_show(status)}, not pass, warn or fail"
            )
        )
    elif status == EnvironmentStatus.PASS and report.healthy is not True:
        out.append(
            Violation(
                "CAP-03", f"check_environment status is pass but healthy is {report.healthy!r}"
            )
        )
    checks = report.checks
    if not isinstance(checks, list | tuple):
        out.append(Violation("CAP-03", f"check_environment checks is {_kind(checks)}"))
        return out
    for index, check in enumerate(checks):
        if not isinstance(check, EnvironmentCheck):
            out.append(
                Violation(
                    "CAP-03",
                    f"check_environment checks[{index}] is "
                    f"{_kind(check)}, expected driver.EnvironmentCheck",
                )
            )
        elif _blank(check.code):
            out.append(
                Violation(
                    "CAP-03", f"check_environment checks[{index}].code is {_text(check.code)}"
                )
            )
    return out


def probe_environment(ctx: ProbeContext) -> None:
    """CAP-03: ``check_environment(config)``."""
    method = _capability(ctx, "CAP-03", EnvironmentProbe, "check_environment")
    if method is None:
        return
    value = ctx.call("CAP-03", "check_environment", method, ctx.options.config)
    report = ctx.expect_type("CAP-03", "check_environment", value, EnvironmentReport)
    ctx.report(_environment_violations(report, ctx.descriptor), judge=["CAP-03"])


def probe_models(ctx: ProbeContext) -> None:
    """CAP-04: ``list_models(config)``; every model has an id."""
    method = _capability(ctx, "CAP-04", ModelLister, "list_models")
    if method is None:
        return
    value = ctx.call("CAP-04", "list_models", method, ctx.options.config)
    models = _items(ctx, "CAP-04", "the result of list_models", value)
    for index, model in enumerate(models):
        if not isinstance(model, ModelInfo):
            ctx.fail(
                "CAP-04", f"list_models item {index} is {_kind(model)}, expected driver.ModelInfo"
            )
        elif _blank(model.id):
            ctx.fail("CAP-04", f"list_models item {index} has an id that is {_text(model.id)}")
    ctx.judge("CAP-04")
    if not models:
        ctx.note("list_models returned no models")


def probe_detect_model(ctx: ProbeContext) -> None:
    """CAP-05: ``detect_model(config, None)``; a result names a model (the expected one)."""
    method = _capability(ctx, "CAP-05", ModelDetector, "detect_model")
    if method is None:
        return
    expected = ctx.options.expected_detected_model
    value = ctx.call("CAP-05", "detect_model", method, ctx.options.config, None)
    ctx.judge("CAP-05")
    if value is None:
        if expected is not None:
            ctx.fail(
                "CAP-05",
                f"detect_model returned None; Options(expected_detected_model=) is {expected!r}",
            )
        else:
            ctx.note("detect_model returned None (no model detected)")
        return
    detected = ctx.expect_type("CAP-05", "detect_model", value, DetectedModel)
    if _blank(detected.model):
        ctx.fail("CAP-05", f"detect_model returned a result whose model is {_text(detected.model)}")
    elif expected is not None and detected.model != expected:
        ctx.fail("CAP-05", f"detect_model found model {detected.model!r}, expected {expected!r}")


def probe_profile(ctx: ProbeContext) -> None:
    """CAP-06: ``get_profile(config, AgentIdentity(), None)``."""
    method = _capability(ctx, "CAP-06", ProfileReporter, "get_profile")
    if method is None:
        return
    value = ctx.call("CAP-06", "get_profile", method, ctx.options.config, AgentIdentity(), None)
    profile = ctx.expect_type("CAP-06", "get_profile", value, AgentProfile)
    ctx.report(
        _driver_type("CAP-06", "get_profile", profile.driver_type, ctx.descriptor), judge=["CAP-06"]
    )
    if profile.supported:
        for name in ("dir", "source"):
            text = getattr(profile, name, None)
            if _blank(text):
                ctx.fail(
                    "CAP-06",
                    f"get_profile reports a supported profile whose {name} is {_text(text)}",
                )
    else:
        ctx.note("get_profile reports the profile as unsupported")


def probe_quota(ctx: ProbeContext) -> None:
    """CAP-07: ``get_quota(config, None)``; unavailability belongs in the report."""
    method = _capability(ctx, "CAP-07", QuotaProbe, "get_quota")
    if method is None:
        return
    value = ctx.call("CAP-07", "get_quota", method, ctx.options.config, None)
    report = ctx.expect_type("CAP-07", "get_quota", value, QuotaReport)
    ctx.report(
        _driver_type("CAP-07", "get_quota", report.driver_type, ctx.descriptor), judge=["CAP-07"]
    )
    windows = _items(ctx, "CAP-07", "get_quota windows", report.windows)
    for index, window in enumerate(windows):
        if not isinstance(window, QuotaWindow):
            ctx.fail(
                "CAP-07",
                f"get_quota windows[{index}] is {_kind(window)}, expected driver.QuotaWindow",
            )
        elif _blank(window.label):
            ctx.fail("CAP-07", f"get_quota windows[{index}].label is {_text(window.label)}")


def probe_config_schema(ctx: ProbeContext) -> None:
    """CAP-08: ``config_schema(config)`` gives a schema with unique, named fields."""
    method = _capability(ctx, "CAP-08", ConfigSchemaProvider, "config_schema")
    if method is None:
        return
    value = ctx.call("CAP-08", "config_schema", method, ctx.options.config)
    if value is None:
        ctx.fatal("CAP-08", "config_schema returned None")
    schema = ctx.expect_type("CAP-08", "config_schema", value, ConfigSchema)
    fields = _items(ctx, "CAP-08", "config_schema fields", schema.fields)
    positions: dict[str, list[int]] = {}
    for index, item in enumerate(fields):
        if not isinstance(item, ConfigField):
            ctx.fail(
                "CAP-08",
                f"config_schema fields[{index}] is {_kind(item)}, expected driver.ConfigField",
            )
        elif _blank(item.name):
            ctx.fail("CAP-08", f"config_schema fields[{index}].name is {_text(item.name)}")
        else:
            positions.setdefault(item.name, []).append(index)
    for name, where in positions.items():
        if len(where) > 1:
            ctx.fail(
                "CAP-08", f"config_schema has {len(where)} fields named {name!r} (fields{where})"
            )
    for name in ctx.options.required_config_fields:
        if name not in positions:
            ctx.fail(
                "CAP-08",
                f"config_schema has no field named {name!r} (listed in "
                "Options(required_config_fields=...))",
            )
    ctx.judge("CAP-08")


def _snapshot_violations(label: str, snap: SkillSnapshot, desc: Descriptor) -> list[Violation]:
    out = _driver_type("CAP-09", label, snap.driver_type, desc)
    if snap.supported is not True:
        out.append(Violation("CAP-09", f"{label} snapshot has supported={snap.supported!r}"))
    mode = snap.mode
    if not isinstance(mode, str) or mode not in _SKILL_MODES:
        out.append(
            Violation(
                "CAP-09", f"{label} snapshot mode is {_show(mode)}, not ephemeral or persistent"
            )
        )
    if not isinstance(snap.selected, list | tuple) or snap.selected:
        out.append(
            Violation(
                "CAP-09", f"{label} snapshot selected is {snap.selected!r} for an empty selection"
            )
        )
    return out


def _skills_call(ctx: ProbeContext, method_name: str) -> None:
    """One empty-catalogue call; a raise, hang or wrong type fails CAP-09 (not fatally)."""
    method = ctx.method(method_name)
    if method is None:  # implements() saw it; it vanished since
        ctx.fail("CAP-09", f"the driver no longer has a callable {method_name}")
        return
    desc = ctx.descriptor
    payload = ResolvedSkills(mode=desc.skills.mode)
    outcome = ctx.attempt(method, ctx.options.config, payload, None, None, None)
    if outcome.timed_out:
        ctx.fail("CAP-09", describe_hang(method_name, outcome, ctx.options.probe_timeout))
    elif outcome.error is not None:
        ctx.fail("CAP-09", describe_error(method_name, outcome.error))
    elif not isinstance(outcome.value, SkillSnapshot):
        ctx.fail(
            "CAP-09",
            f"{method_name} returned {_kind(outcome.value)}, expected driver.SkillSnapshot",
        )
    else:
        ctx.report(_snapshot_violations(method_name, outcome.value, desc))
        if outcome.value.mode != desc.skills.mode:
            ctx.note(
                f"{method_name} reports mode {str(outcome.value.mode)!r}; the descriptor "
                f"declares {str(desc.skills.mode)!r}"
            )


def probe_skills(ctx: ProbeContext) -> None:
    """CAP-09: ``list_skills`` (and opt-in ``sync_skills``) on the empty catalogue."""
    desc = ctx.descriptor
    if not desc.skills.supported:
        ctx.skip(
            ["CAP-09"],
            "the descriptor does not declare skills.supported, and an "
            "undeclared capability is never probed",
        )
        return
    if _capability(ctx, "CAP-09", SkillSupport, "list_skills", "; see CAP-02") is None:
        return
    if str(desc.skills.mode) not in _SKILL_MODES:
        ctx.skip(["CAP-09"], f"skills.mode is {str(desc.skills.mode)!r} (see CAP-02)")
        return
    _skills_call(ctx, "list_skills")
    if ctx.options.sync_skills_probe:
        _skills_call(ctx, "sync_skills")
    else:
        ctx.note(
            "sync_skills not called: pass Options(sync_skills_probe=True) (it may write "
            "to the profile)"
        )
    ctx.judge("CAP-09")


def probe_stream_capability(ctx: ProbeContext) -> None:
    """CAP-10: two ``stream_capability()`` calls return equal values."""
    method = _capability(ctx, "CAP-10", StreamSupport, "stream_capability")
    if method is None:
        return
    if inspect.iscoroutinefunction(method):
        ctx.fatal("CAP-10", "stream_capability is a coroutine function; it must be a plain method")
    values = []
    for call in ("first", "second"):
        label = f"stream_capability() ({call} call)"
        value = ctx.call("CAP-10", label, method, awaitable=False)
        values.append(ctx.expect_type("CAP-10", label, value, StreamCapability))
    first, second = values
    if first != second:
        changed = [
            n for n in StreamCapability.model_fields if getattr(first, n) != getattr(second, n)
        ]
        ctx.fail(
            "CAP-10", f"two stream_capability() calls differ in {', '.join(changed) or 'type'}"
        )
    ctx.judge("CAP-10")
