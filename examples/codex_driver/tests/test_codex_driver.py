"""Behaviour of the Codex example driver on recorded ``exec --json`` output.

Parser tests feed a recording straight into the parser (no process). Driver
tests use the kit's replay stand-in as the CLI, so the whole path from the
process to the response runs; no Codex CLI is needed. Deadlines, cancellation,
start failures and the resume guard are format-independent: ``driver.clikit``'s
tests cover them once for both drivers. The checks every CLI driver shares live
in ``adaptertest.clikit``; this file gives them Codex's data.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from adaptertest import RecordingSink
from adaptertest import clikit as testing
from adaptertest.clikit import REASONING, TEXT, TOOL, Case, Replay
from codex_driver import (
    CODEX_DRIVER_TYPE,
    RUN_FLAGS,
    THREAD_USAGE_KEY,
    CodexConfig,
    CodexDriver,
    CodexStreamParser,
    build_argv,
    provider_args,
)
from driver import Request, SessionContext, SessionState, StreamKind, TranscriptKind, Usage
from driver.clikit import ProcessOutcome, RunOutput

RECORDINGS = testing.recordings_dir(__file__)


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    backend: str = request.param
    return backend


# -- the parser, one recording at a time -----------------------------------------------------


def usage(total_input: int, cached: int, output: int) -> Usage:
    """Codex's own counts: input already includes cache reads and writes, output already
    includes reasoning; codex reports no cost."""
    return Usage(input_tokens=total_input, cached_input_tokens=cached, output_tokens=output)


LIMIT_429 = "unexpected status 429 Too Many Requests: Rate limit reached for gpt-5-codex"

OLD_CASES = [
    Case(
        "success.jsonl",
        0,
        ("init", "assistant", "result"),
        ("step.started", *TEXT, "step.finished"),
        "OK",
        True,
        "0199e5a2-7c41-7d30-a8f5-2b6e9c4d1f08",
        None,
        usage=usage(11842, 9216, 5),
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
        usage=usage(24310, 19968, 538),  # 128 reasoning tokens are inside the 538
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
        usage=usage(9120, 7680, 214),
    ),
    Case(
        "error_result.jsonl",
        1,
        ("init", "system", "system", "result"),
        ("codex.warning", "step.started", "codex.error", "step.finished"),
        "",
        False,
        "0199e5d0-4b86-7e3a-a1f9-8c2d6e0b4a57",
        "unexpected status 401 Unauthorized",
        "error_result.stderr.txt",
        failure_metadata={"event": "turn.failed", "http_status": 401},
    ),
    Case(
        "usage_limit.jsonl",
        1,
        ("init", "assistant", "tool_call", "tool_result", "system", "result"),
        ("step.started", *TEXT, *TOOL, "codex.error", "step.finished"),
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
        usage=usage(10233, 8960, 31),
    ),
    Case(
        "reconnect_429.jsonl",
        1,
        ("init", *["system"] * 6, "result"),
        ("step.started", *["codex.error"] * 6, "step.finished"),
        "",
        False,
        "0199e612-3f8a-7c25-9e41-6b0d2a8c5f17",
        f"{LIMIT_429}",
        "reconnect_429.stderr.txt",
        failure_metadata={"reconnect_attempt": 5, "reconnect_max": 5, "http_status": 429},
    ),
    Case(
        "usage_limit_mid_tool.jsonl",
        1,
        ("init", "thinking", "assistant", "tool_call", "system", "result"),
        # cargo test never completes: its call closes before the step.
        (
            "step.started",
            *REASONING,
            *TEXT,
            "tool_call.start",
            "codex.error",
            "tool_call.end",
            "step.finished",
        ),
        "Running the whole workspace test suite before touching the parser.",
        False,
        "0199e61c-8d02-7e9b-a4f6-1c7e3b5d9a28",
        "You've hit your usage limit. Upgrade to Pro",
        failure_metadata={"event": "turn.failed"},
    ),
    Case(
        "killed_reconnecting.jsonl",
        -1,
        ("init", "assistant", "tool_call", "tool_result", "system", "system", "system"),
        ("step.started", *TEXT, *TOOL, *["codex.error"] * 3),
        "Checking which migrations are still pending.",
        False,
        "0199e627-1b4c-7a03-8f5e-9d2a6c0e4b71",
        "codex was ended by SIGTERM (last error: Reconnecting... 3/5 (stream disconnected",
        signal="SIGTERM",
        failure_metadata={"reconnect_attempt": 3, "reconnect_max": 5},
    ),
    Case(
        "structured_ok.jsonl",
        0,
        ("init", "thinking", "assistant", "result"),
        ("step.started", *REASONING, *TEXT, "step.finished"),
        '{"ok":true}',
        True,
        "0199e631-6e27-7d48-b1c9-3a5f8e2d0c96",
        None,
        usage=usage(12066, 9216, 52),  # cache writes (2688) and reasoning (38) are inside
    ),
    Case(
        "structured_ignored.jsonl",
        0,
        ("init", "tool_call", "tool_result", "assistant", "result"),
        ("step.started", *TOOL, *TEXT, "step.finished"),
        "All good: the billing service answered in 41 ms.",
        True,
        "0199e63b-0a93-7f16-8c2d-5e4b7a1f3d08",
        None,
        usage=usage(15310, 11264, 64),
    ),
]


# Recorded from codex 0.169.0 itself against the model-API emulator (the scenario of each
# is in recordings/scenarios; examples/README.md has the command).
REAL_CASES = [
    Case(
        "real_ok.jsonl",
        0,
        ("init", "assistant", "result"),
        ("step.started", *TEXT, "step.finished"),
        "OK",
        True,
        "01a23478-f0d5-7b02-bbb2-b4bb2f4ebc3d",
        None,
        usage=usage(12, 2, 3),
    ),
    Case(
        # The resumed thread: codex reports the thread's running total (12+40, 2+30, 3+5);
        # with no checkpoint kept, the parser reports it as given.
        "real_resumed.jsonl",
        0,
        ("init", "assistant", "result"),
        ("step.started", *TEXT, "step.finished"),
        "OK again",
        True,
        "01a23478-f0d5-7b02-bbb2-b4bb2f4ebc3d",
        None,
        usage=usage(52, 32, 8),
    ),
    Case(
        "real_structured.jsonl",
        0,
        ("init", "assistant", "result"),
        ("step.started", *TEXT, "step.finished"),
        '{"ok":true}',
        True,
        "01a23479-230e-7273-88dc-066fb0451115",
        None,
        usage=usage(12, 2, 3),
    ),
    Case(
        "real_tool_read.jsonl",
        0,
        ("init", "tool_call", "tool_result", "assistant", "result"),
        ("step.started", *TOOL, *TEXT, "step.finished"),
        "The word is pumpkin.",
        True,
        "01a23479-c19a-7b00-a7bf-bf24b4994079",
        None,
        usage=usage(32, 2, 7),  # both requests of the turn: 20 + 12, 0 + 2, 4 + 3
    ),
    Case(
        "real_retry_429.jsonl",
        0,
        ("init", "system", "assistant", "result"),
        ("step.started", "codex.error", *TEXT, "step.finished"),
        "OK",
        True,
        "01a23479-3776-7e22-92ef-8d8db3af1e47",
        None,
        usage=usage(12, 2, 3),
    ),
    Case(
        # A 429 without retry-after: codex does not retry at all.
        "real_rate_limit_429.jsonl",
        1,
        ("init", "system", "result"),
        ("step.started", "codex.error", "step.finished"),
        "",
        False,
        "01a23479-3df7-7491-867f-e916ae468db7",
        "exceeded retry limit, last status: 429 Too Many Requests",
        failure_metadata={"event": "turn.failed", "http_status": 429},
    ),
    Case(
        # codex 0.169 retries a 401 five times (the old recording failed at once).
        "real_unauthorized_401.jsonl",
        1,
        ("init", *["system"] * 6, "result"),
        ("step.started", *["codex.error"] * 6, "step.finished"),
        "",
        False,
        "01a23479-46de-7f11-bbe6-e01df78f53cf",
        "unexpected status 401 Unauthorized: Incorrect API key provided.",
        failure_metadata={"reconnect_attempt": 5, "reconnect_max": 5, "http_status": 401},
    ),
    Case(
        # A 500 prints one fixed sentence and no status: the driver names the status.
        "real_error_500.jsonl",
        1,
        ("init", *["system"] * 6, "result"),
        ("step.started", *["codex.error"] * 6, "step.finished"),
        "",
        False,
        "01a23479-a69a-7d23-9272-d7273c9a8134",
        "currently experiencing high demand, which may cause temporary errors. "
        "(reconnect 5 of 5; HTTP status 500)",
        failure_metadata={"reconnect_attempt": 5, "reconnect_max": 5, "http_status": 500},
    ),
    Case(
        "real_overloaded_529.jsonl",
        1,
        ("init", *["system"] * 6, "result"),
        ("step.started", *["codex.error"] * 6, "step.finished"),
        "",
        False,
        "01a2347a-0aab-7321-b913-192aeb993b80",
        "unexpected status 529 <unknown status code>: HTTP 529, url: {emulator}/v1/responses "
        "(reconnect 5 of 5)",
        failure_metadata={"reconnect_attempt": 5, "reconnect_max": 5, "http_status": 529},
    ),
    Case(
        "real_stream_cut.jsonl",
        1,
        ("init", *["system"] * 6, "result"),
        ("step.started", *["codex.error"] * 6, "step.finished"),
        "",
        False,
        "01a23479-6b39-76a0-b618-fa5620df3632",
        "stream disconnected before completion: Transport error",
        failure_metadata={"reconnect_attempt": 5, "reconnect_max": 5},
    ),
    Case(
        "real_thinking.jsonl",
        0,
        ("init", "thinking", "assistant", "result"),
        ("step.started", *REASONING, *TEXT, "step.finished"),
        "Use a frozen dataclass.",
        True,
        "01a2347f-f522-7103-b978-d0f1fa69db05",
        None,
        usage=usage(12, 2, 9),  # the 4 reasoning tokens are inside the 9
    ),
    Case(
        # Nothing listens at the provider's address: codex waits "for network" without
        # end; the recorder's deadline sent SIGTERM.
        "real_no_network_killed.jsonl",
        -1,
        ("init", "system"),
        ("step.started", "codex.error"),
        "",
        False,
        "01a23487-7a63-7580-8785-7ecb38238e62",
        "codex was ended by SIGTERM (the model provider was unreachable: 1 wait(s) for "
        "network; last error: Reconnecting... waiting for network",
        signal="SIGTERM",
        failure_metadata={"waiting_for_network": 1},
    ),
    Case(
        # A model slug codex does not know: a warning item before turn.started.
        "real_unknown_model.jsonl",
        0,
        ("init", "system", "assistant", "result"),
        ("codex.warning", "step.started", *TEXT, "step.finished"),
        "OK",
        True,
        "01a23479-90ca-7f32-92d8-699cf0d8f0e3",
        None,
        usage=usage(12, 2, 3),
    ),
]

CASES = [*OLD_CASES, *REAL_CASES]


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
    assert parser.usage == usage(24310, 19968, 538)
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
@pytest.mark.parametrize(
    "recording",
    [
        "tool_use.jsonl",
        "nonzero_exit.jsonl",
        "reconnect_429.jsonl",
        "usage_limit_mid_tool.jsonl",
        "killed_reconnecting.jsonl",
    ],
)
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
        *RUN_FLAGS,
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
        CodexDriver, CodexConfig(model="gpt-test"), CODEX_DRIVER_TYPE, structured_native=True
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


# -- usage, diagnostics and native structured output --------------------------------------------


def test_usage_counts_reasoning_and_cache_writes_once() -> None:
    parser, out, _ = parse((RECORDINGS / "structured_ok.jsonl").read_bytes())
    # input_tokens already holds the 2688 cache writes, output_tokens the 38 reasoning
    # tokens: added again, they would be billed twice.
    assert parser.usage == usage(12066, 9216, 52)
    result = out.transcript[-1]
    assert result.usage == parser.usage
    assert result.data == {"cache_write_input_tokens": 2688, "reasoning_output_tokens": 38}
    # Only turn.completed reports usage; a failed turn reports none (None, not zeros).
    failed, _, _ = parse((RECORDINGS / "reconnect_429.jsonl").read_bytes())
    assert failed.usage is None


def test_error_events_and_items_become_vendor_kinds() -> None:
    _, out, sink = parse((RECORDINGS / "reconnect_429.jsonl").read_bytes())
    errors = [p for p in sink.stream if p.kind == "codex.error"]
    assert errors[0].raw == {"message": f"Reconnecting... 1/5 ({errors[-1].raw['message']})"}
    items = [i for i in out.transcript if i.kind == TranscriptKind.SYSTEM]
    assert [i.text for i in items] == [p.raw["message"] for p in errors]
    assert items[4].data == {"reconnect_attempt": 5, "reconnect_max": 5, "http_status": 429}
    assert items[5].data == {"http_status": 429}  # the final error is not a reconnect
    _, out, sink = parse((RECORDINGS / "error_result.jsonl").read_bytes())
    warning = sink.stream[0]
    assert warning.kind == "codex.warning"
    assert warning.raw["id"] == "item_0"
    assert warning.raw["message"].startswith("Model metadata for `gpt-5-codex-mini` not found")
    assert out.transcript[1].subtype == "warning"


def test_a_killed_run_with_an_exit_code_quotes_the_last_error() -> None:
    data = (RECORDINGS / "killed_reconnecting.jsonl").read_bytes()
    parser, _, _ = parse(data)
    failure = parser.failure(ProcessOutcome(1, "", False, data, b""), 60)
    assert failure is not None
    assert failure.message.startswith("codex exited with code 1: Reconnecting... 3/5 (stream")
    assert failure.message.count("Reconnecting") == 1  # said once, not again in the context
    assert failure.metadata["last_error"].startswith("Reconnecting... 3/5")


def test_the_schema_file_goes_before_the_resume_subcommand() -> None:
    config = CodexConfig(extra_args=("--sandbox", "read-only"))
    argv = build_argv(config, "p", model="", resume_id="t-1", schema_path="/tmp/s.json")
    assert argv == [
        "codex",
        "exec",
        "--json",
        *RUN_FLAGS,
        "--output-schema",
        "/tmp/s.json",
        "--sandbox",
        "read-only",
        "resume",
        "t-1",
        "--",
        "p",
    ]


@pytest.mark.anyio
async def test_structured_output_is_the_final_message(tmp_path: Path) -> None:
    response, argv = await testing.check_structured_answer(
        REPLAY, "structured_ok.jsonl", tmp_path / "argv.json"
    )
    schema_path = Path(argv[argv.index("--output-schema") + 1])
    assert argv.index("--output-schema") < argv.index("--")
    assert not schema_path.exists()  # the run's temporary schema file is gone
    assert response.output == '{"ok":true}'


@pytest.mark.anyio
async def test_the_schema_file_holds_the_exact_schema_while_codex_runs(tmp_path: Path) -> None:
    copy = tmp_path / "schema-seen.json"
    recording = RECORDINGS / "structured_ok.jsonl"
    code = (
        "import shutil, sys\n"
        "from adaptertest.replay import main\n"
        "args = sys.argv[1:]\n"
        f"shutil.copy(args[args.index('--output-schema') + 1], {str(copy)!r})\n"
        f"sys.exit(main([{str(recording)!r}, '--']))\n"
    )
    driver = CodexDriver(CodexConfig(command=(sys.executable, "-c", code)))
    request = testing.structured_request()
    response = await driver.run(request, RecordingSink())
    assert response.failure is None
    assert request.output_schema is not None
    assert copy.read_text(encoding="utf-8") == request.output_schema.schema_document


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("recording", "problem"),
    [
        # An MCP tool was active, so codex ignored the schema: the prose fails validation.
        ("structured_ignored.jsonl", "the answer is not one JSON document"),
        ("reconnect_429.jsonl", LIMIT_429),
    ],
)
async def test_structured_output_off_schema_fails_the_run(recording: str, problem: str) -> None:
    await testing.check_structured_refused(REPLAY, recording, problem)


def test_the_home_is_codex_home(tmp_path: Path) -> None:
    config = CodexConfig(home=str(tmp_path), env={"OPENAI_API_KEY": "k"})
    env = CodexDriver(config).process_env(config)
    assert env["CODEX_HOME"] == str(tmp_path / ".codex")
    assert env["OPENAI_API_KEY"] == "k"


# -- codex 0.169 itself: resumed usage, retries, provider flags, its home -----------------------


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_resumed_run_reports_its_own_usage_and_keeps_the_thread_total(
    anyio_backend: str,
) -> None:
    # real_resumed.jsonl is the second run of real_ok.jsonl's thread: codex reports 52/32/8,
    # the thread's total; the first run's checkpoint kept 12/2/3.
    first, _, _ = await REPLAY.run("real_ok.jsonl")
    assert first.checkpoint is not None
    assert first.checkpoint.state is not None
    assert first.checkpoint.state.data[THREAD_USAGE_KEY] == "12,2,3"
    state = first.checkpoint.state.model_copy(update={"data": {THREAD_USAGE_KEY: "12,2,3"}})
    request = Request(prompt="again", streaming=True, session=SessionContext(state=state))
    resumed, sink, _ = await REPLAY.run("real_resumed.jsonl", request=request)
    assert resumed.failure is None
    assert resumed.usage == usage(40, 30, 5)  # what the emulator sent for this run
    assert sink.stream[-1].usage == resumed.usage
    assert resumed.transcript[-1].data["thread_total"] == {
        "input_tokens": 52,
        "cached_input_tokens": 32,
        "output_tokens": 8,
    }
    assert resumed.checkpoint is not None
    assert resumed.checkpoint.state is not None
    assert resumed.checkpoint.state.data[THREAD_USAGE_KEY] == "52,32,8"


@pytest.mark.parametrize(
    ("kept", "expected"),
    [
        ("", usage(52, 32, 8)),  # nothing kept: a new thread, an older checkpoint
        ("not,a,total", usage(52, 32, 8)),
        ("60,2,3", usage(52, 32, 8)),  # a total above the reported one: not this thread
        ("52,32,8", usage(0, 0, 0)),
    ],
)
def test_the_kept_thread_total_is_only_subtracted_when_it_fits(kept: str, expected: Usage) -> None:
    data, _ = testing.recorded_output(RECORDINGS / "real_resumed.jsonl")

    def resumed_parser(out: RunOutput) -> CodexStreamParser:
        parser = new_parser(out)
        parser.resume_from({THREAD_USAGE_KEY: kept} if kept else {})
        return parser

    parser, _, _ = testing.parse_output(resumed_parser, data)
    assert parser.usage == expected
    assert parser.session_data() == {THREAD_USAGE_KEY: "52,32,8"}


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_retry_before_the_answer_is_in_the_response_metadata(anyio_backend: str) -> None:
    response, _, _ = await REPLAY.run("real_retry_429.jsonl")
    assert response.failure is None
    assert response.metadata == {
        "reconnect_attempt": "1",
        "reconnect_max": "5",
        "http_status": "429",
    }
    plain, _, _ = await REPLAY.run("real_ok.jsonl")
    assert plain.metadata == {}


def test_provider_args_point_codex_at_a_responses_endpoint() -> None:
    args = provider_args(
        "http://127.0.0.1:8080/v1", name="emu", env_key="EMU_KEY", stream_max_retries=1
    )
    assert args == (
        "-c",
        "model_provider=emu",
        "-c",
        'model_providers.emu={name="emu",base_url="http://127.0.0.1:8080/v1",'
        'wire_api="responses",env_key="EMU_KEY",stream_max_retries=1}',
    )
    assert provider_args("http://h/v1")[1] == "model_provider=local"
    with pytest.raises(ValueError, match="base_url"):
        provider_args("")
    with pytest.raises(ValueError, match="name"):
        provider_args("http://h/v1", name="a b")
    with pytest.raises(ValueError, match="request_max_retries"):
        provider_args("http://h/v1", request_max_retries=-1)
    with pytest.raises(ValueError, match="stream_idle_timeout_ms"):
        provider_args("http://h/v1", stream_idle_timeout_ms=True)


def test_the_home_gets_its_codex_home_folder(tmp_path: Path) -> None:
    home = tmp_path / "user-7"
    env = CodexDriver().process_env(CodexConfig(home=str(home), env={"EMU_KEY": "k"}))
    assert env["CODEX_HOME"] == str(home / ".codex")
    assert (home / ".codex").is_dir()  # codex 0.169 refuses to start without it
    assert env["EMU_KEY"] == "k"
