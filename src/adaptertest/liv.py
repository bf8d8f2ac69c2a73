"""LIV family: what a live run must achieve beyond structural validity (LIV-01..03).

Also home of the live probe's request (``live_request``), the SES-09 check that can
only be judged on a live checkpoint (``verify_session_profile_fingerprint``) and the
redacted diagnostic (``live_diagnostic``) printed when a live probe fails. Provider
output may hold secrets, so the diagnostic carries sizes, digests, flags and counts,
never provider text.
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

from adaptertest._calls import describe_hang
from adaptertest._probe import ProbeContext
from adaptertest._violation import Violation
from adaptertest.cap import structured_probe_plan
from adaptertest.clauses import CLAUSES
from adaptertest.evt import verify_stream_capability, verify_stream_sequence
from adaptertest.obs import verify_observation_sequence, verify_observation_support
from adaptertest.options import DEFAULT_LIVE_PROMPT
from adaptertest.rsp import is_valid_json, trim_space, verify_checkpoint_codec, verify_outcome
from adaptertest.run import verify_run_events, verify_transcript_mirror
from adaptertest.sink import RecordingSink
from adaptertest.so import (
    probe_value_matches,
    structured_request,
    verify_structured_output_value,
)
from driver.descriptor import StreamCapability
from driver.errors import RunError
from driver.events import RunEvent, StreamPayload
from driver.output import OutputFormat, StructuredOutputSource
from driver.profile import ProfilePayload
from driver.protocols import StreamSupport, implements
from driver.run import Request, Response
from driver.runtime import WorkspaceLease
from driver.session import SESSION_PARAM_PROFILE_FINGERPRINT

__all__ = [
    "DEFAULT_LIVE_PROMPT",
    "LIVE_METADATA",
    "LIVE_PROFILE_FINGERPRINT",
    "LIVE_RUN_ID",
    "LIVE_SESSION_FINGERPRINT",
    "LIVE_REDACTED",
    "LIVE_WORKSPACE_ID",
    "LiveRun",
    "LiveVerdicts",
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
