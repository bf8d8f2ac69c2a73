"""Reports to build matrices from: a real reference run, a changed copy, an old report."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from adaptertest import check_driver
from adaptertest.report_json import report_to_json
from referencedriver import adaptertest_options, new_reference_driver

LONG = "EVT-03: \x1b]0;owned\x07 <script>alert(1)</script> " + "x" * 6000 + " end"
"""A failure message that is long, holds markup and a terminal escape."""


def reference_document(**labels: str) -> dict[str, Any]:
    options = dataclasses.replace(adaptertest_options(), live_run=True, labels=labels)
    return report_to_json(check_driver(new_reference_driver, options), producer="api")


def changed(doc: dict[str, Any], **labels: str) -> dict[str, Any]:
    """``doc`` as a later release broke it: EVT-03 fails, SES-04 is skipped."""
    out = copy.deepcopy(doc)
    entry = out["drivers"][0]
    entry["run"]["labels"] = labels
    for clause in entry["clauses"]:
        if clause["id"] == "EVT-03":
            clause["status"] = "failed"
            clause["messages"] = [LONG, "EVT-03: a second violation"]
        if clause["id"] == "SES-04":
            clause["status"] = "skipped"
            clause["messages"] = ["SES-04 skipped: no resume here"]
    entry["level"] = None
    return out


def old_document(doc: dict[str, Any]) -> dict[str, Any]:
    """A report from before the run block, judging only the DRV family."""
    out = copy.deepcopy(doc)
    entry = out["drivers"][0]
    del entry["run"]
    entry["clauses"] = [c for c in entry["clauses"] if c["id"].startswith("DRV-")]
    entry["complete"] = False
    entry["level"] = None
    return out


@pytest.fixture(scope="session")
def reference_doc() -> dict[str, Any]:
    return reference_document(cli="ref", cli_version="1.0")


@pytest.fixture
def report_files(tmp_path: Path, reference_doc: dict[str, Any]) -> list[Path]:
    docs = [reference_doc, changed(reference_doc, cli="ref", cli_version="1.1")]
    docs.append(old_document(reference_doc))
    paths = []
    for index, doc in enumerate(docs):
        path = tmp_path / f"report-{index}.json"
        path.write_text(json.dumps(doc), "utf-8")
        paths.append(path)
    return paths
