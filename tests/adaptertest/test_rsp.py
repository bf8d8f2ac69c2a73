"""RSP-01..05 through ``verify_response``, ``verify_outcome`` and
``verify_checkpoint_codec`` (reference §5.4 rows and the failed-but-legal controls)."""

from __future__ import annotations

import json

import pytest

from adaptertest._violation import Violation
from adaptertest.rsp import (
    is_valid_json,
    trim_space,
    verify_checkpoint_codec,
    verify_outcome,
    verify_response,
)
from driver.decision import DecisionResult, HumanDecisionFailure, HumanDecisionKind
from driver.errors import RunError
from driver.events import TranscriptItem, TranscriptKind
from driver.run import (
    Checkpoint,
    FailureCode,
    RawStreams,
    Response,
    RunFailure,
    SessionState,
    TerminalPayload,
)
from driver.session import SessionParams


def clauses(violations: list[Violation]) -> list[str]:
    return [v.clause for v in violations]


def healthy_state() -> SessionState:
    return SessionState(resume_id="sess-1", display_id="sess-1", data={"cwd": "workspace-dir"})


def healthy() -> Response:
    return Response(
        output="OK",
        raw_streams=RawStreams(
            stdout=b'{"type":"result","result":"OK"}\n',
            terminal=TerminalPayload(event="result", raw_json='{"type":"result","result":"OK"}'),
        ),
        transcript=[TranscriptItem(kind=TranscriptKind.ASSISTANT, text="OK")],
        checkpoint=Checkpoint(state=healthy_state(), valid=True),
    )


HUMAN = HumanDecisionFailure(
    kind=HumanDecisionKind.PERMISSION, decision=DecisionResult.REJECTED, attempts=1
)


# ------------------------------------------------------------------------------------
# verify_response / verify_outcome
# ------------------------------------------------------------------------------------


def test_none_response_has_nothing_to_judge() -> None:
    assert verify_response(None) == []
    assert verify_outcome(None, RuntimeError("transport")) == []


def test_healthy_response_passes() -> None:
    assert verify_outcome(healthy(), None) == []


@pytest.mark.parametrize(
    "response",
    [
        Response(exit_code=1),
        Response(signal="SIGKILL"),
        Response(timed_out=True),
        Response(failure=RunFailure(code=FailureCode.AGENT_ERROR, message="boom")),
        Response(),
        Response(checkpoint=Checkpoint(state=healthy_state(), valid=False), exit_code=2),
    ],
    ids=["exit-1", "signal", "timed-out", "agent-error", "empty", "invalid-checkpoint"],
)
def test_failed_but_legal_responses_pass(response: Response) -> None:
    assert verify_outcome(response, None) == []


def test_empty_response_with_transport_error_passes() -> None:
    assert verify_outcome(Response(), ConnectionError("pipe closed")) == []


def test_valid_checkpoint_without_state_is_rsp01() -> None:
    response = Response(checkpoint=Checkpoint(state=None, valid=True))
    assert clauses(verify_response(response)) == ["RSP-01"]


def test_valid_checkpoint_with_empty_resume_id_is_rsp01() -> None:
    response = Response(checkpoint=Checkpoint(state=SessionState(display_id="d"), valid=True))
    assert clauses(verify_response(response)) == ["RSP-01"]


@pytest.mark.parametrize(
    ("fields", "shown"),
    [
        ({"exit_code": 1}, "exit_code=1"),
        ({"signal": "SIGTERM"}, "signal="),
        ({"timed_out": True}, "timed_out=True"),
        ({"failure": RunFailure(code=FailureCode.AGENT_ERROR)}, "failure set"),
        ({"failure": RunFailure(code=FailureCode.ACTIVE_EXECUTION_TIMEOUT)}, "failure set"),
    ],
)
def test_valid_checkpoint_on_unsafe_outcome_is_rsp01(fields: dict[str, object], shown: str) -> None:
    response = healthy().model_copy(update=fields)
    [violation] = verify_response(response)
    assert violation.clause == "RSP-01"
    assert shown in violation.message


def test_valid_checkpoint_with_run_error_is_rsp01_in_verify_outcome() -> None:
    response = healthy()
    assert verify_response(response) == []
    [violation] = verify_outcome(response, RunError("late failure", response=response))
    assert violation.clause == "RSP-01"
    assert "RunError" in violation.message


def test_invalid_checkpoint_with_run_error_passes() -> None:
    response = healthy().model_copy(update={"checkpoint": Checkpoint(valid=False)})
    assert verify_outcome(response, RuntimeError("x")) == []


@pytest.mark.parametrize("code", [FailureCode.REJECT, FailureCode.TIMEOUT])
def test_decision_failure_without_human_decision_is_rsp02(code: FailureCode) -> None:
    response = Response(failure=RunFailure(code=code))
    [violation] = verify_response(response)
    assert violation.clause == "RSP-02"
    assert str(code) in violation.message


@pytest.mark.parametrize("code", [FailureCode.REJECT, FailureCode.TIMEOUT])
def test_decision_failure_with_human_decision_passes(code: FailureCode) -> None:
    assert verify_response(Response(failure=RunFailure(code=code, human_decision=HUMAN))) == []


@pytest.mark.parametrize(
    "code",
    [FailureCode.AGENT_ERROR, FailureCode.CANCELLED, FailureCode.ACTIVE_EXECUTION_TIMEOUT, ""],
)
def test_other_failure_with_human_decision_is_rsp02(code: FailureCode | str) -> None:
    response = Response(failure=RunFailure.model_validate({"code": code, "human_decision": HUMAN}))
    assert clauses(verify_response(response)) == ["RSP-02"]


def test_active_execution_timeout_without_human_decision_passes() -> None:
    failure = RunFailure(code=FailureCode.ACTIVE_EXECUTION_TIMEOUT, message="host limit")
    assert verify_response(Response(exit_code=1, failure=failure)) == []


JSONL = b'{"type":"init"}\n{"type":"assistant","text":"hi"}\n{"type":"result"}\n'


def test_output_equal_to_jsonl_stdout_is_rsp03() -> None:
    response = Response(output=JSONL.decode(), raw_streams=RawStreams(stdout=JSONL))
    assert clauses(verify_response(response)) == ["RSP-03"]


def test_output_equal_to_padded_jsonl_stdout_is_rsp03() -> None:
    stdout = b"  \n" + JSONL + b"\n\n"
    response = Response(output=stdout.decode(), raw_streams=RawStreams(stdout=stdout))
    assert clauses(verify_response(response)) == ["RSP-03"]


def test_output_equal_to_stdout_with_invalid_utf8_is_rsp03() -> None:
    stdout = JSONL + b'{"bad":"\xff"}\n'
    output = stdout.decode("utf-8", errors="surrogateescape")
    response = Response(output=output, raw_streams=RawStreams(stdout=stdout))
    assert clauses(verify_response(response)) == ["RSP-03"]


@pytest.mark.parametrize(
    ("output", "stdout"),
    [
        ('{"answer": 1}', b'{"answer": 1}'),  # a single-line JSON answer
        ("line one\nline two", b"line one\nline two"),  # plain multi-line text
        ("hi", JSONL),  # output is not the dump
        ("", b""),
    ],
)
def test_output_not_a_jsonl_dump_passes(output: str, stdout: bytes) -> None:
    assert verify_response(Response(output=output, raw_streams=RawStreams(stdout=stdout))) == []


TERMINAL_LINE = '{"type":"result","text":"hi"}'
PROTOCOL = f'{{"type":"init"}}\n{{"type":"assistant","text":"hi"}}\n{TERMINAL_LINE}\n'


def _with_terminal(output: str, stdout: str) -> Response:
    raw = RawStreams(
        stdout=stdout.encode(), terminal=TerminalPayload(event="result", raw_json=TERMINAL_LINE)
    )
    return Response(output=output, raw_streams=raw)


@pytest.mark.parametrize(
    "output",
    [
        PROTOCOL.rstrip("\n"),  # the lines joined without the trailing newline
        PROTOCOL.replace("\n", "\r\n"),  # CRLF
        "\n".join(PROTOCOL.splitlines()[1:]),  # part of the stream
        TERMINAL_LINE,  # the terminal JSON line alone
        f"  {TERMINAL_LINE}\r\n",
    ],
    ids=["joined", "crlf", "part", "terminal-line", "terminal-line-padded"],
)
def test_protocol_shaped_output_is_rsp03(output: str) -> None:
    for stdout in (PROTOCOL, PROTOCOL.replace("\n", "\r\n")):
        assert clauses(verify_response(_with_terminal(output, stdout))) == ["RSP-03"]


STRUCTURED = '{"ok":true,"items":[1,2]}'


@pytest.mark.parametrize(
    ("output", "stdout"),
    [
        # A structured answer: JSON, carried inside a stdout line, no line of its own.
        (STRUCTURED, f'{{"type":"init"}}\n{{"type":"result","structured":{STRUCTURED}}}\n'),
        # A JSON code block in prose.
        (
            'Here it is:\n```json\n{"a": 1}\n{"b": 2}\n```',
            '{"type":"assistant","text":"Here it is: ..."}\n{"type":"result"}\n',
        ),
        # A one-line JSON reply, quoted inside the protocol's text field.
        ('{"status": "ok"}', '{"type":"assistant","text":"{\\"status\\": \\"ok\\"}"}\n'),
        # A multi-line JSON answer, pretty-printed: its lines are no lines of stdout.
        ('{\n  "ok": true\n}', '{"type":"result","text":"{\\n  \\"ok\\": true\\n}"}\n'),
        # One JSON line that is not the terminal one.
        ('{"type":"init"}', PROTOCOL),
    ],
    ids=["structured", "code-block", "one-line-json", "pretty-json", "non-terminal-line"],
)
def test_json_answers_are_not_rsp03(output: str, stdout: str) -> None:
    assert verify_response(_with_terminal(output, stdout)) == []


def test_terminal_without_event_is_rsp05() -> None:
    raw = RawStreams(terminal=TerminalPayload(event="  ", raw_json="{}"))
    [violation] = verify_response(Response(raw_streams=raw))
    assert violation.clause == "RSP-05"
    assert "event" in violation.message


@pytest.mark.parametrize(
    "raw_json",
    ["", "{", '{"a":1} {"b":2}', '{"x": NaN}', "Infinity", "-Infinity", '"\x01"', "'x'"],
    ids=["empty", "truncated", "two-docs", "nan", "inf", "neg-inf", "control", "quote"],
)
def test_terminal_with_invalid_json_is_rsp05(raw_json: str) -> None:
    raw = RawStreams(terminal=TerminalPayload(event="result", raw_json=raw_json))
    assert clauses(verify_response(Response(raw_streams=raw))) == ["RSP-05"]


@pytest.mark.parametrize("raw_json", ['{"a":1,"a":2}', " [1, 2.5e3] ", "null", '"s"'])
def test_terminal_with_valid_json_passes(raw_json: str) -> None:
    raw = RawStreams(terminal=TerminalPayload(event="turn/completed", raw_json=raw_json))
    assert verify_response(Response(raw_streams=raw)) == []


def test_terminal_event_blankness_follows_go() -> None:
    # U+001C counts as space for str.strip but not for Go's strings.TrimSpace.
    raw = RawStreams(terminal=TerminalPayload(event="\x1c", raw_json="{}"))
    assert verify_response(Response(raw_streams=raw)) == []
    assert trim_space(" \u3000x\x1c\t") == "x\x1c"


def test_transcript_gets_trn_checks() -> None:
    response = Response(transcript=[TranscriptItem(kind=TranscriptKind.TOOL_CALL)])
    [violation] = verify_response(response)
    assert violation.clause == "TRN-02"
    assert violation.message.startswith("transcript item 0:")


def test_is_valid_json_matches_go_validity() -> None:
    assert is_valid_json(json.dumps({"k": [1, None, True]}))
    assert not is_valid_json("1e5 2")
    assert not is_valid_json("\ud800")


# ------------------------------------------------------------------------------------
# verify_checkpoint_codec (RSP-04)
# ------------------------------------------------------------------------------------


class GoodCodec:
    def name(self) -> str:
        return "good"

    def to_params(self, state: SessionState | None) -> SessionParams:
        if state is None:
            return SessionParams()
        return SessionParams(
            resume_id=state.resume_id, display_id=state.display_id, values=dict(state.data)
        )

    def from_params(self, params: SessionParams) -> SessionState | None:
        if params == SessionParams():
            return None
        return SessionState(
            resume_id=params.resume_id, display_id=params.display_id, data=dict(params.values)
        )

    def guard_fingerprint(self, params: SessionParams) -> str:
        return f"guard:{params.resume_id}:{sorted(params.values.items())}"


class LossyCodec(GoodCodec):
    def from_params(self, params: SessionParams) -> SessionState | None:
        return SessionState(resume_id=params.resume_id)


class ResumeDroppingCodec(GoodCodec):
    def to_params(self, state: SessionState | None) -> SessionParams:
        return super().to_params(state).model_copy(update={"resume_id": ""})


class EmptyGuardCodec(GoodCodec):
    def guard_fingerprint(self, params: SessionParams) -> str:
        return ""


class NoneRestoringCodec(GoodCodec):
    def from_params(self, params: SessionParams) -> SessionState | None:
        return None


class RaisingCodec(GoodCodec):
    def guard_fingerprint(self, params: SessionParams) -> str:
        raise KeyError("guard")


class Provider:
    def __init__(self, codec: object) -> None:
        self._codec = codec

    def session_codec(self) -> object:
        return self._codec


class RaisingProvider:
    def session_codec(self) -> object:
        raise LookupError("no codec today")


class NoProvider:
    pass


def rsp04(driver: object, response: Response | None = None) -> list[str]:
    return [
        str(v) for v in verify_checkpoint_codec(driver, healthy() if response is None else response)
    ]


def test_healthy_checkpoint_round_trips() -> None:
    assert verify_checkpoint_codec(Provider(GoodCodec()), healthy()) == []


@pytest.mark.parametrize(
    "response",
    [
        None,
        Response(),
        Response(checkpoint=Checkpoint(state=healthy_state(), valid=False)),
        Response(checkpoint=Checkpoint(state=None, valid=True)),
    ],
    ids=["none", "no-checkpoint", "invalid", "no-state"],
)
def test_nothing_to_check_without_valid_state(response: Response | None) -> None:
    assert verify_checkpoint_codec(NoProvider(), response) == []


def test_driver_without_codec_provider_is_rsp04() -> None:
    [message] = rsp04(NoProvider())
    assert message.startswith("RSP-04: ")


def test_non_callable_session_codec_attribute_is_no_provider() -> None:
    driver = NoProvider()
    driver.session_codec = "not a method"  # type: ignore[attr-defined]
    assert len(rsp04(driver)) == 1


def test_none_codec_is_rsp04() -> None:
    [message] = rsp04(Provider(None))
    assert message.startswith("RSP-04: ")
    assert "None" in message


def test_object_without_codec_methods_is_rsp04() -> None:
    [message] = rsp04(Provider(object()))
    assert message.startswith("RSP-04: ")
    assert "object" in message


def test_session_codec_raising_is_rsp04_naming_the_type() -> None:
    [message] = rsp04(RaisingProvider())
    assert message.startswith("RSP-04: ")
    assert "LookupError" in message


def test_lossy_codec_is_rsp04() -> None:
    [message] = rsp04(Provider(LossyCodec()))
    assert message.startswith("RSP-04: ")
    assert "display_id" in message
    assert "values" in message


def test_codec_losing_resume_id_is_rsp04() -> None:
    messages = rsp04(Provider(ResumeDroppingCodec()))
    assert messages
    assert all(m.startswith("RSP-04: ") for m in messages)
    assert "resume_id" in messages[0]


def test_empty_guard_is_rsp04() -> None:
    [message] = rsp04(Provider(EmptyGuardCodec()))
    assert message.startswith("RSP-04: ")
    assert "guard" in message


def test_from_params_none_is_rsp04() -> None:
    [message] = rsp04(Provider(NoneRestoringCodec()))
    assert message.startswith("RSP-04: ")
    assert "from_params" in message


def test_codec_raising_midway_is_rsp04_naming_the_type() -> None:
    [message] = rsp04(Provider(RaisingCodec()))
    assert message.startswith("RSP-04: ")
    assert "KeyError" in message
