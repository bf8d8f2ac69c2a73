"""FLR family (Python extension): a failed live run fails cleanly (FLR-01).

Real runs fail often and in many ways (a 429 after retries, a budget stop in the middle
of a tool call, a killed process with no terminal line), and the failure path is the one
a driver author tests least. FLR-01 is judged on every live run that fails, and on every
live run under ``Options(live_expect_failure=...)``, which says the run must fail (a
replayed failure, an account without credit). A clean failure is data a host can act on:

- ``run`` hands back a Response (returned, or carried by ``RunError``) whose ``failure``
  has a known code and a non-blank message;
- it offers no valid checkpoint;
- exit code, signal and ``timed_out`` agree with each other and with what the failure's
  own metadata says about them;
- a streamed run ends in ``run.error`` with every lifecycle closed;
- the transcript carries the failure as a ``failure`` item.

The live probes (``adaptertest.liv``) call :func:`verify_clean_failure` once they know
the run failed, and so does the scenario engine for each failed scenario run (reported
under the scenario's clause); its messages quote no provider text but the exception
message, marked.
"""

from __future__ import annotations

from collections.abc import Sequence

from adaptertest._calls import describe_error
from adaptertest._violation import Violation
from adaptertest.evt import DROPPED, KNOWN_STREAM_KINDS, RUN_ERROR, StreamVerifier
from adaptertest.rsp import trim_space
from driver.events import StreamPayload, TranscriptKind
from driver.run import FailureCode, Response

__all__ = ["verify_clean_failure", "verify_expected_failure"]

_KNOWN_CODES = frozenset(code.value for code in FailureCode)
# Metadata keys a failure may use to restate the process outcome, and the field each mirrors.
_RESTATED = (("exit_code", "exit_code"), ("signal", "signal"), ("timed_out", "timed_out"))


def verify_expected_failure(reason: str) -> list[Violation]:
    """FLR-01 for a run that succeeded although ``Options(live_expect_failure=reason)``
    says it must fail."""
    return [
        Violation(
            "FLR-01",
            f"the live run succeeded, but Options(live_expect_failure={reason!r}) expects it "
            "to fail: is the failing recording, account or config really in use?",
        )
    ]


def _outcome_problems(response: Response) -> list[str]:
    """Exit code, signal and timed_out against each other and the failure's metadata."""
    out: list[str] = []
    if response.signal != "" and response.exit_code == 0:
        out.append(
            f"signal={response.signal!r} with exit_code=0 (a killed process has no clean exit)"
        )
    failure = response.failure
    if failure is None:
        return out
    if response.timed_out and failure.code == FailureCode.TIMEOUT:
        out.append(
            "timed_out=True with failure.code='decision_timeout' (that code is for a human "
            "decision's deadline, not the run's)"
        )
    metadata = failure.metadata if isinstance(failure.metadata, dict) else {}
    for key, name in _RESTATED:
        if key not in metadata:
            continue
        said, observed = metadata[key], getattr(response, name)
        # bool is an int: a True exit code is not the exit code 1.
        if type(said) is not type(observed) or said != observed:
            out.append(f"failure.metadata[{key!r}] is {said!r} but Response.{name} is {observed!r}")
    return out


def _stream_problems(stream: Sequence[StreamPayload]) -> list[str]:
    """A streamed failure ends in run.error with nothing left open."""
    if not stream:
        return [
            "the run emitted no stream payload: a failed streamed run still opens with "
            "run.started and ends in run.error"
        ]
    last = None
    for index in range(len(stream) - 1, -1, -1):
        kind = getattr(stream[index], "kind", None)
        if kind in KNOWN_STREAM_KINDS and kind != DROPPED:
            last = (index, kind)
            break
    out: list[str] = []
    if last is None:
        out.append("the stream has no run.error terminal (no normalized payload at all)")
    elif last[1] != RUN_ERROR:
        out.append(f"the stream ends in {last[1]} (payload {last[0]}), not run.error")
    verifier = StreamVerifier()
    verifier.feed_many(stream)
    if verifier.open_count:
        out.append(f"{verifier.open_count} lifecycle(s) still open at the end of the stream")
    return out


def verify_clean_failure(
    response: Response | None,
    error: BaseException | None,
    stream: Sequence[StreamPayload] | None,
) -> list[Violation]:
    """FLR-01 on a run that failed: ``response`` (None when ``run`` raised without one),
    the exception ``run`` raised, and the stream when the run streamed richly (None for a
    batch run or a driver without StreamSupport: nothing is required of its stream)."""
    if response is None:
        raised = describe_error("run()", error) if error is not None else "run() returned nothing"
        return [
            Violation(
                "FLR-01",
                f"{raised}, and no Response came with it: a failure is reported as "
                "Response.failure (return it, or raise RunError(response=...))",
            )
        ]
    problems: list[str] = []
    failure = response.failure
    if failure is None:
        problems.append("Response.failure is None although the run failed")
    else:
        code = str(failure.code)
        if code == "":
            problems.append("failure.code is empty")
        elif code not in _KNOWN_CODES:
            problems.append(f"failure.code is {code!r}, not a FailureCode")
        if trim_space(failure.message) == "":
            problems.append("failure.message is blank")
    checkpoint = response.checkpoint
    if checkpoint is not None and checkpoint.valid:
        problems.append("the failed run offers a valid checkpoint")
    problems += _outcome_problems(response)
    if stream is not None:
        problems += _stream_problems(stream)
    items = response.transcript or ()
    if not any(getattr(item, "kind", None) == TranscriptKind.FAILURE for item in items):
        problems.append("the transcript has no failure item")
    return [Violation("FLR-01", problem) for problem in problems]
