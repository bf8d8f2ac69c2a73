"""The kit without its ``test`` extra: what works, and what says the extra is missing.

Each test runs a fresh interpreter without ``site`` (``python -S``) whose path is a
copy of this environment's site-packages made of symlinks, less the files of the
hidden distributions: for that process they are not installed (no modules, no
metadata, no entry points). ``tests/test_packaging.py`` checks the same on a real
base install of the wheel.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import site
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import adaptertest
from adaptertest import _extra
from adaptertest.cli import NEEDS, build_parser

SUITE_NAMES = {"test_driver", "check_driver"}
MESSAGE = "needs the kit's test extra; missing: "
KIT = Path(adaptertest.__file__).resolve().parents[1]


BASE = ("pytest", "hypothesis", "jsonschema", "rich", "uvicorn", "detect_secrets")
"""The test extra's distributions: hidden, what remains is the base install."""


def _site_without(hidden: tuple[str, ...], out: Path) -> Path:
    """``out``: this environment's site-packages as symlinks, less ``hidden``'s files."""
    skip = {"..", "__pycache__"}
    for name in hidden:
        skip.update(f.parts[0] for f in importlib.metadata.distribution(name).files or ())
    out.mkdir()
    for site_dir in map(Path, site.getsitepackages()):
        for entry in site_dir.iterdir() if site_dir.is_dir() else ():
            if entry.name not in skip and not (out / entry.name).exists():
                (out / entry.name).symlink_to(entry)
    return out


Runner = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def python_without(tmp_path_factory: pytest.TempPathFactory) -> Runner:
    """``run(hidden, cwd, *argv)``: ``python -S *argv`` where ``hidden`` is not installed."""
    sites: dict[tuple[str, ...], Path] = {}
    editable = not str(KIT).startswith(tuple(site.getsitepackages()))

    def run(hidden: tuple[str, ...], cwd: Path, *argv: str) -> subprocess.CompletedProcess[str]:
        if hidden not in sites:
            sites[hidden] = _site_without(hidden, tmp_path_factory.mktemp("site") / "packages")
        paths = [str(sites[hidden]), *([str(KIT)] if editable else [])]
        return subprocess.run(
            [sys.executable, "-S", *argv],
            cwd=cwd,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(paths)},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    return run


IMPORTS = """
import importlib, json, sys
import adaptertest
result = {"ok": [], "errors": {}}
for name in adaptertest.__all__:
    try:
        getattr(adaptertest, name)
    except ImportError as exc:
        result["errors"][name] = [type(exc).__name__, exc.name, str(exc)]
    else:
        result["ok"].append(name)
print(json.dumps(result))
"""


def test_import_adaptertest_works_and_only_the_suite_needs_the_extra(
    python_without: Runner, tmp_path: Path
) -> None:
    done = python_without(BASE, tmp_path, "-c", IMPORTS)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert set(result["errors"]) == SUITE_NAMES
    assert set(result["ok"]) == set(adaptertest.__all__) - SUITE_NAMES
    kind, name, text = result["errors"]["check_driver"]
    assert (kind, name) == ("ModuleNotFoundError", "hypothesis")
    assert f"adaptertest.check_driver {MESSAGE}hypothesis, jsonschema. " in text
    assert _extra.INSTALL in text
    kind, name, text = result["errors"]["test_driver"]
    assert (kind, name) == ("ModuleNotFoundError", "pytest")
    assert f"adaptertest.test_driver {MESSAGE}pytest, hypothesis, jsonschema. " in text


def test_a_partial_extra_names_only_what_is_missing(python_without: Runner, tmp_path: Path) -> None:
    code = "import adaptertest\nadaptertest.test_driver"
    done = python_without(("jsonschema",), tmp_path, "-c", code)
    assert done.returncode == 1
    assert f"ModuleNotFoundError: adaptertest.test_driver {MESSAGE}jsonschema. " in done.stderr


@pytest.mark.parametrize(
    ("argv", "absent"),
    [
        (["check", "referencedriver:new_reference_driver"], "hypothesis, jsonschema, rich"),
        (["clauses"], "rich"),
    ],
)
def test_suite_commands_exit_2_naming_the_extra(
    python_without: Runner, tmp_path: Path, argv: list[str], absent: str
) -> None:
    done = python_without(BASE, tmp_path, "-m", "adaptertest", *argv)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr == (
        f"adaptertest {argv[0]}: error: this command {MESSAGE}{absent}. Install it with: "
        f"{_extra.INSTALL} (the base install serves driver and referencedriver)\n"
    )


def test_standard_library_commands_run_on_the_base_install(
    python_without: Runner, tmp_path: Path
) -> None:
    recording = tmp_path / "t.jsonl"
    recording.write_text('{"type": "hello"}\n')
    done = python_without(BASE, tmp_path, "-m", "adaptertest", "replay", str(recording))
    assert (done.returncode, done.stdout) == (0, '{"type": "hello"}\n'), done.stderr

    done = python_without(BASE, tmp_path, "-m", "adaptertest", "new", "acme_base")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "acme_base" / "acme_base" / "_driver.py").is_file()

    done = python_without(BASE, tmp_path, "-m", "adaptertest", "--help")
    assert done.returncode == 0, done.stderr
    assert "check" in done.stdout
    assert "new" in done.stdout


def _commands() -> list[str]:
    (action,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return sorted(action.choices)


@pytest.mark.parametrize("command", [c for c in _commands() if c not in NEEDS])
def test_every_other_command_loads_on_the_base_install(
    python_without: Runner, tmp_path: Path, command: str
) -> None:
    done = python_without(BASE, tmp_path, "-m", "adaptertest", command, "--help")
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert done.stdout.startswith("usage: ")


def test_pytest_plugin_is_inert_without_the_rest_of_the_extra(
    python_without: Runner, tmp_path: Path
) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\nfilterwarnings = error\n")
    (tmp_path / "test_plain.py").write_text("def test_plain():\n    assert True\n")
    hidden = ("hypothesis", "jsonschema", "rich")
    argv = ["-m", "pytest", "-p", "no:cacheprovider", "--trace-config"]
    done = python_without(hidden, tmp_path, *argv)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert "adaptertest/pytest_plugin.py" in done.stdout  # loaded through its entry point
    assert not [line for line in done.stdout.splitlines() if line.startswith("adaptertest")]


def test_emulate_without_uvicorn_names_the_test_extra(
    python_without: Runner, tmp_path: Path
) -> None:
    done = python_without(BASE, tmp_path, "-m", "adaptertest", "emulate", "--help")
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    done = python_without(BASE, tmp_path, "-m", "adaptertest", "emulate")
    assert done.returncode == 2
    assert "adaptertest emulate: error: this command needs the kit's test extra" in done.stderr
    assert "uvicorn" in done.stderr


def test_acpkit_without_the_acp_extra_names_the_extra(
    python_without: Runner, tmp_path: Path
) -> None:
    done = python_without(("agent-client-protocol",), tmp_path, "-c", "import driver.acpkit")
    assert done.returncode != 0
    assert "pip install 'agent-driver-kit[acp]'" in done.stderr
    assert "import driver.clikit" not in done.stderr
