"""The kit as an outside project gets it: the built wheel in a fresh virtualenv.

- The base install serves ``driver`` and ``referencedriver`` with neither the suite
  nor its test stack, and the pytest plugin stays harmless there.
- With the ``test`` extra, ``adaptertest new`` writes both templates, each installs
  and passes its own tests at level live, and no ``reference`` is left in them; the
  example drivers install with ``pip install -e``.
- Every example directory holds an installable package (a quick check of the files).

The first two are marked slow (a wheel build and pip installs; pip reuses its cache, and
packages come from the package index only): deselect them with ``-m "not slow"``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
INSTALL_TIMEOUT = 600.0  # seconds; pip may download from the package index


def clean_env() -> dict[str, str]:
    """This environment without what would point a child at this checkout or venv."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def run(*argv: str | Path, cwd: Path | None = None, timeout: float = 300.0) -> str:
    """Run a command outside this checkout's environment; its stdout, or a failed test."""
    done = subprocess.run(
        [str(a) for a in argv],
        cwd=cwd,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(f"{argv} exited {done.returncode}\n{done.stdout}\n{done.stderr}")
    return done.stdout


def pip_install(python: Path, *args: str | Path) -> None:
    """This environment's pip installing into ``python``'s (which has no pip of its own)."""
    run(
        sys.executable,
        "-m",
        "pip",
        "--python",
        python,
        "install",
        "--quiet",
        *args,
        timeout=INSTALL_TIMEOUT,
    )


def fresh_venv(path: Path) -> Path:
    """An empty virtualenv (no pip, no site packages); returns its python."""
    run(sys.executable, "-m", "venv", "--without-pip", path)
    return path / "bin" / "python"


@pytest.fixture(scope="module")
def kit_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The kit's wheel, built from this checkout."""
    out = tmp_path_factory.mktemp("wheel")
    # Without build isolation when hatchling is here (the dev extra has it): no download.
    isolation = ["--no-build-isolation"] if importlib.util.find_spec("hatchling") else []
    run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", *isolation, "-w", out, ROOT)
    (wheel,) = out.glob("agent_driver_kit-*.whl")
    return wheel


BASE_SCRIPT = """
import importlib.util
import anyio
import driver.clikit
from driver import Request
from referencedriver import new_reference_driver

class Sink:
    def __init__(self): self.events, self.stream = [], []
    def emit(self, event): self.events.append(event)
    def emit_stream(self, payload): self.stream.append(payload)

sink = Sink()
response = anyio.run(new_reference_driver().run, Request(prompt="hi", streaming=True), sink)
assert response.output == "Reference reply: hi", response.output
assert response.checkpoint is not None and response.checkpoint.valid
assert [p.kind for p in sink.stream][-1] == "run.finished"
absent = [m for m in ("pytest", "hypothesis", "jsonschema", "rich") if importlib.util.find_spec(m)]
assert absent == [], absent
try:
    import adaptertest
except ImportError as exc:
    print(exc)
else:
    raise AssertionError("adaptertest imported without the test extra")
"""


@pytest.mark.slow
def test_base_install_serves_the_driver_without_the_suite(kit_wheel: Path, tmp_path: Path) -> None:
    python = fresh_venv(tmp_path / "venv")
    pip_install(python, kit_wheel)
    message = run(python, "-c", BASE_SCRIPT)
    assert "pip install 'agent-driver-kit[test]'" in message
    assert "missing: pytest, hypothesis, jsonschema, rich" in message

    # pytest without the rest of the extra: the plugin entry point loads, and stays empty.
    pip_install(python, "pytest")
    (tmp_path / "proj" / "test_plain.py").parent.mkdir()
    (tmp_path / "proj" / "test_plain.py").write_text("def test_plain():\n    assert True\n")
    out = run(
        python, "-m", "pytest", "-p", "no:cacheprovider", "--trace-config", cwd=tmp_path / "proj"
    )
    assert "1 passed" in out
    assert "_adaptertest_plugin.py" in out  # registered, inert
    assert "adaptertest/pytest_plugin.py" not in out


def project_files(root: Path) -> list[Path]:
    """What ``adaptertest new`` wrote, without what installing and testing added."""
    skip = ("__pycache__", ".pytest_cache", ".hypothesis")
    return [
        p
        for p in root.rglob("*")
        if p.is_file()
        and not any(s in p.parts or s in p.name for s in skip)
        and ".egg-info" not in str(p)
        and p.name != "report.json"
    ]


@pytest.mark.slow
def test_new_projects_install_from_the_wheel_and_pass_at_level_live(
    kit_wheel: Path, tmp_path: Path
) -> None:
    python = fresh_venv(tmp_path / "venv")
    # hatchling and editables: the projects below build here, without build isolation.
    pip_install(python, f"{kit_wheel}[test]", "hatchling", "editables")
    adaptertest = python.parent / "adaptertest"  # the console script
    projects = {"acme_mem": "memory", "acme_cli": "cli"}
    for name, template in projects.items():
        run(adaptertest, "new", name, "--template", template, "--dir", tmp_path / name)
    examples = sorted(p.parent for p in (ROOT / "examples").glob("*/pyproject.toml"))
    assert [p.name for p in examples] == ["claude_driver", "codex_driver", "gemini_driver"]
    editable = [arg for p in [*(tmp_path / n for n in projects), *examples] for arg in ("-e", p)]
    pip_install(python, "--no-build-isolation", *editable)

    # Both projects' own tests at once, each from its own folder with its own config.
    pytest_argv: list[str | Path] = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    running = {
        name: subprocess.Popen(
            [*pytest_argv, "--adaptertest-report=report.json"],
            cwd=tmp_path / name,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=clean_env(),
        )
        for name in projects
    }
    for name, process in running.items():
        out, _ = process.communicate(timeout=INSTALL_TIMEOUT)
        assert process.returncode == 0, out
        report = json.loads((tmp_path / name / "report.json").read_text())
        (entry,) = report["drivers"]
        assert entry["complete"], out
        assert entry["ok"], out
        # full: the memory driver also declares resume and native structured output.
        assert entry["level"] == ("full" if projects[name] == "memory" else "live"), out
        for path in project_files(tmp_path / name):
            text = f"{path.relative_to(tmp_path)}\n{path.read_text(encoding='utf-8')}"
            assert not re.search("reference", text, re.I), path

    examples_import = (
        "from claude_driver import ClaudeDriver; from codex_driver import CodexDriver; "
        "from gemini_driver import GeminiDriver; "
        "print(*(d().descriptor().type for d in (ClaudeDriver, CodexDriver, GeminiDriver)))"
    )
    assert run(python, "-c", examples_import).split() == ["claude-code", "codex", "gemini-cli"]


def test_every_example_is_an_installable_package() -> None:
    packages = sorted(p.parent for p in (ROOT / "examples").glob("*/*/__init__.py"))
    assert packages, "no example packages found"
    for package in packages:
        pyproject = tomllib.loads((package.parent / "pyproject.toml").read_text())
        assert pyproject["project"]["name"] == package.name.replace("_", "-")
        assert pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == [package.name]
        assert pyproject["project"]["dependencies"] == ["agent-driver-kit>=0.1.0,<0.2"]
