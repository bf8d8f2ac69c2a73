"""SYS family (Python extension): the appended system prompt (SYS-01, SYS-02).

``Request.append_system_prompt`` is text the host wants added to the agent's own system
prompt. A driver declares ``Descriptor.system_prompt.append`` when its CLI has a native
way to append (Claude Code's ``--append-system-prompt-file``, codex's
``developer_instructions``); it then passes the text unchanged to that mechanism and
never folds it into the prompt. A driver without one refuses a non-empty append with
``SystemPromptUnsupportedError`` before anything starts.

The ``system_prompt`` probe runs the live request once more with a unique canary as the
append (and no observation demand, so OBS-01 also judges that no fact appears
unasked):

- SYS-01: an undeclared append must be refused with the dedicated error, reason
  ``unsupported``, naming the driver, with nothing emitted (the sink stays empty, so no
  process was started and nothing was reported); a declared one must be accepted, the
  run must succeed, and the canary must not show up in a user transcript item (where a
  CLI echoes the prompt it was given).
- SYS-02: with ``Options(model_requests=...)`` (the model side, such as the model-API
  emulator's recorded requests), the appended text must reach the system text of at
  least one request made during the run and the user text of none. Without the model
  side the clause is skipped: only the model sees where the text went.

It runs the provider, so both clauses need ``live_run=True``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import NoReturn

from adaptertest._calls import describe_error, describe_hang
from adaptertest._probe import ProbeAbort, ProbeContext
from adaptertest.liv import LiveRun, error_type, live_request, outcome_summary, run_on_loop
from adaptertest.obs import verify_observation_support
from adaptertest.options import ModelRequest, Options
from driver.errors import SystemPromptUnsupportedError, SystemPromptUnsupportedReason, error_matches
from driver.run import ObservationDemand, Request
from driver.transcript import TranscriptKind

__all__ = [
    "SYSTEM_PROMPT_RUN_ID",
    "append_text",
    "probe_system_prompt",
    "system_prompt_request",
    "verify_append_delivered",
    "verify_append_refused",
]

SYSTEM_PROMPT_RUN_ID = "adaptertest-system-prompt"
_SYS = ("SYS-01", "SYS-02")


def append_text(canary: str) -> str:
    """The text the probe appends: one harmless line carrying ``canary``."""
    return f"(adaptertest marker {canary}: this line needs no action.)"


def system_prompt_request(options: Options, text: str) -> Request:
    """The live request with ``text`` as its append, its own run id and no demand."""
    request = live_request(
        options.config, options.live_prompt, options.workspace, ObservationDemand()
    )
    request.run_id = SYSTEM_PROMPT_RUN_ID
    request.append_system_prompt = text
    return request


def verify_append_refused(driver_type: str, result: LiveRun) -> list[str]:
    """SYS-01 for a driver that does not declare the append: what is wrong (empty: none)."""
    problems: list[str] = []
    error = result.error
    if result.timed_out:
        return ["run() did not return: an undeclared append must be refused at once"]
    if error is None or not error_matches(error, SystemPromptUnsupportedError):
        got = "returned a Response" if error is None else f"raised {error_type(error)}"
        problems.append(
            "the descriptor does not declare system_prompt.append, yet run() with a "
            f"non-empty append_system_prompt {got} instead of raising "
            "SystemPromptUnsupportedError"
        )
    else:
        refusal = _refusal(error)
        reason = str(getattr(refusal, "reason", ""))
        if reason != SystemPromptUnsupportedReason.UNSUPPORTED:
            problems.append(
                f"SystemPromptUnsupportedError has reason {reason!r}, expected 'unsupported' "
                "(the descriptor declares no append at all)"
            )
        named = getattr(refusal, "driver", "")
        if named != driver_type:
            problems.append(
                f"SystemPromptUnsupportedError names driver {named!r}, expected the "
                f"descriptor type {driver_type!r}"
            )
    if result.events or result.stream:
        problems.append(
            f"{len(result.events)} run event(s) and {len(result.stream)} stream payload(s) "
            "reached the sink: the refusal must come before anything starts"
        )
    return problems


def _refusal(error: BaseException) -> BaseException:
    """The SystemPromptUnsupportedError in ``error``'s chain (``error`` itself if none)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, SystemPromptUnsupportedError):
            return current
        seen.add(id(current))
        cause = getattr(current, "cause", None)
        current = current.__cause__ or (cause if isinstance(cause, BaseException) else None)
    return error


def _refused_declared(result: LiveRun) -> list[str]:
    """SYS-01 for a driver that declares the append: it must not refuse it."""
    error = result.error
    if error is not None and error_matches(error, SystemPromptUnsupportedError):
        reason = str(getattr(_refusal(error), "reason", ""))
        return [
            "the descriptor declares system_prompt.append, yet run() refused the append "
            f"with SystemPromptUnsupportedError (reason {reason!r})"
        ]
    return []


def _failure(result: LiveRun, timeout: float) -> str:
    """Why a run failed, in structure only ("" when it succeeded)."""
    if result.timed_out:
        return f"run() did not return within {timeout:g} s"
    return outcome_summary(result.response, result.error)


def _echoed(result: LiveRun, canary: str) -> list[str]:
    """SYS-01: the canary in a user transcript item means the text went into the prompt."""
    response = result.response
    if response is None:
        return []
    echoed = [
        str(index)
        for index, item in enumerate(response.transcript)
        if item.kind == TranscriptKind.USER and canary in item.text
    ]
    if not echoed:
        return []
    return [
        f"the appended text shows up in user transcript item(s) {', '.join(echoed)}: it "
        "was folded into the prompt instead of the CLI's system-prompt mechanism"
    ]


def verify_append_delivered(
    requests: Sequence[object], text: str, canary: str
) -> tuple[list[str], list[str]]:
    """SYS-02 over the model requests one run made: (problems, notes).

    The full ``text`` must be in the system text of at least one request; the
    ``canary`` must be in no user text. A request without ``str`` fields is a problem
    of the option, reported as such.
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
            "the model side recorded no request during the run: Options.model_requests "
            "must see the model the driver's CLI talks to"
        )
    if in_user:
        problems.append(
            f"the appended text reached the user text of request(s) "
            f"{', '.join(map(str, in_user))} of {count}: it was folded into the prompt"
        )
    if count and not in_system:
        where = f"; request(s) {', '.join(map(str, altered))} carry it changed" if altered else ""
        problems.append(
            f"the appended text is in the system text of none of the run's {count} model "
            f"request(s){where}: it must reach the model unchanged"
        )
    notes = [f"appended text found in the system text of {len(in_system)} of {count} request(s)"]
    return problems, notes


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
    call that ignored cancellation): LIV-01 judges that, so the SYS clauses are skipped."""

    def stop(clause: str, message: str) -> NoReturn:
        ctx.skip((*_SYS, "OBS-01"), f"{message}, so nothing can be judged (see LIV-01)")
        raise ProbeAbort(clause)

    return stop


def probe_system_prompt(ctx: ProbeContext) -> None:
    """Run the live request with a canary append and judge SYS-01, SYS-02 and OBS-01."""
    options = ctx.options
    if not options.live_enabled:
        ctx.skip((*_SYS, "OBS-01"), options.live_skip_reason)
        return
    declared = ctx.descriptor.system_prompt.append
    canary = f"adaptertest-canary-{uuid.uuid4().hex}"
    text = append_text(canary)
    use_model = declared and options.model_requests is not None
    before: list[ModelRequest] = []
    if use_model:
        got = _snapshot(ctx, "before the run")
        if isinstance(got, str):
            ctx.fail("SYS-02", f"{got}")
            use_model = False
        else:
            before = got
    request = system_prompt_request(options, text)
    result = run_on_loop(ctx, request, "SYS-01", "run() with an append", fail=_stopper(ctx))
    if result.error is not None:
        ctx.trace(result.error, clauses=("SYS-01",))
    if declared:
        problems = _refused_declared(result) or _echoed(result, canary)
        failed = "" if problems else _failure(result, options.live_run_timeout)
        if failed:
            # Did the append break it? A plain run tells; without one, LIV-01 judges it.
            plain = system_prompt_request(options, "")
            again = run_on_loop(ctx, plain, "SYS-01", "run()", fail=_stopper(ctx))
            without = _failure(again, options.live_run_timeout)
            if without:
                ctx.skip(
                    (*_SYS, "OBS-01"),
                    f"the run fails with an append ({failed}) and without one ({without}), so "
                    "acceptance cannot be shown (LIV-01 judges the failure)",
                )
                return
            problems = [f"the run fails with an append ({failed}) and succeeds without one"]
    else:
        problems = verify_append_refused(ctx.descriptor.type, result)
    for problem in problems:
        ctx.fail("SYS-01", problem)
    ctx.judge("SYS-01")
    support = ctx.descriptor.observation.streaming
    for violation in verify_observation_support(support, result.stream, request.observation):
        ctx.fail("OBS-01", violation.message)
    ctx.judge("OBS-01")
    if not declared:
        ctx.skip(
            ("SYS-02",),
            "the descriptor does not declare system_prompt.append, so no append is delivered "
            "(SYS-01 judges the refusal)",
        )
        return
    if options.model_requests is None:
        ctx.skip(
            ("SYS-02",),
            "the model side is not visible: pass Options(model_requests=...) (for example "
            "lambda: emulator.requests) to check where the appended text arrives",
        )
        return
    if not use_model:
        return  # reading the model side failed; SYS-02 says why
    if problems:
        ctx.skip(("SYS-02",), "the run with an append failed SYS-01, so nothing was delivered")
        return
    after = _snapshot(ctx, "after the run")
    if isinstance(after, str):
        ctx.fail("SYS-02", f"{after}")
        return
    # The run's requests: those after the snapshot (all of them if the list was reset).
    made = after[len(before) :] if len(after) >= len(before) else after
    delivered, notes = verify_append_delivered(made, text, canary)
    for problem in delivered:
        ctx.fail("SYS-02", problem)
    for note in notes:
        ctx.note(note, clauses=("SYS-02",))
    ctx.judge("SYS-02")
