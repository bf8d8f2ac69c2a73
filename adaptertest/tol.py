"""TOL family (Python extension): tool round trips against the model (TOL-01..03).

The ``scenario_tools`` probe serves three scenarios (``adaptertest/scenarios/tool_*.json``)
in which the model calls the agent's own shell tool (the ``$shell`` role, resolved to
the tool the agent offers; see ``adaptertest.emulator._roles``), then answers:

- TOL-01 (``tool_runs``): the command writes a unique token to a file and prints it.
  The file must be in the run's workspace afterwards, the token must reach the model in
  the next request's tool results, the transcript must pair the call with a result that
  carries the token, and the run must succeed with the model's final answer.
- TOL-02 (``tool_fails``): the command reads a file that does not exist. The failure is
  no reason to stop: the result reaches the model, the transcript pairs the call with a
  result marked ``is_error``, and the run succeeds with the final answer.
- TOL-03 (``tool_pair``): two commands in one model turn. Two calls and two results with
  distinct ids that pair one to one, both outputs in the next request, and the tool
  calls of the stream (when it carries any) name the transcript's ids.
"""

from __future__ import annotations

from adaptertest._probe import ProbeContext
from adaptertest._scenarios import (
    Observed,
    clauses_of,
    gate,
    items,
    new_token,
    outcome_of,
    single_run,
)
from adaptertest._violation import Violation, provider_text
from driver.events import StreamKind
from driver.transcript import TranscriptItem, TranscriptKind

__all__ = [
    "TOOL_FILE",
    "TOOL_PROMPT",
    "probe_scenario_tools",
    "verify_failing_tool",
    "verify_tool_pair",
    "verify_tool_runs",
]

TOOL_PROMPT = "Run the shell command you are given and report what it printed."
"""The prompt of the tool scenarios (the scripted model decides what runs)."""
TOOL_FILE = "adaptertest-tool.txt"
"""The file the ``tool_runs`` command writes in the workspace."""


def served(clause: str, observed: Observed) -> list[Violation]:
    """Whether the scenario could be served and the run succeeded."""
    out = [
        Violation(clause, f"the emulator could not serve the scenario: {problem}")
        for problem in observed.problems
    ]
    failed = outcome_of(observed.result)
    if failed:
        out.append(Violation(clause, f"the run did not succeed: {failed}"))
    return out


def final_answer(clause: str, observed: Observed, expected: str) -> list[Violation]:
    """The run's output is the model's last answer."""
    response = observed.response
    if response is None or response.output.strip() == expected:
        return []
    return [
        Violation(
            clause,
            f"output is {provider_text(response.output)}, expected the model's final answer "
            f"{provider_text(expected)}",
        )
    ]


def pairing(clause: str, calls: list[TranscriptItem], results: list[TranscriptItem]) -> list[str]:
    """Problems with how tool results name their calls (empty: one to one)."""
    problems: list[str] = []
    call_ids = [c.tool_use_id for c in calls]
    result_ids = [r.tool_use_id for r in results]
    if any(not i for i in call_ids + result_ids):
        problems.append("a tool_call or tool_result item has an empty tool_use_id")
    if len(set(call_ids)) != len(call_ids):
        problems.append(f"tool_call ids repeat: {call_ids}")
    if sorted(call_ids) != sorted(result_ids):
        problems.append(f"tool_call ids {call_ids} and tool_result ids {result_ids} do not pair")
    return problems


def tool_items(
    clause: str, observed: Observed, calls_made: int
) -> tuple[list[TranscriptItem], list[TranscriptItem], list[Violation]]:
    """The run's tool_call and tool_result items, and what is wrong with them: not
    ``calls_made`` of each, or ids that do not pair one to one."""
    calls = items(observed.response, TranscriptKind.TOOL_CALL)
    results = items(observed.response, TranscriptKind.TOOL_RESULT)
    out: list[Violation] = []
    if observed.response is None:
        return calls, results, out
    if len(calls) != calls_made or len(results) != calls_made:
        out.append(
            Violation(
                clause,
                f"the transcript has {len(calls)} tool_call and {len(results)} tool_result "
                f"item(s); the model made {calls_made} call(s)",
            )
        )
    out += [Violation(clause, p) for p in pairing(clause, calls, results)]
    return calls, results, out


def _reached_model(clause: str, observed: Observed, needles: list[str]) -> list[Violation]:
    requests = observed.requests
    if len(requests) < 2:
        return [
            Violation(
                clause,
                f"the model got {len(requests)} main request(s); the tool's result must come "
                "back in a second one",
            )
        ]
    results = requests[1].tool_results
    missing = [n for n in needles if not any(n in text for text in results)]
    if not missing:
        return []
    return [
        Violation(
            clause,
            f"the next request (main request 1) carries {len(results)} tool result(s), and "
            f"{len(missing)} of the {len(needles)} expected command output(s) are in none "
            "of them",
        )
    ]


def verify_tool_runs(observed: Observed) -> list[Violation]:
    """TOL-01: the command ran in the workspace, its output reached the model, the
    transcript pairs call and result, and the run ended with the final answer."""
    clause = "TOL-01"
    token = observed.values["token"]
    out = served(clause, observed)
    written = observed.workspace / TOOL_FILE
    try:
        content = written.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        content = None
    if content is None:
        out.append(
            Violation(
                clause,
                f"the command did not leave {TOOL_FILE} in the run's workspace: it did not "
                "run there, or not at all",
            )
        )
    elif content.strip() != token:
        out.append(Violation(clause, f"{TOOL_FILE} holds {provider_text(content)}, not the token"))
    out += _reached_model(clause, observed, [token])
    _, results, problems = tool_items(clause, observed, 1)
    out += problems
    if observed.response is not None:
        if results and not any(token in r.text for r in results):
            out.append(Violation(clause, "no tool_result item carries the command's output"))
        out += final_answer(clause, observed, f"The tool wrote {token}.")
    return out


def verify_failing_tool(observed: Observed) -> list[Violation]:
    """TOL-02: a failed command is an error result, reaches the model, and the run goes on."""
    clause = "TOL-02"
    token = observed.values["token"]
    out = served(clause, observed)
    requests = observed.requests
    if len(requests) < 2:
        out.append(
            Violation(
                clause,
                f"the model got {len(requests)} main request(s); the failed command's result "
                "must come back in a second one",
            )
        )
    elif not requests[1].tool_results:
        out.append(Violation(clause, "the next request (main request 1) carries no tool result"))
    _, results, problems = tool_items(clause, observed, 1)
    out += problems
    if observed.response is not None:
        unmarked = [i for i, r in enumerate(results) if not r.is_error]
        if unmarked:
            out.append(
                Violation(
                    clause,
                    f"the tool_result of the failed command is not marked is_error "
                    f"(result(s) {unmarked})",
                )
            )
        out += final_answer(clause, observed, f"The file {token} is missing.")
    return out


def verify_tool_pair(observed: Observed) -> list[Violation]:
    """TOL-03: two calls in one turn pair with two results, both reach the model, and
    the stream names the transcript's calls."""
    clause = "TOL-03"
    token = observed.values["token"]
    out = served(clause, observed)
    out += _reached_model(clause, observed, [f"first-{token}", f"second-{token}"])
    response = observed.response
    if response is None:
        return out
    calls, results, problems = tool_items(clause, observed, 2)
    out += problems
    for word in ("first", "second"):
        if not any(f"{word}-{token}" in r.text for r in results):
            out.append(
                Violation(clause, f"no tool_result item carries the {word} command's output")
            )
    stream = observed.result.stream
    call_ids = sorted(c.tool_use_id for c in calls)
    started = sorted(p.tool_call_id for p in stream if p.kind == StreamKind.TOOL_CALL_START)
    if started and started != call_ids:
        out.append(
            Violation(
                clause,
                f"the stream starts tool calls {started}, the transcript has {call_ids}",
            )
        )
    finished = [p.tool_call_id for p in stream if p.kind == StreamKind.TOOL_CALL_RESULT]
    stray = sorted(set(finished) - set(call_ids))
    if stray:
        out.append(
            Violation(clause, f"the stream has results of tool calls {stray} the transcript lacks")
        )
    out += final_answer(clause, observed, "Both commands ran.")
    return out


_CASES = (
    ("TOL-01", "tool_runs", verify_tool_runs),
    ("TOL-02", "tool_fails", verify_failing_tool),
    ("TOL-03", "tool_pair", verify_tool_pair),
)


def probe_scenario_tools(ctx: ProbeContext) -> None:
    """Serve the three tool scenarios to the bound driver and judge TOL-01..03."""
    binding, wanted = gate(ctx, clauses_of("scenario_tools"))
    if binding is None:
        return
    for clause, name, judge in _CASES:
        if clause in wanted:
            token = new_token()
            single_run(ctx, binding, clause, name, TOOL_PROMPT, judge, values={"token": token})
