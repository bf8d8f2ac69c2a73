"""``adaptertest record OUT -- COMMAND ARGS...``: run an agent CLI once, keep a recording.

The command runs with this process's stdin and environment. Its stdout and stderr are
shown live (copied to this process's stdout and stderr as they arrive) and kept, with
the time of each chunk and the exit status or signal, in OUT (format v1, see
:mod:`adaptertest.recording`), which ``adaptertest replay OUT`` plays back.

Secrets never reach the file. Before a chunk is kept, these are replaced:

- the value of every environment variable whose name looks secret (:func:`is_secret_name`:
  a ``_``-separated word ending in KEY, TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE,
  CREDENTIAL or COOKIE, plurals too, or a word PAT or PASS, or one starting with AUTH
  (AUTHORIZATION too, but not AUTHOR: ``GIT_AUTHOR_NAME`` is no secret);
  case-insensitive), and every ``--secret VALUE``, by the marker ``[REDACTED]``;
- the home directory (and its resolved path), followed by anything but a file-name
  character, by ``~``.

Values shorter than :data:`MIN_SECRET` characters are not replaced (they would match
all over ordinary output); the recorder says so on stderr. Each value is also matched in
its JSON-escaped forms. Replacement runs on the joined stream of each fd, so a secret
split across two reads is still caught: the end of a chunk that could begin a secret is
held back until the next read settles it. ``--no-redact`` turns all of this off.

With ``--scenario FILE`` the command runs against the kit's model-API emulator
(:mod:`adaptertest.emulator`) playing that scenario: the recorder starts it on 127.0.0.1,
sets ``ADAPTERTEST_EMULATOR_URL``, ``ANTHROPIC_BASE_URL``, ``GOOGLE_GEMINI_BASE_URL`` and
``OPENAI_BASE_URL`` (with ``/v1``) in the command's environment, replaces the API keys
the three CLIs read by a dummy (and sets ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1``,
which keeps Claude Code's telemetry look-ups off the network), and replaces a literal
``{emulator}`` in the command's arguments by the emulator's base URL. Its ephemeral
address is written as ``{emulator}`` in the file, so a recording does not change with
the port. The header names the CLI and
its version (``--cli NAME``, or the program's name when it is ``claude``, ``codex`` or
``gemini``; the version is what ``PROGRAM --version`` prints).

SIGINT and SIGTERM sent to the recorder are passed on to the command, and the file is
still written once it exits. (A Ctrl-C typed at the terminal already reaches the command,
which shares the terminal's foreground process group; that one is not sent twice.) The
recorder's exit status mirrors the command's: the same code, or death by the same signal.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import BinaryIO

from adaptertest._screen import MIN_SECRET as MIN_SECRET
from adaptertest.recording import DEFAULT_MARKER, STDERR, STDOUT, Chunk, Recording
from adaptertest.replay import exit_status, finish
from driver.secret_names import is_secret_name as is_secret_name

PROG = "adaptertest record"
HOME_MARKER = "~"
DRAIN_SECONDS = 1.0
"""How long to keep reading after the command exits while a process it started still
holds its stdout or stderr open."""

_FILE_NAME_CHAR = rb"[A-Za-z0-9._-]"


# -- redaction -----------------------------------------------------------------------------


class Rule:
    """Replace ``needle`` by ``replacement``; ``label`` names it in the header."""

    __slots__ = ("bounded", "label", "needle", "replacement")

    def __init__(self, needle: bytes, replacement: bytes, label: str, *, bounded: bool) -> None:
        self.needle = needle
        self.replacement = replacement
        self.label = label
        # Only where no file-name character follows: /home/al is not replaced in /home/alex.
        self.bounded = bounded


def _variants(value: str) -> Iterator[bytes]:
    """The bytes of ``value`` as the environment holds it, and as JSON text escapes it."""
    yield os.fsencode(value)
    for ascii_only in (False, True):
        escaped = json.dumps(value, ensure_ascii=ascii_only)[1:-1]
        with contextlib.suppress(UnicodeEncodeError):  # undecodable bytes: no JSON form
            yield escaped.encode("utf-8")


class Redactor:
    """The replacement rules, and which of them fired (:attr:`used`)."""

    def __init__(self, rules: Iterable[Rule]) -> None:
        by_needle: dict[bytes, Rule] = {}
        self._labels: dict[bytes, list[str]] = {}
        for rule in rules:
            if not rule.needle:
                continue
            by_needle.setdefault(rule.needle, rule)
            labels = self._labels.setdefault(rule.needle, [])
            if rule.label not in labels:
                labels.append(rule.label)
        # Longest first, so that at any position the longest needle wins, as it would on
        # the whole stream; a secret's rule also beats the home rule it may contain.
        self._rules = sorted(by_needle.values(), key=lambda r: len(r.needle), reverse=True)
        parts = [
            re.escape(r.needle) + (b"(?!" + _FILE_NAME_CHAR + b")" if r.bounded else b"")
            for r in self._rules
        ]
        self._pattern = re.compile(b"|".join(parts)) if parts else None
        self._by_needle = by_needle
        self.used: list[str] = []

    def stream(self) -> RedactedStream:
        """A new stream state: one per fd, so held-back bytes never cross streams."""
        return RedactedStream(self)

    def redact(self, data: bytes) -> bytes:
        """Redact a whole, finished piece of bytes."""
        stream = self.stream()
        return stream.feed(data) + stream.flush()

    def _replace(self, match: re.Match[bytes]) -> bytes:
        needle = match.group()
        for label in self._labels[needle]:
            if label not in self.used:
                self.used.append(label)
        return self._by_needle[needle].replacement

    def _hold_point(self, buf: bytes, start: int) -> int:
        """Where the tail of ``buf`` that may still grow into a match begins (else its end)."""
        hold = len(buf)
        for rule in self._rules:
            needle = rule.needle
            # Unbounded: a proper prefix of the needle. Bounded: the whole needle counts
            # too, since the character after it decides.
            i = max(start, len(buf) - len(needle) + (0 if rule.bounded else 1))
            while (i := buf.find(needle[:1], i, hold)) >= 0:
                if needle.startswith(buf[i:]):
                    hold = i
                    break
                i += 1
        return hold

    def _feed(self, buf: bytes, *, final: bool) -> tuple[bytes, bytes]:
        """(redacted bytes settled so far, bytes held back for the next read)."""
        if self._pattern is None:
            return buf, b""
        if final:
            return self._pattern.sub(self._replace, buf), b""
        out: list[bytes] = []
        pos = 0
        while True:
            hold = self._hold_point(buf, pos)
            match = self._pattern.search(buf, pos)
            # A match that starts before the hold point is final: no longer needle can
            # start there, or the hold point would be at or before it.
            if match is None or match.start() >= hold:
                out.append(buf[pos:hold])
                return b"".join(out), buf[hold:]
            out += (buf[pos : match.start()], self._replace(match))
            pos = match.end()


class RedactedStream:
    """One fd's bytes through the redactor, then cut where UTF-8 characters end."""

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._held = b""  # may still become (part of) a secret
        self._partial = b""  # an unfinished UTF-8 character, redacted already

    def feed(self, data: bytes) -> bytes:
        """The bytes that can be kept now; the rest waits for the next read."""
        settled, self._held = self._redactor._feed(self._held + data, final=False)
        settled = self._partial + settled
        cut = _utf8_cut(settled)
        self._partial = settled[cut:]
        return settled[:cut]

    def flush(self) -> bytes:
        """Everything still held, at the end of the stream."""
        settled, _ = self._redactor._feed(self._held, final=True)
        rest = self._partial + settled
        self._held = self._partial = b""
        return rest


def _utf8_cut(data: bytes) -> int:
    """Where an unfinished UTF-8 character at the end of ``data`` starts (else its length).

    Cutting there keeps a character split between two reads out of two base64 chunks.
    """
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 == 0x80:  # a continuation byte: look further back
            continue
        size = (
            2
            if byte & 0xE0 == 0xC0
            else 3
            if byte & 0xF0 == 0xE0
            else 4
            if byte & 0xF8 == 0xF0
            else 1
        )
        return len(data) - back if size > back else len(data)
    return len(data)


def redaction_rules(
    environ: Mapping[str, str],
    secrets: Sequence[str],
    home: str | None,
    *,
    marker: str = DEFAULT_MARKER,
    notice: Callable[[str], None] = lambda _: None,
) -> list[Rule]:
    """The rules for secret-looking environment values, ``--secret`` values and home."""
    hidden = os.fsencode(marker)
    rules: list[Rule] = []

    def add(value: str, label: str, replacement: bytes, *, bounded: bool = False) -> None:
        if len(value) < MIN_SECRET:
            notice(f"not redacting {label}: shorter than {MIN_SECRET} characters")
            return
        rules.extend(Rule(v, replacement, label, bounded=bounded) for v in _variants(value))

    for name in sorted(environ):
        if environ[name] and is_secret_name(name):
            add(environ[name], f"env:{name}", hidden)
    for number, value in enumerate(secrets, start=1):
        add(value, f"--secret #{number}", hidden)
    if home:
        homes = dict.fromkeys(h.rstrip("/") or "/" for h in (home, os.path.realpath(home)))
        for path in homes:
            add(path, "home", HOME_MARKER.encode(), bounded=True)
    return rules


# -- running -------------------------------------------------------------------------------


class _Tee:
    """Shows a stream live; stops quietly when the reader goes away."""

    def __init__(self, target: BinaryIO | None) -> None:
        self.target = target

    def write(self, data: bytes) -> None:
        if self.target is None:
            return
        try:
            self.target.write(data)
            self.target.flush()
        except (BrokenPipeError, ValueError):  # a closed reader, or a closed file
            self.target = None


def _terminal_sent(signum: int) -> bool:
    """Whether a SIGINT most likely came from the terminal, which sent it to the child too.

    True when this process's group is the foreground group of its terminal: the child,
    in the same group, got the same Ctrl-C.
    """
    if signum != signal.SIGINT:
        return False
    for fd in (0, 1, 2):
        with contextlib.suppress(OSError):
            if os.isatty(fd):
                return os.tcgetpgrp(fd) == os.getpgrp()
    return False


@contextlib.contextmanager
def _forwarding(proc: subprocess.Popen[bytes]) -> Iterator[None]:
    """Pass SIGINT and SIGTERM on to the child while it runs (main thread only)."""

    def forward(signum: int, _frame: FrameType | None) -> None:
        if proc.returncode is None and not _terminal_sent(signum):
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signum)

    wanted = (signal.SIGINT, signal.SIGTERM)
    try:
        previous = {sig: signal.signal(sig, forward) for sig in wanted}
    except ValueError:  # not the main thread: signals cannot be caught here
        yield
        return
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when ``pid`` exits (Linux), else None."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        fd: int = opener(pid)
    except OSError:
        return None
    return fd


def _timeout(exited: float | None, *, watching_exit: bool) -> float | None:
    """How long the next wait for output may last (None: until something happens).

    Once the command has exited, what is left to read is bounded by :data:`DRAIN_SECONDS`;
    before, the wait ends with output or the pidfd, or every 50 ms to poll for the exit.
    """
    if exited is not None:
        return exited + DRAIN_SECONDS - time.monotonic()
    return None if watching_exit else 0.05


def record(
    command: Sequence[str],
    *,
    redactor: Redactor | None = None,
    stdout: BinaryIO | None = None,
    stderr: BinaryIO | None = None,
    notice: Callable[[str], None] = lambda _: None,
    env: Mapping[str, str] | None = None,
    cli: Mapping[str, str] | None = None,
) -> Recording:
    """Run ``command`` to its end and return what it did, redacted.

    ``stdout`` and ``stderr`` receive the command's output live, unredacted (None: not
    shown). ``env`` is the command's whole environment (None: this process's); ``cli``
    goes into the header. Raises OSError when the command cannot be started.
    """
    redactor = redactor if redactor is not None else Redactor(())
    streams = {STDOUT: redactor.stream(), STDERR: redactor.stream()}
    tees = {STDOUT: _Tee(stdout), STDERR: _Tee(stderr)}
    chunks: list[Chunk] = []
    start = time.monotonic()
    with (
        subprocess.Popen(
            list(command),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None,
        ) as proc,
        _forwarding(proc),
        selectors.DefaultSelector() as selector,
    ):
        assert proc.stdout is not None
        assert proc.stderr is not None
        selector.register(proc.stdout, selectors.EVENT_READ, STDOUT)
        selector.register(proc.stderr, selectors.EVENT_READ, STDERR)
        pidfd = _pidfd(proc.pid)
        if pidfd is not None:
            selector.register(pidfd, selectors.EVENT_READ, 0)
        exited: float | None = None
        try:
            open_streams = 2
            while open_streams:
                timeout = _timeout(exited, watching_exit=pidfd is not None)
                if timeout is not None and timeout <= 0:
                    notice(
                        f"{command[0]} exited, but a process it started keeps its output "
                        f"open; stopped reading {DRAIN_SECONDS:g} s later"
                    )
                    break
                for key, _ in selector.select(timeout):
                    fd = key.data
                    if fd == 0:  # the pidfd: the child has exited
                        selector.unregister(key.fileobj)
                        exited = time.monotonic()
                        continue
                    data = os.read(key.fd, 65536)
                    now = time.monotonic() - start
                    if not data:
                        selector.unregister(key.fileobj)
                        open_streams -= 1
                        kept = streams[fd].flush()
                    else:
                        tees[fd].write(data)
                        kept = streams[fd].feed(data)
                    if kept:
                        chunks.append(Chunk(now, fd, kept))
                if exited is None and pidfd is None and proc.poll() is not None:
                    exited = time.monotonic()
            now = time.monotonic() - start
            for fd, stream in streams.items():  # streams cut short by the drain limit
                if rest := stream.flush():
                    chunks.append(Chunk(now, fd, rest))
            returncode = proc.wait()
        finally:
            if pidfd is not None:
                os.close(pidfd)
    duration = time.monotonic() - start
    return Recording(
        argv=[
            redactor.redact(os.fsencode(arg)).decode("utf-8", "backslashreplace") for arg in command
        ],
        chunks=chunks,
        exit_code=returncode if returncode >= 0 else None,
        signal=-returncode if returncode < 0 else None,
        redactions=redactor.used,
        marker=DEFAULT_MARKER,
        duration=duration,
        cli=cli,
    )


# -- against the emulator ------------------------------------------------------------------

EMULATOR_PLACEHOLDER = "{emulator}"
"""Replaced by the emulator's base URL in the command's arguments; its address in the file."""
DUMMY_KEY = "adaptertest-emulator-key"
"""The API key the command gets: the emulator accepts any, and no real key leaves the host."""
KNOWN_CLIS = ("claude", "codex", "gemini")
"""Programs whose name alone names the CLI in the header."""
VERSION_TIMEOUT = 20.0
"""Seconds ``PROGRAM --version`` may take."""
_VERSION = re.compile(r"\d+\.\d+(?:\.\d+)?(?:[-+.][0-9A-Za-z.]+)?")


def emulator_env(base_url: str) -> dict[str, str]:
    """The variables that point the three CLIs (and any program) at the emulator."""
    return {
        "ADAPTERTEST_EMULATOR_URL": base_url,
        "ANTHROPIC_BASE_URL": base_url,
        "GOOGLE_GEMINI_BASE_URL": base_url,
        "OPENAI_BASE_URL": f"{base_url}/v1",
        "ANTHROPIC_API_KEY": DUMMY_KEY,
        "GEMINI_API_KEY": DUMMY_KEY,
        "OPENAI_API_KEY": DUMMY_KEY,
        # Claude Code otherwise looks up its telemetry hosts: traffic beyond loopback.
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


def cli_version(program: str, env: Mapping[str, str] | None = None) -> str:
    """The version ``program --version`` prints (its first version-looking word), or ``""``
    when it cannot be run, fails or prints none."""
    try:
        done = subprocess.run(
            [program, "--version"],
            capture_output=True,
            timeout=VERSION_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
            env=dict(env) if env is not None else None,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    if done.returncode != 0:
        return ""
    found = _VERSION.search(done.stdout.decode("utf-8", "replace"))
    return found.group(0) if found else ""


def cli_header(
    name: str, command: Sequence[str], env: Mapping[str, str] | None, notice: Callable[[str], None]
) -> dict[str, str] | None:
    """The header's ``cli``: ``name`` (or the program's, when it is a known CLI) and the
    version it reports; None when no name is given or detectable."""
    program = command[0]
    name = name or next((c for c in KNOWN_CLIS if Path(program).name == c), "")
    if not name:
        return None
    version = cli_version(program, env)
    if not version:
        notice(f"{program} --version printed no version: the header names {name} only")
        return {"name": name}
    return {"name": name, "version": version}


# -- command line --------------------------------------------------------------------------


class UsageError(Exception):
    """A command line that cannot be run (exit status 2)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The record options (shared with the ``adaptertest`` CLI's help)."""
    parser.add_argument("out", type=Path, metavar="OUT", help="recording file to write")
    parser.add_argument(
        "--secret",
        action="append",
        default=[],
        metavar="VALUE",
        help=f"also replace VALUE by {DEFAULT_MARKER} (repeatable; a value under {MIN_SECRET} "
        "characters is left alone, with a notice, as environment values are)",
    )
    parser.add_argument(
        "--no-redact",
        action="store_true",
        help="keep secrets and the home directory as they are (the file is not safe to share)",
    )
    parser.add_argument("--force", action="store_true", help="replace OUT if it exists")
    parser.add_argument(
        "--scenario",
        type=Path,
        metavar="FILE",
        help="run COMMAND against the model-API emulator playing this scenario (JSON); "
        f"{EMULATOR_PLACEHOLDER} in COMMAND becomes its base URL",
    )
    parser.add_argument(
        "--cli",
        default="",
        metavar="NAME",
        help="name the recorded CLI in the header, with the version PROGRAM --version "
        "prints (detected for claude, codex and gemini)",
    )
    parser.add_argument(
        "command",
        nargs="*",
        metavar="-- COMMAND ARG",
        help="the command to record and its arguments, after --",
    )


USAGE = (
    f"{PROG} [-h] OUT [--secret VALUE] [--no-redact] [--force] [--scenario FILE] [--cli NAME] "
    "-- COMMAND [ARG ...]"
)
DESCRIPTION = (
    "Run COMMAND once, show its output live and keep it (stdout bytes, stderr, timing, "
    "exit status or signal) in OUT, for adaptertest replay. Values of secret-looking "
    "environment variables, --secret values and the home directory are redacted."
)
EPILOG = (
    "A name looks secret when a _-separated word of it ends in KEY, TOKEN, SECRET, "
    "PASSWORD, PASSWD, PASSPHRASE, CREDENTIAL or COOKIE (or their plurals), is PAT or "
    f"PASS, or starts with AUTH but not AUTHOR(S) (any case); values under {MIN_SECRET} "
    "characters are left alone. With --scenario the command's environment points "
    "ANTHROPIC_BASE_URL, GOOGLE_GEMINI_BASE_URL, OPENAI_BASE_URL and "
    "ADAPTERTEST_EMULATOR_URL at the emulator, with dummy API keys. "
    "Exit status: the command's (or death by its signal); "
    "2 for a bad command line or an unwritable OUT, 126 or 127 when COMMAND cannot be run."
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, usage=USAGE, description=DESCRIPTION, epilog=EPILOG)
    add_arguments(parser)
    return parser


def _check(ns: argparse.Namespace) -> None:
    if not ns.command:
        raise UsageError("no command to record: put it after --, e.g. OUT -- claude -p hi")
    if ns.no_redact and ns.secret:
        raise UsageError("--secret and --no-redact contradict each other")
    out: Path = ns.out
    parent = out.parent
    if not parent.is_dir():
        raise UsageError(f"the directory of OUT does not exist: {parent}")
    if out.is_dir():
        raise UsageError(f"OUT is a directory: {out}")
    if out.exists() and not ns.force:
        raise UsageError(f"OUT exists: {out} (pass --force to replace it)")
    if not os.access(parent, os.W_OK):
        raise UsageError(f"cannot write in the directory of OUT: {parent}")
    if ns.scenario is not None and not ns.scenario.is_file():
        raise UsageError(f"--scenario: no such file: {ns.scenario}")


def _write(out: Path, data: bytes) -> None:
    """Write ``out`` whole or not at all (a temporary file beside it, then a rename)."""
    partial = out.with_name(f".{out.name}.{os.getpid()}.partial")
    try:
        partial.write_bytes(data)
        os.replace(partial, out)
    finally:
        with contextlib.suppress(FileNotFoundError):
            partial.unlink()


def run(ns: argparse.Namespace) -> int:
    """Record with parsed arguments; the command's status (negative: killed by a signal)."""

    def notice(text: str) -> None:
        print(f"{PROG}: {text}", file=sys.stderr, flush=True)

    _check(ns)
    if ns.scenario is None:
        return _run(ns, ns.command, None, [], notice)
    from adaptertest.emulator import Emulator, Scenario, ScenarioError

    try:
        scenario = Scenario.load(ns.scenario)
    except ScenarioError as exc:
        raise UsageError(f"--scenario: {exc}") from None
    with Emulator(scenario) as emu:
        base = emu.base_url
        command = [arg.replace(EMULATOR_PLACEHOLDER, base) for arg in ns.command]
        env = {**os.environ, **emulator_env(base)}
        # The port changes every run: the file says {emulator} wherever the address was.
        address = base.removeprefix("http://")
        placeholder = EMULATOR_PLACEHOLDER.encode()
        rules = [
            Rule(base.encode(), placeholder, "emulator", bounded=True),
            Rule(address.encode(), placeholder, "emulator", bounded=True),
        ]
        status = _run(ns, command, env, rules, notice)
        notice(f"the emulator answered {len(emu.requests)} requests")
        return status


def _run(
    ns: argparse.Namespace,
    command: list[str],
    env: dict[str, str] | None,
    extra_rules: list[Rule],
    notice: Callable[[str], None],
) -> int:
    environ = os.environ if env is None else env
    rules = (
        []
        if ns.no_redact
        else redaction_rules(
            {**os.environ, **environ},
            ns.secret,
            os.environ.get("HOME") or os.path.expanduser("~"),
            notice=notice,
        )
    )
    redactor = Redactor([*extra_rules, *rules])
    cli = cli_header(ns.cli, command, env, notice)
    try:
        recording = record(
            command,
            redactor=redactor,
            stdout=sys.stdout.buffer,
            stderr=sys.stderr.buffer,
            notice=notice,
            env=env,
            cli=cli,
        )
    except FileNotFoundError as exc:
        notice(f"command not found: {command[0]} ({exc.strerror})")
        return 127
    except PermissionError as exc:
        notice(f"cannot run {command[0]}: {exc.strerror}")
        return 126
    except OSError as exc:
        notice(f"cannot run {command[0]}: {exc}")
        return 126
    try:
        _write(ns.out, recording.dumps())
    except OSError as exc:
        notice(f"cannot write the recording: {exc}")
        return 2
    if recording.signal is not None:
        status = f"killed by signal {recording.signal}"
    else:
        status = f"exit status {recording.exit_code}"
    redacted = ", ".join(recording.redactions) or "nothing found"
    from adaptertest.report import plural

    notice(
        f"wrote {ns.out}: {plural(len(recording.chunks), 'chunk')}, {status}; redacted: {redacted}"
    )
    if ns.no_redact:
        notice("--no-redact: secrets were kept; check the file before sharing it")
    return recording.returncode


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``adaptertest record`` (``argv`` excludes ``record``).

    Exits like the recorded command: its status, or killed by its signal.
    """
    own = list(sys.argv[1:] if argv is None else argv)
    command: list[str] = []
    if "--" in own:
        split = own.index("--")
        own, command = own[:split], own[split + 1 :]
    try:
        ns = build_parser().parse_args(own)
    except SystemExit as exc:  # --help, or a usage error argparse already printed
        return exit_status(exc)
    if ns.command:
        print(f"{PROG}: error: put the command after --: {PROG} OUT -- COMMAND", file=sys.stderr)
        return 2
    ns.command = command
    try:
        status = run(ns)
    except UsageError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    return finish(status)


if __name__ == "__main__":
    sys.exit(main())
