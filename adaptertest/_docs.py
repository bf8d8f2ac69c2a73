"""Documentation generated from the code: the clause table of docs/clauses.md, from the
catalogue, and the command reference of docs/cli.md, from the command-line parser
(``python -m adaptertest._docs`` regenerates both; a test fails while either is stale)."""

from __future__ import annotations

import argparse

from adaptertest.report_markdown import clause_table_markdown

TABLE_START = "<!-- clause-table:start (generated: python -m adaptertest._docs) -->"
TABLE_END = "<!-- clause-table:end -->"

__all__ = [
    "CLAUSES_PAGE",
    "COMMANDS_END",
    "COMMANDS_PAGE",
    "COMMANDS_START",
    "GENERATED",
    "TABLE_END",
    "TABLE_START",
    "clause_table_markdown",
    "command_parsers",
    "command_reference_markdown",
    "main",
    "replace_between",
    "replace_table",
]


def replace_between(text: str, start: str, end: str, body: str) -> str:
    """``text`` with the block between the ``start`` and ``end`` markers set to ``body``."""
    head, _, rest = text.partition(start)
    _, _, tail = rest.partition(end)
    return f"{head}{start}\n{body}\n{end}{tail}"


def replace_table(text: str) -> str:
    """``text`` with the block between the table markers regenerated."""
    return replace_between(text, TABLE_START, TABLE_END, clause_table_markdown())


CLAUSES_PAGE = "docs/clauses.md"
"""Where the generated clause table lives, relative to the repository root."""

COMMANDS_START = "<!-- command-reference:start (generated: python -m adaptertest._docs) -->"
COMMANDS_END = "<!-- command-reference:end -->"
COMMANDS_PAGE = "docs/cli.md"
"""Where the generated command reference lives, relative to the repository root."""


def command_parsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The sub-command parsers of ``parser``, by name."""
    for action in parser._actions:  # argparse lists a parser's arguments nowhere else
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _shown(action: argparse.Action) -> bool:
    return action.help != argparse.SUPPRESS and not isinstance(action, argparse._HelpAction)


def _spelling(action: argparse.Action) -> str:
    """How the argument is written: ``--out DIR``, ``MODULE:FACTORY``, ``NAME ...``."""
    metavar = action.metavar
    if metavar is None and action.choices is not None:
        metavar = "|".join(str(choice) for choice in action.choices)
    if not action.option_strings:
        name = str(metavar or action.dest)
        return (
            f"[{name} ...]"
            if action.nargs == "*"
            else f"{name} ..."
            if action.nargs == "+"
            else name
        )
    flag = " | ".join(action.option_strings)
    if action.nargs == 0:
        return flag
    return f"{flag} {metavar or action.dest.upper()}"


def _synopsis(name: str, parser: argparse.ArgumentParser) -> str:
    parts = [f"adaptertest {name}"]
    for action in parser._actions:
        if not _shown(action):
            continue
        spelled = _spelling(action)
        parts.append(spelled if not action.option_strings or action.required else f"[{spelled}]")
    return " ".join(parts)


def _explained(action: argparse.Action, prog: str) -> str:
    text = action.help or ""
    if "%(" in text:
        text = text % {**vars(action), "prog": prog}
    default = action.default
    if action.choices is not None and default not in (None, False, [], "", argparse.SUPPRESS):
        text += f" (default: {default})"
    return text.replace("|", "\\|")


def command_reference_markdown() -> str:
    """Every command of ``adaptertest`` and each of its arguments, from the parser itself."""
    from adaptertest.cli import build_parser

    lines: list[str] = []
    for name, parser in command_parsers(build_parser()).items():
        lines += ["", f"### `adaptertest {name}`", ""]
        if parser.description:
            lines += [parser.description, ""]
        lines += [
            "<!-- snippet: not run (a synopsis) -->",
            "```sh",
            _synopsis(name, parser),
            "```",
            "",
            "| argument | meaning |",
            "| --- | --- |",
        ]
        for action in parser._actions:
            if _shown(action):
                spelled = _spelling(action).replace("|", "\\|")
                lines.append(f"| `{spelled}` | {_explained(action, parser.prog)} |")
    return "\n".join(lines[1:])


GENERATED = (
    (CLAUSES_PAGE, TABLE_START, TABLE_END, clause_table_markdown, "clause table"),
    (COMMANDS_PAGE, COMMANDS_START, COMMANDS_END, command_reference_markdown, "command reference"),
)


def main(argv: list[str] | None = None) -> int:
    """``python -m adaptertest._docs [ROOT]``: regenerate the clause table in ROOT's
    :data:`CLAUSES_PAGE` and the command reference in its :data:`COMMANDS_PAGE` (ROOT
    defaults to the current directory)."""
    import sys
    from pathlib import Path

    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0] if args else ".")
    status = 0
    for relative, start, end, generate, what in GENERATED:
        page = root / relative
        try:
            text = page.read_text(encoding="utf-8")
        except OSError as exc:
            print(f"python -m adaptertest._docs: cannot read {page}: {exc}", file=sys.stderr)
            status = 2
            continue
        if start not in text or end not in text:
            print(f"python -m adaptertest._docs: {page} has no {what} markers", file=sys.stderr)
            status = 2
            continue
        updated = replace_between(text, start, end, generate())
        if updated != text:
            page.write_text(updated, encoding="utf-8")
            print(f"regenerated the {what} in {page}")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
