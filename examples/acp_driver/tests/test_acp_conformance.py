"""The ACP example driver against the whole conformance suite, on replays of real agents.

Each "live" run is hermetic: the configured command is the kit's ACP replay stand-in
(``python -m adaptertest.acpreplay``) playing a real agent's ACP traffic recorded with
``adaptertest record`` (``acp_driver._record``), answering the driver's requests in the
recorded order. ACP version 1 has no structured output, but claude-agent-acp has its
own (docs/acp.md): a session opened with its ``_meta`` is answered from the recorded
structured run, so the driver reaches level ``full`` on Claude's replays and ``live`` on
Gemini CLI's, which has no such mechanism. CON-01 runs two replays at once.
"""

from __future__ import annotations

import dataclasses
import sys

import pytest

import adaptertest
from acp_driver import ACPAgentDriver
from adaptertest import Drift, Level
from adaptertest import clikit as testing
from adaptertest.options import Backend
from driver.acpkit import ACPConfig

RECORDINGS = testing.recordings_dir(__file__)
RESUME_ID = "0b6f3c2a-7d41-4e9a-8c5b-2f1e9d7a4c60"  # the seed session of the codec clauses
AGENTS = {"claude-acp": "claude-sonnet-4-5", "gemini": "gemini-2.5-flash"}


def replay_config(
    recording: str, model: str, *, structured: str = "", persistent: bool = False
) -> ACPConfig:
    """A config whose agent is the ACP replay stand-in playing ``recording`` (and
    ``structured`` for a session opened with ``_meta``)."""
    command: tuple[str, ...] = (sys.executable, "-m", "adaptertest.acpreplay")
    command += (str(RECORDINGS / recording),)
    if structured:
        command += ("--meta", str(RECORDINGS / structured))
    command += ("--",)
    return ACPConfig(command=command, model=model, persistent=persistent, timeout=60)


CLAUDE = replay_config(
    "claude-acp_ok.jsonl", AGENTS["claude-acp"], structured="claude-acp_structured.jsonl"
)
GEMINI = replay_config("gemini_ok.jsonl", AGENTS["gemini"])


def new_claude_driver() -> ACPAgentDriver:
    return ACPAgentDriver(CLAUDE, agent="claude-acp")


def new_gemini_driver() -> ACPAgentDriver:
    return ACPAgentDriver(GEMINI, agent="gemini")


def options(config: ACPConfig, backend: Backend = "asyncio") -> adaptertest.Options:
    return testing.full_options(config, resume_id=RESUME_ID, backend=backend)


# Format drift (DFT-01..03): the agent's side of each recorded conversation with additive
# drift (new fields, _meta, unknown update kinds, extension notifications), corrupted and
# cut into arbitrary chunks; the two-way stand-in still answers the driver's requests.
DRIFT = Drift(
    recordings=[
        RECORDINGS / "gemini_ok.jsonl",
        RECORDINGS / "claude-acp_shell.jsonl",
        RECORDINGS / "claude-acp_error_500.jsonl",
    ],
    driver=lambda command: ACPAgentDriver(ACPConfig(command=command, timeout=60)),
)

TestClaudeOverACP = adaptertest.test_driver(
    new_claude_driver, dataclasses.replace(options(CLAUDE), drift=DRIFT)
)
TestClaudeOverACPOnTrio = adaptertest.test_driver(
    new_claude_driver, dataclasses.replace(options(CLAUDE, "trio"), drift=DRIFT)
)
TestGeminiOverACP = adaptertest.test_driver(new_gemini_driver, options(GEMINI))


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_driver_on_claudes_replays_reaches_level_full(backend: Backend) -> None:
    testing.check_conformance_level(new_claude_driver, options(CLAUDE, backend), Level.FULL)


def test_the_driver_on_gemini_replays_stays_at_level_live() -> None:
    # The structured probe is on, but Gemini CLI declares no native mechanism.
    testing.check_conformance_level(new_gemini_driver, options(GEMINI), Level.LIVE)
