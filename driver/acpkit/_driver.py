"""The ACP driver: one turn of an agent per run, over a process per run or one shared.

Subclass :class:`ACPDriver` to name a driver and its agent (or use it as it is with a
configured command). See docs/acp.md for the mapping and the modes.
"""

from __future__ import annotations

import concurrent.futures
import json
import math
import os
import threading
from dataclasses import dataclass, field
from typing import ClassVar, NoReturn

import acp
import anyio
import anyio.lowlevel
from acp import schema

from driver import (
    SESSION_PARAM_CWD,
    SESSION_PARAM_PROFILE_FINGERPRINT,
    SESSION_PARAM_WORKSPACE_ID,
    Checkpoint,
    Descriptor,
    EventSink,
    FailureCode,
    HumanDecisionSupport,
    ModelInfo,
    ObservationCapability,
    ObservationSupport,
    OutputSchema,
    ProcessCapability,
    RawStreams,
    Request,
    Response,
    RunError,
    RunEvent,
    RunEventType,
    RunFailure,
    RunPolicyCapabilities,
    SessionCapability,
    SessionState,
    StreamCapability,
    StreamKind,
    StreamPayload,
    StructuredOutput,
    StructuredOutputCapability,
    StructuredOutputInvalidPolicy,
    StructuredOutputSource,
    StructuredOutputUnsupportedError,
    TranscriptItem,
    TranscriptKind,
    Usage,
    WorkspaceCapability,
    check_append_system_prompt,
)
from driver.acpkit._agent import (
    AgentProcess,
    BrokenLine,
    ExtNotice,
    PermissionAsk,
    SessionUpdate,
    StderrChunk,
    WireLine,
)
from driver.acpkit._bridge import Inbox, LoopThread
from driver.acpkit._config import ACPConfig
from driver.acpkit._decision import decide_permission
from driver.acpkit._mapping import TurnMapper
from driver.acpkit._structured import StructuredOutputExtension
from driver.clikit import (
    ProgramDriver,
    RunOutput,
    cli_config_schema,
    judge_structured,
    native_schema,
)
from driver.clikit._turn import check_guard, refuse_nul

__all__ = ["ASKS_PERMISSION", "CANCEL_GRACE", "ACPDriver"]

CANCEL_GRACE = 5.0
"""Seconds a cancelled turn gets to answer its prompt with ``cancelled``."""

_STOP_FAILURES = {
    "max_tokens": "the agent stopped at its token limit (stop reason max_tokens)",
    "max_turn_requests": "the agent stopped at its limit of model requests in one turn "
    "(stop reason max_turn_requests)",
    "refusal": "the agent refused the prompt (stop reason refusal)",
    "cancelled": "the agent cancelled the turn on its own (stop reason cancelled)",
}


_NO_LOAD_CHANGE = (
    "cannot switch the session between structured and plain answers (or to another schema): "
    "the agent does not declare loadSession, which reopens a session with new options"
)

_CANCELLED = schema.RequestPermissionResponse(outcome=schema.DeniedOutcome(outcome="cancelled"))


@dataclass(slots=True)
class _Done:
    """The prompt call ended: with a response, or the error it raised."""

    response: schema.PromptResponse | None = None
    error: BaseException | None = None


class _Shared:
    """The one agent process of a persistent driver, on a loop thread of its own."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.thread: LoopThread | None = None
        self.agent: AgentProcess | None = None
        self.retired: list[AgentProcess] = []

    def loop_thread(self) -> LoopThread:
        with self._lock:
            if self.thread is None or not self.thread.running:
                self.thread = LoopThread("acp-agents")
            return self.thread


@dataclass(slots=True)
class _TurnState:
    stdout: bytearray = field(default_factory=bytearray)
    stderr: bytearray = field(default_factory=bytearray)
    failure: RunFailure | None = None
    response: schema.PromptResponse | None = None
    timed_out: bool = False
    cancel_sent: bool = False
    output: str = ""
    usage: Usage | None = None
    extension: StructuredOutputExtension | None = None
    """Reads the structured answer from extension notifications (a structured run)."""
    structured_json: str | None = None
    """The structured answer's JSON text, once an extension notification brought it."""


ASKS_PERMISSION = HumanDecisionSupport(ask=True, auto_approve=True, auto_reject=True, retry=True)
"""Every permission mode: the agent asks through ``session/request_permission`` and the
driver answers as the policy says."""


class ACPDriver(ProgramDriver[ACPConfig]):
    """Drives an agent that speaks the Agent Client Protocol (version 1) on its stdio.

    One instance serves concurrent runs. With ``ACPConfig.persistent`` every run shares
    one agent process (``close_processes`` ends it); otherwise each run starts and ends
    its own. The client offers the agent no file system and no terminal: the agent uses
    its own tools in the run's working directory.
    """

    driver_type: ClassVar[str] = "acp"
    display_name: ClassVar[str] = "ACP agent"
    fingerprint_domain: ClassVar[str] = "agent-driver-kit/acp-driver/v1"
    install_hint: ClassVar[str] = "install the agent and configure its ACP command"
    extra_args_hint: ClassVar[str] = "--acp"
    declares_todos: ClassVar[bool] = False
    """Map ``plan`` updates to ``todo.updated`` (declared for streaming runs)."""
    capability: ClassVar[StreamCapability] = StreamCapability(
        native=True, token_level=True, reasoning=True, hitl=True
    )
    config_type: ClassVar[type[ACPConfig]] = ACPConfig

    def __init__(
        self,
        config: ACPConfig,
        *,
        structured: StructuredOutputExtension | None = None,
        permission: HumanDecisionSupport = ASKS_PERMISSION,
    ) -> None:
        """``config`` names the agent's command: there is no default agent. ``structured``
        is the agent's native structured output, for an agent that has one. ``permission``
        is what the driver can honour of a permission policy with this agent: every mode
        by default; less for an agent that runs its tools without ever sending
        ``session/request_permission`` (then neither asking nor refusing is possible)."""
        super().__init__(self.config_type, config)
        self._shared = _Shared()
        self._structured = structured
        self._permission = permission

    # -- declarations ---------------------------------------------------------------------

    def descriptor(self) -> Descriptor:
        """Resume (the ACP session id), workspaces, the permission modes it was given,
        the process mode of the config, native structured output when the driver was given
        the agent's extension; no system prompt, skills or MCP."""
        support = self._permission
        return Descriptor(
            type=self.driver_type,
            display_name=self.display_name,
            models=(ModelInfo(id=self._config.model, label=self._config.model),)
            if self._config.model
            else (),
            config_schema=cli_config_schema(
                program=self._config.command[0],
                extra_args_hint=self.extra_args_hint,
                timeout=self._config.timeout,
            ),
            sessions=SessionCapability(supports_resume=True),
            workspace=WorkspaceCapability(supported=True),
            process=ProcessCapability(persistent=self._config.persistent),
            run_policy_caps=RunPolicyCapabilities(permission=support),
            observation=ObservationCapability(
                streaming=ObservationSupport(todos=self.declares_todos)
            ),
            structured_output=self._structured_capability(),
        )

    def _structured_capability(self) -> StructuredOutputCapability:
        extension = self._structured
        if extension is None:
            return StructuredOutputCapability()
        return StructuredOutputCapability(
            json_schema_native=True,
            works_with_run=True,
            works_with_streaming=True,
            notes=extension.notes,
        )

    def _new_agent(self, config: ACPConfig, cwd: str, owner: Inbox | None) -> AgentProcess:
        return AgentProcess(
            [*config.command, *config.extra_args],
            env=self.process_env(config),
            cwd=cwd or None,
            close_grace=config.close_grace,
            owner=owner,
        )

    async def close_processes(self) -> None:
        """End the shared agent process and everything it started (idempotent)."""
        shared = self._shared
        thread, agent = shared.thread, shared.agent
        shared.agent = None
        if thread is None:
            return
        with anyio.CancelScope(shield=True):
            for old in [*shared.retired, *([agent] if agent is not None else [])]:
                await thread.call(old.close())
            shared.retired.clear()
            await anyio.to_thread.run_sync(thread.stop)

    async def _acquire(self, config: ACPConfig, cwd: str) -> tuple[AgentProcess, bool]:
        """The shared process, started (and initialized) when there is none alive
        (on the loop thread; one at a time)."""
        shared = self._shared
        agent = shared.agent
        if agent is not None and agent.alive:
            return agent, False
        if agent is not None:
            shared.retired.append(agent)  # died: reaped at close, its marker ends the rest
            await agent.close()
        fresh = self._new_agent(config, config.cwd or cwd, None)
        shared.agent = fresh
        try:
            await fresh.start()
        except BaseException:
            await fresh.close()
            if shared.agent is fresh:
                shared.agent = None
            raise
        return fresh, True

    # -- the run --------------------------------------------------------------------------

    async def run(self, request: Request, sink: EventSink) -> Response:
        """One ``session/prompt`` turn; ``request.config``, when given, replaces the
        captured config."""
        await anyio.lowlevel.checkpoint()
        config = self._config_for(request.config)
        wanted = self._native_schema(request)
        meta = self._structured.session_meta(wanted) if self._structured and wanted else {}
        # ACP version 1 has no way to append to an agent's system prompt.
        check_append_system_prompt(self.driver_type, request.append_system_prompt, supported=False)
        refuse_nul(self.driver_type, request.prompt)
        state = request.session.state if request.session is not None else None
        resume_id = state.resume_id if state is not None else ""
        cwd = os.path.abspath(request.workspace.cwd or config.cwd or os.getcwd())
        guard = {
            SESSION_PARAM_CWD: cwd,
            SESSION_PARAM_PROFILE_FINGERPRINT: request.profile_payload.session_fingerprint(),
        }
        if state is not None:
            check_guard(state, guard, "")  # no append: refused above
        model = request.model_override or config.model
        out = RunOutput(
            sink, streaming=request.streaming, run_id=request.run_id, thread_id=resume_id
        )
        out.event(
            RunEvent(
                type=RunEventType.INVOCATION,
                text=f"{self.driver_type} run (prompt withheld)",
                metadata={
                    "program": config.command[0],
                    "cwd": cwd,
                    "model": model,
                    "resume": resume_id,
                    "mode": "persistent" if config.persistent else "one-shot",
                },
            )
        )
        out.stream(StreamPayload(kind=StreamKind.RUN_STARTED))
        inbox = Inbox()
        turn = _TurnState(extension=self._structured if wanted is not None else None)
        if config.persistent:
            thread = self._shared.loop_thread()
            owned: AgentProcess | None = None
        else:
            thread = LoopThread("acp-run")
            owned = self._new_agent(config, cwd, inbox)
        session_id = resume_id
        agent: AgentProcess | None = owned
        deadline = anyio.current_time() + config.timeout if config.timeout else math.inf
        try:
            with anyio.CancelScope(deadline=deadline) as startup:
                try:
                    if owned is not None:
                        await thread.call(owned.start())
                        out.event(_spawn_event(owned))
                    else:
                        shared, started = await thread.call(self._acquire(config, cwd))
                        agent = shared
                        if started:
                            out.event(_spawn_event(shared))
                except (acp.RequestError, ConnectionError) as exc:
                    if agent is not None:
                        await thread.call(agent.wait_exit(2.0))
                    turn.failure = _agent_failure("initialize", exc, agent)
                except OSError as exc:
                    self._not_started(out, config, model, exc)
                if turn.failure is None and agent is not None:
                    session_id = await self._open_session(thread, agent, resume_id, cwd, meta, turn)
            if startup.cancelled_caught and turn.failure is None:
                turn.timed_out = True
                turn.failure = RunFailure(
                    code=FailureCode.AGENT_ERROR,
                    message=f"the agent was not ready for the prompt within {config.timeout:g} s "
                    "(initialize or the session took too long)",
                )
            if turn.failure is None and agent is not None:
                out.thread_id = session_id
                await self._turn(
                    request, sink, config, thread, agent, session_id, out, inbox, turn, deadline
                )
        except anyio.get_cancelled_exc_class():
            out.fail(RunFailure(code=FailureCode.CANCELLED, message="run cancelled"))
            raise
        finally:
            with anyio.CancelScope(shield=True):
                if agent is not None and session_id:
                    thread.call_soon(agent.detach, session_id)
                if owned is not None:
                    await thread.call(owned.close())
                    await anyio.to_thread.run_sync(thread.stop)
            inbox.close()
            _drain(inbox, out, turn)
        return self._response(request, out, turn, agent, owned, guard, session_id, model)

    def _native_schema(self, request: Request) -> OutputSchema | None:
        """The schema of a native structured run, else None; refused before launch when
        the agent has no native mechanism (``StructuredOutputUnsupportedError``) or the
        schema is unusable (``InvalidOutputSchemaError``)."""
        if request.structured_output_source != StructuredOutputSource.NATIVE:
            return None
        if self._structured is None:
            raise StructuredOutputUnsupportedError(
                self.driver_type,
                "ACP version 1 has no structured output and this agent offers no extension for it",
            )
        return native_schema(request)

    def _not_started(
        self, out: RunOutput, config: ACPConfig, model: str, error: OSError
    ) -> NoReturn:
        """The program could not be started: ``RunError`` with the partial response."""
        failure = RunFailure(
            code=FailureCode.AGENT_ERROR, message=f"cannot start {config.command[0]}: {error}"
        )
        _record_failure(out, failure)
        response = Response(
            transcript=out.transcript,
            provider=self.driver_type,
            model=model,
            summary=failure.message,
            failure=failure,
        )
        raise RunError(failure.message, response=response) from error

    async def _open_session(
        self,
        thread: LoopThread,
        agent: AgentProcess,
        resume_id: str,
        cwd: str,
        meta: dict[str, object],
        turn: _TurnState,
    ) -> str:
        """The run's session: a known one as it is, a stored one loaded, else a new one.

        A known session opened with other ``_meta`` (a structured run after a plain one,
        another schema) is loaded again with the run's, which an agent that takes options
        there applies to the session from then on.
        """
        try:
            known = agent.sessions.get(resume_id) if resume_id else None
            if known is not None and known == _meta_key(meta):
                return resume_id
            if resume_id:
                if not agent.load_session:
                    turn.failure = RunFailure(
                        code=FailureCode.AGENT_ERROR,
                        message=_NO_LOAD_CHANGE
                        if known is not None
                        else "cannot resume: the agent does not declare loadSession, so a "
                        "session of an earlier process cannot be loaded; start a new session",
                    )
                    return resume_id
                await thread.call(_load(agent, resume_id, cwd, meta))
                return resume_id
            return await thread.call(_new(agent, cwd, meta))
        except (acp.RequestError, ConnectionError) as exc:
            turn.failure = _agent_failure(
                "session/load" if resume_id else "session/new", exc, agent
            )
            return resume_id

    async def _turn(
        self,
        request: Request,
        sink: EventSink,
        config: ACPConfig,
        thread: LoopThread,
        agent: AgentProcess,
        session_id: str,
        out: RunOutput,
        inbox: Inbox,
        turn: _TurnState,
        deadline: float,
    ) -> None:
        """Send the prompt and map what arrives until its answer (or ``deadline``)."""
        mapper = TurnMapper(
            out, todos=self.declares_todos and request.observation.todos and request.streaming
        )
        future = thread.submit(_prompt(agent, session_id, request.prompt, inbox))
        future.add_done_callback(lambda f: inbox.put(_done(f)))

        async def cancel_turn() -> None:
            if not turn.cancel_sent:
                turn.cancel_sent = True
                await thread.call(_cancel(agent, session_id))

        waiting: list[PermissionAsk] = []
        """A permission request being decided: answered ``cancelled`` if the run ends."""

        async def pump() -> _Done | None:
            while True:
                item = await inbox.get()
                if item is None:
                    return None
                if isinstance(item, _Done):
                    return item
                if isinstance(item, PermissionAsk):
                    mapper.start_tool(item.tool_call)
                    if turn.cancel_sent:  # nothing is asked once the turn is being cancelled
                        thread.call_soon(_resolve, item, _CANCELLED)
                        continue
                    waiting.append(item)
                    # A human's time is the policy's to bound, not the run's deadline's: the
                    # deadline stands still while the host decides.
                    asked_at, paused = anyio.current_time(), limit.deadline
                    limit.deadline = math.inf
                    decided = await decide_permission(
                        request, sink, session_id, item.tool_call, item.options, out.stream
                    )
                    limit.deadline = paused + (anyio.current_time() - asked_at)
                    waiting.remove(item)
                    thread.call_soon(_resolve, item, decided.response)
                    if decided.failure is not None and turn.failure is None:
                        turn.failure = decided.failure
                        await cancel_turn()
                    continue
                _take(item, out, mapper, turn)

        done: _Done | None = None
        limit = anyio.CancelScope(deadline=deadline)
        try:
            with limit:
                done = await pump()
            if limit.cancelled_caught:
                turn.timed_out = True
                with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_GRACE):
                    await cancel_turn()
                    done = await pump()
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_GRACE):
                for ask in waiting:  # ACP: a cancelled turn's open requests answer cancelled
                    thread.call_soon(_resolve, ask, _CANCELLED)
                await cancel_turn()
                await pump()
            mapper.close_block()
            raise
        mapper.close_block()
        mapper.finish_tools()
        turn.output = mapper.output()
        if done is not None and done.response is not None:
            turn.response = done.response
        turn.usage = mapper.usage(turn.response.usage if turn.response is not None else None)
        if turn.failure is not None:
            return
        if turn.timed_out:
            turn.failure = RunFailure(
                code=FailureCode.AGENT_ERROR,
                message=f"the agent did not end its turn within {config.timeout:g} s",
            )
        elif done is None or done.response is None:
            error = done.error if done is not None else None
            if not isinstance(error, acp.RequestError):  # an answer: the process is fine
                await thread.call(agent.wait_exit(2.0))
            turn.failure = _agent_failure("session/prompt", error, agent)
        elif done.response.stop_reason != "end_turn":
            reason = done.response.stop_reason
            turn.failure = RunFailure(
                code=FailureCode.CANCELLED if reason == "cancelled" else FailureCode.AGENT_ERROR,
                message=_STOP_FAILURES.get(reason, f"stop reason {reason}"),
                metadata={"stop_reason": reason},
            )

    def _response(
        self,
        request: Request,
        out: RunOutput,
        turn: _TurnState,
        agent: AgentProcess | None,
        owned: AgentProcess | None,
        guard: dict[str, str],
        session_id: str,
        model: str,
    ) -> Response:
        """Close the stream and describe the run; a success carries its session, a
        structured run its judged answer."""
        structured, turn.failure = _judge(request.output_schema, turn)
        metadata = {"acp.session_id": session_id} if session_id else {}
        if turn.response is not None:
            metadata["stop_reason"] = turn.response.stop_reason
        if agent is not None:
            metadata["agent.pid"] = str(agent.pid)
            info = agent.initialized.agent_info if agent.initialized else None
            if info is not None:
                metadata["agent"] = f"{info.name} {info.version}".strip()
        if owned is not None:
            metadata["agent.exit"] = owned.exit_description()
        checkpoint = None
        failure = turn.failure
        if failure is None:
            out.finish(turn.usage)
            data = dict(guard)
            if request.workspace.id:
                data[SESSION_PARAM_WORKSPACE_ID] = request.workspace.id
            checkpoint = Checkpoint(
                valid=True,
                state=SessionState(resume_id=session_id, display_id=session_id, data=data),
            )
        else:
            _record_failure(out, failure)
        # A structured turn may end with no text: its answer is the structured value.
        output = turn.output or (structured.raw_json if structured is not None else "")
        return Response(
            output=output,
            raw_streams=RawStreams(stdout=bytes(turn.stdout), stderr=bytes(turn.stderr)),
            transcript=out.transcript,
            timed_out=turn.timed_out,
            usage=turn.usage,
            checkpoint=checkpoint,
            provider=self.driver_type,
            model=model,
            summary=failure.message if failure is not None else f"{self.driver_type} run succeeded",
            structured_output=structured,
            failure=failure,
            metadata=metadata,
        )


# -- on the loop thread ------------------------------------------------------------------


def _meta_key(meta: dict[str, object]) -> str:
    return json.dumps(meta, sort_keys=True, separators=(",", ":")) if meta else ""


async def _new(agent: AgentProcess, cwd: str, meta: dict[str, object]) -> str:
    answer = await agent.connection().new_session(cwd=cwd, mcp_servers=[], **meta)
    session_id: str = answer.session_id
    agent.sessions[session_id] = _meta_key(meta)
    return session_id


async def _load(agent: AgentProcess, session_id: str, cwd: str, meta: dict[str, object]) -> None:
    # The history the agent replays goes nowhere: no run is attached to it yet.
    await agent.connection().load_session(cwd=cwd, session_id=session_id, mcp_servers=[], **meta)
    agent.sessions[session_id] = _meta_key(meta)


async def _prompt(
    agent: AgentProcess, session_id: str, text: str, inbox: Inbox
) -> schema.PromptResponse:
    agent.attach(session_id, inbox)
    answer: schema.PromptResponse = await agent.connection().prompt(
        session_id=session_id, prompt=[schema.TextContentBlock(type="text", text=text)]
    )
    return answer


async def _cancel(agent: AgentProcess, session_id: str) -> None:
    if agent.alive:
        try:
            await agent.connection().cancel(session_id=session_id)
        except (ConnectionError, OSError):
            return  # the process is gone; the prompt fails on its own


def _resolve(ask: PermissionAsk, answer: schema.RequestPermissionResponse) -> None:
    if not ask.answer.done():
        ask.answer.set_result(answer)


# -- on the run's side -------------------------------------------------------------------


def _done(future: concurrent.futures.Future[schema.PromptResponse]) -> _Done:
    if future.cancelled():
        return _Done(error=ConnectionError("the prompt call was cancelled"))
    error = future.exception()
    return _Done(error=error) if error is not None else _Done(response=future.result())


def _take(item: object, out: RunOutput, mapper: TurnMapper | None, turn: _TurnState) -> None:
    """Apply one inbox item other than a permission request or the end of the prompt."""
    if isinstance(item, WireLine):
        if item.direction == "in":
            turn.stdout += item.line
            out.chunk("stdout", item.line)
    elif isinstance(item, StderrChunk):
        turn.stderr += item.data
        out.chunk("stderr", item.data)
    elif isinstance(item, BrokenLine):  # kept in sight, as a CLI driver keeps a corrupt line
        turn.stdout += item.data
        out.chunk("stdout", item.data)
        text = item.data.decode("utf-8", "replace").strip()
        out.item(TranscriptItem(kind=TranscriptKind.STDOUT, text=text))
    elif isinstance(item, SessionUpdate) and mapper is not None:
        mapper.apply(item.update)
    elif isinstance(item, ExtNotice) and turn.extension is not None:
        found = turn.extension.structured_json(item.method, item.params)
        if found is not None:
            turn.structured_json = found


def _judge(
    wanted: OutputSchema | None, turn: _TurnState
) -> tuple[StructuredOutput | None, RunFailure | None]:
    """A structured run's answer, validated against its schema: a missing or invalid one
    fails a run that otherwise succeeded (unless the request takes it as it is)."""
    failure = turn.failure
    if turn.extension is None or wanted is None:
        return None, failure
    judged = judge_structured(wanted.schema_document, turn.structured_json)
    message = "the structured answer does not match the output schema: "
    if turn.structured_json is None:
        missing = "the agent ended its turn without a structured answer"
        judged = judged.model_copy(update={"validation_errors": [missing]})
        message = ""
    lenient = wanted.on_invalid == StructuredOutputInvalidPolicy.RETURN_INVALID
    if failure is None and not judged.valid and not lenient:
        failure = RunFailure(
            code=FailureCode.AGENT_ERROR,
            message=message + "; ".join(judged.validation_errors[:3]),
            metadata={"structured_output": "invalid"},
        )
    return judged, failure


def _drain(inbox: Inbox, out: RunOutput, turn: _TurnState) -> None:
    """Keep the raw output that arrived after the turn (the process's last words)."""
    while (item := inbox.get_nowait()) is not None:
        _take(item, out, None, turn)


def _spawn_event(agent: AgentProcess) -> RunEvent:
    return RunEvent(type=RunEventType.SPAWN, text="started", metadata={"pid": str(agent.pid)})


def _agent_failure(
    step: str, error: BaseException | None, agent: AgentProcess | None
) -> RunFailure:
    """A failed ACP call as the run's failure: the agent's error, or its process's end."""
    metadata: dict[str, object] = {"step": step}
    if agent is not None and agent.broken:
        message = f"{step} failed: the agent broke the protocol, so the connection was ended: "
        return RunFailure(
            code=FailureCode.AGENT_ERROR, message=message + agent.broken, metadata=metadata
        )
    if isinstance(error, acp.RequestError):
        metadata["acp_error_code"] = error.code
        detail = f"{error.code} {_error_text(str(error))}"
        if isinstance(error.data, dict) and isinstance(error.data.get("details"), str):
            detail += f": {_details_text(error.data['details'])}"
        elif isinstance(error.data, dict):  # its fields may grow: kept apart from the words
            metadata["acp_error_data"] = error.data
        elif error.data:
            detail += f" {error.data}"
        message = f"{step} failed: the agent answered {detail}"
    elif agent is not None and not agent.alive:
        tail = agent.stderr.getvalue()[-400:].decode("utf-8", "replace").strip()
        metadata["agent_exit"] = agent.exit_description()
        message = f"the agent process ended ({agent.exit_description()}) during {step}"
        if tail:
            message += f"; its stderr ends: {tail}"
    else:
        message = f"{step} failed: {error!r}" if error is not None else f"{step} failed"
    return RunFailure(code=FailureCode.AGENT_ERROR, message=message, metadata=metadata)


def _error_text(message: str) -> str:
    """An agent's error message, with a model API's JSON error body it passed on verbatim
    (Gemini CLI does) told as its message and status rather than dumped."""
    try:
        body = json.loads(message)
    except ValueError:
        return message
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict) or not isinstance(error.get("message"), str):
        return message
    status = error.get("status") or error.get("type")
    said = f"the model API said: {error['message']}"
    return f"{said} ({status})" if isinstance(status, str) and status else said


def _details_text(details: str) -> str:
    """An error's ``details`` (Qwen Code puts the model API's status and JSON body there,
    ``500 {"type":"error",...}``), its JSON body told by :func:`_error_text`."""
    status, _, rest = details.partition(" ")
    if status.isdigit() and rest.startswith("{"):
        return f"{status} {_error_text(rest)}"
    return _error_text(details)


def _record_failure(out: RunOutput, failure: RunFailure) -> None:
    out.item(
        TranscriptItem(
            kind=TranscriptKind.FAILURE, text=failure.message, metadata={"code": str(failure.code)}
        )
    )
    out.fail(failure)
