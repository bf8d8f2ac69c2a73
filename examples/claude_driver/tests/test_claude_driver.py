"""Behaviour of the Claude Code example driver on recorded stream-json output.

Parser tests feed a recording straight into the parser (no process). Driver
tests use the kit's replay stand-in as the CLI, so the whole path from the
process to the response runs; no Claude Code is needed. Deadlines, cancellation,
start failures and the resume guard are format-independent: ``driver.clikit``'s
tests cover them once for both drivers. The checks every CLI driver shares live
in ``adaptertest.clikit``; this file gives them Claude Code's data.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from adaptertest import RecordingSink
from adaptertest import clikit as testing
from adaptertest.clikit import TEXT, TOOL, Case, Replay
from claude_driver import (
    CLAUDE_DRIVER_TYPE,
    ClaudeConfig,
    ClaudeDriver,
    ClaudeStreamParser,
    build_argv,
)
from driver import Request, SessionContext, SessionState
from driver.clikit import RunOutput

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


REPLAY = Replay(RECORDINGS, CASES, lambda command: ClaudeDriver(ClaudeConfig(command=command)))


def parse(data: bytes) -> tuple[ClaudeStreamParser, RunOutput, RecordingSink]:
    return testing.parse_output(ClaudeStreamParser, data)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.recording)
def test_parser_on_recording(case: Case) -> None:
    testing.check_parser_on_recording(case, RECORDINGS, ClaudeStreamParser)


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
    testing.check_parser_survives_odd_lines(
        ClaudeStreamParser,
        truncated=b'{"type": "assistant", "message": ',
        not_an_object=b'{"type": "assistant", "message": "not an object"}',
        unexpected=b'{"type": "user", "message": {"content": "a plain prompt echo"}}',
        nan_terminal=b'{"type": "result", "subtype": "success", "is_error": false, "usage": NaN}',
    )


# -- the driver, through a replayed process ----------------------------------------------------


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.recording)
async def test_driver_on_recording(case: Case, anyio_backend: str) -> None:
    await testing.check_driver_on_recording(
        REPLAY, case, is_terminal_line=lambda line: '"type":"result"' in line
    )


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
    driver = ClaudeDriver(
        ClaudeConfig(command=command, model="sonnet", extra_args=("--max-turns", "3"))
    )
    state = SessionState(resume_id="3f9b6c1e-58d2-4a7f-9e0b-c4d21a8f6e53")
    request = Request(
        prompt="-v is a prompt, not a flag",
        model_override="opus",
        session=SessionContext(state=state),
    )
    passed = await testing.passed_argv(driver, request, argv_file)
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
    config = ClaudeConfig(command=REPLAY.command("success.jsonl"))
    await testing.check_request_config_wins(driver, config, "OK")


# -- declarations and config -------------------------------------------------------------------


def test_config_validation() -> None:
    testing.check_config_validation(
        ClaudeDriver, ClaudeConfig, default_command=("claude",), other=ClaudeConfig(model="opus")
    )


def test_descriptor_and_stream_capability_are_honest() -> None:
    models = testing.check_descriptor_and_stream_capability(
        ClaudeDriver, ClaudeConfig(model="claude-sonnet-4-5"), CLAUDE_DRIVER_TYPE
    )
    assert models == ["claude-sonnet-4-5", "sonnet", "opus"]


def test_config_fingerprint_follows_the_config() -> None:
    testing.check_config_fingerprint_follows_the_config(
        ClaudeDriver,
        ClaudeConfig(model="sonnet"),
        ClaudeConfig(model="sonnet"),
        ClaudeConfig(model="opus"),
    )


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_environment_check_looks_for_the_program(anyio_backend: str) -> None:
    missing = "claude-is-not-installed-here"
    await testing.check_environment_probe(ClaudeDriver, ClaudeConfig, missing)
