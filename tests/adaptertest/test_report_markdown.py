"""The Markdown report: rendered from the JSON document, for CI job summaries."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from adaptertest.clauses import CLAUSES, Mode
from adaptertest.cli import main
from adaptertest.report import ClauseResult, ClauseStatus, ConformanceReport
from adaptertest.report_json import document, driver_to_json, report_to_json
from adaptertest.report_markdown import (
    MAX_CELL,
    STATUS_LABEL,
    cell,
    document_to_markdown,
    report_from_entry,
)

REFERENCE = "referencedriver:new_reference_driver"
ROW = re.compile(r"^\| ([A-Z]+-\d+) \| (\S+ \w+) \| (.*) \| (.*) \|$")


def synthetic(**status_of: tuple[ClauseStatus, str]) -> ConformanceReport:
    """Every clause: hermetic ones pass, live ones are skipped, unless ``status_of`` says."""
    results = []
    for c in CLAUSES:
        default = ClauseStatus.SKIPPED if c.mode is Mode.LIVE else ClauseStatus.PASSED
        status, message = status_of.get(c.id.replace("-", "_"), (default, ""))
        messages = (f"{c.id}: {message}",) if message else ()
        results.append(ClauseResult(c.id, status, messages, duration=0.01))
    return ConformanceReport(driver_type="synthetic", results=tuple(results), duration=1.5)


def table(markdown: str) -> dict[str, tuple[str, str, str]]:
    """clause -> (status cell, title cell, detail cell), from the rendered rows."""
    rows = {}
    for line in markdown.splitlines():
        match = ROW.match(line)
        if match:
            rows[match.group(1)] = (match.group(2), match.group(3), match.group(4))
    return rows


def statuses(markdown: str) -> dict[str, str]:
    by_label = {label: status.value for status, label in STATUS_LABEL.items()}
    return {clause: by_label[row[0]] for clause, row in table(markdown).items()}


def test_every_clause_gets_a_row_with_the_status_the_json_says() -> None:
    report = synthetic(
        DRV_01=(ClauseStatus.FAILED, "display name is empty"),
        DRV_02=(ClauseStatus.XFAILED, "flaky"),
        DRV_03=(ClauseStatus.XPASSED, "listed in known_failures but passes"),
        CFG_03=(ClauseStatus.SKIPPED, "skipped: no foreign config"),
    )
    doc = report_to_json(report, name="pkg:make", producer="cli")
    text = document_to_markdown(doc, title="adaptertest check pkg:make")
    assert text.startswith("### adaptertest check pkg:make\n")
    rows = table(text)
    assert list(rows) == [c.id for c in CLAUSES], "one row per clause, in catalogue order"
    assert statuses(text) == {c["id"]: c["status"] for c in doc["drivers"][0]["clauses"]}
    assert rows["DRV-01"][2] == "display name is empty"
    assert rows["DRV-01"][1] == cell(CLAUSES[0].title)
    assert "**Level: none (not every hermetic clause holds)**" in text
    assert "**Failing:** DRV-01, DRV-03" in text


def test_the_level_met_heads_the_section() -> None:
    doc = report_to_json(synthetic(), producer="api")
    assert "**Level: core** · driver synthetic · " in document_to_markdown(doc)
    partial = ConformanceReport("synthetic", synthetic().results[:3])
    text = document_to_markdown(report_to_json(partial, producer="api"))
    assert f"**Level: none (partial run: 3 of {len(CLAUSES)} clauses)**" in text


def test_failures_are_spelled_out_with_rule_and_rerun_hint() -> None:
    report = synthetic(SES_04=(ClauseStatus.FAILED, "resume lost the cwd\nsecond line"))
    text = document_to_markdown(report_to_json(report, producer="api"))
    assert "<details><summary>SES-04 failed: resume lost the cwd</summary>" in text
    block = text.split("<summary>SES-04 failed", 1)[1]
    assert "SES-04: resume lost the cwd\nsecond line" in block
    assert "rule: " in block
    assert "rerun alone: " in block
    assert "<summary>DRV-01" not in text, "passing clauses get no details"


def test_cells_cannot_break_the_table_or_inject_markup() -> None:
    hostile = "a | b <script>alert(1)</script> `code` *bold* _it_ [x](y) \\ ~s~"
    report = synthetic(DRV_01=(ClauseStatus.FAILED, hostile + "\n" + "x" * 500))
    text = document_to_markdown(report_to_json(report, producer="api"))
    (row,) = [line for line in text.splitlines() if line.startswith("| DRV-01 |")]
    assert len(re.findall(r"(?<!\\)\|", row)) == 5, "four columns, no stray separator"
    outside_code = re.sub(r"```text\n.*?\n```", "", text, flags=re.DOTALL)
    assert "<script>" not in outside_code, "code blocks show it literally; nothing else may"
    assert "&lt;script&gt;" in row
    for special in "`*_[]~":
        assert f"\\{special}" in row
    summary = text.split("<summary>", 1)[1].split("</summary>", 1)[0]
    assert "\\" not in summary.replace("\\ ~s~", ""), "HTML context: no Markdown escapes"
    assert len(cell("y" * 1000)) == MAX_CELL


def test_a_fence_inside_a_message_cannot_close_the_details_block() -> None:
    report = synthetic(DRV_01=(ClauseStatus.FAILED, "output was ```json\n{}\n````"))
    text = document_to_markdown(report_to_json(report, producer="api"))
    assert "`````text\nDRV-01: output was ```json" in text
    assert text.count("`````") == 2


def test_several_drivers_and_none() -> None:
    entries = [
        driver_to_json(synthetic(), name="TestA", nodeid="t.py::TestA"),
        driver_to_json(synthetic(), name="TestB", nodeid="t.py::TestB"),
    ]
    text = document_to_markdown(document(entries, producer="pytest"), title="ignored")
    assert re.findall(r"^### (.*)$", text, re.MULTILINE) == [
        "adaptertest: t.py::TestA",
        "adaptertest: t.py::TestB",
    ]
    assert "No driver was checked" in document_to_markdown(document([], producer="pytest"))


def test_an_entry_reads_back_into_the_same_report() -> None:
    report = synthetic(DRV_01=(ClauseStatus.FAILED, "x"))
    back = report_from_entry(driver_to_json(report))
    assert back.summary() == report.summary()
    assert back.level == report.level
    assert [r.status for r in back] == [r.status for r in report]


def test_check_format_markdown_matches_the_json_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report_path = tmp_path / "r.json"
    code = main(
        [
            "check",
            REFERENCE,
            "--clause",
            "DRV,CFG",
            "--format",
            "markdown",
            "--report",
            str(report_path),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith(f"### adaptertest check {cell(REFERENCE)}\n")
    doc: dict[str, Any] = json.loads(report_path.read_text())
    assert statuses(out) == {c["id"]: c["status"] for c in doc["drivers"][0]["clauses"]}
    assert "partial run" in out
