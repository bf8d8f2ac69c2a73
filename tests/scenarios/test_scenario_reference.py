"""The reference driver in its network mode passes every scenario clause on both
backends, bound to the suite's model emulator the way a driver author binds theirs."""

from __future__ import annotations

import pytest

from adaptertest import ClauseStatus, Options, check_driver
from adaptertest.clauses import CLAUSES, Mode
from adaptertest.options import Backend
from referencedriver import ReferenceDriver
from referencedriver._conformance import model_binding

SCENARIO_CLAUSES = [c.id for c in CLAUSES if c.mode is Mode.SCENARIO]


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_reference_network_mode_passes_every_scenario_clause(backend: Backend) -> None:
    options = Options(model_binding=model_binding(), backend=backend)
    report = check_driver(ReferenceDriver, options, only=SCENARIO_CLAUSES)
    assert [r.clause for r in report] == SCENARIO_CLAUSES
    failing = [r.describe() for r in report if r.status is not ClauseStatus.PASSED]
    assert not failing, "\n".join(failing)
