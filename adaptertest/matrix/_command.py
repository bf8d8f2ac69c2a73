"""``adaptertest matrix REPORT... --out DIR``: the HTML page, Markdown and JSON summary."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from adaptertest.matrix._html import render_html
from adaptertest.matrix._markdown import render_markdown
from adaptertest.matrix._model import MatrixError, load, summary

PROG = "adaptertest matrix"
FILES = ("matrix.html", "matrix.md", "matrix.json")
"""What ``--out DIR`` receives."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "reports",
        nargs="+",
        type=Path,
        metavar="REPORT",
        help="JSON reports (check --report, pytest --adaptertest-report); each driver entry "
        "becomes a column, in the order given",
    )
    parser.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="DIR",
        help=f"folder to write {', '.join(FILES)} into (created if missing)",
    )
    parser.add_argument("--title", default="adaptertest conformance matrix", help="page title")
    parser.add_argument(
        "--only-differing",
        action="store_true",
        help="the Markdown table keeps only the rows on which the runs differ",
    )


def run(ns: argparse.Namespace) -> int:
    """Write the three files; exit status 2 on a report that cannot be read."""
    try:
        matrix = load(list(ns.reports))
    except MatrixError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    out: Path = ns.out
    if out.exists() and not out.is_dir():
        print(f"{PROG}: --out {out} exists and is not a folder", file=sys.stderr)
        return 2
    out.mkdir(parents=True, exist_ok=True)
    (out / "matrix.html").write_text(render_html(matrix, title=ns.title), "utf-8")
    (out / "matrix.md").write_text(
        render_markdown(matrix, title=ns.title, only_differing=ns.only_differing), "utf-8"
    )
    (out / "matrix.json").write_text(json.dumps(summary(matrix), indent=2) + "\n", "utf-8")
    print(
        f"{len(matrix.columns)} run(s), {len(matrix.rows)} clauses, "
        f"{len(matrix.differing)} differing: wrote {', '.join(str(out / f) for f in FILES)}"
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=PROG)
    add_arguments(parser)
    return run(parser.parse_args(argv))
