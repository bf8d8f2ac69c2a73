"""Secrets and control bytes never reach a screen, on every front end, details on and off.

The driver below quotes the value of a secret-named environment variable (set with
monkeypatch, never passed in ``Options.secrets``), credentials of well-known formats that
no option or variable names (an Anthropic, an OpenAI project, a Google and a GitHub key,
a bearer token) and an OSC title-set sequence in a hermetic probe's exception, in a live
run's exception (provider text, withheld unless details are on) and so in its traceback.
Every rendering must mask the values and escape the control characters. The fake keys
are assembled at run time, so no file holds one whole. Subprocesses get an environment
built here, and every other secret-named variable of this machine is removed, so nothing
depends on where it runs.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from adaptertest import Options, check_driver
from adaptertest._screen import SECRET_MASK, env_secrets, escape_controls, screen
from adaptertest.cli import render_report
from adaptertest.report_json import dumps, report_to_json
from adaptertest.report_markdown import document_to_markdown
from driver import EnvironmentReport, EventSink, Request, Response, is_secret_name
from referencedriver import ReferenceDriver

CANARY_NAME = "ADK_SCREEN_CANARY_API_KEY"
CANARY = "canary-7f3a9c1e55d24b"
OSC = "\x1b]0;pwned\x07"
"""Sets the terminal's title."""
KEYS = {
    "anthropic": "sk-" + "ant-api03-" + "Fk7qP2xZ" * 11 + "-AA",
    "openai project": "sk-" + "proj-" + "Rt5vN8_Lm2" * 5,
    "google": "AI" + "za" + "SyD4k9Lm2Qw7Zx1Rt5vN8bH3jK6pC0eFgWx",  # 39 characters
    "github": "gh" + "p_" + "Tq8Wn3Lk5Zr7Yx2Vb9Mc4Hd6Jf1Gs0Pa2Kb7",  # 40 characters
    "bearer": "Authorization: " + "Bearer " + "tok.Vb9Mc4Hd6Jf1Gs0Pa2Kb8Wn3",
}
"""One fake credential per well-known format; the name says which."""
KEY_BODIES = {
    "anthropic": "Fk7qP2xZFk7qP2xZ",
    "openai project": "Rt5vN8_Lm2Rt5vN8",
    "google": "SyD4k9Lm2Qw7Zx1R",
    "github": "Tq8Wn3Lk5Zr7Yx2V",
    "bearer": "tok.Vb9Mc4Hd6Jf1",
}
"""A distinctive part of each, which must not show either."""
HERE = Path(__file__).resolve().parent


def _leak() -> str:
    keys = " ".join(KEYS.values())
    return f"login failed for {os.environ.get(CANARY_NAME, '?')} with {keys} {OSC}done"


class LeakyDriver(ReferenceDriver):
    """Quotes the secret and a control sequence in a hermetic and a live exception."""

    async def check_environment(self, config: object = None) -> EnvironmentReport:
        raise RuntimeError(_leak())

    async def run(self, request: Request, sink: EventSink) -> Response:
        raise RuntimeError(_leak())


@pytest.fixture
def canary(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Only the canary is a secret-named variable; returns the env for subprocesses."""
    for name in list(os.environ):
        if is_secret_name(name):
            monkeypatch.delenv(name)
    monkeypatch.setenv(CANARY_NAME, CANARY)
    return {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": os.pathsep.join([str(HERE), *(p for p in sys.path if p)]),
        CANARY_NAME: CANARY,
    }


def _clean(text: str, *, where: str) -> None:
    assert CANARY not in text, f"{where} shows the secret"
    assert CANARY[:12] not in text, f"{where} shows part of the secret"
    for name, body in KEY_BODIES.items():
        assert body not in text, f"{where} shows the {name} key"
    assert "\x1b" not in text, f"{where} carries a raw ESC"
    assert "\x07" not in text, f"{where} carries a raw BEL"


def test_screen_masks_env_secrets_and_escapes_controls(canary: dict[str, str]) -> None:
    assert env_secrets() == (CANARY,)
    assert screen(f"a {CANARY} b") == f"a {SECRET_MASK} b"
    assert escape_controls("x\x1b[2Jy\x9b\x7f\n\tz") == "x\\x1b[2Jy\\x9b\\x7f\n\tz"
    assert screen(screen(OSC + CANARY)) == screen(OSC + CANARY)  # idempotent


@pytest.mark.parametrize("name", sorted(KEYS))
def test_screen_masks_well_known_key_formats(name: str) -> None:
    text = f"the driver said: {KEYS[name]!r}; retry later"
    shown = screen(text)
    assert KEY_BODIES[name] not in shown
    assert SECRET_MASK in shown
    assert shown.startswith("the driver said: '")
    assert shown.endswith("; retry later")
    assert screen(shown) == shown  # idempotent


def test_the_pattern_set_is_detect_secrets_and_covers_its_formats() -> None:
    """Formats only the maintained set knows are masked too (a Slack bot token, an AWS
    access key id, a Stripe live key), so the set is in use, not only the kit's list."""
    pytest.importorskip("detect_secrets")
    for key in (
        "xo" + "xb-" + "1234567890-" + "abcdefghij1234",
        "AK" + "IA" + "QW3RT7YU1OP5AS9D",
        "sk" + "_live_" + "a1B2c3D4e5F6g7H8i9J0k1L2",
    ):
        assert key not in screen(f"x {key} y"), key


def test_ordinary_report_text_is_left_alone() -> None:
    """What a passing suite prints (ids, digests, paths, versions) is no key format."""
    report = check_driver(ReferenceDriver, Options(live_run=True, fresh_process=False))
    for result in report:
        for text in (*result.messages, *result.notes):
            assert SECRET_MASK not in text, text
    digest = "<withheld: 42 chars, sha256:" + "0123456789abcdef" * 4 + ">"
    for plain in (digest, "toolu_01DemoRead msg_01KdemoStepOne 4c2f9a1e-7b3d-4e8a-9f21"):
        assert screen(plain) == plain


def test_the_matrix_masks_a_key_in_a_report_it_reads() -> None:
    """A report file written elsewhere (or by hand) still shows no key in the matrix."""
    from adaptertest.matrix._html import render_html
    from adaptertest.matrix._markdown import render_markdown
    from adaptertest.matrix._model import build

    report = check_driver(ReferenceDriver, Options(fresh_process=False), only=["DRV-01"])
    entry = report_to_json(report)["drivers"][0]
    for clause in entry["clauses"]:
        clause["status"] = "failed"
        clause["messages"] = [f"{clause['id']}: {' '.join(KEYS.values())}"]
    matrix = build([entry])
    _clean(render_html(matrix), where="matrix page")
    _clean(render_markdown(matrix), where="matrix markdown")


@pytest.mark.parametrize("details", [False, True], ids=["details-off", "details-on"])
def test_every_in_process_rendering_is_clean(canary: dict[str, str], details: bool) -> None:
    options = Options(live_run=True, show_live_details=details, fresh_process=False)
    report = check_driver(LeakyDriver, options)
    by_clause = {r.clause: r for r in report}
    # The text is there, screened: the hermetic probe shows its exception.
    assert "\\x1b]0;pwned\\x07done" in by_clause["CAP-03"].messages[0]
    assert SECRET_MASK in by_clause["CAP-03"].messages[0]
    if details:
        assert any("Traceback" in n or "driver traceback" in n for n in by_clause["LIV-01"].notes)
    renderings = {"describe": "\n".join(r.describe() for r in report)}
    renderings["headline"] = "\n".join(r.headline() for r in report)
    console_file = io.StringIO()
    from rich.console import Console
    from rich.text import Text

    render_report(report, Console(file=console_file, width=200), title=Text("check"))
    renderings["cli table"] = console_file.getvalue()
    doc = report_to_json(report)
    renderings["json"] = dumps(doc)
    renderings["json (decoded)"] = json.dumps(doc, ensure_ascii=False)
    renderings["markdown"] = document_to_markdown(doc)
    for where, text in renderings.items():
        _clean(text, where=where)


def _run(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=300, check=False
    )


@pytest.mark.parametrize("details", [False, True], ids=["details-off", "details-on"])
def test_the_cli_and_its_report_file_are_clean(
    canary: dict[str, str], details: bool, tmp_path: Path
) -> None:
    report_file = tmp_path / "report.json"
    argv = [sys.executable, "-m", "adaptertest", "check", "test_screen:LeakyDriver", "--live"]
    argv += ["--report", str(report_file), *(["--show-live-details"] if details else [])]
    done = _run(argv, canary, tmp_path)
    assert report_file.is_file(), done.stderr
    _clean(done.stdout, where="cli stdout")
    _clean(done.stderr, where="cli stderr")
    text = report_file.read_text(encoding="utf-8")
    _clean(text, where="report file")
    _clean(json.dumps(json.loads(text), ensure_ascii=False), where="report file (decoded)")
    assert "login failed for" in done.stdout  # the hermetic exception is shown, screened


@pytest.mark.parametrize("details", [False, True], ids=["details-off", "details-on"])
def test_pytest_output_and_junit_are_clean(
    canary: dict[str, str], details: bool, tmp_path: Path
) -> None:
    (tmp_path / "test_leaky.py").write_text(
        textwrap.dedent(
            f"""
            import adaptertest
            from test_screen import LeakyDriver

            TestLeaky = adaptertest.test_driver(
                LeakyDriver,
                adaptertest.Options(live_run=True, show_live_details={details}),
            )
            """
        ),
        encoding="utf-8",
    )
    junit = tmp_path / "junit.xml"
    argv = [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider"]
    argv += [f"--junitxml={junit}", "test_leaky.py"]
    done = _run(argv, canary, tmp_path)
    assert junit.is_file(), done.stdout + done.stderr
    assert "login failed for" in done.stdout, done.stdout[-2000:]
    _clean(done.stdout, where="pytest output")
    _clean(done.stderr, where="pytest stderr")
    _clean(junit.read_text(encoding="utf-8"), where="junit")
