"""Hermetic replay runs show the CLI's and the driver's own words first.

The generated cli project's conformance test shows details by default (a replay holds no
provider secret); any ``test_driver`` class shows them with ``--adaptertest-show-details``
or ``ADAPTERTEST_SHOW_DETAILS=1``. The sentence that says why the run failed is on the
failure's first line, and the diagnostic blob comes after the readable lines.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import adaptertest
from adaptertest._details import SHOW_DETAILS_ENV, SHOW_DETAILS_OPTION

MESSAGE_ONLY = 'print(\'{"type":"message","text":"hi"}\')'
NO_RESULT_LINE = repr((sys.executable, "-c", MESSAGE_ONLY))

USER_FILE = """
import dataclasses

import adaptertest
from mycli_driver import MycliConfig, adaptertest_options, new_mycli_driver

CONFIG = MycliConfig(command={command})
OPTIONS = dataclasses.replace(
    adaptertest_options(), config=CONFIG, live_run=True, show_live_details={show}
)
TestMycli = adaptertest.test_driver(lambda: new_mycli_driver(CONFIG), OPTIONS)
"""

CANNOT_START = "cannot start no-such-cli-here: No such file or directory"
"""The OS's own words: no provider text, shown with or without details."""
NO_TERMINAL = "mycli exited without a result line"


TEMPLATE = Path(adaptertest.__file__).parent / "cli-template"


@pytest.fixture(autouse=True)
def _template_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's file imports the template's driver, as a generated project does."""
    path = os.pathsep.join(filter(None, [str(TEMPLATE), os.environ.get("PYTHONPATH")]))
    monkeypatch.setenv("PYTHONPATH", path)


def _liv01_failure(pytester: pytest.Pytester, command: str, show: bool, *args: str) -> str:
    """The text pytest prints for the LIV-01 failure of a user's test file."""
    pytester.makepyfile(test_user=USER_FILE.format(command=command, show=show))
    result = pytester.runpytest_subprocess("-k", "LIV-01", "-p", "no:cacheprovider", *args)
    result.assert_outcomes(failed=1, deselected=len(adaptertest.CLAUSES) - 1)
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if "test_clause[LIV-01]" in line) + 1
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("="))
    return "\n".join(lines[start:end]).strip("\n")


@pytest.mark.parametrize(
    ("command", "sentence"),
    [("('no-such-cli-here',)", CANNOT_START), (NO_RESULT_LINE, NO_TERMINAL)],
    ids=["cli-cannot-start", "no-terminal-line"],
)
def test_replay_failure_says_why_on_its_first_line(
    pytester: pytest.Pytester, command: str, sentence: str
) -> None:
    text = _liv01_failure(pytester, command, True)
    lines = text.splitlines()
    assert lines[0].startswith("LIV-01: ")
    assert sentence in lines[0]
    assert "<withheld" not in text
    # The readable lines (rule, rerun) come before the diagnostic blob.
    rerun = next(i for i, line in enumerate(lines) if line.startswith("  rerun alone: "))
    diagnostic = next(i for i, line in enumerate(lines) if "live diagnostic" in line)
    assert lines[1].startswith("  rule: ")
    assert rerun < diagnostic


def test_withheld_by_default_and_the_hint_names_the_option(pytester: pytest.Pytester) -> None:
    text = _liv01_failure(pytester, NO_RESULT_LINE, False)
    first = text.splitlines()[0]
    assert NO_TERMINAL not in text
    assert "<withheld: " in first
    assert f"  details: rerun with {SHOW_DETAILS_OPTION} (or {SHOW_DETAILS_ENV}=1)" in text
    assert text.index("  details: ") < text.index("live diagnostic")


def test_a_cli_that_cannot_start_is_named_without_details(pytester: pytest.Pytester) -> None:
    """The OS refusing to run the program is no provider text: it shows plainly."""
    text = _liv01_failure(pytester, "('no-such-cli-here',)", False)
    first = text.splitlines()[0]
    assert CANNOT_START in first
    assert "<withheld" not in first


def test_the_option_shows_details(pytester: pytest.Pytester) -> None:
    text = _liv01_failure(pytester, NO_RESULT_LINE, False, SHOW_DETAILS_OPTION)
    assert NO_TERMINAL in text.splitlines()[0]


@pytest.mark.parametrize(("value", "shown"), [("1", True), ("0", False)])
def test_the_environment_variable_shows_details(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, value: str, shown: bool
) -> None:
    monkeypatch.setenv(SHOW_DETAILS_ENV, value)
    text = _liv01_failure(pytester, NO_RESULT_LINE, False)
    assert (NO_TERMINAL in text.splitlines()[0]) is shown
    assert (NO_TERMINAL in text) is shown
