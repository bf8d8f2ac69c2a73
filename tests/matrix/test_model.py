"""The matrix model, Markdown and JSON summary: what each renderer is built from."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from adaptertest.clauses import CLAUSES
from adaptertest.matrix import MatrixError, build, load, read_report, render_html, render_markdown
from adaptertest.matrix import summary as matrix_summary


def test_rows_follow_the_catalogue_and_columns_the_reports(report_files: list[Path]) -> None:
    matrix = load(report_files)
    assert [r.clause for r in matrix.rows] == [c.id for c in CLAUSES]
    assert len(matrix.columns) == 3
    first, second, old = matrix.columns
    assert (first.cli, first.cli_version, second.cli_version) == ("ref", "1.0", "1.1")
    assert first.backend == "asyncio"
    assert first.started_at.endswith("Z")
    assert first.driver_version == second.driver_version
    assert first.driver_version
    assert first.level == "full"
    assert second.level is None
    assert (old.backend, old.cli, old.started_at) == ("", "", "")  # older reports still read


def test_cells_and_differing_rows(report_files: list[Path]) -> None:
    matrix = load(report_files)
    by_clause = {r.clause: i for i, r in enumerate(matrix.rows)}
    evt03 = matrix.cells[by_clause["EVT-03"]]
    assert [c.status for c in evt03] == ["passed", "failed", "absent"]
    assert evt03[1].headline.startswith("EVT-03: \x1b]0;owned")
    assert "a second violation" in evt03[1].message
    # A skipped or absent verdict is no difference from a judged one by default: only
    # EVT-03, passed in one run and failed in another, differs.
    assert matrix.differing == ("EVT-03",)
    # Counted (the old report judged only DRV, the changed one skipped SES-04), every row
    # but DRV's differs.
    assert "DRV-01" not in matrix.differing_with_skips
    assert {"EVT-03", "SES-04", "LIV-01"} <= set(matrix.differing_with_skips)


def test_diff_of_two_columns_lists_what_changed(report_files: list[Path]) -> None:
    matrix = load(report_files)
    changed = {(row.clause, a.status, b.status) for row, a, b in matrix.diff(0, 1)}
    assert changed == {("EVT-03", "passed", "failed")}
    counted = {(row.clause, a.status, b.status) for row, a, b in matrix.diff(0, 1, skips=True)}
    assert counted == {("EVT-03", "passed", "failed"), ("SES-04", "passed", "skipped")}
    assert matrix.diff(1, 1) == []
    assert matrix.diff(1, 1, skips=True) == []
    with pytest.raises(IndexError, match="column b=7"):
        matrix.diff(0, 7)


def test_families_group_rows_in_catalogue_order(report_files: list[Path]) -> None:
    families = [name for name, _ in load(report_files).families()]
    expected = list(dict.fromkeys(c.family for c in CLAUSES))
    assert families == expected


def test_unknown_clause_ids_get_rows_of_their_own(report_files: list[Path]) -> None:
    entries = read_report(report_files[0])
    entry = dict(entries[0])
    entry["clauses"] = [*entry["clauses"], {"id": "ZZZ-09", "status": "failed", "messages": []}]
    matrix = build([entry])
    assert matrix.rows[-1].clause == "ZZZ-09"
    assert matrix.cells[-1][0].status == "failed"


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("{not json", "not a JSON report"),
        ('{"kit": {}}', "no 'drivers' list"),
        ('{"drivers": [{"name": "x"}]}', "drivers\\[0\\] has no 'clauses' list"),
        ('{"drivers": [{"clauses": [{"status": "passed"}]}]}', "has no 'id'"),
        ('{"drivers": [{"clauses": [{"id": "DRV-01", "status": "great"}]}]}', "unknown status"),
    ],
)
def test_bad_reports_name_the_file_and_the_problem(tmp_path: Path, text: str, error: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text, "utf-8")
    with pytest.raises(MatrixError, match=error) as caught:
        load([path])
    assert str(path) in str(caught.value)


def test_no_reports_or_no_runs_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(MatrixError, match="no reports"):
        load([])
    path = tmp_path / "empty.json"
    path.write_text('{"drivers": []}', "utf-8")
    with pytest.raises(MatrixError, match="no runs"):
        load([path])
    with pytest.raises(MatrixError, match="cannot read"):
        load([tmp_path / "missing.json"])


def test_summary_is_json_with_every_row(report_files: list[Path]) -> None:
    matrix = load(report_files)
    doc = json.loads(json.dumps(matrix_summary(matrix)))
    assert len(doc["rows"]) == len(matrix.rows)
    assert len(doc["columns"]) == 3
    row = next(r for r in doc["rows"] if r["clause"] == "EVT-03")
    assert row["statuses"] == ["passed", "failed", "absent"]
    assert row["differs"] is True
    assert doc["differing"] == list(matrix.differing)
    assert doc["columns"][1]["labels"] == {"cli": "ref", "cli_version": "1.1"}


def test_markdown_has_a_level_row_every_clause_and_the_failures(report_files: list[Path]) -> None:
    matrix = load(report_files)
    text = render_markdown(matrix, title="nightly")
    assert text.startswith("### nightly\n")
    assert "| **level** | **full** | **none** | **none** |" in text
    assert sum(
        1 for line in text.splitlines() if line.startswith("| ") and "-" in line[2:9]
    ) >= len(matrix.rows)
    assert "\x1b" not in text
    assert "\\x1b" in text
    assert "<script>" not in text
    differing = render_markdown(matrix, only_differing=True)
    assert "| DRV-01 " not in differing
    assert "| EVT-03 " in differing


def test_html_is_self_contained_and_escapes_every_text(report_files: list[Path]) -> None:
    page = render_html(load(report_files), title="a <b>title</b>")
    assert "<title>a &lt;b&gt;title&lt;/b&gt;</title>" in page
    assert "<script>alert(1)</script>" not in page
    assert "\x1b" not in page
    assert "\x07" not in page
    # Nothing is fetched when the page is viewed.
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", page)
    assert "@import" not in page
    assert "url(" not in page
    # The data block cannot be ended early by a message.
    data = page.split('id="matrix-data">', 1)[1].split("</script>", 1)[0]
    assert len(json.loads(data)["rows"]) == len(CLAUSES)


def test_secret_environment_values_never_reach_the_page_or_table(
    report_files: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A report written elsewhere may quote a value that is a secret here."""
    canary = "sk-canary-7f3a9c"
    doc = json.loads(report_files[1].read_text("utf-8"))
    doc["drivers"][0]["clauses"][0]["messages"] = [f"DRV-01: key was {canary}"]
    doc["drivers"][0]["clauses"][0]["status"] = "failed"
    report_files[1].write_text(json.dumps(doc), "utf-8")
    monkeypatch.setenv("ACME_API_KEY", canary)
    matrix = load(report_files)
    for text in (render_html(matrix), render_markdown(matrix)):
        assert canary not in text
        assert "secret withheld" in text


def test_heads_carry_what_tells_the_runs_apart(
    tmp_path: Path, reference_doc: dict[str, Any]
) -> None:
    """Four reports of one driver: the heads differ by their labels, test class and file,
    in the HTML page, the Markdown and the JSON summary alike."""
    paths = []
    for index, (nodeid, labels) in enumerate(
        [
            ("tests/test_acme.py::TestAcme", {}),
            ("tests/test_acme.py::TestAcmeOnTrio", {}),
            ("tests/test_acme.py::TestAcme", {"variant": "nightly"}),
            ("tests/test_acme.py::TestAcme", {}),
        ]
    ):
        doc = copy.deepcopy(reference_doc)
        doc["drivers"][0]["nodeid"] = nodeid
        doc["drivers"][0]["run"]["labels"] = {"cli": "ref", "cli_version": "1.0", **labels}
        path = tmp_path / f"run-{index}.json"
        path.write_text(json.dumps(doc), "utf-8")
        paths.append(path)
    matrix = load(paths)
    heads = [matrix.head_facts(j) for j in range(4)]
    assert heads[0] == ["class TestAcme", "file run-0.json"]
    assert heads[1] == ["class TestAcmeOnTrio", "file run-1.json"]
    assert heads[2] == ["variant=nightly", "class TestAcme", "file run-2.json"]
    assert len({tuple(h) for h in heads}) == 4
    page = render_html(matrix)
    for fact in ("variant=nightly", "class TestAcmeOnTrio", "file run-3.json"):
        assert f'<div class="fact">{fact}</div>' in page
    markdown = render_markdown(matrix).splitlines()
    table_head = next(line for line in markdown if line.startswith("| clause | "))
    assert "variant=nightly" in table_head
    assert "file run-3.json" in table_head
    summary = matrix_summary(matrix)
    assert summary["columns"][2]["head"][2:] == heads[2]
    # One report file, one class: nothing to tell apart, nothing added.
    single = load(paths[:1])
    assert single.head_facts(0) == []
