"""The two-way mode: the prompt goes to Claude Code as a stream-json user message on stdin,
and the CLI's permission prompts come back over its control messages, each one decided by
the run's human-decision policy and, where the policy asks, by the host.

The CLI is started with ``--input-format stream-json --permission-prompt-tool stdio``.
On stdin the driver writes an ``initialize`` control request, then the user message;
whenever the CLI needs permission for a tool it prints a ``control_request`` with
subtype ``can_use_tool`` and waits for the matching ``control_response`` on stdin. After
the turn's ``result`` line the driver closes stdin and the CLI exits: one run, one
process. ``docs/claude-control-protocol.md`` documents every message.

Which decision a request is: ``AskUserQuestion`` is a question, ``ExitPlanMode`` a plan
review, any other tool a permission. The effective policy
(:func:`driver.effective_human_decision_policy`) says what happens:

* ``auto_approve`` / ``auto_reject``: answered at once, the host is never asked;
* ``ask``: a :class:`driver.DecisionRequest` goes to the sink's ``request_decision``
  between ``hitl.requested`` and ``hitl.resolved``, bounded by the policy's timeout
  (a negative one never expires), not by the run's deadline.

A rejection or a timeout then follows ``on_reject`` / ``on_timeout``: ``continue`` denies
the tool with a message and the turn goes on; ``retry`` asks again, up to
``max_retries`` more times; ``abort`` denies it with ``interrupt`` (the CLI ends the turn)
and the run fails with ``decision_rejected`` / ``decision_timeout`` and a
``human_decision``. A sink that raises, or that cannot take decisions while the policy
asks, aborts the run with ``agent_error``.
"""

from __future__ import annotations

import json
import secrets
from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import anyio.abc

from driver import (
    DecisionCapableSink,
    DecisionChoice,
    DecisionRequest,
    DecisionResponse,
    DecisionResult,
    EventSink,
    FailureAction,
    FailureCode,
    HumanDecisionFailure,
    HumanDecisionKind,
    HumanDecisionMode,
    HumanDecisionPolicy,
    QuestionMode,
    RunFailure,
    TranscriptItem,
    TranscriptKind,
    ask_host,
    decision_mode,
    effective_human_decision_policy,
)
from driver.clikit import RunOutput, dict_field, list_field, str_field

__all__ = [
    "CONTROL_TYPES",
    "PLAN_TOOL",
    "QUESTION_TOOL",
    "ControlChannel",
    "decision_kind",
]

CONTROL_TYPES = frozenset({"control_request", "control_response", "control_cancel_request"})
"""The ``type`` of the lines of the control protocol (both directions)."""

QUESTION_TOOL = "AskUserQuestion"
"""Claude Code's tool for asking the user; its permission request is a question."""

PLAN_TOOL = "ExitPlanMode"
"""Claude Code's tool for leaving plan mode; its permission request is a plan review."""

_TURN_ENDED: dict[str, Any] = {"type": "result"}
"""What the parser hands the channel when the turn's ``result`` line arrived."""

_DENIED = "The host did not allow this"


def decision_kind(tool_name: str) -> HumanDecisionKind:
    """Which kind of decision a ``can_use_tool`` request for ``tool_name`` is."""
    if tool_name == QUESTION_TOOL:
        return HumanDecisionKind.QUESTION
    if tool_name == PLAN_TOOL:
        return HumanDecisionKind.PLAN_REVIEW
    return HumanDecisionKind.PERMISSION


def _line(message: dict[str, Any]) -> bytes:
    return (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def _allow(request_id: str, updated_input: dict[str, Any]) -> dict[str, Any]:
    return _success(request_id, {"behavior": "allow", "updatedInput": updated_input})


def _deny(request_id: str, message: str, *, interrupt: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"behavior": "deny", "message": message}
    if interrupt:
        body["interrupt"] = True
    return _success(request_id, body)


def _success(request_id: str, body: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "control_response",
        "response": {"subtype": "success", "request_id": request_id, "response": body},
    }


@dataclass(frozen=True, slots=True)
class _Asked:
    """One ``can_use_tool`` request as the CLI sent it."""

    request_id: str
    tool_name: str
    tool_use_id: str
    input: dict[str, Any]
    body: dict[str, Any]

    @property
    def kind(self) -> HumanDecisionKind:
        return decision_kind(self.tool_name)


class ControlChannel:
    """Owns the CLI's stdin for one two-way run (a :data:`driver.clikit.StdinWriter`).

    The parser hands it every control line (:meth:`take`) and the end of the turn
    (:meth:`turn_ended`); :attr:`failure` is the decision that ended the run, if any.
    """

    def __init__(
        self,
        out: RunOutput,
        sink: EventSink,
        *,
        prompt: str,
        policy: HumanDecisionPolicy,
        run_id: str,
        session_id: str = "",
    ) -> None:
        self._out = out
        self._decider = sink if isinstance(sink, DecisionCapableSink) else None
        self._prompt = prompt
        self._policy = effective_human_decision_policy(policy)
        self._run_id = run_id
        self._session_id = session_id
        self._lines: deque[dict[str, Any]] = deque()
        self._arrived = anyio.Event()
        self._write_lock = anyio.Lock()
        self._pending: dict[str, anyio.CancelScope] = {}
        self.failure: RunFailure | None = None
        """The failure a decision ended the run with (the first, when several did)."""

    # -- from the parser (synchronous) ----------------------------------------------------

    def take(self, line: dict[str, Any]) -> None:
        """A control line the CLI printed."""
        self._lines.append(line)
        self._arrived.set()

    def turn_ended(self) -> None:
        """The turn's ``result`` line arrived: stdin is closed and the CLI exits."""
        self.take(_TURN_ENDED)

    async def _next(self) -> dict[str, Any]:
        while not self._lines:
            await self._arrived.wait()
            self._arrived = anyio.Event()
        return self._lines.popleft()

    # -- the writer -----------------------------------------------------------------------

    async def __call__(self, stdin: anyio.abc.ByteSendStream) -> None:
        """Initialize, send the prompt, answer the CLI's requests until the turn ends."""
        self._stdin = stdin
        await self._write(
            {
                "type": "control_request",
                "request_id": f"init-{secrets.token_hex(8)}",
                "request": {"subtype": "initialize"},
            }
        )
        await self._write(
            {
                "type": "user",
                "message": {"role": "user", "content": self._prompt},
                "parent_tool_use_id": None,
                "session_id": self._session_id,
            }
        )
        async with anyio.create_task_group() as deciding:
            while (line := await self._next()) is not _TURN_ENDED:
                self._dispatch(line, deciding)
            deciding.cancel_scope.cancel()  # nothing is pending once the turn ended

    def _dispatch(self, line: dict[str, Any], deciding: anyio.abc.TaskGroup) -> None:
        kind = line.get("type")
        if kind == "control_cancel_request":
            scope = self._pending.get(str_field(line, "request_id"))
            if scope is not None:
                scope.cancel()
            return
        if kind != "control_request":
            return  # the answer to our initialize: nothing to do
        request_id = str_field(line, "request_id")
        body = dict_field(line, "request")
        if str_field(body, "subtype") != "can_use_tool":
            deciding.start_soon(self._unsupported, request_id, str_field(body, "subtype"))
            return
        asked = _Asked(
            request_id=request_id,
            tool_name=str_field(body, "tool_name"),
            tool_use_id=str_field(body, "tool_use_id"),
            input=dict_field(body, "input"),
            body=body,
        )
        scope = anyio.CancelScope()
        self._pending[request_id] = scope
        deciding.start_soon(self._decide, asked, scope)

    async def _write(self, message: dict[str, Any]) -> None:
        async with self._write_lock:
            await self._stdin.send(_line(message))

    async def _unsupported(self, request_id: str, subtype: str) -> None:
        """A request this driver does not serve gets an error answer, so the CLI never waits."""
        await self._write(
            {
                "type": "control_response",
                "response": {
                    "subtype": "error",
                    "request_id": request_id,
                    "error": f"control request {subtype or '(no subtype)'} is not supported",
                },
            }
        )

    # -- one decision ---------------------------------------------------------------------

    async def _decide(self, asked: _Asked, scope: anyio.CancelScope) -> None:
        try:
            with scope:
                await self._resolve(asked)
            if scope.cancelled_caught:  # the CLI withdrew the request: nothing to answer
                self._out.item(
                    TranscriptItem(
                        kind=TranscriptKind.SYSTEM,
                        subtype="permission_withdrawn",
                        text=f"Claude Code withdrew its permission request for {asked.tool_name}",
                    )
                )
        finally:
            self._pending.pop(asked.request_id, None)

    async def _resolve(self, asked: _Asked) -> None:
        mode = decision_mode(self._policy, asked.kind)
        if mode == HumanDecisionMode.AUTO_APPROVE:
            await self._write(_allow(asked.request_id, asked.input))
            return
        if mode in (HumanDecisionMode.AUTO_REJECT, QuestionMode.AUTO_REJECT):
            request = self._request(asked, 0)
            await self._refuse(asked, request, DecisionResult.REJECTED, attempts=0)
            return
        if self._decider is None:
            await self._abort(
                asked,
                f"the policy asks the host about {asked.tool_name}, but the sink cannot "
                "take decisions (it has no request_decision)",
            )
            return
        attempt = 0
        while True:
            request = self._request(asked, attempt)
            answer = await ask_host(self._decider, request, self._policy, self._out.stream)
            if answer.error is not None:
                self._out.item(
                    TranscriptItem(
                        kind=TranscriptKind.SYSTEM,
                        subtype="decision_aborted",
                        text=f"request_decision raised {type(answer.error).__name__}",
                    )
                )
                await self._abort(asked, f"the decision about {asked.tool_name} was aborted")
                return
            response, result = answer.response, answer.result
            if result in (DecisionResult.APPROVED, DecisionResult.ANSWERED):
                await self._write(_allow(asked.request_id, _answered(asked, response)))
                return
            if result == DecisionResult.ABORTED:
                await self._abort(asked, f"the host aborted the decision about {asked.tool_name}")
                return
            action = (
                self._policy.on_timeout
                if result == DecisionResult.TIMED_OUT
                else self._policy.on_reject
            )
            if action == FailureAction.RETRY and attempt < self._policy.max_retries:
                attempt += 1
                continue
            await self._refuse(asked, request, result, attempts=attempt + 1)
            return

    def _request(self, asked: _Asked, attempt: int) -> DecisionRequest:
        created = datetime.now(UTC)
        timeout = self._policy.timeout
        description = str_field(asked.body, "description")
        prompt = f"Claude Code asks to use {asked.tool_name}"
        if description:
            prompt += f": {description}"
        choices = [
            DecisionChoice(key="allow", label="Allow"),
            DecisionChoice(key="deny", label="Deny"),
        ]
        if asked.kind == HumanDecisionKind.QUESTION:
            prompt = "; ".join(q for q in _questions(asked.input)) or prompt
            choices = [
                DecisionChoice(key=label, label=label, description=str_field(option, "description"))
                for option in _options(asked.input)
                if (label := str_field(option, "label"))
            ]
        elif asked.kind == HumanDecisionKind.PLAN_REVIEW:
            prompt = "Claude Code asks to leave plan mode and carry out its plan"
        payload = {
            key: value
            for key, value in asked.body.items()
            if key not in ("subtype", "tool_use_id", "input")
        }
        payload["input"] = asked.input
        return DecisionRequest(
            request_id=asked.request_id if attempt == 0 else f"{asked.request_id}#{attempt + 1}",
            run_id=self._run_id,
            thread_id=self._out.thread_id,
            kind=asked.kind,
            source=asked.tool_name,
            tool_call_id=asked.tool_use_id,
            prompt=prompt,
            payload=payload,
            choices=choices,
            default_decision=DecisionResult.REJECTED,
            created_at=created,
            deadline=created + timeout if timeout > timedelta(0) else None,
            retry_attempt=attempt,
        )

    async def _refuse(
        self, asked: _Asked, request: DecisionRequest, result: DecisionResult, *, attempts: int
    ) -> None:
        """A rejection or a timeout: denied, then the run goes on or ends as the policy says."""
        timed_out = result == DecisionResult.TIMED_OUT
        action = self._policy.on_timeout if timed_out else self._policy.on_reject
        what = "no decision in time" if timed_out else "rejected"
        if action == FailureAction.CONTINUE:
            await self._write(_deny(asked.request_id, f"{_DENIED} ({what})", interrupt=False))
            return
        if self.failure is None:
            self.failure = RunFailure(
                code=FailureCode.TIMEOUT if timed_out else FailureCode.REJECT,
                message=f"{asked.kind} for {asked.tool_name}: {what}",
                metadata={"tool_name": asked.tool_name, "tool_use_id": asked.tool_use_id},
                human_decision=HumanDecisionFailure(
                    kind=asked.kind,
                    source=request.source,
                    decision=result,
                    request=request,
                    attempts=attempts,
                ),
            )
        await self._write(_deny(asked.request_id, f"{_DENIED} ({what})", interrupt=True))

    async def _abort(self, asked: _Asked, message: str) -> None:
        if self.failure is None:
            self.failure = RunFailure(
                code=FailureCode.AGENT_ERROR,
                message=message,
                metadata={"tool_name": asked.tool_name, "tool_use_id": asked.tool_use_id},
            )
        await self._write(_deny(asked.request_id, f"{_DENIED} (aborted)", interrupt=True))


def _questions(tool_input: dict[str, Any]) -> list[str]:
    return [
        text
        for q in list_field(tool_input, "questions")
        if isinstance(q, dict) and (text := str_field(q, "question"))
    ]


def _options(tool_input: dict[str, Any]) -> list[dict[str, Any]]:
    questions = [q for q in list_field(tool_input, "questions") if isinstance(q, dict)]
    if not questions:
        return []
    return [o for o in list_field(questions[0], "options") if isinstance(o, dict)]


def _answered(asked: _Asked, response: DecisionResponse) -> dict[str, Any]:
    """The tool input the CLI runs with: a question's input gains the host's ``answers``
    (per question: the response's ``answer`` entry, else its choice, else its text)."""
    if asked.kind != HumanDecisionKind.QUESTION:
        return asked.input
    answers: dict[str, str] = {}
    for question in _questions(asked.input):
        given = response.answer.get(question)
        answers[question] = given if isinstance(given, str) else response.choice or response.text
    return {**asked.input, "answers": answers}
