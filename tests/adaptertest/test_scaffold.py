"""``adaptertest new``: names, renaming, the files of each template, refusals.

The generated projects run here in a subprocess against the kit of this checkout;
``tests/test_packaging.py`` installs them from the built wheel into a fresh
virtualenv and runs their own tests.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import referencedriver
from adaptertest import _scaffold
from adaptertest._scaffold import ScaffoldError, project_names, render, write_project
from adaptertest.clauses import CLAUSES
from adaptertest.cli import main

REFERENCE_SOURCE = Path(referencedriver.__file__).parent
CLI_TEMPLATE = Path(_scaffold.__file__).with_name("cli-template")


def leftovers(project: dict[str, str], word: str) -> list[str]:
    """Paths and lines of ``project`` that still say ``word``, in any case."""
    found = [path for path in project if word in path.lower()]
    for path, text in project.items():
        found += [
            f"{path}:{n}: {line}"
            for n, line in enumerate(text.splitlines(), 1)
            if word in line.lower()
        ]
    return found


# -- names -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "stem", "camel", "upper", "kebab", "title", "distribution"),
    [
        ("acme", "acme", "Acme", "ACME", "acme", "Acme", "acme"),
        ("acme_driver", "acme", "Acme", "ACME", "acme", "Acme", "acme-driver"),
        ("acmedriver", "acme", "Acme", "ACME", "acme", "Acme", "acmedriver"),
        ("acme_cli2", "acme_cli2", "AcmeCli2", "ACME_CLI2", "acme-cli2", "Acme Cli2", "acme-cli2"),
        ("driver2", "driver2", "Driver2", "DRIVER2", "driver2", "Driver2", "driver2"),
    ],
)
def test_every_spelling_derives_from_the_package_name(
    name: str, stem: str, camel: str, upper: str, kebab: str, title: str, distribution: str
) -> None:
    names = project_names(name)
    assert (names.package, names.stem, names.camel, names.upper) == (name, stem, camel, upper)
    assert (names.kebab, names.title, names.distribution) == (kebab, title, distribution)
    assert names.display == title  # the default display name


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "must be a Python identifier"),
        ("9lives", "must be a Python identifier"),
        ("my-driver", "for example 'my_driver'"),
        ("acme driver", "for example 'acme_driver'"),
        ("naïve", "must be a Python identifier"),
        ("class", "is a Python keyword"),
        ("match", "is a Python keyword"),  # a soft keyword
        ("Acme", "lower-case package name"),
        ("_acme", "lower-case package name"),
        ("acme__cli", "for example 'acme_cli'"),
        ("acme_", "lower-case package name"),
        ("json", "taken by the standard library"),
        ("driver", "the kit"),
        ("pydantic", "dependencies"),
        ("my_reference", "contains 'reference'"),
    ],
)
def test_bad_names_are_refused_with_a_reason(name: str, message: str) -> None:
    with pytest.raises(ScaffoldError, match=re.escape(message)):
        project_names(name)


@pytest.mark.parametrize("display", ["", "   ", "two\nlines", "x" * 81, "Not A Reference"])
def test_bad_display_names_are_refused(display: str) -> None:
    with pytest.raises(ScaffoldError, match="--display-name"):
        project_names("acme", display)


# -- renaming --------------------------------------------------------------------------------


def renamer(fixed: dict[str, str] | None = None) -> _scaffold._Renamer:
    source = _scaffold._Source(package="widgetdriver", stem="widget", fixed=lambda _: fixed or {})
    return _scaffold._Renamer(source, project_names("acme_cli", 'Acme "CLI" \\ Co'))


def test_every_case_form_of_the_stem_is_renamed() -> None:
    rename = renamer()
    text = (
        "from widgetdriver._x import WidgetConfig, WIDGET_TYPE, new_widget_driver\n"
        'label = "Widget Model"; code = "widget_ready"; run = "widget-run-1"\n'
        "`widgetdriver` names the widget driver\n"
    )
    assert rename(text, "x.py") == (
        "from acme_cli._x import AcmeCliConfig, ACME_CLI_TYPE, new_acme_cli_driver\n"
        'label = "Acme Cli Model"; code = "acme_cli_ready"; run = "acme-cli-run-1"\n'
        "`acme_cli` names the acme-cli driver\n"
    )


def test_a_spelling_without_a_rule_stops_the_generation() -> None:
    with pytest.raises(ScaffoldError, match=r"no renaming rule for 'wIdget' in odd\.py"):
        renamer()("a wIdget here", "odd.py")


def test_a_whole_string_rule_that_no_longer_matches_is_reported() -> None:
    rename = renamer({'"The Widget"': '"The Acme"', "gone": "x"})
    assert rename('name = "The Widget"', "a.py") == 'name = "The Acme"'
    with pytest.raises(ScaffoldError, match="no longer contains 'gone'"):
        rename.check_complete()


# -- the memory template ---------------------------------------------------------------------


def test_memory_template_renames_every_reference_name() -> None:
    source_text = "".join(p.read_text() for p in REFERENCE_SOURCE.glob("*.py"))
    assert len(re.findall("reference", source_text, re.I)) > 50  # the rules have work to do
    project = render("memory", project_names("acme_driver", "Acme Agent"))
    assert sorted(project) == sorted(
        [
            ".gitignore",
            "README.md",
            "pyproject.toml",
            "tests/test_conformance.py",
            *(f"acme_driver/{p.name}" for p in REFERENCE_SOURCE.iterdir() if p.is_file()),
        ]
    )
    assert leftovers(project, "reference") == []
    init = project["acme_driver/__init__.py"]
    exported = re.findall(r'^    "(\w+)",$', init, re.M)
    renamed = [
        name.replace("REFERENCE", "ACME").replace("Reference", "Acme").replace("reference", "acme")
        for name in referencedriver.__all__
    ]
    assert sorted(exported) == sorted(renamed)
    driver_source = project["acme_driver/_driver.py"]
    assert 'display_name="Acme Agent"' in driver_source
    assert 'env_var="ACME_HOME"' in driver_source
    assert 'FINGERPRINT_DOMAIN = "acme/v1;codec/acme/v1"' in project["acme_driver/_config.py"]
    for path, text in project.items():
        if path.endswith(".py"):
            compile(text, path, "exec")


def test_shell_files_name_the_project_and_the_kit_extra() -> None:
    project = render("memory", project_names("acme_driver"))
    pyproject = project["pyproject.toml"]
    assert 'name = "acme-driver"' in pyproject
    assert 'dependencies = ["agent-driver-kit>=0.1.0,<0.2"]' in pyproject
    assert 'test = ["agent-driver-kit[test,trio]>=0.1.0,<0.2"]' in pyproject
    assert 'packages = ["acme_driver"]' in pyproject
    readme = project["README.md"]
    assert readme.startswith("# Acme\n")
    assert "python -m pip install -e '.[test]' && python -m pytest\n" in readme
    assert "python -m adaptertest check acme_driver:new_acme_driver --live\n" in readme


# -- the cli template ------------------------------------------------------------------------


def test_cli_template_renames_every_mycli_name() -> None:
    project = render("cli", project_names("acme_cli", 'Acme "CLI" \\ Co'))
    template = sorted(
        p.relative_to(CLI_TEMPLATE).as_posix()
        for part in ("mycli_driver", "recordings", "tests")
        for p in (CLI_TEMPLATE / part).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    )
    expected = [p.replace("test_mycli_driver", "test_acme_cli_driver") for p in template]
    expected = [p.replace("mycli_driver/", "acme_cli/") for p in expected]
    assert sorted(project) == sorted([*expected, ".gitignore", "README.md", "pyproject.toml"])
    assert leftovers(project, "mycli") == []
    assert leftovers(project, "reference") == []
    config = project["acme_cli/_config.py"]
    assert 'ACME_CLI_DRIVER_TYPE = "acme-cli"' in config
    assert 'DEFAULT_COMMAND = ("acme-cli",)' in config
    assert 'DISPLAY_NAME = "Acme \\"CLI\\" \\\\ Co"' in config
    for path, text in project.items():
        if path.endswith(".py"):
            compile(text, path, "exec")
        if path.endswith(".jsonl"):  # the made-up CLI's lines are still JSON where they were
            before = (CLI_TEMPLATE / "recordings" / Path(path).name).read_text().splitlines()
            for old, new in zip(before, text.splitlines(), strict=True):
                assert old.startswith("{") == new.startswith("{")
                if new.startswith("{"):
                    json.loads(new)


# -- writing ---------------------------------------------------------------------------------


def test_an_existing_folder_is_never_overwritten(tmp_path: Path) -> None:
    project = {"a.txt": "new\n"}
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "a.txt").write_text("mine\n")
    (tmp_path / "file").write_text("mine\n")
    for target in (tmp_path / "busy", tmp_path / "file"):
        with pytest.raises(ScaffoldError, match="not an empty directory; not overwriting"):
            write_project(target, project)
    assert (tmp_path / "busy" / "a.txt").read_text() == "mine\n"
    assert (tmp_path / "file").read_text() == "mine\n"
    (tmp_path / "empty").mkdir()
    write_project(tmp_path / "empty", {"pkg/a.txt": "new\n"})
    assert (tmp_path / "empty" / "pkg" / "a.txt").read_text() == "new\n"


def test_new_command_writes_the_project_and_prints_the_next_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "work" / "acme"
    assert main(["new", "acme", "--template", "cli", "--dir", str(target)]) == 0
    out = capsys.readouterr().out
    assert f"wrote 19 files to {target} (cli template)" in out
    assert "python -m pip install -e '.[test]' && python -m pytest" in out
    assert (target / "acme" / "_parser.py").is_file()
    assert (target / "tests" / "test_conformance.py").is_file()
    assert (target / "recordings" / "success.jsonl").is_file()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["my-driver"], "NAME must be a Python identifier"),
        (["acme", "--display-name", ""], "--display-name must be one printable line"),
        (["acme", "--dir", "{busy}"], "not an empty directory; not overwriting"),
    ],
)
def test_new_command_refuses_with_status_2_and_writes_nothing(
    args: list[str],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("mine\n")
    before = sorted(tmp_path.rglob("*"))
    monkeypatch.chdir(tmp_path)  # the default target, ./acme, would land here
    assert main(["new", *(arg.format(busy=busy) for arg in args)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("adaptertest new: error: ")
    assert message in err
    assert sorted(tmp_path.rglob("*")) == before


def test_python_m_adaptertest_new_has_help() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "adaptertest", "new", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "--template {memory,cli}" in done.stdout
    assert "--display-name" in done.stdout


# -- the generated projects work -------------------------------------------------------------

CHECK_BOTH = """
import dataclasses, json, sys
import adaptertest
from adaptertest import clikit

from acme_mem import adaptertest_options as mem_options, new_acme_mem_driver
from acme_cli import AcmeCliConfig, adaptertest_options as cli_options, new_acme_cli_driver

memory = adaptertest.check_driver(
    new_acme_mem_driver, dataclasses.replace(mem_options(), live_run=True)
)
replay = AcmeCliConfig(
    command=clikit.replay_command(clikit.recordings_dir(sys.argv[1]), "success.jsonl")
)
cli = adaptertest.check_driver(
    lambda: new_acme_cli_driver(replay),
    dataclasses.replace(cli_options(), config=replay, live_run=True),
)
print(json.dumps({
    "levels": [str(memory.level), str(cli.level)],
    "failures": [r.describe() for r in (*memory.failures, *cli.failures)],
    "display": [new_acme_mem_driver().descriptor().display_name,
                new_acme_cli_driver().descriptor().display_name],
}))
"""


def test_generated_projects_pass_the_suite_at_level_live(tmp_path: Path) -> None:
    display = 'Odd "name" \\ ünï'
    for name, template in (("acme_mem", "memory"), ("acme_cli", "cli")):
        write_project(tmp_path / name, render(template, project_names(name, display)))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(str(tmp_path / n) for n in ("acme_mem", "acme_cli")),
    }
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            textwrap.dedent(CHECK_BOTH),
            str(tmp_path / "acme_cli" / "tests" / "x"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["failures"] == []
    assert result["levels"] == ["full", "live"]  # full: resume and native structured output too
    assert result["display"] == [display, display]


def test_the_driver_guide_quotes_the_generated_cli_test() -> None:
    guide = (Path(__file__).resolve().parents[2] / "docs" / "writing-a-driver.md").read_text()
    generated = render("cli", project_names("acme_driver"))["tests/test_conformance.py"]
    blocks = re.findall(r"```python\n(.*?)```", guide, re.S)
    quoted = next(block for block in blocks if "replay_config" in block)
    assert [line for line in quoted.splitlines() if line not in generated.splitlines()] == []
    assert "tests/test_acme_driver.py" in guide
    assert "tests/test_acme_driver.py" in render("cli", project_names("acme_driver"))


def test_the_driver_guide_quotes_the_generated_drift_option() -> None:
    guide = (Path(__file__).resolve().parents[2] / "docs" / "writing-a-driver.md").read_text()
    generated = render("cli", project_names("acme_driver"))["acme_driver/_conformance.py"]
    blocks = re.findall(r"```python\n(.*?)```", guide, re.S)
    quoted = next(block for block in blocks if "def drift_option" in block)
    assert [line for line in quoted.splitlines() if line not in generated.splitlines()] == []
    assert "replaying()" not in guide
    for missing in ("new_driver(RECORDED)", "FIXTURES", "MyConfig"):
        assert missing not in guide


def test_check_drift_runs_on_a_generated_cli_project(tmp_path: Path) -> None:
    write_project(tmp_path / "acme_cli", render("cli", project_names("acme_cli")))
    check = ["check", "acme_cli:new_acme_cli_driver", "--drift", "--clause", "DFT"]
    done = subprocess.run(
        [sys.executable, "-m", "adaptertest", *check],
        cwd=tmp_path / "acme_cli",
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (
        f"acme-cli: 3 passed; level: none (partial run: 3 of {len(CLAUSES)} clauses)" in done.stdout
    )
