"""The format-independent plumbing of the CLI example drivers.

Processes are small ``python -c`` scripts; :class:`ToyParser` reads a made-up
line format, so each rule of the run flow is tested once here rather than
through every driver.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest

import adaptertest
from adaptertest import RecordingSink
from driver import (
    SESSION_PARAM_CWD,
    SESSION_PARAM_PROFILE_FINGERPRINT,
    SESSION_PARAM_WORKSPACE_ID,
    Descriptor,
    FailureCode,
    InvalidDriverConfigError,
    InvalidOutputSchemaError,
    OutputFormat,
    OutputSchema,
    ProfilePayload,
    Request,
    Response,
    RunError,
    RunEventType,
    RunFailure,
    SessionContext,
    SessionParams,
    SessionState,
    StreamCapability,
    StreamKind,
    StreamPayload,
    StructuredOutput,
    StructuredOutputSource,
    StructuredOutputUnsupportedError,
    TerminalPayload,
    TranscriptItem,
    TranscriptKind,
    Usage,
    WorkspaceLease,
)
from driver.clikit import (
    GUARDED_KEYS,
    CLIConfig,
    CLIDriver,
    JsonlParser,
    LineFramer,
    ProcessOutcome,
    ResumeCodec,
    RunOutput,
    SessionCarry,
    SessionMismatchError,
    judge_structured,
    make_usage,
    native_schema,
    read_usage,
    run_cli,
    run_turn,
    schema_file,
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


def test_run_output_streams_a_block_chunk_by_chunk() -> None:
    sink = RecordingSink()
    out = RunOutput(sink, streaming=True, run_id="r-1", thread_id="t-1")
    out.stream(StreamPayload(kind=StreamKind.RUN_STARTED))
    out.step_start("turn")
    first = out.block_start("text", "m")
    out.block_delta(first, "Hel")
    out.block_delta(first, "")  # an empty chunk says nothing (EVT-04)
    out.block_delta(first, "lo")
    out.block_delta("never-opened", "x")
    out.block_end(first)
    out.block_delta(first, "late")  # closed: dropped
    out.block_end(first)  # closed once only
    again = out.block_start("text", "m")  # the same wanted id is never reopened (EVT-03)
    thought = out.block_start("reasoning", "r", parent="call-9")
    out.block_delta(thought, "hmm")
    out.block_delta(again, "still open")
    out.tool_start("call-1", "probe", {})
    out.finish(None)  # closes both blocks, then the tool, then the step
    assert again == "m#2"
    assert [(p.kind, p.message_id, p.delta) for p in sink.stream[2:7]] == [
        (StreamKind.TEXT_START, "m", ""),
        (StreamKind.TEXT_CONTENT, "m", "Hel"),
        (StreamKind.TEXT_CONTENT, "m", "lo"),
        (StreamKind.TEXT_END, "m", ""),
        (StreamKind.TEXT_START, "m#2", ""),
    ]
    assert {p.parent_tool_call_id for p in sink.stream if p.message_id == "r"} == {"call-9"}
    assert kinds(sink)[-6:] == [
        StreamKind.TOOL_CALL_START,
        StreamKind.TEXT_END,
        StreamKind.REASONING_END,
        StreamKind.TOOL_CALL_END,
        StreamKind.STEP_FINISHED,
        StreamKind.RUN_FINISHED,
    ]
    assert adaptertest.verify_stream_sequence(sink.stream) == []


def test_run_output_whole_blocks_are_one_chunk() -> None:
    sink = RecordingSink()
    out = RunOutput(sink, streaming=True, run_id="", thread_id="")
    out.text("m", "whole")
    out.reasoning("m", "")  # nothing to say: nothing opened
    assert [(p.kind, p.delta) for p in sink.stream] == [
        (StreamKind.TEXT_START, ""),
        (StreamKind.TEXT_CONTENT, "whole"),
        (StreamKind.TEXT_END, ""),
    ]


def test_run_output_vendor_kinds_carry_their_fields() -> None:
    sink = RecordingSink()
    out = RunOutput(sink, streaming=True, run_id="r-1", thread_id="t-1")
    out.stream(StreamPayload(kind=StreamKind.RUN_STARTED))
    out.vendor("toy.warning", {"severity": "warning", "attempt": 2})
    out.finish(None)
    out.vendor("toy.warning", {"late": True})  # after the terminal: dropped
    vendor = [p for p in sink.stream if p.kind == "toy.warning"]
    assert [(p.raw, p.run_id, p.thread_id) for p in vendor] == [
        ({"severity": "warning", "attempt": 2}, "r-1", "t-1")
    ]
    assert adaptertest.verify_stream_sequence(sink.stream) == []


@pytest.mark.parametrize(
    "kind", ["warning", "toy.", ".warning", "run.retry", "text.extra", "tool_call.note", ""]
)
def test_run_output_refuses_kinds_that_are_not_vendor_kinds(kind: str) -> None:
    out = RunOutput(RecordingSink(), streaming=True, run_id="", thread_id="")
    with pytest.raises(ValueError, match="vendor kind"):
        out.vendor(kind, {})


# -- CLIDriver and JsonlParser defaults -------------------------------------------------------


class ToyConfig(CLIConfig):
    command: tuple[str, ...] = ("toy-cli", "--json")


class ToyJsonParser(JsonlParser):
    """``{"say": TEXT}`` lines, ``{"done": true|false}`` terminals, ``{"warn": TEXT}`` notes."""

    program = "toy"
    missing_terminal = "a done line"

    def __init__(self, out: RunOutput) -> None:
        super().__init__(out)
        self.warnings: list[str] = []
        self._done: bool | None = None

    def on_object(self, line: dict[str, Any], text: str) -> None:
        if "done" in line:
            self._done = line["done"] is True
            self.terminal = TerminalPayload(event="done", raw_json=text)
        elif "warn" in line:
            self.warnings.append(str(line["warn"]))

    @property
    def succeeded(self) -> bool:
        return self._done is True

    @property
    def resume_id(self) -> str:
        return ""

    def output(self) -> str:
        return ""

    def reported_failure(self, meta: dict[str, Any]) -> str:
        return "toy said no"


class NoisyToyParser(ToyJsonParser):
    """Quotes stderr before its own warnings and files the last warning with any failure."""

    def exit_detail(self, outcome: ProcessOutcome) -> str:
        return outcome.stderr.decode().strip() or "; ".join(self.warnings)

    def failure_context(self, meta: dict[str, Any], message: str, outcome: ProcessOutcome) -> str:
        if self.warnings:
            meta["last_warning"] = self.warnings[-1]
        return ""


class ToyDriver(CLIDriver[ToyConfig]):
    driver_type = "toy"
    fingerprint_domain = "tests/toy/v1"
    install_hint = "install toy-cli"

    def __init__(self, config: ToyConfig | None = None) -> None:
        super().__init__(ToyConfig, config)

    def command_line(
        self, config: ToyConfig, prompt: str, *, model: str, resume_id: str
    ) -> list[str]:
        return [*config.command, prompt]

    def stream_parser(self, out: RunOutput, *, model: str) -> ToyJsonParser:
        return ToyJsonParser(out)


class TokenToyDriver(ToyDriver):
    display_name = "Toy CLI (token deltas)"
    extra_args_hint = "--fast"
    capability = StreamCapability(native=True, token_level=True)


def test_a_json_line_with_invalid_utf8_is_corrupt_and_stays_visible() -> None:
    """Decoded with replacement characters it would parse, and a checkpoint would vouch for
    text the CLI never wrote (DFT-02); a log line that is not UTF-8 is only shown."""
    out = RunOutput(RecordingSink(), streaming=True, run_id="r", thread_id="")
    parser = ToyJsonParser(out)
    for line in (b'{"warn": "caf\xc3"}', b"\xff log noise", b'{"warn": "caf\xc3\xa9"}'):
        parser.feed(line)
    assert parser.warnings == ["caf\u00e9"]
    assert parser.malformed_lines == 1
    assert [(i.kind, i.text) for i in out.transcript] == [
        (TranscriptKind.STDOUT, '{"warn": "caf\ufffd"}'),
        (TranscriptKind.STDOUT, "\ufffd log noise"),
    ]


def test_the_default_descriptor_comes_from_the_class_and_the_config() -> None:
    plain = ToyDriver().descriptor()
    assert (plain.type, plain.display_name, plain.models) == ("toy", "toy", ())
    assert plain.sessions.supports_resume
    assert plain.workspace.supported
    assert not plain.structured_output.json_schema_native
    assert plain.config_schema is not None
    fields = {f.name: f for f in plain.config_schema.fields}
    assert fields["command"].default == "toy-cli"  # the config class's default program
    assert fields["extra_args"].hint == "one argument per line"
    assert ToyDriver().stream_capability() == StreamCapability(native=True, reasoning=True)
    token = TokenToyDriver(ToyConfig(model="toy-2")).descriptor()
    assert token.display_name == "Toy CLI (token deltas)"
    assert [m.id for m in token.models] == ["toy-2"]
    assert token.config_schema is not None
    hint = {f.name: f.hint for f in token.config_schema.fields}["extra_args"]
    assert hint == "one argument per line, e.g. --fast"
    assert TokenToyDriver().stream_capability().token_level
    assert TokenToyDriver().descriptor() == TokenToyDriver().descriptor()  # DRV-02


def feed_toy(parser: ToyJsonParser, *lines: str) -> ToyJsonParser:
    for line in lines:
        parser.feed(line.encode())
    return parser


@pytest.mark.parametrize(
    ("lines", "outcome", "message"),
    [
        ((), ProcessOutcome(0, "", True, b"", b""), "toy did not finish within 5 s"),
        (('{"done": false}',), ProcessOutcome(1, "", False, b"", b"err"), "toy said no"),
        ((), ProcessOutcome(-1, "SIGKILL", False, b"", b""), "toy was ended by SIGKILL"),
        ((), ProcessOutcome(2, "", False, b"", b"disk full\n"), "toy exited with code 2: disk"),
        (('{"done": true}',), ProcessOutcome(3, "", False, b"", b""), "toy exited with code 3"),
        ((), ProcessOutcome(0, "", False, b"", b""), "toy exited without a done line"),
    ],
)
def test_jsonl_failures_are_classified_in_a_fixed_order(
    lines: tuple[str, ...], outcome: ProcessOutcome, message: str
) -> None:
    out = RunOutput(RecordingSink(), streaming=False, run_id="", thread_id="")
    failure = feed_toy(ToyJsonParser(out), '{"warn": "slow"}', *lines).failure(outcome, 5)
    assert failure is not None
    assert failure.message.startswith(message)
    assert failure.metadata["exit_code"] == outcome.exit_code
    assert "last_warning" not in failure.metadata  # the base adds nothing of its own
    assert (
        feed_toy(ToyJsonParser(out), '{"done": true}').failure(
            ProcessOutcome(0, "", False, b"", b""), 5
        )
        is None
    )


def test_a_format_can_choose_what_a_failure_quotes_and_files() -> None:
    out = RunOutput(RecordingSink(), streaming=False, run_id="", thread_id="")
    parser = feed_toy(NoisyToyParser(out), '{"warn": "quota low"}', '{"warn": "quota gone"}')
    with_stderr = parser.failure(ProcessOutcome(7, "", False, b"", b"fatal: quota\n"), 5)
    without = parser.failure(ProcessOutcome(7, "", False, b"", b""), 5)
    timed_out = parser.failure(ProcessOutcome(-1, "SIGTERM", True, b"", b""), 5)
    assert with_stderr is not None
    assert with_stderr.message == "toy exited with code 7: fatal: quota"
    assert without is not None
    assert without.message == "toy exited with code 7: quota low; quota gone"
    assert timed_out is not None
    for failure in (with_stderr, without, timed_out):
        assert failure.metadata["last_warning"] == "quota gone"


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


# Writes 4 MiB to stdout without ever blocking, dropping what does not fit at once, then
# exits: what a Node.js CLI does when it calls process.exit() with writes still queued.
_IMPATIENT = (
    "os.set_blocking(1, False)\n"
    "data = (b'x' * 1023 + b'\\n') * 4096\n"
    "sent = 0\n"
    "while sent < len(data):\n"
    "    try:\n"
    "        sent += os.write(1, data[sent:])\n"
    "    except BlockingIOError:\n"
    "        break\n"
    "sys.stderr.write(str(sent))\n"
)


@pytest.mark.anyio
async def test_run_cli_with_stdout_to_file_keeps_what_a_pipe_would_have_dropped() -> None:
    lines: list[bytes] = []
    outcome = await run_cli(
        script(code=_IMPATIENT),
        cwd=None,
        timeout=60,
        on_spawn=lambda pid: None,
        on_chunk=lambda stream, data: None,
        on_line=lines.append,
        stdout_to_file=True,
    )
    assert outcome.stderr == str(4 << 20).encode()  # a file took every byte at once
    assert outcome.stdout == (b"x" * 1023 + b"\n") * 4096
    assert len(lines) == 4096


@pytest.mark.anyio
async def test_run_cli_with_stdout_to_file_streams_lines_while_the_cli_runs() -> None:
    """The CLI prints a line, then waits for its input to end; the writer ends it only
    once that line has reached the caller, so a file read only at exit would hang."""
    seen = anyio.Event()
    lines: list[bytes] = []

    def take(line: bytes) -> None:
        lines.append(line)
        seen.set()

    async def close_after_the_first_line(pipe: anyio.abc.ByteSendStream) -> None:
        await seen.wait()

    outcome = await run_cli(
        script("first", code="sys.stdin.read(); print('second')"),
        cwd=None,
        timeout=60,
        on_spawn=lambda pid: None,
        on_chunk=lambda stream, data: None,
        on_line=take,
        stdin=close_after_the_first_line,
        stdout_to_file=True,
    )
    assert (outcome.timed_out, lines) == (False, [b"first", b"second"])


_BIG_INPUT = ('a prompt pasted from a file, ünïcödé ✓ "quoted"\n' * 40_000).encode()
"""About 2 MiB: sixteen times what Linux lets one argv entry hold."""


class StdinToyDriver(ToyDriver):
    """Reads the prompt on stdin and keeps a copy in the file named by its first argument
    (with ``--ignore`` it reads nothing and exits)."""

    prompt_on_stdin = True

    def command_line(
        self, config: ToyConfig, prompt: str, *, model: str, resume_id: str
    ) -> list[str]:
        copy = (
            "import sys\n"
            "if sys.argv[1:] != ['--ignore']:\n"
            "    open(sys.argv[1], 'wb').write(sys.stdin.buffer.read())\n"
            "print('{\"done\": true}')"
        )
        return [sys.executable, "-c", copy, *config.command]


@pytest.mark.anyio
async def test_a_driver_with_prompt_on_stdin_hands_the_cli_the_prompt_there(
    tmp_path: Path,
) -> None:
    copy = tmp_path / "prompt.bin"
    driver = StdinToyDriver(ToyConfig(command=(str(copy),)))
    prompt = "-starts like a flag\n" + _BIG_INPUT.decode()
    response = await driver.run(Request(prompt=prompt, streaming=True), RecordingSink())
    assert response.failure is None, response.failure
    assert copy.read_bytes() == prompt.encode()


@pytest.mark.anyio
async def test_a_cli_that_never_reads_its_prompt_only_breaks_the_pipe() -> None:
    """The run's outcome is the CLI's; the unread prompt is no error of its own."""
    driver = StdinToyDriver(ToyConfig(command=("--ignore",)))
    prompt = _BIG_INPUT.decode()
    response = await driver.run(Request(prompt=prompt, streaming=True), RecordingSink())
    assert response.failure is None, response.failure


def test_without_prompt_on_stdin_the_cli_gets_no_stdin_writer() -> None:
    request = Request(prompt="hi")
    parser = ToyJsonParser(RunOutput(RecordingSink(), streaming=True, run_id="", thread_id=""))
    assert ToyDriver().stdin_writer(ToyConfig(), request, RecordingSink(), parser) is None


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


async def check_refused_before_launch(
    request: Request, error: type[Exception], match: str, marker: Path
) -> None:
    """``run_turn`` raises ``error`` (its message matching ``match``) with nothing emitted
    and no process started (the command would write ``marker``)."""
    sink = RecordingSink()
    command = script(code=f"open({str(marker)!r}, 'w').close()")
    with pytest.raises(error, match=match):
        await run_turn(
            request,
            sink,
            driver_type="toy",
            argv=lambda resume_id: command,
            cwd="",
            model="",
            timeout=0,
            parser=ToyParser,
        )
    assert not marker.exists()
    assert sink.events == []
    assert sink.stream == []


@pytest.mark.anyio
@pytest.mark.parametrize("key", GUARDED_KEYS)
async def test_resume_is_refused_before_launch_when_a_guard_changed(
    key: str, tmp_path: Path
) -> None:
    state = SessionState(resume_id="s-7", data={key: "captured elsewhere"})
    request = Request(prompt="hi", streaming=True, session=SessionContext(state=state))
    await check_refused_before_launch(request, SessionMismatchError, key, tmp_path / "ran")


@pytest.mark.anyio
async def test_a_prompt_holding_a_nul_is_refused_before_launch_even_off_argv(
    tmp_path: Path,
) -> None:
    """The command line here holds no prompt (a driver that writes it to stdin): the NUL
    is refused all the same, naming where it is."""
    request = Request(prompt="before\x00after", streaming=True)
    await check_refused_before_launch(
        request,
        InvalidDriverConfigError,
        r"the prompt \(character 6\) contains a NUL byte",
        tmp_path / "ran",
    )


# -- usage and native structured output -------------------------------------------------------


def test_make_usage_keeps_the_usage_definition() -> None:
    assert make_usage(
        input_tokens=120, cached_input_tokens=80, output_tokens=9, cost_usd=0.0263
    ) == Usage(input_tokens=120, cached_input_tokens=80, output_tokens=9, estimated_cost_milli=26)
    # Inconsistent numbers cannot break it: no negatives, cached never above input.
    assert (
        make_usage(input_tokens=-5, cached_input_tokens=7, output_tokens=-1, cost_usd=-0.5)
        == Usage()
    )
    assert (
        make_usage(input_tokens=10, cached_input_tokens=99, output_tokens=0).cached_input_tokens
        == 10
    )
    for cost in (math.inf, math.nan):
        assert make_usage(
            input_tokens=1, cached_input_tokens=0, output_tokens=1, cost_usd=cost
        ) == Usage(input_tokens=1, output_tokens=1)


def native_request(schema: str, source: str = "native", fmt: str = "json_schema") -> Request:
    return Request(
        structured_output_source=source,
        output_schema=OutputSchema(format=fmt, schema_document=schema),
    )


OK_SCHEMA = '{"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}'


def test_native_schema_without_jsonschema_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The base install has no jsonschema: a native run fails at set-up, saying what to add."""
    for name in ("jsonschema", "jsonschema.validators"):
        monkeypatch.setitem(sys.modules, name, None)
    assert native_schema(Request()) is None  # nothing native asked: nothing needed
    with pytest.raises(ModuleNotFoundError, match=r"agent-driver-kit\[clikit\]"):
        native_schema(native_request(OK_SCHEMA))


def test_native_schema_is_checked_before_launch() -> None:
    assert native_schema(Request()) is None
    assert native_schema(native_request(OK_SCHEMA, source="prompt_validate")) is None
    schema = native_schema(native_request(OK_SCHEMA))
    assert schema is not None
    assert schema.schema_document == OK_SCHEMA
    with pytest.raises(InvalidOutputSchemaError, match="without a schema"):
        native_schema(Request(structured_output_source="native"))
    with pytest.raises(InvalidOutputSchemaError, match="unsupported output format"):
        native_schema(native_request(OK_SCHEMA, fmt=""))
    for broken in ('{"type": ', '{"type": "no such type"}', '{"type": "object", "type": "x"}'):
        with pytest.raises(InvalidOutputSchemaError, match="does not compile") as caught:
            native_schema(native_request(broken))
        assert caught.value.cause is not None


def test_the_answer_is_judged_against_the_schema() -> None:
    digest = hashlib.sha256(OK_SCHEMA.encode()).hexdigest()
    good = judge_structured(OK_SCHEMA, ' {"ok": true}\n')
    assert good == StructuredOutput(
        format=OutputFormat.JSON_SCHEMA,
        source=StructuredOutputSource.NATIVE,
        raw_json='{"ok": true}',
        value={"ok": True},
        valid=True,
        schema_hash=digest,
    )
    wrong = judge_structured(OK_SCHEMA, '{"ok": "yes"}')
    assert not wrong.valid
    assert wrong.value == {"ok": "yes"}
    assert wrong.validation_errors == ["ok: 'yes' is not of type 'boolean'"]
    assert judge_structured(OK_SCHEMA, "[]").validation_errors == [
        "top level: [] is not of type 'object'"
    ]
    for not_json in ("All good.", '{"ok": NaN}', '{"ok": true, "ok": false}', '{"ok": true} {}'):
        judged = judge_structured(OK_SCHEMA, not_json)
        assert not judged.valid
        assert judged.raw_json == not_json
        assert judged.validation_errors[0].startswith("the answer is not one JSON document")
    missing = judge_structured(OK_SCHEMA, None)
    assert (missing.valid, missing.raw_json, missing.schema_hash) == (False, "", digest)
    assert missing.validation_errors == ["the CLI returned no structured value"]


def test_the_schema_file_lives_only_as_long_as_the_run() -> None:
    with schema_file(OK_SCHEMA) as path:
        assert Path(path).read_text(encoding="utf-8") == OK_SCHEMA
    assert not Path(path).exists()
    with pytest.raises(RuntimeError), schema_file(OK_SCHEMA) as path:
        raise RuntimeError("the run failed")
    assert not Path(path).exists()


def test_end_open_tools_closes_calls_but_not_steps() -> None:
    sink = RecordingSink()
    out = RunOutput(sink, streaming=True, run_id="r", thread_id="t")
    out.step_start("turn")
    out.tool_start("call-1", "probe", {})
    out.end_open_tools()
    out.end_open_tools()  # nothing left to close
    out.tool_result("call-1", {"late": True})  # the call may still report its result
    assert kinds(sink) == [
        StreamKind.STEP_STARTED,
        StreamKind.TOOL_CALL_START,
        StreamKind.TOOL_CALL_END,
        StreamKind.TOOL_CALL_RESULT,
    ]


class ScriptToyDriver(CLIDriver[CLIConfig]):
    """A CLI driver of the toy format that declares no native structured output."""

    driver_type = "toy"
    fingerprint_domain = "tests/toy/v1"
    install_hint = "nothing to install"

    def __init__(self, config: CLIConfig | None = None) -> None:
        super().__init__(CLIConfig, config or CLIConfig(command=("toy",)))

    def descriptor(self) -> Descriptor:
        return Descriptor(type=self.driver_type, display_name="Toy")

    def command_line(
        self, config: CLIConfig, prompt: str, *, model: str, resume_id: str
    ) -> list[str]:
        return script("say hi", "done s-1")

    def stream_parser(self, out: RunOutput, *, model: str) -> ToyParser:
        return ToyParser(out)


@pytest.mark.anyio
async def test_undeclared_native_output_is_refused_before_launch() -> None:
    sink = RecordingSink()
    with pytest.raises(StructuredOutputUnsupportedError):
        await ScriptToyDriver().run(native_request(OK_SCHEMA), sink)
    assert sink.events == []
    # Prompt-validated output needs nothing from the driver: the run goes ahead.
    response = await ScriptToyDriver().run(native_request(OK_SCHEMA, "prompt_validate"), sink)
    assert response.failure is None
    assert response.structured_output is None


def test_read_usage_keeps_the_usage_definition() -> None:
    """read_usage goes through make_usage: a CLI's inconsistent counts cannot break USG-01."""
    assert read_usage(
        {"input_tokens": 10, "cached_input_tokens": 4, "output_tokens": 3},
        cached_key="cached_input_tokens",
    ) == Usage(input_tokens=10, cached_input_tokens=4, output_tokens=3)
    assert read_usage(
        {"input_tokens": 5, "cached": 9, "output_tokens": -2}, cached_key="cached"
    ) == Usage(input_tokens=5, cached_input_tokens=5, output_tokens=0)


class CarryingToyParser(ToyParser):
    """Counts the runs of its session: the count travels in the checkpoint."""

    def __init__(self, out: RunOutput) -> None:
        super().__init__(out)
        self.resumed_from: dict[str, str] | None = None

    def resume_from(self, data: Mapping[str, str]) -> None:
        self.resumed_from = dict(data)

    def session_data(self) -> dict[str, str]:
        runs = int((self.resumed_from or {}).get("toy.runs", "0")) + 1
        # A guard key is never the parser's to set: run_turn keeps its own value.
        return {"toy.runs": str(runs), SESSION_PARAM_CWD: "/somewhere/else"}


@pytest.mark.anyio
async def test_a_session_carry_parser_sees_the_stored_data_and_adds_to_the_checkpoint() -> None:
    parsers: list[CarryingToyParser] = []

    def parser(out: RunOutput) -> CarryingToyParser:
        parsers.append(CarryingToyParser(out))
        return parsers[-1]

    async def turn(request: Request) -> Response:
        return await run_turn(
            request,
            RecordingSink(),
            driver_type="toy",
            argv=lambda resume_id: script("say hi", "done s-7"),
            cwd="",
            model="",
            timeout=0,
            parser=parser,
        )

    assert isinstance(CarryingToyParser.__new__(CarryingToyParser), SessionCarry)
    first = await turn(Request(prompt="hi"))
    assert parsers[0].resumed_from is None  # a new session: nothing to resume from
    assert first.checkpoint is not None
    assert first.checkpoint.state is not None
    assert first.checkpoint.state.data["toy.runs"] == "1"
    assert first.checkpoint.state.data[SESSION_PARAM_CWD] == os.getcwd()
    second = await turn(
        Request(prompt="again", session=SessionContext(state=first.checkpoint.state))
    )
    assert parsers[1].resumed_from == first.checkpoint.state.data
    assert second.checkpoint is not None
    assert second.checkpoint.state is not None
    assert second.checkpoint.state.data["toy.runs"] == "2"
