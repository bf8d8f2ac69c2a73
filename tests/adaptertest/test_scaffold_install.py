"""``new``'s next steps and the generated README install the kit from where it came from.

The installed distribution's ``direct_url.json`` (PEP 610) says whether the kit came from
an index (no file: the project's own install finds it there), an editable checkout, a
folder, a wheel or another URL; the printed commands and the README say the same.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from adaptertest import _scaffold
from adaptertest._scaffold import (
    kit_install_command,
    next_steps,
    project_names,
    render,
    write_project,
)

PROJECT_INSTALL = "python -m pip install -e '.[test]' && python -m pytest"


@pytest.mark.parametrize(
    ("direct_url", "command"),
    [
        ("", None),
        ("not json", None),
        (
            {"url": "file:///src/agent-driver-kit", "dir_info": {"editable": True}},
            "python -m pip install -e '/src/agent-driver-kit[test,trio]'",
        ),
        (
            {"url": "file:///src/kit", "dir_info": {}},
            "python -m pip install '/src/kit[test,trio]'",
        ),
        (
            {
                "url": "file:///w/my%20wheels/agent_driver_kit-0.1.0-py3-none-any.whl",
                "archive_info": {"hashes": {"sha256": "00"}},
            },
            "python -m pip install "
            "'/w/my wheels/agent_driver_kit-0.1.0-py3-none-any.whl[test,trio]'",
        ),
        (
            {"url": "https://example.org/kit.tar.gz", "archive_info": {}},
            "python -m pip install 'agent-driver-kit[test,trio] @ https://example.org/kit.tar.gz'",
        ),
    ],
    ids=["index", "unreadable", "editable", "folder", "wheel", "url"],
)
def test_the_kit_install_follows_direct_url(
    direct_url: dict[str, object] | str, command: str | None
) -> None:
    text = direct_url if isinstance(direct_url, str) else json.dumps(direct_url)
    assert kit_install_command(text) == command


def test_next_steps_install_the_kit_and_the_readme_names_no_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The printed steps install the kit from where it came; the README, a committed file,
    holds no path of this machine and its words fit its two commands."""
    wheel = "python -m pip install '/w/agent_driver_kit-0.1.0-py3-none-any.whl[test,trio]'"
    monkeypatch.setattr(_scaffold, "kit_install_command", lambda: wheel)
    steps = next_steps(Path("acme"))
    assert steps == ["cd acme", wheel, PROJECT_INSTALL]
    for template in ("memory", "cli"):
        readme = render(template, project_names("acme"))["README.md"]
        assert "/w/" not in readme
        (block,) = re.findall(r"```sh\n(.*?)```", readme, re.S)
        assert block.splitlines() == [
            PROJECT_INSTALL,
            "python -m adaptertest check acme:new_acme_driver --live",
        ]
        prose = " ".join(readme.split())
        assert "The first command installs the project" in prose
        assert "The second command runs the suite" in prose
        assert "The first line" not in prose
        assert prose.count("The first ") == 1
        assert "path/to/checkout[test,trio]" in prose


def test_the_cli_readme_says_what_snapshot_update_does_and_when() -> None:
    prose = " ".join(render("cli", project_names("acme"))["README.md"].split())
    update = prose[prose.index("--snapshot-update") :]
    for words in ("rewrites the snapshot", "deletes those no test uses", "review the diff"):
        assert words in update, words
    assert "while a clause fails, the update is held back" in update


def test_from_an_index_only_the_project_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_scaffold, "kit_install_command", lambda: None)
    assert next_steps(Path("acme")) == ["cd acme", PROJECT_INSTALL]
    readme = render("cli", project_names("acme"))["README.md"]
    assert f"```sh\n{PROJECT_INSTALL}\n" in readme
    assert "If your package index does not have it" in readme


def test_no_cd_into_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert _scaffold.main(_namespace("acme", Path("."))) == 0
    out = capsys.readouterr().out
    assert "cd ." not in out
    assert out.splitlines()[-1] == f"  {PROJECT_INSTALL}"
    assert next_steps(Path("sub"))[0] == "cd sub"


def test_a_folder_name_with_a_space_is_quoted() -> None:
    assert next_steps(Path("my project"))[0] == "cd 'my project'"


def _namespace(name: str, target: Path) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    _scaffold.add_arguments(parser)
    return parser.parse_args([name, "--dir", str(target)])


@pytest.mark.parametrize("template", ["memory", "cli"])
def test_a_generated_project_has_a_gitignore(template: str) -> None:
    ignore = render(template, project_names("acme_driver"))[".gitignore"].splitlines()
    for entry in ("__pycache__/", ".venv/", ".pytest_cache/", ".hypothesis/", "*.egg-info/"):
        assert entry in ignore
    assert "recordings/" not in ignore  # the recordings and their snapshots are the tests' data


NAMES = ["acme_driver", "zeta_code_driver", "b2_driver", "a"]


@pytest.mark.parametrize("template", ["memory", "cli"])
@pytest.mark.parametrize("name", NAMES)
def test_generated_projects_keep_sorted_exports_and_short_lines(name: str, template: str) -> None:
    project = render(template, project_names(name))
    for path, text in project.items():
        if not path.endswith(".py"):
            continue
        for block in re.findall(r"^__all__ = \[\n(.*?)^\]", text, re.M | re.S):
            exported = re.findall(r'"(\w+)"', block)
            assert exported == sorted(exported, key=_scaffold._isort_key), path
        long = [n for n, line in enumerate(text.splitlines(), 1) if len(line) > 100]
        assert long == [], f"{path}: lines {long} are over 100 characters"


@pytest.mark.parametrize("template", ["memory", "cli"])
def test_generated_projects_pass_ruff(template: str, tmp_path: Path) -> None:
    """ruff's import order (I001), sorted ``__all__`` (RUF022), pyflakes and pycodestyle at
    100 columns, on the project as a standalone repository, for names that move in the
    sort order and change line lengths."""
    pytest.importorskip("ruff")
    for name in NAMES:
        write_project(tmp_path / name, render(template, project_names(name)))
    select = "--select=E,F,W,I,RUF022"
    for name in NAMES:
        done = subprocess.run(
            [sys.executable, "-m", "ruff", "check", "--isolated", select, "--line-length=100", "."],
            cwd=tmp_path / name,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, f"{name}:\n{done.stdout}{done.stderr}"
