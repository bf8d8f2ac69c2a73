"""The format-independent plumbing of the CLI example drivers.

Processes are small ``python -c`` scripts; :class:`ToyParser` reads a made-up
line format, so each rule of the run flow is tested once here rather than
through every driver.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

import adaptertest
from adaptertest import RecordingSink
from driver import (
    SESSION_PARAM_CWD,
    SESSION_PARAM_PROFILE_FINGERPRINT,
    SESSION_PARAM_WORKSPACE_ID,
    FailureCode,
    ProfilePayload,
    Request,
    Response,
    RunError,
    RunEventType,
    RunFailure,
    SessionContext,
    SessionParams,
    SessionState,
    StreamKind,
    StreamPayload,
    TerminalPayload,
    TranscriptItem,
    TranscriptKind,
    Usage,
    WorkspaceLease,
)
from driver.clikit import (
    GUARDED_KEYS,
    JsonlParser,
    LineFramer,
    ProcessOutcome,
    ResumeCodec,
    RunOutput,
    SessionMismatchError,
    run_cli,
    run_turn,
)


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    backend: str = request.param
    return backend


def script(*lines: str, sleep: float = 0.0, exit_code: int = 0, code: str = "") -> list[str]:
    """A command printing ``lines`` (flushed, ``sleep`` s apart), running ``code``, exiting."""
    body = (
        "import os, signal, subprocess, sys, time\n"
        f"for line in {list(lines)!r}:\n"
        "    print(line, flush=True)\n"
        f"    time.sleep({sleep})\n"
        f"{code}\n"
        f"sys.exit({exit_code})\n"
    )
    return [sys.executable, "-c", body]


class ToyParser:
    """A made-up format: ``say TEXT``, ``tool ID``, ``done SESSION``; anything else is corrupt."""

    def __init__(self, out: RunOutput) -> None:
        self._out = out
        self.terminal: TerminalPayload | None = None
        self.usage: Usage | None = None
        self.malformed_lines = 0
        self.resume_id = ""
        self.model = "toy-1"
        self._said: list[str] = []

    def feed(self, raw: bytes) -> None:
        word, _, rest = raw.decode().partition(" ")
        if word == "say":
            self._said.append(rest)
            self._out.text(f"m{len(self._said)}", rest)
            self._out.item(TranscriptItem(kind=TranscriptKind.ASSISTANT, text=rest))
        elif word == "tool":
            self._out.tool_start(rest, "probe", {"n": 1})
        elif word == "done":
            self.terminal = TerminalPayload(event="done", raw_json=json.dumps({"session": rest}))
            self.resume_id = rest
            self.usage = Usage(output_tokens=len(self._said))
        else:
            self.malformed_lines += 1

    def output(self) -> str:
        return self._said[-1] if self._said else ""

    def failure(self, outcome: ProcessOutcome, timeout: float) -> RunFailure | None:
        if outcome.timed_out or outcome.signal or outcome.exit_code or self.terminal is None:
            return RunFailure(code=FailureCode.AGENT_ERROR, message=f"toy failed: {outcome}")
        return None


async def toy_run(
    command: list[str], request: Request | None = None, *, timeout: float = 0, cwd: str = ""
) -> tuple[Response, RecordingSink]:
    sink = RecordingSink()
    response = await run_turn(
        request or Request(prompt="hi", streaming=True),
        sink,
        driver_type="toy",
        argv=lambda resume_id: command,
        cwd=cwd,
        model="toy-requested",
        timeout=timeout,
        parser=ToyParser,
    )
    return response, sink


def structural_violations(response: Response, sink: RecordingSink) -> list[str]:
    found = [
        *adaptertest.verify_stream_sequence(sink.stream),
        *adaptertest.verify_run_events(sink.events),
        *adaptertest.verify_transcript_mirror(sink.events, response.transcript),
        *adaptertest.verify_outcome(response, None),
    ]
    return [str(v) for v in found]


def kinds(sink: RecordingSink) -> list[str]:
    return [p.kind for p in sink.stream]


class CancelOnToolStart(RecordingSink):
    """Cancels ``scope`` as soon as a tool call starts: the process is mid-run then."""

    def __init__(self, scope: anyio.CancelScope) -> None:
        super().__init__()
        self._scope = scope

    def emit_stream(self, payload: StreamPayload) -> None:
        super().emit_stream(payload)
        if payload.kind == StreamKind.TOOL_CALL_START:
            self._scope.cancel()


# -- LineFramer -------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 2, 5, 64])
def test_line_framer_is_independent_of_chunking(size: int) -> None:
    data = b'{"a":1}\n\n{"b":"x\\ny"}\r\nlast without newline'
    lines: list[bytes] = []
    framer = LineFramer(lines.append)
    for start in range(0, len(data), size):
        framer.feed(data[start : start + size])
    assert lines == [b'{"a":1}', b"", b'{"b":"x\\ny"}\r']
    framer.flush()
    assert lines[-1] == b"last without newline"
    framer.flush()
    assert len(lines) == 4


# -- JsonlParser ------------------------------------------------------------------------------


class _Objects(JsonlParser):
    """Keeps every object line it is handed; the outcome hooks are never called here."""

    program = "objects"
    missing_terminal = "a last line"

    def __init__(self, out: RunOutput) -> None:
        super().__init__(out)
        self.objects: list[dict[str, Any]] = []

    def on_object(self, line: dict[str, Any], text: str) -> None:
        self.objects.append(line)

    succeeded = False
    resume_id = ""

    def output(self) -> str:
        return ""

    def reported_failure(self, meta: dict[str, Any]) -> str:
        return ""


def test_a_json_line_with_invalid_utf8_is_corrupt_and_stays_visible() -> None:
    """Decoded with replacement characters it would parse, and a checkpoint would vouch for
    text the CLI never wrote (DFT-02); a log line that is not UTF-8 is only shown."""
    out = RunOutput(RecordingSink(), streaming=True, run_id="r", thread_id="")
    parser = _Objects(out)
    for line in (b'{"text": "caf\xc3"}', b"\xff log noise", b'{"text": "caf\xc3\xa9"}'):
        parser.feed(line)
    assert parser.objects == [{"text": "caf\u00e9"}]
    assert parser.malformed_lines == 1
    assert [(i.kind, i.text) for i in out.transcript] == [
        (TranscriptKind.STDOUT, '{"text": "caf\ufffd"}'),
        (TranscriptKind.STDOUT, "\ufffd log noise"),
    ]


# -- ResumeCodec ------------------------------------------------------------------------------


def test_resume_codec_round_trips_and_guards_every_value() -> None:
    codec = ResumeCodec("toy")
    assert codec.name() == "toy"
    assert codec.to_params(None) == SessionParams()
    assert codec.from_params(SessionParams()) is None
    state = SessionState(resume_id="s-1", data={"cwd": "/a", "k": "v"})
    params = codec.to_params(state)
    assert params.display_id == "s-1"
    restored = codec.from_params(params)
    assert restored is not None
    assert codec.to_params(restored) == params
    guard = codec.guard_fingerprint(params)
    assert guard == codec.guard_fingerprint(codec.to_params(state))
    moved = params.model_copy(update={"values": {"cwd": "/a", "k": "v2"}})
    assert codec.guard_fingerprint(moved) != guard
    # Keys and values cannot be shifted into each other.
    one = SessionParams(resume_id="s", values={"a": "b=c"})
    two = SessionParams(resume_id="s", values={"a=b": "c"})
    assert codec.guard_fingerprint(one) != codec.guard_fingerprint(two)


# -- RunOutput --------------------------------------------------------------------------------


def test_run_output_keeps_the_stream_rules() -> None:
    sink = RecordingSink()
    out = RunOutput(sink, streaming=True, run_id="r-1", thread_id="t-1")
    out.stream(StreamPayload(kind=StreamKind.RUN_STARTED))
    out.step_start("turn")
    out.text("m", "first")
    out.text("m", "second")  # same wanted id: a fresh one is used
    out.text("m", "")  # nothing to say: nothing emitted
    out.reasoning("m", "thinking")
    out.tool_start("call-1", "probe", {"x": 1})
    out.tool_start("call-1", "probe", {"x": 2})  # never reopened
    out.tool_result("unknown", {"ok": True})  # never started: dropped
    out.tool_start("call-2", "probe", {}, parent="call-1")
    out.tool_result("call-2", {"ok": True})
    out.tool_result("call-2", {"ok": False})  # second result: dropped
    out.finish(Usage(input_tokens=3))
    out.fail(RunFailure(code=FailureCode.AGENT_ERROR, message="late"))  # after the terminal
    out.text("m", "late")
    ids = [p.message_id for p in sink.stream if p.kind == StreamKind.TEXT_START]
    assert ids == ["m", "m#2"]
    assert [p.message_id for p in sink.stream if p.kind == StreamKind.REASONING_START] == ["m#3"]
    assert [p.kind for p in sink.stream if p.tool_call_id == "call-1"] == [
        StreamKind.TOOL_CALL_START,
        StreamKind.TOOL_CALL_END,  # closed by the terminal
    ]
    assert {p.parent_tool_call_id for p in sink.stream if p.tool_call_id == "call-2"} == {"call-1"}
    assert kinds(sink)[-3:] == [
        StreamKind.TOOL_CALL_END,
        StreamKind.STEP_FINISHED,
        StreamKind.RUN_FINISHED,
    ]
    assert {(p.run_id, p.thread_id) for p in sink.stream} == {("r-1", "t-1")}
    assert adaptertest.verify_stream_sequence(sink.stream) == []


def test_run_output_without_streaming_still_mirrors_the_transcript() -> None:
    sink = RecordingSink()
    out = RunOutput(sink, streaming=False, run_id="", thread_id="")
    out.text("m", "hello")
    out.item(TranscriptItem(kind=TranscriptKind.ASSISTANT, text="hello"))
    out.finish(None)
    assert sink.stream == []
    assert adaptertest.verify_transcript_mirror(sink.events, out.transcript) == []


# -- run_cli ----------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_run_cli_reports_every_byte_and_the_exit_code() -> None:
    chunks: list[tuple[str, bytes]] = []
    lines: list[bytes] = []
    command = script(
        "one", "two", exit_code=3, code="sys.stderr.write('oops\\n'); print('tail', end='')"
    )
    outcome = await run_cli(
        command,
        cwd=None,
        timeout=None,
        on_spawn=lambda pid: None,
        on_chunk=lambda stream, data: chunks.append((stream, data)),
        on_line=lines.append,
    )
    newline = os.linesep.encode()
    assert outcome.stdout == b"one" + newline + b"two" + newline + b"tail"
    assert outcome.stderr == b"oops" + newline
    assert (outcome.exit_code, outcome.signal, outcome.timed_out) == (3, "", False)
    assert b"".join(d for s, d in chunks if s == "stdout") == outcome.stdout
    assert b"".join(d for s, d in chunks if s == "stderr") == outcome.stderr
    assert lines == [b"one", b"two", b"tail"]


@pytest.mark.anyio
async def test_run_cli_names_the_signal_that_ended_the_process() -> None:
    command = script(code="os.kill(os.getpid(), signal.SIGKILL)")
    outcome = await run_cli(
        command, cwd=None, timeout=None, on_spawn=print, on_chunk=print, on_line=print
    )
    assert (outcome.exit_code, outcome.signal) == (-1, "SIGKILL")


@pytest.mark.anyio
async def test_run_cli_stops_a_process_that_overruns_its_deadline() -> None:
    started = time.monotonic()
    lines: list[bytes] = []
    outcome = await run_cli(
        script("first", "second", sleep=10),
        cwd=None,
        timeout=1.0,
        on_spawn=lambda pid: None,
        on_chunk=lambda stream, data: None,
        on_line=lines.append,
    )
    assert time.monotonic() - started < 5
    assert outcome.timed_out
    assert (outcome.exit_code, outcome.signal) == (-1, "SIGTERM")
    assert lines == [b"first"]


@pytest.mark.anyio
async def test_run_cli_does_not_wait_forever_for_a_grandchild_holding_the_pipe(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("driver.clikit._process.DRAIN_SECONDS", 0.3)
    started = time.monotonic()
    outcome = await run_cli(
        script(
            "parent", code="subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(3)'])"
        ),
        cwd=None,
        timeout=None,
        on_spawn=lambda pid: None,
        on_chunk=lambda stream, data: None,
        on_line=lambda line: None,
    )
    assert time.monotonic() - started < 2
    assert outcome.exit_code == 0
    assert outcome.stdout.startswith(b"parent")


@pytest.mark.anyio
async def test_run_cli_raises_when_the_program_cannot_start() -> None:
    with pytest.raises(OSError):  # noqa: PT011 - any start failure is an OSError
        await run_cli(
            ["/nonexistent/bin/agent"],
            cwd=None,
            timeout=None,
            on_spawn=print,
            on_chunk=print,
            on_line=print,
        )


# -- run_turn ---------------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_successful_turn_checkpoints_with_the_guard_values(tmp_path: Path) -> None:
    request = Request(
        prompt="hi",
        streaming=True,
        workspace=WorkspaceLease(id="ws-9", cwd=str(tmp_path)),
        profile_payload=ProfilePayload(
            fingerprint="exact", session_compatibility_fingerprint="compatible"
        ),
    )
    response, sink = await toy_run(
        script("say hello", "tool c-1", "done s-42"), request, cwd=str(tmp_path)
    )
    assert structural_violations(response, sink) == []
    assert response.output == "hello"
    assert response.model == "toy-1"  # what the CLI reported beats what was asked
    assert response.raw_streams is not None
    assert response.raw_streams.terminal == TerminalPayload(
        event="done", raw_json='{"session": "s-42"}'
    )
    assert response.checkpoint is not None
    assert response.checkpoint.valid
    assert response.checkpoint.state == SessionState(
        resume_id="s-42",
        display_id="s-42",
        data={
            SESSION_PARAM_CWD: str(tmp_path),
            SESSION_PARAM_PROFILE_FINGERPRINT: "compatible",
            SESSION_PARAM_WORKSPACE_ID: "ws-9",
        },
    )
    assert kinds(sink)[-2:] == [StreamKind.TOOL_CALL_END, StreamKind.RUN_FINISHED]
    assert sink.stream[-1].usage == Usage(output_tokens=1)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("command", "problem"),
    [
        (script("say hi", "done s-1", exit_code=2), "exit code"),
        (script("say hi"), "no terminal"),
        (script("say hi", "garbled", "done s-1"), "corrupt line"),
    ],
    ids=["exit-code", "no-terminal", "corrupt-line"],
)
async def test_no_valid_checkpoint_without_a_clean_run(command: list[str], problem: str) -> None:
    response, sink = await toy_run(command)
    assert structural_violations(response, sink) == []
    assert response.checkpoint is None, problem
    if problem != "corrupt line":
        assert response.failure is not None
        assert response.transcript[-1].kind == TranscriptKind.FAILURE
        assert sink.stream[-1].kind == StreamKind.RUN_ERROR
        assert sink.stream[-1].error == response.failure


@pytest.mark.anyio
async def test_a_timed_out_turn_closes_its_stream() -> None:
    response, sink = await toy_run(script("tool c-1", "say late", sleep=10), timeout=1.0)
    assert structural_violations(response, sink) == []
    assert response.timed_out
    assert response.signal == "SIGTERM"
    assert response.failure is not None
    assert kinds(sink) == [
        StreamKind.RUN_STARTED,
        StreamKind.TOOL_CALL_START,
        StreamKind.TOOL_CALL_END,
        StreamKind.RUN_ERROR,
    ]


@pytest.mark.anyio
async def test_cancellation_stops_the_process_and_closes_the_stream() -> None:
    with anyio.fail_after(10), anyio.CancelScope() as scope:
        sink = CancelOnToolStart(scope)
        await run_turn(
            Request(prompt="hi", streaming=True),
            sink,
            driver_type="toy",
            argv=lambda resume_id: script("tool c-1", "say late", sleep=10),
            cwd="",
            model="",
            timeout=0,
            parser=ToyParser,
        )
    assert scope.cancelled_caught
    spawn = next(e for e in sink.events if e.type == RunEventType.SPAWN)
    with pytest.raises(ProcessLookupError):
        os.kill(int(spawn.metadata["pid"]), 0)  # stopped and reaped
    assert kinds(sink)[-2:] == [StreamKind.TOOL_CALL_END, StreamKind.RUN_ERROR]
    error = sink.stream[-1].error
    assert error is not None
    assert error.code == FailureCode.CANCELLED
    assert adaptertest.verify_stream_sequence(sink.stream) == []


@pytest.mark.anyio
async def test_a_program_that_cannot_start_raises_with_a_closed_stream() -> None:
    with pytest.raises(RunError) as caught:
        await toy_run(["/nonexistent/bin/agent"])
    response = caught.value.response
    assert response is not None
    assert response.failure is not None
    assert "cannot start /nonexistent/bin/agent" in response.failure.message
    assert response.checkpoint is None


@pytest.mark.anyio
async def test_the_resume_id_reaches_the_command_line() -> None:
    seen: list[str] = []

    def argv(resume_id: str) -> list[str]:
        seen.append(resume_id)
        return script("done s-7")

    state = SessionState(resume_id="s-7", data={SESSION_PARAM_CWD: os.getcwd()})
    response = await run_turn(
        Request(prompt="hi", session=SessionContext(state=state)),
        RecordingSink(),
        driver_type="toy",
        argv=argv,
        cwd="",
        model="",
        timeout=0,
        parser=ToyParser,
    )
    assert seen == ["s-7"]
    assert response.checkpoint is not None


@pytest.mark.anyio
@pytest.mark.parametrize("key", GUARDED_KEYS)
async def test_resume_is_refused_before_launch_when_a_guard_changed(key: str) -> None:
    state = SessionState(resume_id="s-7", data={key: "captured elsewhere"})
    sink = RecordingSink()
    launched: list[str] = []

    def argv(resume_id: str) -> list[str]:
        launched.append(resume_id)
        return script()

    with pytest.raises(SessionMismatchError, match=key):
        await run_turn(
            Request(prompt="hi", streaming=True, session=SessionContext(state=state)),
            sink,
            driver_type="toy",
            argv=argv,
            cwd="",
            model="",
            timeout=0,
            parser=ToyParser,
        )
    assert launched == []
    assert sink.events == []
    assert sink.stream == []
