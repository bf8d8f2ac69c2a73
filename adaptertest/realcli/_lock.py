"""The lock file: which npm package and exact version each real CLI is, and its binary."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DEFAULT_LOCK",
    "CLISpec",
    "LockError",
    "check_version",
    "env_suffix",
    "load_lock",
    "lock_path",
    "parse_lock",
]

DEFAULT_LOCK = Path(__file__).resolve().parents[2] / "examples" / "cli-versions.json"
"""The kit's own lock, in a source checkout (an editable install finds it there)."""

_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")
_PACKAGE = re.compile(r"(?:@[a-z0-9][a-z0-9._-]*/)?[a-z0-9][a-z0-9._-]*")
_VERSION = re.compile(r"\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?")
_BIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_FIELDS = ("package", "version", "bin")


class LockError(ValueError):
    """The lock file (or a version override) is missing, unreadable or malformed."""


@dataclass(frozen=True, slots=True)
class CLISpec:
    """One locked CLI: ``npm install <package>@<version>`` provides ``node_modules/.bin/<bin>``."""

    name: str
    package: str
    version: str
    bin: str

    def with_version(self, version: str) -> CLISpec:
        """The same CLI at another exact version."""
        return CLISpec(self.name, self.package, version, self.bin)


def env_suffix(name: str) -> str:
    """The ``<NAME>`` part of the override variables: upper case, ``-`` as ``_``."""
    return name.upper().replace("-", "_")


def check_version(version: str, what: str) -> str:
    """``version`` when it is one exact release (``x.y.z``, optional pre-release/build)."""
    if not isinstance(version, str) or not _VERSION.fullmatch(version):
        raise LockError(f"{what}: {version!r} is not an exact version such as 1.2.3")
    return version


def lock_path(lock: str | os.PathLike[str] | None = None) -> Path:
    """The lock to read: ``lock`` when given, else the kit's own (:data:`DEFAULT_LOCK`)."""
    if lock is not None:
        return Path(lock)
    if DEFAULT_LOCK.is_file():
        return DEFAULT_LOCK
    raise LockError(
        "no lock file: the kit's examples/cli-versions.json is not here (an installed, "
        "not editable, kit); pass the lock file (--lock FILE, or lock=...)"
    )


def load_lock(lock: str | os.PathLike[str] | None = None) -> dict[str, CLISpec]:
    """Read and validate a lock file (see :func:`parse_lock`); :class:`LockError` otherwise."""
    path = lock_path(lock)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise LockError(f"cannot read the lock file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise LockError(f"{path}: the lock file is not UTF-8 text") from None
    return parse_lock(text, source=str(path))


def parse_lock(text: str, *, source: str = "lock") -> dict[str, CLISpec]:
    """``{"NAME": {"package": ..., "version": ..., "bin": ...}, ...}`` as specs by name.

    Names are lower-case words (``claude``); the package an npm name; the version
    exact (no ranges: the point is to pin); the binary a file name. Every problem is
    reported with ``source`` and the entry it is in.
    """
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise LockError(f"{source}: not valid JSON: {exc}") from None
    if not isinstance(data, dict) or not data:
        raise LockError(f"{source}: expected a non-empty JSON object of CLIs by name")
    specs: dict[str, CLISpec] = {}
    for name, entry in data.items():
        if not _NAME.fullmatch(name):
            raise LockError(f"{source}: CLI name {name!r} is not a lower-case word such as claude")
        if not isinstance(entry, dict):
            raise LockError(f"{source}: {name}: expected an object with {', '.join(_FIELDS)}")
        unknown = sorted(set(entry) - set(_FIELDS))
        if unknown:
            raise LockError(f"{source}: {name}: unknown field(s) {', '.join(unknown)}")
        for field in _FIELDS:
            if not isinstance(entry.get(field), str) or not entry[field]:
                raise LockError(f"{source}: {name}.{field}: expected a non-empty string")
        if not _PACKAGE.fullmatch(entry["package"]):
            raise LockError(f"{source}: {name}.package: {entry['package']!r} is not an npm name")
        if not _BIN.fullmatch(entry["bin"]):
            raise LockError(f"{source}: {name}.bin: {entry['bin']!r} is not a file name")
        version = check_version(entry["version"], f"{source}: {name}.version")
        specs[name] = CLISpec(name, entry["package"], version, entry["bin"])
    return specs
