"""test_driver as a third-party test file uses it: items, selection, skips, failures.

Each test runs pytest in a subprocess on a user-style test file, as a driver
author's CI would.
"""

from __future__ import annotations

import pytest

from adaptertest.clauses import CLAUSES, Mode

HERMETIC_OPTIONS = """
    config=ReferenceConfig(),
    session_state=SessionState(
        resume_id="s-1", data={"cwd": "workspace-a", "workspace_id": "ws-1"}
    ),
    session_keys=("cwd", "workspace_id"),
    guard_keys=("cwd", "workspace_id"),
    expected_detected_model="reference-1",
    required_config_fields=("model", "cwd"),
    expect_reject_foreign_config=True,
    sync_skills_probe=True,
"""

USER_FILE = f"""
import adaptertest
from adaptertest import Options
from driver import SessionState
from referencedriver import ReferenceConfig, new_reference_driver

TestOnAsyncio = adaptertest.test_driver(
    new_reference_driver, Options({HERMETIC_OPTIONS}    backend="asyncio",
    )
)
TestOnTrio = adaptertest.test_driver(
    new_reference_driver, Options({HERMETIC_OPTIONS}    backend="trio",
    )
)
"""

# The reference runs no CLI, so the drift clauses (opt-in) stay off: skipped with a reason.
# Without a model binding the scenario clauses are skipped too.
DRIFT = [c.id for c in CLAUSES if c.family == "DFT"]
RUNNING = (Mode.LIVE, Mode.SCENARIO)
HERMETIC = [c.id for c in CLAUSES if c.mode not in RUNNING and c.id not in DRIFT]
LIVE = [c.id for c in CLAUSES if c.mode in RUNNING]


def test_one_item_per_clause_on_both_backends(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=USER_FILE)
    result = pytester.runpytest_subprocess("-rs", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2 * len(HERMETIC), skipped=2 * (len(LIVE) + len(DRIFT)))
    result.stdout.fnmatch_lines(["*EVT-01 skipped: live probes are off*"])
    result.stdout.fnmatch_lines(["*DFT-01 skipped: the drift probe is off*"])


def test_k_selects_one_clause_under_strict_markers(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=USER_FILE)
    result = pytester.runpytest_subprocess(
        "--strict-markers", "-k", "TestOnTrio and CAP-08", "-v", "-p", "no:cacheprovider"
    )
    result.assert_outcomes(passed=1, deselected=2 * len(CLAUSES) - 1)
    result.stdout.fnmatch_lines(["*TestOnTrio::test_clause?CAP-08? PASSED*"])


MIXED_FILE = """
import adaptertest
from adaptertest import Options
from driver import Descriptor
from referencedriver import ReferenceConfig, ReferenceDriver, new_reference_driver

class Nameless(ReferenceDriver):
    def descriptor(self) -> Descriptor:
        return super().descriptor().model_copy(update={"display_name": ""})

TestNameless = adaptertest.test_driver(lambda: Nameless(ReferenceConfig()), Options())
TestKnown = adaptertest.test_driver(
    lambda: Nameless(ReferenceConfig()),
    Options(known_failures={"DRV-01": "display name arrives in v2"}),
)
TestStale = adaptertest.test_driver(
    new_reference_driver, Options(known_failures={"DRV-01": "was broken once"})
)
TestOther = adaptertest.test_driver(
    lambda: new_reference_driver(ReferenceConfig(model="other-1")),
    Options(expected_detected_model="other-1"),
)
"""


def test_failures_known_failures_and_independent_classes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_mixed=MIXED_FILE)
    result = pytester.runpytest_subprocess(
        "-k", "DRV or CAP-05", "-v", "-rxX", "-p", "no:cacheprovider"
    )
    result.stdout.fnmatch_lines_random(
        [
            # A broken driver fails exactly its clause, with the rule and a rerun hint.
            "*TestNameless::test_clause?DRV-01? FAILED*",
            "*TestNameless::test_clause?DRV-02? PASSED*",
            "DRV-01: descriptor().display_name is empty",
            "  rule: *display_name are non-empty.",
            "  rerun alone: pytest 'test_mixed.py::TestNameless::test_clause[[]DRV-01[]]'"
            "  (or: pytest test_mixed.py -k 'TestNameless and DRV-01')",
            # A listed known failure is an xfail; a stale entry fails the run.
            "*TestKnown::test_clause?DRV-01? XFAIL*",
            "*TestStale::test_clause?DRV-01? FAILED*",
            "*XPASS(strict)*DRV-01 known failure: was broken once*",
            # Two drivers in one module keep their own options and instances.
            "*TestOther::test_clause?CAP-05? PASSED*",
            "*TestStale::test_clause?CAP-05? PASSED*",
        ]
    )
    result.assert_outcomes(passed=13, failed=2, xfailed=1, deselected=4 * (len(CLAUSES) - 4))
    # The printed hint selects that one item.
    again = pytester.runpytest_subprocess(
        "test_mixed.py", "-k", "TestNameless and DRV-01", "-p", "no:cacheprovider"
    )
    again.assert_outcomes(failed=1, deselected=4 * len(CLAUSES) - 1)
