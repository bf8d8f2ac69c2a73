"""Human decisions: what the scripted model wants to do, and asking the host about it.

The scripted model obeys two prompts literally (the ones the suite's ``hitl`` probe
sends): ``Run this shell command: CMD`` makes it call the ``shell`` tool, which needs
permission; ``Ask me this question, then reply with my answer: Q`` makes it ask the
host ``Q``. :func:`decide` applies the run's human-decision policy: an auto mode decides
at once, Ask hands the request to a ``DecisionCapableSink`` and waits at most the
policy's timeout, announcing the decision with ``hitl.requested`` and closing it with
``hitl.resolved``.
"""

from __future__ import annotations

import shlex
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from driver import (
    DecisionCapableSink,
    DecisionChoice,
    DecisionRequest,
    DecisionResult,
    EventSink,
    FailureAction,
    HumanDecisionKind,
    HumanDecisionMode,
    HumanDecisionPolicy,
    QuestionMode,
    StreamPayload,
    ask_host,
    decision_mode,
    effective_human_decision_policy,
)

__all__ = ["Action", "Decision", "decide", "failure_action", "run_shell", "wanted_action"]

_SHELL_PROMPT = "Run this shell command: "
_QUESTION_PROMPT = "Ask me this question, then reply with my answer: "
_SOURCE = "reference"


@dataclass(frozen=True)
class Action:
    """A tool call the scripted model makes that needs a human decision first."""

    kind: HumanDecisionKind
    tool: str
    detail: str
    """The shell command, or the question."""

    @property
    def arguments(self) -> dict[str, str]:
        key = "question" if self.kind == HumanDecisionKind.QUESTION else "command"
        return {key: self.detail}


def wanted_action(prompt: str) -> Action | None:
    """The action the scripted model takes for ``prompt``, if it needs a decision."""
    # provider: the model decides this; the CLI reports the tool call it makes.
    if prompt.startswith(_SHELL_PROMPT):
        return Action(HumanDecisionKind.PERMISSION, "shell", prompt.removeprefix(_SHELL_PROMPT))
    if prompt.startswith(_QUESTION_PROMPT):
        question = prompt.removeprefix(_QUESTION_PROMPT)
        return Action(HumanDecisionKind.QUESTION, "ask_user", question)
    return None


def run_shell(command: str) -> str:
    """The in-memory shell: ``echo`` prints its words, piped through any ``tee`` (which
    writes nothing: the shell has no disk); anything else is not found."""
    # provider: the CLI runs the command itself once it is allowed to.
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars="|")
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        return "shell: cannot parse the command"
    stages: list[list[str]] = [[]]
    for word in words:
        if word == "|":
            stages.append([])
        else:
            stages[-1].append(word)
    first, rest = stages[0], stages[1:]
    unknown = [stage[0] if stage else "" for stage in rest if stage[:1] != ["tee"]]
    if first[:1] != ["echo"] or unknown:
        name = unknown[0] if first[:1] == ["echo"] else (first[0] if first else "")
        return f"shell: {name}: command not found"
    return " ".join(first[1:])


@dataclass(frozen=True)
class Decision:
    """How one decision ended: its result, the host's text, and the request asked (None
    when the policy decided without asking)."""

    result: DecisionResult
    text: str = ""
    request: DecisionRequest | None = None


def failure_action(policy: HumanDecisionPolicy, result: DecisionResult) -> FailureAction:
    """What the policy does after ``result`` (only rejections and timeouts are asked
    about). The reference cannot ask twice, so retry acts as abort."""
    effective = effective_human_decision_policy(policy)
    action = effective.on_timeout if result == DecisionResult.TIMED_OUT else effective.on_reject
    return FailureAction.CONTINUE if action == FailureAction.CONTINUE else FailureAction.ABORT


async def decide(
    action: Action,
    policy: HumanDecisionPolicy,
    sink: EventSink,
    emit: Callable[[StreamPayload], None],
    *,
    run_id: str,
    thread_id: str,
    tool_call_id: str,
) -> Decision:
    """Decide ``action`` as ``policy`` says: at once under an auto mode, else ask ``sink``
    and wait at most the policy's timeout (``timed_out`` after it). ``emit`` sends the
    stream payloads. A sink that cannot decide, or raises, aborts the decision."""
    effective = effective_human_decision_policy(policy)
    mode = decision_mode(effective, action.kind)
    if mode == HumanDecisionMode.AUTO_APPROVE:
        return Decision(DecisionResult.APPROVED)
    if mode in (HumanDecisionMode.AUTO_REJECT, QuestionMode.AUTO_REJECT):
        return Decision(DecisionResult.REJECTED)
    if not isinstance(sink, DecisionCapableSink):
        return Decision(DecisionResult.ABORTED)  # no host to ask: fail closed
    seconds = effective.timeout.total_seconds()
    created = datetime.now(UTC)
    request = DecisionRequest(
        request_id=f"decision-{uuid.uuid4().hex}",
        run_id=run_id,
        thread_id=thread_id,
        kind=action.kind,
        source=_SOURCE,
        tool_call_id=tool_call_id,
        prompt=action.detail,
        payload=action.arguments,
        choices=_choices(action.kind),
        created_at=created,
        deadline=created + effective.timeout if seconds > 0 else None,
    )
    answer = await ask_host(sink, request, policy, emit)
    return Decision(answer.result, answer.response.text, request)


def _choices(kind: HumanDecisionKind) -> list[DecisionChoice]:
    if kind == HumanDecisionKind.QUESTION:
        return []
    return [
        DecisionChoice(key="allow", label="Allow", description="run the command once"),
        DecisionChoice(key="deny", label="Deny", description="do not run it"),
    ]
