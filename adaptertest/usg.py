"""USG family: the usage a live run reports is coherent (USG-01, a Python extension).

What the numbers mean is defined once, on :class:`driver.Usage`: ``input_tokens``
counts every input token, cache reads and cache writes included;
``cached_input_tokens`` is the part served from cache; ``output_tokens`` includes
reasoning; ``estimated_cost_milli`` is thousandths of a US dollar. CLIs count
differently, so a driver converts before it reports. Without the provider's bill only
coherence can be checked, and it catches the usual conversion slip: a CLI that reports
input without its cache (Claude Code does) passed through unchanged gives more cached
tokens than input tokens.

USG-01 is judged on every live run that returned a response, failed runs included.
Its messages hold field names, payload indexes and counts, never provider text, so
they are shown without ``Options(show_live_details=True)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from adaptertest._probe import ProbeContext
from adaptertest._violation import Violation
from driver.events import StreamKind, StreamPayload
from driver.run import Response
from driver.usage import Usage

__all__ = ["judge_usage", "usage_problems", "verify_usage"]

_COUNTS = ("input_tokens", "cached_input_tokens", "output_tokens", "estimated_cost_milli")


def _counts(usage: Usage | None) -> str:
    if usage is None:
        return "None (not observed)"
    return "(" + ", ".join(f"{name}={getattr(usage, name, '?')!r}" for name in _COUNTS) + ")"


def usage_problems(usage: object, where: str) -> list[str]:
    """What makes one reported ``usage`` incoherent; ``where`` names it in messages."""
    if not isinstance(usage, Usage):
        return [f"{where} is a {type(usage).__qualname__}, not a driver.Usage"]
    out: list[str] = []
    for name in _COUNTS:
        value = getattr(usage, name, None)
        if isinstance(value, bool) or not isinstance(value, int):
            out.append(f"{where}.{name} is a {type(value).__qualname__}, not an int")
        elif value < 0:
            out.append(f"{where}.{name} is negative ({value})")
    given, cached = usage.input_tokens, usage.cached_input_tokens
    if isinstance(given, int) and isinstance(cached, int) and cached > given:
        out.append(
            f"{where}.cached_input_tokens ({cached}) exceeds input_tokens ({given}): "
            "input_tokens counts every input token, cache reads and writes included, so "
            "the cached part cannot be larger (does the CLI report input without its cache?)"
        )
    return out


def verify_usage(response: Response, stream: Sequence[StreamPayload]) -> list[Violation]:
    """USG-01: every usage the run reports (the response's, any stream payload's) has no
    negative count and no more cached than input tokens, and a ``run.finished`` payload
    that carries usage carries the response's."""
    problems: list[str] = []
    if response.usage is not None:
        problems += usage_problems(response.usage, "response.usage")
    for index, payload in enumerate(stream):
        usage = getattr(payload, "usage", None)
        if usage is None:
            continue
        kind = getattr(payload, "kind", "")
        problems += usage_problems(usage, f"stream[{index}] ({kind}) usage")
        finished = kind == StreamKind.RUN_FINISHED and isinstance(usage, Usage)
        if finished and usage != response.usage:
            problems.append(
                f"stream[{index}] (run.finished) usage {_counts(usage)} differs from "
                f"response.usage {_counts(response.usage)}"
            )
    return [Violation("USG-01", problem) for problem in problems]


class Verdicts(Protocol):
    """What USG-01 needs of the live probe's verdicts (``adaptertest.liv.LiveVerdicts``)."""

    ctx: ProbeContext
    into: str | None

    def fail(self, clause: str, message: str) -> None:
        """Record a violation whose message is safe to print as it is."""
        ...


def judge_usage(verdicts: Verdicts, response: Response, stream: Sequence[StreamPayload]) -> None:
    """Judge USG-01 on one live run; the messages quote no provider text."""
    if verdicts.into is None:
        verdicts.ctx.judge("USG-01")
    for violation in verify_usage(response, stream):
        verdicts.fail(violation.clause, violation.message)
