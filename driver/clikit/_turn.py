"""One run of a CLI driver: guard, launch, parse while reading, classify, respond.

Everything here is the same for every JSONL-printing CLI; what differs (the
command line and the format) comes in as the ``argv`` builder and a
:class:`StreamParser`.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, runtime_checkable

import anyio

from driver import (
    REDACTED_APPEND,
    SESSION_PARAM_APPEND_SYSTEM_PROMPT_FINGERPRINT,
    SESSION_PARAM_CWD,
    SESSION_PARAM_PROFILE_FINGERPRINT,
    SESSION_PARAM_WORKSPACE_ID,
    Checkpoint,
    EventSink,
    FailureCode,
    InvalidDriverConfigError,
    OutputSchema,
    RawStreams,
    Request,
    Response,
    RunError,
    RunEvent,
    RunEventType,
    RunFailure,
    SessionState,
    StreamKind,
    StreamPayload,
    StructuredOutput,
    StructuredOutputInvalidPolicy,
    TerminalPayload,
    TranscriptItem,
    TranscriptKind,
    Usage,
    append_fingerprint_differs,
    append_system_prompt_fingerprint,
)
from driver.clikit._emit import RunOutput
from driver.clikit._process import (
    TERMINAL_GRACE_SECONDS,
    LineFramer,
    ProcessOutcome,
    StdinWriter,
    run_cli,
)
from driver.clikit._structured import StructuredSource, judge_structured

__all__ = [
    "GUARDED_KEYS",
    "LineJudge",
    "MetadataSource",
    "SessionCarry",
    "SessionMismatchError",
    "StderrReader",
    "StreamParser",
    "check_guard",
    "refuse_nul",
    "run_turn",
]

GUARDED_KEYS = (SESSION_PARAM_CWD, SESSION_PARAM_PROFILE_FINGERPRINT)
"""Session values that must match before a stored session may be resumed."""


class SessionMismatchError(RunError):
    """A stored session was captured under another cwd or profile; refused before launch.

    The session's earlier turns refer to files of its own workspace (Claude Code
    even stores sessions per directory), and a changed profile (MCP servers,
    skills, instructions) would resume under a different setup.
    """


class StreamParser(Protocol):
    """What :func:`run_turn` needs from a CLI's format parser.

    ``feed`` is called with each stdout line as it arrives and never raises;
    the rest is read once the process has ended.
    """

    @property
    def terminal(self) -> TerminalPayload | None:
        """The official terminal event, verbatim; None when none was seen."""

    @property
    def usage(self) -> Usage | None:
        """Token counts of the terminal event; None when not reported."""

    @property
    def malformed_lines(self) -> int:
        """Lines that looked like JSON but did not parse."""

    @property
    def resume_id(self) -> str:
        """The session handle the protocol named explicitly at top level, or ``""``."""

    @property
    def model(self) -> str:
        """The model the CLI reported, or ``""``."""

    def feed(self, raw: bytes) -> None:
        """Parse one stdout line (without its newline)."""

    def output(self) -> str:
        """The final assistant text."""

    def failure(self, outcome: ProcessOutcome, timeout: float) -> RunFailure | None:
        """Classify the run; None only for a successful terminal event and a clean exit."""


@runtime_checkable
class MetadataSource(Protocol):
    """A parser with facts for ``Response.metadata`` whatever the outcome (API retries the
    CLI made before it succeeded, say): a host sees them on a successful run too."""

    def run_metadata(self) -> dict[str, str]:
        """String facts about the run, read once the process has ended."""


@runtime_checkable
class SessionCarry(Protocol):
    """A parser that carries facts of its own from one run of a session to the next.

    Codex reports the thread's running token total on resume; its parser keeps the
    total in the checkpoint and reports the difference. Keys are the parser's own
    (namespaced, e.g. ``codex.thread_usage``) and never one of :data:`GUARDED_KEYS`.
    """

    def resume_from(self, data: Mapping[str, str]) -> None:
        """Called before the first line with the stored session's data."""

    def session_data(self) -> dict[str, str]:
        """What the checkpoint of a successful run keeps, merged into its data."""


@runtime_checkable
class StderrReader(Protocol):
    """A parser that also reads the CLI's stderr, line by line as it arrives: for a CLI
    that reports some facts (API retries, say) only there."""

    def feed_stderr(self, raw: bytes) -> None:
        """Read one stderr line (without its newline); never raises."""


@runtime_checkable
class LineJudge(Protocol):
    """A parser that can tell a line is complete without its newline: for a CLI that
    prints its terminal line without one and keeps running (the terminal grace then
    starts from that line, not from the exit)."""

    def is_whole_line(self, raw: memoryview) -> bool:
        """Whether ``raw`` (an unterminated stdout line) is complete as it is; never raises."""


async def run_turn(
    request: Request,
    sink: EventSink,
    *,
    driver_type: str,
    argv: Callable[[str], Sequence[str]],
    cwd: str,
    env: Mapping[str, str] | None = None,
    model: str,
    timeout: float,
    parser: Callable[[RunOutput], StreamParser],
    structured: bool = False,
    terminal_grace: float = TERMINAL_GRACE_SECONDS,
    stdin: Callable[[StreamParser], StdinWriter | None] | None = None,
    stdout_to_file: bool = False,
) -> Response:
    """Run the CLI once for ``request`` and return what its output says.

    ``argv`` builds the command line from the resume id (``""`` for a new
    session); ``cwd`` empty means the current directory; ``timeout`` 0 means
    none. A stored session whose guard values differ is refused with
    ``SessionMismatchError``, and a NUL byte in the prompt (in argv or on stdin),
    the command line, the directory or the environment with
    ``InvalidDriverConfigError``, before anything is emitted. A failed run returns
    a response with ``failure`` set; a program that cannot be started raises
    ``RunError`` carrying the partial response; cancellation stops the process,
    closes the stream with ``run.error`` and propagates. ``structured`` says the
    CLI was asked to enforce ``request.output_schema`` natively: its answer is
    validated against the schema, and a missing or invalid one fails an otherwise
    successful run (unless the schema's ``on_invalid`` is ``return_invalid``).

    A CLI still running ``terminal_grace`` seconds after its terminal line is
    ended and the run judged as if it had exited then: the terminal line decides
    (a success stays one, with its checkpoint), ``exit_code``/``signal`` are those
    of that clean end, and ``metadata`` records what happened
    (``ended_after_terminal``, ``ended_by``). A stderr longer than the kit keeps
    is cut in the middle: ``metadata`` has ``stderr_bytes`` and ``stderr_cut``.

    ``stdin``, given the run's parser, returns what writes the CLI's stdin during the
    run (see :func:`driver.clikit.run_cli`); None, or no writer, leaves it ``/dev/null``.
    ``stdout_to_file`` gives the CLI a file as stdout, read as it grows (see ``run_cli``).
    """
    state = request.session.state if request.session is not None else None
    resume_id = state.resume_id if state is not None else ""
    append = request.append_system_prompt
    guard = {
        SESSION_PARAM_CWD: os.path.abspath(cwd) if cwd else os.getcwd(),
        SESSION_PARAM_PROFILE_FINGERPRINT: request.profile_payload.session_fingerprint(),
    }
    if append:
        guard[SESSION_PARAM_APPEND_SYSTEM_PROMPT_FINGERPRINT] = append_system_prompt_fingerprint(
            append
        )
    if state is not None:
        check_guard(state, guard, append)
    command = list(argv(resume_id))
    refuse_nul(driver_type, request.prompt, command, cwd, env)
    out = RunOutput(sink, streaming=request.streaming, run_id=request.run_id, thread_id=resume_id)
    stream_parser = parser(out)
    if state is not None and isinstance(stream_parser, SessionCarry):
        stream_parser.resume_from(state.data)
    invocation = {"program": command[0], "cwd": cwd, "model": model, "resume": resume_id}
    if append:
        invocation["append_system_prompt"] = REDACTED_APPEND
    out.event(
        RunEvent(
            type=RunEventType.INVOCATION,
            text=f"{driver_type} run (prompt withheld)",
            metadata=invocation,
        )
    )
    out.stream(StreamPayload(kind=StreamKind.RUN_STARTED))

    def spawned(pid: int) -> None:
        out.event(RunEvent(type=RunEventType.SPAWN, text="started", metadata={"pid": str(pid)}))

    writer = stdin(stream_parser) if stdin is not None else None
    stderr_reader = stream_parser if isinstance(stream_parser, StderrReader) else None
    stderr_lines = LineFramer(stderr_reader.feed_stderr) if stderr_reader else None

    def chunk(fd: str, data: bytes) -> None:
        out.chunk(fd, data)
        if stderr_lines is not None and fd == "stderr":
            stderr_lines.feed(data)

    try:
        outcome = await run_cli(
            command,
            cwd=cwd or None,
            env=env,
            timeout=timeout or None,
            on_spawn=spawned,
            on_chunk=chunk,
            on_line=stream_parser.feed,
            finished=lambda: stream_parser.terminal is not None,
            terminal_grace=terminal_grace,
            stdin=writer,
            stdout_to_file=stdout_to_file,
            whole_line=stream_parser.is_whole_line
            if isinstance(stream_parser, LineJudge)
            else None,
        )
        if stderr_lines is not None:
            stderr_lines.flush()
    except OSError as exc:
        not_started = RunFailure(
            code=FailureCode.AGENT_ERROR, message=f"cannot start {command[0]}: {exc}"
        )
        _record_failure(out, not_started)
        response = Response(
            transcript=out.transcript,
            provider=driver_type,
            model=model,
            summary=not_started.message,
            failure=not_started,
        )
        raise RunError(not_started.message, response=response) from exc
    except anyio.get_cancelled_exc_class():
        out.fail(RunFailure(code=FailureCode.CANCELLED, message="run cancelled"))
        raise

    lifecycle = {
        "exit_code": str(outcome.exit_code),
        "signal": outcome.signal,
        "timed_out": str(outcome.timed_out).lower(),
    }
    metadata = _outcome_metadata(outcome, terminal_grace)
    out.event(
        RunEvent(
            type=RunEventType.LIFECYCLE,
            text="ended after its terminal line" if outcome.ended_after_terminal else "exited",
            metadata=lifecycle | metadata,
        )
    )
    if outcome.ended_after_terminal:
        # The CLI had finished (its terminal line is in); ending it was the driver's doing.
        outcome = dataclasses.replace(outcome, exit_code=0, signal="")
    failure = stream_parser.failure(outcome, timeout)
    structured_output = None
    if structured and request.output_schema is not None:
        structured_output, failure = _judge_structured(
            request.output_schema, stream_parser, failure, outcome.exit_code
        )
    checkpoint = None
    if failure is None:
        out.finish(stream_parser.usage)
        if stream_parser.resume_id and not stream_parser.malformed_lines:
            # Only now: exit 0, no signal or timeout, a successful terminal event, an
            # explicit top-level session handle, and no corrupt line (RSP-01).
            data = dict(guard)
            if isinstance(stream_parser, SessionCarry):
                carried = stream_parser.session_data()
                data.update({k: v for k, v in carried.items() if k not in guard})
            if request.workspace.id:
                data[SESSION_PARAM_WORKSPACE_ID] = request.workspace.id
            handle = stream_parser.resume_id
            checkpoint = Checkpoint(
                valid=True, state=SessionState(resume_id=handle, display_id=handle, data=data)
            )
    else:
        _record_failure(out, failure)
    return Response(
        output=stream_parser.output(),
        raw_streams=RawStreams(
            stdout=outcome.stdout, stderr=outcome.stderr, terminal=stream_parser.terminal
        ),
        transcript=out.transcript,
        exit_code=outcome.exit_code,
        signal=outcome.signal,
        timed_out=outcome.timed_out,
        usage=stream_parser.usage,
        checkpoint=checkpoint,
        provider=driver_type,
        model=stream_parser.model or model,
        summary=failure.message if failure is not None else f"{driver_type} run succeeded",
        structured_output=structured_output,
        failure=failure,
        metadata=_parser_metadata(stream_parser) | metadata,
    )


def _parser_metadata(parser: StreamParser) -> dict[str, str]:
    return parser.run_metadata() if isinstance(parser, MetadataSource) else {}


def _outcome_metadata(outcome: ProcessOutcome, terminal_grace: float) -> dict[str, str]:
    """What a host should know about how the process ended and what was kept of it."""
    metadata: dict[str, str] = {}
    if outcome.ended_after_terminal:
        metadata["ended_after_terminal"] = (
            f"still running {terminal_grace:g} s after its terminal line"
        )
        metadata["ended_by"] = outcome.signal or f"exit {outcome.exit_code}"
    if outcome.stderr_cut:
        metadata["stderr_bytes"] = str(outcome.stderr_size)
        metadata["stderr_cut"] = f"kept the first and last {len(outcome.stderr) // 2} bytes"
    return metadata


def _judge_structured(
    schema: OutputSchema, parser: StreamParser, failure: RunFailure | None, exit_code: int
) -> tuple[StructuredOutput, RunFailure | None]:
    """The native answer, validated; an invalid one fails a run that otherwise succeeded."""
    candidate = parser.structured_json() if isinstance(parser, StructuredSource) else None
    judged = judge_structured(schema.schema_document, candidate)
    if (
        failure is None
        and not judged.valid
        and schema.on_invalid != StructuredOutputInvalidPolicy.RETURN_INVALID
    ):
        failure = RunFailure(
            code=FailureCode.AGENT_ERROR,
            message="the structured answer does not match the output schema: "
            + "; ".join(judged.validation_errors[:3]),
            metadata={"exit_code": exit_code, "structured_output": "invalid"},
        )
    return judged, failure


def _record_failure(out: RunOutput, failure: RunFailure) -> None:
    """A ``failure`` transcript item, then ``run.error`` as the last payload."""
    out.item(
        TranscriptItem(
            kind=TranscriptKind.FAILURE, text=failure.message, metadata={"code": str(failure.code)}
        )
    )
    out.fail(failure)


def refuse_nul(
    driver_type: str,
    prompt: str,
    command: Sequence[str] = (),
    cwd: str = "",
    env: Mapping[str, str] | None = None,
) -> None:
    """Refuse, before anything starts, what no process can be started with: a NUL byte
    in the prompt (in argv or on stdin: no CLI reads one as text), an argument, the
    directory or the environment. The message says where the NUL is, never the text
    around it."""
    where = ""
    bad = [index for index, arg in enumerate(command) if "\0" in arg]
    if "\0" in prompt:
        where = f"the prompt (character {prompt.index(chr(0))})"
    elif bad:
        where = f"argument {bad[0]} of the command line"
    elif "\0" in cwd:
        where = "the working directory"
    elif env is not None and any("\0" in k or "\0" in v for k, v in env.items()):
        where = "the environment"
    if where:
        why = ValueError(f"{where} contains a NUL byte, which no program can be given")
        raise InvalidDriverConfigError(driver_type, why)


def check_guard(state: SessionState, current: dict[str, str], append: str) -> None:
    """Refuse to resume a session stored under other guard values or another appended
    system prompt (a missing fingerprint is an empty append's)."""
    for key in GUARDED_KEYS:
        stored = state.data.get(key)
        if stored is not None and stored != current[key]:
            raise SessionMismatchError(
                f"the stored session was captured with a different {key}; start a new session"
            )
    if append_fingerprint_differs(state.data, append):
        raise SessionMismatchError(
            "the stored session was captured with a different appended system prompt "
            f"({SESSION_PARAM_APPEND_SYSTEM_PROMPT_FINGERPRINT}); start a new session"
        )
