"""Units of the cross-process check (adaptertest._fresh) and of received values (RCV)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from adaptertest import Options, check_driver
from adaptertest._fresh import derive_factory_ref, fresh_hash_seeds, unavailable_reason
from adaptertest.options import OptionsError
from adaptertest.rcv import changed_path, shared_objects, snapshot, verify_returned
from driver import Checkpoint, Response, SessionState
from referencedriver import ReferenceDriver, new_reference_driver

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_a_module_level_factory_is_named_by_module_and_qualname() -> None:
    assert derive_factory_ref(new_reference_driver) == (
        f"{new_reference_driver.__module__}:new_reference_driver"
    )
    assert derive_factory_ref(ReferenceDriver) == f"{ReferenceDriver.__module__}:ReferenceDriver"


def test_a_lambda_or_a_local_cannot_be_named() -> None:
    def local() -> ReferenceDriver:
        return ReferenceDriver()

    assert derive_factory_ref(lambda: ReferenceDriver()) is None
    assert derive_factory_ref(local) is None
    assert "a lambda" in unavailable_reason(lambda: None)
    assert "a local function" in unavailable_reason(local)
    assert 'Options(factory_ref="yourpkg.module:new_driver")' in unavailable_reason(local)


def test_the_two_fresh_seeds_are_fixed_and_differ_from_this_one() -> None:
    assert fresh_hash_seeds({"PYTHONHASHSEED": "7"}) == ("1", "2")
    assert fresh_hash_seeds({"PYTHONHASHSEED": "1"}) == ("2", "3")
    assert fresh_hash_seeds({"PYTHONHASHSEED": "2"}) == ("1", "3")
    assert fresh_hash_seeds({"PYTHONHASHSEED": "random"}) == ("1", "2")
    assert fresh_hash_seeds({}) == ("1", "2")


@pytest.mark.parametrize("bad", ["module", ":attr", "module:", "a b:c", 3])
def test_factory_ref_must_name_module_and_attr(bad: object) -> None:
    with pytest.raises(OptionsError, match=r"Options\.factory_ref must be"):
        Options(factory_ref=bad)  # type: ignore[arg-type]


def test_a_lambda_factory_gets_the_skip_note_and_still_passes() -> None:
    report = check_driver(lambda: ReferenceDriver(), Options(), only=["SES-05", "CAP-01"])
    for result in report:
        assert result.status.value == "passed"
        assert any("factory_ref=" in note for note in result.notes), result.notes


def test_an_explicit_factory_ref_that_does_not_import_is_a_note() -> None:
    options = Options(factory_ref="no_such_module_here:factory")
    report = check_driver(ReferenceDriver, options, only=["SES-05"])
    [result] = report.results
    assert result.status.value == "passed"
    assert any("no_such_module_here" in note for note in result.notes), result.notes


def test_changed_path_names_the_first_difference() -> None:
    then = Response(
        output="a", checkpoint=Checkpoint(valid=True, state=SessionState(resume_id="1"))
    )
    now = then.model_copy(deep=True)
    assert changed_path(then, now) is None
    assert now.checkpoint is not None
    assert now.checkpoint.state is not None
    now.checkpoint.state.resume_id = "2"
    assert changed_path(then, now) == ".checkpoint.state.resume_id"
    assert verify_returned(now, snapshot(then))[0].clause == "RCV-02"


def test_shared_mutable_objects_between_responses_are_found() -> None:
    state = SessionState(resume_id="r")
    first = Response(checkpoint=Checkpoint(valid=True, state=state))
    second = Response(checkpoint=Checkpoint(valid=True, state=state))
    [violation] = shared_objects({1: first, 2: second})
    assert "run 1 and run 2" in violation.message
    assert "at .checkpoint" in violation.message
    assert shared_objects({1: first, 2: snapshot(second)}) == []


@pytest.mark.parametrize("page", ["received-values.md", "python-traps.md"])
def test_the_pages_snippets_run(page: str) -> None:
    doc = DOCS / page
    blocks = re.findall(r"```python\n(.*?)```", doc.read_text(encoding="utf-8"), re.S)
    assert blocks
    for block in blocks:
        exec(compile(block, str(doc), "exec"), {})
