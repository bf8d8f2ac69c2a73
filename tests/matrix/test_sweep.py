"""The release sweep with a fake registry, installer and tier: order, resume, disk, marks."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from adaptertest.cli import main
from adaptertest.matrix._command import main as matrix_main
from adaptertest.matrix._sweep import SweepError, command_for, parse_shard, shard_of, sweep
from driver.clikit._versions import RangeError, in_range, last_stable

PUBLISHED = ["0.9.0", "1.0.0", "1.1.0-beta.1", "1.1.0", "1.2.0", "1.10.0", "1.3.0"]
PUBLISHED_ORDER = ["1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.10.0"]
"""The five newest stable releases of :data:`PUBLISHED`, oldest first."""


@pytest.fixture
def lock(tmp_path: Path) -> Path:
    path = tmp_path / "cli-versions.json"
    spec = {"package": "@acme/toy-cli", "version": "1.2.0", "bin": "toy"}
    path.write_text(json.dumps({"toy": spec}), "utf-8")
    return path


class Tier:
    """Writes the reference report for each release; release 1.10.0 breaks EVT-03."""

    def __init__(self, doc: dict[str, Any], stop_at: str | None = None) -> None:
        self.doc = doc
        self.stop_at = stop_at
        self.ran: list[str] = []

    def __call__(self, command: Sequence[str], env: Mapping[str, str]) -> int:
        version = env["ADAPTERTEST_CLI_VERSION_TOY"]
        if version == self.stop_at:
            raise KeyboardInterrupt
        self.ran.append(version)
        report = Path(command[-1].removeprefix("--adaptertest-report="))
        doc = copy.deepcopy(self.doc)
        if version == "1.10.0":
            for clause in doc["drivers"][0]["clauses"]:
                if clause["id"] == "EVT-03":
                    clause["status"] = "failed"
                    clause["messages"] = ["EVT-03: the delta was empty"]
        report.write_text(json.dumps(doc), "utf-8")
        return 1 if version == "1.10.0" else 0


def _installer(root: Path) -> Any:
    def install(name: str, version: str, given: Path | None) -> Path:
        prefix = root / f"{name}-{version}"
        prefix.mkdir(parents=True, exist_ok=True)
        return prefix / "node_modules/.bin/toy"

    return install


def test_versions_are_ordered_numerically_and_ranges_hold() -> None:
    assert last_stable(PUBLISHED, 3) == ["1.2.0", "1.3.0", "1.10.0"]
    assert last_stable(PUBLISHED, 50)[0] == "0.9.0"
    assert in_range("1.10.0", ">=1.2,<2")
    assert not in_range("1.1.0", ">=1.2,<2")
    assert not in_range("1.2.0-rc.1", ">=1")
    with pytest.raises(RangeError, match=r"cannot read '~1\.2'"):
        in_range("1.2.0", ">=1,~1.2")
    with pytest.raises(RangeError, match="empty"):
        in_range("1.2.0", " ")
    with pytest.raises(ValueError, match="at least 1"):
        last_stable(PUBLISHED, 0)


def test_report_path_placeholder_or_appended(tmp_path: Path) -> None:
    report = tmp_path / "r.json"
    assert command_for(["pytest", "t.py"], report) == [
        "pytest",
        "t.py",
        f"--adaptertest-report={report}",
    ]
    assert command_for(["run", "--out={report}"], report) == ["run", f"--out={report}"]


def test_sweep_runs_each_release_and_writes_the_matrix(
    tmp_path: Path, lock: Path, reference_doc: dict[str, Any]
) -> None:
    tier = Tier(reference_doc)
    root = tmp_path / "clis"
    out = tmp_path / "sweep"
    releases = sweep(
        "toy",
        ["pytest", "tier.py"],
        out,
        last=3,
        supported=">=1.3",
        keep=1,
        root=root,
        lock=lock,
        runner=tier,
        installer=_installer(root),
        lister=lambda package: PUBLISHED,
        log=lambda line: None,
    )
    assert tier.ran == ["1.2.0", "1.3.0", "1.10.0"]
    assert [(r.version, r.supported, r.exit_code) for r in releases] == [
        ("1.2.0", False, 0),
        ("1.3.0", True, 0),
        ("1.10.0", True, 1),
    ]
    # Disk: the locked release (1.2.0) and the newest swept one stay; 1.3.0 was removed.
    assert sorted(p.name for p in root.iterdir()) == ["toy-1.10.0", "toy-1.2.0"]
    summary = json.loads((out / "matrix.json").read_text("utf-8"))
    assert [c["cli_version"] for c in summary["columns"]] == ["1.2.0", "1.3.0", "1.10.0"]
    assert summary["columns"][0]["labels"]["supported"] == "no"
    assert summary["differing"] == ["EVT-03"]
    assert "outside supported range" in (out / "matrix.md").read_text("utf-8")
    # The columns name their reports relative to the sweep's folder, not by the full path.
    assert [c["source"] for c in summary["columns"]] == [
        "reports/toy-1.2.0.json",
        "reports/toy-1.3.0.json",
        "reports/toy-1.10.0.json",
    ]
    assert str(tmp_path) not in (out / "matrix.html").read_text("utf-8")


def test_an_interrupted_sweep_resumes_where_it_stopped(
    tmp_path: Path, lock: Path, reference_doc: dict[str, Any]
) -> None:
    root = tmp_path / "clis"
    out = tmp_path / "sweep"
    common: dict[str, Any] = {
        "last": 3,
        "root": root,
        "lock": lock,
        "installer": _installer(root),
        "lister": lambda package: PUBLISHED,
        "log": lambda line: None,
    }
    first = Tier(reference_doc, stop_at="1.10.0")
    with pytest.raises(KeyboardInterrupt):
        sweep("toy", ["pytest"], out, runner=first, **common)
    assert first.ran == ["1.2.0", "1.3.0"]
    state = json.loads((out / "sweep.json").read_text("utf-8"))
    assert [r["version"] for r in state["releases"]] == ["1.2.0", "1.3.0"]
    second = Tier(reference_doc)
    releases = sweep("toy", ["pytest"], out, runner=second, **common)
    assert second.ran == ["1.10.0"]
    assert [r.version for r in releases] == ["1.2.0", "1.3.0", "1.10.0"]


def test_a_release_that_fails_to_install_is_noted_and_skipped(
    tmp_path: Path, lock: Path, reference_doc: dict[str, Any]
) -> None:
    def installer(name: str, version: str, root: Path | None) -> Path:
        if version == "1.3.0":
            raise RuntimeError("npm: ETARGET")
        return tmp_path

    tier = Tier(reference_doc)
    releases = sweep(
        "toy",
        ["pytest"],
        tmp_path / "out",
        versions=["1.2.0", "1.3.0"],
        lock=lock,
        runner=tier,
        installer=installer,
        log=lambda line: None,
    )
    assert tier.ran == ["1.2.0"]
    assert releases[1].note == "install failed: npm: ETARGET"
    assert releases[1].report is None


def test_shards_split_the_releases_between_them_old_and_new_alike() -> None:
    releases = ["1.0", "1.1", "1.2", "1.3", "1.4", "1.5", "1.6"]
    shares = [shard_of(releases, (index, 3)) for index in (1, 2, 3)]
    assert shares == [["1.0", "1.3", "1.6"], ["1.1", "1.4"], ["1.2", "1.5"]]
    assert shard_of(releases, None) == releases
    assert shard_of(releases[:2], (3, 3)) == []
    assert parse_shard("2/4") == (2, 4)
    for bad in ("0/3", "4/3", "2", "a/b", "1/0", "-1/2"):
        with pytest.raises(SweepError, match="1 <= I <= N"):
            parse_shard(bad)


def test_sharded_sweeps_merge_into_the_matrix_of_the_whole_sweep(
    tmp_path: Path, lock: Path, reference_doc: dict[str, Any]
) -> None:
    """Two shards, as two CI jobs would run them (each with its own cache and folder);
    ``adaptertest matrix`` over both shards' reports, in release order, is the matrix a
    single sweep writes."""
    ran: list[list[str]] = []
    for index in (1, 2):
        root = tmp_path / f"clis-{index}"
        tier = Tier(reference_doc)
        sweep(
            "toy",
            ["pytest", "tier.py"],
            tmp_path / f"shard-{index}",
            last=5,
            root=root,
            lock=lock,
            shard=(index, 2),
            runner=tier,
            installer=_installer(root),
            lister=lambda package: PUBLISHED,
            log=lambda line: None,
        )
        ran.append(tier.ran)
    assert ran == [["1.0.0", "1.2.0", "1.10.0"], ["1.1.0", "1.3.0"]]
    second = json.loads((tmp_path / "shard-2" / "matrix.json").read_text("utf-8"))
    assert [c["cli_version"] for c in second["columns"]] == ["1.1.0", "1.3.0"]
    assert "toy: 1.1.0 to 1.3.0 (shard 2/2)" in (tmp_path / "shard-2" / "matrix.md").read_text()
    merged = tmp_path / "merged"
    reports = [
        tmp_path / f"shard-{1 + PUBLISHED_ORDER.index(v) % 2}" / "reports" / f"toy-{v}.json"
        for v in PUBLISHED_ORDER
    ]
    assert matrix_main([*map(str, reports), "--out", str(merged)]) == 0
    summary = json.loads((merged / "matrix.json").read_text("utf-8"))
    assert [c["cli_version"] for c in summary["columns"]] == PUBLISHED_ORDER
    assert summary["differing"] == ["EVT-03"]


def test_a_shard_with_no_release_runs_nothing(
    tmp_path: Path, lock: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "sweep",
            "toy",
            "--versions",
            "1.2.0",
            "--shard",
            "2/2",
            "--out",
            str(tmp_path / "out"),
            "--lock",
            str(lock),
            "--",
            "pytest",
        ]
    )
    assert code == 0
    assert "shard 2/2 holds no release" in capsys.readouterr().out
    assert not (tmp_path / "out").exists()


def test_bad_arguments_fail_before_anything_runs(tmp_path: Path, lock: Path) -> None:
    def never(*args: Any) -> Any:
        raise AssertionError("must not run")

    common: dict[str, Any] = {"lock": lock, "runner": never, "installer": never, "lister": never}
    with pytest.raises(SweepError, match="'nope' is not in the lock file"):
        sweep("nope", ["pytest"], tmp_path, **common)
    with pytest.raises(RangeError):
        sweep("toy", ["pytest"], tmp_path, supported="newest", **common)
    with pytest.raises(SweepError, match="no tier command"):
        sweep("toy", [], tmp_path, **common)


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["--last", "0", "--", "pytest"], "--last must be at least 1"),
        ([], "no tier command"),
        (["--", "pytest"], "is not in the lock file"),
        (["--shard", "3/2", "--", "pytest"], "a shard is I/N with 1 <= I <= N"),
    ],
)
def test_the_command_refuses_bad_input(
    tmp_path: Path, argv: list[str], error: str, capsys: pytest.CaptureFixture[str], lock: Path
) -> None:
    name = "nope" if "lock file" in error else "toy"
    code = main(["sweep", name, "--out", str(tmp_path), "--lock", str(lock), *argv])
    assert code == 2
    assert error in capsys.readouterr().err


def test_the_supported_range_can_come_from_the_driver_class() -> None:
    from adaptertest.matrix._sweep import declared_range

    assert declared_range("claude_driver:ClaudeDriver").startswith(">=")
    assert declared_range(">=1.2") == ">=1.2"
    with pytest.raises(SweepError, match="declares no supported_cli_versions"):
        declared_range("referencedriver:ReferenceDriver")
    with pytest.raises(SweepError, match="cannot import it"):
        declared_range("no_such_module_here:Driver")
