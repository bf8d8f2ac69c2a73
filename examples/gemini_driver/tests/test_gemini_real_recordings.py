"""The driver on output recorded from the real Gemini CLI 0.61.0 against the emulator.

Each ``recordings/real/real_*.jsonl`` was written by ``adaptertest record`` running the
pinned ``gemini`` binary against :class:`adaptertest.emulator.Emulator`, answering from
the scenario its header names (``scenarios/``); the header's ``cli`` field names the CLI
and its version. Stdout and stderr are the CLI's own, in arrival order: the retries
Gemini CLI prints only on stderr, its error ``result`` lines, its exit codes (an HTTP
status modulo 256). The stand-in replays both streams and exits as the CLI did, so the
whole path from the process to the response runs here without the CLI.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from adaptertest import RecordingSink
from adaptertest import clikit as testing
from driver import Request, StreamKind, Usage
from gemini_driver import RETRY_KIND, GeminiConfig, GeminiDriver

REAL = testing.recordings_dir(__file__) / "real"
SCENARIOS = REAL.parent.parent / "scenarios"
TEXT1 = ("text.start", "text.content", "text.end")
TEXT2 = ("text.start", "text.content", "text.content", "text.end")
TOOL = ("tool_call.start", "tool_call.result", "tool_call.end")
CLI = {"name": "gemini", "package": "@google/gemini-cli", "version": "0.61.0"}
OK_RUN = ("run.started", "step.started", *TEXT2, "step.finished", "run.finished")


@dataclass(frozen=True)
class Real:
    """What one real recording must give through the driver."""

    recording: str
    items: tuple[str, ...]
    payloads: tuple[str, ...]
    output: str = ""
    usage: Usage | None = None
    failure: str | None = None
    failure_metadata: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.recording


def tokens(input_tokens: int, output_tokens: int) -> Usage:
    return Usage(input_tokens=input_tokens, output_tokens=output_tokens)


NO_TOKENS = tokens(0, 0)


def gave_up(recording: str, status: int, api_error: str) -> Real:
    """A server error the CLI retried once (the settings' two attempts), then gave up on."""
    return Real(
        recording,
        ("init", "result", "failure"),
        ("run.started", "run.error"),
        usage=NO_TOKENS,
        failure=f"gemini API error: HTTP {status} {api_error} "
        f"(after 2 attempts, 1 retry, last HTTP {status})",
        failure_metadata={"exit_code": status % 256, "http_status": status, "retries": 1},
        metadata={"retries": "1", "last_retry_status": str(status)},
    )


CASES = [
    Real("real_ok.jsonl", ("init", "assistant", "result"), OK_RUN, "OK", tokens(12, 3)),
    # No --model: init says "auto"; the router's side request answered with no tokens.
    Real("real_auto_router.jsonl", ("init", "assistant", "result"), OK_RUN, "OK", tokens(12, 3)),
    Real(
        "real_tool_read.jsonl",
        ("init", "tool_call", "tool_result", "assistant", "result"),
        (
            "run.started",
            "step.started",
            *TOOL,
            "step.finished",
            "step.started",
            "text.start",
            *["text.content"] * 3,
            "text.end",
            "step.finished",
            "run.finished",
        ),
        "The word is pelican.",
        tokens(100, 11),  # both model requests of the run, summed by the CLI
    ),
    Real(
        "real_resumed.jsonl",
        ("init", "assistant", "result"),
        ("run.started", "step.started", *TEXT1, "step.finished", "run.finished"),
        "pelican",
        tokens(30, 2),  # the resumed run's own request only
    ),
    Real(
        "real_retry_429.jsonl",
        ("init", "assistant", "result"),
        OK_RUN,
        "OK",
        tokens(12, 3),
        metadata={"retries": "1", "last_retry_status": "429"},
    ),
    gave_up("real_error_500.jsonl", 500, "INTERNAL An internal error has occurred."),
    gave_up("real_overloaded_529.jsonl", 529, "INTERNAL HTTP 529"),
    Real(
        "real_unauthorized_401.jsonl",
        ("init", "result", "failure"),
        ("run.started", "run.error"),
        usage=NO_TOKENS,
        failure="gemini API error: HTTP 401 UNAUTHENTICATED API key not valid.",
        failure_metadata={"exit_code": 145, "http_status": 401},
    ),
    Real(
        "real_stream_cut.jsonl",
        ("init", "assistant", "result", "failure"),
        ("run.started", "step.started", *TEXT1, "step.finished", "run.error"),
        "OK t",
        NO_TOKENS,
        # The result line says only "terminated"; stderr names the socket error.
        failure="gemini API error: the model's response stream was cut (the connection "
        "closed before the answer was complete: terminated; SocketError: other side "
        "closed, UND_ERR_SOCKET)",
        failure_metadata={
            "exit_code": 1,
            "error_type": "unknown",
            "network_error": "SocketError: other side closed, UND_ERR_SOCKET",
            "stream_cut": True,
        },
    ),
    Real(
        # The CLI retried the empty answer once, then gave up: exit 0, an error result.
        "real_empty_answer.jsonl",
        ("init", "system", "result", "failure"),
        ("run.started", "gemini.error", "run.error"),
        usage=tokens(24, 0),
        failure="The model returned an empty response with no text or thoughts.",
        failure_metadata={"exit_code": 0, "status": "error", "last_error_severity": "error"},
    ),
    Real(
        # settings model.maxSessionTurns 1: 0.61 ends with an error result and exit 53.
        "real_turn_limit.jsonl",
        ("init", "tool_call", "tool_result", "result", "failure"),
        (
            "run.started",
            "step.started",
            *TOOL,
            "step.finished",
            "run.error",
        ),
        usage=tokens(40, 5),
        failure="Reached max session turns for this session.",
        failure_metadata={
            "exit_code": 53,
            "exit_reason": "turn_limit",
            "error_type": "FatalTurnLimitedError",
        },
    ),
    Real(
        "real_untrusted_workspace.jsonl",
        ("failure",),
        ("run.started", "run.error"),
        failure="gemini exited with code 55: ",
        failure_metadata={"exit_code": 55, "exit_reason": "untrusted_workspace"},
    ),
    Real(
        "real_auth_not_selected.jsonl",
        ("failure",),
        ("run.started", "run.error"),
        failure="gemini exited with code 41: Invalid auth method selected.",
        failure_metadata={"exit_code": 41, "exit_reason": "authentication"},
    ),
]


def header(recording: str) -> dict[str, Any]:
    head: dict[str, Any] = json.loads((REAL / recording).read_bytes().split(b"\n", 1)[0])
    return head


def test_every_real_recording_has_a_case_and_names_the_cli() -> None:
    assert {case.recording for case in CASES} == {p.name for p in REAL.glob("*.jsonl")}
    for case in CASES:
        head = header(case.recording)
        assert head["cli"] == {
            "name": "gemini",
            "package": "@google/gemini-cli",
            "version": "0.61.0",
        }
        assert (SCENARIOS.parent / head["scenario"]).is_file(), head["scenario"]


@pytest.mark.anyio
@pytest.mark.parametrize("case", CASES, ids=str)
async def test_the_driver_on_a_real_recording(case: Real) -> None:
    exit_code = header(case.recording)["exit_code"]
    command = testing.replay_command(REAL, case.recording, exit_code=exit_code)
    driver = GeminiDriver(GeminiConfig(command=command, model="gemini-2.5-flash"))
    sink = RecordingSink()
    response = await driver.run(Request(prompt="Reply with exactly: OK", streaming=True), sink)
    assert testing.structural_violations(driver, response, sink) == []
    # Retries come from stderr, the rest from stdout: two pipes, so only each stream's
    # own order is fixed. The retries are checked apart.
    retried = [i for i in response.transcript if i.subtype == "api_retry"]
    items = [i.kind for i in response.transcript if i not in retried]
    assert tuple(items) == case.items
    assert tuple(p.kind for p in sink.stream if p.kind != RETRY_KIND) == case.payloads
    retries = [p.raw for p in sink.stream if p.kind == RETRY_KIND]
    assert len(retries) == len(retried) == int(case.metadata.get("retries", "0"))
    status = int(case.metadata.get("last_retry_status", "0"))
    assert all(r["status"] == status for r in retries)
    assert response.output == case.output
    assert response.usage == case.usage
    assert response.exit_code == exit_code
    assert response.metadata == case.metadata
    if case.failure is None:
        assert response.failure is None
        assert response.checkpoint is not None
        assert response.checkpoint.valid
        assert sink.stream[-1].kind == StreamKind.RUN_FINISHED
    else:
        assert response.failure is not None
        assert case.failure in response.failure.message
        assert response.checkpoint is None
        for key, value in case.failure_metadata.items():
            assert response.failure.metadata[key] == value, key


def test_real_lines_are_what_the_old_recordings_assumed_and_more() -> None:
    """The differences the real CLI showed, kept as facts about its output."""
    tool = (REAL / "real_tool_read.jsonl").read_text(encoding="utf-8")
    # Tool ids are "<name>__<call id>" (the old recordings: "<name>-<ms>-<hex>").
    assert '\\"tool_id\\":\\"read_file__' in tool
    # read_file reports an empty output in the stream although the file was read.
    assert '\\"status\\":\\"success\\",\\"output\\":\\"\\"' in tool
    auto = (REAL / "real_auto_router.jsonl").read_text(encoding="utf-8")
    assert '\\"model\\":\\"auto\\"' in auto  # init names "auto", not the routed model
