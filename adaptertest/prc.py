"""PRC family (Python extension): nothing a scenario started outlives it (PRC-01).

Every process a run starts inherits the environment the driver gives it, and the
scenario endpoint's environment carries a marker unique to the scenario
(``ADAPTERTEST_SCENARIO_MARKER``). The marker survives ``setsid``, double forks and
re-parenting to init, so once a scenario's runs have returned, every live process
whose environment still holds it is something the run left behind: a CLI that was
never reaped, a tool command, a helper that left the CLI's process group. The scenario
engine (``adaptertest._scenarios``) reads the process table when each scenario ends,
gives processes that are going down a few seconds, calls :func:`verify_nothing_left`,
then ends whatever is left. Without ``/proc`` the table cannot be searched by
environment and the clause is skipped, saying so.
"""

from __future__ import annotations

from collections.abc import Sequence

from adaptertest._violation import Violation

__all__ = ["verify_nothing_left"]


def verify_nothing_left(scenario: str, left: Sequence[str]) -> list[Violation]:
    """PRC-01 for one scenario: ``left`` names each marked process still running."""
    if not left:
        return []
    return [
        Violation(
            "PRC-01",
            f"after the {scenario} scenario, {len(left)} process(es) started by the run "
            f"still run: {', '.join(left)} (found by the scenario marker in their "
            "environment; a driver must end everything it started, descendants that left "
            "its process group included)",
        )
    ]
