"""Options are checked when built: every field rejects what it cannot take, by name.

The tables below must name every field, so a new field cannot land without its check
and its wrong values.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

import adaptertest
from adaptertest import ClauseStatus, Drift, ModelBinding, Options, OptionsError, check_driver
from adaptertest.clauses import CLAUSES
from adaptertest.options import FIELD_CHECKS
from driver import SessionState
from referencedriver import ReferenceDriver

FIELDS = [f.name for f in dataclasses.fields(Options)]

# Field -> wrong values, each with a fragment of what the error must say is expected.
WRONG: dict[str, list[tuple[Any, str]]] = {
    "config": [],  # any object is a config: the driver judges it (CFG-02)
    "session_state": [
        ({"resume_id": "r"}, "a driver.SessionState or None"),
        ("r", "a driver.SessionState or None"),
    ],
    "session_keys": [
        ("cwd", "a sequence of strings"),
        (b"cwd", "a sequence of strings"),
        ({"cwd": "x"}, "a sequence of strings"),
        (3, "a sequence of strings"),
        (["cwd", 3], "a str"),
    ],
    "guard_keys": [("cwd", "a sequence of strings"), ([None], "a str")],
    "workspace": [(3, "a str or None"), (b"/tmp", "a str or None")],
    "expected_detected_model": [(1, "a str or None"), (True, "a str or None")],
    "required_config_fields": [("model", "a sequence of strings"), ([1], "a str")],
    "expect_reject_foreign_config": [(1, "a bool (True or False)"), ("yes", "a bool")],
    "sync_skills_probe": [(0, "a bool"), (None, "a bool")],
    "live_run": [("yes", "a bool"), (1, "a bool"), (1.0, "a bool")],
    "live_prompt": [(None, "a non-blank str"), ("", "a non-blank str"), (b"OK", "a non-blank str")],
    "live_expected_output": [(42, "a str or None"), (b"OK", "a str or None")],
    "live_run_timeout": [
        (0, "a positive, finite number of seconds"),
        (-1.5, "a positive, finite number of seconds"),
        (math.inf, "finite"),
        (math.nan, "finite"),
        ("300", "number of seconds"),
        (True, "number of seconds"),
    ],
    "skip_live_run": [(True, "a str (the reason) or None"), (1, "a str (the reason) or None")],
    "live_structured_output": [(1, "a bool"), ("True", "a bool")],
    "strict_observation_demand": [(1, "a bool"), ("yes", "a bool")],
    "probe_timeout": [(0, "positive"), (math.inf, "finite"), ("30", "seconds"), (False, "seconds")],
    "known_failures": [
        (["EVT-12"], "a mapping of clause ID to reason"),
        ("EVT-12", "a mapping of clause ID to reason"),
        ({"XYZ-01": "why"}, "a clause ID such as 'EVT-12'"),
        ({"SES": "why"}, "a clause ID such as 'EVT-12'"),
        ({1: "why"}, "a clause ID such as 'EVT-12'"),
        ({"DRV-01": " "}, "needs a reason"),
        ({"DRV-01": None}, "needs a reason"),
    ],
    "show_live_details": [(1, "a bool"), ("no", "a bool")],
    "secrets": [("token", "a sequence of strings"), (["token", 5], "a str")],
    "max_examples": [(0, "a positive int"), (2.5, "a positive int"), (True, "a positive int")],
    "backend": [("curio", "'asyncio' or 'trio'"), (None, "'asyncio' or 'trio'")],
    "concurrent_runs": [
        (2.5, "0 (off) or a positive int"),
        ("3", "0 (off) or a positive int"),
        (-1, "0 (off) or a positive int"),
        (True, "0 (off) or a positive int"),
        (None, "0 (off) or a positive int"),
    ],
    "live_expect_failure": [
        ("", "a non-blank str (why the run is expected to fail) or None"),
        (True, "a non-blank str"),
        (b"429", "a non-blank str"),
    ],
    "drift": [
        ({"recordings": ["success.jsonl"]}, "an adaptertest.Drift or None"),
        ("success.jsonl", "an adaptertest.Drift or None"),
        (True, "an adaptertest.Drift or None"),
    ],
    "labels": [
        (["cli=claude"], "a mapping of label name to str"),
        ({"": "x"}, "a non-blank str with no '=' or newline"),
        ({"a=b": "x"}, "a non-blank str with no '=' or newline"),
        ({"cli": 2}, "a str"),
    ],
    "factory_ref": [
        ("new_driver", "None or 'module:attr'"),
        ("pkg.mod:", "None or 'module:attr'"),
        ("pkg mod:new", "None or 'module:attr'"),
        (3, "None or 'module:attr'"),
    ],
    "fresh_process": [(1, "a bool"), ("yes", "a bool")],
    "model_requests": [
        ([], "a callable taking no arguments"),
        ("emu.requests", "a callable taking no arguments"),
        (Options, "a callable taking no arguments"),
    ],
    "model_binding": [
        (lambda endpoint: None, "an adaptertest.ModelBinding or None"),
        ("anthropic", "an adaptertest.ModelBinding or None"),
    ],
}

RECORDING = Path(__file__).resolve().parents[2] / "examples/claude_driver/recordings/success.jsonl"
DRIFT = Drift(recordings=[RECORDING], driver=lambda command: ReferenceDriver())


BINDING = ModelBinding(driver=lambda endpoint: ReferenceDriver(), protocol="anthropic")


def _no_requests() -> list[Any]:
    return []


# Field -> a legal value other than the default, and what is stored for it.
RIGHT: dict[str, tuple[Any, Any]] = {
    "config": (object, object),
    "session_state": (SessionState(resume_id="r"), SessionState(resume_id="r")),
    "session_keys": (["cwd"], ("cwd",)),
    "guard_keys": ((k for k in ("a", "b")), ("a", "b")),
    "workspace": ("/w", "/w"),
    "expected_detected_model": ("m-1", "m-1"),
    "required_config_fields": (("model",), ("model",)),
    "expect_reject_foreign_config": (True, True),
    "sync_skills_probe": (True, True),
    "live_run": (True, True),
    "live_prompt": ("Say hi.", "Say hi."),
    "live_expected_output": ("", ""),
    "live_run_timeout": (5, 5.0),
    "skip_live_run": ("", ""),
    "live_structured_output": (True, True),
    "strict_observation_demand": (True, True),
    "probe_timeout": (0.5, 0.5),
    "known_failures": ({"EVT-12": "issue 41"}, {"EVT-12": "issue 41"}),
    "show_live_details": (True, True),
    "secrets": (["s3cret"], ("s3cret",)),
    "max_examples": (3, 3),
    "backend": ("trio", "trio"),
    "concurrent_runs": (2, 2),
    "live_expect_failure": ("a replayed 429", "a replayed 429"),
    "drift": (DRIFT, DRIFT),
    "labels": ({"cli": "claude"}, {"cli": "claude"}),
    "factory_ref": ("pkg.mod:Factory.new", "pkg.mod:Factory.new"),
    "fresh_process": (False, False),
    "model_requests": (_no_requests, _no_requests),
    "model_binding": (BINDING, BINDING),
}


def test_every_field_has_a_check_and_test_rows() -> None:
    assert sorted(FIELD_CHECKS) == sorted(FIELDS)
    assert sorted(WRONG) == sorted(FIELDS)
    assert sorted(RIGHT) == sorted(FIELDS)
    assert all(WRONG[name] for name in FIELDS if name != "config")


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [(name, value, expected) for name, rows in WRONG.items() for value, expected in rows],
    ids=lambda v: v if isinstance(v, str) and v in FIELDS else None,
)
def test_wrong_values_are_rejected_naming_field_type_and_expectation(
    name: str, value: Any, expected: str
) -> None:
    with pytest.raises(OptionsError) as info:
        Options(**{name: value})
    error = info.value
    message = str(error)
    assert message.startswith(f"Options.{name}"), message
    assert expected in message, message
    assert error.field == name
    assert f"must be {error.expected}, got" in message
    # The type named is the offending value's: the field's, or the item's inside it.
    assert f"got {error.got}" in message
    assert error.got in {type(value).__qualname__} | {
        type(item).__qualname__ for item in _items(value)
    }
    assert isinstance(error, TypeError)
    assert isinstance(error, ValueError)


def _items(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [*value, *value.values()]
    if isinstance(value, list | tuple):
        return list(value)
    return []


@pytest.mark.parametrize("name", FIELDS)
def test_legal_values_are_stored_normalized(name: str) -> None:
    given, stored = RIGHT[name]
    options = Options(**{name: given})
    assert getattr(options, name) == stored
    assert type(getattr(options, name)) is type(stored) or name in ("known_failures", "labels")


def test_known_failures_are_stored_read_only() -> None:
    given = {"EVT-12": "issue 41"}
    options = Options(known_failures=given)
    assert isinstance(options.known_failures, MappingProxyType)
    given["DRV-01"] = "added later"
    assert "DRV-01" not in options.known_failures


def test_bool_is_no_number_and_no_number_is_a_bool() -> None:
    with pytest.raises(OptionsError, match="a bool is not accepted as a number"):
        Options(concurrent_runs=True)
    with pytest.raises(OptionsError, match="got int: 1"):
        Options(live_run=1)  # type: ignore[arg-type]


def test_secret_values_are_never_quoted() -> None:
    with pytest.raises(OptionsError) as info:
        Options(secrets="hunter2-token")  # type: ignore[arg-type]
    assert "hunter2" not in str(info.value)
    assert "got str" in str(info.value)
    with pytest.raises(OptionsError) as info:
        Options(session_state={"resume_id": "hunter2"})  # type: ignore[arg-type]
    assert "hunter2" not in str(info.value)


def test_replace_checks_again() -> None:
    with pytest.raises(OptionsError, match=r"Options\.concurrent_runs"):
        dataclasses.replace(Options(), concurrent_runs=2.5)  # type: ignore[arg-type]


def test_options_error_is_public() -> None:
    assert adaptertest.OptionsError is OptionsError


# -- check_driver(only=...) ---------------------------------------------------------------


def test_only_takes_families_and_ids_in_any_case() -> None:
    report = check_driver(ReferenceDriver, Options(), only=["SES", "drv-01"])
    ses = [c.id for c in CLAUSES if c.family == "SES"]
    assert [r.clause for r in report.results] == [c.id for c in CLAUSES if c.id in {*ses, "DRV-01"}]
    assert report.results
    assert all(r.status is not ClauseStatus.FAILED for r in report.results)


@pytest.mark.parametrize(
    ("only", "error", "fragment"),
    [
        (["SES-99"], ValueError, "unknown clause or family 'SES-99'"),
        (["SES", "NOPE"], ValueError, "unknown clause or family 'NOPE'"),
        ("XYZ", ValueError, "unknown clause or family 'XYZ'"),
        ([], ValueError, "names no clause"),
        ([3], TypeError, "got int"),
    ],
)
def test_only_rejects_unknown_names_before_anything_runs(
    only: Any, error: type[Exception], fragment: str
) -> None:
    made: list[object] = []

    def factory() -> ReferenceDriver:
        made.append(object())
        return ReferenceDriver()

    with pytest.raises(error, match=r"check_driver\(only=\.\.\.\)") as info:
        check_driver(factory, Options(), only=only)
    assert fragment in str(info.value)
    assert made == []


def test_trio_backend_needs_trio_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chosen without trio, the backend fails at construction naming the extra, not later
    inside a probe."""
    monkeypatch.setitem(sys.modules, "trio", None)
    with pytest.raises(OptionsError, match=r"Options\.backend .*agent-driver-kit\[trio\]"):
        Options(backend="trio")
    assert Options(backend="asyncio").backend == "asyncio"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"driver": "not callable", "protocol": "anthropic"}, "ModelBinding.driver"),
        ({"driver": ReferenceDriver, "protocol": "anthropic"}, "ModelBinding.driver"),
        ({"driver": lambda e: None, "protocol": "chat"}, "ModelBinding.protocol"),
        ({"driver": lambda e: None, "protocol": "gemini", "cannot": {"X": " "}}, "cannot"),
        ({"driver": lambda e: None, "protocol": "gemini", "grace": -1}, "grace"),
        ({"driver": lambda e: None, "protocol": "gemini", "grace": True}, "grace"),
        (
            {"driver": lambda e: None, "protocol": "gemini", "cannot": {"TOL-4": "x"}},
            "ModelBinding.cannot names 'TOL-4', which is no scenario clause",
        ),
        (
            {"driver": lambda e: None, "protocol": "gemini", "cannot": {"DRV-01": "x"}},
            "ModelBinding.cannot names 'DRV-01'",
        ),
        (
            {"driver": lambda e: None, "protocol": "gemini", "tools": {"bash": "Bash"}},
            r"ModelBinding.tools maps a role \('shell'\)",
        ),
        (
            {"driver": lambda e: None, "protocol": "gemini", "ref": "not a ref"},
            "ModelBinding.ref must be None or 'module:attr'",
        ),
    ],
)
def test_a_model_binding_refuses_bad_values_naming_the_field(
    kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises((TypeError, ValueError), match=message):
        ModelBinding(**kwargs)


def test_a_model_binding_stores_its_reasons_read_only() -> None:
    binding = ModelBinding(
        driver=lambda e: None, protocol="gemini", cannot={"FLT-01": "no retries"}, grace=2
    )
    assert binding.cannot == {"FLT-01": "no retries"}
    assert binding.grace == 2.0
    with pytest.raises(TypeError):
        binding.cannot["X-02"] = "y"  # type: ignore[index]
