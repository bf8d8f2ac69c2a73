"""The ACP driver against the real agents (pinned in ``examples/cli-versions.json``) and the
kit's model-API emulator: no account, no key, no network beyond 127.0.0.1.

One parametrized tier for every agent; each test skips, naming ``adaptertest
install-clis NAME``, when node or the agent is missing. Every test has its own emulator,
home and workspace (:func:`acp_driver.agent_config` says what each agent is given).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

import adaptertest
from acp_driver import (
    AGENTS,
    NATIVE_STRUCTURED,
    ACPAgentDriver,
    agent_config,
    agent_driver,
    model_binding,
)
from adaptertest import Level, RecordingSink, realcli
from adaptertest import clikit as testing
from adaptertest._scenarios import binding_from_ref
from adaptertest.emulator import Emulator, Scenario
from adaptertest.options import Backend
from driver import (
    DecisionRequest,
    DecisionResponse,
    DecisionResult,
    FailureAction,
    HumanDecisionMode,
    HumanDecisionPolicy,
    Request,
    Response,
    RunPolicy,
    SessionContext,
    StreamKind,
)
from driver.acpkit import ACPConfig

NAMES = list(AGENTS)
DEADLINE = 180.0
"""A real agent's turn on a loaded 2-CPU machine: node start-up, several model requests."""
OK = Scenario.model_validate(
    {
        "turns": [{"text": "OK", "deltas": 2, "usage": {"input_tokens": 900, "output_tokens": 3}}],
        "repeat_last": True,
    }
)
SHELL_TOOLS = {
    "claude-acp": ("Bash", {"command": "touch note.txt", "description": "Create the note"}),
    "gemini": (
        "run_shell_command",
        {"command": "touch note.txt", "description": "Create the note"},
    ),
    "qwen": ("run_shell_command", {"command": "touch note.txt", "description": "Create the note"}),
    "copilot": ("bash", {"command": "touch note.txt", "description": "Create the note"}),
    "opencode": ("bash", {"command": "touch note.txt", "description": "Create the note"}),
}
"""Agents whose shell tool asks permission for a command that writes (and its call)."""
RESUME_BROKEN = {
    "gemini": "Gemini CLI 0.61.0 answers session/load with -32603 'No previous sessions found "
    "for this project' (it writes a fresh session file before reading the old one)",
}


def installed(name: str) -> Path:
    return realcli.require(name)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=NAMES)
def agent(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    installed(name)
    return name


@pytest.fixture
def emulator() -> Iterator[Emulator]:
    with Emulator(OK) as emu:
        yield emu


def configure(name: str, base_url: str, root: Path, *, persistent: bool = False) -> ACPConfig:
    workspace = root / "workspace"
    workspace.mkdir(exist_ok=True)
    config = agent_config(
        name, installed(name), base_url, root / "home", persistent=persistent, timeout=DEADLINE
    )
    return config.model_copy(update={"cwd": str(workspace)})


async def run(
    driver: ACPAgentDriver, prompt: str, sink: RecordingSink | None = None, **fields: object
) -> tuple[Response, RecordingSink]:
    sink = sink if sink is not None else RecordingSink()
    with anyio.fail_after(DEADLINE + 30):
        response = await driver.run(Request(prompt=prompt, streaming=True, **fields), sink)
    return response, sink


OK_OR_STRUCTURED = OK.model_copy(
    update={"turns": [OK.turns[0].model_copy(update={"structured": {"ok": True}})]}
)
"""OK, or the structured probe's answer to a request that asks for one."""


@pytest.mark.parametrize(
    ("backend", "persistent"),
    [("asyncio", False), ("trio", True)],
    ids=["one-shot-asyncio", "persistent-trio"],
)
def test_the_suite_reaches_level_full_with_native_structured_output_else_live(
    agent: str, tmp_path: Path, backend: Backend, persistent: bool
) -> None:
    # The structured probe runs for every agent: one without a native mechanism declares
    # none, so the probe is skipped and the level stays live.
    native = agent in NATIVE_STRUCTURED
    with Emulator(OK_OR_STRUCTURED if native else OK) as emulator:
        config = configure(agent, emulator.base_url, tmp_path, persistent=persistent)
        options = testing.conformance_options(
            config,
            resume_id="",
            concurrent_runs=2,
            backend=backend,
            live_structured_output=True,
        )
        level = Level.FULL if native else Level.LIVE
        testing.check_conformance_level(lambda: agent_driver(agent, config), options, level)


HUMAN_DECISIONS = ("claude-acp", "gemini")
"""Agents whose shell tool has the name the HIL cases' scripted model calls for their model
protocol (``Bash`` for Anthropic, ``run_shell_command`` for Gemini)."""


@pytest.mark.parametrize("name", HUMAN_DECISIONS)
def test_the_human_decision_clauses_pass(name: str, emulator: Emulator, tmp_path: Path) -> None:
    program = installed(name)
    config = configure(name, emulator.base_url, tmp_path)
    options = testing.conformance_options(config, resume_id="", backend="asyncio")
    binding = model_binding(name, program, allow_shell=False)
    options = dataclasses.replace(options, model_binding=binding)
    # The binding also turns the scenario battery on; this test judges the HIL family (the
    # whole suite's level is judged by the conformance classes, the battery by its own test).
    report = adaptertest.check_driver(lambda: agent_driver(name, config), options, only=["HIL"])
    verdicts = {r.clause: r for r in report.results if r.clause.startswith("HIL-")}
    failing = [r.describe() for r in verdicts.values() if r.status.is_failure]
    assert not failing, failing
    passed = sorted(c for c, r in verdicts.items() if r.status.value == "passed")
    # HIL-07 is a question's answer: ACP version 1 has no question kind to ask with.
    assert passed == [f"HIL-0{n}" for n in (1, 2, 3, 4, 5, 6, 8, 9)], passed


SCENARIO_FAMILIES = ["TOL", "RSN", "RES", "FLT", "DLN", "INP", "OUT", "PRC"]
SCENARIO_AGENTS = ("claude-acp", "gemini", "codex-acp", "copilot")
"""Agents the scenario battery is judged against here (each battery is many agent runs,
and the test command must stay under CI's time budget); Qwen Code's (about 60 s) and
OpenCode's (about 215 s) are judged by the matrix run (``python -m acp_driver._matrix``),
which runs it for every agent."""


@pytest.mark.parametrize("name", SCENARIO_AGENTS)
def test_the_scenario_battery_passes(name: str, emulator: Emulator, tmp_path: Path) -> None:
    program = installed(name)
    config = configure(name, emulator.base_url, tmp_path)
    options = testing.conformance_options(config, resume_id="", backend="asyncio")
    binding = model_binding(name, program)
    options = dataclasses.replace(options, model_binding=binding)
    only = SCENARIO_FAMILIES
    report = adaptertest.check_driver(lambda: agent_driver(name, config), options, only=only)
    verdicts = {r.clause: r for r in report.results if r.clause[:3] in SCENARIO_FAMILIES}
    failing = [r.describe() for r in verdicts.values() if r.status.is_failure]
    assert not failing, failing
    # What the agent cannot do is skipped with the binding's reason, never passed.
    for clause in binding.cannot:
        assert verdicts[clause].status.value == "skipped", verdicts[clause].describe()
    # The binding's ref rebuilds it in a new interpreter: an agent that resumes through
    # session/load does so for a restarted host too.
    if "RES-01" not in binding.cannot:
        assert verdicts["RES-02"].status.value == "passed", verdicts["RES-02"].describe()


@pytest.mark.anyio
async def test_one_persistent_process_serves_two_sessions_and_resumes(
    agent: str, emulator: Emulator, tmp_path: Path
) -> None:
    driver = agent_driver(agent, configure(agent, emulator.base_url, tmp_path, persistent=True))
    try:
        first, _ = await run(driver, "Reply with exactly: OK")
        other, _ = await run(driver, "Reply with exactly: OK")
        assert first.failure is None, first.failure
        assert other.failure is None, other.failure
        assert first.metadata["agent.pid"] == other.metadata["agent.pid"]
        assert first.checkpoint is not None
        assert first.checkpoint.state is not None
        again, _ = await run(
            driver, "Say it once more.", session=SessionContext(state=first.checkpoint.state)
        )
        assert again.failure is None, again.failure
        assert again.metadata["agent.pid"] == first.metadata["agent.pid"]
    finally:
        await driver.close_processes()


@pytest.mark.anyio
async def test_one_claude_process_switches_a_session_between_structured_and_plain_answers(
    tmp_path: Path,
) -> None:
    # A session keeps the _meta it was opened with: the driver loads it again when a
    # run wants other _meta, on the same process.
    name = "claude-acp"
    installed(name)
    probe = testing.structured_request()
    native: dict[str, Any] = {
        "structured_output_source": probe.structured_output_source,
        "output_schema": probe.output_schema,
    }
    with Emulator(OK_OR_STRUCTURED) as emu:
        driver = agent_driver(name, configure(name, emu.base_url, tmp_path, persistent=True))
        try:
            first, _ = await run(driver, probe.prompt, **native)
            assert first.failure is None, first.failure
            assert first.checkpoint is not None
            session = SessionContext(state=first.checkpoint.state)
            plain, _ = await run(driver, "Reply with exactly: OK", session=session)
            again, _ = await run(driver, probe.prompt, session=session, **native)
        finally:
            await driver.close_processes()
    assert plain.failure is None, plain.failure
    assert (plain.output.strip(), plain.structured_output) == ("OK", None)
    assert again.failure is None, again.failure
    assert again.structured_output == first.structured_output
    assert first.structured_output is not None
    assert first.structured_output.valid
    pids = {r.metadata["agent.pid"] for r in (first, plain, again)}
    assert len(pids) == 1
    # The plain run's session no longer forwards the SDK's result; the structured one's does.
    forwarded = [
        r.raw_streams.stdout.count(b"_claude/sdkMessage") if r.raw_streams else -1
        for r in (plain, again)
    ]
    assert forwarded == [0, 1]


@pytest.mark.anyio
async def test_resume_loads_the_session_in_a_new_process(
    agent: str, emulator: Emulator, tmp_path: Path
) -> None:
    driver = agent_driver(agent, configure(agent, emulator.base_url, tmp_path))
    first, _ = await run(driver, "Remember the word pelican and reply with exactly: OK")
    assert first.failure is None, first.failure
    assert first.checkpoint is not None
    assert first.checkpoint.state is not None
    seen = len(emulator.requests)
    second, sink = await run(
        driver, "Reply with exactly: OK", session=SessionContext(state=first.checkpoint.state)
    )
    if agent in RESUME_BROKEN:
        assert second.failure is not None
        assert "session/load failed" in second.failure.message
        pytest.xfail(RESUME_BROKEN[agent])
    assert second.failure is None, second.failure
    assert second.output.strip() == "OK"
    carried = [r for r in emulator.requests[seen:] if not r.side and "pelican" in r.user_text]
    assert carried, "the loaded session's history reaches the model"
    # The history the agent replayed on load is not part of this run's stream.
    assert not [p for p in sink.stream if p.kind == "acp.user_message_chunk"]


class Deciding(RecordingSink):
    def __init__(self, result: DecisionResult, choice: str = "") -> None:
        super().__init__()
        self.result, self.choice = result, choice
        self.asked: list[DecisionRequest] = []

    async def request_decision(self, request: DecisionRequest) -> DecisionResponse:
        self.asked.append(request)
        choice = self.choice
        if choice and not any(c.description == choice for c in request.choices):
            choice = ""
        key = next((c.key for c in request.choices if c.description == choice), "")
        return DecisionResponse(result=self.result, choice=key)


def shell_scenario(agent: str) -> Scenario:
    name, args = SHELL_TOOLS[agent]
    call = {"name": name, "arguments": args}
    # Two tool turns: an agent's side request (a session title) may take the first.
    return Scenario.model_validate(
        {
            "turns": [
                {"text": "Creating the note.", "tool_calls": [call]},
                {"text": "Creating the note.", "tool_calls": [call]},
                {"text": "Done.", "deltas": 2},
            ],
            "repeat_last": True,
        }
    )


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("answer", "choice", "created"),
    [
        (DecisionResult.APPROVED, "allow_once", True),
        (DecisionResult.REJECTED, "reject_once", False),
        (DecisionResult.REJECTED, "reject_always", False),
    ],
    ids=["approve", "reject", "never"],
)
async def test_permission_prompts_are_answered_by_the_host(
    agent: str, tmp_path: Path, answer: DecisionResult, choice: str, created: bool
) -> None:
    if agent not in SHELL_TOOLS:
        pytest.skip(
            f"{agent} asks only for a command that requests escalation after session/set_mode "
            "read-only, which the driver does not send"
        )
    with Emulator(shell_scenario(agent)) as emu:
        driver = agent_driver(agent, configure(agent, emu.base_url, tmp_path))
        sink = Deciding(answer, choice)
        policy = RunPolicy(
            human_decision=HumanDecisionPolicy(
                permission=HumanDecisionMode.ASK, on_reject=FailureAction.CONTINUE
            )
        )
        response, _ = await run(driver, "Create note.txt here.", sink, policy=policy)
    assert sink.asked, "the agent asked before running its shell tool"
    asked = sink.asked[0]
    assert (asked.kind, asked.source) == ("permission", "acp")
    assert asked.choices
    assert (tmp_path / "workspace" / "note.txt").exists() is created
    assert response.failure is None, response.failure
    assert StreamKind.TOOL_CALL_START in [p.kind for p in sink.stream]


def test_every_agent_of_the_lock_is_configured() -> None:
    lock = json.loads((Path(__file__).parents[2] / "cli-versions.json").read_text())
    acp_agents = {n for n, e in lock.items() if n in AGENTS}
    assert acp_agents == set(AGENTS)
    assert os.path.basename(__file__).startswith("test_")


@pytest.mark.anyio
async def test_the_model_binding_wires_the_agent_to_the_endpoint(
    agent: str, emulator: Emulator, tmp_path: Path
) -> None:
    from acp_driver import model_binding
    from adaptertest.options import ModelEndpoint

    binding = model_binding(agent, installed(agent))
    assert binding.protocol == AGENTS[agent].protocol
    # A new interpreter rebuilds the same binding from its ref (RES-02); a binding it
    # could not rebuild as it is names none.
    assert binding.ref is not None
    rebuilt = binding_from_ref(binding.ref)
    assert (rebuilt.protocol, rebuilt.cannot) == (binding.protocol, binding.cannot)
    assert model_binding(agent, installed(agent), persistent=True).ref is None
    assert model_binding(agent, installed(agent), allow_shell=False).ref is None
    (tmp_path / "home").mkdir()
    (tmp_path / "workspace").mkdir()
    endpoint = ModelEndpoint(
        base_url=emulator.base_url,
        protocol=binding.protocol,
        home=tmp_path / "home",
        workspace=tmp_path / "workspace",
        env={"SCENARIO_MARK": "m-1"},
        api_key="emulated",
    )
    driver = binding.driver(endpoint)
    assert isinstance(driver, ACPAgentDriver)
    assert driver.config.cwd == str(endpoint.workspace)
    assert driver.config.env["SCENARIO_MARK"] == "m-1"
    response, _ = await run(driver, "Reply with exactly: OK")
    assert response.failure is None, response.failure
    assert response.output.strip() == "OK"
    assert [r for r in emulator.requests if not r.side]
