"""The SYS clauses: an appended system prompt is taken exactly when declared (SYS-01) and
reaches the model as system text (SYS-02)."""

from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass
from typing import Any

import anyio
import pytest

from adaptertest import ClauseStatus, ConformanceReport, Options, check_driver
from adaptertest.report_json import dumps, report_to_json
from adaptertest.report_markdown import document_to_markdown
from adaptertest.sysprompt import (
    append_text,
    padded_text,
    refusal_of,
    verify_append_delivered,
    verify_append_fingerprint,
)
from driver import (
    Checkpoint,
    Descriptor,
    EventSink,
    Request,
    Response,
    RunEvent,
    RunEventType,
    SessionState,
    SystemPromptCapability,
    SystemPromptUnsupportedError,
    SystemPromptUnsupportedReason,
    TranscriptItem,
    TranscriptKind,
    check_append_system_prompt,
)
from referencedriver import ReferenceConfig, ReferenceDriver, ReferenceModel, new_reference_driver

SYS = ["SYS-01", "SYS-02", "SYS-03", "OBS-01"]


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
    """Declares no append and refuses one the way upstream's rules say (the reason of
    an undeclared one may be overridden to break the rule)."""

    reason = "unsupported_driver"
    name = "reference"
    emit_first = False

    def descriptor(self) -> Descriptor:
        return super().descriptor().model_copy(update={"system_prompt": SystemPromptCapability()})

    async def run(self, request: Request, sink: EventSink) -> Response:
        if request.append_system_prompt:
            if self.emit_first:
                sink.emit(RunEvent(type=RunEventType.SPAWN, text="started anyway"))
            try:
                check_append_system_prompt(self.name, request.append_system_prompt, supported=False)
            except SystemPromptUnsupportedError as refused:
                if refused.reason == "unsupported_driver":
                    raise SystemPromptUnsupportedError(self.name, self.reason) from None
                raise
        return await super().run(request, sink)


class WrongReason(Undeclared):
    reason = "conflicting_extra_args"


class OldReason(Undeclared):
    """The port's reason before it followed upstream's names."""

    reason = "unsupported"


class WrongName(Undeclared):
    name = ""


class StartsFirst(Undeclared):
    emit_first = True


class RefusesDeclared(ReferenceDriver):
    async def run(self, request: Request, sink: EventSink) -> Response:
        if request.append_system_prompt:
            raise SystemPromptUnsupportedError("reference", "unsupported_driver")
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


class RefusesFromTaskGroup(Undeclared):
    """Refuses from a task of its own task group: the refusal arrives in an
    ExceptionGroup (reason and driver as given)."""

    async def run(self, request: Request, sink: EventSink) -> Response:
        async def refuse() -> None:
            await Undeclared.run(self, request, sink)

        if not request.append_system_prompt:
            return await super().run(request, sink)
        async with anyio.create_task_group() as group:
            group.start_soon(refuse)
        raise AssertionError("the refusal did not arrive")


class WrongReasonFromTaskGroup(RefusesFromTaskGroup):
    reason = "inline_limit"


def test_the_reference_driver_delivers_its_append() -> None:
    model = ReferenceModel()
    report = check(lambda: new_reference_driver(model=model), model_requests=model.requests_so_far)
    assert failed(report) == set()
    for clause in SYS:
        assert status(report, clause) is ClauseStatus.PASSED
    notes = report.result("SYS-02").notes
    assert "streaming run: appended text found in the system text of 1 of 1 request(s)" in notes
    assert "batch run: appended text found in the system text of 1 of 1 request(s)" in notes
    turns = [t for t in model.requests if "adaptertest marker" in t.system_text]
    assert len(turns) >= 2  # the streaming run, the batch run (and the limit run)
    for turn in turns:
        assert "adaptertest marker" not in turn.user_text
    # The canary has several lines, non-ASCII text and no Unicode normal form.
    text = append_text("c-1")
    assert text.count("\n") >= 2
    assert not text.isascii()
    for form in ("NFC", "NFD", "NFKC", "NFKD"):
        assert unicodedata.normalize(form, text) != text, form


def test_without_the_model_side_sys02_is_skipped_with_the_option_named() -> None:
    report = check(new_reference_driver)
    assert status(report, "SYS-01") is ClauseStatus.PASSED
    assert status(report, "SYS-02") is ClauseStatus.SKIPPED
    assert status(report, "SYS-03") is ClauseStatus.PASSED
    assert "Options(model_requests=...)" in report.result("SYS-02").messages[0]


def test_without_live_run_every_one_is_skipped() -> None:
    report = check(new_reference_driver, live_run=False)
    for clause in ("SYS-01", "SYS-02", "SYS-03"):
        assert status(report, clause) is ClauseStatus.SKIPPED
    assert "live_run=True" in report.result("SYS-01").messages[0]


@pytest.mark.parametrize("driver", [Undeclared, RefusesFromTaskGroup, OldReason])
def test_an_undeclared_append_refused_properly_passes_and_skips_the_rest(
    driver: type[Undeclared],
) -> None:
    report = check(lambda: driver(), model_requests=lambda: [])
    if driver is OldReason:
        # The old spelling is read (SystemPromptUnsupportedReason("unsupported")), never
        # accepted from a driver: upstream's reason is unsupported_driver.
        assert SystemPromptUnsupportedReason("unsupported") == "unsupported_driver"
        assert failed(report) == {"SYS-01"}
        assert "reason 'unsupported', expected 'unsupported_driver'" in " ".join(
            report.result("SYS-01").messages
        )
        return
    assert status(report, "SYS-01") is ClauseStatus.PASSED
    for clause in ("SYS-02", "SYS-03"):
        assert status(report, clause) is ClauseStatus.SKIPPED
        assert "does not declare system_prompt.append" in report.result(clause).messages[0]


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_refusal_in_an_exception_group_is_read_from_the_error_it_matched(
    backend: str,
) -> None:
    """The reason and driver come from the SystemPromptUnsupportedError inside the group,
    not from the group (which has neither)."""
    report = check(lambda: WrongReasonFromTaskGroup(), backend=backend)
    assert failed(report) == {"SYS-01"}
    messages = " ".join(report.result("SYS-01").messages)
    assert "refused with reason 'inline_limit', expected 'unsupported_driver'" in messages
    assert "names driver" not in messages  # the driver was named, inside the group


@pytest.mark.parametrize(
    ("driver", "fragment"),
    [
        (
            WrongReason,
            "refused with reason 'conflicting_extra_args', expected 'unsupported_driver'",
        ),
        (WrongName, "names driver '', expected the descriptor type 'reference'"),
        (StartsFirst, "1 run event(s) and 0 stream payload(s) reached the sink before run()"),
        (RefusesDeclared, "declares system_prompt.append, yet run() refused the append"),
        (EchoesIntoUserTurn, "shows up in transcript item(s) 0 (user)"),
    ],
)
def test_sys01_names_what_went_wrong(driver: type[ReferenceDriver], fragment: str) -> None:
    report = check(lambda: driver(ReferenceConfig()))
    assert failed(report) == {"SYS-01"}
    messages = report.result("SYS-01").messages
    assert all(message.startswith("SYS-01: ") for message in messages)
    assert any(fragment in message for message in messages), messages


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
    assert "Options.model_requests() before the streaming run" in " ".join(
        report.result("SYS-02").messages
    )


def test_a_model_side_that_saw_nothing_fails_sys02() -> None:
    report = check(new_reference_driver, model_requests=lambda: [])
    assert failed(report) == {"SYS-02"}
    assert "recorded no request during the streaming run" in report.result("SYS-02").messages[0]


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
    assert "user text of request(s) 0 of the run's 1" in problems[0]
    assert "system text of none of the run's 1 model request(s)" in problems[1]
    changed, _ = verify_append_delivered([Seen("marker c-1, reworded", "")], text, "c-1")
    assert "request(s) 0 carry it changed" in changed[0]
    wrong, _ = verify_append_delivered([object()], text, "c-1")
    assert "without str system_text and user_text" in wrong[0]


# -- the refusal order, the inline limit and a conflicting config ------------------------


class LimitRefuser(ReferenceDriver):
    """Passes the append inline: refuses it over ``limit`` UTF-8 bytes with ``reason``,
    after emitting ``emit_first`` events."""

    limit = 32_768
    reason = "inline_limit"
    emit_first = False

    async def run(self, request: Request, sink: EventSink) -> Response:
        text = request.append_system_prompt
        check_append_system_prompt("reference", text, supported=True)
        if len(text.encode()) > self.limit:
            if self.emit_first:
                sink.emit(RunEvent(type=RunEventType.INVOCATION, text="starting"))
            raise SystemPromptUnsupportedError("reference", self.reason)
        return await super().run(request, sink)


class CommandLineRefuser(LimitRefuser):
    reason = "command_line_limit"


class OffByOne(LimitRefuser):
    limit = 32_767


class WrongLimitReason(LimitRefuser):
    reason = "unsafe_shell_argument"


class LimitAfterStart(LimitRefuser):
    emit_first = True


@pytest.mark.parametrize("driver", [LimitRefuser, CommandLineRefuser])
def test_an_inline_driver_refusing_over_the_limit_passes(driver: type[LimitRefuser]) -> None:
    report = check(lambda: driver(ReferenceConfig()))
    assert failed(report) == set()
    assert status(report, "SYS-01") is ClauseStatus.PASSED


@pytest.mark.parametrize(
    ("driver", "fragment"),
    [
        (OffByOne, "refused an append of exactly 32768 UTF-8 bytes with reason 'inline_limit'"),
        (WrongLimitReason, "reason 'unsafe_shell_argument', expected 'inline_limit' or"),
        (LimitAfterStart, "reached the sink before run() refused an append of 32769 UTF-8"),
    ],
)
def test_the_limit_is_judged(driver: type[LimitRefuser], fragment: str) -> None:
    report = check(lambda: driver(ReferenceConfig()))
    assert failed(report) == {"SYS-01"}
    assert fragment in " ".join(report.result("SYS-01").messages)


def test_padded_texts_have_the_exact_size_and_carry_the_note() -> None:
    for size in (32_768, 32_769):
        text = padded_text("c-1", size)
        assert len(text.encode("utf-8")) == size
        assert text.startswith(append_text("c-1"))
    with pytest.raises(ValueError, match="shorter than the note"):
        padded_text("c-1", 10)


class Conflicting(ReferenceDriver):
    """Its config sets the CLI's system prompt: every append is refused as
    conflicting_extra_args, after upstream's earlier checks."""

    argument = "--system-prompt"
    emit_first = False

    async def run(self, request: Request, sink: EventSink) -> Response:
        text = request.append_system_prompt
        check_append_system_prompt("reference", text, supported=True)
        if text:
            if self.emit_first:
                sink.emit(RunEvent(type=RunEventType.INVOCATION, text="starting"))
            raise SystemPromptUnsupportedError(
                "reference", "conflicting_extra_args", argument=self.argument
            )
        return await super().run(request, sink)


class ConflictingUnnamed(Conflicting):
    argument = ""


class ConflictingLate(Conflicting):
    emit_first = True


@pytest.mark.parametrize(
    ("driver", "named"),
    [(Conflicting, "argument '--system-prompt'"), (ConflictingUnnamed, "did not name")],
)
def test_a_conflicting_config_skips_the_clauses_naming_the_argument(
    driver: type[Conflicting], named: str
) -> None:
    report = check(lambda: driver(ReferenceConfig()))
    assert failed(report) == set()
    for clause in ("SYS-01", "SYS-02", "SYS-03"):
        assert status(report, clause) is ClauseStatus.SKIPPED
        [reason] = report.result(clause).messages
        assert "conflicting_extra_args" in reason
        assert named in reason
        assert "before anything reached the sink" in reason


def test_a_conflict_refused_after_something_was_emitted_fails_sys01() -> None:
    report = check(lambda: ConflictingLate(ReferenceConfig()))
    assert failed(report) == {"SYS-01"}
    assert "reached the sink before run() refused an append while the config" in " ".join(
        report.result("SYS-01").messages
    )
    assert status(report, "SYS-02") is ClauseStatus.SKIPPED


# -- the append never shows --------------------------------------------------------------


class Leaky(ReferenceDriver):
    """Shows the append in its invocation event and in the message of an error it raises
    on the batch run; keeps every append it was given."""

    seen: list[str] = []

    async def run(self, request: Request, sink: EventSink) -> Response:
        text = request.append_system_prompt
        if text:
            self.seen.append(text)
            sink.emit(RunEvent(type=RunEventType.INVOCATION, text=f"appending {text}"))
            if not request.streaming:
                raise RuntimeError(f"the batch path lost {text!r}")
        return await super().run(request, sink)


@pytest.mark.parametrize("details", [False, True])
def test_the_append_never_shows_in_a_report(details: bool) -> None:
    Leaky.seen.clear()
    report = check(lambda: Leaky(ReferenceConfig()), show_live_details=details)
    assert failed(report) == {"SYS-01"}
    messages = " ".join(report.result("SYS-01").messages)
    assert "shows up in run event" in messages
    assert "run event 0 (invocation)" in messages
    [text] = {t for t in Leaky.seen if "adaptertest marker" in t and len(t) < 1000}
    canary = text.split()[2].rstrip(":")
    assert canary.startswith("adaptertest-canary-")
    document = report_to_json(report)
    rendered = [dumps(document), document_to_markdown(document), report.summary()]
    rendered += [r.describe() for r in report.results]
    for shown in rendered:
        assert canary not in shown
        assert "Zweite Zeile" not in shown


# -- the session ----------------------------------------------------------------------------


def test_refusal_of_finds_the_error_in_causes_and_groups() -> None:
    refusal = SystemPromptUnsupportedError("acme", "nul_byte")
    wrapped = RuntimeError("launch")
    wrapped.__cause__ = ExceptionGroup("tasks", [ValueError("x"), ExceptionGroup("in", [refusal])])
    assert refusal_of(wrapped) is refusal
    assert refusal_of(RuntimeError("unrelated")) is None
    assert refusal_of(None) is None


def test_the_fingerprint_check_names_the_key_and_the_digest() -> None:
    text = append_text("c-1")
    digest = hashlib.sha256(text.encode()).hexdigest()
    state = SessionState(resume_id="s", data={"append_system_prompt_fingerprint": digest})
    good = Response(checkpoint=Checkpoint(valid=True, state=state))
    assert verify_append_fingerprint(good, text) == []
    [missing] = verify_append_fingerprint(
        Response(checkpoint=Checkpoint(valid=True, state=SessionState(resume_id="s"))), text
    )
    assert "no 'append_system_prompt_fingerprint'" in missing
    [wrong] = verify_append_fingerprint(good, text + ".")
    assert digest in wrong


# -- the batch run ---------------------------------------------------------------------


class BatchFails(ReferenceDriver):
    """Every run without streaming fails (``only_with_append``: only one with an append)."""

    only_with_append = False

    async def run(self, request: Request, sink: EventSink) -> Response:
        if not request.streaming and (request.append_system_prompt or not self.only_with_append):
            check_append_system_prompt("reference", request.append_system_prompt, supported=True)
            return await ReferenceDriver(ReferenceConfig(fail_run=True)).run(request, sink)
        return await super().run(request, sink)


class BatchFailsWithAppend(BatchFails):
    only_with_append = True


def test_a_batch_path_that_fails_with_and_without_the_append_is_not_blamed() -> None:
    model = ReferenceModel()
    report = check(lambda: BatchFails(model=model), model_requests=model.requests_so_far)
    assert failed(report) == set()
    assert any(
        "so the batch path's append is not judged" in n for n in report.result("SYS-01").notes
    )
    assert not any(n.startswith("batch run:") for n in report.result("SYS-02").notes)


def test_a_batch_path_that_fails_only_with_the_append_fails_sys01() -> None:
    report = check(lambda: BatchFailsWithAppend(ReferenceConfig()))
    assert failed(report) == {"SYS-01"}
    assert "streaming=False fails (exit_code=1, failure 'agent_error') and succeeds" in " ".join(
        report.result("SYS-01").messages
    )
