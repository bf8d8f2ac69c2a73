"""INP family (Python extension): prompts reach the model as given (INP-01..03).

The ``scenario_input`` probe serves ``adaptertest/scenarios/answer.json`` (one answer)
and sends prompts a host really sends:

- INP-01: a prompt of at least 1 MiB (numbered lines, so a cut or a lost line shows).
  Linux caps one argv entry at 128 KiB, so a driver that passes the prompt as an
  argument fails here; it must use standard input or a file where its CLI reads one.
- INP-02: a prompt that begins with ``-`` (which a CLI may take for an option) and one
  with newlines, a tab, quotes, a backslash, ``$`` and backticks, and non-ASCII text.
- INP-03: a prompt holding a NUL byte, which no argv, environment or C string can carry:
  refused before anything starts, with a message that names it.

A prompt "reaches the model byte for byte" when it is a substring of the user text of
the run's first main model request (agents add their own context around it).
"""

from __future__ import annotations

import re
from functools import partial

from adaptertest._probe import ProbeContext
from adaptertest._scenarios import (
    Observed,
    clauses_of,
    gate,
    new_token,
    single_run,
)
from adaptertest._violation import Violation, provider_text
from adaptertest.tol import final_answer, served
from driver.events import RunEventType

__all__ = [
    "LARGE_PROMPT_BYTES",
    "awkward_prompts",
    "large_prompt",
    "nul_prompt",
    "probe_scenario_input",
    "verify_nul_refused",
    "verify_prompt_delivered",
]

LARGE_PROMPT_BYTES = 1024 * 1024
"""INP-01's prompt is at least this long in UTF-8 (1 MiB)."""

_NUL_NAMED = re.compile(r"\bnul\b|null (byte|char)|\\x00|\\0\b|\\u0000|\bzero byte", re.I)


def large_prompt(token: str) -> str:
    """A prompt of at least :data:`LARGE_PROMPT_BYTES` bytes: numbered lines, then a
    request to answer, the ``token`` at both ends."""
    head = f"{token}: a long pasted document follows; reply Received.\n"
    lines = [head]
    size = len(head)
    number = 0
    while size < LARGE_PROMPT_BYTES:
        line = f"line {number:06d}: the quick brown fox jumps over the lazy dog ({token})\n"
        lines.append(line)
        size += len(line)
        number += 1
    lines.append(f"end of document {token}")
    return "".join(lines)


def awkward_prompts(token: str) -> dict[str, str]:
    """INP-02's prompts by name: a leading dash, and mixed special characters."""
    return {
        "a leading dash": f"--help -p {token} (this prompt starts with a dash): reply Received.",
        "special characters": (
            f"First line {token}\nsecond \"double\" and 'single' quotes, a back\\slash, "
            "$HOME, `ticks` and %s\n\ttabbed: ünïcödé, 日本語, emoji 🙂\nreply Received."
        ),
    }


def nul_prompt(token: str) -> str:
    """INP-03's prompt: a NUL byte in the middle."""
    return f"before the NUL\x00after it {token}"


def verify_prompt_delivered(
    clause: str, label: str, prompt: str, observed: Observed
) -> list[Violation]:
    """The prompt is in the first main request's user text, whole, and the run succeeded."""
    out = [Violation(clause, f"({label} prompt) {v.message}") for v in served(clause, observed)]
    requests = observed.requests
    size = len(prompt.encode("utf-8"))
    if not requests:
        out.append(Violation(clause, f"the {label} prompt ({size} bytes) reached no model request"))
    elif prompt not in requests[0].user_text:
        got = len(requests[0].user_text.encode("utf-8"))
        out.append(
            Violation(
                clause,
                f"the {label} prompt ({size} bytes) is not in the first request's user text "
                f"({got} bytes) byte for byte: it was cut, changed or split",
            )
        )
    token = observed.values["token"]
    out += [
        Violation(clause, f"({label} prompt) {v.message}")
        for v in final_answer(clause, observed, f"Received {token}.")
    ]
    return out


def verify_nul_refused(observed: Observed) -> list[Violation]:
    """INP-03: refused before anything starts, with a message naming the NUL byte."""
    clause = "INP-03"
    result = observed.result
    out: list[Violation] = []
    if observed.all_requests:
        out.append(
            Violation(
                clause,
                f"the model got {observed.all_requests} request(s): a prompt with a NUL byte "
                "must be refused before anything starts",
            )
        )
    if result.timed_out:
        out.append(Violation(clause, "run() did not return: the refusal must come at once"))
        return out
    spawned = [e for e in result.events if e.type == RunEventType.SPAWN]
    if spawned:
        out.append(Violation(clause, "a spawn run event was emitted: a process was started"))
    response = result.response
    if result.error is not None:
        message = str(result.error)
        what = f"run() raised {type(result.error).__qualname__}"
    elif response is not None and response.failure is not None:
        message = response.failure.message
        what = f"the run failed ({response.failure.code or 'no code'})"
    else:
        out.append(
            Violation(
                clause,
                "run() accepted a prompt with a NUL byte and succeeded: it must refuse it",
            )
        )
        return out
    if not _NUL_NAMED.search(message):
        out.append(
            Violation(
                clause,
                f"{what} with the message {provider_text(message)}, which does not name the "
                "NUL byte",
            )
        )
    return out


def probe_scenario_input(ctx: ProbeContext) -> None:
    """Send the large, the awkward and the NUL prompts; judge INP-01..03."""
    binding, wanted = gate(ctx, clauses_of("scenario_input"))
    if binding is None:
        return
    if "INP-01" in wanted:
        token = new_token()
        prompt = large_prompt(token)
        single_run(
            ctx,
            binding,
            "INP-01",
            "answer",
            prompt,
            lambda seen: verify_prompt_delivered("INP-01", "1 MiB", prompt, seen),
            values={"token": token},
        )
    if "INP-02" in wanted:
        token = new_token()
        for label, text in awkward_prompts(token).items():
            single_run(
                ctx,
                binding,
                "INP-02",
                "answer",
                text,
                partial(verify_prompt_delivered, "INP-02", label, text),
                values={"token": token},
            )
    if "INP-03" in wanted:
        token = new_token()
        single_run(
            ctx,
            binding,
            "INP-03",
            "answer",
            nul_prompt(token),
            verify_nul_refused,
            values={"token": token},
            refusal=True,
        )
