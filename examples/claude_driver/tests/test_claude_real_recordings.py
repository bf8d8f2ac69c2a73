"""The driver on output recorded from the real Claude Code 2.1.328 against the emulator.

Each recording's whole result is its snapshot (``test_claude_driver.py::test_recording``);
this file states the figures a reviewer checks against the scenario: output, usage and
cost, the failure's message and metadata.

Each ``real_*.jsonl`` recording was made with ``adaptertest record --scenario`` from the
scenario of the same name in ``scenarios/`` (``docs/real-clis.md`` has the command), so
the lines are the CLI's own: new fields, keys in its order, its retries and its errors.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest

from adaptertest import clikit as testing
from adaptertest import recording
from claude_driver import ClaudeStreamParser, claude_usage
from driver import Usage
from driver.clikit import ProcessOutcome

RECORDINGS = testing.recordings_dir(__file__)


def usage(total: int, cached: int, output: int, cost_milli: int) -> Usage:
    return Usage(
        input_tokens=total,
        cached_input_tokens=cached,
        output_tokens=output,
        estimated_cost_milli=cost_milli,
    )


@dataclass(frozen=True)
class Expected:
    """What the parser must make of a real recording (its snapshot has the rest)."""

    output: str
    usage: Usage
    failure: str = ""
    metadata: dict[str, object] = field(default_factory=dict)


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


EXPECTED = {
    "real_ok.jsonl": Expected("OK", usage(1210, 1024, 4, 1)),
    # thinking and text of one message; the system/thinking_tokens lines are skipped.
    "real_thinking.jsonl": Expected("OK", usage(1100, 0, 40, 4)),
    # --json-schema: the answer is a StructuredOutput tool call the CLI acknowledges.
    "real_structured.jsonl": Expected('{"ok":true}', usage(1300, 0, 9, 4)),
    "real_tool_read.jsonl": Expected("The note says: ship it on Friday.", usage(2880, 0, 42, 9)),
    # The second run of real_tool_read's session: modelUsage and total_cost_usd count
    # both runs; the usage is this run's alone (model_usage_since_last_result).
    "real_resumed.jsonl": Expected("Friday, as the note says.", usage(1600, 1400, 8, 1)),
    "real_retry_429.jsonl": Expected("OK", usage(900, 0, 2, 3)),
    "real_max_turns.jsonl": Expected(
        "Reading the note.",
        usage(1400, 0, 30, 5),
        "Reached maximum number of turns (1)",
        {"subtype": "error_max_turns", "terminal_reason": "max_turns"},
    ),
    # --max-budget-usd 0.5 against a 400k-token answer: stopped before the tool ran.
    "real_budget_stop.jsonl": Expected(
        "Reading the note.",
        usage(400000, 0, 30, 1200),
        "Reached maximum budget ($0.5)",
        {"subtype": "error_max_budget_usd", "terminal_reason": "budget_exhausted"},
    ),
    "real_error_500.jsonl": Expected(
        "",
        usage(0, 0, 0, 0),
        "API Error: 500 Internal server error",
        gave_up(500, "server_error", "server_error", api_error_type="api_error"),
    ),
    "real_overloaded_529.jsonl": Expected(
        "",
        usage(0, 0, 0, 0),
        "2 API retries of 2, last: HTTP 529 overloaded",
        gave_up(529, "overloaded", "server_error", api_error_type="overloaded_error"),
    ),
    "real_unauthorized_401.jsonl": Expected(
        "",
        usage(0, 0, 0, 0),
        "Invalid API key",
        gave_up(
            401,
            "authentication_failed",
            "authentication_failed",
            api_error_type="authentication_error",
        ),
    ),
    # The two-way mode (recorded with scripts/scripted_host.py): the control lines are not
    # output, and without the mode's channel they are skipped. The host allowed, denied
    # (the turn went on), denied with interrupt (the CLI stopped the turn), answered a
    # question, and approved leaving plan mode.
    "real_permission_allow.jsonl": Expected("Done: made.txt is written.", usage(3060, 0, 49, 10)),
    "real_permission_deny.jsonl": Expected(
        "I will leave made.txt alone then.", usage(3060, 0, 49, 10)
    ),
    "real_permission_abort.jsonl": Expected(
        "Writing the file.",
        usage(1500, 0, 40, 5),
        "result_type=user",
        {"subtype": "error_during_execution", "terminal_reason": "aborted_tools"},
    ),
    "real_permission_question.jsonl": Expected("Blue it is.", usage(3080, 0, 55, 10)),
    "real_permission_plan.jsonl": Expected(
        "Plan approved; writing it next.", usage(3040, 0, 38, 10)
    ),
    # Cut streams, then the CLI's own non-streaming retry cut too: no HTTP status.
    "real_stream_cut.jsonl": Expected(
        "",
        usage(0, 0, 0, 0),
        "Connection to the API was lost (ECONNRESET). This is usually temporary — try again. "
        "(2 API retries of 2, last: no HTTP status unknown)",
        gave_up(None, "unknown", "connection_failed"),
    ),
}


def test_every_real_recording_is_expected() -> None:
    real = [n for n in testing.recording_names(RECORDINGS) if n.startswith("real_")]
    assert sorted(EXPECTED) == real


@pytest.mark.parametrize("name", EXPECTED)
def test_parser_on_a_real_recording(name: str) -> None:
    expected = EXPECTED[name]
    kept = recording.read(RECORDINGS / name)
    parser, _, _ = testing.parse_output(ClaudeStreamParser, kept.stdout)
    assert parser.output() == expected.output
    assert parser.usage == expected.usage
    code = kept.exit_code if kept.exit_code is not None else -1
    failure = parser.failure(ProcessOutcome(code, "", False, kept.stdout, kept.stderr), 60)
    if not expected.failure:
        assert failure is None
        assert parser.succeeded
        return
    assert failure is not None
    assert expected.failure in failure.message
    assert {k: failure.metadata.get(k) for k in expected.metadata} == expected.metadata


@pytest.mark.parametrize("name", EXPECTED)
def test_each_real_recording_names_the_cli_and_its_version(name: str) -> None:
    assert recording.read(RECORDINGS / name).cli == {
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
