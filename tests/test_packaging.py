"""The kit as an outside project gets it: the built wheel in a fresh virtualenv.

- The base install serves ``driver`` and ``referencedriver`` without the test stack;
  ``import adaptertest`` and the standard-library commands work there, the suite says
  what is missing, and the pytest plugin stays inert.
- With the ``test`` extra, ``adaptertest new`` writes both templates, each installs
  and passes its own tests at level live, and no ``reference`` is left in them; the
  example drivers install with ``pip install -e``.
- Every example directory holds an installable package (a quick check of the files).

No network: pip runs with ``--no-index`` and finds every dependency in a wheelhouse
made for the session from the distributions installed here (each repacked from its
installed files), chosen by walking the wheel's own requirement metadata. pip still
resolves that metadata itself, so the base install proves it pulls in no test stack.
The first two tests are marked slow (a wheel build and pip installs): deselect them
with ``-m "not slow"``.
"""

from __future__ import annotations

import base64
import email.parser
import hashlib
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from driver.acpkit import ACPDriver

ROOT = Path(__file__).resolve().parent.parent
KIT = "agent-driver-kit"
INSTALL_TIMEOUT = 300.0  # seconds; generous for a loaded machine, all files are local

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
BUILD = [
    *map(Requirement, PYPROJECT["build-system"]["requires"]),
    # hatchling builds editable installs with it; pip without build isolation does not
    # install build requirements, so the projects' editable installs need it at hand.
    Requirement("editables"),
]
"""What builds the kit's wheel and the generated projects (which use the same backend)."""


def clean_env() -> dict[str, str]:
    """This environment without what would point a child at this checkout, venv or an index."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "PIP_"))
    }
    env["PIP_CONFIG_FILE"] = os.devnull  # no configured index, find-links or constraints
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def run(
    *argv: str | Path, cwd: Path | None = None, timeout: float = 300.0, status: int = 0
) -> subprocess.CompletedProcess[str]:
    """Run a command outside this checkout's environment; a failed test unless it exits
    with ``status``."""
    done = subprocess.run(
        [str(a) for a in argv],
        cwd=cwd,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != status:
        pytest.fail(f"{argv} exited {done.returncode}\n{done.stdout}\n{done.stderr}")
    return done


def pip(command: str, *args: str | Path, python: Path | None = None) -> str:
    """This environment's pip, offline (``--no-index``), acting on ``python``'s environment."""
    target: list[str | Path] = ["--python", python] if python is not None else []
    options = ["--quiet", "--no-index", "--no-cache-dir"]
    argv = [sys.executable, "-m", "pip", *target, command, *options, *args]
    return run(*argv, timeout=INSTALL_TIMEOUT).stdout


def fresh_venv(path: Path) -> Path:
    """An empty virtualenv (no pip, no site packages); returns its python."""
    run(sys.executable, "-m", "venv", "--without-pip", path)
    return path / "bin" / "python"


# -- the wheelhouse ------------------------------------------------------------------------


def needed(requirements: Iterable[str], extras: Iterable[str] = ()) -> Iterator[Requirement]:
    """The requirements whose markers hold here, for the base install or any of ``extras``."""
    contexts = ("", *extras)
    for text in requirements:
        req = Requirement(text)
        if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in contexts):
            yield req


def installed_closure(roots: Iterable[Requirement]) -> list[importlib.metadata.Distribution]:
    """The installed distributions ``roots`` need, transitively; a failed test if one is not."""
    found: dict[str, importlib.metadata.Distribution] = {}
    seen: set[tuple[str, frozenset[str]]] = set()
    problems: list[str] = []
    queue = list(roots)
    while queue:
        req = queue.pop()
        name = canonicalize_name(req.name)
        if (name, frozenset(req.extras)) in seen or name == KIT:
            continue
        seen.add((name, frozenset(req.extras)))
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            problems.append(f"{req} is not installed")
            continue
        if not req.specifier.contains(dist.version, prereleases=True):
            problems.append(f"{req} is not satisfied by the installed {dist.version}")
            continue
        found[name] = dist
        queue.extend(needed(dist.requires or (), req.extras))
    if problems:
        pytest.fail(
            "the offline wheelhouse is made from installed distributions; "
            f"install the dev extra (python -m pip install -e '.[dev]'): {'; '.join(problems)}"
        )
    return [found[name] for name in sorted(found)]


UNPACKED = {"INSTALLER", "REQUESTED", "direct_url.json", "RECORD"}
"""What an installer added to a .dist-info (RECORD is written anew)."""


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return f"sha256={digest.decode()}"


def repack(dist: importlib.metadata.Distribution, out: Path) -> Path:
    """``dist`` as installed, packed back into a wheel in ``out``.

    Only files inside site-packages (scripts are regenerated from ``entry_points.txt``),
    without bytecode caches, and with a new RECORD.
    """
    if dist.files is None:
        pytest.fail(f"{dist.metadata['Name']} has no RECORD; it cannot be repacked as a wheel")
    files = [f for f in dist.files if f.parts[0] != ".." and "__pycache__" not in f.parts]
    (info,) = {
        f.parts[0] for f in files if f.name == "METADATA" and f.parts[0].endswith(".dist-info")
    }
    direct_url = dist.read_text("direct_url.json")
    if direct_url and json.loads(direct_url).get("dir_info", {}).get("editable"):
        pytest.fail(f"{info} is an editable install; it cannot be repacked as a wheel")
    wheel_meta = email.parser.Parser().parsestr(dist.read_text("WHEEL") or "")
    tags = [tag.split("-") for tag in wheel_meta.get_all("Tag") or ()]
    if not tags:
        pytest.fail(f"{info}/WHEEL names no tag")
    tag = "-".join(".".join(dict.fromkeys(t[i] for t in tags)) for i in range(3))
    name = canonicalize_name(dist.metadata["Name"]).replace("-", "_")
    wheel = out / f"{name}-{dist.version}-{tag}.whl"
    record: list[str] = []
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_STORED) as archive:
        for path in files:
            if path.parts[0] == info and path.name in UNPACKED:
                continue
            data = Path(str(dist.locate_file(path))).read_bytes()
            archive.writestr(str(path), data)
            record.append(f"{path},{_record_hash(data)},{len(data)}")
        record.append(f"{info}/RECORD,,")
        archive.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return wheel


@pytest.fixture(scope="session")
def kit_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The kit's wheel, built from this checkout with the hatchling installed here."""
    installed_closure(BUILD)  # fails clearly without hatchling
    out = tmp_path_factory.mktemp("wheel")
    pip("wheel", "--no-deps", "--no-build-isolation", "-w", out, ROOT)
    (wheel,) = out.glob("agent_driver_kit-*.whl")
    return wheel


@pytest.fixture(scope="session")
def wheelhouse(kit_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every distribution the tests install: the wheel's base requirements, its ``test``
    extra, and hatchling and editables for the generated projects' editable installs."""
    with zipfile.ZipFile(kit_wheel) as archive:
        (metadata,) = (n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        requires = email.parser.Parser().parsestr(archive.read(metadata).decode())
    extras = ["test", "trio", "acp"]
    roots = [*needed(requires.get_all("Requires-Dist") or (), extras=extras), *BUILD]
    out = tmp_path_factory.mktemp("wheelhouse")
    for dist in installed_closure(roots):
        repack(dist, out)
    return out


def pip_install(python: Path, wheelhouse: Path, *args: str | Path) -> None:
    """Install into ``python``'s environment (which has no pip) from ``wheelhouse`` only."""
    pip("install", "--no-compile", "--find-links", wheelhouse, *args, python=python)


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
present = [m for m in ("pytest", "hypothesis", "jsonschema", "rich") if importlib.util.find_spec(m)]
assert present == [], present
import adaptertest
assert adaptertest.Options().live_run is False
try:
    adaptertest.check_driver
except ModuleNotFoundError as exc:
    print(exc)
else:
    raise AssertionError("the suite ran without the test extra")
"""


@pytest.mark.slow
def test_base_install_serves_the_driver_without_the_suite(
    kit_wheel: Path, wheelhouse: Path, tmp_path: Path
) -> None:
    python = fresh_venv(tmp_path / "venv")
    pip_install(python, wheelhouse, kit_wheel)
    message = run(python, "-c", BASE_SCRIPT).stdout
    assert "adaptertest.check_driver needs the kit's test extra" in message
    assert "missing: hypothesis, jsonschema. " in message
    assert "python -m pip install 'agent-driver-kit[test]'" in message

    # The standard-library commands run; the suite's say what is missing, exit status 2.
    (tmp_path / "t.jsonl").write_text('{"type": "hello"}\n')
    replay = run(python, "-m", "adaptertest", "replay", tmp_path / "t.jsonl")
    assert replay.stdout == '{"type": "hello"}\n'
    run(python.parent / "adaptertest", "new", "acme_base", "--dir", tmp_path / "acme_base")
    assert (tmp_path / "acme_base" / "acme_base" / "_driver.py").is_file()
    check = run(
        python, "-m", "adaptertest", "check", "referencedriver:new_reference_driver", status=2
    )
    assert "adaptertest check: error: this command needs the kit's test extra" in check.stderr
    assert "missing: hypothesis, jsonschema, rich. " in check.stderr

    # pytest without the rest of the extra: the plugin entry point loads, and stays empty.
    pip_install(python, wheelhouse, "pytest")
    (tmp_path / "proj" / "test_plain.py").parent.mkdir()
    (tmp_path / "proj" / "test_plain.py").write_text("def test_plain():\n    assert True\n")
    out = run(
        python, "-m", "pytest", "-p", "no:cacheprovider", "--trace-config", cwd=tmp_path / "proj"
    ).stdout
    assert "1 passed" in out
    assert "adaptertest/pytest_plugin.py" in out  # registered
    assert not [line for line in out.splitlines() if line.startswith("adaptertest")]  # inert


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
    kit_wheel: Path, wheelhouse: Path, tmp_path: Path
) -> None:
    python = fresh_venv(tmp_path / "venv")
    # hatchling and editables: the projects below build here, without build isolation.
    pip_install(python, wheelhouse, f"{kit_wheel}[test]", "hatchling", "editables")
    adaptertest = python.parent / "adaptertest"  # the console script
    projects = {"acme_mem": "memory", "acme_cli": "cli"}
    for name, template in projects.items():
        run(adaptertest, "new", name, "--template", template, "--dir", tmp_path / name)
    examples = sorted(p.parent for p in (ROOT / "examples").glob("*/pyproject.toml"))
    assert [p.name for p in examples] == [
        "acp_driver",
        "claude_driver",
        "codex_driver",
        "gemini_driver",
    ]
    # Each project with its own test extra (the suite on both backends), as its README says.
    targets = [*(f"{tmp_path / n}[test]" for n in projects), *map(str, examples)]
    editable = [arg for target in targets for arg in ("-e", target)]
    pip_install(python, wheelhouse, "--no-build-isolation", *editable)

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
        # The cli project also runs the drift probe in a class of its own.
        assert all(e["ok"] for e in report["drivers"]), out
        (entry,) = (e for e in report["drivers"] if not e["name"].endswith("UnderDrift"))
        assert entry["complete"], out
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
    assert run(python, "-c", examples_import).stdout.split() == [
        "claude-code",
        "codex",
        "gemini-cli",
    ]


def test_every_example_is_an_installable_package() -> None:
    packages = sorted(p.parent for p in (ROOT / "examples").glob("*/*/__init__.py"))
    assert packages, "no example packages found"
    for package in packages:
        pyproject = tomllib.loads((package.parent / "pyproject.toml").read_text())
        assert pyproject["project"]["name"] == package.name.replace("_", "-")
        assert pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == [package.name]
        module = importlib.import_module(package.name)
        drivers = [
            v for v in vars(module).values() if isinstance(v, type) and "Driver" in v.__name__
        ]
        if any(issubclass(d, ACPDriver) for d in drivers):
            # An ACP driver needs the official ACP SDK, which the acp extra brings.
            kit = "agent-driver-kit[acp]"
        else:
            # A driver that declares native structured output needs clikit's jsonschema.
            native = any(d().descriptor().structured_output.json_schema_native for d in drivers)
            kit = "agent-driver-kit[clikit]" if native else "agent-driver-kit"
        assert pyproject["project"]["dependencies"] == [f"{kit}>=0.1.0,<0.2"], package.name


@pytest.mark.slow
def test_a_new_project_installs_and_passes_by_the_printed_next_steps(
    kit_wheel: Path, wheelhouse: Path, tmp_path: Path
) -> None:
    """From an empty folder and a fresh venv with pip, the kit installed from its wheel:
    the commands ``new`` prints, run as printed, install the cli project and pass."""
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", venv, timeout=INSTALL_TIMEOUT)
    python = venv / "bin" / "python"
    pip_install(python, wheelhouse, f"{kit_wheel}[test,trio]")
    work = tmp_path / "empty"
    work.mkdir()
    env = {
        **clean_env(),
        "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        # Offline: the printed pip commands find everything in the wheelhouse.
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheelhouse),
    }

    def shell(script: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", "-c", script],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT * 2,
            check=False,
        )

    new = shell("adaptertest new acme_cli --template cli")
    assert new.returncode == 0, new.stderr
    lines = new.stdout.splitlines()
    steps = [line.strip() for line in lines[lines.index("next:") + 1 :]]
    assert steps[0] == "cd acme_cli"
    assert steps[1] == f"python -m pip install '{kit_wheel}[test,trio]'"
    readme = (work / "acme_cli" / "README.md").read_text(encoding="utf-8")
    # The README names the project's own steps; where this kit came from is printed by
    # `new` only, no path of this machine goes into a file that is committed.
    assert "\n".join(steps[2:]) in readme
    assert str(kit_wheel) not in readme
    done = shell(" && ".join(steps))
    assert done.returncode == 0, f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    assert " passed" in done.stdout
    assert " failed" not in done.stdout
