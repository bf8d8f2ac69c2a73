"""HIL family (Python extension): human decisions judged live (HIL-01..HIL-09).

The SPI's human-in-the-loop contract: under a policy that asks
(``RunPolicy.human_decision``, read through ``effective_human_decision_policy``), a
driver that declares an Ask mode in ``run_policy_caps`` hands each decision to the sink's
``request_decision`` (``DecisionCapableSink``) as a ``DecisionRequest``, announces it with
``hitl.requested`` and closes it with ``hitl.resolved`` when its stream declares
``hitl``, and acts on the answer: approved, the action happens; rejected or unanswered,
it does not, and ``on_reject`` / ``on_timeout`` say whether the run fails
(``decision_rejected`` / ``decision_timeout`` with ``failure.human_decision``) or goes
on. Auto policies decide without the sink.

The ``hitl`` probe plays the host with a :class:`~adaptertest.sink.DecisionSink`
scripted per case (approve, reject, answer a question, never answer) and makes the
driver's agent ask in one of two ways:

- with ``Options(model_binding=...)``, each case runs a fresh driver against its own
  model-API emulator, whose scripted model calls the CLI's shell tool (or its question
  tool) and then answers; the emulator's recorded requests show what reached the model;
- otherwise the case's prompt asks for it (:data:`PERMISSION_PROMPT`,
  :data:`QUESTION_PROMPT`), which a driver's scripted model acts on (the reference
  driver's does), and ``Options(model_requests=...)`` shows what reached the model.

The shell command prints a token its own text does not contain (:func:`shell_command`),
so the token in a tool result the model receives proves the command ran. Without a
model side the probe does not run: only the model sees whether an action happened.
Every case needs ``live_run=True``; see ``docs/human-decisions.md``.
"""

from __future__ import annotations

import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from adaptertest._calls import Leftovers, describe_hang
from adaptertest._probe import ProbeContext
from adaptertest.liv import (
    LOOP_SLACK,
    LiveRun,
    error_type,
    live_request,
    outcome_summary,
    run_in_scope,
)
from adaptertest.options import SHELL_ROLE, ModelBinding, ModelEndpoint, Options
from adaptertest.sink import AskedDecision, DecisionScript, DecisionSink
from driver.clikit._proctable import RUN_MARKER_VARIABLE, end_marked, marked_pids, new_marker
from driver.decision import (
    DecisionResult,
    FailureAction,
    HumanDecisionKind,
    HumanDecisionMode,
    HumanDecisionPolicy,
    QuestionMode,
)
from driver.events import StreamKind, StreamPayload
from driver.policy import RunPolicy, RunPolicyCapabilities
from driver.run import FailureCode, Request, Response

if TYPE_CHECKING:
    from adaptertest.emulator import Emulator, Scenario

__all__ = [
    "ASKING_CLAUSES",
    "DECISION_GRACE",
    "DECISION_TIMEOUT",
    "HIL_CLAUSES",
    "PERMISSION_PROMPT",
    "QUESTION_PROMPT",
    "DecisionCase",
    "asks_declared",
    "decision_cases",
    "probe_hitl",
    "ran_token",
    "shell_command",
    "verify_asked",
    "verify_declared_kinds",
    "verify_pairs",
    "written_file",
]

HIL_CLAUSES = tuple(f"HIL-0{n}" for n in range(1, 10))

DECISION_GRACE = 5.0
"""Seconds past a deadline or a cancellation a run may take to end when no
``ModelBinding`` says otherwise (its ``grace``)."""

DECISION_TIMEOUT = 2.0
"""The policy timeout, in seconds, of the cases nobody answers."""

EARLY_TOLERANCE = 0.25
"""Seconds before the policy's deadline an unanswered decision may already end."""

PERMISSION_PROMPT = "Run this shell command: {command}"
"""The prompt of a permission case without a model binding: a driver's scripted model
runs ``command`` with a tool that needs permission."""

QUESTION_PROMPT = "Ask me this question, then reply with my answer: {question}"
"""The prompt of the question case without a model binding: a driver's scripted model
asks the host ``question`` and hands the answer back to the model."""


def shell_command(token: str) -> str:
    """A harmless shell command that prints :func:`ran_token` (which its text lacks) and
    writes it to :func:`written_file` in the working directory: an edit, which a CLI asks
    about by default where it lets a read-only command run."""
    return f"echo hitl-ran''-{token} | tee {written_file(token)}"


def written_file(token: str) -> str:
    """The file :func:`shell_command` writes (relative to the run's working directory)."""
    return f"hitl-{token}.txt"


def ran_token(token: str) -> str:
    """What :func:`shell_command` prints: seen by the model only if the command ran."""
    return f"hitl-ran-{token}"


def _question(token: str) -> str:
    return f"Which colour should the adaptertest marker {token} have?"


def _answer_text(token: str) -> str:
    return f"hitl-answer-{token}"


# ------------------------------------------------------------------------------------
# The cases
# ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DecisionCase:
    """One run of the ``hitl`` probe: what the agent is made to ask, under which policy,
    and how the host answers. ``cancel``: the host cancels the run while it waits."""

    name: str
    kind: HumanDecisionKind
    policy: HumanDecisionPolicy
    script: DecisionScript
    cancel: bool = False

    @property
    def asks(self) -> bool:
        """Whether the policy routes this case's decision to the host."""
        if self.kind == HumanDecisionKind.QUESTION:
            return self.policy.question == QuestionMode.ASK
        mode = self.policy.permission or HumanDecisionMode.ASK  # unset asks
        return mode == HumanDecisionMode.ASK


_ASK = HumanDecisionMode.ASK
_TIMEOUT = timedelta(seconds=DECISION_TIMEOUT)


def decision_cases(caps: RunPolicyCapabilities) -> list[DecisionCase]:
    """The cases a driver with these declarations runs, in order (one for a driver that
    declares no Ask mode: the default policy with a sink that would approve)."""
    P, Q = HumanDecisionKind.PERMISSION, HumanDecisionKind.QUESTION
    if not asks_declared(caps):
        return [DecisionCase("undeclared", P, HumanDecisionPolicy(), DecisionScript.APPROVE)]
    cases: list[DecisionCase] = []
    if caps.permission.ask:
        cases += [
            DecisionCase(
                "approve", P, HumanDecisionPolicy(permission=_ASK), DecisionScript.APPROVE
            ),
            DecisionCase("reject", P, HumanDecisionPolicy(permission=_ASK), DecisionScript.REJECT),
            DecisionCase(
                "reject-continue",
                P,
                HumanDecisionPolicy(permission=_ASK, on_reject=FailureAction.CONTINUE),
                DecisionScript.REJECT,
            ),
            DecisionCase(
                "timeout",
                P,
                HumanDecisionPolicy(permission=_ASK, timeout=_TIMEOUT),
                DecisionScript.SILENT,
            ),
            DecisionCase(
                "timeout-continue",
                P,
                HumanDecisionPolicy(
                    permission=_ASK, timeout=_TIMEOUT, on_timeout=FailureAction.CONTINUE
                ),
                DecisionScript.SILENT,
            ),
            DecisionCase(
                "cancel",
                P,
                HumanDecisionPolicy(permission=_ASK, timeout=timedelta(seconds=-1)),
                DecisionScript.SILENT,
                cancel=True,
            ),
        ]
    if caps.question.ask:
        policy = HumanDecisionPolicy(question=QuestionMode.ASK)
        cases.append(DecisionCase("question", Q, policy, DecisionScript.ANSWER))
    for mode, name in (
        (HumanDecisionMode.AUTO_APPROVE, "auto-approve"),
        (HumanDecisionMode.AUTO_REJECT, "auto-reject"),
    ):
        if getattr(caps.permission, mode.value):
            policy = HumanDecisionPolicy(permission=mode)
            cases.append(DecisionCase(name, P, policy, DecisionScript.APPROVE))
    return cases


def asks_declared(caps: RunPolicyCapabilities) -> bool:
    """Whether the descriptor declares any Ask mode (the driver "declares HITL")."""
    return caps.permission.ask or caps.plan_review.ask or caps.question.ask


# ------------------------------------------------------------------------------------
# Pure checks
# ------------------------------------------------------------------------------------


def verify_declared_kinds(caps: RunPolicyCapabilities, asked: Sequence[AskedDecision]) -> list[str]:
    """HIL-09: every decision the sink got is of a kind whose Ask mode is declared."""
    problems: list[str] = []
    for index, decision in enumerate(asked):
        kind = str(decision.request.kind)
        support = getattr(caps, kind, None) if kind else None
        if support is None or not support.ask:
            problems.append(
                f"decision {index} (kind {kind!r}) reached request_decision, but "
                f"run_policy_caps declares no ask for {kind or 'an empty kind'}"
            )
    return problems


def verify_asked(case: DecisionCase, asked: Sequence[AskedDecision]) -> list[str]:
    """HIL-01: an asking case's action reached the sink as exactly one request of the
    case's kind (``asked`` holds what the sink received)."""
    if not asked:
        return [
            f"the {case.kind} the agent needed never reached request_decision under a "
            f"policy that asks (case {case.name!r})"
        ]
    problems: list[str] = []
    if len(asked) > 1:
        problems.append(
            f"case {case.name!r}: {len(asked)} decisions reached request_decision for one "
            f"{case.kind}"
        )
    for index, decision in enumerate(asked):
        kind = str(decision.request.kind)
        if kind != case.kind:
            problems.append(
                f"case {case.name!r}: decision {index} has kind {kind!r}, expected "
                f"{case.kind.value!r}"
            )
    return problems


def _expected_result(decision: AskedDecision) -> str:
    response = decision.response
    return str(response.result) if response is not None else DecisionResult.TIMED_OUT.value


def verify_pairs(
    case: DecisionCase,
    asked: Sequence[AskedDecision],
    stream: Sequence[StreamPayload],
    *,
    cancelled: bool = False,
) -> list[str]:
    """HIL-02: one ``hitl.requested`` before each decision was asked and one
    ``hitl.resolved`` after it ended, with its request_id and kind; the resolved result
    is the sink's answer (``timed_out`` when none came). When the run was ``cancelled``
    (by the host, or at its deadline), a wait that ended unanswered needs no
    ``hitl.resolved``."""
    problems: list[str] = []
    requested: dict[str, list[int]] = {}
    resolved: dict[str, list[int]] = {}
    for index, payload in enumerate(stream):
        if payload.kind == StreamKind.HITL_REQUESTED:
            body_id = payload.hitl_requested.request_id if payload.hitl_requested else None
            target = requested
        elif payload.kind == StreamKind.HITL_RESOLVED:
            body_id = payload.hitl_resolved.request_id if payload.hitl_resolved else None
            target = resolved
        else:
            continue
        if body_id is None:
            problems.append(
                f"payload {index} ({payload.kind}) carries no envelope, so it matches no decision"
            )
            continue
        target.setdefault(body_id, []).append(index)
    ids: set[str] = set()
    for number, decision in enumerate(asked):
        rid = decision.request.request_id
        where = f"case {case.name!r}, decision {number}"
        if not rid:
            problems.append(
                f"{where}: the DecisionRequest has an empty request_id, so no hitl payload "
                "can name it"
            )
            continue
        ids.add(rid)
        asks = requested.get(rid, [])
        ends = resolved.get(rid, [])
        if len(asks) != 1:
            problems.append(f"{where} ({rid!r}): {len(asks)} hitl.requested, expected 1")
        elif asks[0] >= decision.stream_before:
            problems.append(
                f"{where} ({rid!r}): hitl.requested is payload {asks[0]}, after the sink was "
                f"asked (payload {decision.stream_before} was next)"
            )
        if asks and stream[asks[0]].hitl_requested is not None:
            kind = str(stream[asks[0]].hitl_requested.kind)  # type: ignore[union-attr]
            if kind != str(decision.request.kind):
                problems.append(
                    f"{where} ({rid!r}): hitl.requested has kind {kind!r}, the request "
                    f"{str(decision.request.kind)!r}"
                )
        if cancelled and decision.response is None:
            # A wait ended by the run's cancellation may end without hitl.resolved.
            if len(ends) > 1:
                problems.append(f"{where} ({rid!r}): {len(ends)} hitl.resolved, expected 1")
            continue
        if len(ends) != 1:
            problems.append(f"{where} ({rid!r}): {len(ends)} hitl.resolved, expected 1")
            continue
        end = ends[0]
        after = decision.stream_after
        if after is not None and end < after:
            problems.append(
                f"{where} ({rid!r}): hitl.resolved is payload {end}, before the sink's call "
                f"ended (payload {after} was next)"
            )
        body = stream[end].hitl_resolved
        if body is not None:
            if str(body.kind) != str(decision.request.kind):
                problems.append(
                    f"{where} ({rid!r}): hitl.resolved has kind {str(body.kind)!r}, the "
                    f"request {str(decision.request.kind)!r}"
                )
            want = _expected_result(decision)
            if str(body.result) != want:
                problems.append(
                    f"{where} ({rid!r}): hitl.resolved says result {str(body.result)!r}, the "
                    f"decision ended {want!r}"
                )
    for rid, indexes in sorted({**requested, **resolved}.items()):
        if rid not in ids:
            problems.append(
                f"case {case.name!r}: hitl payload(s) {', '.join(map(str, indexes))} name "
                f"request_id {rid!r}, which no decision the sink received carries"
            )
    return problems


def _failure_of(response: Response | None) -> tuple[str, Any]:
    failure = None if response is None else response.failure
    if failure is None:
        return "", None
    return str(failure.code), failure.human_decision


def verify_decision_failure(
    case: DecisionCase,
    response: Response | None,
    code: FailureCode,
    decision: DecisionResult,
) -> list[str]:
    """The run failed with ``code`` and a ``human_decision`` of the case's kind saying
    ``decision`` (HIL-04, HIL-05 and HIL-06 with their abort actions)."""
    got, human = _failure_of(response)
    where = f"case {case.name!r}"
    if response is None:
        return [f"{where}: no Response, expected a failure with code {code.value!r}"]
    if got != code.value:
        shown = f"failure code {got!r}" if got else "no failure"
        return [f"{where}: the run ended with {shown}, expected {code.value!r}"]
    if human is None:
        return [f"{where}: failure {code.value!r} without failure.human_decision"]
    problems: list[str] = []
    if str(human.kind) != case.kind:
        problems.append(
            f"{where}: failure.human_decision.kind is {str(human.kind)!r}, expected "
            f"{case.kind.value!r}"
        )
    if str(human.decision) != decision.value:
        problems.append(
            f"{where}: failure.human_decision.decision is {str(human.decision)!r}, expected "
            f"{decision.value!r}"
        )
    return problems


# ------------------------------------------------------------------------------------
# Running one case
# ------------------------------------------------------------------------------------


@dataclass
class CaseRun:
    """What one case did: the run, the sink, what reached the model, the timings."""

    case: DecisionCase
    token: str
    result: LiveRun
    sink: DecisionSink
    seen: list[str] | None
    """Texts the model received during the run (user turns and tool results); None: the
    model side could not be read."""
    grace: float
    pending_at_return: int = 0
    overran: bool = False
    cancel_at: float | None = None
    ended_at: float | None = None
    left_running: list[int] = field(default_factory=list)
    model_problem: str = ""
    wrote: bool | None = None
    """Whether the command's file is in the case's workspace (None: no workspace of the
    suite's own to look in, without a model binding)."""

    def reached_model(self, text: str) -> bool | None:
        """Whether ``text`` reached the model (None: the model side is not visible)."""
        return None if self.seen is None else any(text in seen for seen in self.seen)

    @property
    def failed(self) -> str:
        return outcome_summary(self.result.response, self.result.error)


def _request(case: DecisionCase, token: str, config: object | None, cwd: str | None) -> Request:
    """The case's request; ``config`` is None for a driver the model binding built, which
    runs with its own (``Options.config`` would point it back at the live run's model)."""
    if case.kind == HumanDecisionKind.QUESTION:
        prompt = QUESTION_PROMPT.format(question=_question(token))
    else:
        prompt = PERMISSION_PROMPT.format(command=shell_command(token))
    request = live_request(config, prompt, cwd)
    request.run_id = f"adaptertest-hitl-{case.name}"
    request.policy = RunPolicy(human_decision=case.policy.model_copy(deep=True))
    return request


def _sink(case: DecisionCase, token: str, on_ask: Callable[[AskedDecision], None]) -> DecisionSink:
    return DecisionSink(case.script, text=_answer_text(token), on_ask=on_ask)


async def _drive(
    run: Callable[..., Any], request: Request, sink: DecisionSink, scope: anyio.CancelScope
) -> tuple[LiveRun, int, float]:
    """Call ``run`` inside ``scope``; the sink is sealed as it returns. Returns the run,
    how many decision calls were still waiting then, and when it returned."""
    result = await run_in_scope(run, request, sink, scope)
    ended = time.monotonic()
    pending = sum(1 for decision in sink.asked if decision.pending)
    return result, pending, ended


@dataclass
class _Drive:
    """The outcome of :func:`_execute` before the model side is read."""

    result: LiveRun
    sink: DecisionSink
    pending: int
    ended_at: float | None
    cancel_at: float | None
    overran: bool
    """run() was still going ``grace`` seconds after it was cancelled."""


async def _execute(
    run: Callable[..., Any],
    request: Request,
    case: DecisionCase,
    token: str,
    deadline: float,
    grace: float,
) -> _Drive:
    """Run one case on the driver's loop under ``deadline``. A cancel case cancels the
    run once the sink is asked; a case nobody answers stops the run the policy's timeout
    plus ``grace`` after the sink was asked (never sooner than that, however long the
    agent took to ask). A run still going ``grace`` seconds after it was stopped gets its
    silent waits answered ``aborted``, so the suite never hangs on it."""
    wake = anyio.Event()  # the sink was asked, or the run ended without asking
    sink = _sink(case, token, lambda _: wake.set())
    leftovers = Leftovers()
    scope = anyio.CancelScope(deadline=anyio.current_time() + deadline)
    done = anyio.Event()
    box: list[tuple[LiveRun, int, float]] = []
    cancel_at: float | None = None
    unanswered = case.script is DecisionScript.SILENT

    async def drive() -> None:
        box.append(await _drive(run, request, sink, scope))
        done.set()
        wake.set()

    async with anyio.create_task_group() as group:
        group.start_soon(drive)
        if unanswered:
            with anyio.move_on_after(deadline):
                await wake.wait()
            asked = bool(sink.asked) and not done.is_set()
            if case.cancel:
                cancel_at = time.monotonic() if asked else None
                scope.cancel()
            elif asked:
                limit = anyio.current_time() + DECISION_TIMEOUT + grace
                scope.deadline = min(scope.deadline, limit)
        left = 0.0 if case.cancel else max(0.0, scope.deadline - anyio.current_time())
        with anyio.move_on_after(left + grace):
            await done.wait()
        overran = not done.is_set()
        if overran:
            scope.cancel()
            sink.release()  # a driver that shields its wait gets an answer at last
            with anyio.move_on_after(grace):
                await done.wait()
            if not done.is_set():
                group.cancel_scope.cancel()
    await leftovers.settle()
    if not box:  # run() ignored cancellation even once its wait was answered
        sink.seal()
        abandoned = LiveRun(timed_out=True)
        abandoned.capture(sink)
        pending = sum(1 for decision in sink.asked if decision.pending)
        return _Drive(abandoned, sink, pending, None, cancel_at, overran)
    result, pending, ended = box[0]
    result.capture(sink)
    return _Drive(result, sink, pending, ended, cancel_at, overran)


class _ModelSide:
    """Reads the texts the model received during one case run."""

    def __init__(self, read: Callable[[], Sequence[object]] | None) -> None:
        self._read = read
        self._before = 0
        self.problem = ""

    def _texts(self) -> list[list[str]] | None:
        if self._read is None:
            return None
        try:
            requests = list(self._read())
        except Exception as exc:  # noqa: BLE001 - reported as the model side's problem
            self.problem = f"reading the model side raised {error_type(exc)}"
            return None
        out: list[list[str]] = []
        for request in requests:
            user = getattr(request, "user_text", None)
            results = getattr(request, "tool_results", None)
            if not isinstance(user, str) or not isinstance(results, list | tuple):
                self.problem = (
                    f"the model side gave a {type(request).__qualname__} without str "
                    "user_text and a tool_results sequence"
                )
                return None
            out.append([user, *(str(r) for r in results)])
        return out

    def mark(self) -> None:
        texts = self._texts()
        self._before = 0 if texts is None else len(texts)

    def since(self) -> list[str] | None:
        texts = self._texts()
        if texts is None:
            return None
        made = texts[self._before :] if len(texts) >= self._before else texts
        return [text for request in made for text in request]


# ------------------------------------------------------------------------------------
# Emulator scenarios (with a model binding)
# ------------------------------------------------------------------------------------


def decision_scenario(case: DecisionCase, token: str) -> Scenario:
    """The emulator scenario of ``case``: the model calls the agent's own shell tool (the
    ``$shell`` role, resolved from the tools its request offers), or for a question
    Claude Code's ``AskUserQuestion``, then answers once."""
    from adaptertest.emulator import Scenario, ToolCall, Turn

    if case.kind == HumanDecisionKind.QUESTION:
        call = ToolCall(
            name="AskUserQuestion",
            arguments={
                "questions": [
                    {
                        "question": _question(token),
                        "header": "Marker",
                        "multiSelect": False,
                        "options": [
                            {"label": "red", "description": "a red marker"},
                            {"label": "blue", "description": "a blue marker"},
                        ],
                    }
                ]
            },
        )
    else:
        call = ToolCall(name=f"${SHELL_ROLE}", arguments={"command": shell_command(token)})
    return Scenario(turns=[Turn(tool_calls=[call]), Turn(text="Done.")], repeat_last=True)


@contextmanager
def _endpoint(
    binding: ModelBinding, scenario: Scenario
) -> Iterator[tuple[Emulator, ModelEndpoint]]:
    """A running emulator, a fresh home and workspace and a process marker, for one case;
    whatever still carries the marker afterwards is ended."""
    from adaptertest.emulator import Emulator

    root = Path(tempfile.mkdtemp(prefix="adaptertest-hitl-"))
    marker = new_marker()
    home, workspace = root / "home", root / "workspace"
    home.mkdir()
    workspace.mkdir()
    emulator = Emulator(scenario, tools=binding.tools).start()
    try:
        yield (
            emulator,
            ModelEndpoint(
                base_url=emulator.base_url,
                protocol=binding.protocol,
                home=home,
                workspace=workspace,
                env={RUN_MARKER_VARIABLE: marker},
                api_key="adaptertest-emulator-key",
            ),
        )
    finally:
        end_marked(RUN_MARKER_VARIABLE, marker, grace=1.0)
        emulator.stop()
        shutil.rmtree(root, ignore_errors=True)


def _left_running(endpoint: ModelEndpoint | None, grace: float) -> list[int]:
    """The processes carrying the endpoint's marker still alive ``grace`` seconds after
    the run (waiting for them to go, bounded)."""
    if endpoint is None:
        return []
    marker = endpoint.env[RUN_MARKER_VARIABLE]
    give_up = time.monotonic() + grace
    while True:
        found = marked_pids(RUN_MARKER_VARIABLE, marker) or []
        if not found or time.monotonic() >= give_up:
            return found
        time.sleep(0.05)


# ------------------------------------------------------------------------------------
# The probe
# ------------------------------------------------------------------------------------


def _grace(options: Options) -> float:
    binding = options.model_binding
    return binding.grace if binding is not None else DECISION_GRACE


def _run_case(ctx: ProbeContext, case: DecisionCase) -> CaseRun | str:
    """Run one case; a string says why it could not be run at all."""
    options = ctx.options
    token = uuid.uuid4().hex[:16]
    grace = _grace(options)
    deadline = options.live_run_timeout
    binding = options.model_binding
    if binding is None:
        return _case_on(ctx, ctx.driver, case, token, deadline, grace, None, options.model_requests)
    scenario = decision_scenario(case, token)
    with _endpoint(binding, scenario) as (emulator, endpoint):
        made = ctx.attempt(binding.driver, endpoint, awaitable=False)
        if not made.ok or made.value is None:
            what = "hung" if made.timed_out else "failed"
            return f"ModelBinding.driver(endpoint) {what} for case {case.name!r}"
        read = lambda: emulator.requests  # noqa: E731 - read after each case's run
        return _case_on(ctx, made.value, case, token, deadline, grace, endpoint, read)


def _case_on(
    ctx: ProbeContext,
    driver: object,
    case: DecisionCase,
    token: str,
    deadline: float,
    grace: float,
    endpoint: ModelEndpoint | None,
    read: Callable[[], Sequence[object]] | None,
) -> CaseRun | str:
    """Run ``case`` on ``driver``: the factory's (no ``endpoint``: the options' config and
    workspace) or one the binding built for ``endpoint`` (its own config, the endpoint's
    workspace and environment)."""
    run = ctx.method("run", driver)
    if run is None:
        return f"{type(driver).__qualname__} has no callable run() method"
    side = _ModelSide(read)
    side.mark()
    if endpoint is None:
        request = _request(case, token, ctx.options.config, ctx.options.workspace)
    else:
        request = _request(case, token, None, str(endpoint.workspace))
    outcome = ctx.runner.run_async(
        lambda: _execute(run, request, case, token, deadline, grace),
        timeout=deadline + 3 * grace + LOOP_SLACK,
    )
    if outcome.timed_out:
        return describe_hang(f"run() in case {case.name!r}", outcome, deadline)
    if outcome.error is not None:
        return f"run() in case {case.name!r} raised {error_type(outcome.error)} in the suite"
    drive: _Drive = outcome.value
    done = CaseRun(
        case=case,
        token=token,
        result=drive.result,
        sink=drive.sink,
        seen=side.since(),
        grace=grace,
        pending_at_return=drive.pending,
        overran=drive.overran,
        cancel_at=drive.cancel_at,
        ended_at=drive.ended_at,
        left_running=_left_running(endpoint, grace),
        model_problem=side.problem,
        wrote=None if endpoint is None else (endpoint.workspace / written_file(token)).exists(),
    )
    return done


def _no_model_side(options: Options) -> str | None:
    """Why the asking cases cannot be judged (None: the model side is visible)."""
    if options.model_binding is None and options.model_requests is None:
        return (
            "the model side is not visible: pass Options(model_binding=...) (the suite runs "
            "the model-API emulator) or Options(model_requests=...) with a scripted model "
            "that acts on the decision prompts, to see whether an action happened"
        )
    return None


ASKING_CLAUSES = HIL_CLAUSES[:-1]
"""The HIL clauses only a driver that declares an ask mode is judged on (all but HIL-09)."""


def probe_hitl(ctx: ProbeContext) -> None:
    """Run every decision case the descriptor's declarations call for and judge HIL-01..09.

    A driver that declares no ask mode runs one case, which needs no model side (HIL-09
    only checks that the sink is never asked); the asking cases need one.
    """
    options = ctx.options
    if not options.live_enabled:
        ctx.skip(HIL_CLAUSES, options.live_skip_reason)
        return
    caps = ctx.descriptor.run_policy_caps
    if not asks_declared(caps):
        ctx.skip(
            ASKING_CLAUSES,
            "the descriptor declares no ask mode in run_policy_caps (permission, plan_review, "
            "question), so no decision may reach the host; HIL-09 judges that none does",
        )
    else:
        missing = _no_model_side(options)
        if missing is not None:
            ctx.skip(HIL_CLAUSES, missing)
            return
    hitl_stream = _hitl_streamed(ctx)
    for case in decision_cases(caps):
        got = _run_case(ctx, case)
        if isinstance(got, str):
            if case.asks:
                ctx.fail("HIL-01", f"the decision could not be asked: {got}")
            else:
                ctx.skip(("HIL-09",), f"{got}, so nothing can be judged (see LIV-01)")
            continue
        _judge_case(ctx, caps, got, hitl_stream)
    _skip_unjudged(ctx, caps, hitl_stream)


def _hitl_streamed(ctx: ProbeContext) -> bool:
    method = ctx.method("stream_capability")
    if method is None:
        return False
    outcome = ctx.attempt(method, awaitable=False)
    return bool(outcome.ok and getattr(outcome.value, "hitl", False) is True)


def _judge_case(ctx: ProbeContext, caps: RunPolicyCapabilities, run: CaseRun, hitl: bool) -> None:
    case = run.case
    asked = run.sink.asked
    for problem in verify_declared_kinds(caps, asked):
        ctx.fail("HIL-09", f"case {case.name!r}: {problem}")
    ctx.judge("HIL-09")
    if case.name == "undeclared":
        return
    if run.result.error is not None:
        ctx.trace(run.result.error, clauses=ASKING_CLAUSES)
    if not case.asks:
        _judge_auto(ctx, run)
        return
    problems = verify_asked(case, asked)
    for problem in problems:
        ctx.fail("HIL-01", problem)
    ctx.judge("HIL-01")
    target = _target(case)
    if not asked:
        ctx.skip((target,), f"case {case.name!r}: no decision reached the sink (see HIL-01)")
        return
    if hitl:
        stopped = case.cancel or run.result.timed_out
        for problem in verify_pairs(case, asked, run.result.stream, cancelled=stopped):
            ctx.fail("HIL-02", problem)
        ctx.judge("HIL-02")
    if run.model_problem and target != "HIL-08":
        ctx.fail(target, f"case {case.name!r}: {run.model_problem}")
        return
    judge = _JUDGES[case.name]
    for problem in judge(run):
        ctx.fail(target, f"case {case.name!r}: {problem}")
    ctx.judge(target)
    if case.cancel:
        # Whatever still reaches the sink before the report is final fails HIL-08 too.
        ctx.watch("HIL-08", run.sink, label=f"case {case.name!r}: ")


def _target(case: DecisionCase) -> str:
    if case.cancel:
        return "HIL-08"
    if case.kind == HumanDecisionKind.QUESTION:
        return "HIL-07"
    return {
        DecisionScript.APPROVE: "HIL-03",
        DecisionScript.REJECT: "HIL-04",
        DecisionScript.SILENT: "HIL-05",
    }[case.script]


def _ran(run: CaseRun) -> str:
    """How the command shows it ran ("" when it did not): its output reached the model,
    or its file is in the workspace."""
    signs = []
    if run.reached_model(ran_token(run.token)):
        signs.append("its output reached the model")
    if run.wrote:
        signs.append(f"it wrote {written_file(run.token)} in the workspace")
    return " and ".join(signs)


def _judge_approve(run: CaseRun) -> list[str]:
    problems: list[str] = []
    if not run.reached_model(ran_token(run.token)):
        problems.append(
            "the decision was approved, but the command's output reached the model in no "
            "tool result: the action did not happen"
        )
    if run.failed:
        problems.append(f"the decision was approved, yet the run failed ({run.failed})")
    return problems


def _judge_reject(run: CaseRun) -> list[str]:
    problems: list[str] = []
    ran = _ran(run)
    if ran:
        problems.append(f"the decision was rejected, yet the command ran ({ran})")
    return problems + _then(run, "on_reject", FailureCode.REJECT, DecisionResult.REJECTED)


def _then(run: CaseRun, field: str, code: FailureCode, decision: DecisionResult) -> list[str]:
    """What the policy's ``field`` (``on_reject``, ``on_timeout``) says must follow: the
    run goes on under continue, else it fails with ``code`` and its ``human_decision``."""
    if getattr(run.case.policy, field) == FailureAction.CONTINUE:
        return [f"{field} is continue, yet the run failed ({run.failed})"] if run.failed else []
    return verify_decision_failure(run.case, run.result.response, code, decision)


def _judge_timeout(run: CaseRun) -> list[str]:
    problems: list[str] = []
    asked = run.sink.asked[0]
    end = run.ended_at or time.monotonic()
    waited = end - asked.asked_at
    limit = DECISION_TIMEOUT + run.grace
    if run.result.timed_out:
        problems.append(
            f"the run was still going {waited:.1f} s after the decision was asked and was "
            f"cancelled by the suite: the policy's timeout is {DECISION_TIMEOUT:g} s"
        )
        return problems
    if waited < DECISION_TIMEOUT - EARLY_TOLERANCE:
        problems.append(
            f"the run ended {waited:.2f} s after the decision was asked, before the policy's "
            f"timeout of {DECISION_TIMEOUT:g} s"
        )
    elif waited > limit:
        problems.append(
            f"the run ended {waited:.1f} s after the decision was asked (limit {limit:g} s)"
        )
    if asked.pending or run.pending_at_return:
        problems.append("the sink's request_decision call was still waiting when run() returned")
    ran = _ran(run)
    if ran:
        problems.append(f"nobody answered, yet the command ran ({ran})")
    if run.left_running:
        problems.append(
            f"{len(run.left_running)} process(es) the run started were still running "
            f"{run.grace:g} s after it returned"
        )
    return problems + _then(run, "on_timeout", FailureCode.TIMEOUT, DecisionResult.TIMED_OUT)


def _judge_question(run: CaseRun) -> list[str]:
    problems: list[str] = []
    if not run.reached_model(_answer_text(run.token)):
        problems.append("the host's answer reached the model in no later request")
    if run.failed:
        problems.append(f"the question was answered, yet the run failed ({run.failed})")
    return problems


def _judge_cancel(run: CaseRun) -> list[str]:
    problems: list[str] = []
    if run.cancel_at is None:
        return ["the run ended by itself while its decision was still waiting at the sink"]
    ended = run.ended_at
    grace = run.grace
    if ended is None or run.overran:
        took = "never" if ended is None else f"{ended - run.cancel_at:.1f} s after it"
        problems.append(
            f"the run was cancelled while a decision waited and returned {took} (grace {grace:g} s)"
        )
    if run.pending_at_return:
        problems.append(
            f"{run.pending_at_return} request_decision call(s) were still waiting when run() "
            "returned"
        )
    late = [d for d in run.sink.asked if d.late]
    if late:
        problems.append(f"{len(late)} decision(s) were asked after run() returned")
    if run.result.late:
        problems.append(f"{run.result.late} emission(s) reached the sink after run() returned")
    if run.left_running:
        problems.append(
            f"{len(run.left_running)} process(es) the run started were still running "
            f"{grace:g} s after it returned"
        )
    ran = _ran(run)
    if ran:
        problems.append(f"nobody answered, yet the command ran ({ran})")
    return problems


_JUDGES: dict[str, Callable[[CaseRun], list[str]]] = {
    "approve": _judge_approve,
    "reject": _judge_reject,
    "reject-continue": _judge_reject,
    "timeout": _judge_timeout,
    "timeout-continue": _judge_timeout,
    "question": _judge_question,
    "cancel": _judge_cancel,
}


def _judge_auto(ctx: ProbeContext, run: CaseRun) -> None:
    case = run.case
    problems: list[str] = []
    if run.sink.asked:
        problems.append(
            f"the policy says {case.policy.permission!s}, yet {len(run.sink.asked)} "
            "decision(s) reached request_decision"
        )
    if run.model_problem:
        problems.append(run.model_problem)
    elif case.policy.permission == HumanDecisionMode.AUTO_APPROVE:
        if not run.reached_model(ran_token(run.token)):
            problems.append(
                "auto_approve, yet the command's output reached the model in no tool result"
            )
        if run.failed:
            problems.append(f"auto_approve, yet the run failed ({run.failed})")
    else:
        ran = _ran(run)
        if ran:
            problems.append(f"auto_reject, yet the command ran ({ran})")
        problems += verify_decision_failure(
            case, run.result.response, FailureCode.REJECT, DecisionResult.REJECTED
        )
    for problem in problems:
        ctx.fail("HIL-06", f"case {case.name!r}: {problem}")
    ctx.judge("HIL-06")


def _skip_unjudged(ctx: ProbeContext, caps: RunPolicyCapabilities, hitl: bool) -> None:
    """Name the declaration that would enable each clause no case judged."""
    if not asks_declared(caps):
        return
    if not hitl:
        ctx.skip(
            ("HIL-02",),
            "stream_capability().hitl is false, so no hitl payloads are expected (EVT-12 "
            "judges that none appears)",
        )
    if not caps.permission.ask:
        ctx.skip(
            ("HIL-03", "HIL-04", "HIL-05", "HIL-08"),
            "run_policy_caps.permission.ask is false: no permission decision is asked",
        )
    if not caps.question.ask:
        ctx.skip(("HIL-07",), "run_policy_caps.question.ask is false: no question is asked")
    if not (caps.permission.auto_approve or caps.permission.auto_reject):
        ctx.skip(
            ("HIL-06",),
            "run_policy_caps.permission declares neither auto_approve nor auto_reject",
        )
