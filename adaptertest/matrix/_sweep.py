"""The release sweep: a driver's real-CLI tier against each of the last K releases.

For each release, oldest first: install it into its own cached prefix, run the tier
command with ``ADAPTERTEST_CLI_VERSION_<NAME>`` set to it (the tier's
``realcli.require`` then finds that release), keep the JSON report it writes, and
note the outcome in ``sweep.json``. A release whose report is already there is not
run again, so an interrupted sweep resumes where it stopped. Disk stays bounded:
after its run a release's prefix is removed unless it is the locked version or among
the ``keep`` newest swept. The matrix of every report comes last.

A sweep of many CLIs and releases outgrows one machine: ``shard=(I, N)`` runs only the
I-th of N shares of the releases (every N-th, from the I-th oldest on, so each share
holds old and new ones alike), and each shard writes the reports and the matrix of its
share. ``adaptertest matrix`` merges the shards' reports (``docs/matrix.md`` has a CI
workflow that does both).
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from adaptertest.matrix._html import render_html
from adaptertest.matrix._markdown import render_markdown
from adaptertest.matrix._model import MatrixError, build, read_report, summary
from adaptertest.realcli import VERSION_ENV_PREFIX, install, load_lock, prefix_for
from adaptertest.realcli._lock import env_suffix
from adaptertest.report import RunInfo
from adaptertest.report_json import run_from_json, run_to_json
from driver.clikit._versions import in_range, last_stable

STATE = "sweep.json"
REPORT_PLACEHOLDER = "{report}"

Runner = Callable[[Sequence[str], Mapping[str, str]], int]
Installer = Callable[[str, str, Path | None], Path]
Lister = Callable[[str], list[str]]


class SweepError(RuntimeError):
    """The sweep cannot go on: npm unreachable, a bad argument, an unreadable state."""


@dataclass(frozen=True, slots=True)
class Release:
    """What one release's run left."""

    version: str
    supported: bool | None
    """Inside the driver's declared range (None when no range was given)."""
    exit_code: int | None
    report: str | None
    """The report file, relative to the sweep's folder; None when the tier wrote none."""
    seconds: float
    note: str = ""


def npm_versions(package: str) -> list[str]:
    """Every published version of ``package``, from the npm registry."""
    npm = shutil.which("npm")
    if npm is None:
        raise SweepError("npm is not on PATH: install Node.js (which brings npm) first")
    done = subprocess.run(
        [npm, "view", package, "versions", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-3:]
        raise SweepError(f"npm view {package} versions failed: {' / '.join(tail)}")
    try:
        found = json.loads(done.stdout)
    except json.JSONDecodeError as exc:
        raise SweepError(f"npm view {package} versions printed no JSON list: {exc}") from None
    found = [found] if isinstance(found, str) else found
    if not isinstance(found, list) or not all(isinstance(v, str) for v in found):
        raise SweepError(f"npm view {package} versions printed no JSON list of versions")
    return found


def _install(name: str, version: str, root: Path | None) -> Path:
    binary: Path = install([name], root=root, versions={name: version})[name]
    return binary


def _run(command: Sequence[str], env: Mapping[str, str]) -> int:
    return subprocess.run(list(command), env=dict(env), check=False).returncode


def declared_range(text: str) -> str:
    """``text`` when it is a range; for ``MODULE:CLASS``, that driver class's
    ``supported_cli_versions``."""
    if any(op in text for op in "<>=!") or ":" not in text:
        return text
    from adaptertest._imports import import_attr

    module, _, attr = text.partition(":")
    try:
        found = import_attr(module, attr)
    except Exception as exc:  # noqa: BLE001 - any import failure is a bad argument here
        reason = f"{type(exc).__name__}: {exc}"
        raise SweepError(f"--supported {text}: cannot import it: {reason}") from None
    declared = getattr(found, "supported_cli_versions", None)
    if not isinstance(declared, str) or not declared.strip():
        raise SweepError(f"--supported {text}: it declares no supported_cli_versions range")
    return declared


def parse_shard(text: str) -> tuple[int, int]:
    """``"I/N"`` as ``(I, N)``: shard I (from 1) of N."""
    index, slash, count = text.partition("/")
    try:
        shard = (int(index), int(count))
    except ValueError:
        shard = (0, 0)
    if not slash or not 1 <= shard[0] <= shard[1]:
        raise SweepError(f"a shard is I/N with 1 <= I <= N, such as 2/4, got {text!r}")
    return shard


def shard_of(versions: Sequence[str], shard: tuple[int, int] | None) -> list[str]:
    """The releases shard ``(I, N)`` runs: every N-th of ``versions`` from the I-th on;
    all of them when ``shard`` is None."""
    if shard is None:
        return list(versions)
    index, count = shard
    return list(versions[index - 1 :: count])


def command_for(command: Sequence[str], report: Path) -> list[str]:
    """The tier command with the report path in place of ``{report}``, or, when no
    argument names it, with ``--adaptertest-report=PATH`` appended (a pytest command)."""
    if any(REPORT_PLACEHOLDER in arg for arg in command):
        return [arg.replace(REPORT_PLACEHOLDER, str(report)) for arg in command]
    return [*command, f"--adaptertest-report={report}"]


def _label(report: Path, name: str, version: str, supported: bool | None) -> None:
    """Stamp each driver entry of ``report`` with the CLI, its version and the range verdict."""
    doc = json.loads(report.read_text("utf-8"))
    for entry in doc.get("drivers", []):
        run = run_from_json(entry.get("run")) or RunInfo(started_at="", backend="")
        labels = {"cli": name, **run.labels, "cli_version": version}
        if supported is not None:
            labels["supported"] = "yes" if supported else "no"
        entry["run"] = run_to_json(dataclasses.replace(run, labels=labels))
    report.write_text(json.dumps(doc, indent=2) + "\n", "utf-8")


def _load_state(path: Path) -> dict[str, Release]:
    if not path.exists():
        return {}
    try:
        raw = json.loads(path.read_text("utf-8"))
        return {r["version"]: Release(**r) for r in raw["releases"]}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SweepError(f"{path}: cannot resume from it ({exc}); move it away") from None


def _save_state(path: Path, name: str, releases: Iterable[Release]) -> None:
    doc = {"cli": name, "releases": [asdict(r) for r in releases]}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n", "utf-8")
    tmp.replace(path)


def sweep(
    name: str,
    command: Sequence[str],
    out: Path,
    *,
    last: int = 10,
    versions: Sequence[str] | None = None,
    supported: str | None = None,
    keep: int = 1,
    root: Path | None = None,
    lock: Path | None = None,
    shard: tuple[int, int] | None = None,
    runner: Runner = _run,
    installer: Installer = _install,
    lister: Lister = npm_versions,
    log: Callable[[str], None] = print,
) -> list[Release]:
    """Run ``command`` (the tier) once per release and write the matrix into ``out``.

    ``shard`` ``(I, N)`` keeps the I-th of N shares of the releases (:func:`shard_of`); a
    shard whose share is empty (more shards than releases) runs nothing and writes no
    matrix.
    """
    if not command:
        raise SweepError("no tier command: give it after --, such as -- python -m pytest TIER")
    if keep < 0:
        raise SweepError(f"keep must be 0 or more, got {keep}")
    specs = load_lock(lock)
    if name not in specs:
        raise SweepError(f"{name!r} is not in the lock file (it has {', '.join(sorted(specs))})")
    spec = specs[name]
    if supported is not None:
        supported = declared_range(supported)
        in_range("0", supported)  # a bad range fails here, before anything is installed
    if shard is not None:
        parse_shard(f"{shard[0]}/{shard[1]}")  # a bad shard fails here, before anything runs
    every = list(versions) if versions else last_stable(lister(spec.package), last)
    chosen = shard_of(every, shard)
    if shard is not None:
        share = ", ".join(chosen) or "nothing"
        log(f"{name}: shard {shard[0]}/{shard[1]} of {len(every)} release(s): {share}")
        if not chosen:
            return []
    out.mkdir(parents=True, exist_ok=True)
    (out / "reports").mkdir(exist_ok=True)
    state_path = out / STATE
    done = _load_state(state_path)
    swept: list[str] = []
    for version in chosen:
        inside = in_range(version, supported) if supported is not None else None
        report = out / "reports" / f"{name}-{version}.json"
        previous = done.get(version)
        if previous is not None and (previous.report is None or report.exists()):
            log(f"{name} {version}: already swept ({previous.note or 'report kept'})")
            continue
        log(f"{name} {version}: installing")
        started = time.monotonic()
        try:
            installer(name, version, root)
        except Exception as exc:  # noqa: BLE001 - one release failing to install is a finding
            done[version] = Release(version, inside, None, None, 0.0, f"install failed: {exc}")
            _save_state(state_path, name, done.values())
            log(f"{name} {version}: install failed: {exc}")
            continue
        env = {**os.environ, VERSION_ENV_PREFIX + env_suffix(name): version}
        if root is not None:
            env["ADAPTERTEST_CLI_ROOT"] = str(root)
        report.unlink(missing_ok=True)
        log(f"{name} {version}: running the tier")
        code = runner(command_for(command, report), env)
        seconds = round(time.monotonic() - started, 1)
        if report.exists():
            _label(report, name, version, inside)
            entry = Release(version, inside, code, str(report.relative_to(out)), seconds)
        else:
            entry = Release(version, inside, code, None, seconds, "the tier wrote no report")
        done[version] = entry
        _save_state(state_path, name, done.values())
        log(f"{name} {version}: exit {code} in {seconds} s")
        swept.append(version)
        _bound_disk(spec.with_version, swept, keep, spec.version, root, log)
    releases = [done[v] for v in chosen if v in done]
    write_matrix(out, name, releases, shard=shard)
    return releases


def _bound_disk(
    spec_at: Callable[[str], Any],
    swept: list[str],
    keep: int,
    locked: str,
    root: Path | None,
    log: Callable[[str], None],
) -> None:
    """Remove the prefixes of swept releases beyond the ``keep`` newest (never the locked)."""
    for version in swept[: max(len(swept) - keep, 0)]:
        if version == locked:
            continue
        prefix = prefix_for(spec_at(version), root)
        if prefix.exists():
            shutil.rmtree(prefix, ignore_errors=True)
            log(f"removed {prefix.name} (keeping {keep} swept release(s) on disk)")


def write_matrix(
    out: Path, name: str, releases: Sequence[Release], *, shard: tuple[int, int] | None = None
) -> None:
    """The matrix of the releases' reports, in release order. Each column names its
    report relative to ``out``, so the page and the Markdown can be kept or published
    without the path of the machine that ran the sweep."""
    entries = [
        {**e, "_source": r.report}
        for r in releases
        if r.report
        for e in read_report(out / r.report)
    ]
    if not entries:
        raise SweepError(f"no release of {name} left a report: see {out / STATE}")
    matrix = build(entries)
    title = f"{name}: {releases[0].version} to {releases[-1].version}"
    if shard is not None:
        title += f" (shard {shard[0]}/{shard[1]})"
    (out / "matrix.html").write_text(render_html(matrix, title=title), "utf-8")
    (out / "matrix.md").write_text(render_markdown(matrix, title=title), "utf-8")
    (out / "matrix.json").write_text(json.dumps(summary(matrix), indent=2) + "\n", "utf-8")


def main_sweep(ns: Any) -> int:
    """The ``adaptertest sweep`` command; exit 0 when every release was swept with a
    report, 1 when some tier failed or wrote none, 2 on bad input."""
    command = list(ns.tier)
    if command[:1] == ["--"]:
        command = command[1:]
    try:
        releases = sweep(
            ns.name,
            command,
            ns.out,
            last=ns.last,
            versions=[v for v in (ns.versions or "").split(",") if v] or None,
            supported=ns.supported,
            keep=ns.keep,
            root=ns.root,
            lock=ns.lock,
            shard=parse_shard(ns.shard) if ns.shard else None,
        )
    except (SweepError, MatrixError, ValueError) as exc:
        print(f"adaptertest sweep: error: {exc}", file=sys.stderr)
        return 2
    bad = [r for r in releases if r.report is None or r.exit_code not in (0, None)]
    for release in releases:
        mark = "outside the supported range" if release.supported is False else ""
        print(
            f"{ns.name} {release.version}: exit {release.exit_code} {release.note} {mark}".strip()
        )
    if releases:
        print(f"matrix: {ns.out / 'matrix.html'}")
    else:
        print(f"{ns.name}: shard {ns.shard} holds no release; nothing to run")
    return 1 if bad else 0
