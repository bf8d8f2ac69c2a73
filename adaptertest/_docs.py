"""Documentation generated from the clause catalogue (the README's clause table)."""

from __future__ import annotations

from adaptertest.clauses import CLAUSES

TABLE_START = (
    "<!-- clause-table:start (generated: python -m adaptertest clauses --format markdown) -->"
)
TABLE_END = "<!-- clause-table:end -->"


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


def replace_table(text: str) -> str:
    """``text`` with the block between the table markers regenerated."""
    head, _, rest = text.partition(TABLE_START)
    _, _, tail = rest.partition(TABLE_END)
    return f"{head}{TABLE_START}\n{clause_table_markdown()}\n{TABLE_END}{tail}"
