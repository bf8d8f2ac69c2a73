"""The kill matrix: every clause catches the bug it is about, and nothing else does.

Each mutant in ``mutants.MUTANTS`` runs through the whole suite (every clause, not
``only=``); the clauses that fail must be exactly the mutant's clause plus its
documented extras. The reference driver and the legal variants the mutants build on
must pass with every option switched on, so a kill is never a false alarm.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mutants import (
    BASELINE,
    CONTROL_MODEL,
    FULL_OPTIONS,
    MUTANTS,
    NO_CLI_SKIP,
    DriftBase,
    Mutant,
    NoResumeReference,
    ObservingReference,
    Rewriting,
    clause_mutant_map,
    drift_options,
    mutant_table_markdown,
)

from adaptertest import CLAUSES, ClauseStatus, ConformanceReport, check_driver
from adaptertest.clauses import Mode
from adaptertest.dft import DRIFT_CLAUSES
from adaptertest.options import Backend, Options
from referencedriver import ReferenceDriver
from referencedriver._conformance import model_binding as reference_binding

DOC = Path(__file__).resolve().parents[2] / "docs" / "mutants.md"


def _failed(report: ConformanceReport) -> set[str]:
    return {r.clause for r in report if r.status is ClauseStatus.FAILED}


def _explain(report: ConformanceReport, wanted: frozenset[str]) -> str:
    """What failed, what was expected, and the target clause's own verdict."""
    lines = [f"expected exactly {sorted(wanted)} to fail, got {sorted(_failed(report))}"]
    lines += [r.describe() for r in report if r.status is ClauseStatus.FAILED]
    lines += [
        f"{r.clause} is {r.status.value}: {'; '.join(r.messages)}"
        for r in report
        if r.clause in wanted and r.status is not ClauseStatus.FAILED
    ]
    return "\n".join(lines)


def _cases() -> Iterator[Any]:
    for mutant in MUTANTS:
        marks = (
            [pytest.mark.xfail(strict=True, reason=f"suite bug: {mutant.suite_bug}")]
            if mutant.suite_bug
            else []
        )
        yield pytest.param(mutant, id=f"{mutant.clause}-{mutant.name}", marks=marks)


@pytest.mark.parametrize("mutant", list(_cases()))
def test_mutant_fails_its_clause_and_nothing_else(mutant: Mutant) -> None:
    with mutant.suite_patch():
        report = check_driver(mutant.make, mutant.options)
    assert _failed(report) == mutant.expected_failures, _explain(report, mutant.expected_failures)
    messages = " ".join(report.result(mutant.clause).messages)
    unnamed = sorted(name for name in mutant.names if f"broke {name} (" not in messages)
    assert not unnamed, f"{mutant.clause}'s failure does not name {unnamed}: {messages}"


def test_every_clause_has_a_mutant() -> None:
    targeted = {m.clause for m in MUTANTS}
    uncovered = [c.id for c in CLAUSES if c.id not in targeted]
    assert not uncovered, f"clauses without a mutant: {', '.join(uncovered)}"


def test_extra_failures_are_explained() -> None:
    undocumented = [m.name for m in MUTANTS if m.also_fails and not m.why_also.strip()]
    assert not undocumented, f"mutants with unexplained also_fails: {undocumented}"


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_reference_passes_every_clause_with_every_option(backend: Backend) -> None:
    """Every clause passes, but the drift clauses: the reference runs no CLI, so it skips
    them with the reason that says so. The scenario clauses pass in a second run, bound
    to the reference's network mode (FULL_OPTIONS has no binding: see _TUNING)."""
    options = dataclasses.replace(FULL_OPTIONS, backend=backend)
    report = check_driver(lambda: ReferenceDriver(model=CONTROL_MODEL), options)
    not_passed = {r.clause: r.status.value for r in report if r.status is not ClauseStatus.PASSED}
    drift = {r.clause: r.messages for r in report if r.clause in DRIFT_CLAUSES}
    for clause, messages in drift.items():
        assert not_passed.pop(clause) == "skipped"
        assert NO_CLI_SKIP in messages[0], messages
    scenario = [c.id for c in CLAUSES if c.mode is Mode.SCENARIO]
    for clause in scenario:
        assert not_passed.pop(clause) == "skipped"
        assert "Options(model_binding=ModelBinding(" in report.result(clause).messages[0]
    assert not not_passed, "\n".join(
        r.describe() for r in report if r.status is not ClauseStatus.PASSED
    )
    assert len(report.results) == len(CLAUSES)
    assert set(drift) == set(DRIFT_CLAUSES)
    bound = dataclasses.replace(options, model_binding=reference_binding())
    scenarios = check_driver(ReferenceDriver, bound, only=scenario)
    failing = [r.describe() for r in scenarios if r.status is not ClauseStatus.PASSED]
    assert not failing, "\n".join(failing)
    assert [r.clause for r in scenarios] == scenario


# Options that tune a run rather than switch a check on. live_expect_failure turns the
# expectation around (the run must fail), which the succeeding reference cannot meet.
# model_binding: with a binding the hitl probe also runs its decisions through it, and the
# reference's network mode makes no human decisions, so FULL_OPTIONS leaves it off and the
# positive control judges the scenario clauses in a run of their own, bound.
_TUNING = frozenset(
    {"live_prompt", "live_run_timeout", "max_examples", "live_expect_failure", "model_binding"}
)


def test_full_options_switch_on_everything_the_mutants_use() -> None:
    missing = sorted(
        {
            f"{f.name} (used by {m.name})"
            for m in MUTANTS
            for f in dataclasses.fields(Options)
            if f.name not in _TUNING
            and getattr(m.options, f.name) != getattr(BASELINE, f.name)
            and getattr(FULL_OPTIONS, f.name) == getattr(BASELINE, f.name)
        }
    )
    assert not missing, f"FULL_OPTIONS leaves off: {', '.join(missing)}"


@pytest.mark.parametrize(
    "variant",
    [Rewriting, ObservingReference, NoResumeReference],
    ids=lambda v: v.__name__,
)
def test_legal_variants_fail_nothing(variant: Callable[..., object]) -> None:
    """The bases the mutants build on are clean, so each kill is the mutation's doing."""
    report = check_driver(lambda: variant(model=CONTROL_MODEL), FULL_OPTIONS)
    assert not _failed(report), _explain(report, frozenset())


def test_drift_base_passes_every_clause() -> None:
    """The Claude example driver the drift mutants build on passes the whole suite with
    the drift probe on, on every recording the mutants use."""
    options = drift_options(DriftBase, "success.jsonl", "tool_use.jsonl")
    report = check_driver(DriftBase, options)
    assert not _failed(report), _explain(report, frozenset())
    assert {r.clause for r in report if r.status is ClauseStatus.PASSED} >= set(DRIFT_CLAUSES)


def test_mutant_table_is_current(capsys: pytest.CaptureFixture[str]) -> None:
    with capsys.disabled():
        print(f"\nclause -> mutant map ({len(MUTANTS)} mutants)\n{clause_mutant_map()}")
    assert DOC.read_text(encoding="utf-8") == mutant_table_markdown(), (
        "docs/mutants.md is stale: regenerate it with mutants.mutant_table_markdown()"
    )
