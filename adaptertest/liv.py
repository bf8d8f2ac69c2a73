"""LIV family: what a live run must achieve beyond structural validity (LIV-01..03).

Also home of the live probe's request (``live_request``), the SES-09 check that can
only be judged on a live checkpoint (``verify_session_profile_fingerprint``) and the
diagnostic (``live_diagnostic``) noted when a live probe fails.

The two live probes live here too (``probe_live_run``, ``probe_live_structured_output``):
each runs the driver once on its event loop under the live deadline, waits for whatever
the call left running (so a late emission is caught), then judges the outcome, the run
events, the stream and the response. A failed run is judged as well: only the clauses
that need a success (LIV-02, LIV-03, RSP-04, SES-09, SO-02) are skipped, and FLR-01
judges how it failed. Messages always show structure; provider text in them is withheld
unless ``Options(show_live_details=True)`` (see :mod:`adaptertest._violation`).
"""

from __future__ import annotations

import hashlib
import inspect
import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

import anyio

from adaptertest._calls import (
    LATE_WINDOW,
    Leftovers,
    describe_error,
    describe_hang,
    driver_location,
    is_driver_fault,
    is_unrequested_cancel,
    launch_failure,
)
from adaptertest._probe import ProbeContext, ReturnWatch
from adaptertest._shape import shape_problem
from adaptertest._violation import Violation, provider_text
from adaptertest.cap import structured_probe_plan
from adaptertest.clauses import CLAUSES
from adaptertest.evt import (
    verify_observation_sequence,
    verify_stream_capability,
    verify_stream_sequence,
)
from adaptertest.flr import verify_clean_failure, verify_expected_failure
from adaptertest.obs import DEMAND_OFF, demand_for, observation_verdicts
from adaptertest.options import DEFAULT_LIVE_PROMPT
from adaptertest.rcv import snapshot, verify_received, verify_returned
from adaptertest.rsp import is_valid_json, trim_space, verify_checkpoint_codec, verify_outcome
from adaptertest.run import verify_run_events, verify_transcript_mirror
from adaptertest.sink import RecordingSink
from adaptertest.so import (
    probe_value_matches,
    structured_request,
    verify_structured_output_value,
)
from adaptertest.usg import judge_usage
from driver.descriptor import ObservationSupport, StreamCapability
from driver.errors import RunError
from driver.events import RunEvent, StreamPayload
from driver.output import OutputFormat, StructuredOutputSource
from driver.profile import ProfilePayload
from driver.protocols import StreamSupport
from driver.run import ObservationDemand, Request, Response
from driver.runtime import WorkspaceLease
from driver.session import SESSION_PARAM_PROFILE_FINGERPRINT

__all__ = [
    "DEFAULT_LIVE_PROMPT",
    "FACTS_CLAUSES",
    "LIVE_METADATA",
    "LIVE_PROFILE_FINGERPRINT",
    "LIVE_RUN_ID",
    "LIVE_SESSION_FINGERPRINT",
    "LIVE_WORKSPACE_ID",
    "LOOP_SLACK",
    "LiveRun",
    "LiveVerdicts",
    "changed_fields",
    "error_type",
    "judge_run_products",
    "late_violations",
    "live_diagnostic",
    "live_request",
    "outcome_summary",
    "probe_live_run",
    "probe_live_structured_output",
    "run_in_scope",
    "run_on_loop",
    "run_once",
    "stream_plan",
    "verify_live_checkpoint",
    "verify_live_output",
    "verify_live_success",
    "verify_session_profile_fingerprint",
]

LIVE_RUN_ID = "adaptertest-live"
LIVE_WORKSPACE_ID = "adaptertest-ws"
LIVE_METADATA: dict[str, str] = {"adaptertest": "v1"}
LIVE_PROFILE_FINGERPRINT = "adaptertest-profile-concrete"
LIVE_SESSION_FINGERPRINT = "adaptertest-profile-session"

# The answer DEFAULT_LIVE_PROMPT asks for.
_DEFAULT_ANSWER = "OK"
_SHOWN_CHARS = 80
_TITLES = {clause.id: clause.title for clause in CLAUSES}


def live_request(
    config: object | None,
    prompt: str,
    workspace_cwd: str | None,
    observation: ObservationDemand | None = None,
) -> Request:
    """The request of the ``live_run`` probe: streaming, tagged metadata, a profile
    payload whose session fingerprint differs from its exact one (so SES-09 can tell
    which one the driver stored), and a workspace lease when a cwd is given.

    ``prompt`` is sent byte for byte. ``observation`` is the facts it demands (none
    when not given); the ``live_run`` probe demands what the descriptor declares for
    the streaming transport.
    """
    request = Request(
        run_id=LIVE_RUN_ID,
        prompt=prompt,
        config=config,
        streaming=True,
        metadata=dict(LIVE_METADATA),
        profile_payload=ProfilePayload(
            fingerprint=LIVE_PROFILE_FINGERPRINT,
            session_compatibility_fingerprint=LIVE_SESSION_FINGERPRINT,
        ),
        observation=observation or ObservationDemand(),
    )
    if workspace_cwd is not None:
        request.workspace = WorkspaceLease(id=LIVE_WORKSPACE_ID, cwd=workspace_cwd)
    return request


def _outcome_parts(
    response: Response | None, error: BaseException | None, *, detail: bool
) -> list[str]:
    """What makes an outcome a failure; ``detail`` adds where the driver raised and the
    (marked) exception and failure messages."""
    parts: list[str] = []
    launch = None if error is None else launch_failure(error)
    if error is not None:
        brief = f"run() raised {error_type(error)}"
        if launch is not None and detail:
            # The OS's own words: shown as they are, there is no provider text to withhold.
            where = driver_location(error)
            brief += f"{f' at {where}' if where else ''}: {launch}"
        parts.append(describe_error("run()", error) if detail and launch is None else brief)
    if response is None:
        parts.append("no Response")
        return parts
    if response.exit_code != 0:
        parts.append(f"exit_code={response.exit_code}")
    if response.signal != "":
        parts.append(f"signal={response.signal!r}")
    if response.timed_out:
        parts.append("timed_out=True")
    failure = response.failure
    if failure is not None:
        code = f"failure {str(failure.code)!r}"
        if detail and launch is not None and failure.message == str(error):
            parts.append(f"{code}: the same")
        else:
            parts.append(f"{code}: {provider_text(failure.message)}" if detail else code)
    return parts


def outcome_summary(response: Response | None, error: BaseException | None) -> str:
    """Why a run counts as failed, in structure only (for skip reasons): "" on success."""
    return ", ".join(_outcome_parts(response, error, detail=False))


def verify_live_success(response: Response | None, error: BaseException | None) -> list[Violation]:
    """LIV-01: the run returned a response without raising, with exit code 0, no signal,
    no timeout and no failure. Judges only success; legality is ``verify_outcome``'s.

    The message names each reason, with where the driver raised and the exception and
    failure messages marked as provider text."""
    parts = _outcome_parts(response, error, detail=True)
    if not parts:
        return []
    return [Violation("LIV-01", f"live run did not succeed: {'; '.join(parts)}")]


def verify_live_output(response: Response, prompt: str, expected: str | None) -> list[Violation]:
    """LIV-02: with an expectation, the trimmed output equals the trimmed expectation
    (``""`` included); without one, the default prompt must be answered with ``OK``;
    a custom prompt without an expectation gets no text check."""
    if expected is not None:
        want = trim_space(expected)
    elif prompt == DEFAULT_LIVE_PROMPT:
        want = _DEFAULT_ANSWER
    else:
        return []
    got = trim_space(response.output)
    if got == want:
        return []
    shown_want = repr(want) if len(want) <= _SHOWN_CHARS else f"{want[:_SHOWN_CHARS]!r}..."
    return [
        Violation(
            "LIV-02",
            f"trimmed output ({len(got)} chars) is {provider_text(got, limit=_SHOWN_CHARS)}, "
            f"expected {shown_want} ({len(want)} chars)",
        )
    ]


def verify_live_checkpoint(resumable: bool, response: Response | None) -> list[Violation]:
    """LIV-03: a driver that declares resume returns a valid checkpoint whose state has a
    non-empty resume_id. Nothing is required of other drivers."""
    if not resumable:
        return []
    checkpoint = None if response is None else response.checkpoint
    if checkpoint is None:
        problem = "no checkpoint"
    elif not checkpoint.valid:
        problem = "checkpoint.valid=False"
    elif checkpoint.state is None:
        problem = "checkpoint without state"
    elif checkpoint.state.resume_id == "":
        problem = "checkpoint state with an empty resume_id"
    else:
        return []
    return [Violation("LIV-03", f"resume-capable driver returned {problem}")]


def verify_session_profile_fingerprint(request: Request, response: Response) -> list[Violation]:
    """SES-09 (judged in ``live_run``): a valid checkpoint with state stores
    ``request.profile_payload.session_fingerprint()`` under ``data["profile_fingerprint"]``.

    No valid checkpoint means nothing to judge (LIV-03 covers its absence).
    """
    checkpoint = response.checkpoint
    if checkpoint is None or not checkpoint.valid or checkpoint.state is None:
        return []
    want = request.profile_payload.session_fingerprint()
    key = SESSION_PARAM_PROFILE_FINGERPRINT
    got = checkpoint.state.data.get(key)
    if got == want:
        return []
    if got is None:
        observed = f"has no data[{key!r}]"
    elif got == request.profile_payload.fingerprint:
        observed = f"stores the exact profile fingerprint {got!r} under data[{key!r}]"
    else:
        observed = f"stores {got!r} under data[{key!r}]"
    return [Violation("SES-09", f"checkpoint state {observed}, expected {want!r}")]


# ------------------------------------------------------------------------------------
# Diagnostic
# ------------------------------------------------------------------------------------

_TEXT_LIMIT = 2000
"""Characters of a text field the diagnostic shows when details are on."""


def _text_bytes(text: str) -> bytes:
    try:
        return text.encode("utf-8", errors="surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", errors="surrogatepass")


def _digest(data: bytes | str, show: bool = False) -> dict[str, object]:
    """A text field: its size and sha256, and with ``show`` the text itself (cut short)."""
    raw = _text_bytes(data) if isinstance(data, str) else data
    if show:
        text = raw.decode("utf-8", "backslashreplace")
        cut = text[:_TEXT_LIMIT] + ("..." if len(text) > _TEXT_LIMIT else "")
        return {"bytes": len(raw), "text": cut}
    return {"bytes": len(raw), "sha256": hashlib.sha256(raw).hexdigest()}


def _error_type(error: BaseException | None) -> str:
    if error is None:
        return ""
    cls = type(error)
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def _structured_section(response: Response | None, show: bool) -> dict[str, object]:
    so = None if response is None else response.structured_output
    section: dict[str, object] = {"structured_present": so is not None}
    if so is None:
        return section
    section.update(
        structured_native=so.source == StructuredOutputSource.NATIVE,
        structured_valid=so.valid,
        structured_json=_digest(so.raw_json, show),
        structured_json_valid=is_valid_json(so.raw_json),
        probe_value_matches=probe_value_matches(so.raw_json),
        value_present=so.value is not None,
        validation_errors=len(so.validation_errors),
    )
    return section


def live_diagnostic(
    response: Response | None,
    error: BaseException | None,
    *,
    structured: bool,
    show: bool = False,
) -> dict[str, object]:
    """A JSON-ready summary of a live outcome.

    Provider-controlled text (output, stdout, stderr, signal, failure code and message,
    terminal event and JSON, structured JSON, the exception message) appears as
    ``{"bytes", "sha256"}`` of its complete bytes, or with ``show`` as ``{"bytes",
    "text"}``; everything else is a flag, a count, the exit code, the exception's type
    name and where the driver raised it. ``structured`` adds the structured-output
    section used by the ``live_structured_output`` probe.
    """
    diag: dict[str, Any] = {
        "probe": "live_structured_output" if structured else "live_run",
        "response_present": response is not None,
        "error_type": _error_type(error),
    }
    if error is not None:
        diag["error_at"] = driver_location(error) or ""
        diag["error_message"] = _digest(str(error), show)
    if response is not None:
        failure = response.failure
        raw = response.raw_streams
        terminal = None if raw is None else raw.terminal
        checkpoint = response.checkpoint
        diag.update(
            exit=response.exit_code,
            signal=_digest(response.signal, show),
            timed_out=response.timed_out,
            failure=failure is not None,
            failure_code=None if failure is None else _digest(str(failure.code), show),
            failure_message=None if failure is None else _digest(failure.message, show),
            output=_digest(response.output, show),
            transcript_items=len(response.transcript),
            raw_present=raw is not None,
            stdout=None if raw is None else _digest(raw.stdout, show),
            stderr=None if raw is None else _digest(raw.stderr, show),
            terminal_present=terminal is not None,
            terminal_event=None if terminal is None else _digest(terminal.event, show),
            terminal_json=None if terminal is None else _digest(terminal.raw_json, show),
            terminal_json_valid=terminal is not None and is_valid_json(terminal.raw_json),
            checkpoint=checkpoint is not None,
            checkpoint_valid=checkpoint is not None and checkpoint.valid,
            resume_id_present=checkpoint is not None
            and checkpoint.state is not None
            and checkpoint.state.resume_id != "",
        )
    if structured:
        diag.update(_structured_section(response, show))
    return diag


# ------------------------------------------------------------------------------------
# Running the provider once
# ------------------------------------------------------------------------------------

LOOP_SLACK = 1.0 + LATE_WINDOW
"""Seconds the bounded loop call adds to the live deadline: sealing, and waiting up to
:data:`~adaptertest._calls.LATE_WINDOW` for what the call left running."""

RunCallable = Callable[..., Any]


@dataclass
class LiveRun:
    """What one ``run`` call did, captured on the driver's loop.

    ``value`` is whatever ``run`` returned (type-checked by the probe), ``error`` what
    it raised. ``events`` and ``stream`` are the sink's contents once what the call left
    running has settled; ``late`` counts the emissions that arrived after ``run``
    returned, ``late_delays`` says how long after (the first and the last, in seconds).
    """

    value: object = None
    error: BaseException | None = None
    timed_out: bool = False
    elapsed: float = 0.0
    events: list[RunEvent] = field(default_factory=list)
    stream: list[StreamPayload] = field(default_factory=list)
    late: int = 0
    late_delays: tuple[float, float] = (0.0, 0.0)
    sink: RecordingSink | None = None
    returned: object = None
    """The object ``run`` returned itself; ``value`` is its snapshot at the return."""
    returned_at: float = 0.0
    """``time.monotonic()`` when ``run`` returned."""
    leftovers: Leftovers | None = None
    """What was running before the call (so what the call left running can be found)."""
    loop: object = None
    """The token of the loop the call ran on."""
    emitted_events: list[tuple[RunEvent, RunEvent]] = field(default_factory=list)
    emitted_stream: list[tuple[StreamPayload, StreamPayload]] = field(default_factory=list)

    @property
    def events_now(self) -> list[RunEvent]:
        """The emitted run events as they are now (the mirror compares these with the
        transcript; RCV-01 reports any difference from what was emitted)."""
        return [now for _, now in self.emitted_events]

    @property
    def response(self) -> Response | None:
        """The returned response, or the one a ``RunError`` carried."""
        if isinstance(self.value, Response):
            return self.value
        if isinstance(self.error, RunError) and isinstance(self.error.response, Response):
            return self.error.response
        return None

    @property
    def wrong_type(self) -> bool:
        """``run`` returned in time, without raising, something that is not a Response."""
        return not self.timed_out and self.error is None and not isinstance(self.value, Response)

    @property
    def malformed(self) -> str | None:
        """Why the response is not a well-formed Response (it may have bypassed validation)."""
        response = self.response
        return None if response is None else shape_problem(response, Response)

    def capture(self, sink: RecordingSink) -> None:
        """Take the sink's contents (call once what the call left running has settled)."""
        self.sink = sink
        self.events = sink.events
        self.stream = sink.stream
        self.late = sink.late_count
        self.late_delays = sink.late_delays
        self.emitted_events = sink.emitted_events
        self.emitted_stream = sink.emitted_stream

    def received_violations(self, label: str = "run()") -> list[Violation]:
        """RCV-01 and RCV-02: what was emitted or returned changed afterwards."""
        seen = f"seen {time.monotonic() - self.returned_at:.1f} s after it returned"
        return [
            *verify_received(self.emitted_events, self.emitted_stream),
            *verify_returned(self.returned, self.value, label, seen=seen),
        ]

    def watch_returned(self, ctx: ProbeContext, label: str = "run()") -> None:
        """Look at the returned response again when RCV-02's verdict is read, unless this
        look found it changed already (or there is nothing to compare)."""
        if self.returned is None or self.returned is self.value:
            return
        if verify_returned(self.returned, self.value, label):
            return  # reported by the first look
        kept = snapshot(self.value)  # private: the checks share ``value``
        watch = ReturnWatch(
            "RCV-02", self.returned, kept, self.returned_at, label, self.leftovers, self.loop
        )
        ctx.watch_returned(watch)


async def run_once(
    run: RunCallable, request: Request, sink: RecordingSink, timeout: float
) -> LiveRun:
    """Call ``run(request, sink)`` within ``timeout`` seconds, then seal the sink.

    A raised exception is data. The deadline passing before ``run`` returned counts as
    a timeout even when the driver swallowed the cancellation and returned anyway.
    """
    scope = anyio.CancelScope(deadline=anyio.current_time() + timeout)
    return await run_in_scope(run, request, sink, scope)


async def run_in_scope(
    run: RunCallable, request: Request, sink: RecordingSink, scope: anyio.CancelScope
) -> LiveRun:
    """Call ``run(request, sink)`` inside ``scope`` (its deadline, or whoever cancels
    it), then seal the sink. ``timed_out`` says the scope was cancelled before ``run``
    returned, even when the driver swallowed the cancellation and returned anyway."""
    result = LiveRun()
    start = time.perf_counter()
    with scope:
        try:
            value = run(request, sink)
            if inspect.isawaitable(value):
                value = await value
            # Judged as it was at the return; RCV-02 compares it with the object later.
            result.returned = value
            result.returned_at = time.monotonic()
            result.value = snapshot(value)
        except BaseException as exc:
            if not is_driver_fault(exc) and not is_unrequested_cancel(exc, scope):
                raise
            result.error = exc
    sink.seal()
    result.timed_out = scope.cancel_called
    result.elapsed = time.perf_counter() - start
    return result


async def run_settled(run: RunCallable, request: Request, timeout: float) -> LiveRun:
    """:func:`run_once` with a fresh sink, then wait for what the call left running and
    capture the sink (on the driver's loop)."""
    sink = RecordingSink()
    leftovers = Leftovers()
    result = await run_once(run, request, sink, timeout)
    await leftovers.settle()
    result.capture(sink)
    result.leftovers, result.loop = leftovers, anyio.lowlevel.current_token()
    return result


def late_violations(result: LiveRun, clause: str = "EVT-02") -> list[Violation]:
    """``clause`` for emissions that reached the sink after ``run`` returned."""
    if not result.late:
        return []
    first, last = (round(delay * 1000) for delay in result.late_delays)
    when = f"{first} ms after" if result.late == 1 else f"{first} to {last} ms after"
    return [
        Violation(
            clause,
            f"{result.late} emission(s) reached the sink {when} run() returned: a driver "
            "must not keep its sink once run() returns",
        )
    ]


def judge_run_products(
    verdicts: LiveVerdicts,
    result: LiveRun,
    rich: bool,
    capability: StreamCapability | None,
) -> None:
    """Judge what one run produced by the rules that hold whatever it was asked and
    however it ended: nothing emitted after it returned (EVT-02), the response's
    legality (TRN-01..04, RSP-01..03, RSP-05), the run events (RUN-01..03), the stream
    (rich: the EVT lifecycle and EVT-12, else the facts-only rules) and the transcript
    mirror (RUN-04). CON-01 and the scenario engine judge each of their runs with it,
    so a rule has one implementation however many probes apply it."""
    verdicts.report(late_violations(result))
    response, error = result.response, result.error
    if response is not None:
        verdicts.report(verify_outcome(response, error))
    verdicts.report(verify_run_events(result.events))
    if response is None and not result.stream:
        return  # it raised before emitting anything: no stream to judge
    if rich:
        verdicts.report(verify_stream_sequence(result.stream))
        if capability is not None:
            verdicts.report(verify_stream_capability(capability, result.stream))
    else:
        verdicts.report(verify_observation_sequence(result.stream))
    if response is not None:
        verdicts.report(verify_transcript_mirror(result.events_now, response.transcript))


def stream_plan(
    ctx: ProbeContext, obj: object | None = None
) -> tuple[bool, StreamCapability | None]:
    """Whether the rich stream checks apply (the driver, or ``obj``, implements
    StreamSupport), and its stream capability from one bounded call (None when that call
    fails)."""
    if not ctx.implements(StreamSupport, obj):
        return False, None
    method = ctx.method("stream_capability", obj)
    if method is None:
        return True, None
    outcome = ctx.attempt(method, awaitable=False)
    if outcome.ok and isinstance(outcome.value, StreamCapability):
        return True, outcome.value
    return True, None


def error_type(error: BaseException) -> str:
    """The qualified type name of ``error``: safe to print, unlike its message."""
    return _error_type(error) or type(error).__qualname__


def changed_fields(request: Request, pristine: Request) -> list[str]:
    """Top-level fields of ``request`` that differ from the copy that was never sent."""
    changed: list[str] = []
    for name in type(request).model_fields:
        try:
            same = bool(getattr(request, name) == getattr(pristine, name))
        except Exception:  # noqa: BLE001 - a config with a raising __eq__ counts as kept
            same = True
        if not same:
            changed.append(name)
    return changed


class LiveVerdicts:
    """Records a live probe's verdicts.

    Messages keep their provider text marked; the probe context spells it out only
    with ``show_live_details``. With ``into`` set, every verdict becomes a violation of
    that clause, prefixed with ``label`` and the inner clause (CON-01); ``titled`` also
    names what the inner clause is about, for readers of a clause that is not about it
    (a scenario's). :meth:`finish` adds the diagnostic once anything failed.
    """

    def __init__(
        self,
        ctx: ProbeContext,
        *,
        structured: bool,
        into: str | None = None,
        label: str = "",
        titled: bool = False,
    ) -> None:
        self.ctx = ctx
        self.structured = structured
        self.into = into
        self.label = label
        self.titled = titled
        self.failed = False
        self.run: LiveRun | None = None
        self._seen: set[tuple[str, str]] = set()

    def fail(self, clause: str, message: str) -> None:
        """Record a violation (repeats folded). With ``into``, ``clause`` is the inner
        tag ("" for what the suite itself observed of the call)."""
        self.failed = True
        if (clause, message) in self._seen:
            return
        self._seen.add((clause, message))
        if self.into is None:
            self.ctx.fail(clause, message)
        elif self.titled and clause in _TITLES:
            broke = f"{self.label} broke {clause} ({_TITLES[clause]})"
            self.ctx.fail(self.into, f"{broke}: {message}")
        else:
            tag = f"{clause}: " if clause else ""
            self.ctx.fail(self.into, f"{self.label}: {tag}{message}")

    def report(self, violations: Iterable[Violation], *, judge: Sequence[str] = ()) -> None:
        """Judge ``judge`` and record a verifier's violations."""
        if self.into is None:
            self.ctx.judge(*judge)
        for violation in violations:
            self.fail(violation.clause, violation.marked or violation.message)

    def stop(self, clause: str, message: str) -> NoReturn:
        """Record a violation and end the probe (only without ``into``)."""
        self.failed = True
        self._seen.add((clause, message))
        self.ctx.fatal(clause, message)

    def finish(self) -> None:
        """Add the diagnostic if anything failed."""
        if not self.failed:
            return
        run = self.run
        diagnostic = live_diagnostic(
            None if run is None or run.malformed is not None else run.response,
            None if run is None else run.error,
            structured=self.structured,
            show=self.ctx.options.show_live_details,
        )
        where = f" ({self.label})" if self.label else ""
        self.ctx.note(f"live diagnostic{where}: {json.dumps(diagnostic, sort_keys=True)}")


# ------------------------------------------------------------------------------------
# The live_run and live_structured_output probes
# ------------------------------------------------------------------------------------

_OUTCOME_CLAUSES = ("TRN-01", "TRN-02", "TRN-03", "TRN-04", "RSP-01", "RSP-02", "RSP-03", "RSP-05")
_RUN_EVENT_CLAUSES = ("RUN-01", "RUN-02", "RUN-03", "TRN-01", "TRN-02", "TRN-03", "TRN-04")
FACTS_CLAUSES = ("EVT-09", "EVT-10", "EVT-14", "OBS-02", "OBS-03", "OBS-04", "OBS-05", "OBS-06")
"""What the facts-only stream verifier judges."""
_RICH_ONLY = (
    "EVT-01", "EVT-02", "EVT-03", "EVT-04", "EVT-05", "EVT-06", "EVT-07", "EVT-08",
    "EVT-11", "EVT-13",
)  # fmt: skip
_NO_STREAM_SUPPORT = (
    "the driver does not implement driver.StreamSupport, so its stream gets only the "
    "facts-only checks (EVT-09, EVT-10, EVT-14, OBS-02..06)"
)


def _clauses_of(probe: str) -> tuple[str, ...]:
    return tuple(c.id for c in CLAUSES if probe in c.probes)


def _has_checkpoint_state(response: Response) -> bool:
    checkpoint = response.checkpoint
    return checkpoint is not None and checkpoint.valid and checkpoint.state is not None


def run_on_loop(
    ctx: ProbeContext,
    request: Request,
    clause: str,
    label: str,
    *,
    fail: Callable[[str, str], NoReturn] | None = None,
) -> LiveRun:
    """Run the driver once on its loop under the live deadline, wait for what it left
    running, and capture its sink. A missing ``run``, a hang of the whole call or a
    suite error ends the probe as a ``clause`` violation (through ``fail``, default
    ``ctx.fatal``); ``label`` names the call in those messages."""
    stop = fail or ctx.fatal
    run = ctx.method("run")
    if run is None:
        stop(clause, f"{type(ctx.driver).__qualname__} has no callable run() method")
    timeout = ctx.options.live_run_timeout

    async def live() -> LiveRun:
        return await run_settled(run, request, timeout)

    outcome = ctx.runner.run_async(live, timeout=timeout + LOOP_SLACK)
    if outcome.timed_out:
        stop(clause, describe_hang(label, outcome, timeout))
    if outcome.error is not None:
        stop(clause, f"{label} raised {error_type(outcome.error)} in the suite")
    result: LiveRun = outcome.value
    return result


def _execute(
    ctx: ProbeContext, verdicts: LiveVerdicts, request: Request, pristine: Request
) -> LiveRun:
    """Run the driver once on its loop and wait for what it left running; a hang or a
    wrong return type ends the probe."""
    timeout = ctx.options.live_run_timeout
    result = run_on_loop(ctx, request, "LIV-01", "run()", fail=verdicts.stop)
    verdicts.run = result
    _notes(ctx, result, request, pristine)
    if result.timed_out:
        cancelled = ""
        if result.error is not None:
            cancelled = f"; cancelled, {describe_error('it', result.error)}"
        verdicts.stop("LIV-01", f"run() did not return within {timeout:g} s{cancelled}")
    if result.wrong_type:
        verdicts.stop(
            "LIV-01",
            f"run() returned {type(result.value).__qualname__}, expected driver.Response",
        )
    if result.malformed is not None:
        verdicts.stop("LIV-01", f"run() returned a malformed Response ({result.malformed})")
    return result


def _notes(ctx: ProbeContext, result: LiveRun, request: Request, pristine: Request) -> None:
    changed = changed_fields(request, pristine)
    if changed:
        ctx.note(
            f"run() changed the Request it was given ({', '.join(changed)}); every check "
            "compares against the request as it was sent"
        )
    error = result.error
    if isinstance(error, RunError) and error.response is not None and result.response is None:
        ctx.note(
            f"RunError.response is a {type(error.response).__qualname__}, not a "
            "driver.Response; it was ignored"
        )


def _judge_outcome(
    ctx: ProbeContext,
    verdicts: LiveVerdicts,
    result: LiveRun,
    failure_stream: list[StreamPayload] | None,
) -> str:
    """The response's legality, LIV-01 and FLR-01; returns why the run failed ("" when
    it succeeded). ``failure_stream`` is the stream FLR-01 judges (None: not a rich one)."""
    response, error = result.response, result.error
    if response is not None:
        verdicts.report(verify_outcome(response, error), judge=_OUTCOME_CLAUSES)
        judge_usage(verdicts, response, result.stream)
    else:
        ctx.skip(
            _OUTCOME_CLAUSES,
            f"the live run failed ({outcome_summary(None, error)}), so there is no response "
            "to judge",
        )
    expected = ctx.options.live_expect_failure
    failed = outcome_summary(response, error)
    if not failed:
        ctx.judge("LIV-01")
        verdicts.report(verify_expected_failure(expected) if expected is not None else [])
        ctx.judge("FLR-01")
        return ""
    if error is not None:
        ctx.trace(error, clauses=("LIV-01", "FLR-01"))
    if expected is None:
        verdicts.report(verify_live_success(response, error), judge=("LIV-01",))
    else:
        ctx.skip(
            ("LIV-01",),
            f"the live run failed ({failed}) as Options(live_expect_failure={expected!r}) "
            "expects; FLR-01 judges how it failed",
        )
    verdicts.report(verify_clean_failure(response, error, failure_stream), judge=("FLR-01",))
    return failed


def _skip_success_clauses(ctx: ProbeContext, failed: str, clauses: Sequence[str]) -> None:
    """Skip the clauses only a successful run can satisfy, naming the failure."""
    why = {
        "LIV-02": "there is no answer to check",
        "LIV-03": "it must offer no checkpoint (RSP-01 and FLR-01 judge that)",
        "RSP-04": "no checkpoint goes through the codec",
        "SES-09": "it stored no profile fingerprint to check",
        "SO-02": "there is no structured output to check",
    }
    for clause in clauses:
        ctx.skip((clause,), f"the live run failed ({failed}), so {why[clause]}")


def _judge_checkpoint_codec(ctx: ProbeContext, verdicts: LiveVerdicts, response: Response) -> None:
    if not _has_checkpoint_state(response):
        ctx.skip(
            ("RSP-04",),
            "the live run returned no valid checkpoint with state, so nothing goes through "
            "the codec",
        )
        return
    outcome = ctx.attempt(verify_checkpoint_codec, ctx.driver, response, awaitable=False)
    if outcome.timed_out:
        verdicts.fail(
            "RSP-04",
            describe_hang("the checkpoint codec round trip", outcome, ctx.options.probe_timeout),
        )
    elif outcome.error is not None:
        verdicts.fail(
            "RSP-04", f"the checkpoint codec round trip raised {error_type(outcome.error)}"
        )
    else:
        verdicts.report(outcome.value)
    ctx.judge("RSP-04")


def _nothing_streamed(ctx: ProbeContext, result: LiveRun, clauses: Sequence[str]) -> bool:
    """A run that raised without a response and emitted no payload has no stream to judge."""
    if result.response is not None or result.stream:
        return False
    ctx.skip(
        clauses,
        f"the live run failed ({outcome_summary(None, result.error)}) before emitting any "
        "stream payload, so there is no stream to judge",
    )
    return True


def _judge_stream(
    ctx: ProbeContext,
    verdicts: LiveVerdicts,
    result: LiveRun,
    rich: bool,
    capability: StreamCapability | None,
) -> None:
    stream = result.stream
    if not rich:
        if not _nothing_streamed(ctx, result, FACTS_CLAUSES):
            verdicts.report(verify_observation_sequence(stream), judge=FACTS_CLAUSES)
        ctx.skip((*_RICH_ONLY, "EVT-12"), _NO_STREAM_SUPPORT)
        return
    if _nothing_streamed(ctx, result, (*_RICH_ONLY, *FACTS_CLAUSES, "EVT-12")):
        return
    verdicts.report(verify_stream_sequence(stream), judge=(*_RICH_ONLY, *FACTS_CLAUSES))
    if capability is None:
        ctx.skip(
            ("EVT-12",),
            "stream_capability() did not return a StreamCapability (see CAP-10), so its "
            "negatives cannot be checked",
        )
    else:
        verdicts.report(verify_stream_capability(capability, stream), judge=("EVT-12",))


def _judge_late(ctx: ProbeContext, verdicts: LiveVerdicts, result: LiveRun) -> None:
    """EVT-02 for late emissions; the sink stays watched until the verdict is read."""
    verdicts.report(late_violations(result))
    if result.sink is not None:
        ctx.watch("EVT-02", result.sink)


def judge_observations(
    ctx: ProbeContext,
    report: Callable[..., None],
    support: ObservationSupport,
    result: LiveRun,
    pristine: Request,
) -> None:
    """OBS-01 over one live run's stream, and OBS-07 against the request's demand when
    ``Options.strict_observation_demand`` asks for it (skipped otherwise)."""
    strict = ctx.options.strict_observation_demand
    found, judged = observation_verdicts(
        support, result.stream, pristine.observation, strict=strict
    )
    report(found, judge=judged)
    if not strict:
        ctx.skip(("OBS-07",), DEMAND_OFF)


def probe_live_run(ctx: ProbeContext) -> None:
    """Run the provider once with the live request and judge everything it produced.

    Outcome legality, LIV-01 (or, under ``live_expect_failure``, a skip) and FLR-01;
    late emissions, run events, the stream (rich with StreamSupport, else facts only),
    OBS-01, RUN-04; then, for a successful run only, LIV-03, RSP-04, LIV-02, SES-09.
    """
    options = ctx.options
    if not options.live_enabled:
        ctx.skip(_clauses_of("live_run"), options.live_skip_reason)
        return
    demand = demand_for(ctx.descriptor.observation.streaming)
    request = live_request(options.config, options.live_prompt, options.workspace, demand)
    # Built apart from ``request`` (only the caller's config object is shared), so a
    # driver that mutates what it was given cannot change what the checks compare with.
    pristine = live_request(options.config, options.live_prompt, options.workspace, demand)
    verdicts = LiveVerdicts(ctx, structured=False)
    try:
        result = _execute(ctx, verdicts, request, pristine)
        rich, capability = stream_plan(ctx)
        failed = _judge_outcome(ctx, verdicts, result, result.stream if rich else None)
        _judge_late(ctx, verdicts, result)
        verdicts.report(result.received_violations(), judge=("RCV-01", "RCV-02"))
        result.watch_returned(ctx)
        verdicts.report(verify_run_events(result.events), judge=_RUN_EVENT_CLAUSES)
        _judge_stream(ctx, verdicts, result, rich, capability)
        judge_observations(
            ctx, verdicts.report, ctx.descriptor.observation.streaming, result, pristine
        )
        response = result.response
        if response is None:
            ctx.skip(("RUN-04",), f"the live run failed ({failed}), so there is no transcript")
        else:
            verdicts.report(
                verify_transcript_mirror(result.events_now, response.transcript),
                judge=("RUN-04",),
            )
        if failed or response is None:
            _skip_success_clauses(ctx, failed, ("LIV-02", "LIV-03", "RSP-04", "SES-09"))
            return
        _judge_success(ctx, verdicts, response, pristine)
    finally:
        verdicts.finish()


def _judge_success(
    ctx: ProbeContext, verdicts: LiveVerdicts, response: Response, pristine: Request
) -> None:
    """LIV-03, RSP-04, LIV-02 and SES-09 on a successful live run."""
    options = ctx.options
    resumable = ctx.descriptor.sessions.supports_resume
    verdicts.report(verify_live_checkpoint(resumable, response), judge=("LIV-03",))
    _judge_checkpoint_codec(ctx, verdicts, response)
    if options.live_expected_output is None and pristine.prompt != DEFAULT_LIVE_PROMPT:
        ctx.skip(
            ("LIV-02",),
            "a custom live_prompt has no known answer: pass "
            "Options(live_expected_output=...) to check the output",
        )
    else:
        verdicts.report(
            verify_live_output(response, pristine.prompt, options.live_expected_output),
            judge=("LIV-02",),
        )
    if _has_checkpoint_state(response):
        verdicts.report(verify_session_profile_fingerprint(pristine, response), judge=("SES-09",))
    else:
        ctx.skip(
            ("SES-09",),
            "the live run returned no valid checkpoint with state, so it stored no "
            "profile fingerprint",
        )


def _structured_overreach(request: Request) -> list[str]:
    """What the structured request would ask beyond native output on a batch run."""
    out: list[str] = []
    if request.streaming:
        out.append("streaming=True")
    if request.structured_output_source != StructuredOutputSource.NATIVE:
        out.append(f"structured_output_source={str(request.structured_output_source)!r}")
    schema = request.output_schema
    if schema is None or schema.format != OutputFormat.JSON_SCHEMA:
        out.append("no json_schema output_schema")
    return out


def probe_live_structured_output(ctx: ProbeContext) -> None:
    """Run the native structured-output request once (batch transport) and judge it.

    SO-03: it runs only on a declared native mechanism that works with ``run``, and
    its request asks for nothing else. Then LIV-01 and FLR-01, RSP-*, late emissions,
    the facts-only stream checks, OBS-01 against the batch support, and, for a
    successful run, LIV-03, RSP-04 and SO-02.
    """
    options = ctx.options
    clauses = _clauses_of("live_structured_output")
    if not options.live_enabled:
        ctx.skip(clauses, options.live_skip_reason)
        return
    if not options.live_structured_output:
        ctx.skip(
            clauses,
            "the native structured-output probe is off: pass "
            "Options(live_structured_output=True) (with live_run=True) to run it",
        )
        return
    plan = structured_probe_plan(ctx.descriptor)
    if plan is not None:
        ctx.judge("SO-03")  # nothing undeclared is sent: the probe does not run
        ctx.skip([c for c in clauses if c != "SO-03"], f"SO-03: {plan}")
        return
    request = structured_request(options.config, options.workspace)
    pristine = structured_request(options.config, options.workspace)
    # The facts the batch transport declares are demanded, as live_run does for streaming.
    request.observation = demand_for(ctx.descriptor.observation.batch)
    pristine.observation = request.observation.model_copy()
    overreach = _structured_overreach(pristine)
    if overreach:
        ctx.fatal(
            "SO-03",
            f"the structured probe's request would send {', '.join(overreach)} "
            "(a suite defect: please report it)",
        )
    ctx.judge("SO-03")
    verdicts = LiveVerdicts(ctx, structured=True)
    try:
        result = _execute(ctx, verdicts, request, pristine)
        failed = _judge_outcome(ctx, verdicts, result, None)
        _judge_late(ctx, verdicts, result)
        verdicts.report(result.received_violations(), judge=("RCV-01", "RCV-02"))
        result.watch_returned(ctx)
        if not _nothing_streamed(ctx, result, FACTS_CLAUSES):
            verdicts.report(verify_observation_sequence(result.stream), judge=FACTS_CLAUSES)
        judge_observations(ctx, verdicts.report, ctx.descriptor.observation.batch, result, pristine)
        response = result.response
        if failed or response is None:
            _skip_success_clauses(ctx, failed, ("LIV-03", "RSP-04", "SO-02"))
            return
        resumable = ctx.descriptor.sessions.supports_resume
        verdicts.report(verify_live_checkpoint(resumable, response), judge=("LIV-03",))
        _judge_checkpoint_codec(ctx, verdicts, response)
        verdicts.report(
            verify_structured_output_value(response.structured_output), judge=("SO-02",)
        )
    finally:
        verdicts.finish()
