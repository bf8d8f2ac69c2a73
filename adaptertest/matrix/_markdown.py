"""The matrix as a Markdown table, for a CI job summary."""

from __future__ import annotations

from adaptertest.matrix._html import visible
from adaptertest.matrix._model import Matrix
from adaptertest.report_markdown import cell as md_cell

_SYMBOL = {
    "passed": "✅",
    "failed": "❌",
    "skipped": "\u2796",  # heavy minus
    "xfailed": "known",
    "xpassed": "stale",
    "absent": "·",
}


def render_markdown(
    matrix: Matrix, *, title: str = "adaptertest conformance matrix", only_differing: bool = False
) -> str:
    """A heading, one column per run with its level, one row per clause.

    ``only_differing`` keeps the rows on which the runs disagree (a release-to-release
    view); the heading says how many rows that leaves out."""
    columns = matrix.columns
    heads = [
        md_cell(
            visible(
                " ".join(
                    p
                    for p in (c.title, c.subtitle and f"({c.subtitle})", *matrix.head_facts(j))
                    if p
                )
            )
        )
        for j, c in enumerate(columns)
    ]
    lines = [
        f"### {md_cell(title)}",
        "",
        f"{len(columns)} run(s), {len(matrix.rows)} clauses, "
        f"{len(matrix.differing)} on which the runs that judged them differ"
        f" ({len(matrix.differing_with_skips)} counting skipped against run).",
        "",
        "| clause | " + " | ".join(heads) + " |",
        "|---|" + "---|" * len(columns),
        "| **level** | " + " | ".join(f"**{md_cell(c.level_text)}**" for c in columns) + " |",
    ]
    for index, row in enumerate(matrix.rows):
        if only_differing and not matrix.differs(index):
            continue
        marks = " | ".join(_SYMBOL[cell.status] for cell in matrix.cells[index])
        lines.append(f"| {md_cell(row.clause)} {md_cell(row.title)} | {marks} |")
    failed = [
        (row, col, cell)
        for i, row in enumerate(matrix.rows)
        for col, cell in zip(columns, matrix.cells[i], strict=True)
        if cell.status in ("failed", "xpassed")
    ]
    if failed:
        lines += ["", "Failures:", ""]
        lines += [
            f"- {md_cell(row.clause)} · {md_cell(visible(col.title))} "
            f"{md_cell(visible(col.subtitle))}: {md_cell(visible(cell.headline))}"
            for row, col, cell in failed
        ]
    return "\n".join(lines) + "\n"
