"""test_driver: the suite as a pytest test class, one item per clause."""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Callable
from typing import Any

import pytest

from adaptertest._details import show_details
from adaptertest._screen import screen
from adaptertest._suite import Suite
from adaptertest.clauses import CLAUSES, Clause
from adaptertest.options import Options
from adaptertest.report import ClauseResult, ClauseStatus

SUITE_ATTRIBUTE = "_adaptertest_suite"


def _param(clause: Clause, options: Options) -> Any:
    marks: list[Any] = [
        pytest.mark.adaptertest(
            clause=clause.id, family=clause.family, mode=clause.mode.value, probe=clause.probes[0]
        )
    ]
    reason = options.known_failures.get(clause.id)
    if reason is not None:
        marks.append(pytest.mark.xfail(strict=True, reason=f"{clause.id} known failure: {reason}"))
    return pytest.param(clause.id, id=clause.id, marks=marks)


def test_driver(factory: Callable[[], object], options: Options | None = None) -> type:
    """Build a pytest test class that checks ``factory``'s drivers against every clause.

    Bind it to a ``Test*`` name in a test module::

        TestMyDriver = adaptertest.test_driver(make_driver, Options(config=cfg))

    Each call builds a fresh class, so several drivers in one module never share state.
    Each probe runs once per class, on first need; ``pytest -k SES-04`` runs one clause.
    """
    opts = options or Options()
    Suite(factory, opts).close()  # validates the arguments at collection time

    class DriverConformance:
        __test__ = True
        adaptertest_factory = staticmethod(factory)
        adaptertest_options = opts

        @classmethod
        def adaptertest_suite(cls, *, show_details: bool = False) -> Suite:
            """The class's suite, built on first need (``show_details`` then turns on
            ``show_live_details``, as ``--adaptertest-show-details`` asks)."""
            suite: Suite | None = cls.__dict__.get(SUITE_ATTRIBUTE)
            if suite is None:
                run_opts = opts
                if show_details and not opts.show_live_details:
                    run_opts = dataclasses.replace(opts, show_live_details=True)
                suite = Suite(factory, run_opts)
                setattr(cls, SUITE_ATTRIBUTE, suite)
            return suite

        @classmethod
        def teardown_class(cls) -> None:
            suite: Suite | None = cls.__dict__.get(SUITE_ATTRIBUTE)
            if suite is not None:
                suite.close()

        @pytest.mark.parametrize("clause", [_param(c, opts) for c in CLAUSES])
        def test_clause(self, clause: str, request: pytest.FixtureRequest) -> None:
            suite = type(self).adaptertest_suite(show_details=show_details(request.config))
            result = suite.clause_result(clause)
            _settle(result, request.node.nodeid)

    DriverConformance.__qualname__ = DriverConformance.__name__ = "DriverConformance"
    return DriverConformance


def rerun_hint(nodeid: str, clause: str) -> str:
    """How to rerun one clause item: its node id, or ``-k`` with its class and clause."""
    path, _, rest = nodeid.partition("::")
    cls = rest.partition("::")[0]
    selector = f"{cls} and {clause}" if cls else clause
    return (
        f"pytest {shlex.quote(nodeid)}  (or: pytest {shlex.quote(path)} -k {shlex.quote(selector)})"
    )


_DETAILS = (
    "rerun with --adaptertest-show-details (or ADAPTERTEST_SHOW_DETAILS=1) to see the "
    "withheld provider text"
)


def _settle(result: ClauseResult, nodeid: str) -> None:
    """Turn one clause result into the pytest outcome of its item."""
    if result.status is ClauseStatus.SKIPPED:
        pytest.skip(screen(result.messages[0]) if result.messages else f"{result.clause} skipped")
    if result.status in (ClauseStatus.FAILED, ClauseStatus.XFAILED):
        pytest.fail(result.describe(rerun_hint(nodeid, result.clause), _DETAILS), pytrace=False)
    if result.status is ClauseStatus.XPASSED:
        pass  # the strict xfail mark turns this pass into a failure


test_driver.__test__ = False  # type: ignore[attr-defined]
