"""The Claude Code driver against the real Claude Code (pinned in ``examples/cli-versions.json``)
and the kit's model-API emulator: no account, no key, no network beyond 127.0.0.1.

The whole suite runs on asyncio and trio with every live clause on and the scenario
battery bound to the real CLI through :func:`claude_driver.binding.model_binding` (which
documents how the CLI is pointed at the emulator). The tests below it are what is
Claude Code's own: its cost figure, its retry metadata and failure wording, the system
prompt of a resumed session, where it stores sessions. Every run has its own home and
workspace; the whole suite shares one emulator and one home for its live clauses.
Skipped, with the reason naming ``adaptertest install-clis``, when node or the CLI is
missing.
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
from adaptertest.emulator import Emulator, Fault, RecordedRequest, Scenario, Turn, TurnUsage
from adaptertest.options import Backend
from claude_driver import ClaudeConfig, ClaudeDriver
from claude_driver.binding import MODEL, RETRIES, emulator_config, model_binding
from driver import FailureCode, Request, Response, SessionContext, WorkspaceLease
from driver.clikit import SessionMismatchError

RESUME_ID = "3f9b6c1e-58d2-4a7f-9e0b-c4d21a8f6e53"

SKIP = realcli.skip_reason("claude")


def claude_config(base_url: str, root: Path, *, timeout: float = 60.0) -> ClaudeConfig:
    """The binding's config for an emulator at ``base_url``, home and workspace under
    ``root``."""
    endpoint = realcli.tier_endpoint(base_url, root, protocol="anthropic", deadline=timeout)
    return emulator_config(endpoint)


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
        self.config = claude_config(base_url, self.root)

    def requests(self) -> list[RecordedRequest]:
        return self.emulator.requests if self.emulator is not None else []

    def close(self) -> None:
        os.environ.pop(SHARED_ENV, None)
        if self.emulator is not None:
            self.emulator.stop()
        shutil.rmtree(self.root, ignore_errors=True)


SHARED = _Shared() if SKIP is None else None


def suite_options(backend: Backend) -> Options:
    """Every live clause on (the structured probe, two concurrent processes, the model
    side read from the emulator for SYS-02) and the scenario battery."""
    if SHARED is None:
        return Options(skip_live_run=SKIP)
    shared = SHARED
    options = testing.full_options(shared.config, resume_id=RESUME_ID, backend=backend)
    return dataclasses.replace(
        options,
        model_requests=shared.requests,
        labels=realcli.cli_labels("claude"),
        model_binding=model_binding(),
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


# -- what is Claude Code's own, one emulator per test -------------------------------------------


NEEDS_CLI = pytest.mark.skipif(SKIP is not None, reason=SKIP or "")


@pytest.fixture
def anyio_backend() -> str:
    """The whole suite runs on both backends; these tests of the CLI itself on asyncio."""
    return "asyncio"


async def run(
    config: ClaudeConfig, prompt: str = adaptertest.DEFAULT_LIVE_PROMPT, **fields: object
) -> Response:
    request = Request.model_validate({"prompt": prompt, "streaming": True, **fields})
    return await ClaudeDriver(config).run(request, RecordingSink())


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


@NEEDS_CLI
@pytest.mark.anyio
async def test_answer_ok_with_the_emulators_usage_and_the_clis_cost(tmp_path: Path) -> None:
    sent = TurnUsage(input_tokens=1210, cached_input_tokens=1024, output_tokens=4)
    with Emulator(Scenario(turns=[Turn(text="OK", deltas=2, usage=sent)])) as emu:
        response = await run(claude_config(emu.base_url, tmp_path))
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


@NEEDS_CLI
@pytest.mark.anyio
async def test_a_resumed_run_keeps_its_system_prompt_and_refuses_another(
    tmp_path: Path,
) -> None:
    """The append is part of the session: a resume with another append is refused before
    Claude Code starts (upstream's rule), and one with the same append sends it to the
    model again (the driver passes ``--system-prompt-snapshot off``, so it is the run's
    own system prompt, not a replay)."""
    text = "Canary-one: answer briefly."
    with Emulator(Scenario(turns=[Turn(text="OK")], repeat_last=True)) as emu:
        config = claude_config(emu.base_url, tmp_path)
        first = await run(config, append_system_prompt=text)
        assert first.checkpoint is not None, first.failure
        session = SessionContext(state=first.checkpoint.state)
        with pytest.raises(SessionMismatchError, match="appended system prompt"):
            await run(config, "Again?", session=session, append_system_prompt="Canary-two.")
        second = await run(config, "Again?", session=session, append_system_prompt=text)
    assert second.failure is None, second.failure
    one, two = emu.main_requests
    assert text in one.system_text
    assert text in two.system_text
    assert "Canary" not in two.user_text


@NEEDS_CLI
@pytest.mark.anyio
async def test_a_429_then_success_shows_the_retry_in_the_metadata(tmp_path: Path) -> None:
    scenario = Scenario(turns=[Turn(text="OK", fault=Fault(status=429, times=1))])
    sink = RecordingSink()
    with Emulator(scenario) as emu:
        request = Request(prompt=adaptertest.DEFAULT_LIVE_PROMPT, streaming=True)
        response = await ClaudeDriver(claude_config(emu.base_url, tmp_path)).run(request, sink)
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
"""What Claude Code says of each persistent fault, and the metadata the driver files
(FLT-02 judges that every failure is clean and named; these are Claude Code's words)."""


@NEEDS_CLI
@pytest.mark.anyio
@pytest.mark.parametrize("name", FAILURES)
async def test_a_failed_request_names_the_status_and_the_retries(tmp_path: Path, name: str) -> None:
    fault, message, metadata = FAILURES[name]
    scenario = Scenario(turns=[Turn(text="never shown", fault=fault)], repeat_last=True)
    with Emulator(scenario) as emu:
        response = await run(claude_config(emu.base_url, tmp_path))
    failure = response.failure
    assert failure is not None
    assert failure.code == FailureCode.AGENT_ERROR
    assert message in failure.message, failure.message
    assert f"{RETRIES} API retries of {RETRIES}" in failure.message, failure.message
    assert {k: failure.metadata.get(k) for k in metadata} == metadata
    assert failure.metadata["retry_attempt"] == RETRIES
    assert failure.metadata["exit_code"] == 1


@NEEDS_CLI
def test_the_workspace_lease_is_the_clis_cwd(tmp_path: Path) -> None:
    """A lease wins over the config's cwd, and the CLI keeps the session under its home."""
    leased = tmp_path / "leased"
    leased.mkdir()
    with Emulator(Scenario(turns=[Turn(text="OK")])) as emu:
        config = claude_config(emu.base_url, tmp_path)
        workspace = WorkspaceLease(id="w-1", cwd=str(leased))
        response = anyio.run(lambda: run(config, workspace=workspace))
    assert response.failure is None, response.failure
    session_id = resume_id(response)
    stored = list((Path(config.home) / ".claude" / "projects").glob(f"*/{session_id}.jsonl"))
    assert len(stored) == 1, stored
    assert "leased" in stored[0].parent.name
