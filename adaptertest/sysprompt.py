"""SYS family (Python extension): the appended system prompt (SYS-01, SYS-02, SYS-03).

``Request.append_system_prompt`` is text the host wants added to the agent's own system
prompt. A driver declares ``Descriptor.system_prompt.append`` when its CLI has a native
way to append (Claude Code's ``--append-system-prompt-file``, codex's
``developer_instructions``); it then passes the text unchanged to that mechanism and
never folds it into the prompt. Upstream's refusals (``SystemPromptUnsupportedError``)
come before anything starts, in a fixed order: invalid UTF-8, NUL, an undeclared append;
a driver that passes the text on the command line refuses more than 32,768 UTF-8 bytes
(``inline_limit``), and one whose config already sets a system prompt refuses the
append (``conflicting_extra_args``).

The ``system_prompt`` probe runs the live request with a canary append: several lines,
non-ASCII, and characters every Unicode normal form changes, so a driver that flattens
or normalises the text is caught. It runs with no observation demand, so OBS-01 (and
OBS-07, when asked for) judge its facts too.

- SYS-01: the refusals (reason, driver named, nothing emitted first) and their order
  (extra runs with NUL, a lone surrogate, both, and for an undeclared append whitespace
  only); a declared append is accepted, the run succeeds streaming and not, and the
  canary shows up in no user-side transcript item, run event or stream payload; at
  32,768 bytes it is not refused as ``inline_limit``, and 32,769 bytes are accepted or
  refused as ``inline_limit`` (or ``command_line_limit``). A ``conflicting_extra_args``
  refusal is the config's doing, not the driver's: once it is seen to come before
  anything reached the sink, SYS-01 to SYS-03 are skipped with the argument named.
- SYS-02: with ``Options(model_requests=...)``, the appended text must reach the system
  text of at least one request of the streaming run and of the batch run, byte for
  byte, and the user text of none. Without the model side the clause is skipped.
- SYS-03: the run's valid checkpoint keeps the append's fingerprint
  (``append_system_prompt_fingerprint``, hex SHA-256), and a resume with another append
  is refused before anything reaches the sink.

The append texts are withheld from every message the probe writes. It runs the
provider, so the clauses need ``live_run=True``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import NoReturn

from pydantic import BaseModel

from adaptertest._calls import describe_error, describe_hang
from adaptertest._probe import ProbeAbort, ProbeContext
from adaptertest.liv import (
    LiveRun,
    error_type,
    judge_observations,
    live_request,
    outcome_summary,
    run_on_loop,
)
from adaptertest.options import ModelRequest, Options
from driver.errors import (
    SystemPromptUnsupportedError,
    SystemPromptUnsupportedReason,
    find_error,
)
from driver.run import ObservationDemand, Request, Response, SessionContext
from driver.session import SESSION_PARAM_APPEND_SYSTEM_PROMPT_FINGERPRINT
from driver.systemprompt import APPEND_INLINE_LIMIT, append_system_prompt_fingerprint
from driver.transcript import TranscriptKind

__all__ = [
    "SYSTEM_PROMPT_RUN_ID",
    "append_text",
    "padded_text",
    "probe_system_prompt",
    "refusal_of",
    "system_prompt_request",
    "verify_append_delivered",
    "verify_append_fingerprint",
    "verify_append_refused",
    "verify_not_shown",
    "verify_refusal",
]

SYSTEM_PROMPT_RUN_ID = "adaptertest-system-prompt"
_SYS = ("SYS-01", "SYS-02", "SYS-03")
_OBS = ("OBS-01", "OBS-07")

_Reason = SystemPromptUnsupportedReason
_LIMIT_REASONS = (_Reason.INLINE_LIMIT, _Reason.COMMAND_LINE_LIMIT)

# Items and payload fields that carry what the model said (it may quote anything); the
# rest of a run's output is the driver's and must never show the appended text.
_MODEL_ITEMS = frozenset(
    {
        TranscriptKind.ASSISTANT,
        TranscriptKind.THINKING,
        TranscriptKind.TOOL_CALL,
        TranscriptKind.TOOL_RESULT,
        TranscriptKind.RESULT,
        TranscriptKind.SUMMARY,
    }
)
_MODEL_FIELDS = frozenset({"delta", "args", "result"})


def append_text(canary: str) -> str:
    """The text the probe appends: a harmless note carrying ``canary`` over three lines,
    with non-ASCII text and characters that NFC, NFD, NFKC and NFKD all change (a
    combining accent, the angstrom sign, a ligature)."""
    return (
        f"(adaptertest marker {canary}: this note needs no action.)\n"
        "Zweite Zeile: gr\u00fc\u00dfe, cafe\u0301, \u212b, \ufb01nal.\n"
        "\u4e09\u884c\u76ee: \u3053\u308c\u3067\u7d42\u308f\u308a."
    )


def padded_text(canary: str, size: int) -> str:
    """:func:`append_text` padded with plain ASCII lines to exactly ``size`` UTF-8 bytes."""
    text = append_text(canary)
    line = "\n(adaptertest padding: no action needed.)"
    missing = size - len(text.encode("utf-8"))
    if missing < 0:
        raise ValueError(f"padded_text: {size} bytes is shorter than the note itself")
    return text + (line * (missing // len(line) + 1))[:missing]


def system_prompt_request(options: Options, text: str, *, streaming: bool = True) -> Request:
    """The live request with ``text`` as its append, its own run id and no demand."""
    request = live_request(
        options.config, options.live_prompt, options.workspace, ObservationDemand()
    )
    request.run_id = SYSTEM_PROMPT_RUN_ID
    request.append_system_prompt = text
    request.streaming = streaming
    return request


def refusal_of(error: BaseException | None) -> SystemPromptUnsupportedError | None:
    """The ``SystemPromptUnsupportedError`` ``error`` is or wraps (a cause, or a member of
    an exception group raised from a task group), or None."""
    return None if error is None else find_error(error, SystemPromptUnsupportedError)


def _reason(refusal: SystemPromptUnsupportedError) -> str:
    """The refusal's reason as text (a driver may pass anything)."""
    return str(getattr(refusal, "reason", ""))


def _emitted(result: LiveRun) -> str:
    """What reached the sink, when something did: "" when nothing."""
    if not (result.events or result.stream):
        return ""
    return f"{len(result.events)} run event(s) and {len(result.stream)} stream payload(s)"


def verify_refusal(
    driver_type: str, result: LiveRun, reasons: Sequence[str], what: str
) -> list[str]:
    """SYS-01 for a run that must be refused: with ``SystemPromptUnsupportedError`` of
    one of ``reasons``, naming ``driver_type``, before anything reached the sink.
    ``what`` describes the append (e.g. "an append holding NUL")."""
    wanted = " or ".join(repr(str(reason)) for reason in reasons)
    if result.timed_out:
        return [f"run() with {what} did not return: it must be refused at once ({wanted})"]
    refusal = refusal_of(result.error)
    if refusal is None:
        got = (
            "returned a Response" if result.error is None else f"raised {error_type(result.error)}"
        )
        return [
            f"run() with {what} {got} instead of raising SystemPromptUnsupportedError "
            f"with reason {wanted}"
        ]
    problems: list[str] = []
    reason = _reason(refusal)
    if reason not in reasons:
        problems.append(f"run() with {what} was refused with reason {reason!r}, expected {wanted}")
    named = getattr(refusal, "driver", "")
    if named != driver_type:
        problems.append(
            f"the refusal of {what} names driver {named!r}, expected the descriptor type "
            f"{driver_type!r}"
        )
    emitted = _emitted(result)
    if emitted:
        problems.append(
            f"{emitted} reached the sink before run() refused {what}: a refusal comes "
            "before anything starts"
        )
    return problems


def verify_append_refused(driver_type: str, result: LiveRun) -> list[str]:
    """SYS-01 for a driver that does not declare the append: refused as
    ``unsupported_driver`` (what is wrong; empty: nothing)."""
    return verify_refusal(
        driver_type,
        result,
        (_Reason.UNSUPPORTED_DRIVER,),
        "a non-empty append while the descriptor does not declare system_prompt.append",
    )


def _refused_declared(result: LiveRun, what: str) -> list[str]:
    """SYS-01 for a declared append that must be taken: no refusal."""
    refusal = refusal_of(result.error)
    if refusal is None:
        return []
    return [
        f"the descriptor declares system_prompt.append, yet run() refused {what} with "
        f"SystemPromptUnsupportedError (reason {_reason(refusal)!r})"
    ]


def _echoed(result: LiveRun, canary: str) -> list[str]:
    """SYS-01: the canary in a transcript item that is not the model's own words means
    the text went into the prompt (a CLI echoes the prompt it was given) or a report."""
    response = result.response
    if response is None:
        return []
    echoed = [
        f"{index} ({item.kind})"
        for index, item in enumerate(response.transcript)
        if item.kind not in _MODEL_ITEMS and _holds(item, canary)
    ]
    if not echoed:
        return []
    return [
        f"the appended text shows up in transcript item(s) {', '.join(echoed)}: it was "
        "folded into the prompt or reported instead of going only to the CLI's "
        "system-prompt mechanism"
    ]


def _holds(value: object, canary: str, skip: AbstractSet[str] = frozenset()) -> bool:
    """Whether any text or bytes inside ``value`` (its fields but ``skip``, mapping keys
    and values, sequence items, at any depth) holds ``canary``. An explicit stack, not
    recursion: vendor data may nest deeper than Python recurses."""
    needle = canary.encode()
    seen: set[int] = set()
    stack: list[object] = [value]
    top = True
    while stack:
        current = stack.pop()
        if isinstance(current, str):
            if canary in current:
                return True
            continue
        if isinstance(current, bytes | bytearray):
            if needle in current:
                return True
            continue
        if id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, BaseModel):
            names = [n for n in type(current).model_fields if not (top and n in skip)]
            stack.extend(getattr(current, name, None) for name in names)
            stack.extend((current.__pydantic_extra__ or {}).values())
        elif isinstance(current, Mapping):
            stack.extend(current.keys())
            stack.extend(current.values())
        elif isinstance(current, list | tuple | set | frozenset):
            stack.extend(current)
        top = False
    return False


def verify_not_shown(result: LiveRun, canary: str) -> list[str]:
    """SYS-01: the canary in no run event and no stream payload, but where the model
    speaks (its text, reasoning and tool calls); a diagnostic that describes the
    invocation shows ``[redacted]`` in place of the append."""
    places: list[str] = []
    for index, event in enumerate(result.events):
        item = event.item
        if item is not None and item.kind in _MODEL_ITEMS:
            continue
        if _holds(event, canary):
            places.append(f"run event {index} ({event.type})")
    for index, payload in enumerate(result.stream):
        if _holds(payload, canary, _MODEL_FIELDS):
            places.append(f"stream payload {index} ({payload.kind})")
    if not places:
        return []
    shown = ", ".join(places[:5]) + (f" and {len(places) - 5} more" if len(places) > 5 else "")
    return [
        f"the appended text shows up in {shown}: the append is never shown (a diagnostic "
        "of the invocation prints [redacted] in its place)"
    ]


def verify_append_delivered(
    requests: Sequence[object], text: str, canary: str, label: str = "run"
) -> tuple[list[str], list[str]]:
    """SYS-02 over the model requests one run made: (problems, notes).

    The full ``text`` must be in the system text of at least one request; the
    ``canary`` must be in no user text. A request without ``str`` fields is a problem
    of the option, reported as such. ``label`` names the run in the messages.
    """
    problems: list[str] = []
    in_system: list[int] = []
    in_user: list[int] = []
    altered: list[int] = []
    for index, request in enumerate(requests):
        system = getattr(request, "system_text", None)
        user = getattr(request, "user_text", None)
        if not isinstance(system, str) or not isinstance(user, str):
            return (
                [
                    f"Options.model_requests gave a {type(request).__qualname__} (request "
                    f"{index}) without str system_text and user_text (see "
                    "adaptertest.ModelRequest)"
                ],
                [],
            )
        if text in system:
            in_system.append(index)
        elif canary in system:
            altered.append(index)
        if canary in user:
            in_user.append(index)
    count = len(requests)
    if not count:
        problems.append(
            f"the model side recorded no request during the {label}: Options.model_requests "
            "must see the model the driver's CLI talks to"
        )
    if in_user:
        problems.append(
            f"the appended text reached the user text of request(s) "
            f"{', '.join(map(str, in_user))} of the {label}'s {count}: it was folded into "
            "the prompt"
        )
    if count and not in_system:
        where = (
            f"; request(s) {', '.join(map(str, altered))} carry it changed (its lines, "
            "spaces or Unicode form)"
            if altered
            else ""
        )
        problems.append(
            f"the appended text is in the system text of none of the {label}'s {count} model "
            f"request(s){where}: it must reach the model byte for byte"
        )
    notes = [
        f"{label}: appended text found in the system text of {len(in_system)} of {count} request(s)"
    ]
    return problems, notes


def verify_append_fingerprint(response: Response, text: str) -> list[str]:
    """SYS-03: a valid checkpoint's state data holds the append's fingerprint."""
    checkpoint = response.checkpoint
    state = checkpoint.state if checkpoint is not None else None
    data = state.data if state is not None else {}
    key = SESSION_PARAM_APPEND_SYSTEM_PROMPT_FINGERPRINT
    want = append_system_prompt_fingerprint(text)
    got = data.get(key)
    if got is None:
        return [
            f"the valid checkpoint of the run with an append has no {key!r} in its state "
            "data: the append is part of the session (the hex SHA-256 of its UTF-8 bytes)"
        ]
    if got != want:
        return [
            f"checkpoint state data {key!r} is {got!r}, expected the hex SHA-256 of the "
            f"append's UTF-8 bytes ({want!r})"
        ]
    return []


def _snapshot(ctx: ProbeContext, label: str) -> list[ModelRequest] | str:
    """The model requests so far, or why they could not be read."""
    source = ctx.options.model_requests
    assert source is not None
    outcome = ctx.attempt(source, awaitable=False)
    if outcome.timed_out:
        return describe_hang(
            f"Options.model_requests() {label}", outcome, ctx.options.probe_timeout
        )
    if outcome.error is not None:
        return describe_error(f"Options.model_requests() {label}", outcome.error)
    try:
        return list(outcome.value)
    except TypeError:
        return (
            f"Options.model_requests() {label} returned {type(outcome.value).__qualname__}, "
            "not a sequence of requests"
        )


def _stopper(ctx: ProbeContext) -> Callable[[str, str], NoReturn]:
    """Ends the probe when the suite could not run the driver at all (no ``run``, or a
    call that ignored cancellation): LIV-01 judges that, so the clauses are skipped."""

    def stop(clause: str, message: str) -> NoReturn:
        ctx.skip((*_SYS, *_OBS), f"{message}, so nothing can be judged (see LIV-01)")
        raise ProbeAbort(clause)

    return stop


@dataclass
class _Delivered:
    """One run with the canary append, and the model requests made during it (None:
    the model side is not read; a str: why reading it failed)."""

    result: LiveRun
    requests: list[ModelRequest] | str | None


class _Runs:
    """The probe's runs: each under the live deadline, the model side read around the
    ones that deliver the canary."""

    def __init__(self, ctx: ProbeContext, model_side: bool) -> None:
        self.ctx = ctx
        self.model_side = model_side
        self.stop = _stopper(ctx)

    def run(self, request: Request, label: str) -> LiveRun:
        result = run_on_loop(self.ctx, request, "SYS-01", label, fail=self.stop)
        if result.error is not None:
            self.ctx.trace(result.error, clauses=("SYS-01",))
        return result

    def deliver(self, request: Request, label: str) -> _Delivered:
        if not self.model_side:
            return _Delivered(self.run(request, label), None)
        before = _snapshot(self.ctx, f"before the {label}")
        result = self.run(request, label)
        if isinstance(before, str):
            return _Delivered(result, before)
        after = _snapshot(self.ctx, f"after the {label}")
        if isinstance(after, str):
            return _Delivered(result, after)
        # The run's requests: those after the snapshot (all of them if the list was reset).
        made = after[len(before) :] if len(after) >= len(before) else after
        return _Delivered(result, made)


def _order_problems(runs: _Runs, declared: bool) -> list[str]:
    """SYS-01: upstream's order of the refusals, one quick run each."""
    ctx = runs.ctx
    options = ctx.options
    driver_type = ctx.descriptor.type
    cases: list[tuple[str, str, str]] = [
        ("a\x00b", _Reason.NUL_BYTE, "an append holding NUL"),
        ("a\udcffb", _Reason.INVALID_UTF8, "an append that is not valid UTF-8 (a lone surrogate)"),
        ("\x00\udcff", _Reason.INVALID_UTF8, "an append that holds NUL and is not valid UTF-8"),
    ]
    if not declared:
        cases.append((" ", _Reason.UNSUPPORTED_DRIVER, "a whitespace-only append"))
    problems: list[str] = []
    for text, reason, what in cases:
        result = runs.run(system_prompt_request(options, text), f"run() with {what}")
        problems += verify_refusal(driver_type, result, (reason,), what)
    return problems


def _limit_problems(runs: _Runs, canary: str) -> list[str]:
    """SYS-01: 32,769 bytes are taken or refused as a limit; 32,768 never as
    ``inline_limit``. Each refusal comes before anything reached the sink."""
    ctx = runs.ctx
    driver_type = ctx.descriptor.type
    over = APPEND_INLINE_LIMIT + 1
    what = f"an append of {over} UTF-8 bytes"
    request = system_prompt_request(ctx.options, padded_text(canary, over))
    result = runs.run(request, f"run() with {what}")
    problems = verify_not_shown(result, canary)
    if refusal_of(result.error) is None:
        return problems  # taken: a transport without the command-line limit
    problems += verify_refusal(driver_type, result, _LIMIT_REASONS, what)
    if problems:
        return problems
    at = f"an append of exactly {APPEND_INLINE_LIMIT} UTF-8 bytes"
    request = system_prompt_request(ctx.options, padded_text(canary, APPEND_INLINE_LIMIT))
    result = runs.run(request, f"run() with {at}")
    problems += verify_not_shown(result, canary)
    refusal = refusal_of(result.error)
    if refusal is not None and _reason(refusal) == _Reason.INLINE_LIMIT:
        problems.append(
            f"run() refused {at} with reason 'inline_limit': the limit is "
            f"{APPEND_INLINE_LIMIT} bytes inclusive, only {over} and more are refused"
        )
    return problems


def _failure(result: LiveRun, timeout: float) -> str:
    """Why a run failed, in structure only ("" when it succeeded)."""
    if result.timed_out:
        return f"run() did not return within {timeout:g} s"
    return outcome_summary(result.response, result.error)


def _conflict(ctx: ProbeContext, runs: _Runs, result: LiveRun) -> None:
    """The suite's config already sets a system prompt and the driver refused the append
    for it: not the driver's fault. The refusal must still come first, and the refusals
    upstream orders before the conflict still hold; then SYS-01..03 are skipped."""
    refusal = refusal_of(result.error)
    argument = str(getattr(refusal, "argument", "") or "")
    named = f"argument {argument!r}" if argument else "the driver did not name the argument"
    problems = verify_refusal(
        ctx.descriptor.type,
        result,
        (_Reason.CONFLICTING_EXTRA_ARGS,),
        "an append while the config's extra arguments set a system prompt",
    )
    problems += _order_problems(runs, declared=True)
    for problem in problems:
        ctx.fail("SYS-01", problem)
    reason = (
        "the suite's config already sets a system prompt: run() refused the append with "
        f"conflicting_extra_args ({named}), as upstream's rule asks"
    )
    if problems:
        ctx.skip(("SYS-02", "SYS-03"), f"{reason}, so no append was delivered")
        return
    ctx.skip(
        _SYS,
        f"{reason}, before anything reached the sink; pass a config without that argument "
        "to judge the append",
    )


def _accepted(runs: _Runs, main: LiveRun, canary: str) -> list[str] | None:
    """SYS-01 for a declared append on the streaming run; None when the run fails with
    an append and without one (LIV-01 judges that; the clauses are skipped)."""
    ctx = runs.ctx
    problems = _refused_declared(main, "the append") or _echoed(main, canary)
    failed = "" if problems else _failure(main, ctx.options.live_run_timeout)
    if not failed:
        return problems
    # Did the append break it? A plain run tells; without one, LIV-01 judges it.
    again = runs.run(system_prompt_request(ctx.options, ""), "run()")
    without = _failure(again, ctx.options.live_run_timeout)
    if without:
        ctx.skip(
            _SYS,
            f"the run fails with an append ({failed}) and without one ({without}), so "
            "acceptance cannot be shown (LIV-01 judges the failure)",
        )
        return None
    return [f"the run fails with an append ({failed}) and succeeds without one"]


def _batch_problems(runs: _Runs, batch: _Delivered, canary: str) -> list[str]:
    """SYS-01 on the run without streaming: taken, successful, not shown. When it fails
    and the same batch run without an append fails too, the append is not to blame:
    a note says so and SYS-02 does not judge the batch run (``batch.requests`` None)."""
    ctx = runs.ctx
    result = batch.result
    problems = _refused_declared(result, "the append of a run without streaming")
    problems = problems or _echoed(result, canary)
    failed = "" if problems else _failure(result, ctx.options.live_run_timeout)
    if failed:
        plain = runs.run(system_prompt_request(ctx.options, "", streaming=False), "run()")
        without = _failure(plain, ctx.options.live_run_timeout)
        if without:
            ctx.note(
                f"the run with streaming=False fails with an append ({failed}) and without "
                f"one ({without}), so the batch path's append is not judged",
                clauses=("SYS-01", "SYS-02"),
            )
            batch.requests = None
        else:
            problems.append(
                f"the run with an append and streaming=False fails ({failed}) and succeeds "
                "without one: the batch path must take the append too"
            )
    return problems + verify_not_shown(result, canary)


def _judge_delivery(
    ctx: ProbeContext, text: str, canary: str, runs: Sequence[tuple[str, _Delivered]]
) -> None:
    """SYS-02 over the model requests of each run that delivered the append."""
    for label, delivered in runs:
        requests = delivered.requests
        if isinstance(requests, str):
            ctx.fail("SYS-02", requests)
            continue
        if requests is None:
            continue
        problems, notes = verify_append_delivered(requests, text, canary, label)
        for problem in problems:
            ctx.fail("SYS-02", problem)
        for note in notes:
            ctx.note(note, clauses=("SYS-02",))
    ctx.judge("SYS-02")


def _judge_session(ctx: ProbeContext, runs: _Runs, main: LiveRun, text: str) -> None:
    """SYS-03: the fingerprint in the checkpoint, and a resume with another append
    refused before anything reached the sink."""
    if not ctx.descriptor.sessions.supports_resume:
        ctx.skip(("SYS-03",), "the descriptor does not declare sessions.supports_resume")
        return
    response = main.response
    checkpoint = response.checkpoint if response is not None else None
    if response is None or checkpoint is None or not checkpoint.valid or checkpoint.state is None:
        ctx.skip(
            ("SYS-03",),
            "the run with an append returned no valid checkpoint with state, so there is no "
            "session to check (LIV-03 judges checkpoints)",
        )
        return
    for problem in verify_append_fingerprint(response, text):
        ctx.fail("SYS-03", problem)
    other = append_text(f"adaptertest-canary-{uuid.uuid4().hex}")
    ctx.withhold(other)
    request = system_prompt_request(ctx.options, other)
    request.session = SessionContext(state=checkpoint.state.model_copy(deep=True))
    what = "resuming that checkpoint with a different append"
    resumed = runs.run(request, f"run() {what}")
    if resumed.timed_out or resumed.error is None:
        got = "did not return" if resumed.timed_out else "returned a Response"
        ctx.fail(
            "SYS-03",
            f"{what} {got}: a session captured under one append must not be resumed under "
            "another (refuse it before launch)",
        )
    else:
        emitted = _emitted(resumed)
        if emitted:
            ctx.fail(
                "SYS-03",
                f"{what} raised {error_type(resumed.error)} only after {emitted} reached "
                "the sink: refuse it before launch",
            )
    ctx.judge("SYS-03")


def probe_system_prompt(ctx: ProbeContext) -> None:
    """Run the live request with a canary append and judge SYS-01..03, OBS-01 and OBS-07."""
    options = ctx.options
    if not options.live_enabled:
        ctx.skip((*_SYS, *_OBS), options.live_skip_reason)
        return
    declared = ctx.descriptor.system_prompt.append
    canary = f"adaptertest-canary-{uuid.uuid4().hex}"
    text = append_text(canary)
    ctx.withhold(text, canary)
    runs = _Runs(ctx, declared and options.model_requests is not None)
    request = system_prompt_request(options, text)
    streamed = runs.deliver(request, "streaming run")
    main = streamed.result
    judge_observations(ctx, ctx.report, ctx.descriptor.observation.streaming, main, request)
    refusal = refusal_of(main.error)
    if declared and refusal is not None and _reason(refusal) == _Reason.CONFLICTING_EXTRA_ARGS:
        _conflict(ctx, runs, main)
        return
    if declared:
        accepted = _accepted(runs, main, canary)
        if accepted is None:
            return
        problems = accepted
    else:
        problems = verify_append_refused(ctx.descriptor.type, main)
    problems += verify_not_shown(main, canary)
    problems += _order_problems(runs, declared)
    batch: _Delivered | None = None
    if declared and not problems:
        batch = runs.deliver(system_prompt_request(options, text, streaming=False), "batch run")
        problems += _batch_problems(runs, batch, canary)
        problems += _limit_problems(runs, canary)
    for problem in problems:
        ctx.fail("SYS-01", problem)
    ctx.judge("SYS-01")
    if not declared:
        ctx.skip(
            ("SYS-02", "SYS-03"),
            "the descriptor does not declare system_prompt.append, so no append is delivered "
            "(SYS-01 judges the refusal)",
        )
        return
    if problems or batch is None:
        ctx.skip(("SYS-02", "SYS-03"), "the runs with an append failed SYS-01")
        return
    if options.model_requests is None:
        ctx.skip(
            ("SYS-02",),
            "the model side is not visible: pass Options(model_requests=...) (for example "
            "lambda: emulator.requests) to check where the appended text arrives",
        )
    else:
        _judge_delivery(ctx, text, canary, [("streaming run", streamed), ("batch run", batch)])
    _judge_session(ctx, runs, main, text)
