"""Behaviour of the Codex example driver on recorded ``exec --json`` output.

Parser tests feed a recording straight into the parser (no process). Driver
tests use the kit's replay stand-in as the CLI, so the whole path from the
process to the response runs; no Codex CLI is needed. Deadlines, cancellation,
start failures and the resume guard are format-independent: ``driver.clikit``'s
tests cover them once for both drivers. The checks every CLI driver shares live
in ``adaptertest.clikit``; this file gives them Codex's data.
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from syrupy.assertion import SnapshotAssertion

from adaptertest import RecordingSink
from adaptertest import clikit as testing
from adaptertest.clikit import Replay
from codex_driver import (
    CODEX_DRIVER_TYPE,
    RESERVED_CONFIG_KEYS,
    RUN_FLAGS,
    THREAD_USAGE_KEY,
    CodexConfig,
    CodexDriver,
    CodexStreamParser,
    build_argv,
    provider_args,
    toml_string,
)
from driver import (
    APPEND_INLINE_LIMIT,
    Request,
    SessionContext,
    SessionState,
    StreamKind,
    TranscriptKind,
    Usage,
)
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

REPLAY = Replay(RECORDINGS, lambda command: CodexDriver(CodexConfig(command=command)))


def new_parser(out: RunOutput) -> CodexStreamParser:
    return CodexStreamParser(out, model="gpt-test")


def parse(data: bytes) -> tuple[CodexStreamParser, RunOutput, RecordingSink]:
    return testing.parse_output(new_parser, data)


@pytest.mark.parametrize("recording", testing.recording_names(RECORDINGS))
def test_recording(recording: str, snapshot: SnapshotAssertion) -> None:
    """Each recording's result, on asyncio and trio, is its snapshot in
    ``recordings/snapshots/`` (``--snapshot-update`` rewrites it; ``replay.json`` gives
    the exit codes and signals)."""
    testing.check_recording(REPLAY, recording, snapshot)


def test_the_init_item_names_the_asked_model() -> None:
    _, out, _ = parse((RECORDINGS / "success.jsonl").read_bytes())
    assert [i.model for i in out.transcript if i.kind == TranscriptKind.INIT] == ["gpt-test"]


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


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_streaming_off_sends_no_payloads_but_the_same_transcript(anyio_backend: str) -> None:
    await testing.check_streaming_off(REPLAY, "tool_use.jsonl")


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_command_line_carries_model_and_resume_and_stdin_the_prompt(
    anyio_backend: str, tmp_path: Path
) -> None:
    argv_file, stdin_file = tmp_path / "argv.json", tmp_path / "stdin.bin"
    command = REPLAY.command("success.jsonl", record_argv=argv_file, record_stdin=stdin_file)
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
    expected = build_argv(driver.config, model="gpt-other", resume_id=state.resume_id)
    assert passed == expected[len(command) :]
    assert stdin_file.read_bytes() == request.prompt.encode()
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
        "-",
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


def test_a_json_error_body_is_said_in_words_not_dumped() -> None:
    """codex 0.162 to 0.164 quote a 400's JSON body as the error message; the failure
    says it in words (the payload keeps it as it came)."""
    body = json.dumps(
        {
            "error": {
                "message": "Your input exceeds the context window of this model.",
                "type": "invalid_request_error",
                "param": None,
                "code": "context_length_exceeded",
            }
        }
    )
    data = "\n".join(
        json.dumps(line)
        for line in (
            {"type": "thread.started", "thread_id": "t-1"},
            {"type": "turn.started"},
            {"type": "error", "message": body},
            {"type": "turn.failed", "error": {"message": body}},
        )
    ).encode()
    parser, _, sink = parse(data)
    failure = parser.failure(ProcessOutcome(1, "", False, data, b""), 60)
    assert failure is not None
    assert failure.message == (
        "model API error: Your input exceeds the context window of this model. "
        "(invalid_request_error, context_length_exceeded)"
    )
    assert "{" not in failure.message
    assert [p.raw["message"] for p in sink.stream if p.kind == "codex.error"] == [body]


def test_the_schema_file_goes_before_the_resume_subcommand() -> None:
    config = CodexConfig(extra_args=("--sandbox", "read-only"))
    argv = build_argv(config, model="", resume_id="t-1", schema_path="/tmp/s.json")
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
        "-",
    ]


@pytest.mark.anyio
async def test_structured_output_is_the_final_message(tmp_path: Path) -> None:
    response, argv = await testing.check_structured_answer(
        REPLAY, "structured_ok.jsonl", tmp_path / "argv.json"
    )
    schema_path = Path(argv[argv.index("--output-schema") + 1])
    assert argv.index("--output-schema") < argv.index("-")
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
    assert (tmp_path / ".codex").is_dir()  # codex 0.169 refuses to start without it
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


# -- the appended system prompt ----------------------------------------------------------------


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_an_append_becomes_developer_instructions(anyio_backend: str, tmp_path: Path) -> None:
    text = 'Answer in French.\nKeep "quotes" and \\ as they are.'
    extra = ("--sandbox", "read-only")
    passed = await testing.appended_argv(REPLAY, text, tmp_path, extra_args=extra)
    flag = passed.index("-c", len(["exec", "--json", *RUN_FLAGS]))  # after the run's own flags
    key, value = passed[flag + 1].split("=", 1)
    assert key == "developer_instructions"
    assert tomllib.loads(f"v = {value}")["v"] == text
    assert passed[flag + 2 : flag + 4] == ["--sandbox", "read-only"]
    assert passed[flag + 4 :] == ["-"]  # the prompt went to stdin, untouched


@settings(max_examples=50, deadline=None, derandomize=True, database=None)
@given(st.text(st.characters(exclude_categories=["Cs"]), max_size=60))
def test_toml_string_reads_back_as_the_same_text(text: str) -> None:
    assert tomllib.loads(f"v = {toml_string(text)}")["v"] == text


@pytest.mark.parametrize(
    ("extra_args", "key"),
    [
        (("-c", "developer_instructions=Be terse."), "developer_instructions"),
        (("-c", 'instructions="You are a cat."'), "instructions"),
        (("--config", "developer_instructions = 'x'"), "developer_instructions"),
        (("--config=instructions=x",), "instructions"),
        (("-cdeveloper_instructions=x",), "developer_instructions"),
        (("-c", "base_instructions='x'"), "base_instructions"),
        (("-c", "model_instructions_file=/tmp/i.md"), "model_instructions_file"),
        (("--config", '"experimental_instructions_file"=x'), "experimental_instructions_file"),
    ],
)
@pytest.mark.parametrize("text", ["Be brief.", ""], ids=["with-append", "without-append"])
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_extra_args_setting_a_reserved_key_are_refused_on_every_run(
    anyio_backend: str, extra_args: tuple[str, ...], key: str, text: str, tmp_path: Path
) -> None:
    """The instruction keys are the driver's: an override is refused before launch as
    conflicting_extra_args naming the key, with or without an append (as upstream's codex
    driver does)."""
    assert key in RESERVED_CONFIG_KEYS
    await testing.check_append_refused(
        REPLAY, "conflicting_extra_args", tmp_path, extra_args=extra_args, text=text, argument=key
    )


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_an_append_over_the_inline_limit_is_refused_before_launch(
    anyio_backend: str, tmp_path: Path
) -> None:
    """developer_instructions travels on the command line: 32,769 UTF-8 bytes are refused
    as inline_limit before the CLI starts, 32,768 are passed (a two-byte character makes
    the byte count, not the character count, decide)."""
    over = "é" * (APPEND_INLINE_LIMIT // 2) + "x"
    assert len(over.encode()) == APPEND_INLINE_LIMIT + 1
    await testing.check_append_refused(REPLAY, "inline_limit", tmp_path, text=over)
    at = over[:-1]
    passed = await testing.appended_argv(REPLAY, at, tmp_path)
    assert f"developer_instructions={toml_string(at)}" in passed


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_other_config_overrides_leave_the_append_alone(
    anyio_backend: str, tmp_path: Path
) -> None:
    extra = ("-c", "model_reasoning_effort=low", "--config", "developer_instructions_x=1")
    passed = await testing.appended_argv(REPLAY, "x", tmp_path, extra_args=extra)
    assert 'developer_instructions="x"' in passed


def test_the_descriptor_declares_the_append() -> None:
    assert CodexDriver().descriptor().system_prompt.append is True
