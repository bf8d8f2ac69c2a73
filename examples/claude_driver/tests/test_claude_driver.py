"""Behaviour of the Claude Code example driver on recorded stream-json output.

Parser tests feed a recording straight into the parser (no process). Driver
tests use the kit's replay stand-in as the CLI, so the whole path from the
process to the response runs; no Claude Code is needed. Deadlines, cancellation,
start failures and the resume guard are format-independent: ``driver.clikit``'s
tests cover them once for both drivers. The checks every CLI driver shares live
in ``adaptertest.clikit``; this file gives them Claude Code's data.
"""

from __future__ import annotations

import contextlib
import stat
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from adaptertest import RecordingSink
from adaptertest import clikit as testing
from adaptertest.clikit import Replay
from adaptertest.recording import Chunk, Recording
from claude_driver import (
    CLAUDE_DRIVER_TYPE,
    ClaudeConfig,
    ClaudeDriver,
    ClaudeStreamParser,
    build_argv,
    claude_usage,
)
from driver import (
    APPEND_INLINE_LIMIT,
    InvalidOutputSchemaError,
    Request,
    SessionContext,
    SessionState,
    Usage,
)
from driver.clikit import ProcessOutcome, RunOutput

RECORDINGS = testing.recordings_dir(__file__)


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    backend: str = request.param
    return backend


# -- the parser, one recording at a time -----------------------------------------------------


def usage(fresh: int, read: int, write: int, output: int, cost_milli: int) -> Usage:
    """Usage as the driver must report it: input counts fresh input, cache reads and
    cache writes (Claude Code lists them apart); cached counts the reads."""
    return Usage(
        input_tokens=fresh + read + write,
        cached_input_tokens=read,
        output_tokens=output,
        estimated_cost_milli=cost_milli,
    )


REPLAY = Replay(RECORDINGS, lambda command: ClaudeDriver(ClaudeConfig(command=command)))


def parse(data: bytes) -> tuple[ClaudeStreamParser, RunOutput, RecordingSink]:
    return testing.parse_output(ClaudeStreamParser, data)


@pytest.mark.parametrize("recording", testing.recording_names(RECORDINGS))
def test_recording(recording: str, snapshot: SnapshotAssertion) -> None:
    """Each recording's result, on asyncio and trio, is its snapshot in
    ``recordings/snapshots/`` (``--snapshot-update`` rewrites it; ``replay.json`` gives
    the exit codes and signals)."""
    testing.check_recording(REPLAY, recording, snapshot)


def test_parser_keeps_terminal_json_verbatim_and_reads_usage() -> None:
    parser, out, _ = parse((RECORDINGS / "thinking.jsonl").read_bytes())
    last_line = (RECORDINGS / "thinking.jsonl").read_text(encoding="utf-8").splitlines()[-1]
    assert parser.terminal is not None
    assert parser.terminal.event == "result"
    assert parser.terminal.raw_json == last_line  # "type" is its last key; still found
    # Inclusive input: 11 fresh + 29800 cache reads; the cost is total_cost_usd.
    assert parser.usage == Usage(
        input_tokens=29811, cached_input_tokens=29800, output_tokens=143, estimated_cost_milli=22
    )
    assert out.transcript[-1].cost_usd == pytest.approx(0.0218)
    assert out.transcript[-1].usage == parser.usage


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
async def test_a_recording_made_by_record_replays_like_its_plain_transcript(
    anyio_backend: str, tmp_path: Path
) -> None:
    """The same run in ``adaptertest record``'s format (stdout and stderr in one file,
    the exit status too) gives the driver the same bytes and the same verdicts."""
    name = "nonzero_exit.jsonl"
    stdout = (RECORDINGS / name).read_bytes()
    stderr = (RECORDINGS / "nonzero_exit.stderr.txt").read_bytes()
    chunks = [Chunk(0.01 * i, 1, line) for i, line in enumerate(stdout.splitlines(True))]
    recorded = Recording(
        argv=["claude", "-p"], chunks=[*chunks, Chunk(0.5, 2, stderr)], exit_code=1
    )
    (tmp_path / name).write_bytes(recorded.dumps())
    assert testing.recorded_output(tmp_path / name) == (stdout, stderr)
    v1 = await testing.recording_result(Replay(tmp_path, REPLAY.driver), name)
    assert v1 == await testing.recording_result(REPLAY, name)
    assert v1["exit_code"] == 1


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_streaming_off_sends_no_payloads_but_the_same_transcript(anyio_backend: str) -> None:
    await testing.check_streaming_off(REPLAY, "tool_use.jsonl")


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_command_line_carries_model_and_resume_and_stdin_the_prompt(
    anyio_backend: str, tmp_path: Path
) -> None:
    argv_file, stdin_file = tmp_path / "argv.json", tmp_path / "stdin.bin"
    command = REPLAY.command("success.jsonl", record_argv=argv_file, record_stdin=stdin_file)
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
    expected = build_argv(driver.config, model="opus", resume_id=state.resume_id)
    assert passed == expected[len(command) :]
    assert stdin_file.read_bytes() == request.prompt.encode()
    assert passed == [
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--model",
        "opus",
        "--resume",
        "3f9b6c1e-58d2-4a7f-9e0b-c4d21a8f6e53",
        "--system-prompt-snapshot",
        "off",
        "--max-turns",
        "3",
    ]


@pytest.mark.parametrize(
    "extra_args", [("--system-prompt-snapshot", "on"), ("--system-prompt-snapshot=on",)]
)
def test_a_resume_renders_the_runs_own_system_prompt_unless_extra_args_choose(
    extra_args: tuple[str, ...],
) -> None:
    """On resume Claude Code 2.1.3xx replays the session's first system prompt (with
    its append) unless told ``--system-prompt-snapshot off``; the driver tells it so,
    and leaves the choice to extra args that make it."""
    plain = ClaudeConfig(model="opus")
    resumed = build_argv(plain, model="opus", resume_id="s-1")
    assert resumed[resumed.index("--system-prompt-snapshot") + 1] == "off"
    assert "--system-prompt-snapshot" not in build_argv(plain, model="opus", resume_id="")
    chosen = build_argv(ClaudeConfig(extra_args=extra_args), model="", resume_id="s-1")
    assert chosen.count("off") == 0
    assert [a for a in chosen if a.startswith("--system-prompt-snapshot")] == [extra_args[0]]


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
        ClaudeDriver,
        ClaudeConfig(model="claude-sonnet-4-5"),
        CLAUDE_DRIVER_TYPE,
        structured_native=True,
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


# -- usage, diagnostics and native structured output --------------------------------------------


def test_usage_sums_model_usage_and_falls_back_to_result_usage() -> None:
    two_models = {
        "usage": {"input_tokens": 0, "output_tokens": 0},  # a budget stop's zeros: not used
        "modelUsage": {
            "a": {"inputTokens": 1, "cacheReadInputTokens": 20, "outputTokens": 3, "costUSD": 0.5},
            "b": {"inputTokens": 4, "cacheCreationInputTokens": 50, "costUSD": 0.25},
            "not a model": 7,
        },
    }
    # Without total_cost_usd the models' costUSD are summed.
    assert claude_usage(two_models) == (usage(5, 20, 50, 3, 750), 0.75)
    snake = {
        "total_cost_usd": 0.0104,
        "usage": {
            "input_tokens": 2,
            "cache_read_input_tokens": 300,
            "cache_creation_input_tokens": 40,
            "output_tokens": 9,
        },
        "modelUsage": {},
    }
    assert claude_usage(snake) == (usage(2, 300, 40, 9, 10), 0.0104)
    # Nothing reported: not observed (None), not zero; a bool or negative cost is no cost.
    assert claude_usage({"total_cost_usd": True}) == (None, None)
    assert claude_usage({"usage": {}, "total_cost_usd": -1}) == (Usage(), None)


def test_vendor_kinds_carry_the_cli_fields_and_items_mirror_them() -> None:
    _, out, sink = parse((RECORDINGS / "rate_limited.jsonl").read_bytes())
    limit, first_retry = sink.stream[0], sink.stream[1]
    assert limit.raw["status"] == "rejected"
    assert limit.raw["overageDisabledReason"] == "out_of_credits"
    assert first_retry.raw == {
        "attempt": 1,
        "max_retries": 10,
        "retry_delay_ms": 512,
        "error_status": 429,
        "error": "rate_limit",
    }
    assert {p.thread_id for p in sink.stream} == {"2d6b9f04-7a31-4c8e-b5d2-9e0f1a7c3b68"}
    system = [i for i in out.transcript if i.kind == "system"]
    assert [i.subtype for i in system] == ["rate_limit", *["api_retry"] * 10, "api_error"]
    assert [i.data for i in system[:11]] == [p.raw for p in sink.stream[:11]]
    assert system[0].text == "rate limit rejected (five_hour), resets 2026-10-15T17:00:00Z"
    assert system[10].text == "API request failed (HTTP 429, rate_limit); retry 10 of 10 in 32 s"
    assert system[11].text.startswith("API Error: 429")


def test_compaction_and_synthetic_turns_are_visible() -> None:
    _, out, sink = parse((RECORDINGS / "compacted_session.jsonl").read_bytes())
    status = [p.raw for p in sink.stream if p.kind == "claude.status"]
    assert status == [{"status": "compacting"}, {"status": None, "compact_result": "success"}]
    boundary = next(p for p in sink.stream if p.kind == "claude.compact_boundary")
    assert boundary.raw == {"compact_metadata": {"trigger": "auto", "pre_tokens": 167204}}
    synthetic = next(i for i in out.transcript if i.kind == "user")
    assert synthetic.subtype == "synthetic"
    assert synthetic.text.startswith("This session is being continued")
    payload = next(p for p in sink.stream if p.kind == "claude.synthetic_user")
    assert payload.raw == {"text": synthetic.text}
    texts = [i.text for i in out.transcript if i.kind == "system"]
    assert texts[1:] == [
        "status compacting",
        "conversation compacted (auto, 167204 tokens before)",
        "status cleared, compaction success",
    ]


def test_a_killed_run_says_what_it_was_waiting_for_whatever_the_exit() -> None:
    data = (RECORDINGS / "killed_after_retries.jsonl").read_bytes()
    parser, _, _ = parse(data)
    failure = parser.failure(ProcessOutcome(1, "", False, data, b""), 60)
    assert failure is not None
    assert failure.message == (
        "claude exited with code 1 (31 API retries of 40, last: HTTP 529 overloaded_error)"
    )
    assert failure.metadata == {
        "exit_code": 1,
        "retry_attempt": 31,
        "max_retries": 40,
        "last_retry_status": 529,
        "last_retry_error": "overloaded_error",
    }


@pytest.mark.anyio
async def test_structured_output_comes_from_the_result_line(tmp_path: Path) -> None:
    response, argv = await testing.check_structured_answer(
        REPLAY, "structured_ok.jsonl", tmp_path / "argv.json"
    )
    schema = testing.structured_request().output_schema
    assert schema is not None
    flag = argv.index("--json-schema")
    assert argv[flag + 1] == schema.schema_document  # the exact schema text, inline
    assert argv[flag + 2 :] == []  # nothing after it: the prompt goes to stdin
    assert response.output == '{"ok":true}'
    assert response.checkpoint is not None


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("recording", "problem"),
    [
        ("structured_give_up.jsonl", "Failed to provide valid structured output after 2 attempts"),
        ("success.jsonl", "the CLI returned no structured value"),
    ],
)
async def test_structured_output_missing_fails_the_run(recording: str, problem: str) -> None:
    await testing.check_structured_refused(REPLAY, recording, problem)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_a_bad_schema_is_refused_before_launch(anyio_backend: str) -> None:
    driver = ClaudeDriver(ClaudeConfig(command=("claude-is-not-installed-here",)))
    request = testing.structured_request()
    assert request.output_schema is not None
    request.output_schema.schema_document = '{"type": "no such type"}'
    sink = RecordingSink()
    with pytest.raises(InvalidOutputSchemaError):
        await driver.run(request, sink)
    assert sink.events == []
    assert sink.stream == []


def test_the_home_is_claude_codes_config_dir(tmp_path: Path) -> None:
    config = ClaudeConfig(home=str(tmp_path), env={"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"})
    env = ClaudeDriver(config).process_env(config)
    assert env["CLAUDE_CONFIG_DIR"] == str(tmp_path / ".claude")
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9"


# -- the appended system prompt ----------------------------------------------------------------


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_an_append_goes_to_a_private_file_named_by_its_flag(
    anyio_backend: str, tmp_path: Path
) -> None:
    text = 'Answer in French.\n  Keep "quotes" and \\ as they are.  '
    passed = await testing.appended_argv(REPLAY, text, tmp_path, extra_args=("--max-turns", "3"))
    flag = passed.index("--append-system-prompt-file")
    path = Path(passed[flag + 1])
    assert passed[flag + 2 :] == ["--max-turns", "3"]  # the prompt went to stdin, untouched
    assert text not in " ".join(passed)
    assert not path.exists()  # removed once the run is over


def test_the_append_file_is_private_holds_the_text_exactly_and_is_removed() -> None:
    driver = ClaudeDriver()
    text = "Line one\nLine two é ☃ \t"
    with contextlib.ExitStack() as cleanup:
        flag, name = driver.system_prompt_args(text, cleanup)
        path = Path(name)
        assert flag == "--append-system-prompt-file"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert path.read_bytes() == text.encode("utf-8")
    assert not path.exists()


@pytest.mark.parametrize(
    ("extra_args", "flag"),
    [
        (("--append-system-prompt", "Be terse."), "--append-system-prompt"),
        (("--append-system-prompt=Be terse.",), "--append-system-prompt"),
        (("--append-system-prompt-file", "rules.md"), "--append-system-prompt-file"),
        (("--system-prompt", "You are a cat."), "--system-prompt"),
        (("--system-prompt-file=prompt.md",), "--system-prompt-file"),
    ],
)
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_an_append_is_refused_when_extra_args_set_the_system_prompt(
    anyio_backend: str, extra_args: tuple[str, ...], flag: str, tmp_path: Path
) -> None:
    await testing.check_append_refused(
        REPLAY, "conflicting_extra_args", tmp_path, extra_args=extra_args, argument=flag
    )


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_system_prompt_flags_in_extra_args_are_fine_without_an_append(
    anyio_backend: str, tmp_path: Path
) -> None:
    """Only an append conflicts with them: a run without one passes them on."""
    extra = ("--system-prompt", "You are a cat.")
    passed = await testing.appended_argv(REPLAY, "", tmp_path, extra_args=extra)
    assert passed[-2:] == ["--system-prompt", "You are a cat."]  # the prompt is on stdin


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_an_append_over_the_inline_limit_is_taken_through_its_file(
    anyio_backend: str, tmp_path: Path
) -> None:
    """The file carries the text, so the command-line limit does not apply."""
    text = "x" * (APPEND_INLINE_LIMIT + 1)
    passed = await testing.appended_argv(REPLAY, text, tmp_path)
    assert "--append-system-prompt-file" in passed
    assert all(text not in arg for arg in passed)


@pytest.mark.parametrize("anyio_backend", ["asyncio"])
@pytest.mark.parametrize(
    "extra",
    [("--permission-mode", "plan"), ("--system-prompt-snapshot", "on"), ("--system-prompts",)],
)
async def test_other_extra_args_leave_the_append_alone(
    anyio_backend: str, extra: tuple[str, ...], tmp_path: Path
) -> None:
    """A flag that only starts like a system-prompt flag is another flag."""
    passed = await testing.appended_argv(REPLAY, "x", tmp_path, extra_args=extra)
    assert "--append-system-prompt-file" in passed


def test_the_descriptor_declares_the_append() -> None:
    assert ClaudeDriver().descriptor().system_prompt.append is True
