"""A stand-in agent CLI: replay a recorded run, then exit as the recorded CLI did.

Point a subprocess driver's binary at it to test the driver hermetically::

    python -m adaptertest replay run-ok.jsonl --delay 5 --exit-code 0 -- <driver's args>

The file is either

- a recording made by ``adaptertest record`` (format v1, :mod:`adaptertest.recording`):
  each chunk's bytes go to stdout or stderr as recorded, flushed one at a time, and the
  process exits with the recorded status, or kills itself with the recorded signal.
  ``--realtime`` waits for each chunk's recorded time; or
- a plain JSONL transcript: each line goes to stdout byte for byte, flushed on its own;
  then the ``--stderr`` file's bytes, and exit status ``--exit-code`` (default 0).

``--delay`` waits between lines (or chunks); ``--exit-code`` and ``--stderr`` override
what a recording says (with ``--stderr``, the recorded stderr is left out). Arguments
after the file (put them after ``--`` when they start with ``-``) are the ones the driver
adds: accepted and ignored, or written to ``--record-argv`` as JSON so a test can check
the command line; ``--record-stdin`` keeps what the driver wrote to standard input (a
prompt handed over there), read to its end before the first byte is replayed.

Started once per driver run, so start-up is kept short: only the standard library, and
none of argparse, pathlib or json on the way to the first byte of a plain transcript
(options are parsed here from :data:`OPTIONS`, the table that also builds the argparse
help).
"""

from __future__ import annotations

import os
import sys
import time

from adaptertest import recording

TYPE_CHECKING = False  # typing itself costs start-up time; mypy reads this as True
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Sequence
    from typing import BinaryIO

PROG = "adaptertest replay"

OPTIONS: dict[str, tuple[str, Callable[[str], object], str]] = {
    "--delay": ("MS", float, "milliseconds to wait between lines or chunks (default: 0)"),
    "--exit-code": (
        "N",
        int,
        "exit status once the output is written (0-255; default: the recording's, else 0)",
    ),
    "--stderr": (
        "FILE",
        str,
        "write this file's bytes to stderr after stdout (instead of a recording's stderr)",
    ),
    "--record-argv": ("FILE", str, "write the ignored driver arguments to FILE as a JSON list"),
    "--record-stdin": (
        "FILE",
        str,
        "read standard input to its end before replaying and write its bytes to FILE",
    ),
}
"""Options taking a value: (metavar, conversion, help)."""
FLAGS: dict[str, str] = {
    "--realtime": "wait for each chunk's recorded time (recordings from adaptertest record)",
}


class Args:
    """Parsed replay arguments."""

    def __init__(self) -> None:
        self.transcript = ""
        self.delay = 0.0
        self.exit_code: int | None = None
        self.stderr: str | None = None
        self.record_argv: str | None = None
        self.record_stdin: str | None = None
        self.realtime = False
        self.driver_args: list[str] = []


class UsageError(Exception):
    """A command line that cannot be run (exit status 2)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The replay options as argparse arguments (for ``--help`` and the CLI's help)."""
    parser.add_argument(
        "transcript", metavar="FILE", help="recording (adaptertest record) or JSONL transcript"
    )
    for name, (metavar, convert, text) in OPTIONS.items():
        parser.add_argument(name, type=convert, metavar=metavar, help=text)
    for name, text in FLAGS.items():
        parser.add_argument(name, action="store_true", help=text)
    parser.add_argument(
        "driver_args",
        nargs="*",
        metavar="ARG",
        help="arguments the driver adds (ignored; use -- before ones starting with -)",
    )


def build_parser() -> argparse.ArgumentParser:
    import argparse

    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Replay a recorded run (or a JSONL transcript) as a stand-in agent CLI.",
    )
    add_arguments(parser)
    return parser


def parse(argv: Sequence[str]) -> Args:
    """Parse options before ``--`` (UsageError on a bad one)."""
    args = Args()
    positional: list[str] = []
    tokens = iter(argv)
    for token in tokens:
        name, has_value, value = token.partition("=")
        if name in OPTIONS:
            if not has_value:
                following = next(tokens, None)
                if following is None:
                    raise UsageError(f"{name} expects {OPTIONS[name][0]}")
                value = following
            metavar, convert, _ = OPTIONS[name]
            try:
                converted = convert(value)
            except ValueError:
                raise UsageError(f"{name} expects {metavar}, got {value!r}") from None
            setattr(args, name[2:].replace("-", "_"), converted)
        elif token in FLAGS:
            setattr(args, token[2:].replace("-", "_"), True)
        elif token.startswith("-") and token != "-" and not _is_number(token):
            raise UsageError(f"unknown option {token} (see {PROG} --help)")
        else:
            positional.append(token)
    if not positional:
        raise UsageError("the recording or transcript FILE is missing")
    args.transcript, *args.driver_args = positional
    return args


def _is_number(token: str) -> bool:
    """A negative number is an argument, as argparse takes it, not an option."""
    try:
        float(token)
    except ValueError:
        return False
    return True


def _check(args: Args) -> None:
    if args.exit_code is not None and not 0 <= args.exit_code <= 255:
        raise UsageError(f"--exit-code must be between 0 and 255, got {args.exit_code}")
    if args.delay < 0:
        raise UsageError(f"--delay must not be negative, got {args.delay}")
    if not args.delay < float("inf"):  # inf, and NaN, which time.sleep refuses
        raise UsageError(f"--delay must be a finite number, got {args.delay}")
    if args.realtime and args.delay:
        raise UsageError("--realtime and --delay contradict each other: choose one")
    for label, path in (("transcript", args.transcript), ("--stderr", args.stderr)):
        if path is not None and not os.path.isfile(path):
            raise UsageError(f"{label} file not found: {path}")


def _load(args: Args) -> tuple[list[recording.Chunk], int]:
    """What to write, and the exit status (negative: die by that signal)."""
    with open(args.transcript, "rb") as file:
        data = file.read()
    if not data.strip() and args.stderr is None and not args.exit_code:
        # A CLI that failed before printing is an empty transcript with its stderr or its
        # exit status given; an empty file alone would replay a silent success.
        raise recording.RecordingError(
            f"{args.transcript} is empty: neither a recording nor a JSONL transcript, and "
            "no --stderr or non-zero --exit-code says what else to play; record the run again"
        )
    if not recording.is_recording(data.split(b"\n", 1)[0], source=args.transcript):
        if args.realtime:
            raise UsageError(
                f"--realtime needs a recording with timing (adaptertest record); "
                f"{args.transcript} is a plain transcript"
            )
        return [recording.Chunk(0.0, 1, line) for line in data.splitlines(keepends=True)], 0
    played = recording.loads(data, source=args.transcript)
    keep_stderr = args.stderr is None
    chunks = [c for c in played.chunks if keep_stderr or c.fd == recording.STDOUT]
    return chunks, played.returncode


def run(args: Args) -> int:
    """Replay with parsed arguments; the exit status (negative: die by that signal)."""
    try:
        _check(args)
        chunks, status = _load(args)
        if args.record_argv is not None:
            import json

            with open(args.record_argv, "w", encoding="utf-8") as file:
                file.write(json.dumps(args.driver_args) + "\n")
        if args.record_stdin is not None:
            with open(args.record_stdin, "wb") as file:
                file.write(sys.stdin.buffer.read())
        err = b""
        if args.stderr is not None:
            with open(args.stderr, "rb") as file:
                err = file.read()
    except (OSError, UsageError, recording.RecordingError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    try:
        outs = _play(chunks, args.delay / 1000.0, realtime=args.realtime)
        if err:
            _write(outs, recording.Chunk(0.0, recording.STDERR, err))
    except KeyboardInterrupt:
        return 130
    return status if args.exit_code is None else args.exit_code


def _play(
    chunks: list[recording.Chunk], delay: float, *, realtime: bool
) -> dict[int, BinaryIO | None]:
    """Write each chunk to its fd and flush it; wait ``delay`` between, or until ``t``."""
    outs: dict[int, BinaryIO | None] = {1: sys.stdout.buffer, 2: sys.stderr.buffer}
    start = time.monotonic()
    for index, chunk in enumerate(chunks):
        if realtime:
            wait = start + chunk.t - time.monotonic()
            if wait > 0:
                time.sleep(wait)
        elif index and delay:
            time.sleep(delay)
        _write(outs, chunk)
    return outs


def _write(outs: dict[int, BinaryIO | None], chunk: recording.Chunk) -> None:
    out = outs[chunk.fd]
    if out is None:
        return
    try:
        out.write(chunk.data)
        out.flush()
    except BrokenPipeError:
        # The driver stopped reading (for example after the terminal event): that is its
        # right. Point the fd at devnull so the interpreter's final flush is quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())
        outs[chunk.fd] = None


def finish(status: int) -> int:
    """This process's exit for ``status``: negative means die by that signal (as
    ``subprocess`` reports it); returns the status to exit with otherwise.

    When the signal does not end a process (one ignored by default), 128 + its number.
    """
    if status >= 0:
        return status
    import contextlib
    import signal

    number = -status
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    with contextlib.suppress(OSError, ValueError):  # not a signal this system knows
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
    return 128 + number


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m adaptertest replay`` (``argv`` excludes ``replay``)."""
    own = list(sys.argv[1:] if argv is None else argv)
    passed_on: list[str] = []
    if "--" in own:  # everything after it belongs to the driver, even "--help"
        split = own.index("--")
        own, passed_on = own[:split], own[split + 1 :]
    if "-h" in own or "--help" in own:
        build_parser().print_help()
        return 0
    try:
        args = parse(own)
    except UsageError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    args.driver_args += passed_on
    return finish(run(args))


def exit_status(exc: SystemExit) -> int:
    """The status a ``SystemExit`` carries, as ``sys.exit`` would turn it into one."""
    if exc.code is None:
        return 0
    return exc.code if isinstance(exc.code, int) else 1


if __name__ == "__main__":
    sys.exit(main())
