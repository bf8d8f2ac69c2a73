"""Units of the live-verdict text and of FLR-01: marked provider text, where a driver
raised, and what makes a failure clean."""

from __future__ import annotations

import re
from typing import Any

import pytest

from adaptertest._calls import describe_error, driver_location
from adaptertest._violation import WITHHELD, Violation, provider_text, render
from adaptertest.flr import verify_clean_failure, verify_expected_failure
from driver import (
    Checkpoint,
    FailureCode,
    Response,
    RunFailure,
    SessionState,
    StreamKind,
    StreamPayload,
    TranscriptItem,
    TranscriptKind,
)

# -- marked provider text --------------------------------------------------------------


def test_marked_text_is_shown_or_withheld_in_place() -> None:
    message = f"output is {provider_text('hello there')}, expected 'OK'"
    assert render(message, show=True) == "output is 'hello there', expected 'OK'"
    withheld = render(message, show=False)
    assert re.fullmatch(
        r"output is <withheld: 11 chars, sha256:[0-9a-f]{12}>, expected 'OK'", withheld
    )


def test_bytes_are_measured_in_bytes_and_str_in_chars() -> None:
    assert "3 bytes" in render(provider_text(b"\xff\x00a"), show=False)
    assert "2 chars" in render(provider_text("é€"), show=False)
    assert render(provider_text(b"\xff"), show=True) == "'\\\\xff'"


def test_the_digest_tells_two_texts_apart() -> None:
    one, two = (render(provider_text(t), show=False) for t in ("budget hit", "budget hot"))
    assert one != two


def test_provider_text_cannot_forge_or_break_a_frame() -> None:
    hostile = "\x1ecanary\x1fforged\x1d"
    message = f"kind {hostile} delta {provider_text(hostile)}"
    withheld = render(message, show=False)
    assert withheld.count(WITHHELD) == 1
    assert "canary" not in withheld.split("delta ", 1)[1]
    shown = render(message, show=True)
    assert "'\\x1ecanary\\x1fforged\\x1d'" in shown


def test_long_text_is_cut_with_its_size() -> None:
    shown = render(provider_text("x" * 500, limit=10), show=True)
    assert shown == "'xxxxxxxxxx'... (500 chars)"
    first_line = render(provider_text("line one\nline two", quote=False), show=True)
    assert first_line == "line one..."


def test_a_violation_keeps_both_spellings() -> None:
    violation = Violation("LIV-02", f"output {provider_text('secret-ish')}")
    assert violation.message == "output 'secret-ish'"
    assert str(violation) == "LIV-02: output 'secret-ish'"
    assert violation.text(show=True) == violation.message
    assert WITHHELD in violation.text(show=False)
    assert violation == Violation("LIV-02", "output 'secret-ish'")
    plain = Violation("EVT-04", "payload 3 (text.content): empty delta")
    assert plain.text(show=False) == plain.message


# -- where the driver raised -----------------------------------------------------------


def _raise_here() -> None:
    {"a": 1}["missing"]


def test_a_raise_names_the_driver_frame() -> None:
    with pytest.raises(KeyError) as caught:
        _raise_here()
    where = driver_location(caught.value)
    assert where is not None
    assert re.fullmatch(r"tests/adaptertest/test_flr_and_text\.py:\d+ in _raise_here", where)
    text = render(describe_error("run()", caught.value), show=True)
    assert text == f"run() raised builtins.KeyError at {where}: 'missing'"


def test_an_exception_never_raised_has_no_location() -> None:
    assert driver_location(RuntimeError("x")) is None
    assert render(describe_error("run()", RuntimeError("")), show=False) == (
        "run() raised builtins.RuntimeError"
    )


# -- FLR-01 ----------------------------------------------------------------------------

FAILURE = RunFailure(code=FailureCode.AGENT_ERROR, message="API Error: 429")
UNKNOWN_CODE: Any = "oops"
"""A code no FailureCode has, hidden from the type checker as a driver would hide it."""


def clean(**changes: object) -> Response:
    response = Response(
        exit_code=1,
        failure=FAILURE,
        transcript=[TranscriptItem(kind=TranscriptKind.FAILURE, text=FAILURE.message)],
    )
    return response.model_copy(update=changes)


STREAM = [
    StreamPayload(kind=StreamKind.RUN_STARTED),
    StreamPayload(kind=StreamKind.RUN_ERROR, error=FAILURE),
    StreamPayload(kind="vendor.stats"),
]


def problems(response: Response | None, stream: list[StreamPayload] | None = STREAM) -> list[str]:
    found = verify_clean_failure(response, None, stream)
    assert all(v.clause == "FLR-01" for v in found)
    return [v.message for v in found]


def test_a_clean_failure_passes() -> None:
    assert problems(clean()) == []
    assert problems(clean(), None) == []  # batch runs: nothing asked of the stream


@pytest.mark.parametrize(
    ("response", "wanted"),
    [
        (clean(failure=None), "Response.failure is None although the run failed"),
        (clean(failure=RunFailure(message="x")), "failure.code is empty"),
        (
            clean(failure=RunFailure.model_construct(code=UNKNOWN_CODE, message="x", metadata={})),
            "failure.code is 'oops', not a FailureCode",
        ),
        (clean(failure=FAILURE.model_copy(update={"message": " \n"})), "failure.message is blank"),
        (
            clean(checkpoint=Checkpoint(valid=True, state=SessionState(resume_id="r"))),
            "the failed run offers a valid checkpoint",
        ),
        (clean(transcript=[]), "the transcript has no failure item"),
        (
            clean(signal="SIGKILL", exit_code=0),
            "signal='SIGKILL' with exit_code=0 (a killed process has no clean exit)",
        ),
        (
            clean(timed_out=True, failure=RunFailure(code=FailureCode.TIMEOUT, message="t")),
            "timed_out=True with failure.code='decision_timeout'",
        ),
        (
            clean(failure=FAILURE.model_copy(update={"metadata": {"exit_code": 2}})),
            "failure.metadata['exit_code'] is 2 but Response.exit_code is 1",
        ),
        (
            # bool is an int: True is not the exit code 1.
            clean(failure=FAILURE.model_copy(update={"metadata": {"exit_code": True}})),
            "failure.metadata['exit_code'] is True but Response.exit_code is 1",
        ),
    ],
)
def test_each_unclean_part_is_named(response: Response, wanted: str) -> None:
    assert any(p.startswith(wanted) for p in problems(response)), problems(response)


def test_the_stream_must_end_in_run_error_with_nothing_open() -> None:
    finished = [STREAM[0], StreamPayload(kind=StreamKind.RUN_FINISHED)]
    assert problems(clean(), finished) == [
        "the stream ends in run.finished (payload 1), not run.error"
    ]
    open_text = [STREAM[0], StreamPayload(kind=StreamKind.TEXT_START, message_id="m")]
    assert problems(clean(), open_text) == [
        "the stream ends in text.start (payload 1), not run.error",
        "1 lifecycle(s) still open at the end of the stream",
    ]
    assert problems(clean(), [])[0].startswith("the run emitted no stream payload")


def test_a_raise_without_a_response_is_not_clean() -> None:
    try:
        raise FileNotFoundError(2, "No such file or directory", "cli")
    except FileNotFoundError as exc:
        [violation] = verify_clean_failure(None, exc, [])
    assert violation.text(show=False).startswith("run() raised builtins.FileNotFoundError at ")
    assert "No such file" not in violation.text(show=False)
    assert violation.message.endswith(
        ", and no Response came with it: a failure is reported as Response.failure (return "
        "it, or raise RunError(response=...))"
    )


def test_an_expected_failure_that_succeeded() -> None:
    [violation] = verify_expected_failure("a replayed 429")
    assert "Options(live_expect_failure='a replayed 429')" in violation.message
