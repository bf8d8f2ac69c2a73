"""The Codex driver against the real ``codex`` CLI, offline, with the model-API emulator.

The pinned codex release (``examples/cli-versions.json``) runs for real: its argv,
environment, home, sessions, resume, ``--output-schema``, retries and process tree
are the CLI's own; only the model is the emulator on 127.0.0.1. The whole suite runs on
asyncio and trio with the scenario battery bound to the real CLI through
:func:`codex_driver.binding.model_binding` (which documents how codex is pointed at the
emulator, and why INP-01 is declared out of its reach). The tests below it are what is
codex's own: its usage and session files, its tool item, developer instructions on
resume, its retry metadata and failure wording, a provider that never answers, a
command still running at the deadline, and a prompt of a MiB in bytes. Every test has
its own temporary home and workspace and its own emulator. The tier skips (naming
``adaptertest install-clis``) when node or the CLI is missing.

From this folder, the same check by hand (with an emulator running)::

    PYTHONPATH=.. python -m pytest test_codex_realcli.py
"""

from __future__ import annotations

import atexit
import dataclasses
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

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
from codex_driver import CodexConfig, CodexDriver
from codex_driver.binding import MODEL, STREAM_RETRIES, emulator_config, model_binding
from driver import (
    FailureCode,
    Request,
    Response,
    RunEventType,
    SessionContext,
    StreamKind,
    TranscriptKind,
    Usage,
    WorkspaceLease,
)
from driver.clikit import SessionMismatchError, make_usage

RESUME_ID = "01a2346c-e7bf-7400-a2c7-e17748813b81"  # the seed session of the codec clauses
SENT = TurnUsage(input_tokens=12, cached_input_tokens=2, output_tokens=3)
"""The usage the emulator sends with each answer."""
ASYNCIO_ONLY = pytest.mark.parametrize("anyio_backend", ["asyncio"])
"""Checks of what the CLI does, run on one backend to keep the tier fast; the whole
suite, the deadline and cancellation run on both."""


@pytest.fixture(scope="module")
def codex() -> Path:
    """The pinned codex binary (skips the tier when it is not installed)."""
    return realcli.require("codex")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A fresh home for the CLI: its config, sessions and state go under it."""
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A fresh workspace (no git repository: the driver passes --skip-git-repo-check)."""
    path = tmp_path / "workspace"
    path.mkdir()
    return path


def codex_config(emu: Emulator | str, home: Path, *, timeout: float = 60) -> CodexConfig:
    """The binding's config for ``emu`` (or its base URL), with ``home`` and a workspace
    beside it (the ``home`` and ``workspace`` fixtures)."""
    base_url = emu if isinstance(emu, str) else emu.base_url
    endpoint = realcli.tier_endpoint(
        base_url, home.parent, protocol="openai-responses", deadline=timeout
    )
    return emulator_config(endpoint)


def ok_scenario() -> Scenario:
    """Every request answered ``OK``; one with an output schema gets the value the
    suite's structured probe expects, through codex's own ``--output-schema``."""
    turn = Turn(text="OK", deltas=2, structured={"ok": True}, usage=SENT)
    return Scenario(turns=[turn], repeat_last=True)


def sent_usage(*turns: TurnUsage) -> Usage:
    """What the driver must report for a run the emulator answered with ``turns``."""
    return make_usage(
        input_tokens=sum(t.input_tokens for t in turns),
        cached_input_tokens=sum(t.cached_input_tokens for t in turns),
        output_tokens=sum(t.output_tokens for t in turns),
    )


async def run_once(
    driver: CodexDriver, workspace: Path, prompt: str = "Reply with exactly OK.", **request: Any
) -> tuple[Response, RecordingSink]:
    sink = RecordingSink()
    lease = WorkspaceLease(id="ws-1", cwd=str(workspace))
    run = Request(prompt=prompt, workspace=lease, streaming=True, **request)
    response = await driver.run(run, sink)
    return response, sink


def spawned_pid(sink: RecordingSink) -> int:
    return next(int(e.metadata["pid"]) for e in sink.events if e.type == RunEventType.SPAWN)


def processes_running(needle: str) -> list[int]:
    """Pids whose command line contains ``needle`` (from the process table, ``/proc``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:  # gone meanwhile
                continue
            if needle.encode() in cmdline:
                found.append(int(entry.name))
    return found


def assert_process_group_gone(pid: int) -> None:
    """The CLI ran in its own process group (led by ``pid``): nothing of it is left."""
    with pytest.raises(ProcessLookupError):
        os.killpg(pid, 0)


# -- the whole suite ---------------------------------------------------------------------------

SKIP = realcli.skip_reason("codex")
"""Why the tier cannot run here (node or the pinned codex missing), or None."""


SHARED_VARIABLE = "CODEX_REALCLI_TIER_SHARED"
"""Hands the shared folder and emulator address to a fresh interpreter the suite starts
(CAP-01 builds the driver again there): it must get the same config, and no emulator."""


class _Shared:
    """The whole suite's emulator, home and workspace, started at import when codex is
    installed (the suite classes below need their options at collection)."""

    def __init__(self) -> None:
        self.emulator: Emulator | None = None
        inherited = os.environ.get(SHARED_VARIABLE)
        if inherited:  # a child interpreter of this run: the parent's folders and emulator
            shared = json.loads(inherited)
            self.root, base_url = Path(shared["root"]), str(shared["base_url"])
        else:
            self.root = Path(tempfile.mkdtemp(prefix="codex-tier-"))
            for folder in ("home", "workspace"):
                (self.root / folder).mkdir()
            self.emulator = Emulator(ok_scenario()).start()
            base_url = self.emulator.base_url
            os.environ[SHARED_VARIABLE] = json.dumps({"root": str(self.root), "base_url": base_url})
            atexit.register(self.close)
        self.config = codex_config(base_url, self.root / "home")

    @property
    def requests(self) -> list[RecordedRequest]:
        return self.emulator.requests if self.emulator is not None else []

    def close(self) -> None:
        if self.emulator is not None:
            self.emulator.stop()
        os.environ.pop(SHARED_VARIABLE, None)
        shutil.rmtree(self.root, ignore_errors=True)


SHARED = _Shared() if SKIP is None else None


def suite_options(backend: Backend) -> Options:
    """Every live clause on (the structured probe, two concurrent processes for CON-01,
    the model side read from the emulator for SYS-02) and the scenario battery."""
    if SHARED is None:
        return Options(skip_live_run=SKIP)
    shared = SHARED
    return dataclasses.replace(
        testing.full_options(shared.config, resume_id=RESUME_ID, backend=backend),
        workspace=str(shared.root / "workspace"),
        model_requests=lambda: shared.requests,
        labels=realcli.cli_labels("codex"),
        model_binding=model_binding(),
    )


def new_driver() -> CodexDriver:
    """The factory the suite builds drivers with."""
    return CodexDriver(SHARED.config if SHARED is not None else None)


TestCodexRealCLI = adaptertest.test_driver(new_driver, suite_options("asyncio"))
TestCodexRealCLIOnTrio = adaptertest.test_driver(new_driver, suite_options("trio"))


@pytest.mark.parametrize(
    "suite", [TestCodexRealCLI, TestCodexRealCLIOnTrio], ids=["asyncio", "trio"]
)
def test_the_real_cli_reaches_level_full(suite: type) -> None:
    """Live run, resume, native structured output and two concurrent processes."""
    if SHARED is None:
        pytest.skip(SKIP or "codex is not installed")
    report = suite.adaptertest_suite().report()  # type: ignore[attr-defined]
    failing = [r.describe() for r in report.results if r.status.is_failure]
    assert report.level is Level.FULL, (report.summary(), failing)
    # The structured probe went through codex's own mechanism: a json_schema text format.
    formats = [r.body.get("text", {}).get("format", {}) for r in SHARED.requests]
    assert any(f.get("type") == "json_schema" for f in formats)


# -- explicit checks ---------------------------------------------------------------------------


@pytest.mark.anyio
@ASYNCIO_ONLY
async def test_answer_ok_with_the_usage_the_emulator_sent(
    anyio_backend: str, codex: Path, home: Path, workspace: Path
) -> None:
    with Emulator(ok_scenario()) as emu:
        driver = CodexDriver(codex_config(emu, home))
        response, sink = await run_once(driver, workspace)
        (request,) = emu.main_requests
    assert response.failure is None, response.failure
    assert response.output == "OK"
    assert response.usage == sent_usage(SENT)  # USG-01; codex reports no cost
    assert response.usage is not None
    assert response.usage.estimated_cost_milli == 0
    assert sink.stream[-1].kind == StreamKind.RUN_FINISHED
    assert request.model == MODEL
    assert "Reply with exactly OK." in request.user_text
    assert request.headers["authorization"] != f"Bearer {realcli.TIER_API_KEY}"  # masked
    # The home was the CLI's own: its session file is under it.
    assert list((home / ".codex" / "sessions").rglob("rollout-*.jsonl"))


@pytest.mark.anyio
@ASYNCIO_ONLY
async def test_a_tool_round_trip_in_the_workspace(
    anyio_backend: str, codex: Path, home: Path, workspace: Path
) -> None:
    (workspace / "note.txt").write_text("the secret word is pumpkin\n", encoding="utf-8")
    first = TurnUsage(input_tokens=20, output_tokens=4)
    scenario = Scenario(
        turns=[
            Turn(
                tool_calls=[ToolCall(name="exec_command", arguments={"cmd": "cat note.txt"})],
                usage=first,
            ),
            Turn(text="The word is pumpkin.", usage=SENT),
        ]
    )
    with Emulator(scenario) as emu:
        driver = CodexDriver(codex_config(emu, home))
        response, _ = await run_once(driver, workspace, "Read note.txt and tell me the word.")
        requests = emu.main_requests
    assert response.failure is None, response.failure
    assert response.output == "The word is pumpkin."
    # The CLI ran the command for real and sent its output back in the next request.
    assert len(requests) == 2
    assert any("pumpkin" in result for result in requests[1].tool_results)
    calls = [i for i in response.transcript if i.kind == TranscriptKind.TOOL_CALL]
    results = [i for i in response.transcript if i.kind == TranscriptKind.TOOL_RESULT]
    assert len(calls) == len(results) == 1
    assert calls[0].tool_use_id == results[0].tool_use_id != ""
    assert calls[0].tool_name == "command_execution"
    assert "cat note.txt" in calls[0].input["command"]
    assert "pumpkin" in results[0].text
    assert not results[0].is_error
    assert response.usage == sent_usage(first, SENT)  # both requests of the turn


@pytest.mark.anyio
@ASYNCIO_ONLY
async def test_the_append_reaches_the_model_and_a_changed_one_is_not_resumed(
    anyio_backend: str, codex: Path, home: Path, workspace: Path
) -> None:
    """codex 0.169 keeps a thread's first developer instructions on resume, so a later
    append passed with -c developer_instructions would never reach the model: the
    driver refuses a resume with another append before launch (upstream's rule), and a
    resume with the same one keeps it in the system text."""
    first_text, later_text = "Answer like a lighthouse keeper.", "Answer like a pirate."
    with Emulator(ok_scenario()) as emu:
        driver = CodexDriver(codex_config(emu, home))
        first, _ = await run_once(driver, workspace, append_system_prompt=first_text)
        assert first.checkpoint is not None
        assert first.checkpoint.state is not None
        session = SessionContext(state=first.checkpoint.state)
        with pytest.raises(SessionMismatchError, match="appended system prompt"):
            await run_once(driver, workspace, session=session, append_system_prompt=later_text)
        resumed, _ = await run_once(
            driver, workspace, session=session, append_system_prompt=first_text
        )
        requests = emu.main_requests
    assert first.failure is None, first.failure
    assert resumed.failure is None, resumed.failure
    assert len(requests) == 2  # the refused resume never started codex
    # -c developer_instructions: developer text, never in a user turn (SYS-02).
    for request in requests:
        assert first_text in request.system_text
        assert first_text not in request.user_text


# -- failures a host must expect -----------------------------------------------------------------


@pytest.mark.anyio
@ASYNCIO_ONLY
async def test_a_429_then_the_answer_shows_the_retry_in_metadata(
    anyio_backend: str, codex: Path, home: Path, workspace: Path
) -> None:
    fault = Fault(status=429, headers={"retry-after": "0"}, times=1)
    scenario = Scenario(turns=[Turn(text="OK", usage=SENT, fault=fault)])
    with Emulator(scenario) as emu:
        driver = CodexDriver(codex_config(emu, home))
        response, sink = await run_once(driver, workspace)
        assert len(emu.main_requests) == 2
    assert response.failure is None, response.failure
    assert response.output == "OK"
    assert response.metadata == {
        "reconnect_attempt": "1",
        "reconnect_max": str(STREAM_RETRIES),
        "http_status": "429",
    }
    retries = [p for p in sink.stream if p.kind == "codex.error"]
    assert len(retries) == 1
    assert "429" in retries[0].raw["message"]


RECONNECTS = f"reconnect {STREAM_RETRIES} of {STREAM_RETRIES}"


class FailureScenario(NamedTuple):
    name: str
    fault: Fault
    named: tuple[str, ...]
    """What the failure message must name (status, retry count, the cause)."""


FAILURES = [
    FailureScenario(
        "persistent 500",
        Fault(status=500, times=-1),
        ("HTTP status 500", RECONNECTS, "high demand"),
    ),
    FailureScenario(
        "persistent 529",
        Fault(status=529, times=-1),
        ("status 529", RECONNECTS),
    ),
    FailureScenario(
        "401 unauthorized",
        Fault(status=401, times=-1),
        ("status 401 Unauthorized", RECONNECTS),
    ),
    FailureScenario(
        "stream cut mid-answer",
        Fault(cut_after_events=4, times=-1),
        ("stream disconnected before completion", RECONNECTS),
    ),
]


@pytest.mark.anyio
@ASYNCIO_ONLY
@pytest.mark.parametrize("case", FAILURES, ids=lambda c: c.name)
async def test_a_failure_names_the_status_and_the_reconnects(
    anyio_backend: str, case: FailureScenario, codex: Path, home: Path, workspace: Path
) -> None:
    """codex's own words for each persistent fault (FLT-02 judges that the failure is
    clean and named for every driver)."""
    scenario = Scenario(turns=[Turn(text="OK", usage=SENT, fault=case.fault)])
    with Emulator(scenario) as emu:
        response, sink = await run_once(CodexDriver(codex_config(emu, home)), workspace)
    failure = response.failure
    assert failure is not None
    assert failure.code == FailureCode.AGENT_ERROR
    for text in case.named:
        assert text in failure.message, (text, failure.message)
    assert sink.stream[-1].kind == StreamKind.RUN_ERROR


@pytest.mark.anyio
@ASYNCIO_ONLY
async def test_an_unreachable_provider_ends_at_the_deadline_and_says_so(
    anyio_backend: str, codex: Path, home: Path, workspace: Path
) -> None:
    # codex waits "for network" without end when nothing listens: the deadline ends it.
    with Emulator(ok_scenario()) as emu:
        config = codex_config(emu, home, timeout=6)  # its first wait ends after ~3 s
    # The emulator has stopped: its port refuses connections now.
    response, sink = await run_once(CodexDriver(config), workspace)
    assert response.timed_out
    assert response.failure is not None
    assert "the model provider was unreachable" in response.failure.message
    assert int(response.failure.metadata["waiting_for_network"]) >= 1
    assert response.metadata["waiting_for_network"] == str(
        response.failure.metadata["waiting_for_network"]
    )
    assert_process_group_gone(spawned_pid(sink))


@pytest.mark.anyio
@ASYNCIO_ONLY
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
async def test_a_deadline_during_a_tool_command_stops_the_command_too(
    anyio_backend: str, codex: Path, home: Path, workspace: Path
) -> None:
    # codex runs a command in a PTY of its own; the model never answers after it.
    command = f"sleep {os.getpid()}.{os.getppid()}"  # a command line no other test runs
    call = ToolCall(name="exec_command", arguments={"cmd": command})
    scenario = Scenario(turns=[Turn(tool_calls=[call]), Turn(fault=Fault(hang=True, times=-1))])
    seen: list[int] = []

    async def watch() -> None:
        with anyio.move_on_after(10):
            while not seen:
                seen.extend(processes_running(command))
                await anyio.sleep(0.05)

    with Emulator(scenario) as emu:
        driver = CodexDriver(codex_config(emu, home, timeout=4))
        async with anyio.create_task_group() as group:
            group.start_soon(watch)
            response, sink = await run_once(driver, workspace)
    assert seen, "the command never started"
    assert response.timed_out
    assert processes_running(command) == []
    assert_process_group_gone(spawned_pid(sink))


@ASYNCIO_ONLY
@pytest.mark.anyio
async def test_a_prompt_too_long_for_argv_reaches_the_model_byte_for_byte(
    anyio_backend: str, codex: Path, home: Path, workspace: Path
) -> None:
    """1 MiB and more, a leading dash, quotes and non-ASCII: on stdin, whole."""
    prompt = "-a pasted file:\n" + 'line "quoted", ünïcödé ✓\n' * 40_000
    assert len(prompt.encode()) > 1 << 20
    with Emulator(ok_scenario()) as emu:
        response, _ = await run_once(CodexDriver(codex_config(emu, home)), workspace, prompt)
        (main,) = emu.main_requests
    assert response.failure is None, response.failure
    assert main.user_text.endswith(prompt)
