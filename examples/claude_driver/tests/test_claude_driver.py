"""Behaviour of the Claude Code example driver on recorded stream-json output.

Parser tests feed a recording straight into the parser (no process). Driver
tests use the kit's replay stand-in as the CLI, so the whole path from the
process to the response runs; no Claude Code is needed. Deadlines, cancellation,
start failures and the resume guard are format-independent: ``cli_plumbing``'s
tests cover them once for both drivers.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from pydantic import ValidationError

import adaptertest
from adaptertest import RecordingSink
from claude_driver import (
    CLAUDE_DRIVER_TYPE,
    ClaudeConfig,
    ClaudeDriver,
    ClaudeStreamParser,
    build_argv,
)
from cli_plumbing import LineFramer, ProcessOutcome, RunOutput
from driver import (
    EnvironmentStatus,
    FailureCode,
    InvalidDriverConfigError,
    Request,
    Response,
    RunEventType,
    SessionContext,
    SessionState,
    StreamKind,
)

RECORDINGS = Path(__file__).resolve().parent.parent / "recordings"
TERMINALS = {StreamKind.RUN_FINISHED, StreamKind.RUN_ERROR}


def replay_command(
    recording: Path | str,
    *,
    exit_code: int = 0,
    stderr: str | None = None,
    record_argv: Path | None = None,
) -> tuple[str, ...]:
    """A command that replays a recording as if it were ``claude``; the driver's own
    arguments go after the final ``--`` and are ignored (or recorded)."""
    command = [sys.executable, "-m", "adaptertest", "replay", str(RECORDINGS / recording)]
    command += ["--exit-code", str(exit_code)]
    if stderr is not None:
        command += ["--stderr", str(RECORDINGS / stderr)]
    if record_argv is not None:
        command += ["--record-argv", str(record_argv)]
    return (*command, "--")


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    backend: str = request.param
    return backend


# -- the parser, one recording at a time -----------------------------------------------------


@dataclass(frozen=True)
class Case:
    recording: str
    exit_code: int
    items: tuple[str, ...]
    payloads: tuple[str, ...]
    output: str
    succeeded: bool
    session: str
    failure: str | None
    stderr: str | None = None


TEXT = ("text.start", "text.content", "text.end")
TOOL = ("tool_call.start", "tool_call.result", "tool_call.end")


CASES = [
    Case(
        "success.jsonl",
        0,
        ("init", "assistant", "result"),
        ("step.started", *TEXT, "step.finished"),
        "OK",
        True,
        "3f9b6c1e-58d2-4a7f-9e0b-c4d21a8f6e53",
        None,
    ),
    Case(
        "tool_use.jsonl",
        0,
        (
            "init",
            "assistant",
            "tool_call",
            "tool_result",
            "tool_call",
            "tool_call",
            "tool_result",
            "assistant",
            "tool_result",
            "assistant",
            "result",
        ),
        (
            "step.started",
            *TEXT,
            *TOOL,
            "step.finished",
            "step.started",
            "tool_call.start",  # Task: stays open while its subagent works
            *TOOL,  # the subagent's Bash call
            *TEXT,  # the subagent's answer
            "tool_call.result",
            "tool_call.end",
            "step.finished",
            "step.started",
            *TEXT,
            "step.finished",
        ),
        "There are 3 stray print() calls: two in src/app.py (both by Dana Ortiz) and one in "
        "src/util/io.py (by Lee Park).",
        True,
        "b6e04d2a-1c97-4f58-8a3e-9d05f7c2b184",
        None,
    ),
    Case(
        "thinking.jsonl",
        0,
        ("init", "thinking", "tool_call", "tool_result", "assistant", "result"),
        (
            "step.started",
            "reasoning.start",
            "reasoning.content",
            "reasoning.end",
            *TOOL,
            "step.finished",
            "step.started",  # signature-only thinking adds nothing
            *TEXT,
            "step.finished",
        ),
        "The server listens on port 8081 (config.toml, [server] section).",
        True,
        "5a13e8f0-6d2c-4b97-b1e4-08c9f3a7d625",
        None,
    ),
    Case(
        "error_result.jsonl",
        1,
        ("init", "system", "system", "result"),
        (),
        "",
        False,
        "c0d7f2b9-3e16-4a85-9c4f-71b2e8d0a3f6",
        "API Error: 529 Overloaded",
    ),
    Case(
        "max_turns.jsonl",
        1,
        ("init", "tool_call", "tool_result", "assistant", "tool_call", "tool_result", "result"),
        (
            "step.started",
            *TOOL,
            "step.finished",
            "step.started",
            *TEXT,
            *TOOL,
            "step.finished",
        ),
        "I'll move the handler setup into its own function.",
        False,
        "e47a0b3c-9f21-4d6e-8b05-c3a9d7f1e2b8",
        "Reached maximum number of turns (2)",
    ),
    Case(
        "nonzero_exit.jsonl",
        1,
        ("init", "assistant", "tool_call", "stdout"),
        ("step.started", *TEXT, "tool_call.start"),
        "Running the migration in dry-run mode first.",
        False,
        "",
        "claude exited with code 1: Error: socket hang up",
        "nonzero_exit.stderr.txt",
    ),
    Case(
        "garbage.jsonl",
        0,
        ("stdout", "init", "assistant", "result"),
        ("step.started", *TEXT, "step.finished"),
        "Done: the README now links to CONTRIBUTING.md.",
        True,
        "a9f3d1c7-4e0b-4b28-9d6a-5f8e2c0b7d31",
        None,
    ),
]


def parse(
    data: bytes, *, streaming: bool = True
) -> tuple[ClaudeStreamParser, RunOutput, RecordingSink]:
    sink = RecordingSink()
    out = RunOutput(sink, streaming=streaming, run_id="run-1", thread_id="")
    parser = ClaudeStreamParser(out)
    framer = LineFramer(parser.feed)
    framer.feed(data)
    framer.flush()
    return parser, out, sink


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.recording)
def test_parser_on_recording(case: Case) -> None:
    data = (RECORDINGS / case.recording).read_bytes()
    parser, out, sink = parse(data)
    assert tuple(i.kind for i in out.transcript) == case.items
    assert tuple(p.kind for p in sink.stream) == case.payloads
    assert parser.output() == case.output
    assert parser.succeeded is case.succeeded
    assert parser.resume_id == case.session
    stderr = (RECORDINGS / case.stderr).read_bytes() if case.stderr else b""
    failure = parser.failure(ProcessOutcome(case.exit_code, "", False, data, stderr), 60)
    if case.failure is None:
        assert failure is None
    else:
        assert failure is not None
        assert failure.code == FailureCode.AGENT_ERROR
        assert case.failure in failure.message
        assert failure.metadata["exit_code"] == case.exit_code


def test_parser_keeps_terminal_json_verbatim_and_reads_usage() -> None:
    parser, out, _ = parse((RECORDINGS / "thinking.jsonl").read_bytes())
    last_line = (RECORDINGS / "thinking.jsonl").read_text(encoding="utf-8").splitlines()[-1]
    assert parser.terminal is not None
    assert parser.terminal.event == "result"
    assert parser.terminal.raw_json == last_line  # "type" is its last key; still found
    assert parser.usage is not None
    assert (parser.usage.input_tokens, parser.usage.output_tokens) == (11, 143)
    assert parser.usage.cached_input_tokens == 29800
    assert out.transcript[-1].cost_usd == pytest.approx(0.0218)


def test_parser_reports_subagent_parents_and_tool_payloads() -> None:
    _, out, sink = parse((RECORDINGS / "tool_use.jsonl").read_bytes())
    bash = [p for p in sink.stream if p.tool_call_id == "toolu_01BlameAppQ5"]
    assert {p.parent_tool_call_id for p in bash} == {"toolu_01TaskOwnersP7"}
    start = bash[0]
    assert start.name == "Bash"
    assert start.args["command"].startswith("git blame")
    assert bash[1].result["is_error"] is False
    task_result = next(
        i
        for i in out.transcript
        if i.kind == "tool_result" and i.tool_use_id == "toolu_01TaskOwnersP7"
    )
    assert task_result.text.startswith("Both prints")  # block-list content flattened


def test_parser_survives_corrupt_and_odd_lines() -> None:
    lines = [
        b"",
        b"   ",
        b"not json at all",
        b'{"type": "assistant", "message": ',
        b"[1, 2, 3]",
        b'{"type": "assistant", "message": "not an object"}',
        b'{"type": "user", "message": {"content": "a plain prompt echo"}}',
        b'{"type": "result", "subtype": "success", "is_error": false, "usage": NaN}',
        b"\xff\xfe binary noise",
    ]
    parser, out, sink = parse(b"\n".join(lines))
    assert [i.kind for i in out.transcript] == ["stdout", "stdout", "stdout", "stdout", "stdout"]
    assert parser.malformed_lines == 2  # the cut-off object and the NaN line
    assert parser.terminal is None
    assert sink.stream == []


# -- the driver, through a replayed process ----------------------------------------------------

CASE_BY_RECORDING = {case.recording: case for case in CASES}


async def run_recording(
    recording: str,
    *,
    streaming: bool = True,
    request: Request | None = None,
) -> tuple[Response, RecordingSink, ClaudeDriver]:
    case = CASE_BY_RECORDING[recording]
    command = replay_command(recording, exit_code=case.exit_code, stderr=case.stderr)
    driver = ClaudeDriver(ClaudeConfig(command=command))
    sink = RecordingSink()
    req = request or Request(run_id="run-7", prompt="hello", streaming=streaming)
    response = await driver.run(req, sink)
    return response, sink, driver


def structural_violations(
    driver: ClaudeDriver, response: Response, sink: RecordingSink
) -> list[str]:
    found = [
        *adaptertest.verify_stream_sequence(sink.stream),
        *adaptertest.verify_stream_capability(driver.stream_capability(), sink.stream),
        *adaptertest.verify_run_events(sink.events),
        *adaptertest.verify_transcript_mirror(sink.events, response.transcript),
        *adaptertest.verify_outcome(response, None),
        *adaptertest.verify_checkpoint_codec(driver, response),
    ]
    return [str(v) for v in found]


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.recording)
async def test_driver_on_recording(case: Case, anyio_backend: str) -> None:
    response, sink, driver = await run_recording(case.recording)
    assert structural_violations(driver, response, sink) == []
    stdout = (RECORDINGS / case.recording).read_bytes()
    raw = response.raw_streams
    assert raw is not None
    assert raw.stdout == stdout
    assert raw.stderr == ((RECORDINGS / case.stderr).read_bytes() if case.stderr else b"")
    chunks = [e for e in sink.events if e.type == RunEventType.CHUNK and e.stream == "stdout"]
    assert b"".join(e.chunk for e in chunks) == stdout
    assert response.exit_code == case.exit_code
    assert response.output == case.output
    assert [i.kind for i in response.transcript] == [
        *case.items,
        *(["failure"] if case.failure else []),
    ]
    assert sink.stream[0].kind == StreamKind.RUN_STARTED
    assert sum(p.kind in TERMINALS for p in sink.stream) == 1
    if case.failure is None:
        assert response.failure is None
        assert sink.stream[-1].kind == StreamKind.RUN_FINISHED
        assert sink.stream[-1].usage == response.usage
        assert response.checkpoint is not None
        assert response.checkpoint.valid
        assert response.checkpoint.state is not None
        assert response.checkpoint.state.resume_id == case.session
    else:
        assert response.failure is not None
        assert case.failure in response.failure.message
        assert sink.stream[-1].kind == StreamKind.RUN_ERROR
        assert sink.stream[-1].error == response.failure
        assert response.checkpoint is None
    result_lines = [line for line in stdout.decode().splitlines() if '"type":"result"' in line]
    if result_lines:
        assert raw.terminal is not None
        assert raw.terminal.raw_json == result_lines[-1]
    else:
        assert raw.terminal is None


@pytest.mark.anyio
@pytest.mark.parametrize("recording", ["tool_use.jsonl", "nonzero_exit.jsonl"])
async def test_driver_on_both_backends(recording: str) -> None:
    response, sink, driver = await run_recording(recording)
    assert structural_violations(driver, response, sink) == []
    if recording == "nonzero_exit.jsonl":
        # The Bash call never got its result: it and its step close before run.error.
        kinds = [p.kind for p in sink.stream]
        assert kinds[-3:] == [
            StreamKind.TOOL_CALL_END,
            StreamKind.STEP_FINISHED,
            StreamKind.RUN_ERROR,
        ]


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_streaming_off_sends_no_payloads_but_the_same_transcript(anyio_backend: str) -> None:
    streamed, _, _ = await run_recording("tool_use.jsonl")
    response, sink, _ = await run_recording("tool_use.jsonl", streaming=False)
    assert sink.stream == []
    assert response.transcript == streamed.transcript
    assert adaptertest.verify_transcript_mirror(sink.events, response.transcript) == []


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_command_line_carries_model_resume_and_prompt(
    anyio_backend: str, tmp_path: Path
) -> None:
    argv_file = tmp_path / "argv.json"
    command = replay_command("success.jsonl", record_argv=argv_file)
    driver = ClaudeDriver(
        ClaudeConfig(command=command, model="sonnet", extra_args=("--max-turns", "3"))
    )
    state = SessionState(resume_id="3f9b6c1e-58d2-4a7f-9e0b-c4d21a8f6e53")
    request = Request(
        prompt="-v is a prompt, not a flag",
        model_override="opus",
        session=SessionContext(state=state),
    )
    await driver.run(request, RecordingSink())
    passed = json.loads(argv_file.read_text(encoding="utf-8"))
    expected = build_argv(driver.config, request.prompt, model="opus", resume_id=state.resume_id)
    assert passed == expected[len(command) :]
    assert passed == [
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--model",
        "opus",
        "--resume",
        "3f9b6c1e-58d2-4a7f-9e0b-c4d21a8f6e53",
        "--max-turns",
        "3",
        "--",
        "-v is a prompt, not a flag",
    ]


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_request_config_wins_over_the_captured_one(anyio_backend: str) -> None:
    driver = ClaudeDriver(ClaudeConfig(command=("claude-is-not-installed-here",)))
    config = ClaudeConfig(command=replay_command("success.jsonl"))
    response = await driver.run(Request(prompt="hi", config=config), RecordingSink())
    assert response.output == "OK"


# -- declarations and config -------------------------------------------------------------------


class Foreign:
    pass


def test_config_validation() -> None:
    driver = ClaudeDriver()
    assert driver.config.command == ("claude",)
    driver.validate_config(None)
    driver.validate_config(ClaudeConfig(model="opus"))
    with pytest.raises(InvalidDriverConfigError):
        driver.validate_config(Foreign())
    with pytest.raises(ValidationError):
        ClaudeConfig(command=())
    with pytest.raises(ValidationError):
        ClaudeConfig(timeout=-1)
    with pytest.raises(ValidationError):
        driver.config.model = "x"  # type: ignore[misc]


def test_descriptor_and_stream_capability_are_honest() -> None:
    descriptor = ClaudeDriver(ClaudeConfig(model="claude-sonnet-4-5")).descriptor()
    assert descriptor.type == CLAUDE_DRIVER_TYPE
    assert descriptor.sessions.supports_resume
    assert not descriptor.skills.supported
    assert not descriptor.structured_output.json_schema_native
    assert [m.id for m in descriptor.models] == ["claude-sonnet-4-5", "sonnet", "opus"]
    capability = ClaudeDriver().stream_capability()
    assert (capability.token_level, capability.tool_call_args, capability.hitl) == (
        False,
        False,
        False,
    )
    assert capability.reasoning


def test_config_fingerprint_follows_the_config() -> None:
    one = ClaudeDriver(ClaudeConfig(model="sonnet")).session_config_fingerprint()
    assert one == ClaudeDriver(ClaudeConfig(model="sonnet")).session_config_fingerprint()
    assert one != ClaudeDriver(ClaudeConfig(model="opus")).session_config_fingerprint()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_environment_check_looks_for_the_program(anyio_backend: str) -> None:
    found = await ClaudeDriver(ClaudeConfig(command=(sys.executable,))).check_environment(None)
    assert found.status == EnvironmentStatus.PASS
    assert found.healthy
    missing = await ClaudeDriver().check_environment(
        ClaudeConfig(command=("claude-is-not-installed-here",))
    )
    assert missing.status == EnvironmentStatus.FAIL
    assert not missing.healthy
    assert missing.checks[0].code == "cli_missing"
