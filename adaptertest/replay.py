"""A stand-in agent CLI: replay a recorded JSONL transcript, then exit with a chosen code.

Point a subprocess driver's binary at it to test the driver hermetically::

    python -m adaptertest replay run-ok.jsonl --delay 5 --exit-code 0 -- <driver's args>

Each line of the file goes to stdout byte for byte and is flushed on its own, so the
driver sees a live stream. Arguments after the file (put them after ``--`` when they
start with ``-``) are the ones the driver adds; they are accepted and ignored, or
written to ``--record-argv`` as JSON so a test can check the command line.

Started once per driver run, so this module imports only the standard library
(no pydantic, rich, pytest or hypothesis).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

PROG = "adaptertest replay"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The replay options (shared with the ``adaptertest`` CLI's help)."""
    parser.add_argument("transcript", type=Path, help="recorded JSONL file to write to stdout")
    parser.add_argument(
        "--delay",
        type=float,
        default=0.0,
        metavar="MS",
        help="milliseconds to wait between lines (default: 0)",
    )
    parser.add_argument(
        "--exit-code",
        type=int,
        default=0,
        metavar="N",
        help="exit status once the transcript is written (0-255, default: 0)",
    )
    parser.add_argument(
        "--stderr",
        type=Path,
        default=None,
        metavar="FILE",
        help="write this file's bytes to stderr after the transcript",
    )
    parser.add_argument(
        "--record-argv",
        type=Path,
        default=None,
        metavar="FILE",
        help="write the ignored driver arguments to FILE as a JSON list",
    )
    parser.add_argument(
        "driver_args",
        nargs="*",
        metavar="ARG",
        help="arguments the driver adds (ignored; use -- before ones starting with -)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Replay a recorded JSONL transcript as a stand-in agent CLI."
    )
    add_arguments(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    """Replay with parsed arguments; returns the exit status."""
    problem = _check(args)
    if problem:
        print(f"{PROG}: error: {problem}", file=sys.stderr)
        return 2
    try:
        if args.record_argv is not None:
            args.record_argv.write_text(json.dumps(args.driver_args) + "\n", encoding="utf-8")
        lines = args.transcript.read_bytes().splitlines(keepends=True)
        err = args.stderr.read_bytes() if args.stderr is not None else b""
    except OSError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    try:
        _write_lines(lines, args.delay / 1000.0)
        if err:
            sys.stderr.buffer.write(err)
            sys.stderr.buffer.flush()
    except BrokenPipeError:
        # The driver stopped reading (for example after the terminal event): that is
        # its right. Point stdout at devnull so the interpreter's final flush is quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except KeyboardInterrupt:
        return 130
    return int(args.exit_code)


def _check(args: argparse.Namespace) -> str:
    if not 0 <= args.exit_code <= 255:
        return f"--exit-code must be between 0 and 255, got {args.exit_code}"
    if args.delay < 0:
        return f"--delay must not be negative, got {args.delay}"
    for label, path in (("transcript", args.transcript), ("--stderr", args.stderr)):
        if path is not None and not path.is_file():
            return f"{label} file not found: {path}"
    return ""


def _write_lines(lines: list[bytes], delay: float) -> None:
    out = sys.stdout.buffer
    for index, line in enumerate(lines):
        if index and delay:
            time.sleep(delay)
        out.write(line)
        out.flush()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m adaptertest replay`` (``argv`` excludes ``replay``)."""
    own = list(sys.argv[1:] if argv is None else argv)
    passed_on: list[str] = []
    if "--" in own:  # everything after it belongs to the driver, even "--help"
        split = own.index("--")
        own, passed_on = own[:split], own[split + 1 :]
    try:
        args = build_parser().parse_args(own)
    except SystemExit as exc:  # --help, or a usage error argparse already printed
        return exit_status(exc)
    args.driver_args = [*args.driver_args, *passed_on]
    return run(args)


def exit_status(exc: SystemExit) -> int:
    """The status a ``SystemExit`` carries, as ``sys.exit`` would turn it into one."""
    if exc.code is None:
        return 0
    return exc.code if isinstance(exc.code, int) else 1


if __name__ == "__main__":
    sys.exit(main())
