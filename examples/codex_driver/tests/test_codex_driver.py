"""Behaviour of the Codex example driver on recorded ``exec --json`` output.

Parser tests feed a recording straight into the parser (no process). Driver
tests use the kit's replay stand-in as the CLI, so the whole path from the
process to the response runs; no Codex CLI is needed. Deadlines, cancellation,
start failures and the resume guard are format-independent: ``driver.clikit``'s
tests cover them once for both drivers. The checks every CLI driver shares live
in ``adaptertest.clikit``; this file gives them Codex's data.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from adaptertest import RecordingSink
from adaptertest import clikit as testing
from adaptertest.clikit import REASONING, TEXT, TOOL, Case, Replay
from codex_driver import (
    CODEX_DRIVER_TYPE,
    CodexConfig,
    CodexDriver,
    CodexStreamParser,
    build_argv,
)
from driver import Request, SessionContext, SessionState, StreamKind, TranscriptKind
from driver.clikit import ProcessOutcome, RunOutput

RECORDINGS = testing.recordings_dir(__file__)


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    backend: str = request.param
    return backend


# -- the parser, one recording at a time -----------------------------------------------------


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


REPLAY = Replay(RECORDINGS, CASES, lambda command: CodexDriver(CodexConfig(command=command)))


def new_parser(out: RunOutput) -> CodexStreamParser:
    return CodexStreamParser(out, model="gpt-test")


def parse(data: bytes) -> tuple[CodexStreamParser, RunOutput, RecordingSink]:
    return testing.parse_output(new_parser, data)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.recording)
def test_parser_on_recording(case: Case) -> None:
    _, out = testing.check_parser_on_recording(case, RECORDINGS, new_parser)
    assert out.transcript[case.items.index("init")].model == "gpt-test"


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
    testing.check_parser_survives_odd_lines(
        new_parser,
        truncated=b'{"type": "item.completed", "item": ',
        not_an_object=b'{"type": "item.completed", "item": "not an object"}',
        unexpected=b'{"type": "item.started", "item": {"type": "command_execution"}}',
        nan_terminal=b'{"type": "turn.completed", "usage": NaN}',
    )


# -- the driver, through a replayed process ----------------------------------------------------


def is_terminal_line(line: str) -> bool:
    """``turn.completed`` and ``turn.failed``, the terminal events."""
    return '"type":"turn.' in line and '"type":"turn.started"' not in line


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.recording)
async def test_driver_on_recording(case: Case, anyio_backend: str) -> None:
    await testing.check_driver_on_recording(REPLAY, case, is_terminal_line=is_terminal_line)


@pytest.mark.anyio
@pytest.mark.parametrize("recording", ["tool_use.jsonl", "nonzero_exit.jsonl"])
async def test_driver_on_both_backends(recording: str) -> None:
    await testing.check_driver_on_both_backends(REPLAY, recording)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_streaming_off_sends_no_payloads_but_the_same_transcript(anyio_backend: str) -> None:
    await testing.check_streaming_off(REPLAY, "tool_use.jsonl")


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_command_line_carries_model_resume_and_prompt(
    anyio_backend: str, tmp_path: Path
) -> None:
    argv_file = tmp_path / "argv.json"
    command = REPLAY.command("success.jsonl", record_argv=argv_file)
    driver = CodexDriver(
        CodexConfig(command=command, model="gpt-test", extra_args=("--sandbox", "read-only"))
    )
    state = SessionState(resume_id="0199e5a2-7c41-7d30-a8f5-2b6e9c4d1f08")
    request = Request(
        prompt="resume is a prompt word here, not the subcommand",
        model_override="gpt-other",
        session=SessionContext(state=state),
    )
    passed = await testing.passed_argv(driver, request, argv_file)
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
    config = CodexConfig(command=REPLAY.command("success.jsonl"))
    await testing.check_request_config_wins(driver, config, "OK")


# -- declarations and config -------------------------------------------------------------------


def test_config_validation() -> None:
    testing.check_config_validation(
        CodexDriver, CodexConfig, default_command=("codex",), other=CodexConfig(model="gpt-test")
    )


def test_descriptor_and_stream_capability_are_honest() -> None:
    models = testing.check_descriptor_and_stream_capability(
        CodexDriver, CodexConfig(model="gpt-test"), CODEX_DRIVER_TYPE
    )
    assert models == ["gpt-test"]
    assert CodexDriver().descriptor().models == ()


def test_config_fingerprint_follows_the_config() -> None:
    testing.check_config_fingerprint_follows_the_config(
        CodexDriver,
        CodexConfig(model="gpt-a"),
        CodexConfig(model="gpt-a"),
        CodexConfig(model="gpt-b"),
    )


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_environment_check_looks_for_the_program(anyio_backend: str) -> None:
    missing = "codex-is-not-installed-here"
    await testing.check_environment_probe(CodexDriver, CodexConfig, missing)
