"""test_driver as a third-party test file uses it: items, selection, skips, failures."""

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

TestReference = adaptertest.test_driver(
    new_reference_driver, Options({HERMETIC_OPTIONS}    backend=BACKEND,
    )
)
"""

HERMETIC = [c.id for c in CLAUSES if c.mode is not Mode.LIVE]
LIVE = [c.id for c in CLAUSES if c.mode is Mode.LIVE]


@pytest.fixture(params=["asyncio", "trio"])
def user_file(request: pytest.FixtureRequest, pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(test_user=USER_FILE.replace("BACKEND", repr(request.param)))
    return pytester


def test_one_item_per_clause(user_file: pytest.Pytester) -> None:
    result = user_file.runpytest("-rs", "-p", "no:cacheprovider")
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed") == len(HERMETIC)
    assert outcomes.get("skipped") == len(LIVE)
    assert "failed" not in outcomes
    result.stdout.fnmatch_lines(["*EVT-01 skipped: live probes are off*"])


def test_k_selects_one_clause(user_file: pytest.Pytester) -> None:
    result = user_file.runpytest("-k", "CAP-08", "-v", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, deselected=len(CLAUSES) - 1)
    result.stdout.fnmatch_lines(["*TestReference::test_clause?CAP-08? PASSED*"])


def test_strict_markers_accept_the_kit_marker(user_file: pytest.Pytester) -> None:
    result = user_file.runpytest("--strict-markers", "-k", "DRV", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, deselected=len(CLAUSES) - 3)


def test_a_broken_driver_fails_exactly_its_clause(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_broken="""
import adaptertest
from adaptertest import Options
from driver import Descriptor
from referencedriver import ReferenceDriver, ReferenceConfig

class Nameless(ReferenceDriver):
    def descriptor(self) -> Descriptor:
        return super().descriptor().model_copy(update={"display_name": ""})

TestNameless = adaptertest.test_driver(lambda: Nameless(ReferenceConfig()), Options())
"""
    )
    result = pytester.runpytest("-k", "DRV", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2, failed=1, deselected=len(CLAUSES) - 3)
    result.stdout.fnmatch_lines(
        ["*test_clause?DRV-01? - DRV-01: *display_name*", "*rerun alone: pytest -k DRV-01*"]
    )


def test_known_failure_is_xfail_and_stale_entry_fails(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_known="""
import adaptertest
from adaptertest import Options
from driver import Descriptor
from referencedriver import ReferenceDriver, ReferenceConfig, new_reference_driver

class Nameless(ReferenceDriver):
    def descriptor(self) -> Descriptor:
        return super().descriptor().model_copy(update={"display_name": ""})

TestKnown = adaptertest.test_driver(
    lambda: Nameless(ReferenceConfig()),
    Options(known_failures={"DRV-01": "display name arrives in v2"}),
)
TestStale = adaptertest.test_driver(
    new_reference_driver, Options(known_failures={"DRV-01": "was broken once"})
)
"""
    )
    result = pytester.runpytest("-k", "DRV-01", "-rxX", "-p", "no:cacheprovider")
    result.assert_outcomes(xfailed=1, failed=1, deselected=2 * (len(CLAUSES) - 1))
    result.stdout.fnmatch_lines(["*XPASS(strict)*DRV-01 known failure: was broken once*"])


def test_two_drivers_in_one_module_do_not_interfere(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_two="""
import adaptertest
from adaptertest import Options
from referencedriver import ReferenceConfig, new_reference_driver

TestA = adaptertest.test_driver(new_reference_driver, Options())
TestB = adaptertest.test_driver(
    lambda: new_reference_driver(ReferenceConfig(model="other-1")),
    Options(expected_detected_model="other-1"),
)
"""
    )
    result = pytester.runpytest("-k", "CAP-05 or DRV", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=8, deselected=2 * (len(CLAUSES) - 4))
