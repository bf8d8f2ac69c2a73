"""Mutants of the scenario clauses: the reference driver's network mode, broken once each.

Each class below breaks one scenario rule in the network mode only (the in-memory mode,
which the hermetic clauses judge, is the reference's), and :data:`SCENARIO_MUTANTS`
pairs it with the clause that must catch it. ``mutants.py`` adds them to the kill
matrix, bound to the suite's model emulator the way the reference is
(``referencedriver._conformance.model_binding``).
"""

from __future__ import annotations

import atexit
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import anyio

from adaptertest.options import ModelBinding, ModelEndpoint
from driver import (
    EventSink,
    FailureCode,
    Request,
    Response,
    RunEvent,
    RunFailure,
    SessionState,
    StreamKind,
    StreamPayload,
    TranscriptItem,
    TranscriptKind,
    Usage,
)
from referencedriver import ReferenceDriver
from referencedriver._conformance import driver_for_endpoint

__all__ = ["SCENARIO_MUTANTS", "ScenarioMutant", "sessions_in_memory_binding"]


def _config_of(endpoint: ModelEndpoint) -> Any:
    return driver_for_endpoint(endpoint).config


class _Rewritten(ReferenceDriver):
    """Runs the network mode, then passes the request and the Response through hooks."""

    def before(self, request: Request) -> Request:
        return request

    def after(self, request: Request, response: Response) -> Response:
        return response

    async def run(self, request: Request, sink: EventSink) -> Response:
        if not self.config.model_url:
            return await super().run(request, sink)
        changed = self.before(request.model_copy(deep=True))
        return self.after(changed, await super().run(changed, sink))


def _items(response: Response, change: Callable[[TranscriptItem], TranscriptItem]) -> Response:
    return response.model_copy(update={"transcript": [change(i) for i in response.transcript]})


_ELSEWHERE: list[str] = []


def _elsewhere() -> str:
    """One folder for every run of the process (so a resumed session's cwd still matches),
    removed when the process ends."""
    if not _ELSEWHERE:
        folder = tempfile.mkdtemp(prefix="adaptertest-elsewhere-")
        atexit.register(shutil.rmtree, folder, True)
        _ELSEWHERE.append(folder)
    return _ELSEWHERE[0]


class ToolsRunElsewhere(_Rewritten):
    """Runs every tool command in a folder of its own instead of the run's workspace."""

    def before(self, request: Request) -> Request:
        request.workspace = request.workspace.model_copy(update={"cwd": _elsewhere()})
        return request


class FailedToolLooksFine(_Rewritten):
    """Reports the result of a command that failed as a success (is_error dropped)."""

    def after(self, request: Request, response: Response) -> Response:
        return _items(response, lambda i: i.model_copy(update={"is_error": False}))


class ResultsNameFirstCall(_Rewritten):
    """Gives every tool result of a run the id of the run's first call."""

    def after(self, request: Request, response: Response) -> Response:
        calls = [i for i in response.transcript if i.kind == TranscriptKind.TOOL_CALL]
        if not calls:
            return response
        first = calls[0].tool_use_id

        def rename(item: TranscriptItem) -> TranscriptItem:
            if item.kind != TranscriptKind.TOOL_RESULT:
                return item
            return item.model_copy(update={"tool_use_id": first})

        return _items(response, rename)


class ThinkingAsAnswer(_Rewritten):
    """Turns the model's thinking into assistant text in the transcript."""

    def after(self, request: Request, response: Response) -> Response:
        def show(item: TranscriptItem) -> TranscriptItem:
            if item.kind != TranscriptKind.THINKING:
                return item
            return item.model_copy(update={"kind": TranscriptKind.ASSISTANT})

        return _items(response, show)


class UsageIsSessionTotal(_Rewritten):
    """Reports a resumed run's usage as the session's running total."""

    _totals: ClassVar[dict[str, Usage]] = {}
    _lock: ClassVar[threading.Lock] = threading.Lock()

    def after(self, request: Request, response: Response) -> Response:
        checkpoint, usage = response.checkpoint, response.usage
        if checkpoint is None or checkpoint.state is None or usage is None:
            return response
        session = checkpoint.state.resume_id
        with self._lock:
            before = self._totals.get(session, Usage())
            total = Usage(
                input_tokens=before.input_tokens + usage.input_tokens,
                cached_input_tokens=before.cached_input_tokens + usage.cached_input_tokens,
                output_tokens=before.output_tokens + usage.output_tokens,
            )
            self._totals[session] = total
        return response.model_copy(update={"usage": total})


_MEMORY: dict[str, list[dict[str, object]]] = {}


class SessionsInMemory(ReferenceDriver):
    """Keeps conversations in this process's memory, so a restarted host resumes nothing."""

    def _load_history(self, session_id: str) -> list[dict[str, object]] | None:
        stored = _MEMORY.get(session_id)
        return list(stored) if stored is not None else None

    def _save_history(self, session_id: str, messages: list[dict[str, object]]) -> None:
        _MEMORY[session_id] = list(messages)


def sessions_in_memory_binding() -> ModelBinding:
    """The binding of :class:`SessionsInMemory`, importable by a new interpreter."""
    return ModelBinding(
        driver=lambda endpoint: SessionsInMemory(_config_of(endpoint)),
        protocol="anthropic",
        ref=f"{__name__}:sessions_in_memory_binding",
    )


class IgnoresGuard(ReferenceDriver):
    """Resumes a session whatever profile or folder it was stored under."""

    @staticmethod
    def _check_guard(state: SessionState, request: Request, cwd: str) -> None:
        return None


_TRANSIENT = ("429", "529", "503")


class GivesUpVaguely(_Rewritten):
    """Never retries, and says only that the request failed when it gives up."""

    def after(self, request: Request, response: Response) -> Response:
        failure = response.failure
        if failure is None or not any(s in failure.message for s in _TRANSIENT):
            return response
        vague = failure.model_copy(update={"message": "the model request failed"})
        return response.model_copy(update={"failure": vague})


class DumpsErrorBody(_Rewritten):
    """Puts the API's error body in the failure message instead of describing it."""

    def after(self, request: Request, response: Response) -> Response:
        failure = response.failure
        if failure is None or response.timed_out:
            return response
        dump = f'{{"type":"error","error":{{"message":"{failure.message}"}}}}'
        return response.model_copy(update={"failure": failure.model_copy(update={"message": dump})})


class HidesTimeout(_Rewritten):
    """Ends a run at its deadline but reports timed_out=False."""

    def after(self, request: Request, response: Response) -> Response:
        return response.model_copy(update={"timed_out": False})


class SwallowsCancellation(ReferenceDriver):
    """Turns a cancellation into a returned Response instead of letting it propagate."""

    async def run(self, request: Request, sink: EventSink) -> Response:
        try:
            return await super().run(request, sink)
        except anyio.get_cancelled_exc_class():
            failure = RunFailure(code=FailureCode.CANCELLED, message="the run was cancelled")
            return Response(exit_code=1, failure=failure)


_ARGV_LIMIT = 128 * 1024


class CutsLongPrompts(_Rewritten):
    """Sends at most 128 KiB of the prompt, as one argv entry would."""

    def before(self, request: Request) -> Request:
        request.prompt = request.prompt.encode()[:_ARGV_LIMIT].decode("utf-8", "ignore")
        return request


class DropsNonASCII(_Rewritten):
    """Drops every character of the prompt outside ASCII."""

    def before(self, request: Request) -> Request:
        request.prompt = request.prompt.encode("ascii", "ignore").decode()
        return request


class SendsNulAnyway(_Rewritten):
    """Takes the NUL byte out of the prompt and runs instead of refusing it."""

    def before(self, request: Request) -> Request:
        request.prompt = request.prompt.replace("\x00", "")
        return request


_OUTPUT_CAP = 512 * 1024


class CapsOutput(_Rewritten):
    """Keeps at most 512 KiB of the answer."""

    def after(self, request: Request, response: Response) -> Response:
        return response.model_copy(update={"output": response.output[:_OUTPUT_CAP]})


class LeavesDaemon(_Rewritten):
    """Starts a helper in a session of its own on every run and never ends it."""

    def before(self, request: Request) -> Request:
        subprocess.run(
            ["/bin/sh", "-c", "sleep 120 >/dev/null 2>&1 &"],
            env={**self.config.env, "PATH": "/usr/bin:/bin"},
            start_new_session=True,
            check=True,
        )
        return request


class _FilteredSink:
    """Passes run events on, and each stream payload through ``change`` (None drops it)."""

    def __init__(self, sink: EventSink, change: Callable[[StreamPayload], StreamPayload | None]):
        self._sink = sink
        self._change = change

    def emit(self, event: RunEvent) -> None:
        self._sink.emit(event)

    def emit_stream(self, payload: StreamPayload) -> None:
        changed = self._change(payload)
        if changed is not None:
            self._sink.emit_stream(changed)


class _Restreamed(ReferenceDriver):
    """Runs the network mode with its stream passed through a fresh :meth:`changer`."""

    def changer(self) -> Callable[[StreamPayload], StreamPayload | None]:
        return lambda payload: payload

    async def run(self, request: Request, sink: EventSink) -> Response:
        if not self.config.model_url:
            return await super().run(request, sink)
        return await super().run(request, _FilteredSink(sink, self.changer()))


class ClosesFirstToolOnly(_Restreamed):
    """Ends the lifecycle of a run's first tool call only: a second call is left open
    while its result comes (a stream legal in every run with at most one tool call)."""

    def changer(self) -> Callable[[StreamPayload], StreamPayload | None]:
        ended: list[str] = []

        def change(payload: StreamPayload) -> StreamPayload | None:
            if payload.kind != StreamKind.TOOL_CALL_END:
                return payload
            if ended:
                return None
            ended.append(payload.tool_call_id)
            return payload

        return change


class ErrorEndsAsFinished(_Restreamed):
    """Ends the stream of a run the model's API error failed in run.finished, not
    run.error (the Response still reports the failure)."""

    def changer(self) -> Callable[[StreamPayload], StreamPayload | None]:
        def change(payload: StreamPayload) -> StreamPayload | None:
            error = payload.error
            if payload.kind != StreamKind.RUN_ERROR or error is None:
                return payload
            if error.code != FailureCode.AGENT_ERROR or "deadline" in error.message:
                return payload  # a run that passed its deadline keeps its run.error
            return payload.model_copy(update={"kind": StreamKind.RUN_FINISHED, "error": None})

        return change


@dataclass(frozen=True)
class ScenarioMutant:
    """A network-mode mutant, its clause, and the binding the suite gets. ``names``: the
    general clauses the failure message must name (the mutant breaks a rule every run
    obeys, on a path only a scenario takes)."""

    cls: type[ReferenceDriver]
    clause: str
    description: str
    binding: ModelBinding
    names: frozenset[str] = frozenset()


def _bind(cls: type[ReferenceDriver], **changes: Any) -> ModelBinding:
    def build(endpoint: ModelEndpoint) -> ReferenceDriver:
        config = _config_of(endpoint).model_copy(update=changes)
        return cls(config)

    return ModelBinding(driver=build, protocol="anthropic")


SCENARIO_MUTANTS: tuple[ScenarioMutant, ...] = (
    ScenarioMutant(
        ToolsRunElsewhere,
        "TOL-01",
        "runs the model's tool commands in another folder than the run's workspace",
        _bind(ToolsRunElsewhere),
    ),
    ScenarioMutant(
        FailedToolLooksFine,
        "TOL-02",
        "reports a failed command's result without is_error",
        _bind(FailedToolLooksFine),
    ),
    ScenarioMutant(
        ResultsNameFirstCall,
        "TOL-03",
        "gives every tool result the id of the turn's first call",
        _bind(ResultsNameFirstCall),
    ),
    ScenarioMutant(
        ClosesFirstToolOnly,
        "TOL-03",
        "ends the lifecycle of a run's first tool call only, so a second call stays open",
        _bind(ClosesFirstToolOnly),
        frozenset({"EVT-11"}),
    ),
    ScenarioMutant(
        ThinkingAsAnswer,
        "RSN-01",
        "shows the model's thinking as assistant text in the transcript",
        _bind(ThinkingAsAnswer),
    ),
    ScenarioMutant(
        UsageIsSessionTotal,
        "RES-01",
        "reports a resumed run's usage as the session's running total",
        _bind(UsageIsSessionTotal),
    ),
    ScenarioMutant(
        SessionsInMemory,
        "RES-02",
        "keeps sessions in the process's memory, so a restarted host cannot resume",
        sessions_in_memory_binding(),
    ),
    ScenarioMutant(
        IgnoresGuard,
        "RES-03",
        "resumes a session stored under another profile without checking its guard",
        _bind(IgnoresGuard),
    ),
    ScenarioMutant(
        GivesUpVaguely,
        "FLT-01",
        "never retries a 429, 529 or 503 and then says only that the request failed",
        _bind(GivesUpVaguely, model_retries=0),
    ),
    ScenarioMutant(
        DumpsErrorBody,
        "FLT-02",
        "puts the API's JSON error body in the failure message",
        _bind(DumpsErrorBody),
    ),
    ScenarioMutant(
        ErrorEndsAsFinished,
        "FLT-02",
        "ends the stream of a run an API error failed in run.finished instead of run.error",
        _bind(ErrorEndsAsFinished),
        frozenset({"FLR-01"}),
    ),
    ScenarioMutant(
        HidesTimeout,
        "DLN-01",
        "ends a run at its deadline but reports timed_out=False",
        _bind(HidesTimeout),
    ),
    ScenarioMutant(
        SwallowsCancellation,
        "DLN-02",
        "returns a cancelled Response instead of letting the cancellation propagate",
        _bind(SwallowsCancellation),
    ),
    ScenarioMutant(
        CutsLongPrompts,
        "INP-01",
        "sends at most 128 KiB of the prompt, as one argv entry would",
        _bind(CutsLongPrompts),
    ),
    ScenarioMutant(
        DropsNonASCII,
        "INP-02",
        "drops the prompt's characters outside ASCII",
        _bind(DropsNonASCII),
    ),
    ScenarioMutant(
        SendsNulAnyway,
        "INP-03",
        "strips a NUL byte from the prompt and runs instead of refusing it",
        _bind(SendsNulAnyway),
    ),
    ScenarioMutant(
        CapsOutput,
        "OUT-01",
        "keeps at most 512 KiB of the answer",
        _bind(CapsOutput),
    ),
    ScenarioMutant(
        LeavesDaemon,
        "PRC-01",
        "starts a helper in its own session on every run and never ends it",
        _bind(LeavesDaemon),
    ),
)
