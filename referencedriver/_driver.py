"""The reference driver: every SPI method, answered from memory."""

from __future__ import annotations

import hashlib
import json
import math
import threading
from dataclasses import dataclass

import anyio.lowlevel

from driver import (
    REDACTED_APPEND,
    SESSION_PARAM_APPEND_SYSTEM_PROMPT_FINGERPRINT,
    SESSION_PARAM_CWD,
    SESSION_PARAM_PROFILE_FINGERPRINT,
    AgentIdentity,
    AgentProfile,
    AgentProfileSource,
    Checkpoint,
    ConfigField,
    ConfigSchema,
    DecisionResult,
    Descriptor,
    DetectedModel,
    EnvironmentCheck,
    EnvironmentReport,
    EnvironmentStatus,
    EventSink,
    FailureAction,
    FailureCode,
    HumanDecisionFailure,
    HumanDecisionKind,
    HumanDecisionSupport,
    InvalidDriverConfigError,
    ModelInfo,
    OutputFormat,
    ProfileSelection,
    QuestionSupport,
    QuotaReport,
    QuotaWindow,
    RawStreams,
    Request,
    ResolvedSkills,
    Response,
    RunError,
    RunEvent,
    RunEventType,
    RunFailure,
    RunPolicyCapabilities,
    SessionCapability,
    SessionState,
    Skill,
    SkillCapability,
    SkillOrigin,
    SkillSnapshot,
    SkillState,
    SkillSyncMode,
    SnapshotEntry,
    StreamCapability,
    StreamKind,
    StreamPayload,
    StructuredOutput,
    StructuredOutputCapability,
    StructuredOutputSource,
    SystemPromptCapability,
    TerminalPayload,
    TranscriptItem,
    TranscriptKind,
    Usage,
    WorkspaceCapability,
    append_fingerprint_differs,
    append_system_prompt_fingerprint,
    canonical_session_config_fingerprint,
    check_append_system_prompt,
)
from referencedriver._codec import ReferenceSessionCodec
from referencedriver._config import (
    DEFAULT_MODEL,
    FINGERPRINT_DOMAIN,
    REFERENCE_DRIVER_TYPE,
    ReferenceConfig,
)
from referencedriver._decisions import (
    Action,
    Decision,
    decide,
    failure_action,
    run_shell,
    wanted_action,
)
from referencedriver._http import (
    ModelFault,
    converse,
    fault_failure,
    load_history,
    new_session_id,
    save_history,
)

__all__ = [
    "REFERENCE_SYSTEM_PROMPT",
    "ModelTurn",
    "ReferenceDriver",
    "ReferenceModel",
    "new_reference_driver",
]

# The suite's default live prompt; the scripted provider obeys it literally.
_OK_PROMPT = "Reply with exactly: OK"
# The value every structured-output run returns (it satisfies the suite's probe schema).
_STRUCTURED_JSON = '{"ok":true}'
_TOOL_ARGS = {"text": "ok"}


REFERENCE_SYSTEM_PROMPT = "You are the adaptertest reference agent."
"""The scripted agent's own system prompt; an appended system prompt follows it."""


@dataclass(frozen=True)
class ModelTurn:
    """What the scripted model was sent for one request: its system text, its user text
    and the tool results sent back to it (after a tool ran, or was refused)."""

    system_text: str
    user_text: str
    tool_results: tuple[str, ...] = ()


class ReferenceModel:
    """The scripted model behind the reference driver, keeping what each run sent it.

    Give one to :class:`ReferenceDriver` to see where a run puts its texts (the suite's
    SYS-02 reads ``requests`` through ``Options(model_requests=model.requests_so_far)``).
    Thread-safe: concurrent runs append under a lock and readers get a copy.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: list[ModelTurn] = []

    def receive(self, turn: ModelTurn) -> None:
        """Record one request."""
        with self._lock:
            self._requests.append(turn)

    @property
    def requests(self) -> list[ModelTurn]:
        """Every request so far, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    def requests_so_far(self) -> list[ModelTurn]:
        """The same as :attr:`requests`, as a callable for ``Options(model_requests=...)``."""
        return self.requests


class _RunOutput:
    """Per-run emission state: the transcript so far and the two sink channels.

    One instance per ``run`` call, so concurrent runs share nothing mutable.
    Everything handed to the sink is a deep copy, so a sink that keeps or
    mutates what it receives cannot change the response.
    """

    def __init__(self, sink: EventSink, *, streaming: bool, run_id: str, thread_id: str) -> None:
        self._sink = sink
        self._streaming = streaming
        self._stamp = {"run_id": run_id, "thread_id": thread_id}
        self.transcript: list[TranscriptItem] = []

    def event(self, event: RunEvent) -> None:
        """Emit an operational run event; ``seq`` and ``timestamp`` stay zero (RUN-03)."""
        self._sink.emit(event)

    def item(self, item: TranscriptItem) -> None:
        """Append to the transcript and mirror it as an ``item`` event (RUN-02, RUN-04)."""
        self.transcript.append(item)
        self._sink.emit(RunEvent(type=RunEventType.ITEM, item=item.model_copy(deep=True)))

    def succeed(self, usage: Usage) -> None:
        """End a successful run: the result item, then the terminal payload, last of all
        (every lifecycle is closed by now: EVT-02, EVT-11), then the lifecycle event."""
        self.item(
            TranscriptItem(
                kind=TranscriptKind.RESULT, text="success", subtype="success", usage=usage
            )
        )
        self.stream(StreamPayload(kind=StreamKind.RUN_FINISHED, usage=usage))
        self.event(RunEvent(type=RunEventType.LIFECYCLE, text="run completed"))

    def stream(self, payload: StreamPayload) -> None:
        """Emit a stream payload, only on streaming requests, stamped with run and thread.

        Sequence, timestamp and role stay zero: core owns them (EVT-09, EVT-10).
        """
        if self._streaming:
            self._sink.emit_stream(payload.model_copy(update=self._stamp, deep=True))


class ReferenceDriver:
    """In-memory driver that implements the whole SPI and passes every clause.

    It holds only its frozen config, so one instance serves any number of
    concurrent runs. It implements every optional capability except
    ``close_processes``: it declares no persistent process.
    """

    def __init__(
        self, config: ReferenceConfig | None = None, *, model: ReferenceModel | None = None
    ) -> None:
        self._config = config if config is not None else ReferenceConfig()
        self._model_side = model

    @property
    def config(self) -> ReferenceConfig:
        """The construction config (immutable)."""
        return self._config

    def _model(self) -> str:
        return self._config.model or DEFAULT_MODEL

    # -- static declaration and config -------------------------------------------------

    def descriptor(self) -> Descriptor:
        """Declare exactly what this driver delivers; built fresh on every call (DRV-02/03)."""
        return Descriptor(
            type=REFERENCE_DRIVER_TYPE,
            display_name="Adaptertest Reference Driver",
            models=(ModelInfo(id=self._model(), label="Reference Model"),),
            config_schema=ConfigSchema(
                fields=(
                    ConfigField(
                        name="model",
                        label="Model",
                        type="text",
                        group="model",
                        default=DEFAULT_MODEL,
                    ),
                    ConfigField(
                        name="cwd", label="Working directory", type="text", group="command"
                    ),
                )
            ),
            sessions=SessionCapability(supports_resume=True),
            skills=SkillCapability(supported=True, mode=SkillSyncMode.EPHEMERAL),
            workspace=WorkspaceCapability(supported=True),
            structured_output=StructuredOutputCapability(
                json_schema_native=True,
                json_schema_prompt_validate=True,
                works_with_run=True,
                works_with_streaming=True,
                notes="in-memory reference implementation",
            ),
            # The scripted model's system prompt takes an appended text (SYS-01/02).
            system_prompt=SystemPromptCapability(append=True),
            # Permission decisions go to the host or are taken by policy; questions are
            # asked or refused (HIL). There is no way to ask the same thing twice: no retry.
            run_policy_caps=RunPolicyCapabilities(
                permission=HumanDecisionSupport(ask=True, auto_approve=True, auto_reject=True),
                question=QuestionSupport(ask=True, auto_reject=True),
            ),
        )

    def validate_config(self, config: object | None) -> None:
        """Accept None (the captured config is used) or a ``ReferenceConfig`` (CFG-01..03)."""
        if config is None or isinstance(config, ReferenceConfig):
            return
        # provider: a real driver also checks values here (binary exists, model known ...).
        raise InvalidDriverConfigError(
            REFERENCE_DRIVER_TYPE,
            TypeError(f"unsupported config type {type(config).__qualname__}"),
        )

    # -- inspection probes: each validates its config argument first --------------------

    async def check_environment(self, config: object | None) -> EnvironmentReport:
        """Report a healthy environment (CAP-03)."""
        self.validate_config(config)
        # provider: look for the CLI binary, its version and credentials.
        return EnvironmentReport(
            driver_type=REFERENCE_DRIVER_TYPE,
            status=EnvironmentStatus.PASS,
            healthy=True,
            summary="in-memory driver, nothing to install",
            checks=[
                EnvironmentCheck(
                    code="reference_ready", level="pass", message="no external tool needed"
                )
            ],
        )

    async def list_models(self, config: object | None) -> list[ModelInfo]:
        """List the one configured model, as the descriptor does (CAP-04)."""
        self.validate_config(config)
        # provider: ask the CLI or its API for the models the account can use.
        return list(self.descriptor().models)

    async def detect_model(
        self, config: object | None, profile: ProfileSelection | None
    ) -> DetectedModel | None:
        """Report the model of the given config, else of the captured one (CAP-05)."""
        self.validate_config(config)
        model = self._model()
        if isinstance(config, ReferenceConfig) and config.model:
            model = config.model
        # provider: fall back to the model named in the provider's own config file.
        return DetectedModel(model=model, provider=REFERENCE_DRIVER_TYPE, source="config")

    async def get_profile(
        self, config: object | None, agent: AgentIdentity, profile: ProfileSelection | None
    ) -> AgentProfile:
        """Report a fixed, supported profile directory (CAP-06)."""
        self.validate_config(config)
        # provider: resolve the CLI's home dir (selection, env var, then default).
        return AgentProfile(
            driver_type=REFERENCE_DRIVER_TYPE,
            supported=True,
            dir="adaptertest-reference-profile",
            env_var="ADAPTERTEST_REFERENCE_HOME",
            source=AgentProfileSource.DEFAULT,
        )

    async def get_quota(
        self, config: object | None, profile: ProfileSelection | None
    ) -> QuotaReport:
        """Report one unlimited window (CAP-07)."""
        self.validate_config(config)
        # provider: query the account; put unavailability into the report, do not raise.
        return QuotaReport(
            driver_type=REFERENCE_DRIVER_TYPE,
            provider=REFERENCE_DRIVER_TYPE,
            source="static",
            available=True,
            windows=[QuotaWindow(label="session", value_label="unlimited")],
        )

    async def config_schema(self, config: object | None) -> ConfigSchema | None:
        """Return the descriptor's static schema (CAP-08)."""
        self.validate_config(config)
        return self.descriptor().config_schema

    # -- skills --------------------------------------------------------------------------

    async def list_skills(
        self,
        config: object | None,
        payload: ResolvedSkills,
        selected: list[str] | None,
        resolved: list[Skill] | None,
        profile: ProfileSelection | None,
    ) -> SkillSnapshot:
        """Echo the selection and the whole catalogue without changing anything (CAP-09)."""
        self.validate_config(config)
        # provider: read the profile's skill directory to report what is really there.
        return self._skill_snapshot(payload, selected, resolved)

    async def inject_skills(
        self, config: object | None, payload: ResolvedSkills, profile: ProfileSelection | None
    ) -> None:
        """Validate only: skills are applied inside ``run``, after its guards pass."""
        self.validate_config(config)

    async def sync_skills(
        self,
        config: object | None,
        payload: ResolvedSkills,
        selected: list[str] | None,
        resolved: list[Skill] | None,
        profile: ProfileSelection | None,
    ) -> SkillSnapshot:
        """Report the selection as installed; the state is ephemeral, nothing is written."""
        self.validate_config(config)
        # provider: write or remove the managed skill directories of the profile.
        return self._skill_snapshot(payload, selected, resolved)

    def _skill_snapshot(
        self, payload: ResolvedSkills, selected: list[str] | None, resolved: list[Skill] | None
    ) -> SkillSnapshot:
        return SkillSnapshot(
            driver_type=REFERENCE_DRIVER_TYPE,
            supported=True,
            mode=payload.mode or SkillSyncMode.EPHEMERAL,
            selected=list(selected or ()),
            # The catalogue is copied, never pruned.
            resolved=[skill.model_copy(deep=True) for skill in resolved or ()],
            entries=[
                SnapshotEntry(
                    key=entry.key,
                    runtime_name=entry.runtime_name,
                    selected=True,
                    required=entry.required,
                    state=SkillState.INSTALLED,
                    origin=SkillOrigin.MANAGED,
                    source_path=entry.source_path,
                )
                for entry in payload.entries
            ],
            warnings=list(payload.warnings),
            fingerprint=payload.fingerprint,
        )

    # -- streaming and sessions ----------------------------------------------------------

    def stream_capability(self) -> StreamCapability:
        """Declare token-level text, reasoning, streamed tool args and HITL payloads (CAP-10)."""
        return StreamCapability(
            native=True, token_level=True, reasoning=True, tool_call_args=True, hitl=True
        )

    def session_codec(self) -> ReferenceSessionCodec:
        """Return the codec that makes checkpoints resumable (CAP-01)."""
        return ReferenceSessionCodec()

    def session_config_fingerprint(self) -> str:
        """Fingerprint the whole construction config under the codec's domain (CAP-01)."""
        return canonical_session_config_fingerprint(FINGERPRINT_DOMAIN, self._config)

    # -- the run -------------------------------------------------------------------------

    async def run(self, request: Request, sink: EventSink) -> Response:
        """Run one scripted turn: reasoning, an ``echo`` tool call, then the reply.

        Stream payloads go out only when ``request.streaming``; run events and
        transcript items go out either way, so the transcript mirror holds.
        """
        await anyio.lowlevel.checkpoint()  # a cancelled scope stops us before any output
        if request.config is not None:
            self.validate_config(request.config)
        if self._config.model_url:
            return await self._run_over_http(request, sink)
        model = request.model_override or self._model()
        run_id = request.run_id or "reference-run"
        state = request.session.state if request.session is not None else None
        session_id = (state.resume_id if state is not None else "") or "reference-session"
        cwd = request.workspace.cwd or self._config.cwd or "."
        out = _RunOutput(sink, streaming=request.streaming, run_id=run_id, thread_id=session_id)

        # The appended system prompt: refused before anything starts when it is not
        # valid UTF-8 or holds NUL (a driver without an append mechanism passes
        # supported=False; one that puts the text on the command line passes
        # inline_limit=APPEND_INLINE_LIMIT), and a session captured under another
        # append is not resumed.
        append = request.append_system_prompt
        check_append_system_prompt(REFERENCE_DRIVER_TYPE, append, supported=True)
        if state is not None and append_fingerprint_differs(state.data, append):
            raise RunError(
                "the stored session was captured with a different appended system prompt; "
                "start a new session"
            )
        # provider: build the CLI command line from the whole request and start it in cwd.
        # The append goes to the CLI's own append mechanism, unchanged; never into the
        # prompt. Diagnostics show REDACTED_APPEND in its place.
        if self._model_side is not None:
            self._model_side.receive(self._model_turn(request))
        invocation = {"model": model, "cwd": cwd}
        if append:
            invocation["append_system_prompt"] = REDACTED_APPEND
        out.event(
            RunEvent(
                type=RunEventType.INVOCATION,
                text="reference driver invocation",
                metadata=invocation,
            )
        )
        out.event(RunEvent(type=RunEventType.SPAWN, text="in-memory run, no child process"))
        out.stream(StreamPayload(kind=StreamKind.RUN_STARTED))
        out.item(TranscriptItem(kind=TranscriptKind.INIT, model=model, session_id=session_id))

        if self._config.fail_run:
            failure = RunFailure(
                code=FailureCode.AGENT_ERROR,
                message="the reference config asked this run to fail",
            )
            return self._fail(out, model, failure)

        # provider: from here on, parse the CLI's event stream; each provider event
        # becomes stream payloads plus, once complete, one transcript item.
        thinking = "Planning the reply."
        out.stream(StreamPayload(kind=StreamKind.REASONING_START, message_id="reason-1"))
        out.stream(
            StreamPayload(kind=StreamKind.REASONING_CONTENT, message_id="reason-1", delta=thinking)
        )
        out.stream(StreamPayload(kind=StreamKind.REASONING_END, message_id="reason-1"))
        out.item(TranscriptItem(kind=TranscriptKind.THINKING, text=thinking))

        call = "call-1"
        out.stream(StreamPayload(kind=StreamKind.TOOL_CALL_START, tool_call_id=call, name="echo"))
        out.stream(
            StreamPayload(
                kind=StreamKind.TOOL_CALL_ARGS,
                tool_call_id=call,
                delta=json.dumps(_TOOL_ARGS, separators=(",", ":")),
            )
        )
        out.stream(StreamPayload(kind=StreamKind.TOOL_CALL_END, tool_call_id=call))
        out.stream(
            StreamPayload(
                kind=StreamKind.TOOL_CALL_RESULT, tool_call_id=call, result=dict(_TOOL_ARGS)
            )
        )
        out.item(
            TranscriptItem(
                kind=TranscriptKind.TOOL_CALL,
                tool_use_id=call,
                tool_name="echo",
                input=dict(_TOOL_ARGS),
            )
        )
        out.item(TranscriptItem(kind=TranscriptKind.TOOL_RESULT, tool_use_id=call, text="ok"))

        action = wanted_action(request.prompt)
        if action is not None:
            refused = await self._act(request, sink, out, action, session_id)
            if refused is not None:
                return self._fail(out, model, refused)

        output, structured = self._reply(request)
        out.stream(StreamPayload(kind=StreamKind.TEXT_START, message_id="msg-1"))
        half = len(output) // 2 or len(output)  # two token-level deltas, one if too short
        for delta in (output[:half], output[half:]):
            if delta:
                out.stream(
                    StreamPayload(kind=StreamKind.TEXT_CONTENT, message_id="msg-1", delta=delta)
                )
        out.stream(StreamPayload(kind=StreamKind.TEXT_END, message_id="msg-1"))
        out.item(TranscriptItem(kind=TranscriptKind.ASSISTANT, text=output))

        usage = Usage(input_tokens=12, output_tokens=34)
        out.succeed(usage)

        return Response(
            output=output,
            # provider: keep the full stdout/stderr bytes and the verbatim terminal event.
            raw_streams=RawStreams(
                terminal=TerminalPayload(event="result", raw_json='{"subtype":"success"}')
            ),
            transcript=out.transcript,
            exit_code=0,
            usage=usage.model_copy(),
            checkpoint=self._checkpoint(request, session_id, cwd),
            provider=REFERENCE_DRIVER_TYPE,
            model=model,
            summary="reference run finished",
            structured_output=structured,
        )

    async def _run_over_http(self, request: Request, sink: EventSink) -> Response:
        """The network mode: the model at ``model_url``, tool calls run for real."""
        config = self._config
        if "\x00" in request.prompt:
            # No HTTP body, argv or file name carries it intact: refuse before starting.
            raise ValueError("the prompt contains a NUL byte; the run was not started")
        state = request.session.state if request.session is not None else None
        cwd = request.workspace.cwd or config.cwd or "."
        history: list[dict[str, object]] = []
        if state is not None:
            self._check_guard(state, request, cwd)
            stored = self._load_history(state.resume_id)
            if stored is None:
                raise RunError(f"no stored session {state.resume_id!r} to resume")
            history = stored
        session_id = state.resume_id if state is not None else new_session_id()
        model = request.model_override or self._model()
        run_id = request.run_id or "reference-run"
        out = _RunOutput(sink, streaming=request.streaming, run_id=run_id, thread_id=session_id)
        out.event(
            RunEvent(
                type=RunEventType.INVOCATION,
                text="reference driver invocation (network mode)",
                metadata={"model": model, "cwd": cwd, "model_url": config.model_url},
            )
        )
        out.stream(StreamPayload(kind=StreamKind.RUN_STARTED))
        out.item(TranscriptItem(kind=TranscriptKind.INIT, model=model, session_id=session_id))
        system = REFERENCE_SYSTEM_PROMPT
        if request.append_system_prompt:
            system = f"{system}\n\n{request.append_system_prompt}"
        fault: ModelFault | None = None
        with anyio.move_on_after(config.timeout or math.inf) as deadline:
            try:
                talk = await converse(
                    url=config.model_url,
                    api_key=config.api_key,
                    model=model,
                    system=system,
                    history=history,
                    prompt=request.prompt,
                    cwd=cwd,
                    env=config.env,
                    out=out,
                    retries=config.model_retries,
                )
            except ModelFault as exc:
                fault = exc
        if deadline.cancelled_caught:
            failure = RunFailure(
                code=FailureCode.AGENT_ERROR,
                message=f"the run passed its deadline of {config.timeout:g} s",
            )
            return self._fail(out, model, failure, timed_out=True)
        if fault is not None:
            return self._fail(out, model, fault_failure(fault))
        self._save_history(session_id, talk.messages)
        usage = talk.usage
        out.succeed(usage)
        return Response(
            output=talk.output,
            raw_streams=RawStreams(),
            transcript=out.transcript,
            exit_code=0,
            usage=usage.model_copy(),
            checkpoint=self._checkpoint(request, session_id, cwd),
            provider=REFERENCE_DRIVER_TYPE,
            model=talk.model or model,
            summary="reference run finished",
        )

    def _load_history(self, session_id: str) -> list[dict[str, object]] | None:
        """The stored conversation of a session (None: no such session)."""
        # provider: a CLI keeps its sessions itself; the driver passes only the handle.
        return load_history(self._config.home, session_id)

    def _save_history(self, session_id: str, messages: list[dict[str, object]]) -> None:
        """Store the conversation under the home, where a new process finds it."""
        save_history(self._config.home, session_id, messages)

    @staticmethod
    def _check_guard(state: SessionState, request: Request, cwd: str) -> None:
        """Refuse, before anything starts, a session stored under another cwd or profile."""
        current = {
            SESSION_PARAM_CWD: cwd,
            SESSION_PARAM_PROFILE_FINGERPRINT: request.profile_payload.session_fingerprint(),
        }
        for key, value in current.items():
            stored = state.data.get(key, "")
            if stored and stored != value:
                raise RunError(f"the session was stored with another {key}; refusing to resume it")

    async def _act(
        self, request: Request, sink: EventSink, out: _RunOutput, action: Action, session_id: str
    ) -> RunFailure | None:
        """Call the tool ``action`` needs once its decision allows it; the failure that
        ends the run when the decision stops it, None when the run goes on."""
        call = "call-2"
        out.stream(
            StreamPayload(kind=StreamKind.TOOL_CALL_START, tool_call_id=call, name=action.tool)
        )
        out.stream(
            StreamPayload(
                kind=StreamKind.TOOL_CALL_ARGS,
                tool_call_id=call,
                delta=json.dumps(action.arguments, separators=(",", ":")),
            )
        )
        out.stream(StreamPayload(kind=StreamKind.TOOL_CALL_END, tool_call_id=call))
        out.item(
            TranscriptItem(
                kind=TranscriptKind.TOOL_CALL,
                tool_use_id=call,
                tool_name=action.tool,
                input=dict(action.arguments),
            )
        )
        # provider: the CLI asks before it runs the tool; its prompt goes to the host.
        decision = await decide(
            action,
            request.policy.human_decision,
            sink,
            out.stream,
            run_id=request.run_id,
            thread_id=session_id,
            tool_call_id=call,
        )
        allowed = decision.result in (DecisionResult.APPROVED, DecisionResult.ANSWERED)
        policy = request.policy.human_decision
        if not allowed and failure_action(policy, decision.result) == FailureAction.ABORT:
            return self._decision_failure(action, decision)
        result = self._perform(action, decision)
        out.stream(
            StreamPayload(
                kind=StreamKind.TOOL_CALL_RESULT, tool_call_id=call, result={"output": result}
            )
        )
        out.item(TranscriptItem(kind=TranscriptKind.TOOL_RESULT, tool_use_id=call, text=result))
        if self._model_side is not None:
            # The tool's result goes back to the model in the next request.
            turn = self._model_turn(request)
            self._model_side.receive(
                ModelTurn(turn.system_text, turn.user_text, tool_results=(result,))
            )
        return None

    @staticmethod
    def _perform(action: Action, decision: Decision) -> str:
        """Run the tool when the decision allows it; what the model gets back either way."""
        if action.kind == HumanDecisionKind.QUESTION:
            if decision.result == DecisionResult.ANSWERED:
                return decision.text
            return f"no answer: the question was {decision.result.value}"
        if decision.result == DecisionResult.APPROVED:
            return run_shell(action.detail)
        return f"not run: the decision was {decision.result.value}"

    def _decision_failure(self, action: Action, decision: Decision) -> RunFailure:
        """The failure of a run that a rejected, aborted or unanswered decision ends."""
        timed_out = decision.result == DecisionResult.TIMED_OUT
        return RunFailure(
            code=FailureCode.TIMEOUT if timed_out else FailureCode.REJECT,
            message=f"the {action.kind.value} decision was {decision.result.value}",
            human_decision=HumanDecisionFailure(
                kind=action.kind,
                source="reference",
                decision=decision.result,
                request=decision.request,
                attempts=1,
            ),
        )

    @staticmethod
    def _model_turn(request: Request) -> ModelTurn:
        """What the scripted model is sent: its own system prompt (plus the append) and
        the prompt as the user turn."""
        system = REFERENCE_SYSTEM_PROMPT
        if request.append_system_prompt:
            system = f"{system}\n\n{request.append_system_prompt}"
        return ModelTurn(system_text=system, user_text=request.prompt)

    def _reply(self, request: Request) -> tuple[str, StructuredOutput | None]:
        """Choose the final text and, for native structured output, its typed value."""
        # provider: the CLI's final assistant message (and its native structured result).
        if request.output_schema is None:
            if request.prompt == _OK_PROMPT:
                return "OK", None
            return f"Reference reply: {request.prompt}", None
        if request.structured_output_source != StructuredOutputSource.NATIVE:
            # prompt_validate: core validates the output text itself.
            return _STRUCTURED_JSON, None
        schema_text = request.output_schema.schema_document
        return _STRUCTURED_JSON, StructuredOutput(
            format=OutputFormat.JSON_SCHEMA,
            source=StructuredOutputSource.NATIVE,
            raw_json=_STRUCTURED_JSON,
            value=json.loads(_STRUCTURED_JSON),
            valid=True,
            schema_hash=hashlib.sha256(schema_text.encode("utf-8", "surrogatepass")).hexdigest(),
        )

    def _checkpoint(self, request: Request, session_id: str, cwd: str) -> Checkpoint:
        """Build a resumable checkpoint: the session handle plus its guard values (RSP-01)."""
        state = request.session.state if request.session is not None else None
        data = dict(state.data) if state is not None else {}
        data[SESSION_PARAM_CWD] = cwd
        profile_fingerprint = request.profile_payload.session_fingerprint()
        if profile_fingerprint:
            data[SESSION_PARAM_PROFILE_FINGERPRINT] = profile_fingerprint  # SES-09
        # The append is part of the session: its fingerprint, absent for none (SYS-03).
        data.pop(SESSION_PARAM_APPEND_SYSTEM_PROMPT_FINGERPRINT, None)
        if request.append_system_prompt:
            data[SESSION_PARAM_APPEND_SYSTEM_PROMPT_FINGERPRINT] = append_system_prompt_fingerprint(
                request.append_system_prompt
            )
        # provider: the resume id is the provider's own session handle.
        return Checkpoint(
            valid=True,
            state=SessionState(resume_id=session_id, display_id=session_id, data=data),
        )

    def _fail(
        self, out: _RunOutput, model: str, failure: RunFailure, *, timed_out: bool = False
    ) -> Response:
        """End the run with ``failure``: no checkpoint, exit code 1 (``timed_out`` when the
        run passed its deadline)."""
        out.item(
            TranscriptItem(
                kind=TranscriptKind.FAILURE,
                text=failure.message,
                metadata={"code": str(failure.code)},
            )
        )
        out.stream(StreamPayload(kind=StreamKind.RUN_ERROR, error=failure))
        out.event(RunEvent(type=RunEventType.LIFECYCLE, text="run failed"))
        return Response(
            raw_streams=RawStreams(),
            transcript=out.transcript,
            exit_code=1,
            timed_out=timed_out,
            provider=REFERENCE_DRIVER_TYPE,
            model=model,
            summary="reference run failed",
            failure=failure,
        )


def new_reference_driver(
    config: ReferenceConfig | None = None, *, model: ReferenceModel | None = None
) -> ReferenceDriver:
    """Build the reference driver; no config means ``ReferenceConfig()``. ``model``
    records what each run sends the scripted model."""
    return ReferenceDriver(config, model=model)
