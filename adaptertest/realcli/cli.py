"""``adaptertest install-clis``: install the locked real CLIs with npm, print where each is."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from adaptertest.realcli._install import InstallError, install, is_installed, resolve_spec
from adaptertest.realcli._lock import LockError, check_version, load_lock

__all__ = ["DESCRIPTION", "EPILOG", "PROG", "add_arguments", "build_parser", "main"]

PROG = "adaptertest install-clis"
DESCRIPTION = (
    "Install the real agent CLIs pinned in the lock file (npm install --prefix "
    "ROOT/NAME-VERSION), skipping those already installed, and print where each binary is. "
    "Exit status: 0 installed, 1 an install failed, 2 bad command line or lock file."
)
EPILOG = (
    "ROOT defaults to $ADAPTERTEST_CLI_ROOT, else ~/.cache/agent-driver-kit/clis; "
    "$ADAPTERTEST_CLI_VERSION_<NAME> picks another version when --version does not."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The install-clis options (shared with the ``adaptertest`` CLI's help)."""
    parser.add_argument(
        "names", nargs="*", metavar="NAME", help="CLIs to install (default: all in the lock)"
    )
    parser.add_argument("--root", type=Path, metavar="DIR", help="install under DIR")
    parser.add_argument(
        "--lock",
        type=Path,
        metavar="FILE",
        help="the lock file (default: the kit's examples/cli-versions.json)",
    )
    parser.add_argument(
        "--version",
        action="append",
        default=[],
        metavar="NAME=VER",
        dest="versions",
        help="install VER of NAME instead of the locked version (repeatable)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=DESCRIPTION, epilog=EPILOG)
    add_arguments(parser)
    return parser


def _versions(pairs: Sequence[str]) -> dict[str, str]:
    versions: dict[str, str] = {}
    for pair in pairs:
        name, sep, version = pair.partition("=")
        if not sep or not name or not version:
            raise LockError(f"--version expects NAME=VERSION such as claude=2.1.328, got {pair!r}")
        if name in versions:
            raise LockError(f"--version names {name} twice")
        versions[name] = check_version(version, f"--version {name}")
    return versions


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``adaptertest install-clis`` (``argv`` excludes the command)."""
    try:
        ns = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:  # --help, or a usage error argparse already printed
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 2
    try:
        versions = _versions(ns.versions)
        names = list(dict.fromkeys(ns.names)) or list(load_lock(ns.lock))
        stray = sorted(set(versions) - set(names))
        if stray:
            raise LockError(f"--version names {', '.join(stray)}, which is not being installed")
        for name in names:
            spec = resolve_spec(name, lock=ns.lock, version=versions.get(name))
            fresh = not is_installed(spec, ns.root)
            if fresh:
                print(f"installing {name} ({spec.package}@{spec.version}) ...", file=sys.stderr)
            pinned = {name: spec.version}
            binary = install([name], root=ns.root, lock=ns.lock, versions=pinned)[name]
            state = "installed" if fresh else "already installed"
            print(f"{name} {spec.version}: {binary} ({state})", flush=True)
    except LockError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except InstallError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    return 0
