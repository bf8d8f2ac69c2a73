"""Direct behaviour tests of the reference driver (independent of the conformance suite)."""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest

from adaptertest._scenarios import load_scenario
from adaptertest.emulator import Emulator
from adaptertest.evt import verify_stream_sequence
from driver import (
    AgentIdentity,
    ConfigSchemaProvider,
    Driver,
    EnvironmentProbe,
    EnvironmentStatus,
    FailureCode,
    HumanDecisionSupport,
    InvalidDriverConfigError,
    ModelDetector,
    ModelInfo,
    ModelLister,
    OutputFormat,
    OutputSchema,
    ProcessLifecycleDriver,
    ProfilePayload,
    ProfileReporter,
    QuestionSupport,
    QuotaProbe,
    Request,
    ResolvedSkill,
    ResolvedSkills,
    Response,
    Role,
    RunEvent,
    RunEventType,
    RunPolicyCapabilities,
    SessionCodec,
    SessionCodecProvider,
    SessionConfigFingerprinter,
    SessionContext,
    SessionParams,
    SessionState,
    Skill,
    SkillOrigin,
    SkillState,
    SkillSupport,
    SkillSyncMode,
    StreamKind,
    StreamPayload,
    StreamSupport,
    StructuredOutputSource,
    TranscriptKind,
    WorkspaceLease,
    canonical_session_config_fingerprint,
    implements,
)
from referencedriver import (
    FINGERPRINT_DOMAIN,
    REFERENCE_DRIVER_TYPE,
    ReferenceConfig,
    ReferenceDriver,
    ReferenceSessionCodec,
    new_reference_driver,
)

OK_PROMPT = "Reply with exactly: OK"
SCHEMA = (
    '{"type":"object","properties":{"ok":{"type":"boolean"}},'
    '"required":["ok"],"additionalProperties":false}'
)
SUCCESS_KINDS = [
    StreamKind.RUN_STARTED,
    StreamKind.REASONING_START,
    StreamKind.REASONING_CONTENT,
    StreamKind.REASONING_END,
    StreamKind.TOOL_CALL_START,
    StreamKind.TOOL_CALL_ARGS,
    StreamKind.TOOL_CALL_END,
    StreamKind.TOOL_CALL_RESULT,
    StreamKind.TEXT_START,
    StreamKind.TEXT_CONTENT,
    StreamKind.TEXT_CONTENT,
    StreamKind.TEXT_END,
    StreamKind.RUN_FINISHED,
]
SUCCESS_ITEMS = [
    TranscriptKind.INIT,
    TranscriptKind.THINKING,
    TranscriptKind.TOOL_CALL,
    TranscriptKind.TOOL_RESULT,
    TranscriptKind.ASSISTANT,
    TranscriptKind.RESULT,
]


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Run every async test on both anyio backends."""
    backend: str = request.param
    return backend


class Sink:
    """Records what the driver emits, verbatim."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.events: list[RunEvent] = []
        self.stream: list[StreamPayload] = []

    def emit(self, event: RunEvent) -> None:
        with self._lock:
            self.events.append(event)

    def emit_stream(self, payload: StreamPayload) -> None:
        with self._lock:
            self.stream.append(payload)

    def items(self) -> list[Any]:
        return [event.item for event in self.events if event.type == RunEventType.ITEM]


async def run(request: Request, config: ReferenceConfig | None = None) -> tuple[Response, Sink]:
    sink = Sink()
    response = await new_reference_driver(config).run(request, sink)
    return response, sink


class Foreign:
    """A config type the driver does not know (looks like ReferenceConfig)."""

    model = "reference-1"
    cwd = ""
    fail_run = False


# -- declarations ---------------------------------------------------------------------


def test_descriptor_declares_exactly_the_reference_capabilities() -> None:
    desc = ReferenceDriver().descriptor()
    assert desc.type == REFERENCE_DRIVER_TYPE == "reference"
    assert desc.display_name == "Adaptertest Reference Driver"
    assert desc.models == (ModelInfo(id="reference-1", label="Reference Model"),)
    assert desc.config_schema is not None
    model_field, cwd_field = desc.config_schema.fields
    assert (model_field.name, model_field.type, model_field.group) == ("model", "text", "model")
    assert model_field.default == "reference-1"
    assert (cwd_field.name, cwd_field.label, cwd_field.group) == (
        "cwd",
        "Working directory",
        "command",
    )
    assert desc.sessions.supports_resume
    assert desc.skills.supported
    assert desc.skills.mode == SkillSyncMode.EPHEMERAL
    assert desc.workspace.supported
    so = desc.structured_output
    assert so.json_schema_native
    assert so.json_schema_prompt_validate
    assert so.works_with_run
    assert so.works_with_streaming
    assert not so.works_with_hitl
    assert so.native_hitl is None
    assert so.prompt_validate_hitl is None
    assert so.notes
    # Permission decisions: asked, or taken by policy; questions: asked or refused. No
    # retry: the reference cannot ask the same thing twice.
    assert desc.run_policy_caps == RunPolicyCapabilities(
        permission=HumanDecisionSupport(ask=True, auto_approve=True, auto_reject=True),
        question=QuestionSupport(ask=True, auto_reject=True),
    )
    # Everything else stays at its zero value.
    zero = type(desc)()
    for name in ("mcp", "instructions", "process", "runtime", "observation"):
        assert getattr(desc, name) == getattr(zero, name), name


def test_descriptor_is_rebuilt_per_call_and_follows_the_model() -> None:
    driver = ReferenceDriver()
    first, second = driver.descriptor(), driver.descriptor()
    assert first == second
    assert first is not second
    assert ReferenceDriver(ReferenceConfig(model="other")).descriptor().models[0].id == "other"
    assert ReferenceDriver(ReferenceConfig(model="")).descriptor().models[0].id == "reference-1"


def test_config_is_frozen_with_upstream_defaults() -> None:
    config = ReferenceConfig()
    assert (config.model, config.cwd, config.fail_run) == ("reference-1", "", False)
    with pytest.raises(ValueError, match="frozen"):
        config.model = "x"  # type: ignore[misc]
    assert new_reference_driver().config == config
    assert new_reference_driver(ReferenceConfig(cwd="/w")).config.cwd == "/w"


@pytest.mark.parametrize(
    ("protocol", "expected"),
    [
        (Driver, True),
        (EnvironmentProbe, True),
        (ModelLister, True),
        (ModelDetector, True),
        (ProfileReporter, True),
        (QuotaProbe, True),
        (ConfigSchemaProvider, True),
        (SkillSupport, True),
        (StreamSupport, True),
        (SessionCodecProvider, True),
        (SessionConfigFingerprinter, True),
        (ProcessLifecycleDriver, False),
    ],
)
def test_implements_every_capability_except_process_lifecycle(
    protocol: type, expected: bool
) -> None:
    assert implements(ReferenceDriver(), protocol) is expected


# -- config validation ----------------------------------------------------------------


@pytest.mark.parametrize("config", [None, ReferenceConfig(), ReferenceConfig(model="m")])
def test_validate_config_accepts_none_and_reference_configs(config: object) -> None:
    ReferenceDriver().validate_config(config)


@pytest.mark.parametrize("config", [Foreign(), {"model": "reference-1"}, "reference", 0])
def test_validate_config_rejects_foreign_values(config: object) -> None:
    with pytest.raises(InvalidDriverConfigError) as caught:
        ReferenceDriver().validate_config(config)
    assert caught.value.driver == REFERENCE_DRIVER_TYPE
    assert isinstance(caught.value.cause, TypeError)


PROBES = [
    lambda d, c: d.check_environment(c),
    lambda d, c: d.list_models(c),
    lambda d, c: d.detect_model(c, None),
    lambda d, c: d.get_profile(c, AgentIdentity(), None),
    lambda d, c: d.get_quota(c, None),
    lambda d, c: d.config_schema(c),
    lambda d, c: d.list_skills(c, ResolvedSkills(), None, None, None),
    lambda d, c: d.inject_skills(c, ResolvedSkills(), None),
    lambda d, c: d.sync_skills(c, ResolvedSkills(), None, None, None),
    lambda d, c: d.run(Request(config=c), Sink()),
]


@pytest.mark.anyio
@pytest.mark.parametrize("probe", PROBES)
async def test_every_probe_validates_its_config_first(probe: Any) -> None:
    driver = ReferenceDriver()
    await probe(driver, None)
    await probe(driver, ReferenceConfig())
    with pytest.raises(InvalidDriverConfigError):
        await probe(driver, Foreign())


# -- probes ---------------------------------------------------------------------------


@pytest.mark.anyio
async def test_inspection_probes() -> None:
    driver = ReferenceDriver(ReferenceConfig(model="ref-x"))
    env = await driver.check_environment(None)
    assert env.driver_type == "reference"
    assert env.status == EnvironmentStatus.PASS
    assert env.healthy
    assert env.summary
    assert [(c.code, c.level) for c in env.checks] == [("reference_ready", "pass")]

    assert await driver.list_models(None) == [ModelInfo(id="ref-x", label="Reference Model")]

    detected = await driver.detect_model(None, None)
    assert detected is not None
    assert (detected.model, detected.provider, detected.source) == ("ref-x", "reference", "config")
    from_arg = await driver.detect_model(ReferenceConfig(model="from-arg"), None)
    assert from_arg is not None
    assert from_arg.model == "from-arg"
    empty_arg = await driver.detect_model(ReferenceConfig(model=""), None)
    assert empty_arg is not None
    assert empty_arg.model == "ref-x"

    profile = await driver.get_profile(None, AgentIdentity(), None)
    assert profile.driver_type == "reference"
    assert profile.supported
    assert profile.dir == "adaptertest-reference-profile"
    assert profile.env_var == "ADAPTERTEST_REFERENCE_HOME"
    assert profile.source == "default"
    assert not profile.managed

    quota = await driver.get_quota(None, None)
    assert (quota.driver_type, quota.provider, quota.source) == ("reference", "reference", "static")
    assert quota.available
    assert [(w.label, w.value_label) for w in quota.windows] == [("session", "unlimited")]

    assert await driver.config_schema(None) == driver.descriptor().config_schema


def test_stream_capability_is_stable_and_streams_hitl() -> None:
    driver = ReferenceDriver()
    cap = driver.stream_capability()
    assert cap == driver.stream_capability()
    assert cap.native
    assert cap.token_level
    assert cap.reasoning
    assert cap.tool_call_args
    assert cap.hitl


@pytest.mark.anyio
async def test_skills_echo_the_selection_and_the_whole_catalogue() -> None:
    driver = ReferenceDriver()
    payload = ResolvedSkills(
        entries=[ResolvedSkill(key="a", runtime_name="a-dir", source_path="/s/a", required=True)],
        warnings=["w"],
        fingerprint="fp",
    )
    catalogue = [Skill(key="a"), Skill(key="b", metadata={"k": "v"})]
    selected = ["a"]
    for method in (driver.list_skills, driver.sync_skills):
        snap = await method(None, payload, selected, catalogue, None)
        assert snap.driver_type == "reference"
        assert snap.supported
        assert snap.mode == SkillSyncMode.EPHEMERAL
        assert snap.selected == selected
        assert snap.selected is not selected
        assert snap.resolved == catalogue
        assert snap.resolved[1] is not catalogue[1]
        (entry,) = snap.entries
        assert (entry.key, entry.runtime_name, entry.source_path) == ("a", "a-dir", "/s/a")
        assert entry.selected
        assert entry.required
        assert entry.state == SkillState.INSTALLED
        assert entry.origin == SkillOrigin.MANAGED
        assert snap.warnings == ["w"]
        assert snap.fingerprint == "fp"
    persistent = ResolvedSkills(mode=SkillSyncMode.PERSISTENT)
    snap = await driver.list_skills(None, persistent, None, None, None)
    assert snap.mode == SkillSyncMode.PERSISTENT
    assert snap.selected == []
    assert snap.resolved == []
    assert snap.entries == []
    await driver.inject_skills(None, payload, None)  # validates only; must not raise


# -- session codec and config fingerprint ----------------------------------------------


def test_codec_laws() -> None:
    codec: SessionCodec = ReferenceDriver().session_codec()
    assert isinstance(codec, ReferenceSessionCodec)
    assert codec.name() == "reference"
    assert codec.to_params(None) == SessionParams()
    assert codec.from_params(SessionParams()) is None

    state = SessionState(resume_id="sess-1", data={"cwd": "/w", "workspace_id": "ws"})
    params = codec.to_params(state)
    assert params == SessionParams(
        resume_id="sess-1", display_id="sess-1", values={"cwd": "/w", "workspace_id": "ws"}
    )
    restored = codec.from_params(params)
    assert restored is not None
    assert restored.data == state.data
    assert restored.display_id == "sess-1"
    assert codec.to_params(restored) == params
    # Copies, not views: mutating the params leaves the state alone.
    params.values["cwd"] = "/elsewhere"
    assert state.data["cwd"] == "/w"
    # Params with values only still restore (nothing is dropped).
    values_only = SessionParams(values={"k": "v"})
    assert codec.to_params(codec.from_params(values_only)) == values_only


def test_guard_fingerprint_recipe() -> None:
    codec = ReferenceSessionCodec()
    params = SessionParams(resume_id="r", display_id="d", values={"b": "2", "a": "1"})
    expected = hashlib.sha256(b"resume_id=r\na=1\nb=2\n").hexdigest()
    assert codec.guard_fingerprint(params) == expected
    # display_id is not part of the guard; every value and the resume id are.
    assert codec.guard_fingerprint(params.model_copy(update={"display_id": "x"})) == expected
    mutated = params.model_copy(update={"values": {"a": "1", "b": "2-mutated"}})
    assert codec.guard_fingerprint(mutated) != expected
    assert codec.guard_fingerprint(params.model_copy(update={"resume_id": "s"})) != expected
    zero = hashlib.sha256(b"resume_id=\n").hexdigest()
    assert codec.guard_fingerprint(SessionParams()) == zero


def test_session_config_fingerprint_covers_the_whole_config() -> None:
    config = ReferenceConfig(model="m", cwd="/w")
    token = ReferenceDriver(config).session_config_fingerprint()
    assert token == canonical_session_config_fingerprint(FINGERPRINT_DOMAIN, config)
    assert FINGERPRINT_DOMAIN == "adaptertest/reference/v1;codec/reference/v1"
    assert token.startswith("sha256:")
    assert len(token) == 71
    assert (
        token == ReferenceDriver(ReferenceConfig(model="m", cwd="/w")).session_config_fingerprint()
    )
    for other in (
        ReferenceConfig(model="n", cwd="/w"),
        ReferenceConfig(model="m", cwd="/v"),
        ReferenceConfig(model="m", cwd="/w", fail_run=True),
    ):
        assert ReferenceDriver(other).session_config_fingerprint() != token


# -- runs -----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_streaming_run_emits_the_full_lifecycle() -> None:
    request = Request(run_id="run-7", prompt=OK_PROMPT, streaming=True)
    response, sink = await run(request)

    assert [p.kind for p in sink.stream] == SUCCESS_KINDS
    for payload in sink.stream:
        assert (payload.run_id, payload.thread_id) == ("run-7", "reference-session")
        assert payload.seq == 0
        assert payload.sequence == 0
        assert payload.timestamp is None
        assert payload.role == Role.ASSISTANT
    by_kind = {p.kind: p for p in sink.stream}
    assert by_kind[StreamKind.REASONING_CONTENT].delta == "Planning the reply."
    assert by_kind[StreamKind.TOOL_CALL_START].name == "echo"
    assert json.loads(by_kind[StreamKind.TOOL_CALL_ARGS].delta) == {"text": "ok"}
    assert by_kind[StreamKind.TOOL_CALL_RESULT].result == {"text": "ok"}
    assert [p.delta for p in sink.stream if p.kind == StreamKind.TEXT_CONTENT] == ["O", "K"]
    finished = sink.stream[-1]
    assert finished.usage is not None
    assert finished.usage.output_tokens == 34
    assert finished.message_id == ""
    assert finished.tool_call_id == ""

    assert [item.kind for item in response.transcript] == SUCCESS_ITEMS
    assert sink.items() == response.transcript
    assert [e.type for e in sink.events] == [
        RunEventType.INVOCATION,
        RunEventType.SPAWN,
        *[RunEventType.ITEM] * len(SUCCESS_ITEMS),
        RunEventType.LIFECYCLE,
    ]
    assert sink.events[0].metadata == {"model": "reference-1", "cwd": "."}
    assert all(e.seq == 0 and e.timestamp is None for e in sink.events)

    assert response.output == "OK"
    assert response.exit_code == 0
    assert response.failure is None
    assert response.provider == "reference"
    assert response.model == "reference-1"
    assert response.usage is not None
    assert response.usage.input_tokens == 12
    assert response.raw_streams is not None
    assert response.raw_streams.terminal is not None
    assert response.raw_streams.terminal.event == "result"
    assert json.loads(response.raw_streams.terminal.raw_json) == {"subtype": "success"}
    assert response.structured_output is None
    assert response.checkpoint is not None
    assert response.checkpoint.valid
    state = response.checkpoint.state
    assert state == SessionState(
        resume_id="reference-session", display_id="reference-session", data={"cwd": "."}
    )


@pytest.mark.anyio
async def test_emitted_values_are_copies_of_the_response() -> None:
    response, sink = await run(Request(prompt=OK_PROMPT, streaming=True))
    first_item = sink.items()[0]
    assert first_item == response.transcript[0]
    assert first_item is not response.transcript[0]
    assert sink.stream[-1].usage is not response.usage


@pytest.mark.anyio
async def test_text_is_split_in_two_halves_by_characters() -> None:
    response, sink = await run(Request(prompt="héllo wörld ✓", streaming=True))
    deltas = [p.delta for p in sink.stream if p.kind == StreamKind.TEXT_CONTENT]
    assert response.output == "Reference reply: héllo wörld ✓"
    assert "".join(deltas) == response.output
    assert len(deltas) == 2
    assert len(deltas[0]) == len(response.output) // 2


@pytest.mark.anyio
async def test_non_streaming_run_emits_no_payloads_but_the_same_items() -> None:
    streamed, streamed_sink = await run(Request(prompt="hi", streaming=True))
    batch, batch_sink = await run(Request(prompt="hi"))
    assert batch_sink.stream == []
    assert batch_sink.items() == streamed_sink.items() == batch.transcript
    assert batch.model_dump() == streamed.model_dump()


@pytest.mark.anyio
async def test_fail_run_reports_a_provider_failure_without_checkpoint() -> None:
    config = ReferenceConfig(fail_run=True)
    response, sink = await run(Request(streaming=True), config)
    assert [p.kind for p in sink.stream] == [StreamKind.RUN_STARTED, StreamKind.RUN_ERROR]
    assert sink.stream[-1].error == response.failure
    assert response.failure is not None
    assert response.failure.code == FailureCode.AGENT_ERROR
    assert response.failure.message
    assert response.failure.human_decision is None
    assert [item.kind for item in response.transcript] == [
        TranscriptKind.INIT,
        TranscriptKind.FAILURE,
    ]
    failure_item = response.transcript[-1]
    assert failure_item.text == response.failure.message
    assert failure_item.metadata == {"code": "agent_error"}
    assert sink.items() == response.transcript
    assert sink.events[-1].type == RunEventType.LIFECYCLE
    assert response.exit_code == 1
    assert response.checkpoint is None
    assert response.output == ""
    assert response.raw_streams is not None
    assert response.raw_streams.terminal is None


@pytest.mark.anyio
async def test_model_override_wins_over_the_config_model() -> None:
    request = Request(model_override="override-9", streaming=True)
    response, sink = await run(request, ReferenceConfig(model="configured"))
    assert response.model == "override-9"
    assert response.transcript[0].model == "override-9"
    assert sink.events[0].metadata["model"] == "override-9"
    plain, _ = await run(Request(), ReferenceConfig(model="configured"))
    assert plain.model == "configured"


@pytest.mark.anyio
async def test_native_structured_output() -> None:
    request = Request(
        output_schema=OutputSchema(format=OutputFormat.JSON_SCHEMA, schema_document=SCHEMA),
        structured_output_source=StructuredOutputSource.NATIVE,
    )
    response, _ = await run(request)
    assert response.output == '{"ok":true}'
    structured = response.structured_output
    assert structured is not None
    assert structured.source == StructuredOutputSource.NATIVE
    assert structured.format == OutputFormat.JSON_SCHEMA
    assert structured.raw_json == '{"ok":true}'
    assert structured.value == {"ok": True}
    assert structured.valid
    assert structured.validation_errors == []
    assert structured.schema_hash == hashlib.sha256(SCHEMA.encode()).hexdigest()


@pytest.mark.anyio
async def test_prompt_validate_structured_output_is_only_the_json_text() -> None:
    request = Request(
        prompt=OK_PROMPT,
        output_schema=OutputSchema(format=OutputFormat.JSON_SCHEMA, schema_document=SCHEMA),
        structured_output_source=StructuredOutputSource.PROMPT_VALIDATE,
        streaming=True,
    )
    response, sink = await run(request)
    assert response.output == '{"ok":true}'
    assert response.structured_output is None
    deltas = [p.delta for p in sink.stream if p.kind == StreamKind.TEXT_CONTENT]
    assert "".join(deltas) == '{"ok":true}'


@pytest.mark.anyio
async def test_checkpoint_carries_session_data_cwd_and_profile_fingerprint() -> None:
    request = Request(
        session=SessionContext(
            state=SessionState(resume_id="sess-9", data={"cwd": "/old", "workspace_id": "ws"})
        ),
        workspace=WorkspaceLease(id="ws", cwd="/lease"),
        profile_payload=ProfilePayload(
            fingerprint="adaptertest-profile-concrete",
            session_compatibility_fingerprint="adaptertest-profile-session",
        ),
        streaming=True,
    )
    response, sink = await run(request, ReferenceConfig(cwd="/config"))
    assert response.checkpoint is not None
    assert response.checkpoint.state is not None
    state = response.checkpoint.state
    assert (state.resume_id, state.display_id) == ("sess-9", "sess-9")
    assert state.data == {
        "cwd": "/lease",
        "workspace_id": "ws",
        "profile_fingerprint": "adaptertest-profile-session",
    }
    assert request.session is not None
    assert request.session.state is not None
    assert request.session.state.data["cwd"] == "/old"  # the request is not mutated
    assert {p.thread_id for p in sink.stream} == {"sess-9"}

    only_concrete = Request(profile_payload=ProfilePayload(fingerprint="concrete"))
    response, _ = await run(only_concrete, ReferenceConfig(cwd="/config"))
    assert response.checkpoint is not None
    assert response.checkpoint.state is not None
    assert response.checkpoint.state.data == {
        "cwd": "/config",
        "profile_fingerprint": "concrete",
    }
    codec = ReferenceSessionCodec()
    params = codec.to_params(response.checkpoint.state)
    assert codec.to_params(codec.from_params(params)) == params


@pytest.mark.anyio
async def test_run_observes_a_cancelled_scope_before_emitting() -> None:
    sink = Sink()
    with anyio.CancelScope() as scope:
        scope.cancel()
        await ReferenceDriver().run(Request(streaming=True), sink)
    assert scope.cancelled_caught
    assert sink.events == []
    assert sink.stream == []


@pytest.mark.anyio
async def test_concurrent_runs_on_one_instance_do_not_mix() -> None:
    driver = ReferenceDriver()
    sinks = {f"run-{n}": Sink() for n in range(8)}
    responses: dict[str, Response] = {}

    async def one(run_id: str) -> None:
        request = Request(run_id=run_id, prompt=run_id, streaming=True)
        responses[run_id] = await driver.run(request, sinks[run_id])

    async with anyio.create_task_group() as group:
        for run_id in sinks:
            group.start_soon(one, run_id)
    for run_id, sink in sinks.items():
        assert [p.kind for p in sink.stream] == SUCCESS_KINDS
        assert {p.run_id for p in sink.stream} == {run_id}
        assert sink.items() == responses[run_id].transcript
        assert responses[run_id].output == f"Reference reply: {run_id}"


# -- the network mode ------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_cut_stream_closes_what_it_opened_and_a_retry_streams_new_messages(
    tmp_path: Path,
) -> None:
    """Each attempt at a cut answer opens a text message and ends it when the cut comes;
    the retry's message has an id of its own, so the failed run's stream is legal."""
    with Emulator(load_scenario("fault_stream_cut")) as emulator:
        config = ReferenceConfig(
            model_url=emulator.base_url, api_key="key", home=str(tmp_path), model_retries=1
        )
        request = Request(run_id="cut", prompt=OK_PROMPT, streaming=True)
        response, sink = await run(request, config)
    assert response.failure is not None
    assert response.failure.code == FailureCode.AGENT_ERROR
    opened = [p.message_id for p in sink.stream if p.kind == StreamKind.TEXT_START]
    ended = [p.message_id for p in sink.stream if p.kind == StreamKind.TEXT_END]
    assert opened == ended == ["turn0-block0", "turn0-block0-retry1"]
    assert sink.stream[-1].kind == StreamKind.RUN_ERROR
    assert verify_stream_sequence(sink.stream) == []
