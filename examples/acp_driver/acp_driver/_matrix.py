"""Reports for the conformance matrix: the suite against each installed ACP agent.

``python -m acp_driver._matrix OUT_DIR`` runs the whole suite (live, one-shot, asyncio)
against every agent of :data:`acp_driver.AGENTS` that ``adaptertest install-clis`` has
installed, each against its own emulator, and writes ``OUT_DIR/acp-<agent>.json``
labelled with the agent and its pinned release; ``adaptertest matrix`` puts them side by
side (docs/matrix.md). The agent's model binding runs the scenario battery (its shell
allowed) and, with a binding that keeps its permission prompts, the human-decision family.
"""

from __future__ import annotations

import dataclasses
import sys
import tempfile
from pathlib import Path

import adaptertest
from acp_driver._agents import AGENTS, agent_config, agent_driver, model_binding
from acp_driver._driver import ACPAgentDriver
from adaptertest import clikit as testing
from adaptertest import realcli, report_json
from adaptertest.clauses import CLAUSES, FAMILIES
from adaptertest.emulator import Emulator, Scenario
from adaptertest.report import ConformanceReport

__all__ = ["main", "report_for"]

SCENARIO = {"turns": [{"text": "OK", "deltas": 2, "structured": {"ok": True}}], "repeat_last": True}
"""OK, or the structured probe's answer where a request asks for one (claude-agent-acp)."""
DECISIONS = "HIL"
"""The family judged with the agent's permission prompts kept."""


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
        options = testing.conformance_options(
            config, resume_id="", concurrent_runs=2, live_structured_output=True
        )
        labels = {**realcli.cli_labels(name), "protocol": "acp"}
        scenarios = dataclasses.replace(
            options, labels=labels, model_binding=model_binding(name, program)
        )
        asking = dataclasses.replace(
            options,
            labels=labels,
            model_binding=model_binding(name, program, allow_shell=False),
        )

        def factory() -> ACPAgentDriver:
            return agent_driver(name, config)

        report = _joined(
            adaptertest.check_driver(
                factory, scenarios, only=[f for f in FAMILIES if f != DECISIONS]
            ),
            adaptertest.check_driver(factory, asking, only=[DECISIONS]),
        )
    path = out / f"acp-{name}.json"
    path.write_text(
        report_json.dumps(report_json.report_to_json(report, name=f"acp_driver ({name})")),
        encoding="utf-8",
    )
    print(f"{name}: {report.summary()}", file=sys.stderr)
    return path


def _joined(first: ConformanceReport, second: ConformanceReport) -> ConformanceReport:
    """One report of two runs over disjoint clauses, in the catalogue's order."""
    order = {clause.id: index for index, clause in enumerate(CLAUSES)}
    results = sorted((*first.results, *second.results), key=lambda r: order.get(r.clause, -1))
    return dataclasses.replace(
        first,
        results=tuple(results),
        duration=first.duration + second.duration,
        notes=(*first.notes, *second.notes),
    )


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
