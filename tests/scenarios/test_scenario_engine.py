"""The scenario engine: skips without a binding, ``cannot`` skips, tool roles, the
scenario files, and the verify helpers on hand-made observations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from adaptertest import ClauseStatus, ModelBinding, Options, ToolShape, check_driver
from adaptertest._scenarios import SCENARIO_DIR, CancelledRun, Observed, load_scenario
from adaptertest.clauses import CLAUSES, SCENARIO_PROBES, Mode
from adaptertest.dln import verify_cancelled, verify_timed_out
from adaptertest.emulator import Scenario, ToolCall, Turn
from adaptertest.emulator._roles import RoleError, offered_tools, resolve_roles
from adaptertest.evt import verify_stream_sequence
from adaptertest.flt import PERSISTENT_FAULTS, is_protocol_dump, verify_persistent_fault
from adaptertest.inp import LARGE_PROMPT_BYTES, large_prompt, verify_nul_refused
from adaptertest.liv import LiveRun, late_violations
from adaptertest.out import LARGE_ANSWER_BYTES, large_answer
from adaptertest.res import child_run
from adaptertest.run import verify_run_events, verify_transcript_mirror
from adaptertest.sink import RecordingSink
from adaptertest.tol import pairing
from driver import (
    Checkpoint,
    FailureCode,
    Request,
    Response,
    RunFailure,
    SessionState,
    TranscriptItem,
    TranscriptKind,
)
from referencedriver import ReferenceDriver
from referencedriver._conformance import driver_for_endpoint as _reference_for

SCENARIO_CLAUSES = [c.id for c in CLAUSES if c.mode is Mode.SCENARIO]


def _never_called(endpoint: object) -> object:
    raise AssertionError("the binding's driver factory must not be called")


def test_every_scenario_clause_runs_only_with_a_binding() -> None:
    assert len(SCENARIO_CLAUSES) == 16
    for clause in CLAUSES:
        on_scenario = bool(set(clause.probes) & set(SCENARIO_PROBES))
        assert on_scenario == (clause.mode is Mode.SCENARIO), clause.id


def test_without_a_binding_every_scenario_clause_is_skipped_naming_the_option() -> None:
    report = check_driver(ReferenceDriver, Options(), only=SCENARIO_CLAUSES)
    assert {r.clause for r in report} == set(SCENARIO_CLAUSES)
    for result in report:
        assert result.status is ClauseStatus.SKIPPED, result.describe()
        assert result.messages[0].startswith(f"{result.clause} skipped: ")
        assert "Options(model_binding=ModelBinding(" in result.messages[0]


def test_a_clause_the_binding_cannot_do_is_skipped_with_its_reason() -> None:
    reason = "the CLI reads its prompt from argv only"
    cannot = {c: reason for c in SCENARIO_CLAUSES if c != "PRC-01"}
    binding = ModelBinding(driver=_never_called, protocol="anthropic", cannot=cannot)
    report = check_driver(ReferenceDriver, Options(model_binding=binding), only=SCENARIO_CLAUSES)
    for result in report:
        assert result.status is ClauseStatus.SKIPPED, result.describe()
        if result.clause != "PRC-01":
            assert result.messages[0] == (
                f"{result.clause} skipped: the binding declares the agent cannot do it: {reason}"
            )
    # No scenario ran at all, so nothing was left running by one: skipped, never passed.
    assert "ran no scenario" in report.results[-1].messages[0]


def test_the_process_check_can_be_declared_impossible_too() -> None:
    reason = "the agent's sandbox hides its processes"
    binding = ModelBinding(driver=_reference_for, protocol="anthropic", cannot={"PRC-01": reason})
    report = check_driver(
        ReferenceDriver, Options(model_binding=binding), only=["OUT-01", "PRC-01"]
    )
    by_id = {r.clause: r for r in report}
    assert by_id["OUT-01"].status is ClauseStatus.PASSED, by_id["OUT-01"].describe()
    assert by_id["PRC-01"].status is ClauseStatus.SKIPPED
    assert by_id["PRC-01"].messages[0] == (
        f"PRC-01 skipped: the binding declares the agent cannot do it: {reason}"
    )


def test_a_binding_whose_factory_raises_fails_the_clause_naming_the_factory() -> None:
    binding = ModelBinding(driver=_never_called, protocol="anthropic")
    report = check_driver(ReferenceDriver, Options(model_binding=binding), only=["OUT-01"])
    (result,) = report.results
    assert result.status is ClauseStatus.FAILED
    assert result.messages[0].startswith("OUT-01: ModelBinding.driver(endpoint) for the big_answer")
    assert "raised builtins.AssertionError" in result.messages[0]


def test_every_scenario_file_is_an_emulator_scenario() -> None:
    files = sorted(SCENARIO_DIR.glob("*.json"))
    assert len(files) >= 15
    for path in files:
        Scenario.parse(json.loads(path.read_text(encoding="utf-8")), source=str(path))


def test_placeholders_are_filled() -> None:
    scenario = load_scenario("tool_runs", {"token": "adtXYZ"})
    (call,) = scenario.turns[0].tool_calls
    assert call.name == "$shell"
    assert "adtXYZ" in str(call.arguments["command"])
    assert scenario.turns[1].text == "The tool wrote adtXYZ."


# -- tool roles -------------------------------------------------------------------------------


def _shell_turn(command: str = "echo hi") -> Turn:
    return Turn(tool_calls=[ToolCall(name="$shell", arguments={"command": command}, id="t1")])


@pytest.mark.parametrize(
    ("body", "name", "arguments"),
    [
        (
            {"tools": [{"name": "Read", "input_schema": {}}, {"name": "Bash", "input_schema": {}}]},
            "Bash",
            {"command": "echo hi"},
        ),
        (
            {"tools": [{"type": "function", "name": "exec_command", "parameters": {}}]},
            "exec_command",
            {"cmd": "echo hi"},
        ),
        (
            {"tools": [{"type": "function", "name": "shell", "parameters": {}}]},
            "shell",
            {"command": ["bash", "-lc", "echo hi"]},
        ),
        (
            {
                "tools": [
                    {"functionDeclarations": [{"name": "run_shell_command", "parameters": {}}]}
                ]
            },
            "run_shell_command",
            {"command": "echo hi"},
        ),
        (
            {
                "tools": [
                    {
                        "name": "run_command",
                        "input_schema": {"properties": {"command": {"type": "string"}}},
                    }
                ]
            },
            "run_command",
            {"command": "echo hi"},
        ),
    ],
)
def test_the_shell_role_becomes_the_agents_own_tool(
    body: dict[str, Any], name: str, arguments: dict[str, Any]
) -> None:
    (call,) = resolve_roles(_shell_turn(), body).tool_calls
    assert (call.name, call.arguments, call.id) == (name, arguments, "t1")


def test_the_binding_names_the_shell_tool() -> None:
    body = {"tools": [{"name": "Bash"}, {"name": "terminal_run"}]}
    shape = ToolShape("terminal_run", "script", extra={"timeout": 10})
    (call,) = resolve_roles(_shell_turn(), body, {"shell": shape}).tool_calls
    assert call.name == "terminal_run"
    assert call.arguments == {"timeout": 10, "script": "echo hi"}


def test_no_shell_tool_is_a_role_error_naming_the_offered_tools() -> None:
    with pytest.raises(RoleError, match=r"tools Read, Write.*ModelBinding\(tools="):
        resolve_roles(_shell_turn(), {"tools": [{"name": "Write"}, {"name": "Read"}]})
    assert offered_tools({"tools": "nonsense"}) == {}


def test_a_named_tool_passes_unchanged() -> None:
    turn = Turn(tool_calls=[ToolCall(name="Read", arguments={"file_path": "x"})])
    assert resolve_roles(turn, {}) is turn


# -- verify helpers ---------------------------------------------------------------------------


def _observed(response: Response | None = None, error: BaseException | None = None) -> Observed:
    return Observed(
        result=LiveRun(value=response, error=error),
        requests=[],
        workspace=Path("."),
        problems=[],
        values={"token": "adt1"},
    )


def test_the_generated_texts_are_as_large_as_promised() -> None:
    assert len(large_prompt("adt1").encode()) >= LARGE_PROMPT_BYTES
    answer = large_answer("adt1")
    assert len(answer.encode()) >= LARGE_ANSWER_BYTES
    assert answer == answer.strip()


def test_pairing_finds_unpaired_and_repeated_ids() -> None:
    call = TranscriptItem(kind=TranscriptKind.TOOL_CALL, tool_use_id="a", tool_name="x")
    result = TranscriptItem(kind=TranscriptKind.TOOL_RESULT, tool_use_id="b")
    assert pairing("TOL-01", [call], [result]) == [
        "tool_call ids ['a'] and tool_result ids ['b'] do not pair"
    ]
    assert "repeat" in pairing("TOL-03", [call, call], [result, result])[0]
    assert pairing("TOL-01", [call], [result.model_copy(update={"tool_use_id": "a"})]) == []


@pytest.mark.parametrize(
    ("message", "dump"),
    [
        ("the model API answered HTTP 500: Internal server error", False),
        ('{"type":"error","error":{"type":"api_error"}}', True),
        ('API Error: 500 {"type":"error","error":{}}', True),
        ("event: error\ndata: {}", True),
    ],
)
def test_a_protocol_dump_is_recognised(message: str, dump: bool) -> None:
    assert is_protocol_dump(message) is dump


def test_a_persistent_fault_needs_a_named_clean_failure() -> None:
    named = r"\b500\b"
    clean = Response(
        exit_code=1,
        failure=RunFailure(code=FailureCode.AGENT_ERROR, message="HTTP 500 from the model"),
    )
    assert verify_persistent_fault(_observed(clean), label="HTTP 500", named=named) == []
    vague = clean.model_copy(
        update={
            "failure": RunFailure(code=FailureCode.CANCELLED, message="something went wrong"),
            "checkpoint": Checkpoint(valid=True),
        }
    )
    messages = [v.message for v in verify_persistent_fault(_observed(vague), "HTTP 500", named)]
    assert any("failure code is 'cancelled'" in m for m in messages)
    assert any("does not name HTTP 500" in m for m in messages)
    assert not any("checkpoint" in m for m in messages)  # the engine's check of every run
    succeeded = verify_persistent_fault(_observed(Response(output="fine")), "HTTP 500", named)
    assert [v.message for v in succeeded] == ["(HTTP 500) the run reports no failure"]


@pytest.mark.parametrize(
    ("message", "named"),
    [
        ("API Error: 400 prompt is too long: 1200000 tokens > 200000 maximum", True),
        (
            "Codex ran out of room in the model's context window. Start a new thread or "
            "clear earlier history before retrying.",
            True,
        ),
        ("the request exceeds the model's maximum context length", True),
        ("something went wrong", False),
    ],
)
def test_a_prompt_too_long_is_named_by_its_status_or_its_meaning(message: str, named: bool) -> None:
    pattern = next(p for name, _, p in PERSISTENT_FAULTS if name == "fault_prompt_too_long")
    failed = Response(
        exit_code=1, failure=RunFailure(code=FailureCode.AGENT_ERROR, message=message)
    )
    found = verify_persistent_fault(_observed(failed), "HTTP 400", pattern)
    assert (found == []) is named, found


def test_a_nul_prompt_must_be_refused_by_name() -> None:
    assert verify_nul_refused(_observed(error=ValueError("prompt has a NUL byte"))) == []
    vague = verify_nul_refused(_observed(error=ValueError("bad prompt")))
    assert "does not name the NUL byte" in vague[0].message
    accepted = verify_nul_refused(_observed(Response(output="OK")))
    assert "accepted a prompt with a NUL byte" in accepted[0].message


def test_a_cancellation_must_be_prompt_and_propagate() -> None:
    cancelled = LiveRun(error=KeyboardInterrupt())  # stands for the backend's cancellation
    assert verify_cancelled(CancelledRun(cancelled, 0.2, True), grace=10) == []
    swallowed = CancelledRun(LiveRun(value=Response()), 0.2, False)
    assert "run() returned when cancelled" in verify_cancelled(swallowed, grace=10)[0].message
    slow = verify_cancelled(CancelledRun(cancelled, 12.5, True), grace=10)
    assert "12.5 s after the cancellation" in slow[0].message
    early = verify_cancelled(CancelledRun(LiveRun(value=Response()), None, False), grace=10)
    assert "nothing to cancel" in early[0].message


def test_a_model_that_never_answers_needs_a_timed_out_response_in_time() -> None:
    timed_out = LiveRun(value=Response(timed_out=True, exit_code=1), elapsed=8.1)
    assert verify_timed_out(timed_out, requests=1, deadline=8, grace=10) == []
    hidden = LiveRun(value=Response(exit_code=1), elapsed=8.1)
    assert "timed_out=False" in verify_timed_out(hidden, 1, 8, 10)[0].message
    late = LiveRun(value=Response(timed_out=True), elapsed=30.0)
    assert "more than 18 s" in verify_timed_out(late, 1, 8, 10)[0].message
    never_asked = verify_timed_out(timed_out, requests=0, deadline=8, grace=10)
    assert "never reached the model" in never_asked[0].message


def test_a_tool_shape_builds_the_arguments_and_refuses_blanks() -> None:
    assert ToolShape("shell", argv=True).arguments("ls") == {"command": ["bash", "-lc", "ls"]}
    assert ToolShape("exec_command", "cmd").arguments("ls") == {"cmd": "ls"}
    with pytest.raises(ValueError, match=r"ToolShape\.name must be a non-blank str"):
        ToolShape(" ")
    with pytest.raises(TypeError, match=r"ToolShape\.argv must be a bool"):
        ToolShape("Bash", argv="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("message", "named"),
    [
        ("gemini API error: terminated", False),
        ("something went wrong", False),
        ("the model stream was cut before the answer ended", True),
        ("API error: SocketError: other side closed", True),
        ("stream disconnected before completion: error decoding response body", True),
        ("Connection error.", True),
    ],
)
def test_a_cut_stream_must_be_named_as_one(message: str, named: bool) -> None:
    cut = next(entry for entry in PERSISTENT_FAULTS if entry[0] == "fault_stream_cut")
    response = Response(
        exit_code=1, failure=RunFailure(code=FailureCode.AGENT_ERROR, message=message)
    )
    verdict = verify_persistent_fault(_observed(response), label=cut[1], named=cut[2])
    assert (verdict == []) is named, verdict


def test_the_report_names_the_bindings_protocol_and_what_it_cannot_do() -> None:
    binding = ModelBinding(
        driver=_never_called, protocol="gemini", cannot={"TOL-02": "x", "INP-01": "y"}
    )
    report = check_driver(ReferenceDriver, Options(model_binding=binding), only=["DRV-01"])
    assert report.run is not None
    assert report.run.options["model_binding"] == "gemini; cannot: INP-01, TOL-02"


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_run_in_a_new_interpreter_comes_back_judgeable_as_it_was(backend: str) -> None:
    """RES-02's second run crosses as JSON; what comes back must judge as the run would
    have in this process: a legal stream and a transcript mirror that still holds."""
    sink = RecordingSink()
    request = Request(run_id="child", prompt="Reply with exactly: OK", streaming=True)

    async def go() -> Response:
        return await ReferenceDriver().run(request, sink)

    response = anyio.run(go, backend=backend)
    reply = json.loads(
        json.dumps(
            {
                "events": [e.model_dump(mode="json") for e in sink.events],
                "stream": [p.model_dump(mode="json") for p in sink.stream],
                "late": 2,
                "timed_out": False,
            }
        )
    )
    back = Response.model_validate(json.loads(json.dumps(response.model_dump(mode="json"))))
    ran = child_run(reply, back)
    assert len(ran.stream) == len(sink.stream) > 0
    assert verify_stream_sequence(ran.stream) == []
    assert verify_run_events(ran.events) == []
    assert verify_transcript_mirror(ran.events_now, back.transcript) == []
    assert [v.clause for v in late_violations(ran)] == ["EVT-02"]
    assert not ran.timed_out
    assert not ran.wrong_type


class _CheckpointOnFailure(ReferenceDriver):
    """The reference's network mode, offering a valid checkpoint on a failed run."""

    async def run(self, request: Request, sink: Any) -> Response:
        response = await super().run(request, sink)
        if response.failure is None:
            return response
        kept = Checkpoint(valid=True, state=SessionState(resume_id="kept"))
        return response.model_copy(update={"checkpoint": kept})


def test_a_failed_scenario_run_is_judged_by_the_rules_of_failed_runs() -> None:
    """FLT-02's runs fail by design; a checkpoint they offer breaks RSP-01 and FLR-01,
    reported under FLT-02 once per run, each naming the rule."""

    def build(endpoint: Any) -> ReferenceDriver:
        config = _reference_for(endpoint).config.model_copy(update={"model_retries": 0})
        return _CheckpointOnFailure(config)

    binding = ModelBinding(driver=build, protocol="anthropic")
    report = check_driver(ReferenceDriver, Options(model_binding=binding), only=["FLT-02"])
    result = report.result("FLT-02")
    assert result.status is ClauseStatus.FAILED
    checkpoint = [m for m in result.messages if "checkpoint" in m]
    assert len(checkpoint) == 2 * len(PERSISTENT_FAULTS), checkpoint
    for rule in ("RSP-01", "FLR-01"):
        named = [m for m in checkpoint if f"broke {rule} (" in m]
        assert len(named) == len(PERSISTENT_FAULTS), checkpoint
    assert all(m.startswith("FLT-02: run() in the fault_") for m in checkpoint)
