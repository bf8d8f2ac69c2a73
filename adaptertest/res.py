"""RES family (Python extension): live resume against the model (RES-01..03).

The ``scenario_resume`` probe serves ``adaptertest/scenarios/resume.json`` (two answers,
each with its own usage) to a driver that declares ``sessions.supports_resume``. Each
clause gets a stage of its own: a first run ("Remember the word W") must succeed with a
valid checkpoint, whose state goes through the driver's codec (``to_params``), to JSON
and back (``from_params``), as a host stores it.

- RES-01: the second run ("Which word?") on a new driver instance from the binding,
  with that state. It must succeed with the second answer; the model's request must
  carry the first exchange (the first prompt in its user text, the first answer in its
  assistant text); and the usage must be the second answer's alone (input and output
  tokens), not the session's running total.
- RES-02: the same second run in a new Python process (a host that restarted): the
  binding is rebuilt there from ``ModelBinding(ref="module:attr")`` and the state is
  decoded from the JSON. Without ``ref`` the clause is skipped, saying so.
- RES-03: the state resumed under another profile (the request's
  ``profile_payload.session_compatibility_fingerprint`` changed, as when the host's MCP
  servers or skills change): run() must raise before anything starts, with no model
  request and nothing in the sink.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from adaptertest._probe import ProbeContext
from adaptertest._scenarios import (
    Stage,
    clauses_of,
    gate,
    judge_run_rules,
    load_scenario,
    new_token,
    outcome_of,
    scenario_request,
)
from adaptertest._violation import Violation, provider_text
from adaptertest.liv import LiveRun
from adaptertest.options import ModelBinding, ModelEndpoint
from driver.events import RunEvent, StreamPayload
from driver.run import Request, Response, SessionContext, SessionState
from driver.session import SessionParams

__all__ = [
    "CHILD_MODULE",
    "child_run",
    "first_prompt",
    "probe_scenario_resume",
    "second_prompt",
    "state_from_json",
    "state_to_json",
    "verify_guard_refused",
    "verify_resumed",
]

CHILD_MODULE = "adaptertest._resume_child"
"""The module RES-02 runs in a new interpreter."""


def first_prompt(word: str) -> str:
    return f"Remember the word {word} for later."


def second_prompt() -> str:
    return "Which word did I ask you to remember?"


def state_to_json(driver: Any, state: SessionState) -> str:
    """The state as a host stores it: the driver's codec's params, as JSON."""
    params: SessionParams = driver.session_codec().to_params(state)
    return params.model_dump_json()


def state_from_json(driver: Any, text: str) -> SessionState | None:
    """The state a host hands back: the stored JSON, through the driver's codec."""
    state: SessionState | None = driver.session_codec().from_params(
        SessionParams.model_validate_json(text)
    )
    return state


def resume_request(name: str, workspace: Path, state: SessionState | None) -> Request:
    """The second run's request: the second prompt, resuming ``state``."""
    request = scenario_request(name, second_prompt(), workspace)
    request.session = SessionContext(state=state)
    return request


def verify_resumed(
    clause: str,
    response: Response | None,
    failed: str,
    requests: list[Any],
    values: dict[str, str],
    expected_usage: tuple[int, int] | None,
) -> list[Violation]:
    """RES-01/02: the second run succeeded, the model saw the first exchange, and (for
    RES-01) the usage is the second answer's alone."""
    if failed:
        return [Violation(clause, f"the resumed run did not succeed: {failed}")]
    out: list[Violation] = []
    assert response is not None
    if response.output.strip() != f"Second answer {values['second']}.":
        out.append(
            Violation(
                clause,
                f"the resumed run's output is {provider_text(response.output)}, not the "
                "second answer",
            )
        )
    if len(requests) < 2:
        out.append(
            Violation(clause, f"the model got {len(requests)} main request(s) over both runs")
        )
    else:
        last = requests[-1]
        if first_prompt(values["first"]) not in last.user_text:
            out.append(
                Violation(clause, "the resumed run's model request does not carry the first prompt")
            )
        if f"First answer {values['first']}." not in last.assistant_text:
            out.append(
                Violation(clause, "the resumed run's model request does not carry the first answer")
            )
    if expected_usage is not None:
        usage = response.usage
        got = (usage.input_tokens, usage.output_tokens) if usage is not None else None
        if got != expected_usage:
            out.append(
                Violation(
                    clause,
                    f"the resumed run reports usage (input, output) {got}; the model "
                    f"reported {expected_usage} for its answer (usage must be this run's "
                    "alone)",
                )
            )
    return out


def verify_guard_refused(
    result: LiveRun, requests_before: int, requests_after: int
) -> list[Violation]:
    """RES-03: a mismatched guard is refused before anything starts."""
    clause = "RES-03"
    out: list[Violation] = []
    if result.timed_out:
        return [Violation(clause, "run() did not return: the refusal must come at once")]
    if result.error is None:
        out.append(
            Violation(
                clause,
                "run() accepted a session stored under another profile (its session "
                "fingerprint changed) instead of raising before launch",
            )
        )
    if requests_after > requests_before:
        out.append(
            Violation(
                clause,
                f"the model got {requests_after - requests_before} request(s) from the refused "
                "resume: it must be refused before anything starts",
            )
        )
    if result.events or result.stream:
        out.append(
            Violation(
                clause,
                f"{len(result.events)} run event(s) and {len(result.stream)} stream payload(s) "
                "reached the sink: the refusal must come before anything starts",
            )
        )
    return out


def _first_run(
    ctx: ProbeContext, stage: Stage, clause: str, values: dict[str, str]
) -> tuple[Any, SessionState] | None:
    """The first run and its checkpoint state; a failure fails ``clause``."""
    driver = stage.driver((clause,))
    if driver is None:
        return None
    request = scenario_request("resume", first_prompt(values["first"]), stage.workspace)
    result = stage.run(driver, request, (clause,), label="the first run of the resume scenario")
    if result is None:
        return None
    failed = outcome_of(result)
    response = result.response
    checkpoint = response.checkpoint if response is not None else None
    if failed or checkpoint is None or not checkpoint.valid or checkpoint.state is None:
        why = failed or "it returned no valid checkpoint with state"
        ctx.fail(clause, f"the first run of the resume scenario cannot be resumed: {why}")
        return None
    return driver, checkpoint.state


def _through_codec(ctx: ProbeContext, clause: str, driver: Any, state: SessionState) -> str | None:
    outcome = ctx.attempt(state_to_json, driver, state, awaitable=False)
    if not outcome.ok:
        why = "hung" if outcome.timed_out else f"raised {type(outcome.error).__qualname__}"
        ctx.fail(clause, f"the session codec's to_params of the checkpoint state {why}")
        return None
    text: str = outcome.value
    return text


def _resume_here(ctx: ProbeContext, binding: ModelBinding, values: dict[str, str]) -> None:
    clause = "RES-01"
    scenario = load_scenario("resume", values)
    second = scenario.turns[1].usage
    with Stage(ctx, binding, scenario, label="resume") as stage:
        first = _first_run(ctx, stage, clause, values)
        if first is None:
            return
        text = _through_codec(ctx, clause, first[0], first[1])
        again = stage.driver((clause,))
        if text is None or again is None:
            return
        decoded = ctx.attempt(state_from_json, again, text, awaitable=False)
        if not decoded.ok:
            ctx.fail(clause, "a new instance's codec could not read the stored state back")
            return
        result = stage.run(
            again, resume_request("resume", stage.workspace, decoded.value), (clause,)
        )
        if result is None:
            return
        verdict = verify_resumed(
            clause,
            result.response,
            outcome_of(result),
            stage.requests,
            values,
            (second.input_tokens, second.output_tokens),
        )
        ctx.report(verdict, judge=(clause,))


def _resume_elsewhere(ctx: ProbeContext, binding: ModelBinding, values: dict[str, str]) -> None:
    clause = "RES-02"
    if binding.ref is None:
        ctx.skip(
            (clause,),
            "a new interpreter cannot rebuild the binding: pass "
            "ModelBinding(ref='yourpkg.module:binding') naming it",
        )
        return
    scenario = load_scenario("resume", values)
    with Stage(ctx, binding, scenario, label="resume (new process)") as stage:
        first = _first_run(ctx, stage, clause, values)
        if first is None:
            return
        text = _through_codec(ctx, clause, first[0], first[1])
        if text is None:
            return
        job = {
            "ref": binding.ref,
            "endpoint": _endpoint_json(stage.endpoint),
            "state": text,
            "backend": ctx.options.backend,
            "timeout": stage.deadline + binding.grace,
        }
        started = time.perf_counter()
        reply = _run_child(job, stage.deadline + binding.grace + 30)
        stage.note_run((clause,), time.perf_counter() - started)
        if isinstance(reply, str):
            ctx.fail(clause, reply)
            return
        response = Response.model_validate(reply["response"]) if reply.get("response") else None
        judge_run_rules(ctx, first[0], child_run(reply, response), (clause,), "the resumed run")
        verdict = verify_resumed(
            clause, response, str(reply.get("failed", "")), stage.requests, values, None
        )
        ctx.report(verdict, judge=(clause,))


def child_run(reply: dict[str, Any], response: Response | None) -> LiveRun:
    """The resumed run of the new interpreter as this one would have recorded it."""
    events = [RunEvent.model_validate(e) for e in reply.get("events") or ()]
    stream = [StreamPayload.model_validate(p) for p in reply.get("stream") or ()]
    return LiveRun(
        value=response,
        events=events,
        stream=stream,
        late=int(reply.get("late") or 0),
        timed_out=bool(reply.get("timed_out")),
        emitted_events=[(e, e) for e in events],
        emitted_stream=[(p, p) for p in stream],
    )


def _endpoint_json(endpoint: ModelEndpoint) -> dict[str, Any]:
    return {
        "base_url": endpoint.base_url,
        "protocol": endpoint.protocol,
        "home": str(endpoint.home),
        "workspace": str(endpoint.workspace),
        "env": dict(endpoint.env),
        "api_key": endpoint.api_key,
        "deadline": endpoint.deadline,
    }


def _run_child(job: dict[str, Any], timeout: float) -> dict[str, Any] | str:
    """Run the resume in a new interpreter; its JSON reply, or what went wrong."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    try:
        done = subprocess.run(
            [sys.executable, "-m", CHILD_MODULE],
            input=json.dumps(job),
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"the resume in a new interpreter did not finish within {timeout:g} s"
    lines = done.stdout.strip().splitlines()
    try:
        reply = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        reply = None
    if not isinstance(reply, dict):
        tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
        return (
            f"the resume in a new interpreter exited with {done.returncode} and no reply "
            f"({provider_text(tail[0])})"
        )
    if reply.get("error"):
        return (
            f"the resume in a new interpreter could not run: {provider_text(str(reply['error']))}"
        )
    return reply


def _resume_mismatched(ctx: ProbeContext, binding: ModelBinding, values: dict[str, str]) -> None:
    clause = "RES-03"
    scenario = load_scenario("resume", values)
    with Stage(ctx, binding, scenario, label="resume (guard mismatch)") as stage:
        first = _first_run(ctx, stage, clause, values)
        if first is None:
            return
        driver, state = first
        request = resume_request("resume", stage.workspace, state)
        payload = request.profile_payload
        request.profile_payload = payload.model_copy(
            update={
                "session_compatibility_fingerprint": (
                    f"{payload.session_compatibility_fingerprint}-adaptertest-changed"
                )
            }
        )
        before = len(stage.emulator.requests)
        result = stage.run(driver, request, (clause,), label="the mismatched resume", refusal=True)
        if result is None:
            return
        after = len(stage.emulator.requests)
        ctx.report(verify_guard_refused(result, before, after), judge=(clause,))


def probe_scenario_resume(ctx: ProbeContext) -> None:
    """Resume live through the codec (RES-01), in a new process (RES-02), and under a
    changed profile (RES-03)."""
    binding, wanted = gate(ctx, clauses_of("scenario_resume"))
    if binding is None or not wanted:
        return
    if not ctx.descriptor.sessions.supports_resume:
        ctx.skip(
            (*wanted, "PRC-01"),
            "the descriptor does not declare sessions.supports_resume, so nothing resumes",
        )
        return
    values = {"first": new_token(), "second": new_token()}
    if "RES-01" in wanted:
        _resume_here(ctx, binding, values)
    if "RES-02" in wanted:
        _resume_elsewhere(ctx, binding, values)
    if "RES-03" in wanted:
        _resume_mismatched(ctx, binding, values)
