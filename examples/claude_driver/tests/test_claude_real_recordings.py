"""The driver on output recorded from the real Claude Code 2.1.328 against the emulator.

Each ``real_*.jsonl`` recording was made with ``adaptertest record --scenario`` from the
scenario of the same name in ``scenarios/`` (``docs/real-clis.md`` has the command), so
the lines are the CLI's own: new fields, keys in its order, its retries and its errors.
"""

from __future__ import annotations

import json

import pytest

from adaptertest import clikit as testing
from adaptertest import recording
from adaptertest.clikit import REASONING, TEXT, TOOL, Case
from claude_driver import ClaudeStreamParser, claude_usage
from driver import Usage

RECORDINGS = testing.recordings_dir(__file__)


def usage(total: int, cached: int, output: int, cost_milli: int) -> Usage:
    return Usage(
        input_tokens=total,
        cached_input_tokens=cached,
        output_tokens=output,
        estimated_cost_milli=cost_milli,
    )


RETRY = ("claude.api_retry", "claude.api_retry", "claude.api_error")
FAILED_ITEMS = ("init", "system", "system", "system", "result")


def gave_up(status: int | None, error: str, api_error: str, **extra: object) -> dict[str, object]:
    """The metadata of a run the CLI gave up on after two retries (the scenarios' cap)."""
    meta: dict[str, object] = {
        "terminal_reason": "api_error",
        "retry_attempt": 2,
        "max_retries": 2,
        "last_retry_error": error,
        "api_error": api_error,
        **extra,
    }
    if status is not None:
        meta.update(api_error_status=status, last_retry_status=status)
    return meta


CASES = [
    Case(
        "real_ok.jsonl",
        0,
        ("init", "assistant", "result"),
        ("step.started", *TEXT, "step.finished"),
        "OK",
        True,
        "e8b5395a-e850-4bd5-99af-eea1b079ba87",
        None,
        usage=usage(1210, 1024, 4, 1),
    ),
    Case(
        # --json-schema: the answer is a StructuredOutput tool call the CLI acknowledges.
        "real_structured.jsonl",
        0,
        ("init", "tool_call", "tool_result", "result"),
        ("step.started", *TOOL, "step.finished"),
        '{"ok":true}',
        True,
        "50e13050-8908-4226-ae88-3c52976d43f6",
        None,
        usage=usage(1300, 0, 9, 4),
    ),
    Case(
        "real_tool_read.jsonl",
        0,
        ("init", "assistant", "tool_call", "tool_result", "assistant", "result"),
        ("step.started", *TEXT, *TOOL, "step.finished", "step.started", *TEXT, "step.finished"),
        "The note says: ship it on Friday.",
        True,
        "2ca60c92-5846-47d5-839c-71cd8bf6f867",
        None,
        usage=usage(2880, 0, 42, 9),
    ),
    Case(
        # The second run of real_tool_read's session: modelUsage and total_cost_usd count
        # both runs; the usage is this run's alone (model_usage_since_last_result).
        "real_resumed.jsonl",
        0,
        ("init", "assistant", "result"),
        ("step.started", *TEXT, "step.finished"),
        "Friday, as the note says.",
        True,
        "2ca60c92-5846-47d5-839c-71cd8bf6f867",
        None,
        usage=usage(1600, 1400, 8, 1),
    ),
    Case(
        # thinking and text of one message; the CLI's system/thinking_tokens lines before
        # them (estimates while thinking streams) are skipped.
        "real_thinking.jsonl",
        0,
        ("init", "thinking", "assistant", "result"),
        ("step.started", *REASONING, *TEXT, "step.finished"),
        "OK",
        True,
        "9714933d-471d-4c32-88c2-555e8509e93a",
        None,
        usage=usage(1100, 0, 40, 4),
    ),
    Case(
        # --max-turns 1: the tool ran, the next model request was not made.
        "real_max_turns.jsonl",
        1,
        ("init", "assistant", "tool_call", "tool_result", "result"),
        ("step.started", *TEXT, *TOOL, "step.finished"),
        "Reading the note.",
        False,
        "55cb686d-cb33-4e95-8ff6-560baab80433",
        "Reached maximum number of turns (1)",
        usage=usage(1400, 0, 30, 5),
        failure_metadata={"subtype": "error_max_turns", "terminal_reason": "max_turns"},
    ),
    Case(
        # --max-budget-usd 0.5 against a 400k-token answer: stopped before the tool ran.
        "real_budget_stop.jsonl",
        1,
        ("init", "assistant", "tool_call", "result"),
        ("step.started", *TEXT, "tool_call.start", "tool_call.end", "step.finished"),
        "Reading the note.",
        False,
        "c7a9d0f8-f1a5-4b6c-ad4a-abf063ee8357",
        "Reached maximum budget ($0.5)",
        usage=usage(400000, 0, 30, 1200),
        failure_metadata={
            "subtype": "error_max_budget_usd",
            "terminal_reason": "budget_exhausted",
        },
    ),
    Case(
        "real_retry_429.jsonl",
        0,
        ("init", "system", "assistant", "result"),
        ("claude.api_retry", "step.started", *TEXT, "step.finished"),
        "OK",
        True,
        "a3aa6e99-43d7-498d-b62f-ebdb800b12a8",
        None,
        usage=usage(900, 0, 2, 3),
    ),
    Case(
        "real_error_500.jsonl",
        1,
        FAILED_ITEMS,
        RETRY,
        "",
        False,
        "0f4ffdd0-9217-46ce-907f-ee4912611238",
        "API Error: 500 Internal server error",
        failure_metadata=gave_up(500, "server_error", "server_error", api_error_type="api_error"),
    ),
    Case(
        "real_overloaded_529.jsonl",
        1,
        FAILED_ITEMS,
        RETRY,
        "",
        False,
        "1065b3ff-27f7-48de-bdef-809b4c9fed61",
        "2 API retries of 2, last: HTTP 529 overloaded",
        failure_metadata=gave_up(
            529, "overloaded", "server_error", api_error_type="overloaded_error"
        ),
    ),
    Case(
        "real_unauthorized_401.jsonl",
        1,
        FAILED_ITEMS,
        RETRY,
        "",
        False,
        "1258ff27-d770-4d6e-93fe-e6b469d86fc0",
        "Invalid API key",
        failure_metadata=gave_up(
            401,
            "authentication_failed",
            "authentication_failed",
            api_error_type="authentication_error",
        ),
    ),
    Case(
        # Cut streams, then the CLI's own non-streaming retry cut too: no HTTP status.
        "real_stream_cut.jsonl",
        1,
        FAILED_ITEMS,
        RETRY,
        "",
        False,
        "855021a9-e7a1-4774-b7e4-5982c248b873",
        "Connection to the API was lost (ECONNRESET). This is usually temporary — try again. "
        "(2 API retries of 2, last: no HTTP status unknown)",
        failure_metadata=gave_up(None, "unknown", "connection_failed"),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.recording)
def test_parser_on_a_real_recording(case: Case) -> None:
    testing.check_parser_on_recording(case, RECORDINGS, ClaudeStreamParser)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.recording)
def test_each_real_recording_names_the_cli_and_its_version(case: Case) -> None:
    assert recording.read(RECORDINGS / case.recording).cli == {
        "name": "claude",
        "version": "2.1.328",
    }


def test_retries_before_a_success_are_in_the_run_metadata() -> None:
    data, _ = testing.recorded_output(RECORDINGS / "real_retry_429.jsonl")
    parser, _, _ = testing.parse_output(ClaudeStreamParser, data)
    assert parser.run_metadata() == {
        "api_retries": "1",
        "max_retries": "2",
        "last_retry_error": "rate_limit",
        "last_retry_status": "429",
    }
    ok, _ = testing.recorded_output(RECORDINGS / "real_ok.jsonl")
    assert testing.parse_output(ClaudeStreamParser, ok)[0].run_metadata() == {}


def test_usage_is_the_runs_own_on_a_resumed_session() -> None:
    data, _ = testing.recorded_output(RECORDINGS / "real_resumed.jsonl")
    result = json.loads(data.splitlines()[-1])
    # The whole session: both runs.
    assert result["modelUsage"]["claude-sonnet-4-5"]["inputTokens"] == 3080
    run_usage, cost = claude_usage(result)
    assert run_usage == usage(1600, 1400, 8, 1)
    assert cost is not None
    assert cost < result["total_cost_usd"]


def test_several_result_lines_in_one_process_add_up() -> None:
    """A background task can wake the agent after its first answer: each ``result``
    counts what came since the one before, and the run is their sum."""
    data, _ = testing.recorded_output(RECORDINGS / "real_ok.jsonl")
    last = data.splitlines()[-1]
    again = last.replace(b'"result":"OK"', b'"result":"OK again"')
    parser, _, _ = testing.parse_output(ClaudeStreamParser, data + again + b"\n")
    assert parser.usage == usage(2420, 2048, 8, 2)
    assert parser.output() == "OK again"
