"""The pytest plugin: inert without kit items; JUnit properties, summary, JSON report, xdist."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import hypothesis  # noqa: F401 - see below
import pytest

import adaptertest._pytest  # noqa: F401
import referencedriver  # noqa: F401
from adaptertest.clauses import CLAUSE_BY_ID
from adaptertest.report_json import validate_document
from adaptertest.report_markdown import STATUS_LABEL

# The imports above keep one copy of the kit, the SPI and hypothesis loaded: pytester's
# in-process runs drop modules first imported inside a run, so a second run would mix two
# copies of driver.Descriptor (and import hypothesis again, a second each time).

SUBSET = "DRV or CFG or CAP"
SUBSET_SIZE = sum(1 for c in CLAUSE_BY_ID.values() if c.family in ("DRV", "CFG", "CAP"))

USER_FILE = """
import adaptertest
from adaptertest import Options
from driver import Descriptor
from referencedriver import ReferenceConfig, ReferenceDriver, new_reference_driver

class Nameless(ReferenceDriver):
    def descriptor(self) -> Descriptor:
        return super().descriptor().model_copy(update={"display_name": ""})

HERMETIC = dict(config=ReferenceConfig(), expect_reject_foreign_config=True)

TestReference = adaptertest.test_driver(new_reference_driver, Options(**HERMETIC))
TestNameless = adaptertest.test_driver(lambda: Nameless(ReferenceConfig()), Options(**HERMETIC))
TestKnown = adaptertest.test_driver(
    lambda: Nameless(ReferenceConfig()),
    Options(known_failures={"DRV-01": "display name lands in v2", "DRV-02": "flaky once"},
            **HERMETIC),
)
"""

PLAIN_FILE = """
import pytest

def test_plain():
    assert 1 + 1 == 2

@pytest.mark.skip(reason="not today")
def test_skipped():
    pass
"""


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:cacheprovider", "-W", "error", *args)


def load_report(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text())
    validate_document(doc)
    return doc


def statuses(doc: dict[str, Any]) -> dict[str, dict[str, str]]:
    return {d["name"]: {c["id"]: c["status"] for c in d["clauses"]} for d in doc["drivers"]}


def test_inert_without_kit_items(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain=PLAIN_FILE)
    result = run(pytester, "--junitxml=junit.xml", "-rA")
    result.assert_outcomes(passed=1, skipped=1)
    assert "adaptertest" not in result.stdout.str()
    assert ET.parse(pytester.path / "junit.xml").getroot().find(".//property") is None


def test_an_asked_for_report_without_kit_items_lists_no_driver(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain=PLAIN_FILE)
    result = run(pytester, "--adaptertest-report=out/report.json")
    result.assert_outcomes(passed=1, skipped=1)
    assert load_report(pytester.path / "out" / "report.json")["drivers"] == []
    assert "adaptertest" not in result.stdout.str()


def test_marker_is_registered_for_strict_markers(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_marked="""
import pytest

@pytest.mark.adaptertest(clause="DRV-01", family="DRV", mode="hermetic", probe="descriptor")
def test_tagged():
    pass
"""
    )
    run(pytester, "--strict-markers").assert_outcomes(passed=1)


def test_summary_and_json_report(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=USER_FILE)
    result = run(pytester, "-k", SUBSET, "--adaptertest-report=report.json")
    result.assert_outcomes(
        passed=3 * SUBSET_SIZE - 3,
        failed=2,
        xfailed=1,
        deselected=3 * (len(CLAUSE_BY_ID) - SUBSET_SIZE),
    )
    partial = f"level: none (partial run: {SUBSET_SIZE} of {len(CLAUSE_BY_ID)} clauses)"
    result.stdout.fnmatch_lines(
        [
            f"adaptertest: TestReference (reference): {SUBSET_SIZE} passed; {partial}",
            f"adaptertest: TestNameless (reference): {SUBSET_SIZE - 1} passed, 1 failed; "
            f"{partial}; failing: DRV-01",
            f"adaptertest: TestKnown (reference): {SUBSET_SIZE - 2} passed, 1 xfailed, "
            f"1 xpassed; {partial}; failing: DRV-02",
            "adaptertest: report written to *report.json",
        ]
    )
    doc = load_report(pytester.path / "report.json")
    assert doc["producer"] == "pytest"
    assert [d["nodeid"] for d in doc["drivers"]] == [
        "test_user.py::TestReference",
        "test_user.py::TestNameless",
        "test_user.py::TestKnown",
    ]
    found = statuses(doc)
    assert set(found["TestReference"].values()) == {"passed"}
    assert found["TestNameless"]["DRV-01"] == "failed"
    assert (found["TestKnown"]["DRV-01"], found["TestKnown"]["DRV-02"]) == ("xfailed", "xpassed")
    by_id = {c["id"]: c for c in doc["drivers"][2]["clauses"]}
    assert by_id["DRV-01"]["messages"] == ["DRV-01: descriptor().display_name is empty"]
    assert by_id["DRV-01"]["notes"] == ["known failure: display name lands in v2"]
    assert by_id["DRV-02"]["messages"][0].startswith("DRV-02: listed in Options(known_failures")
    assert all(d["driver_type"] == "reference" and not d["complete"] for d in doc["drivers"])


def test_junit_properties_without_warnings(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=USER_FILE)
    result = run(pytester, "-k", "TestReference and (DRV or CFG-03)", "--junitxml=junit.xml")
    result.assert_outcomes(passed=4, deselected=3 * len(CLAUSE_BY_ID) - 4)
    cases = ET.parse(pytester.path / "junit.xml").getroot().findall(".//testcase")
    assert len(cases) == 4
    for case in cases:
        clause = re.fullmatch(r"test_clause\[(.+)\]", case.attrib["name"])
        assert clause is not None
        info = CLAUSE_BY_ID[clause.group(1)]
        props = {p.attrib["name"]: p.attrib["value"] for p in case.iter("property")}
        assert props == {"clause": info.id, "family": info.family, "mode": info.mode.value}


def test_setup_errors_and_skips_are_reported_per_clause(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
import pytest

@pytest.fixture(autouse=True)
def broken_environment(request):
    if request.node.name == "test_clause[DRV-02]":
        raise RuntimeError("no sandbox available")
    if request.node.name == "test_clause[DRV-03]":
        pytest.skip("no display on this runner")
"""
    )
    pytester.makepyfile(test_user=USER_FILE)
    result = run(pytester, "-k", "TestReference and DRV", "--adaptertest-report=r.json")
    result.assert_outcomes(passed=1, errors=1, skipped=1, deselected=3 * len(CLAUSE_BY_ID) - 3)
    (driver,) = load_report(pytester.path / "r.json")["drivers"]
    found = {c["id"]: (c["status"], c["messages"]) for c in driver["clauses"]}
    assert found["DRV-02"] == ("failed", ["DRV-02: in setup: RuntimeError: no sandbox available"])
    assert found["DRV-03"] == ("skipped", ["DRV-03: no display on this runner"])


def test_xdist_gathers_results_on_the_controller(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=USER_FILE)
    args = ("-p", "no:cacheprovider", "-k", "DRV", "--adaptertest-report=r.json")
    serial = pytester.runpytest(*args)
    serial_doc = load_report(pytester.path / "r.json")
    # hypothesis's own plugin is not needed here and costs each process a second to load.
    parallel = pytester.runpytest_subprocess("-n", "2", "-p", "no:hypothesispytest", *args)
    parallel.assert_outcomes(passed=6, failed=2, xfailed=1)
    parallel.stdout.fnmatch_lines(
        ["adaptertest: TestKnown (reference): 1 passed, 1 xfailed, 1 xpassed; *"]
    )
    parallel_doc = load_report(pytester.path / "r.json")
    assert statuses(parallel_doc) == statuses(serial_doc)
    serial.assert_outcomes(passed=6, failed=2, xfailed=1, deselected=3 * (len(CLAUSE_BY_ID) - 3))


def markdown_statuses(section: str) -> dict[str, str]:
    """clause -> status, read back from the rows of one Markdown section."""
    by_label = {label: status.value for status, label in STATUS_LABEL.items()}
    rows = re.findall(r"^\| ([A-Z]+-\d+) \| ([^|]+) \|", section, re.MULTILINE)
    return {clause: by_label[label.strip()] for clause, label in rows}


def test_markdown_is_appended_for_a_job_summary_and_agrees_with_the_json(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_user=USER_FILE)
    summary = pytester.path / "ci" / "summary.md"
    summary.parent.mkdir()
    summary.write_text("# earlier step")  # no final newline: the report starts a new block
    args = ("-k", "DRV", "--adaptertest-report=r.json", f"--adaptertest-markdown={summary}")
    result = run(pytester, *args)
    result.assert_outcomes(passed=6, failed=2, xfailed=1, deselected=3 * (len(CLAUSE_BY_ID) - 3))
    result.stdout.fnmatch_lines(["adaptertest: report written to *summary.md"])
    text = summary.read_text()
    assert text.startswith("# earlier step\n\n### adaptertest: test\\_user.py::TestReference\n")
    sections = text.split("\n### ")[1:]
    assert [s.splitlines()[0] for s in sections] == [
        f"adaptertest: test\\_user.py::{name}"
        for name in ("TestReference", "TestNameless", "TestKnown")
    ]
    doc = load_report(pytester.path / "r.json")
    for section, entry in zip(sections, doc["drivers"], strict=True):
        assert markdown_statuses(section) == {c["id"]: c["status"] for c in entry["clauses"]}
        assert f"**Level: none (partial run: 3 of {len(CLAUSE_BY_ID)} clauses)**" in section
    assert "<summary>DRV-01 failed: descriptor().display_name is empty</summary>" in text
    assert "<summary>DRV-02 xpassed: " in text

    run(pytester, *args)
    assert summary.read_text().count("### adaptertest: ") == 6, "appended, never overwritten"


def test_an_unwritable_markdown_file_is_reported(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=USER_FILE)
    (pytester.path / "taken").write_text("a file, not a folder")
    result = run(pytester, "-k", "TestReference and DRV-01", "--adaptertest-markdown=taken/x.md")
    result.assert_outcomes(passed=1, deselected=3 * len(CLAUSE_BY_ID) - 1)
    result.stdout.fnmatch_lines(["adaptertest: cannot write *taken/x.md*"])


LABELLED_FILE = """
import adaptertest
from adaptertest import Options
from referencedriver import ReferenceConfig, new_reference_driver

TestLabelled = adaptertest.test_driver(
    new_reference_driver,
    Options(config=ReferenceConfig(), labels={"cli": "ref", "variant": "from-the-class"}),
)
"""


def test_labels_from_the_ini_file_and_the_command_line(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_user=LABELLED_FILE)
    pytester.makeini("[pytest]\nadaptertest_labels =\n    host=ci\n    variant=from-the-ini\n")
    result = run(
        pytester,
        "-k",
        "DRV",
        "--adaptertest-report=report.json",
        "--adaptertest-label",
        "cli_version=1.2.3",
        "--adaptertest-label=host=laptop",
    )
    result.assert_outcomes(passed=sum(1 for c in CLAUSE_BY_ID.values() if c.family == "DRV"))
    (entry,) = load_report(pytester.path / "report.json")["drivers"]
    assert entry["run"]["labels"] == {
        "cli": "ref",
        "variant": "from-the-class",  # the class's own label wins over the ini file
        "host": "laptop",  # the command line wins over both
        "cli_version": "1.2.3",
    }


def test_a_label_that_is_not_name_equals_value_stops_the_run(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain=PLAIN_FILE)
    result = run(pytester, "--adaptertest-label", "no-equals-sign")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--adaptertest-label wants NAME=VALUE*'no-equals-sign'*"])
