"""The adaptertest CLI: check (table, JSON, exit status), clauses, usage errors."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from adaptertest._docs import clause_table_markdown
from adaptertest.clauses import CLAUSES
from adaptertest.cli import build_parser, main, options_from_args, rerun_command
from adaptertest.report_json import validate_document
from referencedriver import ReferenceConfig, adaptertest_options

REFERENCE = "referencedriver:new_reference_driver"
HERMETIC = ["--clause", "DRV,CFG", "--clause", "CAP"]
HERMETIC_IDS = [c.id for c in CLAUSES if c.family in ("DRV", "CFG", "CAP")]

BROKEN_MODULE = """
from driver import Descriptor
from referencedriver import ReferenceDriver

class Nameless(ReferenceDriver):
    def descriptor(self) -> Descriptor:
        # Square brackets must print literally, never as rich markup.
        update = {"display_name": "", "type": "[bold]odd[/bold]"}
        return super().descriptor().model_copy(update=update)

def make():
    return Nameless()

not_callable = 42
"""


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("FORCE_COLOR", raising=False)


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """An importable module of the user's, from the current directory."""
    (tmp_path / "cli_user_drivers.py").write_text(BROKEN_MODULE)
    (tmp_path / "cli_user_boom.py").write_text("raise RuntimeError('config missing')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))  # restores sys.path afterwards
    return "cli_user_drivers"


def test_check_passing_driver_prints_table_summary_and_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "out" / "report.json"
    code = main(
        [
            "check",
            REFERENCE,
            *HERMETIC,
            "--options",
            "adaptertest:Options",
            "--config-class",
            "referencedriver:ReferenceConfig",
            "--report",
            str(report),
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, out + err
    for clause in HERMETIC_IDS:
        assert clause in out
    assert "CFG-03" in out
    assert "skipped" in out
    assert "expect_reject_foreign_config" in out
    partial = f"level: none (partial run: 17 of {len(CLAUSES)} clauses)"
    assert f"reference: 16 passed, 1 skipped; {partial}" in out
    doc = json.loads(report.read_text())
    validate_document(doc)
    assert doc["producer"] == "cli"
    assert doc["drivers"][0]["name"] == REFERENCE
    assert [c["id"] for c in doc["drivers"][0]["clauses"]] == HERMETIC_IDS
    assert f"report written to {report}" in err


def test_check_failing_driver_exits_1_with_details(
    user_module: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["check", f"{user_module}:make", "--clause", "DRV"])
    out = capsys.readouterr().out
    assert code == 1
    assert "DRV-01" in out
    assert "failed" in out
    assert "DRV-01: descriptor().display_name is empty" in out  # the full failure text
    # The hint is this very command line, selecting the one clause.
    assert f"rerun alone: python -m adaptertest check {user_module}:make --clause DRV-01" in out
    assert "failing: DRV-01" in out
    assert "[bold]odd[/bold]: " in out


@pytest.mark.parametrize("columns", ["40", "80"])
def test_piped_check_output_never_wraps(
    user_module: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    columns: str,
) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    code = main(["check", f"{user_module}:make", "--clause", "DRV", "--probe-timeout", "30"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    rerun = (
        f"  rerun alone: python -m adaptertest check {user_module}:make --probe-timeout 30 "
        "--clause DRV-01"
    )
    assert rerun in lines
    assert "DRV-01: descriptor().display_name is empty" in lines
    (row,) = [line for line in lines if line.startswith("│ DRV-01 ")]
    assert "descriptor().display_name is empty" in row  # the headline on its own row
    rule = next(line for line in lines if line.startswith("  rule: "))
    assert rule.endswith(".")  # the rule in one line


def test_check_json_format_prints_the_report(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", REFERENCE, "--clause", "DRV", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    validate_document(doc)
    assert doc["drivers"][0]["counts"]["passed"] == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["check", "referencedriver"], "expected MODULE:FACTORY such as"),
        (["check", "no_such_module_xyz:make"], "cannot import 'no_such_module_xyz'"),
        (["check", "cli_user_drivers:nope"], "has no attribute 'nope'"),
        (["check", "cli_user_drivers:not_callable"], "is a int, not a callable"),
        (["check", "cli_user_boom:make"], "raised RuntimeError: config missing"),
        (["check", REFERENCE, "--clause", "SES-99"], "unknown clause or family 'SES-99'"),
        (["check", REFERENCE, "--config", "{model:"], "--config is not valid JSON"),
        (["check", REFERENCE, "--config", "@missing.json"], "cannot read --config file"),
        (
            [
                "check",
                REFERENCE,
                "--config",
                '{"modle": "x"}',
                "--config-class",
                "referencedriver:ReferenceConfig",
            ],
            "--config does not fit referencedriver:ReferenceConfig",
        ),
        (["check", REFERENCE, "--probe-timeout", "0"], "probe_timeout must be a positive"),
        (["check", REFERENCE, "--concurrent", "-1"], "concurrent_runs must be 0"),
    ],
)
def test_usage_errors_exit_2_with_a_clear_message(
    user_module: str, args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("adaptertest check: error: ")
    assert message in err


BAD_OPTIONS_MODULE = """
from adaptertest import Options

def bad_options():
    return Options(known_failures=["EVT-12"])
"""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--concurrent", "-1"], "--concurrent: Options.concurrent_runs must be 0 (off) or a"),
        (["--probe-timeout", "inf"], "--probe-timeout: Options.probe_timeout must be a positive"),
        (
            ["--options", "cli_user_options:bad_options"],
            "--options cli_user_options:bad_options: Options.known_failures must be a mapping "
            "of clause ID to reason",
        ),
    ],
)
def test_bad_option_values_are_usage_errors_naming_flag_and_field(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    message: str,
) -> None:
    (tmp_path / "cli_user_options.py").write_text(BAD_OPTIONS_MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["check", REFERENCE, *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"adaptertest check: error: {message}"), err
    assert "Traceback" not in err


def test_argparse_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check"]) == 2
    assert "MODULE:FACTORY" in capsys.readouterr().err
    assert main(["frobnicate"]) == 2


def test_options_mirror_the_flags(tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_text('{"model": "m-2", "cwd": "w"}')
    args = build_parser().parse_args(
        ["check", REFERENCE, "--live", "--concurrent", "3",
         "--backend", "trio", "--probe-timeout", "2.5", "--show-live-details",
         "--config", f"@{config}", "--config-class", "referencedriver:ReferenceConfig"]
    )  # fmt: skip
    options = options_from_args(args)
    assert options.live_run
    assert options.live_structured_output
    assert options.show_live_details
    assert (options.concurrent_runs, options.backend, options.probe_timeout) == (3, "trio", 2.5)
    assert options.config == ReferenceConfig(model="m-2", cwd="w")


def test_options_come_from_the_factory_module_then_the_flags() -> None:
    base = options_from_args(build_parser().parse_args(["check", REFERENCE]))
    assert base == adaptertest_options()
    live = options_from_args(build_parser().parse_args(["check", REFERENCE, "--live"]))
    assert live.live_run
    assert live.guard_keys == ("cwd", "workspace_id")


def test_options_defaults_and_plain_json_config() -> None:
    plain = options_from_args(
        build_parser().parse_args(["check", REFERENCE, "--options", "adaptertest:Options"])
    )
    assert plain.config is None
    assert not plain.live_run
    assert (plain.backend, plain.probe_timeout) == ("asyncio", 30.0)


CONFIG_MODULE = """
from driver import InvalidDriverConfigError
from referencedriver import ReferenceConfig, ReferenceDriver

class TakesDicts:
    def validate_config(self, config):
        pass

class Refuses:
    def validate_config(self, config):
        raise InvalidDriverConfigError(
            "refuses", TypeError(f"unsupported config type {type(config).__qualname__}")
        )

def dicts():
    return TakesDicts()

def refuses():
    return Refuses()
"""

PUBLISHED_MODULE = """
from referencedriver import ReferenceConfig, ReferenceDriver

CONFIG_CLASS = ReferenceConfig

def make():
    return object()
"""


@pytest.fixture
def config_modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "cli_user_configs.py").write_text(CONFIG_MODULE)
    (tmp_path / "cli_user_published.py").write_text(PUBLISHED_MODULE)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))


def _config_of(*args: str) -> object:
    return options_from_args(build_parser().parse_args(["check", *args])).config


@pytest.mark.usefixtures("config_modules")
def test_a_json_config_is_built_with_the_drivers_config_class() -> None:
    # From the published options' config, and from the module's CONFIG_CLASS.
    assert _config_of(REFERENCE, "--config", '{"model": "x"}') == ReferenceConfig(model="x")
    published = _config_of("cli_user_published:make", "--config", '{"model": "y"}')
    assert published == ReferenceConfig(model="y")
    # From the config a driver of the factory holds.
    held = _config_of(REFERENCE, "--options", "adaptertest:Options", "--config", '{"cwd": "w"}')
    assert held == ReferenceConfig(cwd="w")
    # No class to find: the JSON object as it is.
    raw = _config_of("cli_user_configs:dicts", "--config", '{"a": [1]}')
    assert raw == {"a": [1]}


@pytest.mark.usefixtures("config_modules")
def test_a_json_config_that_does_not_fit_names_the_class_and_the_flag(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["check", REFERENCE, "--config", '{"a": [1]}']) == 2
    err = capsys.readouterr().err
    assert err.startswith("adaptertest check: error: --config does not fit ")
    assert "referencedriver._config.ReferenceConfig" in err
    assert "pass --config-class MODULE:CLASS" in err


@pytest.mark.usefixtures("config_modules")
def test_a_json_config_the_driver_refuses_says_pass_config_class(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["check", "cli_user_configs:refuses", "--config", '{"model": "x"}']
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("adaptertest check: error: --config gave a JSON object, which the ")
    assert "unsupported config type dict" in err
    assert "pass --config-class MODULE:CLASS" in err
    assert "CONFIG_CLASS" in err


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_spinner_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    quiet = io.StringIO()
    monkeypatch.setattr(sys, "stderr", quiet)
    assert main(["check", REFERENCE, "--clause", "DRV-01", "--format", "json"]) == 0
    assert quiet.getvalue() == ""
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["check", REFERENCE, "--clause", "DRV-01", "--format", "json"]) == 0
    assert "checking referencedriver:new_reference_driver" in terminal.getvalue()


def test_clauses_formats(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["clauses", "--format", "markdown"]) == 0
    assert capsys.readouterr().out == clause_table_markdown() + "\n"
    assert main(["clauses", "--format", "json"]) == 0
    catalogue = json.loads(capsys.readouterr().out)
    assert [c["id"] for c in catalogue] == [c.id for c in CLAUSES]
    assert catalogue[0]["module"] == "adaptertest.drv"
    assert main(["clauses"]) == 0
    table = capsys.readouterr().out
    assert all(c.id in table for c in CLAUSES)
    upstream = sum(1 for c in CLAUSES if not c.extension)
    assert f"{upstream} upstream clauses, {len(CLAUSES) - upstream} extension(s)" in table


def test_module_entry_point_runs_end_to_end() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "adaptertest", "check", REFERENCE, "--clause", "DRV-01"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert done.returncode == 0, done.stderr
    assert "DRV-01" in done.stdout
    assert "passed" in done.stdout
    version = subprocess.run(
        [sys.executable, "-m", "adaptertest", "--version"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert version.returncode == 0
    assert version.stdout.startswith("adaptertest ")


def test_expect_failure_flag_sets_the_option() -> None:
    args = build_parser().parse_args(["check", REFERENCE, "--live", "--expect-failure", "a 429"])
    assert options_from_args(args).live_expect_failure == "a 429"
    assert (
        options_from_args(build_parser().parse_args(["check", REFERENCE])).live_expect_failure
        is None
    )


def test_rerun_hint_is_the_command_line_with_one_clause() -> None:
    argv = ["mod:make", "--live", "--clause", "EVT", "--report", "out.json", "--format=table",
            "--config", '{"model": "m 1"}', "--clause=LIV-01"]  # fmt: skip
    hint = rerun_command(argv)("EVT-05")
    assert hint == (
        'python -m adaptertest check mod:make --live --config \'{"model": "m 1"}\' --clause EVT-05'
    )


DRIFT_MODULE = """
from pathlib import Path

from adaptertest import Drift, Options
from claude_driver import ClaudeConfig, ClaudeDriver

RECORDING = Path({recording!r})


def make():
    return ClaudeDriver(ClaudeConfig(command=("claude-is-not-installed-here",)))


def around(command):
    return ClaudeDriver(ClaudeConfig(command=command))


def adaptertest_options():
    return Options(drift=Drift(recordings=[RECORDING], driver=around, max_examples=2))
"""

CLAUDE_SUCCESS = (
    Path(__file__).resolve().parents[2] / "examples/claude_driver/recordings/success.jsonl"
)


@pytest.fixture
def drift_module(user_module: str, tmp_path: Path) -> str:
    """A factory module that publishes its drift option (the Claude example driver)."""
    (tmp_path / "cli_user_drift.py").write_text(DRIFT_MODULE.format(recording=str(CLAUDE_SUCCESS)))
    return "cli_user_drift:make"


def test_drift_flag_runs_the_published_drift_option(
    drift_module: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", drift_module, "--drift", "--clause", "DFT", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    clauses = {c["id"]: c["status"] for c in doc["drivers"][0]["clauses"]}
    assert clauses == {"DFT-01": "passed", "DFT-02": "passed", "DFT-03": "passed"}


def test_a_published_drift_option_runs_only_with_the_flag(drift_module: str) -> None:
    without = options_from_args(build_parser().parse_args(["check", drift_module]))
    assert without.drift is None
    with_flag = options_from_args(build_parser().parse_args(["check", drift_module, "--drift"]))
    assert with_flag.drift is not None
    assert [p.name for p in with_flag.drift.recordings] == ["success.jsonl"]


def test_drift_flag_without_a_published_option_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["check", REFERENCE, "--drift"]) == 2
    err = capsys.readouterr().err
    assert "--drift needs a drift option" in err
    assert "referencedriver:adaptertest_options publishes none" in err


def test_concurrent_without_live_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", REFERENCE, "--options", "adaptertest:Options", "--concurrent", "2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("adaptertest check: error: --concurrent 2 needs --live")
    live = build_parser().parse_args(["check", REFERENCE, "--concurrent", "2", "--live"])
    assert options_from_args(live).concurrent_runs == 2
    off = build_parser().parse_args(["check", REFERENCE, "--concurrent", "0"])
    assert options_from_args(off).concurrent_runs == 0


def test_skip_reasons_name_the_cli_flags(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", REFERENCE, "--clause", "CON,SO", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    reasons = [m for r in doc["drivers"][0]["clauses"] for m in r["messages"]]
    con = next(m for m in reasons if m.startswith("CON-01 skipped"))
    assert "pass --live as well" in con
    assert not [m for m in reasons if "Options(live_run=True)" in m], reasons
    assert not [m for m in reasons if "Options(live_structured_output=True)" in m], reasons


def test_a_raising_factory_is_summarised_by_name_not_a_question_mark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "cli_user_raising.py").write_text(
        "def make():\n    raise RuntimeError('config missing')\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    assert main(["check", "cli_user_raising:make", "--clause", "DRV"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1].startswith("driver type unknown (see DRV-01): 1 failed, 2 skipped")
    assert not [line for line in lines if line.startswith("?")]
    assert "DRV-01: the factory raised builtins.RuntimeError" in "\n".join(lines)


def test_counts_agree_with_their_noun() -> None:
    from adaptertest.report import plural

    assert [plural(n, "chunk") for n in (0, 1, 2)] == ["0 chunks", "1 chunk", "2 chunks"]
