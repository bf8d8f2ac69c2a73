"""Record a real agent's ACP traffic with ``adaptertest record --scenario``.

``python -m acp_driver._record [--structured] AGENT SCENARIO OUT [PROMPT]`` runs one
turn of the agent (installed by ``adaptertest install-clis``) through the ACP driver,
with the agent wrapped in the recorder (``--structured``: the turn asks natively for the
suite's structured-output probe, for an agent that has the mechanism): the recorder
starts the emulator playing SCENARIO, points the agent at it (``ANTHROPIC_BASE_URL``,
``GOOGLE_GEMINI_BASE_URL``, ``OPENAI_BASE_URL``) and keeps the agent's stdout, its
JSON-RPC messages, in OUT. Permission requests are approved. Only agents that read one
of those variables can be recorded so (Gemini CLI, claude-agent-acp, Qwen Code).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import anyio

from acp_driver._agents import AGENTS, agent_config, agent_driver
from adaptertest import RecordingSink, realcli
from adaptertest.so import STRUCTURED_PROMPT, structured_request
from driver import HumanDecisionMode, HumanDecisionPolicy, Request, RunPolicy, WorkspaceLease
from driver.acpkit import ACPConfig

__all__ = ["RECORDABLE", "main", "recording_config"]

RECORDABLE = ("gemini", "claude-acp", "qwen")
"""The agents the recorder's emulator variables reach."""
UNUSED_URL = "http://127.0.0.1:9"
"""What the agent's own variables name; the recorder's emulator variables replace it."""


def recording_config(
    name: str, program: str | Path, scenario: Path, out: Path, home: Path
) -> ACPConfig:
    """The agent's config with its command wrapped in ``adaptertest record``; the program
    is found on ``PATH`` so the recording names it, not where it is installed."""
    config = agent_config(name, Path(program).name, UNUSED_URL, home)
    path = f"{Path(program).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    recorder = (
        sys.executable,
        "-m",
        "adaptertest",
        "record",
        str(out),
        "--scenario",
        str(scenario),
        "--cli",
        name,
        "--force",
        "--",
    )
    return config.model_copy(
        update={"command": (*recorder, *config.command), "env": {**config.env, "PATH": path}}
    )


async def _record(name: str, scenario: Path, out: Path, prompt: str, structured: bool) -> int:
    program = realcli.require(name)
    with tempfile.TemporaryDirectory(prefix="acp-record-") as root:
        workspace = Path(root) / "workspace"
        workspace.mkdir()
        config = recording_config(
            name, program, scenario.resolve(), out.resolve(), Path(root) / "home"
        )
        policy = RunPolicy(
            human_decision=HumanDecisionPolicy(permission=HumanDecisionMode.AUTO_APPROVE)
        )
        request = Request(
            prompt=prompt,
            streaming=True,
            workspace=WorkspaceLease(cwd=str(workspace)),
            policy=policy,
        )
        if structured:
            probe = structured_request(None, str(workspace))
            request = request.model_copy(
                update={
                    "structured_output_source": probe.structured_output_source,
                    "output_schema": probe.output_schema,
                }
            )
        response = await agent_driver(name, config).run(request, RecordingSink())
    print(f"{name}: output {response.output!r}, failure {response.failure}", file=sys.stderr)
    return 0 if response.failure is None else 1


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    structured = "--structured" in args
    if structured:
        args.remove("--structured")
    if len(args) not in (3, 4) or args[0] not in AGENTS:
        print(__doc__, file=sys.stderr)
        return 2
    default = STRUCTURED_PROMPT if structured else "Reply with exactly: OK"
    prompt = args[3] if len(args) == 4 else default
    return anyio.run(_record, args[0], Path(args[1]), Path(args[2]), prompt, structured)


if __name__ == "__main__":
    sys.exit(main())
