"""The Claude Code driver against the real Claude Code (pinned in ``examples/cli-versions.json``)
and the kit's model-API emulator: no account, no key, no network beyond 127.0.0.1.

Skipped, with the reason naming ``adaptertest install-clis``, when node or the CLI is
missing. Every run has its own temporary home (``CLAUDE_CONFIG_DIR`` under it) and
workspace; the whole suite shares one emulator and one home, the other tests each start
their own. The environment the tier gives the CLI:

- ``ANTHROPIC_BASE_URL`` (the emulator) and a dummy ``ANTHROPIC_API_KEY``;
- ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1``: without it the CLI looks up its
  telemetry hosts, which is network traffic a test must not make;
- ``CLAUDE_CODE_MAX_RETRIES=1``: Claude Code retries a failed request (401 and 5xx too)
  up to 10 times with backoff from 500 ms; one retry keeps the failure tests fast and
  still shows the retry.
"""

from __future__ import annotations

import atexit
import dataclasses
import json
import os
import shutil
import tempfile
from pathlib import Path

import anyio
import pytest

import adaptertest
from adaptertest import Level, Options, RecordingSink, realcli
from adaptertest import clikit as testing
from adaptertest.emulator import (
    Emulator,
    Fault,
    RecordedRequest,
    Scenario,
    ToolCall,
    Turn,
    TurnUsage,
)
from adaptertest.options import Backend
from claude_driver import ClaudeConfig, ClaudeDriver
from driver import (
    EventSink,
    FailureCode,
    Request,
    Response,
    RunEvent,
    RunEventType,
    SessionContext,
    StreamKind,
    StreamPayload,
    TranscriptKind,
    WorkspaceLease,
)

MODEL = "claude-sonnet-4-5"
RESUME_ID = "3f9b6c1e-58d2-4a7f-9e0b-c4d21a8f6e53"
RETRIES = 1
DEADLINE = 3.0
"""The driver's deadline in the hang test: the emulator never answers."""

SKIP = realcli.skip_reason("claude")


def environment(base_url: str) -> dict[str, str]:
    """What the tier sets for the CLI (see the module docstring)."""
    return {
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-emulator-dummy",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_MAX_RETRIES": str(RETRIES),
    }


def claude_config(
    program: Path, base_url: str, root: Path, *, timeout: float = 60.0
) -> ClaudeConfig:
    """A config running ``program`` with its own home and workspace under ``root``."""
    home, workspace = root / "home", root / "workspace"
    home.mkdir(parents=True, exist_ok=True)
    workspace.mkdir(parents=True, exist_ok=True)
    return ClaudeConfig(
        command=(str(program),),
        model=MODEL,
        home=str(home),
        cwd=str(workspace),
        env=environment(base_url),
        timeout=timeout,
    )


# -- the whole suite ---------------------------------------------------------------------------

SUITE_SCENARIO = Scenario(
    turns=[
        Turn(
            text="OK",
            deltas=2,
            structured={"ok": True},
            usage=TurnUsage(input_tokens=12, output_tokens=3),
        )
    ],
    repeat_last=True,  # every run of the suite, the two concurrent ones too
)


SHARED_ENV = "ADAPTERTEST_CLAUDE_TIER"
"""Set by the process that started the suite's emulator: its base URL and the shared
folder, so a fresh interpreter importing this module (the suite's cross-process checks)
builds the very same config instead of starting an emulator of its own."""


class _Shared:
    """The suite's emulator and home: started at import when the CLI is there, or, in a
    child of that process, the parent's."""

    def __init__(self) -> None:
        program = realcli.locate("claude")
        assert program is not None  # SKIP is None
        inherited = os.environ.get(SHARED_ENV)
        self.emulator: Emulator | None = None
        if inherited:
            handed = json.loads(inherited)
            self.root, base_url = Path(handed["root"]), str(handed["base_url"])
        else:
            self.root = Path(tempfile.mkdtemp(prefix="adk-claude-tier-"))
            self.emulator = Emulator(SUITE_SCENARIO).start()
            base_url = self.emulator.base_url
            os.environ[SHARED_ENV] = json.dumps({"root": str(self.root), "base_url": base_url})
            atexit.register(self.close)
        self.config = claude_config(program, base_url, self.root)

    def requests(self) -> list[RecordedRequest]:
        return self.emulator.requests if self.emulator is not None else []

    def close(self) -> None:
        os.environ.pop(SHARED_ENV, None)
        if self.emulator is not None:
            self.emulator.stop()
        shutil.rmtree(self.root, ignore_errors=True)


SHARED = _Shared() if SKIP is None else None


def suite_options(backend: Backend) -> Options:
    """Every live clause on: the structured probe, two concurrent processes, and the
    model side read from the emulator (SYS-02)."""
    if SHARED is None:
        return Options(skip_live_run=SKIP)
    shared = SHARED
    options = testing.full_options(shared.config, resume_id=RESUME_ID, backend=backend)
    return dataclasses.replace(
        options, model_requests=shared.requests, labels=realcli.cli_labels("claude")
    )


def new_driver() -> ClaudeDriver:
    return ClaudeDriver(SHARED.config if SHARED is not None else None)


TestClaudeRealCLI = adaptertest.test_driver(new_driver, suite_options("asyncio"))
TestClaudeRealCLIOnTrio = adaptertest.test_driver(new_driver, suite_options("trio"))


@pytest.mark.parametrize(
    "suite", [TestClaudeRealCLI, TestClaudeRealCLIOnTrio], ids=["asyncio", "trio"]
)
def test_the_real_cli_reaches_level_full(suite: type) -> None:
    if SKIP is not None:
        pytest.skip(SKIP)
    report = suite.adaptertest_suite().report()  # type: ignore[attr-defined]
    failing = [r.describe() for r in report.results if r.status.is_failure]
    assert report.level is Level.FULL, (report.summary(), failing)


# -- one emulator per test ----------------------------------------------------------------------


@pytest.fixture
def claude() -> Path:
    return realcli.require("claude")


@pytest.fixture
def anyio_backend() -> str:
    """The whole suite runs on both backends; these tests of the CLI itself on asyncio,
    except where the backend takes part (cancellation, concurrent processes)."""
    return "asyncio"


BOTH_BACKENDS = pytest.mark.parametrize("anyio_backend", ["asyncio", "trio"])


async def run(
    config: ClaudeConfig, prompt: str = adaptertest.DEFAULT_LIVE_PROMPT, **fields: object
) -> tuple[Response, RecordingSink]:
    sink = RecordingSink()
    request = Request.model_validate({"prompt": prompt, "streaming": True, **fields})
    response = await ClaudeDriver(config).run(request, sink)
    return response, sink


def spawned_pid(sink: RecordingSink) -> int:
    spawns = [e for e in sink.events if e.type == RunEventType.SPAWN]
    assert len(spawns) == 1, sink.events
    return int(spawns[0].metadata["pid"])


def group_gone(pgid: int) -> bool:
    """No process is left in the CLI's process group (the driver starts it as its own)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    return False


def resume_id(response: Response) -> str:
    """The session the run's checkpoint resumes."""
    assert response.checkpoint is not None, response.failure
    assert response.checkpoint.state is not None
    return response.checkpoint.state.resume_id


def result_line(response: Response) -> dict[str, object]:
    assert response.raw_streams is not None
    assert response.raw_streams.terminal is not None
    line: dict[str, object] = json.loads(response.raw_streams.terminal.raw_json)
    return line


@pytest.mark.anyio
async def test_answer_ok_with_the_emulators_usage_and_the_clis_cost(
    claude: Path, tmp_path: Path
) -> None:
    sent = TurnUsage(input_tokens=1210, cached_input_tokens=1024, output_tokens=4)
    with Emulator(Scenario(turns=[Turn(text="OK", deltas=2, usage=sent)])) as emu:
        response, _ = await run(claude_config(claude, emu.base_url, tmp_path))
    assert response.failure is None, response.failure
    assert response.output == "OK"
    assert response.usage is not None
    # USG-01: what the emulator sent, in the kit's meaning (input counts the cache reads).
    assert (
        response.usage.input_tokens,
        response.usage.cached_input_tokens,
        response.usage.output_tokens,
    ) == (1210, 1024, 4)
    # The cost is the CLI's own figure for this run.
    costs = [
        m["costUSD"]
        for m in result_line(response)["model_usage_since_last_result"].values()  # type: ignore[attr-defined]
    ]
    assert response.usage.estimated_cost_milli == round(sum(costs) * 1000)
    assert response.usage.estimated_cost_milli > 0
    [main] = emu.main_requests
    assert main.model == MODEL
    assert main.user_text.endswith(adaptertest.DEFAULT_LIVE_PROMPT)


@pytest.mark.anyio
async def test_a_tool_round_trip_the_cli_performs_in_the_workspace(
    claude: Path, tmp_path: Path
) -> None:
    config = claude_config(claude, "", tmp_path)
    note = Path(config.cwd) / "note.txt"
    note.write_text("ship it on Friday\n")
    scenario = Scenario(
        turns=[
            Turn(
                text="Reading the note.",
                tool_calls=[
                    ToolCall(name="Read", id="toolu_01ReadNote", arguments={"file_path": str(note)})
                ],
            ),
            Turn(text="The note says: ship it on Friday."),
        ]
    )
    with Emulator(scenario) as emu:
        config = config.model_copy(update={"env": environment(emu.base_url)})
        response, sink = await run(config, "What does note.txt say?")
    assert response.failure is None, response.failure
    assert response.output == "The note says: ship it on Friday."
    # The CLI read the file for real and sent its content back in the next request.
    first, second = emu.main_requests
    assert not first.tool_results
    assert any("ship it on Friday" in r for r in second.tool_results), second.tool_results
    calls = [i for i in response.transcript if i.kind == TranscriptKind.TOOL_CALL]
    results = [i for i in response.transcript if i.kind == TranscriptKind.TOOL_RESULT]
    assert [(c.tool_use_id, c.tool_name) for c in calls] == [("toolu_01ReadNote", "Read")]
    assert [r.tool_use_id for r in results] == ["toolu_01ReadNote"]
    assert "ship it on Friday" in results[0].text
    assert results[0].is_error is False
    kinds = [(p.kind, p.tool_call_id) for p in sink.stream if p.kind.startswith("tool_call.")]
    assert kinds == [
        (StreamKind.TOOL_CALL_START, "toolu_01ReadNote"),
        (StreamKind.TOOL_CALL_RESULT, "toolu_01ReadNote"),
        (StreamKind.TOOL_CALL_END, "toolu_01ReadNote"),
    ]


@pytest.mark.anyio
async def test_resume_sends_the_first_exchange_and_counts_only_the_second_run(
    claude: Path, tmp_path: Path
) -> None:
    scenario = Scenario(
        turns=[
            Turn(text="OK", usage=TurnUsage(input_tokens=900, output_tokens=2)),
            Turn(text="Still OK", usage=TurnUsage(input_tokens=1000, output_tokens=3)),
        ]
    )
    with Emulator(scenario) as emu:
        config = claude_config(claude, emu.base_url, tmp_path)
        first, _ = await run(config)
        assert first.failure is None, first.failure
        assert first.checkpoint is not None
        session = SessionContext(state=first.checkpoint.state)
        second, _ = await run(config, "And again?", session=session)
    assert second.failure is None, second.failure
    assert second.output == "Still OK"
    assert second.checkpoint is not None
    assert resume_id(second) == resume_id(first)
    # The second request carries the first exchange: its prompt and its answer.
    _, again = emu.main_requests
    assert adaptertest.DEFAULT_LIVE_PROMPT in again.user_text
    assert again.user_text.endswith("And again?")
    answers = [
        m for m in again.body["messages"] if m["role"] == "assistant" and "OK" in json.dumps(m)
    ]
    assert answers, again.body["messages"]
    # The CLI's modelUsage counts the whole session; the run's usage is its own.
    assert second.usage is not None
    assert (second.usage.input_tokens, second.usage.output_tokens) == (1000, 3)


@pytest.mark.anyio
async def test_a_resumed_run_appends_its_own_system_prompt(claude: Path, tmp_path: Path) -> None:
    """Claude Code replays a session's first system prompt on resume unless the driver
    says ``--system-prompt-snapshot off``: the second run's append must reach the model,
    and the first run's must not come back."""
    with Emulator(Scenario(turns=[Turn(text="OK")], repeat_last=True)) as emu:
        config = claude_config(claude, emu.base_url, tmp_path)
        first, _ = await run(config, append_system_prompt="Canary-one: answer briefly.")
        assert first.checkpoint is not None, first.failure
        session = SessionContext(state=first.checkpoint.state)
        second, _ = await run(
            config, "Again?", session=session, append_system_prompt="Canary-two: be formal."
        )
    assert second.failure is None, second.failure
    one, two = emu.main_requests
    assert "Canary-one" in one.system_text
    assert "Canary-two" in two.system_text
    assert "Canary-one" not in two.system_text
    assert "Canary" not in two.user_text


@BOTH_BACKENDS
@pytest.mark.anyio
async def test_two_real_processes_at_once(claude: Path, tmp_path: Path) -> None:
    scenario = Scenario(turns=[Turn(text="OK")], repeat_last=True)
    responses: list[Response] = []
    with Emulator(scenario) as emu:
        config = claude_config(claude, emu.base_url, tmp_path)

        async def one() -> None:
            responses.append((await run(config))[0])

        async with anyio.create_task_group() as group:
            group.start_soon(one)
            group.start_soon(one)
    assert [r.output for r in responses] == ["OK", "OK"]
    ids = {resume_id(r) for r in responses}
    assert len(ids) == 2
    assert len(emu.main_requests) == 2


@pytest.mark.anyio
async def test_a_429_then_success_shows_the_retry_in_the_metadata(
    claude: Path, tmp_path: Path
) -> None:
    scenario = Scenario(turns=[Turn(text="OK", fault=Fault(status=429, times=1))])
    with Emulator(scenario) as emu:
        response, sink = await run(claude_config(claude, emu.base_url, tmp_path))
    assert response.failure is None, response.failure
    assert response.output == "OK"
    assert response.metadata == {
        "api_retries": "1",
        "max_retries": str(RETRIES),
        "last_retry_error": "rate_limit",
        "last_retry_status": "429",
    }
    assert [p.kind for p in sink.stream].count("claude.api_retry") == 1
    assert len(emu.main_requests) == 2


# -- failures a host must expect ---------------------------------------------------------------

FAILURES: dict[str, tuple[Fault, str, dict[str, object]]] = {
    "500": (Fault(status=500, times=-1), "API Error: 500", {"api_error_status": 500}),
    "529": (Fault(status=529, times=-1), "529 Overloaded", {"api_error_status": 529}),
    "401": (
        Fault(status=401, times=-1),
        "Invalid API key",
        {"api_error_status": 401, "api_error": "authentication_failed"},
    ),
    "stream-cut": (
        Fault(cut_after_events=3, times=-1),
        "Connection to the API was lost",
        {"api_error": "connection_failed"},
    ),
}


class _Observed(ClaudeDriver):
    """The driver, keeping each run's response and spawned pid, so one live run serves
    both the suite's verdict and the test's own look at the failure."""

    def __init__(self, config: ClaudeConfig) -> None:
        super().__init__(config)
        self.runs: list[tuple[Request, Response, int]] = []

    async def run(self, request: Request, sink: EventSink) -> Response:
        pids: list[int] = []

        class Tee:
            def emit(self, event: RunEvent) -> None:
                if event.type == RunEventType.SPAWN:
                    pids.append(int(event.metadata["pid"]))
                sink.emit(event)

            def emit_stream(self, payload: StreamPayload) -> None:
                sink.emit_stream(payload)

        response = await super().run(request, Tee())
        self.runs.append((request, response, pids[0] if pids else -1))
        return response


def judged_failure(config: ClaudeConfig, reason: str) -> tuple[Response, int]:
    """Under ``live_expect_failure``: LIV-01 skipped, FLR-01 and every other live clause
    passed; returns the live run's response and the pid it spawned."""
    driver = _Observed(config)
    options = testing.conformance_options(config, resume_id=RESUME_ID)
    testing.check_expected_failure_is_clean(lambda: driver, options, reason)
    live = [(r, pid) for q, r, pid in driver.runs if not q.append_system_prompt]
    assert live, driver.runs
    return live[0]


@pytest.mark.parametrize("name", FAILURES)
def test_a_failed_request_fails_cleanly_and_names_the_status_and_the_retries(
    claude: Path, tmp_path: Path, name: str
) -> None:
    fault, message, metadata = FAILURES[name]
    scenario = Scenario(turns=[Turn(text="never shown", fault=fault)], repeat_last=True)
    with Emulator(scenario) as emu:
        config = claude_config(claude, emu.base_url, tmp_path)
        response, pid = judged_failure(config, f"a persistent {name} from the emulator")
    failure = response.failure
    assert failure is not None
    assert failure.code == FailureCode.AGENT_ERROR
    assert message in failure.message, failure.message
    assert f"{RETRIES} API retries of {RETRIES}" in failure.message, failure.message
    assert {k: failure.metadata.get(k) for k in metadata} == metadata
    assert failure.metadata["retry_attempt"] == RETRIES
    assert failure.metadata["exit_code"] == 1
    assert response.checkpoint is None
    assert group_gone(pid)


def test_a_hang_past_the_deadline_times_out_and_leaves_no_process(
    claude: Path, tmp_path: Path
) -> None:
    scenario = Scenario(turns=[Turn(text="never", fault=Fault(hang=True, times=-1))])
    with Emulator(scenario) as emu:
        config = claude_config(claude, emu.base_url, tmp_path, timeout=DEADLINE)
        response, pid = judged_failure(config, "the emulator never answers")
    assert response.timed_out is True
    assert response.failure is not None
    assert f"did not finish within {DEADLINE:g} s" in response.failure.message
    assert group_gone(pid)


@BOTH_BACKENDS
@pytest.mark.anyio
async def test_cancelling_a_run_stops_the_cli_and_its_process_group(
    claude: Path, tmp_path: Path
) -> None:
    scenario = Scenario(turns=[Turn(text="never", fault=Fault(hang=True, times=-1))])
    sink = RecordingSink()
    with Emulator(scenario) as emu:
        driver = ClaudeDriver(claude_config(claude, emu.base_url, tmp_path))
        request = Request(prompt=adaptertest.DEFAULT_LIVE_PROMPT, streaming=True)
        async with anyio.create_task_group() as group:
            group.start_soon(driver.run, request, sink)
            # Cancel once the CLI is waiting on the model, not before.
            await anyio.to_thread.run_sync(lambda: emu.wait_for_requests(1, 30, main=True))
            group.cancel_scope.cancel()
    assert sink.stream[-1].kind == StreamKind.RUN_ERROR
    assert sink.stream[-1].error is not None
    assert sink.stream[-1].error.code == FailureCode.CANCELLED
    assert group_gone(spawned_pid(sink))


def test_the_workspace_lease_is_the_clis_cwd(claude: Path, tmp_path: Path) -> None:
    """A lease wins over the config's cwd, and the CLI keeps the session under its home."""
    leased = tmp_path / "leased"
    leased.mkdir()
    with Emulator(Scenario(turns=[Turn(text="OK")])) as emu:
        config = claude_config(claude, emu.base_url, tmp_path)
        workspace = WorkspaceLease(id="w-1", cwd=str(leased))
        response, _ = anyio.run(lambda: run(config, workspace=workspace))
    assert response.failure is None, response.failure
    assert response.checkpoint is not None
    session_id = resume_id(response)
    stored = list((Path(config.home) / ".claude" / "projects").glob(f"*/{session_id}.jsonl"))
    assert len(stored) == 1, stored
    assert "leased" in stored[0].parent.name


@pytest.mark.anyio
async def test_a_prompt_too_long_for_argv_reaches_the_model_byte_for_byte(
    claude: Path, tmp_path: Path
) -> None:
    """1 MiB and more, a leading dash, quotes and non-ASCII: on stdin, whole."""
    prompt = "-a pasted file:\n" + 'line "quoted", ünïcödé ✓\n' * 40_000
    assert len(prompt.encode()) > 1 << 20
    with Emulator(Scenario(turns=[Turn(text="OK")])) as emu:
        response, _ = await run(claude_config(claude, emu.base_url, tmp_path), prompt)
    assert response.failure is None, response.failure
    [main] = emu.main_requests
    assert main.user_text.endswith(prompt)
