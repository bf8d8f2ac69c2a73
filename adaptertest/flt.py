"""FLT family (Python extension): model faults, transient and persistent (FLT-01, FLT-02).

The ``scenario_faults`` probe serves the ``fault_*.json`` scenarios of
``adaptertest/scenarios/``:

- FLT-01, transient: two 429s with ``retry-after: 1`` (``fault_rate_limit``), one 529
  (``fault_overloaded``), one 503 (``fault_unavailable``), each followed by the answer.
  A run that succeeds must carry the answer and must have asked again (the emulator
  counts the requests); a run that gives up must fail cleanly with a message that names
  the status (its number, or what it means: rate limit, overloaded, unavailable).
- FLT-02, persistent: a model that keeps answering 500 (``fault_server_error``), 401
  (``fault_unauthorized``), 400 prompt too long (``fault_prompt_too_long``), or cuts
  every stream mid-event (``fault_stream_cut``). The run must return a Response that
  failed with code ``agent_error``, a message that names the status or the cut and is
  not a protocol dump (no raw JSON or SSE of the API), no valid checkpoint, and nothing
  may reach the sink after run() returns.

The last two, and FLT-01's "no valid checkpoint" on a run that gave up, are rules every
run obeys: the scenario engine judges them on each run (RSP-01, FLR-01, EVT-02, named in
the message under this family's clause), so the verify helpers here do not repeat them.

How long an agent retries is its own business: the run gets the endpoint's deadline
(``ModelEndpoint.deadline``) plus the binding's grace.
"""

from __future__ import annotations

import re
from functools import partial

from adaptertest._probe import ProbeContext
from adaptertest._scenarios import Observed, clauses_of, gate, new_token, single_run
from adaptertest._violation import Violation, provider_text
from driver.run import FailureCode

__all__ = [
    "PERSISTENT_FAULTS",
    "TRANSIENT_FAULTS",
    "is_protocol_dump",
    "probe_scenario_faults",
    "verify_persistent_fault",
    "verify_transient_fault",
]

FAULT_PROMPT = "Reply with one short sentence."

TRANSIENT_FAULTS: tuple[tuple[str, int, int, str], ...] = (
    ("fault_rate_limit", 429, 2, r"\b429\b|rate.?limit|too many requests"),
    ("fault_overloaded", 529, 1, r"\b529\b|overload"),
    ("fault_unavailable", 503, 1, r"\b503\b|unavailable"),
)
"""(scenario, status, failed requests before the answer, how a message names it)."""

PERSISTENT_FAULTS: tuple[tuple[str, str, str], ...] = (
    ("fault_server_error", "HTTP 500", r"\b500\b|internal server error|server error"),
    ("fault_unauthorized", "HTTP 401", r"\b401\b|unauthori[sz]ed|authenticat|api.?key"),
    (
        "fault_prompt_too_long",
        "HTTP 400",
        # An agent may say what the 400 means without its number: codex reports a
        # context-length error as "ran out of room in the model's context window".
        r"\b400\b|too long|too large|bad request|context (window|length)",
    ),
    (
        "fault_stream_cut",
        "a cut stream",
        r"\bcut\b|connection|socket|econnreset|\beof\b|premature|incomplete|truncat"
        r"|disconnect|network|other side closed"
        r"|stream (was |is |got )?(closed|ended|terminated|interrupted|aborted|broken|reset)",
    ),
)
"""(scenario, what fails, how a failure message names it). A cut must be named as one of
the stream or the connection: a bare "terminated" says that something ended, not what."""

_DUMP = re.compile(r'\{\s*"(type|error)"\s*:|^\s*[\[{]|^(event|data):', re.M)


def is_protocol_dump(message: str) -> bool:
    """Whether ``message`` carries the API's raw JSON or SSE instead of saying what failed."""
    return bool(_DUMP.search(message))


def _failure_of(observed: Observed) -> tuple[str, str] | None:
    """(failure code, message) of a failed run, else None."""
    response = observed.response
    if response is not None and response.failure is not None:
        return str(response.failure.code), response.failure.message
    return None


def verify_transient_fault(
    observed: Observed, label: str, status: int, failed: int, named: str
) -> list[Violation]:
    """FLT-01 for one scenario: recovered after asking again, or failed naming it (how
    cleanly it failed is the engine's check of every failed run)."""
    clause = "FLT-01"
    token = observed.values["token"]
    out = [Violation(clause, f"({label}) {p}") for p in observed.problems]
    result, response = observed.result, observed.response
    if result.timed_out:
        return [*out, Violation(clause, f"({label}) run() did not return in time")]
    if result.error is not None and response is None:
        return [
            *out,
            Violation(
                clause,
                f"({label}) run() raised {type(result.error).__qualname__} instead of "
                "returning a failed Response",
            ),
        ]
    if response is None:
        return out
    failure = _failure_of(observed)
    if failure is None:
        if response.output.strip() != f"Recovered {token}.":
            out.append(
                Violation(
                    clause,
                    f"({label}) the run succeeded with output {provider_text(response.output)}, "
                    "not the answer served after the fault",
                )
            )
        if len(observed.requests) < failed + 1:
            out.append(
                Violation(
                    clause,
                    f"({label}) the run succeeded after {len(observed.requests)} model "
                    f"request(s); {failed} failed with HTTP {status} before the answer",
                )
            )
        return out
    _, message = failure
    if not re.search(named, message, re.I):
        out.append(
            Violation(
                clause,
                f"({label}) the run gave up with the message {provider_text(message)}, which "
                f"does not name HTTP {status}",
            )
        )
    return out


def verify_persistent_fault(observed: Observed, label: str, named: str) -> list[Violation]:
    """FLT-02 for one scenario: a failure that names what failed (no valid checkpoint
    and nothing emitted late are the engine's checks of every run)."""
    clause = "FLT-02"
    out = [Violation(clause, f"({label}) {p}") for p in observed.problems]
    result, response = observed.result, observed.response
    if result.timed_out:
        return [*out, Violation(clause, f"({label}) run() did not return in time")]
    if response is None:
        what = (
            f"raised {type(result.error).__qualname__}"
            if result.error is not None
            else f"returned {type(result.value).__qualname__}"
        )
        return [*out, Violation(clause, f"({label}) run() {what} instead of a failed Response")]
    failure = _failure_of(observed)
    if failure is None:
        return [*out, Violation(clause, f"({label}) the run reports no failure")]
    code, message = failure
    if code != FailureCode.AGENT_ERROR:
        out.append(Violation(clause, f"({label}) failure code is {code!r}, expected 'agent_error'"))
    if not re.search(named, message, re.I):
        out.append(
            Violation(
                clause,
                f"({label}) the failure message {provider_text(message)} does not name {label}",
            )
        )
    if is_protocol_dump(message):
        out.append(
            Violation(
                clause,
                f"({label}) the failure message {provider_text(message)} is a protocol dump "
                "(raw JSON or SSE), not a description",
            )
        )
    return out


def probe_scenario_faults(ctx: ProbeContext) -> None:
    """Serve the transient and persistent fault scenarios; judge FLT-01 and FLT-02."""
    binding, wanted = gate(ctx, clauses_of("scenario_faults"))
    if binding is None:
        return
    if "FLT-01" in wanted:
        for name, status, failed, named in TRANSIENT_FAULTS:
            label = f"HTTP {status}"
            single_run(
                ctx,
                binding,
                "FLT-01",
                name,
                FAULT_PROMPT,
                partial(
                    verify_transient_fault, label=label, status=status, failed=failed, named=named
                ),
                values={"token": new_token()},
            )
    if "FLT-02" in wanted:
        for name, label, named in PERSISTENT_FAULTS:
            single_run(
                ctx,
                binding,
                "FLT-02",
                name,
                FAULT_PROMPT,
                partial(verify_persistent_fault, label=label, named=named),
                values={"token": new_token()},
                watch=True,
            )
