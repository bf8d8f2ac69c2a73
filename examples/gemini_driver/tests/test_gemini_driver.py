"""Behaviour of the Gemini CLI example driver on recorded ``stream-json`` output.

Parser tests feed a recording straight into the parser (no process). Driver
tests use the kit's replay stand-in as the CLI, so the whole path from the
process to the response runs; no Gemini CLI is needed. Deadlines, cancellation,
start failures and the resume guard are format-independent: ``driver.clikit``'s
tests cover them once for every driver. The checks every CLI driver shares live
in ``adaptertest.clikit``; this file gives them Gemini's data and adds what
only this driver does: token deltas, ``gemini.error`` payloads, usage from
``result.stats`` and the failure metadata.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from adaptertest import RecordingSink
from adaptertest import clikit as testing
from adaptertest.clikit import Replay
from driver import (
    Request,
    RunError,
    SessionContext,
    SessionState,
    StreamCapability,
    StreamKind,
    TranscriptKind,
    Usage,
)
from driver.clikit import ProcessOutcome, RunOutput
from gemini_driver import (
    ERROR_KIND,
    GEMINI_DRIVER_TYPE,
    RETRY_KIND,
    GeminiConfig,
    GeminiDriver,
    GeminiStreamParser,
    build_argv,
    merge_settings,
    settings_path,
    stats_usage,
)

RECORDINGS = testing.recordings_dir(__file__)


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    backend: str = request.param
    return backend


def text(chunks: int) -> tuple[str, ...]:
    """A text block streamed in ``chunks`` deltas."""
    return ("text.start", *["text.content"] * chunks, "text.end")


# -- the parser, one recording at a time -----------------------------------------------------


REPLAY = Replay(RECORDINGS, lambda command: GeminiDriver(GeminiConfig(command=command)))


def new_parser(out: RunOutput) -> GeminiStreamParser:
    return GeminiStreamParser(out, model="gemini-test")


def parse(data: bytes) -> tuple[GeminiStreamParser, RunOutput, RecordingSink]:
    return testing.parse_output(new_parser, data)


def parse_recording(recording: str) -> tuple[GeminiStreamParser, RunOutput, RecordingSink]:
    return parse((RECORDINGS / recording).read_bytes())


def lines_of(*events: dict[str, Any]) -> bytes:
    return "\n".join(json.dumps(e) for e in events).encode()


@pytest.mark.parametrize("recording", testing.recording_names(RECORDINGS))
def test_recording(recording: str, snapshot: SnapshotAssertion) -> None:
    """Each recording's result (usage and failure metadata included), on asyncio and
    trio, is its snapshot in ``recordings/snapshots/`` (``--snapshot-update`` rewrites
    it; ``replay.json`` gives the exit codes)."""
    testing.check_recording(REPLAY, recording, snapshot)


def test_text_deltas_are_the_chunks_and_the_item_is_their_join() -> None:
    _, out, sink = parse_recording("tool_use.jsonl")
    contents = [p for p in sink.stream if p.kind == StreamKind.TEXT_CONTENT]
    assert [p.delta for p in contents] == [
        "I'll run the",
        " tests first.",
        "`add()` returned `a - b`;",
        " it now returns `a + b`,",
        " which is what `test_add` expects.",
    ]
    assert [p.message_id for p in contents] == ["turn-1/text"] * 2 + ["turn-5/text"] * 3
    assistant = [i.text for i in out.transcript if i.kind == TranscriptKind.ASSISTANT]
    assert assistant == [
        "I'll run the tests first.",
        "`add()` returned `a - b`; it now returns `a + b`, which is what `test_add` expects.",
    ]
    assert not any(i.delta for i in out.transcript)  # whole blocks in the transcript


def test_a_message_without_delta_is_a_block_of_its_own() -> None:
    parser, out, sink = parse(
        lines_of(
            {"type": "init", "session_id": "s-1", "model": "gemini-2.5-pro"},
            {"type": "message", "role": "user", "content": "hi"},  # the prompt's echo
            {"content": "Hel", "delta": True, "role": "assistant", "type": "message"},  # key order
            {"type": "message", "role": "assistant", "content": "", "delta": True},
            {"type": "message", "role": "assistant", "content": "Hello there."},
            {"type": "message", "role": "assistant", "content": "again", "delta": True},
            {"type": "message", "role": "assistant", "content": "!", "delta": 1},  # not true
            {"status": "success", "type": "result"},
        )
    )
    assert [p.kind for p in sink.stream] == [
        "step.started",
        *text(1),  # the open delta block closes before the whole message
        *text(1),
        *text(1),
        *text(1),  # delta 1 is not delta true: a whole message
        "step.finished",
    ]
    assistant = [i.text for i in out.transcript if i.kind == TranscriptKind.ASSISTANT]
    assert assistant == ["Hel", "Hello there.", "again", "!"]
    assert parser.output() == "!"
    assert parser.succeeded
    assert parser.usage is None  # a result without stats reports no usage


def test_error_lines_become_vendor_payloads_and_system_items() -> None:
    _, out, sink = parse_recording("loop_detected.jsonl")
    (payload,) = [p for p in sink.stream if p.kind == ERROR_KIND]
    assert payload.raw == {"severity": "warning", "message": "Loop detected, stopping execution"}
    assert payload.thread_id == "e6b3f0d8-92c1-4a7e-8d05-6f1a2c9b4e37"
    (item,) = [i for i in out.transcript if i.kind == TranscriptKind.SYSTEM]
    assert (item.subtype, item.text) == ("warning", "Loop detected, stopping execution")
    _, out, _ = parse(lines_of({"type": "error"}))
    assert [(i.subtype, i.text) for i in out.transcript] == [
        ("error", "gemini reported an error without a message")
    ]


def test_tool_results_keep_status_output_and_error() -> None:
    _, out, sink = parse_recording("tool_use.jsonl")
    starts = {p.tool_call_id: p for p in sink.stream if p.kind == StreamKind.TOOL_CALL_START}
    shell = "run_shell_command-1791965742032-4c2f7a"
    assert starts[shell].name == "run_shell_command"
    assert starts[shell].args == {
        "command": "python -m pytest -q",
        "description": "Run the test suite",
    }
    results = {p.tool_call_id: p.result for p in sink.stream if p.kind == "tool_call.result"}
    items = {i.tool_use_id: i for i in out.transcript if i.kind == TranscriptKind.TOOL_RESULT}
    missing = "read_file-1791965745135-a81d03"
    assert results[missing] == {
        "status": "error",
        "error": {
            "type": "file_not_found",
            "message": "File not found: /home/ana/projects/calc/calk.py",
        },
    }
    assert items[missing].is_error
    assert items[missing].text == "File not found: /home/ana/projects/calc/calk.py"
    no_output = "read_file-1791965745136-5be9e0"  # success without an output field
    assert results[no_output] == {"status": "success"}
    assert (items[no_output].text, items[no_output].is_error) == ("success", False)
    assert results["read_file-1791965746451-0e7b44"] == {"status": "success", "output": ""}
    assert items[shell].text.startswith("F.\nFAILED test_calc.py::test_add")


def test_the_result_item_carries_usage_and_the_rest_of_the_stats() -> None:
    parser, out, _ = parse_recording("tool_use.jsonl")
    result = out.transcript[-1]
    assert result.kind == TranscriptKind.RESULT
    assert (result.subtype, result.is_error) == ("success", False)
    # input_tokens includes cached; output adds the thinking tokens total_tokens counts.
    assert result.usage == Usage(input_tokens=42210, output_tokens=2212, cached_input_tokens=28672)
    assert result.data["duration_ms"] == 12611
    assert result.data["tool_calls"] == 5
    assert set(result.data["models"]) == {"gemini-2.5-flash-lite", "gemini-2.5-pro"}
    assert "input_tokens" not in result.data  # counts live in usage, in one meaning
    assert parser.model == "auto"  # two models answered: init's name stays
    single, _, _ = parse_recording("success.jsonl")
    assert single.model == "gemini-2.5-flash"
    _, out, _ = parse_recording("error_result.jsonl")
    assert out.transcript[-1].errors == ["Model stream ended with empty response text."]
    assert out.transcript[-1].is_error


def test_a_missing_result_is_not_a_success() -> None:
    lines = (RECORDINGS / "success.jsonl").read_text(encoding="utf-8").splitlines()[:-1]
    parser, _, _ = parse("\n".join(lines).encode())
    failure = parser.failure(ProcessOutcome(0, "", False, b"", b""), 60)
    assert failure is not None
    assert failure.message == "gemini exited without a result line"


def test_an_error_result_without_error_quotes_the_last_error_line() -> None:
    parser, _, _ = parse(
        lines_of(
            {"type": "error", "severity": "error", "message": "Model stream ended early"},
            {"type": "result", "status": "error"},
        )
    )
    failure = parser.failure(ProcessOutcome(0, "", False, b"", b""), 60)
    assert failure is not None
    assert failure.message == "Model stream ended early"
    assert failure.metadata["status"] == "error"
    assert "error_type" not in failure.metadata
    bare, _, _ = parse(lines_of({"type": "result"}))
    failure = bare.failure(ProcessOutcome(0, "", False, b"", b""), 60)
    assert failure is not None
    assert failure.message == "gemini reported no status"
    odd, _, _ = parse(lines_of({"type": "result", "status": "cancelled"}))
    failure = odd.failure(ProcessOutcome(0, "", False, b"", b""), 60)
    assert failure is not None
    assert failure.message == "gemini reported status 'cancelled'"


def test_a_fatal_exit_quotes_stderr_else_the_last_error_line() -> None:
    parser, _, _ = parse_recording("turn_limit.jsonl")
    quiet = parser.failure(ProcessOutcome(53, "", False, b"", b""), 60)
    assert quiet is not None
    assert quiet.message == "gemini exited with code 53: Maximum session turns exceeded"
    stopped = parser.failure(ProcessOutcome(130, "", True, b"", b""), 5)
    assert stopped is not None
    assert "exit_reason" not in stopped.metadata  # the driver stopped it: no CLI verdict


@pytest.mark.parametrize(
    ("stats", "usage"),
    [
        ({}, None),
        ({"duration_ms": 5, "models": {}}, None),
        (  # thinking: total_tokens - input_tokens beats output_tokens
            {"total_tokens": 1500, "input_tokens": 1000, "output_tokens": 100, "cached": 400},
            Usage(input_tokens=1000, output_tokens=500, cached_input_tokens=400),
        ),
        (  # no thinking (or no total): output_tokens as reported
            {"total_tokens": 1100, "input_tokens": 1000, "output_tokens": 100},
            Usage(input_tokens=1000, output_tokens=100),
        ),
        (
            {"input_tokens": 1000, "output_tokens": 100, "cached": 400, "input": 600},
            Usage(input_tokens=1000, output_tokens=100, cached_input_tokens=400),
        ),
        (  # input_tokens missing: the breakdown adds up to it
            {"output_tokens": 7, "cached": 400, "input": 600},
            Usage(input_tokens=1000, output_tokens=7, cached_input_tokens=400),
        ),
        (  # only per-model counts: summed, thinking per model
            {
                "models": {
                    "a": {"total_tokens": 130, "input_tokens": 100, "output_tokens": 10},
                    "b": {"input_tokens": 50, "output_tokens": 5, "cached": 20},
                    "junk": "not counts",
                }
            },
            Usage(input_tokens=150, output_tokens=35, cached_input_tokens=20),
        ),
        (  # booleans, strings and negatives are not counts
            {"input_tokens": True, "output_tokens": "12", "cached": -3, "total_tokens": 2.5},
            Usage(),
        ),
    ],
)
def test_stats_usage_follows_the_usage_definition(
    stats: dict[str, Any], usage: Usage | None
) -> None:
    assert stats_usage(stats) == usage
    if usage is not None:
        assert usage.cached_input_tokens <= usage.input_tokens


def test_parser_survives_corrupt_and_odd_lines() -> None:
    testing.check_parser_survives_odd_lines(
        new_parser,
        truncated=b'{"type": "message", "role": "assistant", "content": "Hel',
        not_an_object=b'{"type": "tool_use", "tool_id": ["not", "a", "string"]}',
        unexpected=b'{"type": "message", "role": "assistant", "content": {"t": 1}, "delta": true}',
        nan_terminal=b'{"type": "result", "status": "success", "stats": {"input_tokens": NaN}}',
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
    driver = GeminiDriver(
        GeminiConfig(
            command=command, model="gemini-2.5-flash", extra_args=("--approval-mode", "yolo")
        )
    )
    state = SessionState(resume_id="5d0c7e3a-1b42-4f69-9a8e-2c7d41e0b6f3")
    request = Request(
        prompt="--version is a prompt here, not a flag",
        model_override="gemini-2.5-pro",
        session=SessionContext(state=state),
    )
    passed = await testing.passed_argv(driver, request, argv_file)
    expected = build_argv(driver.config, model="gemini-2.5-pro", resume_id=state.resume_id)
    assert passed == expected[len(command) :]
    assert stdin_file.read_bytes() == request.prompt.encode()
    assert passed == [
        "--output-format",
        "stream-json",
        "--model",
        "gemini-2.5-pro",
        "--resume",
        "5d0c7e3a-1b42-4f69-9a8e-2c7d41e0b6f3",
        "--approval-mode",
        "yolo",
    ]
    fresh = build_argv(GeminiConfig(), model="", resume_id="")
    assert fresh == ["gemini", "--output-format", "stream-json"]


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_request_config_wins_over_the_captured_one(anyio_backend: str) -> None:
    driver = GeminiDriver(GeminiConfig(command=("gemini-is-not-installed-here",)))
    config = GeminiConfig(command=REPLAY.command("success.jsonl"))
    await testing.check_request_config_wins(driver, config, "OK")


# -- declarations and config -------------------------------------------------------------------


def test_config_validation() -> None:
    testing.check_config_validation(
        GeminiDriver,
        GeminiConfig,
        default_command=("gemini",),
        other=GeminiConfig(model="gemini-2.5-pro"),
    )


def test_descriptor_and_stream_capability_are_honest() -> None:
    models = testing.check_descriptor_and_stream_capability(
        GeminiDriver,
        GeminiConfig(model="gemini-2.5-pro"),
        GEMINI_DRIVER_TYPE,
        capability=StreamCapability(native=True, token_level=True),
    )
    assert models == ["gemini-2.5-pro"]
    descriptor = GeminiDriver().descriptor()
    assert descriptor.models == ()
    assert descriptor.display_name == "Gemini CLI (stream-json example)"
    assert descriptor.config_schema is not None
    assert {f.name: f.default for f in descriptor.config_schema.fields}["command"] == "gemini"


def test_config_fingerprint_follows_the_config() -> None:
    testing.check_config_fingerprint_follows_the_config(
        GeminiDriver,
        GeminiConfig(model="gemini-2.5-pro"),
        GeminiConfig(model="gemini-2.5-pro"),
        GeminiConfig(model="gemini-2.5-flash"),
    )


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_environment_check_looks_for_the_program(anyio_backend: str) -> None:
    missing = "gemini-is-not-installed-here"
    await testing.check_environment_probe(GeminiDriver, GeminiConfig, missing)


def test_the_home_is_gemini_cli_home(tmp_path: Path) -> None:
    config = GeminiConfig(home=str(tmp_path), env={"GEMINI_CLI_TRUST_WORKSPACE": "true"})
    env = GeminiDriver(config).process_env(config)
    assert env["GEMINI_CLI_HOME"] == str(tmp_path)
    assert env["GEMINI_CLI_TRUST_WORKSPACE"] == "true"


# -- what the real Gemini CLI 0.61 does beyond the recordings -------------------------------

RETRY_429 = (
    b"Attempt 1 failed with status 429. Retrying with backoff... _ApiError: "
    b'{"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}'
)
LAST_500 = (
    b'Attempt 2 failed: {"error":{"code":500,"message":"An internal error has occurred.",'
    b'"status":"INTERNAL"}}. Max attempts reached'
)
API_ERROR_500 = {
    "type": "result",
    "status": "error",
    "error": {
        "type": "unknown",
        "message": '[API Error: {"error":{"code":500,"message":"An internal error has '
        'occurred.","status":"INTERNAL"}}]',
    },
    "stats": {"total_tokens": 0, "input_tokens": 0, "output_tokens": 0},
}


def test_stderr_retries_become_payloads_items_and_metadata() -> None:
    parser, out, sink = parse(b"")
    for line in (b"Ripgrep is not available. Falling back to GrepTool.", RETRY_429, b"  }"):
        parser.feed_stderr(line)
    assert [p.kind for p in sink.stream] == [RETRY_KIND]
    assert sink.stream[0].raw["attempt"] == 1
    assert sink.stream[0].raw["status"] == 429
    (item,) = out.transcript
    assert (item.kind, item.subtype) == (TranscriptKind.SYSTEM, "api_retry")
    assert item.metadata == {"attempt": "1", "status": "429"}
    assert parser.run_metadata() == {"retries": "1", "last_retry_status": "429"}


def test_a_run_without_retries_has_no_metadata() -> None:
    parser, _, _ = parse_recording("success.jsonl")
    assert parser.run_metadata() == {}


def test_an_api_error_result_names_status_and_retry_count() -> None:
    parser, _, sink = parse(lines_of(API_ERROR_500))
    parser.feed_stderr(b"Attempt 1 failed with status 500. Retrying with backoff... _ApiError")
    parser.feed_stderr(LAST_500)
    failure = parser.failure(ProcessOutcome(500 % 256, "", False, b"", b""), 60)
    assert failure is not None
    assert failure.message == (
        "gemini API error: HTTP 500 INTERNAL An internal error has occurred. "
        "(after 2 attempts, 1 retry, last HTTP 500)"
    )
    assert failure.metadata == {
        "exit_code": 244,
        "status": "error",
        "error_type": "unknown",
        "http_status": 500,
        "retries": 1,
        "last_retry_status": 500,
    }
    assert [p.kind for p in sink.stream].count(RETRY_KIND) == 1  # the last attempt is no retry


def network_error_result(error: str) -> bytes:
    line = {"type": "result", "status": "error", "error": {"message": f"[API Error: {error}]"}}
    return json.dumps(line).encode()


def test_a_refused_connection_quotes_the_cause_from_stderr() -> None:
    parser, _, _ = parse(network_error_result("fetch failed"))
    for line in (
        b"Error when talking to Gemini API Full report available at: x.json TypeError: fetch",
        b"  [cause]: Error: connect ECONNREFUSED 127.0.0.1:9 {",
        b"    errno: -111,",
        b"    code: 'ECONNREFUSED',",
    ):
        parser.feed_stderr(line)
    failure = parser.failure(ProcessOutcome(1, "", False, b"", b""), 60)
    assert failure is not None
    assert failure.message == (
        "gemini API error: fetch failed; Error: connect ECONNREFUSED 127.0.0.1:9, ECONNREFUSED"
    )
    assert (
        failure.metadata["network_error"] == "Error: connect ECONNREFUSED 127.0.0.1:9, ECONNREFUSED"
    )
    assert "stream_cut" not in failure.metadata


def test_a_cut_without_a_cause_on_stderr_still_names_the_cut() -> None:
    parser, _, _ = parse(network_error_result("terminated"))
    failure = parser.failure(ProcessOutcome(1, "", False, b"", b""), 60)
    assert failure is not None
    assert failure.message == (
        "gemini API error: the model's response stream was cut (the connection closed "
        "before the answer was complete: terminated)"
    )
    assert failure.metadata["stream_cut"] is True


def test_an_untrusted_workspace_is_named() -> None:
    parser, _, _ = parse(b"")
    failure = parser.failure(ProcessOutcome(55, "", False, b"", b"not trusted"), 60)
    assert failure is not None
    assert failure.metadata["exit_reason"] == "untrusted_workspace"


def test_settings_are_merged_into_the_home_settings_file(tmp_path: Path) -> None:
    path = settings_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text('{"ui": {"theme": "dark"}, "security": {"folderTrust": {"enabled": true}}}')
    auth = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
    assert merge_settings(tmp_path, auth) == path
    assert json.loads(path.read_text()) == {
        "ui": {"theme": "dark"},
        "security": {"folderTrust": {"enabled": True}, "auth": {"selectedType": "gemini-api-key"}},
    }
    before = path.stat().st_mtime_ns
    merge_settings(tmp_path, auth)  # nothing changes: the file is left alone
    assert path.stat().st_mtime_ns == before
    assert [p.name for p in path.parent.iterdir()] == ["settings.json"]


def test_a_settings_file_that_is_not_an_object_is_not_overwritten(tmp_path: Path) -> None:
    path = settings_path(tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text("[1, 2")
    with pytest.raises(ValueError, match=r"settings\.json: cannot read it as JSON"):
        merge_settings(tmp_path, {"general": {"maxAttempts": 2}})
    assert path.read_text() == "[1, 2"


def test_settings_need_a_home() -> None:
    with pytest.raises(ValueError, match="settings: needs home"):
        GeminiConfig(settings={"general": {"maxAttempts": 2}})


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_driver_writes_its_settings_before_the_run(
    anyio_backend: str, tmp_path: Path
) -> None:
    settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
    config = GeminiConfig(
        command=REPLAY.command("success.jsonl"), home=str(tmp_path), settings=settings
    )
    response = await GeminiDriver(config).run(Request(prompt="hi"), RecordingSink())
    assert response.failure is None
    assert json.loads(settings_path(tmp_path).read_text()) == settings
    settings_path(tmp_path).write_text("not json")
    with pytest.raises(RunError, match=r"gemini settings: .*not overwriting"):
        await GeminiDriver(config).run(Request(prompt="hi"), RecordingSink())


# -- the appended system prompt ----------------------------------------------------------------


@pytest.mark.parametrize("extra_args", [(), ("--approval-mode", "yolo")])
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_an_append_is_refused_before_launch(
    anyio_backend: str, extra_args: tuple[str, ...], tmp_path: Path
) -> None:
    """Gemini CLI can only replace its system prompt (GEMINI_SYSTEM_MD), never append."""
    assert GeminiDriver().descriptor().system_prompt.append is False
    await testing.check_append_refused(
        REPLAY, "unsupported_driver", tmp_path, extra_args=extra_args
    )


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_test_written_with_the_old_reason_name_still_reads_it(
    anyio_backend: str, tmp_path: Path
) -> None:
    """Projects made before the port took upstream's names expect "unsupported"."""
    await testing.check_append_refused(REPLAY, "unsupported", tmp_path)
    with pytest.raises(AssertionError):
        await testing.check_append_refused(REPLAY, "nul_byte", tmp_path)
