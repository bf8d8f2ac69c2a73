"""The live_run and live_structured_output probes, end to end through check_driver."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import BaseModel, ConfigDict, SecretStr

from adaptertest import CLAUSES, ClauseStatus, ConformanceReport, Level, Options, check_driver
from adaptertest._violation import WITHHELD
from adaptertest.evt import verify_stream_sequence
from adaptertest.liv import live_request, verify_live_success
from adaptertest.options import DEFAULT_LIVE_PROMPT
from adaptertest.rsp import verify_outcome
from adaptertest.run import verify_run_events, verify_transcript_mirror
from adaptertest.sink import RecordingSink
from driver import (
    Checkpoint,
    Descriptor,
    EventSink,
    FailureCode,
    HumanDecisionFailure,
    HumanDecisionKind,
    ObservationCapability,
    ObservationSupport,
    ProfilePayload,
    RawStreams,
    Request,
    Response,
    RunEvent,
    RunFailure,
    StreamKind,
    StreamPayload,
    StructuredOutputSource,
)
from driver.errors import RunError
from driver.observation import (
    CapabilityInvocation,
    CapabilityKind,
    CapabilityRef,
    InvocationEvidence,
    InvocationPhase,
    InvocationSource,
)
from driver.run import ObservationDemand
from referencedriver import ReferenceConfig, ReferenceDriver, ReferenceModel, new_reference_driver

LIVE_PROBES = ("live_run", "live_structured_output")
PROBED = [c.id for c in CLAUSES if set(c.probes) & set(LIVE_PROBES)]
LIVE = [c.id for c in CLAUSES if c.mode.value == "live"]

Patch = Callable[[Request, Response], Response]


def live_options(**overrides: Any) -> Options:
    settings: dict[str, Any] = {
        "config": ReferenceConfig(),
        "live_run": True,
        "live_structured_output": True,
        "live_run_timeout": 10.0,
    }
    settings.update(overrides)
    return Options(**settings)


def check(factory: Callable[[], object], **overrides: Any) -> ConformanceReport:
    return check_driver(factory, live_options(**overrides), only=PROBED)


def failed(report: ConformanceReport) -> set[str]:
    return {r.clause for r in report.results if r.status is ClauseStatus.FAILED}


def texts(report: ConformanceReport) -> list[str]:
    return [t for r in report.results for t in (*r.messages, *r.notes)]


# ------------------------------------------------------------------------------------
# Drivers
# ------------------------------------------------------------------------------------


class Patched(ReferenceDriver):
    """The reference driver with its response rewritten after each run."""

    def __init__(self, patch: Patch) -> None:
        super().__init__(ReferenceConfig())
        self._patch = patch

    async def run(self, request: Request, sink: EventSink) -> Response:
        return self._patch(request, await super().run(request, sink))


def always(**update: Any) -> Callable[[], ReferenceDriver]:
    return lambda: Patched(lambda _request, response: response.model_copy(update=update))


def plain_runs(**update: Any) -> Callable[[], ReferenceDriver]:
    """Rewrite only live_run's response (no output schema)."""

    def patch(request: Request, response: Response) -> Response:
        if request.output_schema is not None:
            return response
        return response.model_copy(update=update)

    return lambda: Patched(patch)


def structured_runs(**update: Any) -> Callable[[], ReferenceDriver]:
    """Rewrite only the structured_output of the structured probe's response."""

    def patch(request: Request, response: Response) -> Response:
        so = response.structured_output
        if request.output_schema is None or so is None:
            return response
        return response.model_copy(update={"structured_output": so.model_copy(update=update)})

    return lambda: Patched(patch)


def no_structured_output() -> ReferenceDriver:
    def patch(request: Request, response: Response) -> Response:
        if request.output_schema is None:
            return response
        return response.model_copy(update={"structured_output": None})

    return Patched(patch)


class Raising(ReferenceDriver):
    """Runs, then raises RunError, optionally handing back the (checkpointed) response."""

    def __init__(self, keep_response: bool) -> None:
        super().__init__(ReferenceConfig())
        self._keep = keep_response

    async def run(self, request: Request, sink: EventSink) -> Response:
        response = await super().run(request, sink)
        raise RunError("transport lost", response=response if self._keep else None)


class _InjectingSink:
    """Forwards everything and adds ``extra`` right after run.started."""

    def __init__(self, sink: EventSink, extra: StreamPayload) -> None:
        self._sink = sink
        self._extra = extra

    def emit(self, event: RunEvent) -> None:
        self._sink.emit(event)

    def emit_stream(self, payload: StreamPayload) -> None:
        self._sink.emit_stream(payload)
        if payload.kind == StreamKind.RUN_STARTED:
            self._sink.emit_stream(self._extra)


class Injecting(ReferenceDriver):
    """Emits one extra payload: after run.started when streaming, first otherwise."""

    def __init__(self, extra: StreamPayload) -> None:
        super().__init__(ReferenceConfig())
        self._extra = extra

    async def run(self, request: Request, sink: EventSink) -> Response:
        if not request.streaming:
            sink.emit_stream(self._extra)
        return await super().run(request, _InjectingSink(sink, self._extra))


class NoCodec(ReferenceDriver):
    def session_codec(self) -> None:  # type: ignore[override]
        return None


class ReturnsDict(ReferenceDriver):
    async def run(self, request: Request, sink: EventSink) -> Any:
        return (await super().run(request, sink)).model_dump()


class Hanging(ReferenceDriver):
    async def run(self, request: Request, sink: EventSink) -> Response:
        await anyio.sleep(3600)
        return await super().run(request, sink)


class NoStreamSupport(ReferenceDriver):
    stream_capability = None  # type: ignore[assignment]


def mcp_fact(phase: InvocationPhase, **fields: Any) -> StreamPayload:
    return StreamPayload(
        kind=StreamKind.CAPABILITY_INVOCATION,
        capability=CapabilityInvocation(
            invocation_id="inv-1",
            ref=CapabilityRef(kind=CapabilityKind.MCP, key="files", operation="read"),
            phase=phase,
            evidence=InvocationEvidence.PROVIDER_PROTOCOL,
            source=InvocationSource.PROVIDER,
            occurred_at=datetime(2024, 1, 1, tzinfo=UTC),
            duration=None if phase is InvocationPhase.STARTED else timedelta(0),
        ),
        **fields,
    )


class FactsOnly(NoStreamSupport):
    """No StreamSupport; reports two MCP facts on every transport, as declared, when the
    request demands capability invocations."""

    def __init__(self, numbered: bool = False, *, unasked: bool = False) -> None:
        super().__init__(ReferenceConfig())
        self._numbered = numbered
        self._unasked = unasked  # report them whether demanded or not

    def descriptor(self) -> Descriptor:
        mcp = ObservationSupport(mcp=True)
        return (
            super()
            .descriptor()
            .model_copy(update={"observation": ObservationCapability(streaming=mcp, batch=mcp)})
        )

    async def run(self, request: Request, sink: EventSink) -> Response:
        if request.observation.capability_invocations or self._unasked:
            sink.emit_stream(mcp_fact(InvocationPhase.STARTED, seq=1 if self._numbered else 0))
            sink.emit_stream(mcp_fact(InvocationPhase.COMPLETED))
        return await super().run(request, sink)


class _ThreadSink:
    """Delivers every emission from a fresh worker thread."""

    def __init__(self, sink: EventSink) -> None:
        self._sink = sink

    def _elsewhere(self, fn: Callable[[Any], None], item: object) -> None:
        worker = threading.Thread(target=fn, args=(item,))
        worker.start()
        worker.join()

    def emit(self, event: RunEvent) -> None:
        self._elsewhere(self._sink.emit, event)

    def emit_stream(self, payload: StreamPayload) -> None:
        self._elsewhere(self._sink.emit_stream, payload)


class ThreadEmitter(ReferenceDriver):
    async def run(self, request: Request, sink: EventSink) -> Response:
        return await super().run(request, _ThreadSink(sink))


class LateEmitter(ReferenceDriver):
    """Leaves a callback behind that emits once run() has returned (asyncio only)."""

    async def run(self, request: Request, sink: EventSink) -> Response:
        response = await super().run(request, sink)
        late = StreamPayload(kind=StreamKind.TEXT_START, message_id="late-1")
        asyncio.get_running_loop().call_soon(sink.emit_stream, late)
        return response


class MutatesRequest(ReferenceDriver):
    """Rewrites the request it was given, which must not change what SES-09 expects."""

    async def run(self, request: Request, sink: EventSink) -> Response:
        request.run_id = "rewritten"
        request.profile_payload = ProfilePayload()
        return await super().run(request, sink)


class StoresExactFingerprint(ReferenceDriver):
    async def run(self, request: Request, sink: EventSink) -> Response:
        response = await super().run(request, sink)
        checkpoint = response.checkpoint
        if checkpoint is None or checkpoint.state is None:
            return response
        data = dict(checkpoint.state.data)
        data["profile_fingerprint"] = request.profile_payload.fingerprint
        state = checkpoint.state.model_copy(update={"data": data})
        return response.model_copy(update={"checkpoint": Checkpoint(valid=True, state=state)})


# ------------------------------------------------------------------------------------
# The reference driver
# ------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_reference_passes_every_live_clause(backend: str, tmp_path: Path) -> None:
    model = ReferenceModel()
    options = live_options(
        model_requests=model.requests_so_far,
        workspace=str(tmp_path),
        concurrent_runs=4,
        backend=backend,
        session_keys=("cwd",),
        guard_keys=("cwd",),
        expected_detected_model="reference-1",
        required_config_fields=("model", "cwd"),
        expect_reject_foreign_config=True,
        strict_observation_demand=True,
    )
    report = check_driver(lambda: new_reference_driver(model=model), options, only=LIVE)
    assert {r.clause: r.status for r in report.results} == dict.fromkeys(LIVE, ClauseStatus.PASSED)
    assert not any(n.startswith("live diagnostic") for n in texts(report))


def test_live_probes_skip_with_the_reason() -> None:
    report = check(new_reference_driver, live_run=False)
    assert {r.status for r in report.results if r.clause != "SO-03"} == {ClauseStatus.SKIPPED}
    assert "live_run=True" in report.result("EVT-01").messages[0]
    report = check(new_reference_driver, skip_live_run="no CLI here")
    assert report.result("LIV-01").messages == ("LIV-01 skipped: no CLI here",)
    report = check(new_reference_driver, live_structured_output=False)
    assert report.result("SO-02").status is ClauseStatus.SKIPPED
    assert "live_structured_output=True" in report.result("SO-02").messages[0]
    assert report.result("LIV-01").status is ClauseStatus.PASSED


def test_undeclared_native_output_skips_the_structured_probe() -> None:
    class PromptOnly(ReferenceDriver):
        def descriptor(self) -> Descriptor:
            desc = super().descriptor()
            so = desc.structured_output.model_copy(update={"json_schema_native": False})
            return desc.model_copy(update={"structured_output": so})

    report = check_driver(
        lambda: PromptOnly(ReferenceConfig()), live_options(), only=["SO-02", "SO-03"]
    )
    assert report.result("SO-03").status is ClauseStatus.PASSED
    assert report.result("SO-02").status is ClauseStatus.SKIPPED
    assert "SO-03: " in report.result("SO-02").messages[0]
    assert "json_schema_native=False" in report.result("SO-02").messages[0]


# ------------------------------------------------------------------------------------
# The failure path
# ------------------------------------------------------------------------------------


def test_failed_reference_run_is_legal_for_every_verifier() -> None:
    sink = RecordingSink()
    driver = new_reference_driver(ReferenceConfig(fail_run=True))
    request = live_request(None, DEFAULT_LIVE_PROMPT, None)
    response = anyio.run(driver.run, request, sink)
    assert response.exit_code == 1
    assert verify_outcome(response, None) == []
    assert verify_run_events(sink.events) == []
    assert verify_stream_sequence(sink.stream) == []
    assert verify_transcript_mirror(sink.events, response.transcript) == []
    assert sink.stream[-1].kind == StreamKind.RUN_ERROR
    assert sink.stream[-1].error is not None
    assert [v.clause for v in verify_live_success(response, None)] == ["LIV-01"]


NEEDS_SUCCESS = ("LIV-02", "LIV-03", "RSP-04", "SES-09", "SO-02")


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_failed_run_is_still_judged(backend: str) -> None:
    report = check(lambda: new_reference_driver(ReferenceConfig(fail_run=True)), backend=backend)
    assert failed(report) == {"LIV-01"}
    result = report.result("LIV-01")
    # Structure is shown; the failure message is provider text, withheld in place.
    assert [m.split(WITHHELD)[0] for m in result.messages] == [
        f"LIV-01: [{probe}] live run did not succeed: exit_code=1; failure 'agent_error': "
        for probe in ("live_run", "live_structured_output")
    ]
    assert "the reference config asked this run to fail" not in "\n".join(texts(report))
    diagnostics = [n for n in result.notes if n.startswith("live diagnostic: ")]
    assert diagnostics
    diagnostic = json.loads(diagnostics[0].removeprefix("live diagnostic: "))
    assert diagnostic["exit"] == 1
    assert diagnostic["raw_present"] is True
    # The stream, run events, transcript and response of the failed run were judged.
    for clause in ("EVT-01", "EVT-02", "EVT-11", "RUN-04", "TRN-01", "RSP-01", "FLR-01"):
        assert report.result(clause).status is ClauseStatus.PASSED, clause
    for clause in NEEDS_SUCCESS:
        skipped = report.result(clause)
        assert skipped.status is ClauseStatus.SKIPPED, clause
        assert "the live run failed (exit_code=1, failure 'agent_error')" in skipped.messages[0]
    assert report.level is None  # a partial run
    whole = check_driver(
        lambda: new_reference_driver(ReferenceConfig(fail_run=True)), live_options()
    )
    assert whole.level is Level.CORE


def test_fail_run_with_details_shows_why() -> None:
    report = check(
        lambda: new_reference_driver(ReferenceConfig(fail_run=True)), show_live_details=True
    )
    assert failed(report) == {"LIV-01"}
    assert (
        report.result("LIV-01")
        .messages[0]
        .endswith(
            "exit_code=1; failure 'agent_error': 'the reference config asked this run to fail'"
        )
    )
    diagnostic = next(n for n in report.result("LIV-01").notes if n.startswith("live diag"))
    assert '"text": "the reference config asked this run to fail"' in diagnostic


# ------------------------------------------------------------------------------------
# Upstream's live-success oracle (reference notes 5.6)
# ------------------------------------------------------------------------------------

_OK = '{"ok":true}'

# A failure patched onto a successful run is not a clean one (no failure item, a stream
# that ends in run.finished): FLR-01 fails with LIV-01.
UNCLEAN = {"LIV-01", "FLR-01"}

MUTANTS: dict[str, tuple[Callable[[], object], dict[str, Any], set[str]]] = {
    "exit-1": (always(exit_code=1, checkpoint=None), {}, UNCLEAN),
    "signal": (always(signal="SIGKILL", checkpoint=None), {}, UNCLEAN),
    "timed-out": (always(timed_out=True, checkpoint=None), {}, UNCLEAN),
    "agent-error": (
        always(failure=RunFailure(code=FailureCode.AGENT_ERROR, message="x"), checkpoint=None),
        {},
        UNCLEAN,
    ),
    "raises-run-error": (lambda: Raising(keep_response=False), {}, UNCLEAN),
    "vendor-kind-with-sequence": (
        lambda: Injecting(StreamPayload(kind="vendor.note", sequence=1)),
        {},
        {"EVT-10"},
    ),
    "resumable-no-checkpoint": (always(checkpoint=None), {}, {"LIV-03"}),
    "resumable-invalid-checkpoint": (always(checkpoint=Checkpoint(valid=False)), {}, {"LIV-03"}),
    "codec-none": (lambda: NoCodec(ReferenceConfig()), {}, {"RSP-04"}),
    "empty-output": (plain_runs(output=""), {}, {"LIV-02"}),
    "whitespace-output": (plain_runs(output=" \n\t"), {}, {"LIV-02"}),
    "wrong-output": (plain_runs(output="Okay!"), {}, {"LIV-02"}),
    "custom-prompt-mismatch": (
        new_reference_driver,
        {"live_prompt": "Say hello", "live_expected_output": "hello"},
        {"LIV-02"},
    ),
    "exact-profile-fingerprint": (
        lambda: StoresExactFingerprint(ReferenceConfig()),
        {},
        {"SES-09"},
    ),
    "so-missing": (no_structured_output, {}, {"SO-02"}),
    "so-wrong-source": (
        structured_runs(source=StructuredOutputSource.PROMPT_VALIDATE),
        {},
        {"SO-02"},
    ),
    "so-invalid": (structured_runs(valid=False), {}, {"SO-02"}),
    "so-raw-value-none": (structured_runs(value=None), {}, set()),
    "so-value-false": (structured_runs(value={"ok": False}), {}, {"SO-02"}),
    "so-value-extra-key": (structured_runs(value={"ok": True, "x": 1}), {}, {"SO-02"}),
    "so-value-not-json": (structured_runs(value={"ok": object()}), {}, {"SO-02"}),
}
for _name, _raw in {
    "empty": "",
    "malformed": '{"ok":',
    "null": "null",
    "array": "[]",
    "empty-object": "{}",
    "false": '{"ok":false}',
    "string-true": '{"ok":"true"}',
    "extra-key": '{"ok":true,"x":1}',
    "duplicate-key": '{"ok":true,"ok":true}',
    "two-documents": _OK + _OK,
}.items():
    MUTANTS[f"so-raw-{_name}"] = (structured_runs(raw_json=_raw), {}, {"SO-02"})


@pytest.mark.parametrize("name", list(MUTANTS))
def test_each_mutant_fails_exactly_its_clause(name: str) -> None:
    factory, overrides, expected = MUTANTS[name]
    report = check(factory, **overrides)
    assert failed(report) == expected
    for clause in expected:
        messages = report.result(clause).messages
        assert messages
        assert all(m.startswith(f"{clause}: ") for m in messages), messages
        if clause == "LIV-01":
            assert all("] live run did not succeed: " in m for m in messages), messages


@pytest.mark.parametrize(
    "overrides",
    [
        {"live_prompt": "Say hello"},
        {"live_prompt": "Say hello", "live_expected_output": " Reference reply: Say hello \n"},
        {"live_expected_output": "OK"},
    ],
    ids=["custom-prompt-no-expectation", "trimmed-match", "default-prompt-expected-ok"],
)
def test_output_checks_that_pass(overrides: dict[str, Any]) -> None:
    report = check(new_reference_driver, **overrides)
    assert failed(report) == set()


def test_custom_prompt_without_expectation_skips_liv02() -> None:
    report = check(new_reference_driver, live_prompt="Say hello")
    assert report.result("LIV-02").status is ClauseStatus.SKIPPED
    assert "live_expected_output" in report.result("LIV-02").messages[0]


def test_empty_expectation_matches_empty_output() -> None:
    report = check(plain_runs(output="  "), live_expected_output="")
    assert failed(report) == set()


def test_run_error_with_a_valid_checkpoint_is_judged_on_all_three() -> None:
    report = check(lambda: Raising(keep_response=True))
    assert failed(report) == {"RSP-01", "LIV-01", "FLR-01"}
    assert any("RunError" in m for m in report.result("RSP-01").messages)
    [first, *_] = report.result("LIV-01").messages
    assert "live run did not succeed: run() raised driver.errors.RunError at " in first
    assert "test_probe_live.py:" in first
    assert "transport lost" not in first
    details = check(lambda: Raising(keep_response=True), show_live_details=True)
    assert any(" in run: transport lost" in m for m in details.result("LIV-01").messages)
    traceback = [n for n in details.result("LIV-01").notes if n.startswith("driver traceback:")]
    assert traceback
    assert 'raise RunError("transport lost"' in traceback[0]
    assert "liv.py" not in traceback[0]  # the kit's own frames are left out


def test_a_dict_instead_of_a_response_fails_liv01() -> None:
    report = check(lambda: ReturnsDict(ReferenceConfig()))
    assert failed(report) == {"LIV-01"}
    assert "run() returned dict, expected driver.Response" in report.result("LIV-01").messages[0]


def test_a_hanging_run_fails_liv01_at_the_deadline() -> None:
    start = time.perf_counter()
    report = check_driver(
        lambda: Hanging(ReferenceConfig()),
        live_options(live_run_timeout=0.5, live_structured_output=False),
        only=["LIV-01"],
    )
    assert time.perf_counter() - start < 2.0
    assert failed(report) == {"LIV-01"}
    assert "did not return within 0.5 s" in report.result("LIV-01").messages[0]


# ------------------------------------------------------------------------------------
# Transports, threads, late emissions, mutation
# ------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_driver_without_stream_support_gets_facts_only_checks(backend: str) -> None:
    report = check(lambda: NoStreamSupport(ReferenceConfig()), backend=backend)
    assert failed(report) == set()
    for clause in ("EVT-01", "EVT-02", "EVT-12"):
        assert report.result(clause).status is ClauseStatus.SKIPPED
        assert "StreamSupport" in report.result(clause).messages[0]
    for clause in ("EVT-09", "EVT-10", "EVT-14", "OBS-04", "RUN-04"):
        assert report.result(clause).status is ClauseStatus.PASSED


def test_declared_facts_without_stream_support_pass() -> None:
    report = check(lambda: FactsOnly())
    assert failed(report) == set()
    assert report.result("OBS-01").status is ClauseStatus.PASSED


def test_a_numbered_fact_fails_evt10_in_both_probes() -> None:
    report = check(lambda: FactsOnly(numbered=True), show_live_details=True)
    assert failed(report) == {"EVT-10"}
    assert len(report.result("EVT-10").messages) == 2


def test_undeclared_facts_fail_obs01() -> None:
    class Undeclared(FactsOnly):
        def descriptor(self) -> Descriptor:
            return ReferenceDriver.descriptor(self)

    report = check(lambda: Undeclared(unasked=True))
    assert failed(report) == {"OBS-01"}
    assert any("invocations are not declared" in m for m in report.result("OBS-01").messages)


def test_declared_facts_nobody_demanded_pass_obs01_as_upstream_allows() -> None:
    """Upstream's OBS-01 judges the declaration only; the demand check is OBS-07, which
    is stricter than upstream and off unless asked for."""
    report = check(lambda: FactsOnly(unasked=True))
    assert failed(report) == set()
    assert report.result("OBS-01").status is ClauseStatus.PASSED
    [skipped] = report.result("OBS-07").messages
    assert "Options(strict_observation_demand=True)" in skipped


def test_declared_facts_nobody_demanded_fail_obs07_when_asked_for() -> None:
    report = check(lambda: FactsOnly(unasked=True), strict_observation_demand=True)
    assert failed(report) == {"OBS-07"}
    [message] = report.result("OBS-07").messages
    assert message.startswith("OBS-07: [system_prompt] payload 0 (capability.invocation): ")
    assert "request.observation.capability_invocations=False" in message


def test_the_live_requests_demand_what_is_declared() -> None:
    seen: list[Request] = []

    class Demands(FactsOnly):
        async def run(self, request: Request, sink: EventSink) -> Response:
            seen.append(request.model_copy(deep=True))
            return await super().run(request, sink)

    report = check(lambda: Demands())
    assert failed(report) == set()
    by_run = {r.run_id: r.observation for r in seen if not r.append_system_prompt}
    assert all(d.capability_invocations and not d.todos for d in by_run.values()), by_run
    appended = [r for r in seen if r.append_system_prompt]
    assert appended
    assert all(r.observation == ObservationDemand() for r in appended)


def test_emitting_from_another_thread_is_fine() -> None:
    report = check(lambda: ThreadEmitter(ReferenceConfig()))
    assert failed(report) == set()


def test_an_emission_after_return_fails_evt02() -> None:
    report = check(lambda: LateEmitter(ReferenceConfig()), backend="asyncio")
    assert failed(report) == {"EVT-02"}
    assert any(
        "] 1 emission(s) reached the sink 0 ms after run() returned" in m
        for m in report.result("EVT-02").messages
    ), report.result("EVT-02").messages


def test_a_mutated_request_does_not_fool_ses09() -> None:
    report = check(lambda: MutatesRequest(ReferenceConfig()))
    assert failed(report) == {"SES-09"}
    notes = [n for n in texts(report) if "changed the Request" in n]
    assert any("(run_id, profile_payload)" in n for n in notes), notes


# ------------------------------------------------------------------------------------
# Secrets and provider text
# ------------------------------------------------------------------------------------

SECRET = "sk-canary-7f3a9c2e"
PROVIDER_CANARY = "provider-canary-51d2"


class CanaryConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    token: SecretStr


class Leaky(ReferenceDriver):
    """Puts the config's secret and a provider canary into every free-text field.

    ``mode`` "response": output, stdout, stderr and a stray delta; "error": the message of
    a raised RunError; "failure": the message of a failure the run reports.
    """

    def __init__(self, mode: str = "response") -> None:
        super().__init__(ReferenceConfig(fail_run=mode == "failure"))
        self._mode = mode

    def validate_config(self, config: object | None) -> None:
        if not isinstance(config, CanaryConfig):
            super().validate_config(config)

    async def run(self, request: Request, sink: EventSink) -> Response:
        config = request.config
        secret = config.token.get_secret_value() if isinstance(config, CanaryConfig) else ""
        leak = f"{PROVIDER_CANARY} {secret}"
        if self._mode == "error":
            raise RunError(f"authentication failed: {leak}")
        stray = StreamPayload(kind=StreamKind.TEXT_CONTENT, message_id="stray", delta=leak)
        inner = request.model_copy(update={"config": None})
        response = await super().run(inner, _InjectingSink(sink, stray))
        if response.failure is not None:
            failure = response.failure.model_copy(update={"message": f"budget: {leak}"})
            return response.model_copy(update={"failure": failure})
        raw = RawStreams(stdout=leak.encode(), stderr=leak.encode())
        return response.model_copy(update={"output": leak, "raw_streams": raw})


def canary_options(**overrides: Any) -> dict[str, Any]:
    return {"config": CanaryConfig(token=SecretStr(SECRET)), **overrides}


MODES = ["response", "error", "failure"]


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("mode", MODES)
def test_canaries_never_reach_the_report(mode: str, backend: str) -> None:
    report = check(lambda: Leaky(mode), **canary_options(backend=backend))
    assert failed(report)
    everything = "\n".join([*texts(report), report.summary()])
    assert SECRET not in everything
    assert PROVIDER_CANARY not in everything
    # What broke is still said, in structure: the stray payload, its id and kind.
    if mode != "error":
        assert any(
            "payload 1 (text.content): message_id 'stray' is not open" in m
            for m in report.result("EVT-03").messages
        ), report.result("EVT-03").messages


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize("mode", MODES)
def test_details_show_provider_text_but_never_the_secret(mode: str, backend: str) -> None:
    report = check(lambda: Leaky(mode), **canary_options(show_live_details=True, backend=backend))
    everything = "\n".join(texts(report))
    assert SECRET not in everything
    assert PROVIDER_CANARY in everything
    if mode == "response":
        assert PROVIDER_CANARY in report.result("LIV-02").messages[0]
    elif mode == "error":
        assert f"authentication failed: {PROVIDER_CANARY}" in report.result("LIV-01").messages[0]
    else:
        assert (
            f"'budget: {PROVIDER_CANARY} [secret withheld]'" in report.result("LIV-01").messages[0]
        )


# ------------------------------------------------------------------------------------
# active_execution_timeout follows the same response rules as every failure
# ------------------------------------------------------------------------------------

_HOST_LIMIT = RunFailure(code=FailureCode.ACTIVE_EXECUTION_TIMEOUT, message="host limit")


def test_active_execution_timeout_with_a_valid_checkpoint_fails_rsp01() -> None:
    report = check(
        always(exit_code=1, failure=_HOST_LIMIT), live_expect_failure="the host stops it"
    )
    assert "RSP-01" in failed(report)
    assert "RSP-02" not in failed(report)
    assert any("failure set" in m for m in report.result("RSP-01").messages)


def test_active_execution_timeout_with_a_human_decision_fails_rsp02() -> None:
    decided = _HOST_LIMIT.model_copy(
        update={"human_decision": HumanDecisionFailure(kind=HumanDecisionKind.PERMISSION)}
    )
    report = check(
        always(exit_code=1, failure=decided, checkpoint=None),
        live_expect_failure="the host stops it",
    )
    assert "RSP-02" in failed(report)
    assert "RSP-01" not in failed(report)
    assert any("'active_execution_timeout' with" in m for m in report.result("RSP-02").messages)
