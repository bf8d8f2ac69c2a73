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


def add_sweep_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", help="the CLI's name in the lock file (claude, codex, gemini)")
    parser.add_argument(
        "--last", type=int, default=10, metavar="K", help="the K newest stable releases (10)"
    )
    parser.add_argument(
        "--versions",
        metavar="V1,V2",
        help="these exact releases instead of the newest K (comma-separated)",
    )
    parser.add_argument(
        "--out", type=Path, required=True, metavar="DIR", help="reports, sweep.json and matrix"
    )
    parser.add_argument(
        "--supported",
        metavar="RANGE",
        help="the driver's declared range (such as '>=2.1.323', or MODULE:CLASS of a "
        "CLIDriver with supported_cli_versions): releases outside it are marked",
    )
    parser.add_argument(
        "--keep",
        type=int,
        default=1,
        metavar="N",
        help="swept releases to keep installed (1; the locked release always stays)",
    )
    parser.add_argument(
        "--shard",
        metavar="I/N",
        help="run only shard I of N: every N-th release from the I-th oldest on (for a CI "
        "job matrix; merge the shards' reports with adaptertest matrix)",
    )
    parser.add_argument("--root", type=Path, metavar="DIR", help="the CLI cache folder")
    parser.add_argument("--lock", type=Path, metavar="FILE", help="the lock file")
    parser.epilog = (
        "The tier command follows --, e.g. -- python -m pytest "
        "examples/claude_driver/tests/test_claude_realcli.py; it gets "
        "--adaptertest-report=FILE appended unless an argument names {report}."
    )
    parser.usage = "adaptertest sweep NAME --out DIR [options] -- COMMAND..."


def sweep_main(argv: Sequence[str], parser: argparse.ArgumentParser) -> int:
    """``adaptertest sweep``: the options before ``--`` and the tier command after it."""
    args = list(argv)
    split = args.index("--") if "--" in args else len(args)
    try:
        ns = parser.parse_args(args[:split])
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    ns.tier = args[split + 1 :]
    return run_sweep(ns)


def run_sweep(ns: argparse.Namespace) -> int:
    from adaptertest.matrix._sweep import main_sweep

    if ns.last < 1:
        print(
            f"adaptertest sweep: error: --last must be at least 1, got {ns.last}", file=sys.stderr
        )
        return 2
    if not [a for a in ns.tier if a != "--"]:
        print(
            "adaptertest sweep: error: no tier command: give it after --, such as "
            "-- python -m pytest examples/claude_driver/tests/test_claude_realcli.py",
            file=sys.stderr,
        )
        return 2
    return main_sweep(ns)
