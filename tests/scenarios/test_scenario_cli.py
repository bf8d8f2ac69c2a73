"""``adaptertest check --scenarios``: the scenario clauses from the command line."""

from __future__ import annotations

import json

import pytest

from adaptertest.cli import main

REFERENCE = "referencedriver:new_reference_driver"
BINDING = "referencedriver._conformance:model_binding"


def test_scenarios_run_with_the_binding_the_flag_names(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["check", REFERENCE, "--scenarios", BINDING, "--clause", "INP-02", "--format", "json"]
    )
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    (result,) = doc["drivers"][0]["clauses"]
    assert (result["id"], result["status"]) == ("INP-02", "passed")


def test_without_the_flag_the_advice_names_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", REFERENCE, "--clause", "OUT-01", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    (result,) = doc["drivers"][0]["clauses"]
    assert result["status"] == "skipped"
    assert "pass --scenarios MODULE:BINDING to bind" in result["messages"][0]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", "--scenarios needs a model binding, and referencedriver:adaptertest_options"),
        ("referencedriver:ReferenceConfig", "cannot load the binding: TypeError"),
        ("no_such_module_xyz:binding", "cannot load the binding: ModuleNotFoundError"),
    ],
)
def test_a_binding_that_cannot_be_had_is_a_usage_error(
    value: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", REFERENCE, "--scenarios", value, "--clause", "OUT-01"]) == 2
    assert message in capsys.readouterr().err
