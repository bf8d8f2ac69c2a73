"""The report as Markdown, for a CI job summary (``$GITHUB_STEP_SUMMARY`` and the like).

Rendered from the JSON report document (:mod:`adaptertest.report_json`), the one that
``check --report`` and ``--adaptertest-report`` write, so the two never disagree: per
driver a heading, the level met and the counts, a table with one row per clause, then
the full text of every failing clause (observations, rule, how to rerun it alone).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from adaptertest.clauses import CLAUSES
from adaptertest.report import UNKNOWN_DRIVER, ClauseResult, ClauseStatus, ConformanceReport
from adaptertest.report_json import run_from_json

STATUS_LABEL: dict[ClauseStatus, str] = {
    ClauseStatus.PASSED: "✅ passed",
    ClauseStatus.FAILED: "❌ failed",
    ClauseStatus.SKIPPED: "⏭️ skipped",
    ClauseStatus.XFAILED: "⚠️ xfailed",
    ClauseStatus.XPASSED: "❌ xpassed",
}
MAX_CELL = 200
"""Longer table cells are cut (the full text is in the failure details below the table)."""

_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def html_text(text: str) -> str:
    """``text`` on one line, cut to :data:`MAX_CELL`, with no HTML taking effect."""
    text = " ".join(text.split())
    if len(text) > MAX_CELL:
        text = text[: MAX_CELL - 1] + "…"
    return "".join(_ENTITIES.get(ch, ch) for ch in text)


def cell(text: str) -> str:
    """``text`` as Markdown inline text (a table cell): one line, no markup taking effect."""
    return _SPECIAL.sub(r"\\\1", html_text(text))


def _fenced(text: str) -> str:
    """``text`` in a code fence no backtick run inside it can close."""
    runs = [len(run) for run in re.findall(r"`+", text)]
    fence = "`" * max([3, *(n + 1 for n in runs)])
    return f"{fence}text\n{text}\n{fence}"


def report_from_entry(entry: Mapping[str, Any]) -> ConformanceReport:
    """One driver entry of a report document, back as a :class:`ConformanceReport`."""
    results = tuple(
        ClauseResult(
            clause=c["id"],
            status=ClauseStatus(c["status"]),
            messages=tuple(c["messages"]),
            duration=float(c["duration"]),
            notes=tuple(c["notes"]),
        )
        for c in entry["clauses"]
    )
    return ConformanceReport(
        driver_type=entry["driver_type"],
        results=results,
        duration=float(entry["duration"]),
        notes=tuple(entry["notes"]),
        run=run_from_json(entry.get("run")),
    )


def driver_to_markdown(entry: Mapping[str, Any], *, title: str | None = None) -> str:
    """One driver's section: heading, level and counts, clause table, failure details."""
    report = report_from_entry(entry)
    heading = title or f"adaptertest: {entry.get('nodeid') or entry['name']}"
    counts = ", ".join(f"{n} {s.value}" for s, n in report.counts().items() if n)
    lines = [
        f"### {cell(heading)}",
        "",
        f"**Level: {cell(report.level_text())}** · "
        f"driver {cell(report.driver_type or UNKNOWN_DRIVER)} · "
        f"{counts or 'no clauses'} · {report.duration:.2f} s",
    ]
    if report.failures:
        lines += ["", f"**Failing:** {', '.join(r.clause for r in report.failures)}"]
    if report.notes:
        lines += ["", *(f"- note: {cell(note)}" for note in report.notes)]
    lines += ["", "| clause | status | title | detail |", "|---|---|---|---|"]
    titles = {c["id"]: c["title"] for c in entry["clauses"]}
    for r in report.results:
        lines.append(
            f"| {r.clause} | {STATUS_LABEL[r.status]} | {cell(titles[r.clause])} "
            f"| {cell(r.headline())} |"
        )
    for r in report.failures:
        lines += [
            "",
            f"<details><summary>{r.clause} {r.status.value}: {html_text(r.headline())}</summary>",
            "",
            _fenced(r.describe()),
            "",
            "</details>",
        ]
    return "\n".join(lines) + "\n"


def document_to_markdown(doc: Mapping[str, Any], *, title: str | None = None) -> str:
    """A whole report document; ``title`` heads a one-driver document (default: its name)."""
    drivers = doc["drivers"]
    if not drivers:
        return "### adaptertest\n\nNo driver was checked.\n"
    only = title if len(drivers) == 1 else None
    return "\n".join(driver_to_markdown(entry, title=only) for entry in drivers)


def clause_table_markdown() -> str:
    """The catalogue as a Markdown table: ID, mode, title, rule, where it is checked."""
    rows = [
        "| ID | mode | title | rule | checked in |",
        "|---|---|---|---|---|",
    ]
    for c in CLAUSES:
        ident = f"{c.id} (ext.)" if c.extension else c.id
        rule = c.rule.replace("|", "\\|")
        rows.append(
            f"| {ident} | {c.mode.value} | {c.title} | {rule} | `{c.module}` "
            f"({', '.join(c.probes)}) |"
        )
    return "\n".join(rows)
