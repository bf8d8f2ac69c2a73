"""Reports in, one table out: clauses as rows, runs as columns.

A column is one driver entry of one report document; a cell is that run's verdict on
one clause. Everything the renderers show is computed here, so HTML, Markdown and JSON
always agree.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from adaptertest.clauses import CLAUSES
from adaptertest.report import RunInfo
from adaptertest.report_json import run_from_json

STATUSES = ("passed", "failed", "skipped", "xfailed", "xpassed", "absent")
"""Cell statuses; ``absent`` is a clause the run's report does not have (a partial run or
an older kit)."""
NOT_RUN = frozenset({"skipped", "absent"})
"""Statuses of a clause a run did not judge: by default, no difference from one it did."""
SHOWN_ELSEWHERE = frozenset({"cli", "cli_version", "supported"})
"""Labels a column head already shows in its subtitle."""


class MatrixError(ValueError):
    """A report that cannot be read: the message names the file and what is wrong."""


@dataclass(frozen=True, slots=True)
class Cell:
    """One run's verdict on one clause."""

    status: str
    message: str = ""
    """Every message of the clause, joined by newlines (empty when it passed)."""

    @property
    def headline(self) -> str:
        """The first line of the first message."""
        return self.message.split("\n", 1)[0]


@dataclass(frozen=True, slots=True)
class Column:
    """One run: a driver entry of a report."""

    name: str
    driver_type: str
    level: str | None
    source: str
    kit_version: str = ""
    driver_version: str | None = None
    cli: str = ""
    cli_version: str = ""
    backend: str = ""
    started_at: str = ""
    options: Mapping[str, str] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    counts: Mapping[str, int] = field(default_factory=dict)

    @property
    def title(self) -> str:
        """A short name: the driver type, or the entry's name."""
        return self.driver_type or self.name or "?"

    @property
    def subtitle(self) -> str:
        """CLI and version, backend and date, as far as the report knows them."""
        cli = " ".join(p for p in (self.cli, self.cli_version) if p)
        date = self.started_at[:10]
        outside = "outside supported range" if self.labels.get("supported") == "no" else ""
        return " · ".join(p for p in (cli, self.backend, date, outside) if p)

    @property
    def level_text(self) -> str:
        return self.level or "none"

    @property
    def test_class(self) -> str:
        """The test class a pytest report's entry came from (its node id's last part)."""
        return self.name.rpartition("::")[2] if "::" in self.name else ""

    @property
    def file(self) -> str:
        """The report file's name, without its folder."""
        return Path(self.source).name if self.source else ""

    @property
    def label_texts(self) -> tuple[str, ...]:
        """``NAME=VALUE`` for each label the subtitle does not show already."""
        return tuple(f"{k}={v}" for k, v in self.labels.items() if k not in SHOWN_ELSEWHERE)


@dataclass(frozen=True, slots=True)
class Row:
    """One clause."""

    clause: str
    family: str
    title: str
    extension: bool


@dataclass(frozen=True, slots=True)
class Matrix:
    """Rows by clause (catalogue order, grouped by family), columns by run."""

    rows: tuple[Row, ...]
    columns: tuple[Column, ...]
    cells: tuple[tuple[Cell, ...], ...]
    """``cells[row][column]``."""

    def row_cells(self, index: int) -> tuple[Cell, ...]:
        return self.cells[index]

    def differs(self, index: int, *, skips: bool = False) -> bool:
        """Whether the runs that judged this clause disagree on it; with ``skips``, a run
        that skipped it (or whose report lacks it) disagrees with one that judged it."""
        statuses = {cell.status for cell in self.cells[index]}
        if not skips:
            statuses -= NOT_RUN
        return len(statuses) > 1

    @property
    def differing(self) -> tuple[str, ...]:
        """The clauses on which the runs that judged them disagree."""
        return tuple(r.clause for i, r in enumerate(self.rows) if self.differs(i))

    @property
    def differing_with_skips(self) -> tuple[str, ...]:
        """The clauses on which the runs disagree, skipped-versus-judged counted."""
        return tuple(r.clause for i, r in enumerate(self.rows) if self.differs(i, skips=True))

    def head_facts(self, index: int) -> list[str]:
        """What tells column ``index`` apart, beyond title and subtitle: its labels, and
        its test class and report file where those differ between the columns."""
        column = self.columns[index]
        facts = list(column.label_texts)
        if len({c.test_class for c in self.columns}) > 1 and column.test_class:
            facts.append(f"class {column.test_class}")
        if len({c.file for c in self.columns}) > 1 and column.file:
            facts.append(f"file {column.file}")
        return facts

    def families(self) -> list[tuple[str, list[int]]]:
        """Row indexes grouped by family, in catalogue order."""
        groups: dict[str, list[int]] = {}
        for index, row in enumerate(self.rows):
            groups.setdefault(row.family, []).append(index)
        return list(groups.items())

    def diff(self, a: int, b: int, *, skips: bool = False) -> list[tuple[Row, Cell, Cell]]:
        """What changed from column ``a`` to column ``b``: rows both judged whose status
        differs (with ``skips``, also a row one judged and the other skipped)."""
        for name, value in (("a", a), ("b", b)):
            if not 0 <= value < len(self.columns):
                raise IndexError(
                    f"column {name}={value} is out of range 0..{len(self.columns) - 1}"
                )
        return [
            (row, cells[a], cells[b])
            for row, cells in zip(self.rows, self.cells, strict=True)
            if cells[a].status != cells[b].status
            and (skips or not {cells[a].status, cells[b].status} & NOT_RUN)
        ]


def read_report(path: Path) -> list[Mapping[str, Any]]:
    """The driver entries of one report file, each with the document's kit version."""
    try:
        doc = json.loads(path.read_text("utf-8"))
    except OSError as exc:
        raise MatrixError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MatrixError(f"{path}: not a JSON report: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("drivers"), list):
        raise MatrixError(f"{path}: not an adaptertest report (no 'drivers' list)")
    kit = doc.get("kit")
    version = str(kit.get("version", "")) if isinstance(kit, dict) else ""
    entries: list[Mapping[str, Any]] = []
    for index, entry in enumerate(doc["drivers"]):
        if not isinstance(entry, dict) or not isinstance(entry.get("clauses"), list):
            raise MatrixError(f"{path}: drivers[{index}] has no 'clauses' list")
        entries.append({**entry, "_kit_version": version, "_source": str(path)})
    return entries


def _column(entry: Mapping[str, Any]) -> Column:
    run = run_from_json(entry.get("run")) or RunInfo(started_at="", backend="")
    given_counts = entry.get("counts")
    counts: Mapping[str, Any] = given_counts if isinstance(given_counts, dict) else {}
    level = entry.get("level")
    return Column(
        name=str(entry.get("nodeid") or entry.get("name") or ""),
        driver_type=str(entry.get("driver_type") or ""),
        level=str(level) if level is not None else None,
        source=str(entry.get("_source", "")),
        kit_version=str(entry.get("_kit_version", "")),
        driver_version=run.driver_version,
        cli=run.labels.get("cli", ""),
        cli_version=run.labels.get("cli_version", ""),
        backend=run.backend,
        started_at=run.started_at,
        options=dict(run.options),
        labels=dict(run.labels),
        counts={str(k): int(v) for k, v in counts.items() if isinstance(v, int)},
    )


def _cells(entry: Mapping[str, Any]) -> dict[str, Cell]:
    out: dict[str, Cell] = {}
    source = entry.get("_source", "")
    for index, clause in enumerate(entry["clauses"]):
        if not isinstance(clause, dict) or not isinstance(clause.get("id"), str):
            raise MatrixError(f"{source}: a clause entry (#{index}) has no 'id'")
        status = clause.get("status")
        if status not in STATUSES[:-1]:
            raise MatrixError(f"{source}: clause {clause['id']} has unknown status {status!r}")
        messages = [str(m) for m in clause.get("messages") or ()]
        out[clause["id"]] = Cell(status=str(status), message="\n".join(messages))
    return out


def build(entries: Iterable[Mapping[str, Any]]) -> Matrix:
    """The matrix of these driver entries (in the order given)."""
    entries = list(entries)
    if not entries:
        raise MatrixError("no runs: give at least one report with a driver entry")
    columns = tuple(_column(e) for e in entries)
    verdicts = [_cells(e) for e in entries]
    rows = [Row(c.id, c.family, c.title, c.extension) for c in CLAUSES]
    known = {c.id for c in CLAUSES}
    extra = sorted({cid for v in verdicts for cid in v if cid not in known})
    rows += [
        Row(cid, cid.partition("-")[0], "(not in this kit's catalogue)", True) for cid in extra
    ]
    family_order = {r.family: i for i, r in reversed(list(enumerate(rows)))}
    rows.sort(key=lambda r: family_order[r.family])  # stable: catalogue order within
    absent = Cell("absent", "not in this run's report")
    cells = tuple(tuple(v.get(r.clause, absent) for v in verdicts) for r in rows)
    return Matrix(rows=tuple(rows), columns=columns, cells=cells)


def load(paths: Sequence[Path]) -> Matrix:
    """The matrix of every driver entry of the given report files."""
    if not paths:
        raise MatrixError("no reports given")
    return build(entry for path in paths for entry in read_report(path))


def summary(matrix: Matrix) -> dict[str, Any]:
    """The JSON summary: columns with level and counts, rows with each run's status."""
    return {
        "columns": [
            {
                "name": c.name,
                "driver_type": c.driver_type,
                "driver_version": c.driver_version,
                "cli": c.cli,
                "cli_version": c.cli_version,
                "backend": c.backend,
                "started_at": c.started_at,
                "kit_version": c.kit_version,
                "level": c.level,
                "counts": dict(c.counts),
                "labels": dict(c.labels),
                "test_class": c.test_class,
                "source": c.source,
                "head": [c.title, c.subtitle, *matrix.head_facts(j)],
            }
            for j, c in enumerate(matrix.columns)
        ],
        "rows": [
            {
                "clause": r.clause,
                "family": r.family,
                "title": r.title,
                "differs": matrix.differs(i),
                "differs_with_skips": matrix.differs(i, skips=True),
                "statuses": [cell.status for cell in matrix.cells[i]],
                "headlines": [cell.headline for cell in matrix.cells[i]],
            }
            for i, r in enumerate(matrix.rows)
        ],
        "differing": list(matrix.differing),
        "differing_with_skips": list(matrix.differing_with_skips),
    }
