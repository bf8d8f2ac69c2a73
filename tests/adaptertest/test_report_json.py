"""report_to_json: the document shape, its schema, the summary text."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest

import adaptertest
from adaptertest import Options
from adaptertest.clauses import CLAUSES, Mode
from adaptertest.report import ClauseResult, ClauseStatus, ConformanceReport
from adaptertest.report_json import (
    REPORT_SCHEMA,
    SCHEMA_VERSION,
    document,
    driver_to_json,
    dumps,
    report_to_json,
    validate_document,
)
from referencedriver import ReferenceConfig, new_reference_driver

HERMETIC_FAMILIES = ("DRV", "CFG", "CAP")


def full_report(**status_of: ClauseStatus) -> ConformanceReport:
    """Every clause: hermetic ones pass, live ones are skipped, unless ``status_of`` says."""
    results = []
    for c in CLAUSES:
        default = ClauseStatus.SKIPPED if c.mode is Mode.LIVE else ClauseStatus.PASSED
        status = status_of.get(c.id.replace("-", "_"), default)
        messages = () if status is ClauseStatus.PASSED else (f"{c.id}: observed something",)
        results.append(ClauseResult(c.id, status, messages, duration=0.01))
    return ConformanceReport(driver_type="synthetic", results=tuple(results), duration=1.5)


def test_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(REPORT_SCHEMA)
    assert REPORT_SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert REPORT_SCHEMA["properties"]["schema_version"] == {"const": SCHEMA_VERSION}


def test_every_status_serialises_and_validates() -> None:
    report = full_report(
        DRV_01=ClauseStatus.FAILED,
        DRV_02=ClauseStatus.XFAILED,
        DRV_03=ClauseStatus.XPASSED,
        CFG_03=ClauseStatus.SKIPPED,
    )
    doc = report_to_json(report, name="pkg:factory", producer="cli")
    validate_document(doc)
    assert doc["kit"] == {"name": "adaptertest", "version": adaptertest.__version__}
    assert doc["producer"] == "cli"
    (driver,) = doc["drivers"]
    assert driver["name"] == "pkg:factory"
    assert driver["driver_type"] == "synthetic"
    assert driver["ok"] is False
    assert driver["complete"] is True
    assert driver["level"] is None
    statuses = {c["id"]: c["status"] for c in driver["clauses"]}
    assert statuses["DRV-01"] == "failed"
    assert statuses["DRV-02"] == "xfailed"
    assert statuses["DRV-03"] == "xpassed"
    assert [c["id"] for c in driver["clauses"]] == [c.id for c in CLAUSES]
    assert sum(driver["counts"].values()) == len(CLAUSES)
    assert driver["counts"]["failed"] == 1
    first = driver["clauses"][0]
    assert first["messages"] == ["DRV-01: observed something"]
    assert (first["family"], first["mode"], first["extension"]) == ("DRV", "hermetic", False)
    con = next(c for c in driver["clauses"] if c["id"] == "CON-01")
    assert con["extension"] is True


@pytest.mark.parametrize(
    ("changes", "level"),
    [
        ({}, "core"),
        (
            {c.id.replace("-", "_"): ClauseStatus.PASSED for c in CLAUSES if c.mode is Mode.LIVE},
            "full",
        ),
        ({"LIV_01": ClauseStatus.PASSED}, "live"),
        ({"SES_04": ClauseStatus.XFAILED}, None),
        # Extension clauses count too: a failing live one keeps the level at core.
        ({"LIV_01": ClauseStatus.PASSED, "CON_01": ClauseStatus.FAILED}, "core"),
        ({"LIV_01": ClauseStatus.PASSED, "FLR_01": ClauseStatus.FAILED}, "core"),
        (
            {
                **{c.id.replace("-", "_"): ClauseStatus.PASSED for c in CLAUSES},
                "CON_01": ClauseStatus.XFAILED,
            },
            "core",
        ),
    ],
)
def test_level_reached_is_reported(changes: dict[str, ClauseStatus], level: str | None) -> None:
    driver = report_to_json(full_report(**changes))["drivers"][0]
    assert driver["level"] == level


def test_results_are_written_in_catalogue_order() -> None:
    report = full_report()
    shuffled = ConformanceReport("synthetic", tuple(reversed(report.results)))
    clauses = driver_to_json(shuffled)["clauses"]
    assert [c["id"] for c in clauses] == [c.id for c in CLAUSES]


def test_a_partial_run_is_incomplete_and_has_no_level() -> None:
    report = ConformanceReport("synthetic", (ClauseResult("DRV-01", ClauseStatus.PASSED),))
    driver = driver_to_json(report, name="TestX", nodeid="tests/test_x.py::TestX")
    assert (driver["complete"], driver["level"], driver["nodeid"]) == (
        False,
        None,
        "tests/test_x.py::TestX",
    )
    validate_document(document([driver], producer="pytest"))
    # The count is the real catalogue's, extension clauses included.
    assert report.summary() == f"1 passed; level: none (partial run: 1 of {len(CLAUSES)} clauses)"
    upstream_only = ConformanceReport(
        "synthetic",
        tuple(ClauseResult(c.id, ClauseStatus.PASSED) for c in CLAUSES if not c.extension),
    )
    assert not upstream_only.complete
    assert upstream_only.level is None


def test_summary_text_names_level_and_failing_clauses() -> None:
    live = sum(1 for c in CLAUSES if c.mode is Mode.LIVE)
    expected = f"{len(CLAUSES) - live} passed, {live} skipped; level: core"
    assert full_report().summary() == expected
    failing_extension = full_report(LIV_01=ClauseStatus.PASSED, CON_01=ClauseStatus.FAILED)
    assert failing_extension.summary().endswith("; level: core; failing: CON-01")
    failing = full_report(SES_04=ClauseStatus.FAILED, DRV_02=ClauseStatus.XPASSED)
    assert failing.summary().endswith(
        "; level: none (not every hermetic clause holds); failing: DRV-02, SES-04"
    )


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("drivers", 0, "clauses", 0, "status"), "error"),
        (("drivers", 0, "clauses", 0, "id"), "drv-1"),
        (("drivers", 0, "level"), "gold"),
        (("drivers", 0, "counts", "passed"), -1),
        (("kit", "name"), "other"),
        (("schema_version",), 2),
    ],
)
def test_schema_rejects_malformed_documents(path: tuple[Any, ...], value: object) -> None:
    doc = copy.deepcopy(report_to_json(full_report()))
    target: Any = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(jsonschema.ValidationError):
        validate_document(doc)


def test_schema_rejects_unknown_fields() -> None:
    doc = report_to_json(full_report())
    doc["drivers"][0]["clauses"][0]["verdict"] = "fine"
    with pytest.raises(jsonschema.ValidationError, match="verdict"):
        validate_document(doc)


def test_a_real_report_validates() -> None:
    only = [c.id for c in CLAUSES if c.family in HERMETIC_FAMILIES]
    report = adaptertest.check_driver(
        new_reference_driver,
        Options(config=ReferenceConfig(), expect_reject_foreign_config=True),
        only=only,
    )
    doc = report_to_json(report, name="referencedriver:new_reference_driver")
    validate_document(doc)
    driver = doc["drivers"][0]
    assert driver["driver_type"] == "reference"
    assert driver["counts"]["passed"] == len(only)
    assert [c["id"] for c in driver["clauses"]] == only


def test_dumps_is_stable_json_text() -> None:
    doc = report_to_json(full_report())
    assert dumps(doc) == dumps(copy.deepcopy(doc))
    assert dumps(doc).endswith("}\n")
