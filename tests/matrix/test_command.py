"""``adaptertest matrix`` and the report's run block it reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from adaptertest.cli import main
from adaptertest.report_json import validate_document


def test_writes_html_markdown_and_json(
    report_files: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(["matrix", *map(str, report_files), "--out", str(out), "--title", "t"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["matrix.html", "matrix.json", "matrix.md"]
    assert "3 run(s)" in capsys.readouterr().out
    assert json.loads((out / "matrix.json").read_text("utf-8"))["columns"][0]["cli"] == "ref"
    assert (out / "matrix.md").read_text("utf-8").startswith("### t\n")


def test_bad_input_exits_2_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("[]", "utf-8")
    assert main(["matrix", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert "bad.json: not an adaptertest report" in capsys.readouterr().err
    a_file = tmp_path / "file"
    a_file.write_text("", "utf-8")
    good = tmp_path / "good.json"
    good.write_text('{"drivers": [{"clauses": []}]}', "utf-8")
    assert main(["matrix", str(good), "--out", str(a_file)]) == 2
    assert "is not a folder" in capsys.readouterr().err
    assert main(["matrix", str(good)]) == 2  # --out is required
    assert "--out" in capsys.readouterr().err


def test_the_run_block_is_in_the_report_and_valid(reference_doc: dict[str, Any]) -> None:
    validate_document(reference_doc)
    run = reference_doc["drivers"][0]["run"]
    assert run["labels"] == {"cli": "ref", "cli_version": "1.0"}
    assert run["backend"] == "asyncio"
    assert run["driver_version"]
    assert run["options"]["live_run"] == "true"
    assert "config" not in run["options"]
    assert "secrets" not in run["options"]


def test_check_label_fills_the_run_block(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    argv = ["check", "referencedriver:new_reference_driver", "--clause", "DRV", "--report"]
    assert main([*argv, str(report), "--label", "cli=x", "--label", "cli_version=1=2"]) == 0
    doc = json.loads(report.read_text("utf-8"))
    validate_document(doc)
    assert doc["drivers"][0]["run"]["labels"] == {"cli": "x", "cli_version": "1=2"}


def test_check_label_without_a_name_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "referencedriver:new_reference_driver", "--label", "novalue"]) == 2
    assert "--label wants NAME=VALUE" in capsys.readouterr().err
