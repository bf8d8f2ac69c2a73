"""Behaviour of the Codex example driver on recorded ``exec --json`` output.

Parser tests feed a recording straight into the parser (no process). Driver
tests use the kit's replay stand-in as the CLI, so the whole path from the
process to the response runs; no the Codex CLI is needed. Deadlines, cancellation,
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
from cli_plumbing import LineFramer, ProcessOutcome, RunOutput
from codex_driver import (
    CODEX_DRIVER_TYPE,
    CodexConfig,
    CodexDriver,
    CodexStreamParser,
    build_argv,
)
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
    TranscriptKind,
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
    """A command that replays a recording as if it were ``codex``; the driver's own
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
    thread: str
    failure: str | None
    stderr: str | None = None


TEXT = ("text.start", "text.content", "text.end")
REASONING = ("reasoning.start", "reasoning.content", "reasoning.end")
TOOL = ("tool_call.start", "tool_call.result", "tool_call.end")

CASES = [
    Case(
        "success.jsonl",
        0,
        ("init", "assistant", "result"),
        ("step.started", *TEXT, "step.finished"),
        "OK",
        True,
        "0199e5a2-7c41-7d30-a8f5-2b6e9c4d1f08",
        None,
    ),
    Case(
        "tool_use.jsonl",
        0,
        (
            "init",
            "thinking",
            "assistant",
            "tool_call",
            "tool_result",
            "thinking",
            "tool_call",  # file_change: only completes, so it starts and ends at once
            "tool_result",
            "tool_call",
            "tool_result",
            "tool_call",
            "tool_result",
            "assistant",
            "result",
        ),
        (
            "step.started",
            *REASONING,
            *TEXT,
            *TOOL,
            *REASONING,
            *TOOL,
            *TOOL,
            *TOOL,
            *TEXT,
            "step.finished",
        ),
        "Removed the unused `result` variable in src/cli.py; ruff is clean and the CI lint job "
        "was re-queued (run 4412).",
        True,
        "0199e5b7-1e02-7a4c-9b3d-6f0a8c2e5d71",
        None,
    ),
    Case(
        "thinking.jsonl",
        0,
        ("init", "thinking", "thinking", "assistant", "result"),
        ("step.started", *REASONING, *REASONING, *TEXT, "step.finished"),  # empty one skipped
        "Use `@dataclass(frozen=True)`: assignments then raise `FrozenInstanceError`, and you "
        "keep defaults and type hints.",
        True,
        "0199e5c4-9a53-7f12-b8e6-1d4c7a0f3e92",
        None,
    ),
    Case(
        "error_result.jsonl",
        1,
        ("init", "system", "system", "result"),
        ("step.started", "step.finished"),
        "",
        False,
        "0199e5d0-4b86-7e3a-a1f9-8c2d6e0b4a57",
        "unexpected status 401 Unauthorized",
        "error_result.stderr.txt",
    ),
    Case(
        "usage_limit.jsonl",
        1,
        ("init", "assistant", "tool_call", "tool_result", "system", "result"),
        ("step.started", *TEXT, *TOOL, "step.finished"),
        "Running the parser tests before changing anything.",
        False,
        "0199e5e3-6d17-7b48-9c05-3f7a1e9d2b60",
        "You've hit your usage limit.",
    ),
    Case(
        "nonzero_exit.jsonl",
        1,
        ("init", "thinking", "tool_call", "stdout"),
        ("step.started", *REASONING, "tool_call.start"),
        "",
        False,
        "0199e5f1-2c64-7d09-b5a8-e4f0c7d3a916",
        "codex exited with code 1: ERROR: stream disconnected",
        "nonzero_exit.stderr.txt",
    ),
    Case(
        "garbage.jsonl",
        0,
        ("stdout", "init", "assistant", "stdout", "result"),
        ("step.started", *TEXT, "step.finished"),
        "Done: the README now links to CONTRIBUTING.md.",
        True,
        "0199e600-8e35-7a61-9d27-5b1f4c8e0a33",
        None,
    ),
]


def parse(
    data: bytes, *, streaming: bool = True
) -> tuple[CodexStreamParser, RunOutput, RecordingSink]:
    sink = RecordingSink()
    out = RunOutput(sink, streaming=streaming, run_id="run-1", thread_id="")
    parser = CodexStreamParser(out, model="gpt-test")
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
    assert parser.resume_id == case.thread
    assert out.transcript[case.items.index("init")].model == "gpt-test"
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
    parser, _, _ = parse((RECORDINGS / "tool_use.jsonl").read_bytes())
    last_line = (RECORDINGS / "tool_use.jsonl").read_text(encoding="utf-8").splitlines()[-1]
    assert parser.terminal is not None
    assert parser.terminal.event == "turn.completed"
    assert parser.terminal.raw_json == last_line
    assert parser.usage is not None
    assert (parser.usage.input_tokens, parser.usage.output_tokens) == (24310, 538)
    assert parser.usage.cached_input_tokens == 19968
    failed, _, _ = parse((RECORDINGS / "error_result.jsonl").read_bytes())
    assert failed.terminal is not None
    assert failed.terminal.event == "turn.failed"


def test_parser_maps_tool_items() -> None:
    _, out, sink = parse((RECORDINGS / "tool_use.jsonl").read_bytes())
    starts = {p.tool_call_id: p for p in sink.stream if p.kind == StreamKind.TOOL_CALL_START}
    assert starts["item_2"].name == "command_execution"
    assert starts["item_2"].args == {"command": "/bin/bash -lc 'ruff check src'"}
    assert starts["item_5"].name == "file_change"
    assert starts["item_7"].name == "mcp__ci__rerun_job"
    assert starts["item_7"].args == {"job": "lint", "branch": "fix/unused-var"}
    results = {i.tool_use_id: i for i in out.transcript if i.kind == TranscriptKind.TOOL_RESULT}
    assert results["item_2"].is_error  # ruff failed: status "failed", exit code 1
    assert not results["item_6"].is_error
    assert results["item_5"].text == "update /home/ana/projects/lint-demo/src/cli.py"
    assert results["item_7"].text == "lint job re-queued as run 4412"
    failed_run = next(p for p in sink.stream if p.kind == "tool_call.result")
    assert failed_run.result == {
        "status": "failed",
        "output": results["item_2"].text,
        "exit_code": 1,
    }


def test_an_interrupted_turn_is_not_a_success() -> None:
    lines = (RECORDINGS / "success.jsonl").read_text(encoding="utf-8").splitlines()[:-1]
    parser, _, _ = parse("\n".join(lines).encode())
    failure = parser.failure(ProcessOutcome(0, "", False, b"", b""), 60)
    assert failure is not None
    assert "without turn.completed" in failure.message


def test_parser_survives_corrupt_and_odd_lines() -> None:
    lines = [
        b"",
        b"   ",
        b"not json at all",
        b'{"type": "item.completed", "item": ',
        b"[1, 2, 3]",
        b'{"type": "item.completed", "item": "not an object"}',
        b'{"type": "item.started", "item": {"type": "command_execution"}}',
        b'{"type": "turn.completed", "usage": NaN}',
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
) -> tuple[Response, RecordingSink, CodexDriver]:
    case = CASE_BY_RECORDING[recording]
    command = replay_command(recording, exit_code=case.exit_code, stderr=case.stderr)
    driver = CodexDriver(CodexConfig(command=command))
    sink = RecordingSink()
    req = request or Request(run_id="run-7", prompt="hello", streaming=streaming)
    response = await driver.run(req, sink)
    return response, sink, driver


def structural_violations(
    driver: CodexDriver, response: Response, sink: RecordingSink
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
        assert response.checkpoint.state.resume_id == case.thread
    else:
        assert response.failure is not None
        assert case.failure in response.failure.message
        assert sink.stream[-1].kind == StreamKind.RUN_ERROR
        assert sink.stream[-1].error == response.failure
        assert response.checkpoint is None
    result_lines = [line for line in stdout.decode().splitlines() if '"type":"turn.' in line]
    result_lines = [line for line in result_lines if '"type":"turn.started"' not in line]
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
        # The build command never completed: it and its step close before run.error.
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
    driver = CodexDriver(
        CodexConfig(command=command, model="gpt-test", extra_args=("--sandbox", "read-only"))
    )
    state = SessionState(resume_id="0199e5a2-7c41-7d30-a8f5-2b6e9c4d1f08")
    request = Request(
        prompt="resume is a prompt word here, not the subcommand",
        model_override="gpt-other",
        session=SessionContext(state=state),
    )
    await driver.run(request, RecordingSink())
    passed = json.loads(argv_file.read_text(encoding="utf-8"))
    expected = build_argv(
        driver.config, request.prompt, model="gpt-other", resume_id=state.resume_id
    )
    assert passed == expected[len(command) :]
    assert passed == [
        "exec",
        "--json",
        "--model",
        "gpt-other",
        "--sandbox",
        "read-only",
        "resume",
        "0199e5a2-7c41-7d30-a8f5-2b6e9c4d1f08",
        "--",
        "resume is a prompt word here, not the subcommand",
    ]


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_request_config_wins_over_the_captured_one(anyio_backend: str) -> None:
    driver = CodexDriver(CodexConfig(command=("codex-is-not-installed-here",)))
    config = CodexConfig(command=replay_command("success.jsonl"))
    response = await driver.run(Request(prompt="hi", config=config), RecordingSink())
    assert response.output == "OK"


# -- declarations and config -------------------------------------------------------------------


class Foreign:
    pass


def test_config_validation() -> None:
    driver = CodexDriver()
    assert driver.config.command == ("codex",)
    driver.validate_config(None)
    driver.validate_config(CodexConfig(model="gpt-test"))
    with pytest.raises(InvalidDriverConfigError):
        driver.validate_config(Foreign())
    with pytest.raises(ValidationError):
        CodexConfig(command=())
    with pytest.raises(ValidationError):
        CodexConfig(timeout=-1)
    with pytest.raises(ValidationError):
        driver.config.model = "x"  # type: ignore[misc]


def test_descriptor_and_stream_capability_are_honest() -> None:
    descriptor = CodexDriver(CodexConfig(model="gpt-test")).descriptor()
    assert descriptor.type == CODEX_DRIVER_TYPE
    assert descriptor.sessions.supports_resume
    assert not descriptor.skills.supported
    assert not descriptor.structured_output.json_schema_native
    assert [m.id for m in descriptor.models] == ["gpt-test"]
    assert CodexDriver().descriptor().models == ()
    capability = CodexDriver().stream_capability()
    assert (capability.token_level, capability.tool_call_args, capability.hitl) == (
        False,
        False,
        False,
    )
    assert capability.reasoning


def test_config_fingerprint_follows_the_config() -> None:
    one = CodexDriver(CodexConfig(model="gpt-a")).session_config_fingerprint()
    assert one == CodexDriver(CodexConfig(model="gpt-a")).session_config_fingerprint()
    assert one != CodexDriver(CodexConfig(model="gpt-b")).session_config_fingerprint()


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_environment_check_looks_for_the_program(anyio_backend: str) -> None:
    found = await CodexDriver(CodexConfig(command=(sys.executable,))).check_environment(None)
    assert found.status == EnvironmentStatus.PASS
    assert found.healthy
    missing = await CodexDriver().check_environment(
        CodexConfig(command=("codex-is-not-installed-here",))
    )
    assert missing.status == EnvironmentStatus.FAIL
    assert not missing.healthy
    assert missing.checks[0].code == "cli_missing"
