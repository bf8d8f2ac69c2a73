"""The SYS clauses: an appended system prompt is taken exactly when declared (SYS-01) and
reaches the model as system text (SYS-02)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from adaptertest import ClauseStatus, ConformanceReport, Options, check_driver
from adaptertest.sysprompt import append_text, verify_append_delivered
from driver import (
    Descriptor,
    EventSink,
    Request,
    Response,
    RunEvent,
    RunEventType,
    SystemPromptCapability,
    SystemPromptUnsupportedError,
    TranscriptItem,
    TranscriptKind,
)
from referencedriver import ReferenceConfig, ReferenceDriver, ReferenceModel, new_reference_driver

SYS = ["SYS-01", "SYS-02", "OBS-01"]


def check(factory: Any, **overrides: Any) -> ConformanceReport:
    settings: dict[str, Any] = {
        "config": ReferenceConfig(),
        "live_run": True,
        "live_run_timeout": 10.0,
    }
    settings.update(overrides)
    return check_driver(factory, Options(**settings), only=SYS)


def status(report: ConformanceReport, clause: str) -> ClauseStatus:
    return report.result(clause).status


def failed(report: ConformanceReport) -> set[str]:
    return {r.clause for r in report.results if r.status is ClauseStatus.FAILED}


class Undeclared(ReferenceDriver):
    """Declares no append and refuses one the way the contract says."""

    reason = "unsupported"
    name = "reference"
    emit_first = False

    def descriptor(self) -> Descriptor:
        return super().descriptor().model_copy(update={"system_prompt": SystemPromptCapability()})

    async def run(self, request: Request, sink: EventSink) -> Response:
        if request.append_system_prompt:
            if self.emit_first:
                sink.emit(RunEvent(type=RunEventType.SPAWN, text="started anyway"))
            raise SystemPromptUnsupportedError(self.name, self.reason)
        return await super().run(request, sink)


class WrongReason(Undeclared):
    reason = "conflicting_extra_args"


class WrongName(Undeclared):
    name = ""


class StartsFirst(Undeclared):
    emit_first = True


class RefusesDeclared(ReferenceDriver):
    async def run(self, request: Request, sink: EventSink) -> Response:
        if request.append_system_prompt:
            raise SystemPromptUnsupportedError("reference", "unsupported")
        return await super().run(request, sink)


class EchoesIntoUserTurn(ReferenceDriver):
    """Folds the append into the prompt and echoes that prompt as a user item."""

    async def run(self, request: Request, sink: EventSink) -> Response:
        response = await super().run(request, sink)
        if request.append_system_prompt:
            text = f"{request.append_system_prompt}\n\n{request.prompt}"
            echo = TranscriptItem(kind=TranscriptKind.USER, text=text)
            sink.emit(RunEvent(type=RunEventType.ITEM, item=echo))
            response.transcript.insert(0, echo)
        return response


def test_the_reference_driver_delivers_its_append() -> None:
    model = ReferenceModel()
    report = check(lambda: new_reference_driver(model=model), model_requests=model.requests_so_far)
    assert failed(report) == set()
    for clause in SYS:
        assert status(report, clause) is ClauseStatus.PASSED
    assert any("1 of 1 request(s)" in n for n in report.result("SYS-02").notes)
    [turn] = [t for t in model.requests if "adaptertest marker" in t.system_text]
    assert "adaptertest marker" not in turn.user_text


def test_without_the_model_side_sys02_is_skipped_with_the_option_named() -> None:
    report = check(new_reference_driver)
    assert status(report, "SYS-01") is ClauseStatus.PASSED
    assert status(report, "SYS-02") is ClauseStatus.SKIPPED
    assert "Options(model_requests=...)" in report.result("SYS-02").messages[0]


def test_without_live_run_both_are_skipped() -> None:
    report = check(new_reference_driver, live_run=False)
    assert status(report, "SYS-01") is ClauseStatus.SKIPPED
    assert status(report, "SYS-02") is ClauseStatus.SKIPPED
    assert "live_run=True" in report.result("SYS-01").messages[0]


def test_an_undeclared_append_refused_properly_passes_and_skips_sys02() -> None:
    report = check(lambda: Undeclared(), model_requests=lambda: [])
    assert status(report, "SYS-01") is ClauseStatus.PASSED
    assert status(report, "SYS-02") is ClauseStatus.SKIPPED
    assert "does not declare system_prompt.append" in report.result("SYS-02").messages[0]


@pytest.mark.parametrize(
    ("driver", "fragment"),
    [
        (WrongReason, "has reason 'conflicting_extra_args', expected 'unsupported'"),
        (WrongName, "names driver '', expected the descriptor type 'reference'"),
        (StartsFirst, "1 run event(s) and 0 stream payload(s) reached the sink"),
        (RefusesDeclared, "declares system_prompt.append, yet run() refused the append"),
        (EchoesIntoUserTurn, "shows up in user transcript item(s) 0"),
    ],
)
def test_sys01_names_what_went_wrong(driver: type[ReferenceDriver], fragment: str) -> None:
    report = check(lambda: driver(ReferenceConfig()))
    assert failed(report) == {"SYS-01"}
    [message] = report.result("SYS-01").messages
    assert message.startswith("SYS-01: ")
    assert fragment in message


class BreaksWithAppend(ReferenceDriver):
    """Declares the append, and every run that carries one fails."""

    async def run(self, request: Request, sink: EventSink) -> Response:
        if request.append_system_prompt:
            failing = ReferenceDriver(ReferenceConfig(fail_run=True))
            return await failing.run(request, sink)
        return await super().run(request, sink)


def test_a_run_that_fails_only_with_the_append_fails_sys01() -> None:
    report = check(lambda: BreaksWithAppend(ReferenceConfig()))
    assert failed(report) == {"SYS-01"}
    [message] = report.result("SYS-01").messages
    assert "fails with an append (exit_code=1, failure 'agent_error')" in message
    assert "succeeds without one" in message


@pytest.mark.parametrize("expect_failure", [None, "the config fails every run"])
def test_a_run_that_fails_either_way_skips_sys01(expect_failure: str | None) -> None:
    report = check(
        lambda: new_reference_driver(ReferenceConfig(fail_run=True)),
        live_expect_failure=expect_failure,
    )
    assert status(report, "SYS-01") is ClauseStatus.SKIPPED
    assert "fails with an append" in report.result("SYS-01").messages[0]
    assert "LIV-01 judges the failure" in report.result("SYS-01").messages[0]


def test_a_raising_model_side_fails_sys02_and_says_where() -> None:
    def broken() -> list[Any]:
        raise RuntimeError("emulator gone")

    report = check(new_reference_driver, model_requests=broken)
    assert failed(report) == {"SYS-02"}
    assert "Options.model_requests() before the run" in report.result("SYS-02").messages[0]


def test_a_model_side_that_saw_nothing_fails_sys02() -> None:
    report = check(new_reference_driver, model_requests=lambda: [])
    assert failed(report) == {"SYS-02"}
    assert "recorded no request during the run" in report.result("SYS-02").messages[0]


@dataclass
class Seen:
    system_text: str
    user_text: str


def test_delivery_needs_the_whole_text_in_system_and_the_canary_in_no_user_turn() -> None:
    text = append_text("c-1")
    assert (
        verify_append_delivered([Seen("x", "y"), Seen(f"base\n\n{text}", "OK?")], text, "c-1")[0]
        == []
    )
    problems, _ = verify_append_delivered([Seen("base", f"{text} OK?")], text, "c-1")
    assert len(problems) == 2
    assert "user text of request(s) 0 of 1" in problems[0]
    assert "system text of none of the run's 1 model request(s)" in problems[1]
    changed, _ = verify_append_delivered([Seen("marker c-1, reworded", "")], text, "c-1")
    assert "request(s) 0 carry it changed" in changed[0]
    wrong, _ = verify_append_delivered([object()], text, "c-1")
    assert "without str system_text and user_text" in wrong[0]
