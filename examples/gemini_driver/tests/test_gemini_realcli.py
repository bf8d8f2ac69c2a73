"""The Gemini CLI driver against the real, pinned Gemini CLI and the kit's model emulator.

Each test runs the real ``gemini`` binary (``examples/cli-versions.json``; installed by
``adaptertest install-clis gemini``, skipped with that hint when node or the CLI is
missing) in a temporary home and workspace of its own, pointed at an
:class:`adaptertest.emulator.Emulator` on 127.0.0.1. Nothing leaves the machine.

What the real CLI needs, and this file gives it through the driver's config:
``GEMINI_API_KEY`` (any value), ``GOOGLE_GEMINI_BASE_URL`` (the emulator),
``GEMINI_CLI_TRUST_WORKSPACE=true`` (else exit 55, an untrusted folder), its own home
(``GeminiConfig.home``, read as ``GEMINI_CLI_HOME``) and, in that home's settings file,
the API-key auth type (``GeminiConfig.settings``; else exit 41). ``TMPDIR`` points into
the home, because the CLI writes an error report for each failed API call there.

Gemini CLI 0.61 has no native structured output, so the top is level ``live``, with
LIV-03 (a resumable checkpoint) and a real resume. Its retry backoff starts at 5 s and
cannot be shortened, so the settings cap its attempts at 2 and the failure scenarios run
once, on asyncio only.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

import adaptertest
from adaptertest import ClauseStatus, ConformanceReport, Level, Options, RecordingSink, realcli
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
from driver import (
    EventSink,
    FailureCode,
    Request,
    Response,
    RunError,
    SessionContext,
    StreamKind,
    TranscriptKind,
    Usage,
    WorkspaceLease,
)
from gemini_driver import RETRY_KIND, GeminiConfig, GeminiDriver

SKIP = realcli.skip_reason("gemini")
pytestmark = pytest.mark.skipif(SKIP is not None, reason=SKIP or "")

MODEL = "gemini-2.5-flash"
"""Named explicitly: with ``auto`` the CLI first asks a lite model to route the prompt."""
MAX_ATTEMPTS = 2
"""The CLI's own retry budget (10 by default, with a backoff from 5 s up to 30 s)."""
USAGE = TurnUsage(input_tokens=12, output_tokens=3)
OK = Scenario(turns=[Turn(text="OK", deltas=2, usage=USAGE)], repeat_last=True)


def gemini_config(
    emu: Emulator, home: Path, workspace: Path, *, timeout: float = 60, **fields: Any
) -> GeminiConfig:
    """The driver's config for one home and workspace, pointed at ``emu``."""
    binary = realcli.locate("gemini")
    assert binary is not None, SKIP
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    workspace.mkdir(parents=True, exist_ok=True)
    return GeminiConfig(
        command=(str(binary),),
        model=MODEL,
        cwd=str(workspace),
        timeout=timeout,
        home=str(home),
        env={
            "GEMINI_API_KEY": "emulated-key",
            "GOOGLE_GEMINI_BASE_URL": emu.base_url,
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "TMPDIR": str(home / "tmp"),
        },
        settings={
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "general": {"maxAttempts": MAX_ATTEMPTS},
        },
        **fields,
    )


# -- the whole suite, one emulator and one home per backend ----------------------------------


class _Live:
    """The emulator and home of one suite class, started on the first driver built."""

    def __init__(self) -> None:
        self.emu: Emulator | None = None
        self.root: Path | None = None
        self._own_root = False

    def factory(self) -> GeminiDriver:
        if self.root is None:  # loaded outside pytest, e.g. by benchmarks/realcli.py
            self.root = Path(tempfile.mkdtemp(prefix="gemini-live-"))
            self._own_root = True
            atexit.register(self.close)
        if self.emu is None:
            self.emu = Emulator(OK).start()
        return GeminiDriver(gemini_config(self.emu, self.root / "home", self.root / "work"))

    def requests(self) -> list[RecordedRequest]:
        return self.emu.requests if self.emu is not None else []

    def close(self) -> None:
        if self.emu is not None:
            self.emu.stop()
            self.emu = None
        if self._own_root and self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None


LIVE = {"asyncio": _Live(), "trio": _Live()}


@pytest.fixture(scope="module", autouse=True)
def _live_folders(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    for backend, live in LIVE.items():
        live.root = tmp_path_factory.mktemp(f"gemini-live-{backend}")
    yield
    for live in LIVE.values():
        live.close()


def suite_options(backend: Backend) -> Options:
    """Every live clause, CON-01 with two real processes at once, and the model side
    read from the emulator, on ``backend``."""
    return Options(
        live_run=True,
        live_expected_output="OK",
        live_run_timeout=120,
        concurrent_runs=2,
        backend=backend,
        model_requests=LIVE[backend].requests,
        labels=realcli.cli_labels("gemini"),
    )


def new_driver() -> GeminiDriver:
    """A driver on the real CLI and the asyncio class's emulator (what the benchmark runs)."""
    return LIVE["asyncio"].factory()


TestGeminiRealCLI = adaptertest.test_driver(LIVE["asyncio"].factory, suite_options("asyncio"))
TestGeminiRealCLIOnTrio = adaptertest.test_driver(LIVE["trio"].factory, suite_options("trio"))
SUITES: dict[str, Any] = {"asyncio": TestGeminiRealCLI, "trio": TestGeminiRealCLIOnTrio}


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_real_cli_reaches_level_live(backend: Backend) -> None:
    # The class's own suite: its probes (the live runs) already ran for its clauses.
    report: ConformanceReport = SUITES[backend].adaptertest_suite().report()
    failing = [r.describe() for r in report.results if r.status.is_failure]
    assert report.level is Level.LIVE, (report.summary(), failing)
    assert report.result("LIV-03").status is ClauseStatus.PASSED


# -- explicit checks, each in its own home and workspace --------------------------------------
# One CLI behaviour each: on asyncio only (the whole suite above runs on both backends).


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@contextlib.contextmanager
def emulated(scenario: Scenario) -> Iterator[Emulator]:
    with Emulator(scenario) as emu:
        yield emu


async def run_once(
    config: GeminiConfig, prompt: str = "Reply with exactly: OK", **request: Any
) -> tuple[Response, RecordingSink]:
    sink = RecordingSink()
    response = await GeminiDriver(config).run(
        Request(prompt=prompt, streaming=True, **request), sink
    )
    return response, sink


@pytest.mark.anyio
async def test_answer_and_usage_are_what_the_emulator_sent(tmp_path: Path) -> None:
    leased = tmp_path / "leased"
    leased.mkdir()
    (leased / "marker.txt").write_text("here", encoding="utf-8")
    with emulated(OK) as emu:
        config = gemini_config(emu, tmp_path / "home", tmp_path / "work")
        lease = WorkspaceLease(id="w1", cwd=str(leased))
        response, sink = await run_once(config, workspace=lease)
        (main,) = emu.main_requests
    assert response.failure is None, response.failure
    assert response.output == "OK"
    # USG-01 against the model side: the CLI reports exactly the emulated counts. Gemini
    # CLI reports no cost.
    assert response.usage == Usage(input_tokens=12, output_tokens=3)
    assert sink.stream[-1].kind == StreamKind.RUN_FINISHED
    assert sink.stream[-1].usage == response.usage
    deltas = [p.delta for p in sink.stream if p.kind == StreamKind.TEXT_CONTENT]
    assert deltas == ["O", "K"]  # the emulator's two deltas, one payload each
    assert main.model == MODEL
    assert "Reply with exactly: OK" in main.user_text
    # The CLI ran in the leased workspace, not the config's cwd: it lists it to the model.
    assert str(leased) in main.user_text
    assert "marker.txt" in main.user_text


@pytest.mark.anyio
async def test_a_tool_round_trip_reads_the_workspace(tmp_path: Path) -> None:
    workspace = tmp_path / "work"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("the secret word is pelican\n", encoding="utf-8")
    scenario = Scenario(
        turns=[
            Turn(tool_calls=[ToolCall(name="read_file", arguments={"file_path": "notes.txt"})]),
            Turn(text="OK", usage=USAGE),
        ]
    )
    with emulated(scenario) as emu:
        config = gemini_config(emu, tmp_path / "home", workspace)
        response, _ = await run_once(config, "Read notes.txt")
        requests = emu.main_requests
    assert response.failure is None, response.failure
    assert response.output == "OK"
    assert len(requests) == 2
    assert requests[1].tool_results == ["the secret word is pelican\n"]
    calls = [i for i in response.transcript if i.kind == TranscriptKind.TOOL_CALL]
    results = [i for i in response.transcript if i.kind == TranscriptKind.TOOL_RESULT]
    assert [c.tool_name for c in calls] == ["read_file"]
    assert calls[0].input == {"file_path": "notes.txt"}
    assert [r.tool_use_id for r in results] == [calls[0].tool_use_id]
    assert calls[0].tool_use_id.startswith("read_file__")  # Gemini CLI's name__id form
    assert not results[0].is_error


@pytest.mark.anyio
async def test_resume_continues_the_first_session(tmp_path: Path) -> None:
    with emulated(OK) as emu:
        config = gemini_config(emu, tmp_path / "home", tmp_path / "work")
        first, _ = await run_once(config, "Remember the word pelican")
        assert first.checkpoint is not None, first.failure
        assert first.checkpoint.valid
        assert first.checkpoint.state is not None
        session = SessionContext(state=first.checkpoint.state)
        second, _ = await run_once(config, "Which word?", session=session)
        requests = emu.main_requests
    assert second.failure is None, second.failure
    assert second.checkpoint is not None
    assert second.checkpoint.state is not None
    assert second.checkpoint.state.resume_id == first.checkpoint.state.resume_id
    assert len(requests) == 2
    later = requests[1]
    assert "Remember the word pelican" in later.user_text  # the first exchange came along
    assert "Which word?" in later.user_text
    roles = [c.get("role") for c in later.body["contents"]]
    assert roles == ["user", "model", "user"]


# -- failures a host must expect -------------------------------------------------------------


def failing(fault: Fault, *then: Turn) -> Scenario:
    return Scenario(turns=[Turn(text="OK", deltas=2, usage=USAGE, fault=fault), *then])


class _Capturing(GeminiDriver):
    """The driver, keeping the response of each run the suite makes."""

    def __init__(self, config: GeminiConfig, responses: list[Response]) -> None:
        super().__init__(config)
        self._responses = responses

    async def run(self, request: Request, sink: EventSink) -> Response:
        try:
            response = await super().run(request, sink)
        except RunError as exc:
            if exc.response is not None:
                self._responses.append(exc.response)
            raise
        self._responses.append(response)
        return response


def expect_clean_failure(config: GeminiConfig, reason: str) -> Response:
    """The suite's live clauses on runs that must fail: FLR-01 clean, LIV-01 skipped,
    nothing else failing. Returns the first run's response; every run failed alike."""
    responses: list[Response] = []
    options = Options(live_run=True, live_run_timeout=120)
    testing.check_expected_failure_is_clean(lambda: _Capturing(config, responses), options, reason)
    assert responses, "the suite made no live run"
    first = responses[0]
    assert first.failure is not None
    for later in responses[1:]:
        assert later.failure is not None
        assert later.failure.code == first.failure.code
        assert later.exit_code == first.exit_code
    return first


def test_a_429_is_retried_and_the_retry_is_in_the_metadata(tmp_path: Path) -> None:
    scenario = failing(Fault(status=429, headers={"retry-after": "0"}))
    with emulated(scenario) as emu:
        config = gemini_config(emu, tmp_path / "home", tmp_path / "work")
        response, sink = anyio.run(run_once, config)
        failed = [r for r in emu.requests if r.turn is not None]
    assert response.failure is None, response.failure
    assert response.output == "OK"
    assert response.metadata == {"retries": "1", "last_retry_status": "429"}
    retries = [p.raw for p in sink.stream if p.kind == RETRY_KIND]
    assert [(r["attempt"], r["status"]) for r in retries] == [(1, 429)]
    assert len(failed) == 2  # the 429 and the retry that got the answer


@pytest.mark.parametrize("status", [500, 529])
def test_a_persistent_server_error_names_status_and_retries(tmp_path: Path, status: int) -> None:
    with emulated(failing(Fault(status=status, times=-1))) as emu:
        config = gemini_config(emu, tmp_path / "home", tmp_path / "work")
        response = expect_clean_failure(config, f"a persistent HTTP {status}")
    failure = response.failure
    assert failure is not None
    assert failure.code == FailureCode.AGENT_ERROR
    assert f"HTTP {status}" in failure.message
    assert f"after {MAX_ATTEMPTS} attempts, 1 retry" in failure.message
    assert failure.metadata["http_status"] == status
    assert failure.metadata["retries"] == 1
    assert response.exit_code == status % 256  # the CLI exits with the status modulo 256


def test_a_401_fails_at_once(tmp_path: Path) -> None:
    with emulated(failing(Fault(status=401, times=-1))) as emu:
        config = gemini_config(emu, tmp_path / "home", tmp_path / "work")
        response = expect_clean_failure(config, "an invalid API key (HTTP 401)")
    failure = response.failure
    assert failure is not None
    assert failure.message.startswith("gemini API error: HTTP 401")
    assert failure.metadata["http_status"] == 401
    assert "retries" not in failure.metadata
    assert response.metadata == {}


def test_a_stream_cut_mid_answer_fails(tmp_path: Path) -> None:
    with emulated(failing(Fault(cut_after_events=1, times=-1))) as emu:
        config = gemini_config(emu, tmp_path / "home", tmp_path / "work")
        response = expect_clean_failure(config, "the model stream was cut mid-answer")
    assert response.failure is not None
    # The result line says only "terminated"; the message names the cut and the cause.
    assert "response stream was cut" in response.failure.message
    assert "SocketError: other side closed" in response.failure.message
    assert response.failure.metadata["stream_cut"] is True
    assert response.checkpoint is None


def _alive(pids: list[int]) -> list[int]:
    living = []
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        stat = Path(f"/proc/{pid}/stat")
        if stat.exists() and stat.read_text().split(") ")[-1].startswith("Z"):
            continue  # a zombie has ended; only its parent's wait is missing
        living.append(pid)
    return living


def _group_members(pgid: int) -> list[int]:
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = stat.read_text().rsplit(") ", 1)[1].split()
            if int(fields[2]) == pgid:
                members.append(int(stat.parent.name))
    return members


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the process table from /proc")
def test_a_hang_past_the_deadline_times_out_and_leaves_no_process(tmp_path: Path) -> None:
    with emulated(failing(Fault(hang=True, times=-1))) as emu:
        config = gemini_config(emu, tmp_path / "home", tmp_path / "work", timeout=8)
        response, sink = anyio.run(run_once, config)
    failure = response.failure
    assert failure is not None
    assert response.timed_out
    assert "did not finish within 8 s" in failure.message
    (spawn,) = [e for e in sink.events if e.type == "spawn"]
    leader = int(spawn.metadata["pid"])
    # The CLI relaunches itself as a child in the same process group: all of it is gone.
    assert _alive([leader, *_group_members(leader)]) == []


def test_cancellation_mid_run_stops_the_cli(tmp_path: Path) -> None:
    slow = Scenario(turns=[Turn(text="O K . . .", deltas=5, fault=Fault(event_delay=2.0))])
    with emulated(slow) as emu:
        config = gemini_config(emu, tmp_path / "home", tmp_path / "work")
        sink = RecordingSink()

        async def cancel_after_first_delta() -> None:
            driver = GeminiDriver(config)
            async with anyio.create_task_group() as group:

                async def run() -> None:
                    await driver.run(Request(prompt="Count slowly", streaming=True), sink)

                group.start_soon(run)
                with anyio.fail_after(60):
                    while not any(p.kind == StreamKind.TEXT_CONTENT for p in sink.stream):
                        await anyio.sleep(0.05)
                group.cancel_scope.cancel()

        anyio.run(cancel_after_first_delta)
    assert sink.stream[-1].kind == StreamKind.RUN_ERROR
    assert sink.stream[-1].error is not None
    assert sink.stream[-1].error.code == FailureCode.CANCELLED
    (spawn,) = [e for e in sink.events if e.type == "spawn"]
    leader = int(spawn.metadata["pid"])
    assert _alive([leader, *_group_members(leader)]) == []


@pytest.mark.anyio
async def test_a_prompt_too_long_for_argv_reaches_the_model_byte_for_byte(tmp_path: Path) -> None:
    """1 MiB and more, a leading dash, quotes and non-ASCII: on stdin, whole."""
    prompt = "-a pasted file:\n" + 'line "quoted", ünïcödé ✓\n' * 40_000
    assert len(prompt.encode()) > 1 << 20
    with emulated(OK) as emu:
        config = gemini_config(emu, tmp_path / "home", tmp_path / "work")
        response, _ = await run_once(config, prompt)
        (main,) = emu.main_requests
    assert response.failure is None, response.failure
    assert main.user_text.endswith(prompt)
