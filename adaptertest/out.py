"""OUT family (Python extension): a large answer arrives exact (OUT-01).

The ``scenario_output`` probe serves ``adaptertest/scenarios/big_answer.json``: an answer
of at least 1 MB (numbered lines, so a lost, doubled or reordered piece shows) streamed
in 2000 text deltas. The run's output must be that answer exactly, and when the stream
carries text deltas, they must join to it: a driver that reads its CLI's output in
fixed-size pieces, caps a line, or drops a delta under load fails here.
"""

from __future__ import annotations

from adaptertest._probe import ProbeContext
from adaptertest._scenarios import Observed, clauses_of, gate, new_token, single_run, stream_text
from adaptertest._violation import Violation
from adaptertest.tol import served
from driver.events import StreamKind

__all__ = ["LARGE_ANSWER_BYTES", "large_answer", "probe_scenario_output", "verify_large_answer"]

LARGE_ANSWER_BYTES = 1_000_000
"""OUT-01's answer is at least this long in UTF-8 (1 MB)."""

OUTPUT_PROMPT = "Reply with the long document you are given."


def large_answer(token: str) -> str:
    """At least :data:`LARGE_ANSWER_BYTES` bytes of numbered lines, some non-ASCII, with
    ``token`` in each and no whitespace at either end."""
    lines: list[str] = []
    size = 0
    number = 0
    while size < LARGE_ANSWER_BYTES:
        line = f"answer line {number:06d} {token}: héllo wörld, ünïcödé text 日本\n"
        lines.append(line)
        size += len(line.encode("utf-8"))
        number += 1
    return f"{''.join(lines)}end of answer {token}"


def _first_difference(got: str, expected: str) -> int:
    for index, (a, b) in enumerate(zip(got, expected, strict=False)):
        if a != b:
            return index
    return min(len(got), len(expected))


def verify_large_answer(observed: Observed) -> list[Violation]:
    """OUT-01: the output and the joined text deltas are the answer, exactly."""
    clause = "OUT-01"
    expected = observed.values["answer"]
    out = served(clause, observed)
    response = observed.response
    if response is None:
        return out
    if response.output != expected:
        out.append(
            Violation(
                clause,
                f"output has {len(response.output)} chars, the answer {len(expected)}; they "
                f"first differ at char {_first_difference(response.output, expected)}",
            )
        )
    streamed = stream_text(observed.result.stream, StreamKind.TEXT_CONTENT)
    if streamed and streamed != expected:
        out.append(
            Violation(
                clause,
                f"the stream's text deltas join to {len(streamed)} chars, the answer has "
                f"{len(expected)}; they first differ at char "
                f"{_first_difference(streamed, expected)}",
            )
        )
    return out


def probe_scenario_output(ctx: ProbeContext) -> None:
    """Serve the 1 MB answer and judge OUT-01."""
    binding, wanted = gate(ctx, clauses_of("scenario_output"))
    if binding is None or "OUT-01" not in wanted:
        return
    values = {"answer": large_answer(new_token())}
    single_run(
        ctx, binding, "OUT-01", "big_answer", OUTPUT_PROMPT, verify_large_answer, values=values
    )
