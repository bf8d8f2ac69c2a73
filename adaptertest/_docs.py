"""Documentation generated from the clause catalogue: the clause table of docs/clauses.md
(``python -m adaptertest._docs`` regenerates it; a test fails while it is stale)."""

from __future__ import annotations

from adaptertest.clauses import CLAUSES

TABLE_START = "<!-- clause-table:start (generated: python -m adaptertest._docs) -->"
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


CLAUSES_PAGE = "docs/clauses.md"
"""Where the generated clause table lives, relative to the repository root."""


def main(argv: list[str] | None = None) -> int:
    """``python -m adaptertest._docs [ROOT]``: regenerate the clause table in ROOT's
    :data:`CLAUSES_PAGE` (ROOT defaults to the current directory)."""
    import sys
    from pathlib import Path

    args = sys.argv[1:] if argv is None else argv
    page = Path(args[0] if args else ".") / CLAUSES_PAGE
    try:
        text = page.read_text(encoding="utf-8")
    except OSError as exc:
        print(f"python -m adaptertest._docs: cannot read {page}: {exc}", file=sys.stderr)
        return 2
    if TABLE_START not in text or TABLE_END not in text:
        print(f"python -m adaptertest._docs: {page} has no clause-table markers", file=sys.stderr)
        return 2
    updated = replace_table(text)
    if updated != text:
        page.write_text(updated, encoding="utf-8")
        print(f"regenerated the clause table in {page}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
