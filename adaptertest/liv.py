"""LIV family: what a live run must achieve beyond structural validity (LIV-01..03).

Also home of the live probe's request (``live_request``), the SES-09 check that can
only be judged on a live checkpoint (``verify_session_profile_fingerprint``) and the
redacted diagnostic (``live_diagnostic``) printed when a live probe fails. Provider
output may hold secrets, so the diagnostic carries sizes, digests, flags and counts,
never provider text.

The two live probes live here too (``probe_live_run``, ``probe_live_structured_output``):
each runs the driver once on its event loop under the live deadline, then judges the
outcome, the run events, the stream and the response in upstream's order, withholding
verifier text unless ``Options(show_live_details=True)``.
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

from adaptertest._calls import describe_hang, is_driver_fault
from adaptertest._probe import ProbeContext
from adaptertest._shape import shape_problem
from adaptertest._violation import Violation
from adaptertest.cap import structured_probe_plan
from adaptertest.clauses import CLAUSES
from adaptertest.evt import (
    verify_observation_sequence,
    verify_stream_capability,
    verify_stream_sequence,
)
from adaptertest.obs import verify_observation_support
from adaptertest.options import DEFAULT_LIVE_PROMPT
from adaptertest.rsp import is_valid_json, trim_space, verify_checkpoint_codec, verify_outcome
from adaptertest.run import verify_run_events, verify_transcript_mirror
from adaptertest.sink import RecordingSink
from adaptertest.so import (
    probe_value_matches,
    structured_request,
    verify_structured_output_value,
)
from adaptertest.usg import judge_usage
from driver.descriptor import StreamCapability
from driver.errors import RunError
from driver.events import RunEvent, StreamPayload
from driver.output import OutputFormat, StructuredOutputSource
from driver.profile import ProfilePayload
from driver.protocols import StreamSupport
from driver.run import Request, Response
from driver.runtime import WorkspaceLease
from driver.session import SESSION_PARAM_PROFILE_FINGERPRINT

__all__ = [
    "DEFAULT_LIVE_PROMPT",
    "FACTS_CLAUSES",
    "LIVE_METADATA",
    "LIVE_PROFILE_FINGERPRINT",
    "LIVE_REDACTED",
    "LIVE_RUN_ID",
    "LIVE_SESSION_FINGERPRINT",
    "LIVE_WORKSPACE_ID",
    "LiveRun",
    "LiveVerdicts",
    "changed_fields",
    "error_type",
    "live_diagnostic",
    "live_request",
    "probe_live_run",
    "probe_live_structured_output",
    "run_once",
    "settle",
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


def live_request(config: object | None, prompt: str, workspace_cwd: str | None) -> Request:
    """The request of the ``live_run`` probe: streaming, tagged metadata, a profile
    payload whose session fingerprint differs from its exact one (so SES-09 can tell
    which one the driver stored), and a workspace lease when a cwd is given.

    ``prompt`` is sent byte for byte.
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
    )
    if workspace_cwd is not None:
        request.workspace = WorkspaceLease(id=LIVE_WORKSPACE_ID, cwd=workspace_cwd)
    return request


def verify_live_success(response: Response | None, error: BaseException | None) -> list[Violation]:
    """LIV-01: the run returned a response without raising, with exit code 0, no signal,
    no timeout and no failure. Judges only success; legality is ``verify_outcome``'s."""
    problems: list[str] = []
    if error is not None:
        problems.append(f"run raised {type(error).__name__}")
    if response is None:
        problems.append("no response")
    else:
        if response.exit_code != 0:
            problems.append(f"exit_code={response.exit_code}")
        if response.signal != "":
            problems.append("signal set")
        if response.timed_out:
            problems.append("timed_out=True")
        if response.failure is not None:
            problems.append(f"failure with code {str(response.failure.code)!r}")
    if not problems:
        return []
    return [Violation("LIV-01", f"live run did not succeed: {', '.join(problems)}")]


def _shown(text: str) -> str:
    if len(text) <= _SHOWN_CHARS:
        return repr(text)
    return f"{text[:_SHOWN_CHARS]!r}... ({len(text)} chars)"


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
    return [Violation("LIV-02", f"trimmed output is {_shown(got)}, expected {_shown(want)}")]


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
# Redacted diagnostic
# ------------------------------------------------------------------------------------


def _text_bytes(text: str) -> bytes:
    try:
        return text.encode("utf-8", errors="surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", errors="surrogatepass")


def _digest(data: bytes | str) -> dict[str, object]:
    raw = _text_bytes(data) if isinstance(data, str) else data
    return {"bytes": len(raw), "sha256": hashlib.sha256(raw).hexdigest()}


def _error_type(error: BaseException | None) -> str:
    if error is None:
        return ""
    cls = type(error)
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


def _structured_section(response: Response | None) -> dict[str, object]:
    so = None if response is None else response.structured_output
    section: dict[str, object] = {"structured_present": so is not None}
    if so is None:
        return section
    section.update(
        structured_native=so.source == StructuredOutputSource.NATIVE,
        structured_valid=so.valid,
        structured_json=_digest(so.raw_json),
        structured_json_valid=is_valid_json(so.raw_json),
        probe_value_matches=probe_value_matches(so.raw_json),
        value_present=so.value is not None,
        validation_errors=len(so.validation_errors),
    )
    return section


def live_diagnostic(
    response: Response | None, error: BaseException | None, *, structured: bool
) -> dict[str, object]:
    """A JSON-ready summary of a live outcome that is safe to print.

    Provider-controlled text (output, stdout, stderr, signal, failure code and message,
    terminal event and JSON, structured JSON) appears only as ``{"bytes", "sha256"}`` of
    its complete bytes; everything else is a flag, a count, the exit code or the
    exception's type name. ``structured`` adds the structured-output section used by
    the ``live_structured_output`` probe.
    """
    diag: dict[str, Any] = {
        "probe": "live_structured_output" if structured else "live_run",
        "response_present": response is not None,
        "error_type": _error_type(error),
    }
    if response is not None:
        failure = response.failure
        raw = response.raw_streams
        terminal = None if raw is None else raw.terminal
        checkpoint = response.checkpoint
        diag.update(
            exit=response.exit_code,
            signal=_digest(response.signal),
            timed_out=response.timed_out,
            failure=failure is not None,
            failure_code=None if failure is None else _digest(str(failure.code)),
            failure_message=None if failure is None else _digest(failure.message),
            output=_digest(response.output),
            transcript_items=len(response.transcript),
            raw_present=raw is not None,
            stdout=None if raw is None else _digest(raw.stdout),
            stderr=None if raw is None else _digest(raw.stderr),
            terminal_present=terminal is not None,
            terminal_event=None if terminal is None else _digest(terminal.event),
            terminal_json=None if terminal is None else _digest(terminal.raw_json),
            terminal_json_valid=terminal is not None and is_valid_json(terminal.raw_json),
            checkpoint=checkpoint is not None,
            checkpoint_valid=checkpoint is not None and checkpoint.valid,
            resume_id_present=checkpoint is not None
            and checkpoint.state is not None
            and checkpoint.state.resume_id != "",
        )
    if structured:
        diag.update(_structured_section(response))
    return diag


# ------------------------------------------------------------------------------------
# Running the provider once
# ------------------------------------------------------------------------------------

LIVE_REDACTED = (
    "live contract violation (provider-controlled details withheld; rerun with "
    "Options(show_live_details=True) to see them)"
)
"""What a live violation says unless ``Options(show_live_details=True)``: verifier
messages may quote provider output (ids, text, JSON), and that can hold secrets."""

_GRACE_STEPS = 3
_GRACE_STEP = 0.01
_LOOP_SLACK = 1.0
"""Seconds the bounded loop call adds to the live deadline for sealing and the grace."""

RunCallable = Callable[..., Any]


@dataclass
class LiveRun:
    """What one ``run`` call did, captured on the driver's loop.

    ``value`` is whatever ``run`` returned (type-checked by the probe), ``error`` what
    it raised. ``events`` and ``stream`` are the sink's contents taken after the grace
    period, and ``late`` counts those that arrived after ``run`` returned.
    """

    value: object = None
    error: BaseException | None = None
    timed_out: bool = False
    elapsed: float = 0.0
    events: list[RunEvent] = field(default_factory=list)
    stream: list[StreamPayload] = field(default_factory=list)
    late: int = 0

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
        """Take the sink's contents (call after :func:`settle`)."""
        self.events = sink.events
        self.stream = sink.stream
        self.late = len(sink.late_emissions)


async def run_once(
    run: RunCallable, request: Request, sink: RecordingSink, timeout: float
) -> LiveRun:
    """Call ``run(request, sink)`` within ``timeout`` seconds, then seal the sink.

    A raised exception is data. The deadline passing before ``run`` returned counts as
    a timeout even when the driver swallowed the cancellation and returned anyway.
    """
    result = LiveRun()
    start = time.perf_counter()
    with anyio.move_on_after(timeout) as scope:
        try:
            value = run(request, sink)
            if inspect.isawaitable(value):
                value = await value
            result.value = value
        except BaseException as exc:
            if not is_driver_fault(exc):
                raise
            result.error = exc
    sink.seal()
    result.timed_out = scope.cancel_called
    result.elapsed = time.perf_counter() - start
    return result


async def settle() -> None:
    """Give tasks a driver left behind a moment to emit, so late emissions get judged."""
    for _ in range(_GRACE_STEPS):
        await anyio.sleep(_GRACE_STEP)


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
    """Records a live probe's verdicts without leaking provider-controlled text.

    Verifier messages may quote provider output, so unless ``show_live_details`` each
    becomes :data:`LIVE_REDACTED` (its clause kept, repeats folded). Messages the suite
    writes itself (a hang, a wrong return type) quote nothing and stay as they are.
    With ``into`` set, every verdict becomes a violation of that clause, prefixed with
    ``label`` and the inner clause (CON-01). :meth:`finish` adds the redacted
    diagnostic once anything failed.
    """

    def __init__(
        self, ctx: ProbeContext, *, structured: bool, into: str | None = None, label: str = ""
    ) -> None:
        self.ctx = ctx
        self.structured = structured
        self.show = ctx.options.show_live_details
        self.into = into
        self.label = label
        self.failed = False
        self.run: LiveRun | None = None
        self._seen: set[tuple[str, str]] = set()

    def shown(self, violation: Violation) -> str:
        """The text a verifier violation is reported with."""
        return violation.message if self.show else LIVE_REDACTED

    def fail(self, clause: str, message: str) -> None:
        """Record a violation whose ``message`` is safe to print as it is."""
        self.failed = True
        if (clause, message) in self._seen:
            return
        self._seen.add((clause, message))
        if self.into is None:
            self.ctx.fail(clause, message)
        else:
            self.ctx.fail(self.into, f"{self.label}: {clause}: {message}")

    def report(self, violations: Iterable[Violation], *, judge: Sequence[str] = ()) -> None:
        """Judge ``judge`` and record a verifier's violations, redacted."""
        if self.into is None:
            self.ctx.judge(*judge)
        for violation in violations:
            self.fail(violation.clause, self.shown(violation))

    def stop(self, clause: str, message: str) -> NoReturn:
        """Record a violation and end the probe (only without ``into``)."""
        self.failed = True
        self._seen.add((clause, message))
        self.ctx.fatal(clause, message)

    def finish(self) -> None:
        """Add the redacted diagnostic if anything failed."""
        if not self.failed:
            return
        run = self.run
        diagnostic = live_diagnostic(
            None if run is None or run.malformed is not None else run.response,
            None if run is None else run.error,
            structured=self.structured,
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


def _execute(
    ctx: ProbeContext, verdicts: LiveVerdicts, request: Request, pristine: Request
) -> LiveRun:
    """Run the driver once on its loop; a hang or a wrong return type ends the probe."""
    run = ctx.method("run")
    if run is None:
        verdicts.stop("LIV-01", f"{type(ctx.driver).__qualname__} has no callable run() method")
    timeout = ctx.options.live_run_timeout
    sink = RecordingSink()

    async def live() -> LiveRun:
        result = await run_once(run, request, sink, timeout)
        await settle()
        result.capture(sink)
        return result

    outcome = ctx.runner.run_async(live, timeout=timeout + _LOOP_SLACK)
    if outcome.timed_out:
        verdicts.stop("LIV-01", describe_hang("run()", outcome, timeout))
    if outcome.error is not None:
        verdicts.stop("LIV-01", f"run() raised {error_type(outcome.error)}")
    result: LiveRun = outcome.value
    verdicts.run = result
    _notes(ctx, result, request, pristine)
    if result.timed_out:
        verdicts.stop("LIV-01", f"run() did not return within {timeout:g} s")
    if result.wrong_type:
        verdicts.stop(
            "LIV-01",
            f"run() returned {type(result.value).__qualname__}, expected driver.Response",
        )
    if result.malformed is not None:
        verdicts.stop("LIV-01", f"run() returned a malformed Response ({result.malformed})")
    return result


def _notes(ctx: ProbeContext, result: LiveRun, request: Request, pristine: Request) -> None:
    if result.late:
        ctx.note(
            f"{result.late} emission(s) reached the sink after run() returned; they are "
            "judged with the rest of the run (EVT-02, RUN-04)"
        )
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
    if error is not None and ctx.options.show_live_details:
        text = str(error).strip().splitlines()
        ctx.note(f"run() raised {error_type(error)}" + (f": {text[0][:300]}" if text else ""))


def _judge_success(ctx: ProbeContext, verdicts: LiveVerdicts, result: LiveRun) -> Response:
    """verify_outcome, LIV-01 (the probe stops on failure), LIV-03, RSP-04."""
    response, error = result.response, result.error
    if response is not None:
        verdicts.report(verify_outcome(response, error), judge=_OUTCOME_CLAUSES)
        judge_usage(verdicts, response, result.stream)
    success = verify_live_success(response, error)
    if success or response is None:
        # LIV-01 messages name outcome fields and exception types only: safe to show.
        verdicts.stop("LIV-01", success[0].message if success else "no response")
    ctx.judge("LIV-01")
    resumable = ctx.descriptor.sessions.supports_resume
    verdicts.report(verify_live_checkpoint(resumable, response), judge=("LIV-03",))
    _judge_checkpoint_codec(ctx, verdicts, response)
    return response


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


def _judge_stream(ctx: ProbeContext, verdicts: LiveVerdicts, stream: list[StreamPayload]) -> None:
    rich, capability = stream_plan(ctx)
    if not rich:
        verdicts.report(verify_observation_sequence(stream), judge=FACTS_CLAUSES)
        ctx.skip((*_RICH_ONLY, "EVT-12"), _NO_STREAM_SUPPORT)
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


def probe_live_run(ctx: ProbeContext) -> None:
    """Run the provider once with the live request and judge everything it produced.

    Order as upstream: outcome legality, LIV-01 (stop on failure), LIV-03, RSP-04, run
    events, the stream (rich with StreamSupport, else facts only), OBS-01, RUN-04,
    LIV-02, SES-09.
    """
    options = ctx.options
    if not options.live_enabled:
        ctx.skip(_clauses_of("live_run"), options.live_skip_reason)
        return
    request = live_request(options.config, options.live_prompt, options.workspace)
    # Built apart from ``request`` (only the caller's config object is shared), so a
    # driver that mutates what it was given cannot change what the checks compare with.
    pristine = live_request(options.config, options.live_prompt, options.workspace)
    verdicts = LiveVerdicts(ctx, structured=False)
    try:
        result = _execute(ctx, verdicts, request, pristine)
        response = _judge_success(ctx, verdicts, result)
        verdicts.report(verify_run_events(result.events), judge=_RUN_EVENT_CLAUSES)
        _judge_stream(ctx, verdicts, result.stream)
        support = ctx.descriptor.observation.streaming
        verdicts.report(verify_observation_support(support, result.stream), judge=("OBS-01",))
        verdicts.report(
            verify_transcript_mirror(result.events, response.transcript), judge=("RUN-04",)
        )
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
            verdicts.report(
                verify_session_profile_fingerprint(pristine, response), judge=("SES-09",)
            )
        else:
            ctx.skip(
                ("SES-09",),
                "the live run returned no valid checkpoint with state, so it stored no "
                "profile fingerprint",
            )
    finally:
        verdicts.finish()


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
    its request asks for nothing else. Then LIV-01 (stop on failure), LIV-03, RSP-*,
    the facts-only stream checks, OBS-01 against the batch support, and SO-02.
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
        response = _judge_success(ctx, verdicts, result)
        verdicts.report(verify_observation_sequence(result.stream), judge=FACTS_CLAUSES)
        support = ctx.descriptor.observation.batch
        verdicts.report(verify_observation_support(support, result.stream), judge=("OBS-01",))
        verdicts.report(
            verify_structured_output_value(response.structured_output), judge=("SO-02",)
        )
    finally:
        verdicts.finish()
