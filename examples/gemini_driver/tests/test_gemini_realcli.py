"""The Gemini CLI driver against the real, pinned Gemini CLI and the kit's model emulator.

Each test runs the real ``gemini`` binary (``examples/cli-versions.json``; installed by
``adaptertest install-clis gemini``, skipped with that hint when node or the CLI is
missing) in a temporary home and workspace of its own, pointed at an
:class:`adaptertest.emulator.Emulator` on 127.0.0.1. Nothing leaves the machine.

The whole suite runs on asyncio and trio with the scenario battery bound to the real
CLI through :func:`gemini_driver.binding.model_binding`, which documents what the CLI
needs to reach the emulator and why TOL-02 is declared out of its reach. Gemini CLI
0.61 has no native structured output, so the top is level ``live``. The tests below the
suite are what is Gemini CLI's own: its token deltas and the leased workspace it lists
to the model, its retry metadata, its exit codes and failure wording, a cancellation in
the middle of an answer. Its retry backoff starts at 5 s and cannot be shortened, so
those run once, on asyncio only.
"""

from __future__ import annotations

import atexit
import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

import adaptertest
from adaptertest import ClauseStatus, ConformanceReport, Level, Options, RecordingSink, realcli
from adaptertest.emulator import Emulator, Fault, RecordedRequest, Scenario, Turn, TurnUsage
from adaptertest.options import Backend
from driver import FailureCode, Request, Response, StreamKind, Usage, WorkspaceLease
from gemini_driver import RETRY_KIND, GeminiConfig, GeminiDriver
from gemini_driver.binding import MAX_ATTEMPTS, MODEL, emulator_config, model_binding

SKIP = realcli.skip_reason("gemini")
pytestmark = pytest.mark.skipif(SKIP is not None, reason=SKIP or "")

USAGE = TurnUsage(input_tokens=12, output_tokens=3)
OK = Scenario(turns=[Turn(text="OK", deltas=2, usage=USAGE)], repeat_last=True)


def gemini_config(emu: Emulator, root: Path, *, timeout: float = 60) -> GeminiConfig:
    """The binding's config for ``emu``, with a home and a workspace under ``root``."""
    endpoint = realcli.tier_endpoint(emu.base_url, root, protocol="gemini", deadline=timeout)
    return emulator_config(endpoint)


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
        return GeminiDriver(gemini_config(self.emu, self.root))

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
    """Every live clause, CON-01 with two real processes at once, the model side read
    from the emulator, and the scenario battery, on ``backend``."""
    return Options(
        live_run=True,
        live_expected_output="OK",
        live_run_timeout=120,
        concurrent_runs=2,
        backend=backend,
        model_requests=LIVE[backend].requests,
        labels=realcli.cli_labels("gemini"),
        model_binding=model_binding(),
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
        config = gemini_config(emu, tmp_path)
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


# -- failures a host must expect: Gemini CLI's own words (FLT-02 judges them clean) -----------


def failing(fault: Fault, *then: Turn) -> Scenario:
    return Scenario(turns=[Turn(text="OK", deltas=2, usage=USAGE, fault=fault), *then])


def test_a_429_is_retried_and_the_retry_is_in_the_metadata(tmp_path: Path) -> None:
    scenario = failing(Fault(status=429, headers={"retry-after": "0"}))
    with emulated(scenario) as emu:
        config = gemini_config(emu, tmp_path)
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
        config = gemini_config(emu, tmp_path)
        response, _ = anyio.run(run_once, config)
    failure = response.failure
    assert failure is not None
    assert failure.code == FailureCode.AGENT_ERROR
    assert f"HTTP {status}" in failure.message
    assert f"after {MAX_ATTEMPTS} attempts, {MAX_ATTEMPTS - 1} retries" in failure.message
    assert failure.metadata["http_status"] == status
    assert failure.metadata["retries"] == MAX_ATTEMPTS - 1
    assert response.exit_code == status % 256  # the CLI exits with the status modulo 256


def test_a_401_fails_at_once(tmp_path: Path) -> None:
    with emulated(failing(Fault(status=401, times=-1))) as emu:
        config = gemini_config(emu, tmp_path)
        response, _ = anyio.run(run_once, config)
    failure = response.failure
    assert failure is not None
    assert failure.message.startswith("gemini API error: HTTP 401")
    assert failure.metadata["http_status"] == 401
    assert "retries" not in failure.metadata
    assert response.metadata == {}


def test_a_stream_cut_mid_answer_fails(tmp_path: Path) -> None:
    with emulated(failing(Fault(cut_after_events=1, times=-1))) as emu:
        config = gemini_config(emu, tmp_path)
        response, _ = anyio.run(run_once, config)
    assert response.failure is not None
    # The result line says only "terminated"; the message names the cut and the cause.
    assert "response stream was cut" in response.failure.message
    assert "SocketError: other side closed" in response.failure.message
    assert response.failure.metadata["stream_cut"] is True
    assert response.checkpoint is None


def test_a_cancellation_mid_answer_ends_the_stream_as_cancelled(tmp_path: Path) -> None:
    """Cancelled after the first delta, not while waiting on the model (DLN-02 does that,
    and PRC-01 checks nothing of the CLI is left either way)."""
    slow = Scenario(turns=[Turn(text="O K . . .", deltas=5, fault=Fault(event_delay=2.0))])
    with emulated(slow) as emu:
        config = gemini_config(emu, tmp_path)
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
