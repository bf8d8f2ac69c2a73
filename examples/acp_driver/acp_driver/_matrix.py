"""Reports for the conformance matrix: the suite against each installed ACP agent.

``python -m acp_driver._matrix OUT_DIR`` runs the whole suite (live, one-shot, asyncio)
against every agent of :data:`acp_driver.AGENTS` that ``adaptertest install-clis`` has
installed, each against its own emulator, and writes ``OUT_DIR/acp-<agent>.json``
labelled with the agent and its pinned release; ``adaptertest matrix`` puts them side by
side (docs/matrix.md).
"""

from __future__ import annotations

import dataclasses
import sys
import tempfile
from pathlib import Path

import adaptertest
from acp_driver._agents import AGENTS, agent_config, agent_driver
from adaptertest import clikit as testing
from adaptertest import realcli, report_json
from adaptertest.emulator import Emulator, Scenario

__all__ = ["main", "report_for"]

SCENARIO = {"turns": [{"text": "OK", "deltas": 2}], "repeat_last": True}


def report_for(name: str, out: Path) -> Path | None:
    """Run the suite against agent ``name`` and write its report; None when not installed."""
    program = realcli.locate(name)
    if program is None:
        return None
    with (
        tempfile.TemporaryDirectory(prefix="acp-matrix-") as root,
        Emulator(Scenario.model_validate(SCENARIO)) as emu,
    ):
        workspace = Path(root) / "workspace"
        workspace.mkdir()
        config = agent_config(name, program, emu.base_url, Path(root) / "home", timeout=180)
        config = config.model_copy(update={"cwd": str(workspace)})
        options = testing.conformance_options(config, resume_id="", concurrent_runs=2)
        labels = {**realcli.cli_labels(name), "protocol": "acp"}
        options = dataclasses.replace(options, labels=labels)
        report = adaptertest.check_driver(lambda: agent_driver(name, config), options)
    path = out / f"acp-{name}.json"
    path.write_text(
        report_json.dumps(report_json.report_to_json(report, name=f"acp_driver ({name})")),
        encoding="utf-8",
    )
    print(f"{name}: {report.summary()}", file=sys.stderr)
    return path


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(args[0])
    out.mkdir(parents=True, exist_ok=True)
    written = [report_for(name, out) for name in AGENTS]
    return 0 if any(written) else 1


if __name__ == "__main__":
    sys.exit(main())
