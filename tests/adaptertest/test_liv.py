"""LIV-01..03, the SES-09 live check, the live request and the redacted diagnostic."""

from __future__ import annotations

import errno
import hashlib
import json

import pytest

from adaptertest._violation import Violation
from adaptertest.liv import (
    DEFAULT_LIVE_PROMPT,
    live_diagnostic,
    live_request,
    verify_live_checkpoint,
    verify_live_output,
    verify_live_success,
    verify_session_profile_fingerprint,
)
from adaptertest.report import ClauseResult, ClauseStatus
from driver.errors import RunError
from driver.output import StructuredOutput, StructuredOutputSource
from driver.run import (
    Checkpoint,
    FailureCode,
    RawStreams,
    Response,
    RunFailure,
    SessionState,
    TerminalPayload,
)


def clauses(violations: list[Violation]) -> list[str]:
    return [v.clause for v in violations]


def checkpointed(**data: str) -> Response:
    state = SessionState(resume_id="sess-1", display_id="sess-1", data=data)
    return Response(output="OK", checkpoint=Checkpoint(state=state, valid=True))


# ------------------------------------------------------------------------------------
# LIV-01
# ------------------------------------------------------------------------------------


def test_clean_run_is_a_success() -> None:
    assert verify_live_success(Response(output="OK"), None) == []


@pytest.mark.parametrize(
    ("response", "error", "shown"),
    [
        (Response(exit_code=1), None, "exit_code=1"),
        (Response(signal="SIGKILL"), None, "signal='SIGKILL'"),
        (Response(timed_out=True), None, "timed_out=True"),
        (Response(failure=RunFailure(code=FailureCode.AGENT_ERROR)), None, "agent_error"),
        (Response(), RuntimeError("transport"), "RuntimeError"),
        (None, RunError("no response"), "no response"),
    ],
    ids=["exit-1", "signal", "timed-out", "agent-error", "run-error", "no-response"],
)
def test_unsuccessful_run_is_liv01(
    response: Response | None, error: BaseException | None, shown: str
) -> None:
    [violation] = verify_live_success(response, error)
    assert violation.clause == "LIV-01"
    assert shown in violation.message


def test_liv01_marks_the_failure_and_exception_messages_as_provider_text() -> None:
    response = Response(signal="SIGTERM", failure=RunFailure(message="budget CANARY"))
    [violation] = verify_live_success(response, RuntimeError("boom CANARY"))
    withheld = violation.text(show=False)
    assert "CANARY" not in withheld
    assert withheld.startswith("live run did not succeed: run() raised builtins.RuntimeError")
    assert "signal='SIGTERM'; failure '': <withheld: 13 chars, sha256:" in withheld
    shown = violation.text(show=True)
    assert shown == violation.message
    assert shown.endswith(": boom CANARY; signal='SIGTERM'; failure '': 'budget CANARY'")


# ------------------------------------------------------------------------------------
# LIV-02
# ------------------------------------------------------------------------------------


@pytest.mark.parametrize("output", ["", "   \n\t", "ok", "OK.", "Sure: OK", "O K"])
def test_default_prompt_needs_ok(output: str) -> None:
    response = Response(output=output)
    assert clauses(verify_live_output(response, DEFAULT_LIVE_PROMPT, None)) == ["LIV-02"]


@pytest.mark.parametrize("output", ["OK", "  OK\n", "\u3000OK\t"])
def test_default_prompt_answered_passes(output: str) -> None:
    assert verify_live_output(Response(output=output), DEFAULT_LIVE_PROMPT, None) == []


@pytest.mark.parametrize("output", ["", "anything at all", "OK"])
def test_custom_prompt_without_expectation_has_no_text_check(output: str) -> None:
    assert verify_live_output(Response(output=output), "Say hello", None) == []


def test_custom_prompt_is_compared_byte_for_byte_with_the_default() -> None:
    # A prompt that only differs in whitespace is a custom prompt: no OK check.
    assert verify_live_output(Response(output="hi"), DEFAULT_LIVE_PROMPT + " ", None) == []


def test_expectation_mismatch_is_liv02() -> None:
    [violation] = verify_live_output(Response(output="goodbye"), "Say hello", "hello")
    assert violation.clause == "LIV-02"
    assert "'goodbye'" in violation.message
    assert "'hello'" in violation.message


@pytest.mark.parametrize(
    ("output", "expected"),
    [("hello", "hello"), (" hello\n", "\thello "), ("", ""), ("  \n", "")],
)
def test_expectation_matches_after_trimming(output: str, expected: str) -> None:
    assert verify_live_output(Response(output=output), "Say hello", expected) == []


def test_expectation_overrides_the_default_answer() -> None:
    assert verify_live_output(Response(output="PONG"), DEFAULT_LIVE_PROMPT, "PONG") == []
    assert clauses(verify_live_output(Response(output="OK"), DEFAULT_LIVE_PROMPT, "PONG")) == [
        "LIV-02"
    ]


def test_empty_expectation_rejects_text() -> None:
    assert clauses(verify_live_output(Response(output="x"), "p", "")) == ["LIV-02"]


# ------------------------------------------------------------------------------------
# LIV-03
# ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "shown"),
    [
        (Response(), "no checkpoint"),
        (None, "no checkpoint"),
        (Response(checkpoint=Checkpoint(state=SessionState(resume_id="r"))), "valid=False"),
        (Response(checkpoint=Checkpoint(valid=True)), "without state"),
        (Response(checkpoint=Checkpoint(state=SessionState(), valid=True)), "empty resume_id"),
    ],
)
def test_resumable_driver_without_healthy_checkpoint_is_liv03(
    response: Response | None, shown: str
) -> None:
    [violation] = verify_live_checkpoint(True, response)
    assert violation.clause == "LIV-03"
    assert shown in violation.message


def test_resumable_driver_with_healthy_checkpoint_passes() -> None:
    assert verify_live_checkpoint(True, checkpointed()) == []


def test_non_resumable_driver_needs_no_checkpoint() -> None:
    assert verify_live_checkpoint(False, Response()) == []


# ------------------------------------------------------------------------------------
# SES-09 and the live request
# ------------------------------------------------------------------------------------


def test_live_request_shape() -> None:
    config = object()
    request = live_request(config, "Custom prompt  ", None)
    assert request.run_id == "adaptertest-live"
    assert request.prompt == "Custom prompt  "
    assert request.config is config
    assert request.streaming is True
    assert request.metadata == {"adaptertest": "v1"}
    assert request.profile_payload.fingerprint == "adaptertest-profile-concrete"
    assert request.profile_payload.session_compatibility_fingerprint == (
        "adaptertest-profile-session"
    )
    assert request.output_schema is None
    assert request.structured_output_source == ""
    assert request.workspace.id == ""
    with_ws = live_request(None, DEFAULT_LIVE_PROMPT, "workspace-dir")
    assert (with_ws.workspace.id, with_ws.workspace.cwd) == ("adaptertest-ws", "workspace-dir")


def test_live_requests_do_not_share_metadata() -> None:
    first = live_request(None, "p", None)
    first.metadata["x"] = "y"
    assert live_request(None, "p", None).metadata == {"adaptertest": "v1"}


def test_session_fingerprint_stored_passes() -> None:
    request = live_request(None, DEFAULT_LIVE_PROMPT, None)
    response = checkpointed(profile_fingerprint="adaptertest-profile-session")
    assert verify_session_profile_fingerprint(request, response) == []


@pytest.mark.parametrize(
    ("data", "shown"),
    [
        ({}, "has no data"),
        ({"profile_fingerprint": "adaptertest-profile-concrete"}, "exact profile fingerprint"),
        ({"profile_fingerprint": "other"}, "'other'"),
    ],
)
def test_wrong_session_fingerprint_is_ses09(data: dict[str, str], shown: str) -> None:
    request = live_request(None, DEFAULT_LIVE_PROMPT, None)
    [violation] = verify_session_profile_fingerprint(request, checkpointed(**data))
    assert violation.clause == "SES-09"
    assert shown in violation.message


def test_ses09_needs_a_valid_checkpoint_with_state() -> None:
    request = live_request(None, DEFAULT_LIVE_PROMPT, None)
    invalid = Response(checkpoint=Checkpoint(state=SessionState(resume_id="r"), valid=False))
    assert verify_session_profile_fingerprint(request, Response()) == []
    assert verify_session_profile_fingerprint(request, invalid) == []


# ------------------------------------------------------------------------------------
# live_diagnostic
# ------------------------------------------------------------------------------------

CANARY = "sk-canary-7f3e9b21"


def leaky_response() -> Response:
    return Response(
        output=f"answer {CANARY}",
        raw_streams=RawStreams(
            stdout=f'{{"token":"{CANARY}"}}\n'.encode(),
            stderr=f"warning {CANARY}\n".encode() + b"\xff",
            terminal=TerminalPayload(event=f"result-{CANARY}", raw_json=f'{{"t":"{CANARY}"}}'),
        ),
        signal=f"SIG{CANARY}",
        exit_code=3,
        failure=RunFailure(code=FailureCode.AGENT_ERROR, message=f"failed: {CANARY}"),
        checkpoint=Checkpoint(state=SessionState(resume_id=CANARY), valid=True),
        structured_output=StructuredOutput(
            source=StructuredOutputSource.NATIVE,
            raw_json=f'{{"ok":"{CANARY}"}}',
            value={"ok": CANARY},
            validation_errors=[CANARY],
        ),
        summary=CANARY,
    )


@pytest.mark.parametrize("structured", [False, True])
def test_diagnostic_never_contains_provider_text(structured: bool) -> None:
    error = RunError(f"run failed: {CANARY}", response=leaky_response())
    diag = live_diagnostic(leaky_response(), error, structured=structured)
    text = json.dumps(diag)
    assert CANARY not in text
    assert CANARY.upper() not in text.upper()


def test_diagnostic_describes_presence_and_integrity() -> None:
    diag = live_diagnostic(leaky_response(), RunError("x"), structured=True)
    assert diag["probe"] == "live_structured_output"
    assert diag["exit"] == 3
    assert diag["failure"] is True
    assert diag["raw_present"] is True
    assert diag["terminal_present"] is True
    assert diag["terminal_json_valid"] is True
    assert diag["checkpoint_valid"] is True
    assert diag["resume_id_present"] is True
    assert diag["structured_present"] is True
    assert diag["structured_native"] is True
    assert diag["probe_value_matches"] is False
    assert diag["value_present"] is True
    assert diag["validation_errors"] == 1
    assert diag["error_type"] == "driver.errors.RunError"
    stderr = diag["stderr"]
    assert isinstance(stderr, dict)
    assert stderr["bytes"] == len(f"warning {CANARY}\n") + 1
    assert isinstance(stderr["sha256"], str)
    assert len(stderr["sha256"]) == 64


def test_diagnostic_without_response() -> None:
    diag = live_diagnostic(None, TimeoutError(), structured=False)
    empty = hashlib.sha256(b"").hexdigest()
    assert diag == {
        "probe": "live_run",
        "response_present": False,
        "error_type": "TimeoutError",
        "error_at": "",  # never raised, so no traceback to point into
        "error_message": {"bytes": 0, "sha256": empty},
    }
    json.dumps(diag)


def test_diagnostic_with_details_shows_the_text() -> None:
    diag = live_diagnostic(leaky_response(), RunError(f"x {CANARY}"), structured=True, show=True)
    assert diag["failure_message"] == {
        "bytes": len(f"failed: {CANARY}"),
        "text": f"failed: {CANARY}",
    }
    assert diag["error_message"] == {"bytes": len(f"x {CANARY}"), "text": f"x {CANARY}"}
    long = live_diagnostic(Response(output="y" * 5000), None, structured=False, show=True)
    output = long["output"]
    assert isinstance(output, dict)
    assert output["bytes"] == 5000
    assert output["text"] == "y" * 2000 + "..."


def test_diagnostic_of_a_bare_response_is_json_ready() -> None:
    diag = live_diagnostic(Response(), None, structured=True)
    assert diag["error_type"] == ""
    assert diag["raw_present"] is False
    assert diag["terminal_present"] is False
    assert diag["structured_present"] is False
    assert "probe_value_matches" not in diag
    json.dumps(diag)


def _raised(error: BaseException, cause: BaseException) -> BaseException:
    try:
        raise error from cause
    except BaseException as raised:  # noqa: BLE001 - the exception itself is the value
        return raised


@pytest.mark.parametrize(
    ("cause", "shown"),
    [
        (FileNotFoundError(errno.ENOENT, "No such file or directory", "acme"), True),
        (PermissionError(errno.EACCES, "Permission denied", "/opt/acme"), True),
        (ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused"), False),
    ],
    ids=["not-found", "not-executable", "network"],
)
def test_a_program_that_cannot_start_is_named_without_details(cause: OSError, shown: bool) -> None:
    """The OS refusing to execute the CLI (a RunError raised from it, as driver.clikit
    raises it) is no provider text: LIV-01 says so plainly."""
    message = f"cannot start {cause.filename}: {cause.strerror}"
    failure = RunFailure(code=FailureCode.AGENT_ERROR, message=message)
    response = Response(failure=failure)
    error = _raised(RunError(message, response=response), cause)
    (violation,) = verify_live_success(response, error)
    text = violation.text(show=False)
    if shown:
        assert f"cannot start {cause.filename}: {cause.strerror}" in text
        assert "<withheld" not in text
        assert "failure 'agent_error': the same" in text
    else:
        assert "<withheld" in text
        assert "Connection refused" not in text


def test_a_failure_text_shows_the_diagnostic_in_one_short_line() -> None:
    """The ~1.5 KB diagnostic stays whole in the result's notes (the JSON report); the
    failure text shows the fields that explain a failed run, once for identical runs."""
    failure = RunFailure(code=FailureCode.AGENT_ERROR, message="quota exhausted")
    raw = RawStreams(stdout=b'{"type":"result"}\n' * 40, stderr=b"boom\n")
    response = Response(exit_code=3, failure=failure, raw_streams=raw)
    whole = json.dumps(live_diagnostic(response, None, structured=False), sort_keys=True)
    notes = (f"live diagnostic (run 1): {whole}", f"live diagnostic (run 2): {whole}", "other")
    result = ClauseResult("CON-01", ClauseStatus.FAILED, ("CON-01: run 1: bad",), notes=notes)
    lines = [line for line in result.describe().splitlines() if "live diagnostic" in line]
    assert len(lines) == 1
    (line,) = lines
    assert line.startswith("  note: live diagnostic (run 1, run 2): exit 3, a failure, ")
    assert "stdout 720 bytes, stderr 5 bytes" in line
    assert "no terminal line, no checkpoint" in line
    assert "{" not in line
    assert len(line) < 200 < len(whole)
    assert "  note: other" in result.describe()
    assert result.notes == notes  # the JSON report keeps every field


def test_an_os_error_the_driver_raises_itself_stays_withheld() -> None:
    error = _raised(FileNotFoundError(errno.ENOENT, "No such file or directory", "x"), KeyError())
    (violation,) = verify_live_success(None, error)
    assert "<withheld" in violation.text(show=False)
    assert "No such file" not in violation.text(show=False)
