"""RSN family (Python extension): thinking shows as reasoning only where declared (RSN-01).

The ``scenario_reasoning`` probe serves ``adaptertest/scenarios/thinking.json``: one
answer with a thinking block (a unique token in it) before its text. A driver whose
stream capability declares ``reasoning`` must show the thinking as reasoning: a
``thinking`` transcript item or reasoning payloads carrying it. A driver that does not
declare it must stream no reasoning payload at all. Either way the thinking is never
part of the output or of an assistant item: a host would show the model's private
deliberation as its answer.
"""

from __future__ import annotations

from adaptertest._probe import ProbeContext
from adaptertest._scenarios import (
    Observed,
    clauses_of,
    gate,
    items,
    new_token,
    single_run,
    stream_text,
)
from adaptertest._violation import Violation
from adaptertest.liv import stream_plan
from adaptertest.tol import final_answer, served
from driver.events import StreamKind
from driver.transcript import TranscriptKind

__all__ = ["REASONING_PROMPT", "probe_scenario_reasoning", "verify_reasoning"]

REASONING_PROMPT = "Think it over, then answer."

_REASONING_KINDS = frozenset(
    {StreamKind.REASONING_START, StreamKind.REASONING_CONTENT, StreamKind.REASONING_END}
)


def verify_reasoning(observed: Observed, declared: bool) -> list[Violation]:
    """RSN-01 for a driver that does (``declared``) or does not declare reasoning."""
    clause = "RSN-01"
    token = observed.values["token"]
    thinking = f"Considering {token} before answering."
    out = served(clause, observed)
    response = observed.response
    if response is None:
        return out
    out += final_answer(clause, observed, f"Answer {token}.")
    if thinking in response.output:
        out.append(Violation(clause, "the thinking shows up in the output"))
    leaked = [
        str(i)
        for i, item in enumerate(response.transcript)
        if item.kind == TranscriptKind.ASSISTANT and thinking in item.text
    ]
    if leaked:
        out.append(
            Violation(clause, f"the thinking shows up in assistant item(s) {', '.join(leaked)}")
        )
    stream = observed.result.stream
    reasoning = [p for p in stream if p.kind in _REASONING_KINDS]
    if declared:
        in_items = any(thinking in i.text for i in items(response, TranscriptKind.THINKING))
        in_stream = thinking in stream_text(stream, StreamKind.REASONING_CONTENT)
        if not in_items and not in_stream:
            out.append(
                Violation(
                    clause,
                    "the stream capability declares reasoning, yet the model's thinking shows "
                    "up in no thinking item and no reasoning payload",
                )
            )
    elif reasoning:
        out.append(
            Violation(
                clause,
                f"{len(reasoning)} reasoning payload(s) in the stream, but the stream "
                "capability does not declare reasoning",
            )
        )
    return out


def probe_scenario_reasoning(ctx: ProbeContext) -> None:
    """Serve an answer with a thinking block and judge RSN-01."""
    binding, wanted = gate(ctx, clauses_of("scenario_reasoning"))
    if binding is None or "RSN-01" not in wanted:
        return
    rich, capability = stream_plan(ctx)
    declared = rich and capability is not None and capability.reasoning
    ctx.note(f"reasoning declared: {declared}", clauses=("RSN-01",))
    single_run(
        ctx,
        binding,
        "RSN-01",
        "thinking",
        REASONING_PROMPT,
        lambda seen: verify_reasoning(seen, declared),
        values={"token": new_token()},
    )
