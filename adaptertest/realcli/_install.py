"""Installing the locked CLIs with npm, finding them, and skipping when they are missing.

Layout: ``<root>/<name>-<version>/`` is an npm prefix holding one package; its binary
is ``node_modules/.bin/<bin>``. An install is complete when the package's own
``package.json`` has the version and npm finished (the marker this module writes
after a successful ``npm install``, or npm's own ``node_modules/.package-lock.json``,
which npm writes last).

What a process finds is decided once per CLI and kept for the processes it starts: the
first lookup records its answer in ``$ADAPTERTEST_CLI_FOUND``, and a child (the suite's
fresh interpreter, a test's subprocess) takes its parent's answer over a lookup of its
own. A CLI installed while a test run is under way therefore never makes a child see a
CLI its parent did not (or the other way round); :func:`install` records what it
installed.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import NoReturn

from adaptertest.realcli._lock import CLISpec, LockError, check_version, env_suffix, load_lock

__all__ = [
    "BIN_ENV_PREFIX",
    "FOUND_ENV",
    "INSTALL_HINT",
    "MARKER",
    "ROOT_ENV",
    "VERSION_ENV_PREFIX",
    "InstallError",
    "binary_path",
    "cli_root",
    "cli_version",
    "install",
    "installed_version",
    "is_installed",
    "locate",
    "npm_command",
    "prefix_for",
    "require",
    "resolve_spec",
    "skip_reason",
]

ROOT_ENV = "ADAPTERTEST_CLI_ROOT"
"""Where the CLIs are installed instead of ``~/.cache/agent-driver-kit/clis``."""
BIN_ENV_PREFIX = "ADAPTERTEST_CLI_BIN_"
"""``ADAPTERTEST_CLI_BIN_<NAME>``: the path of a binary to use instead of the installed one."""
VERSION_ENV_PREFIX = "ADAPTERTEST_CLI_VERSION_"
"""``ADAPTERTEST_CLI_VERSION_<NAME>``: another exact version than the lock's."""
MARKER = ".adaptertest-installed.json"
"""Written into the prefix once ``npm install`` succeeded: the package and version."""
INSTALL_HINT = "adaptertest install-clis"
"""The command that installs the locked CLIs (skip reasons name it)."""
FOUND_ENV = "ADAPTERTEST_CLI_FOUND"
"""What this process and its parents found, by CLI: ``{key: {"pid": ..., "binary": ...}}``
(JSON; ``binary`` is empty for none). Child processes inherit their parent's answers."""
STDERR_TAIL = 1500
"""Characters of npm's stderr quoted when an install fails."""


class InstallError(RuntimeError):
    """npm is missing, or ``npm install`` failed (the message quotes its stderr's end)."""


def cli_root(root: str | os.PathLike[str] | None = None) -> Path:
    """``root``, else ``$ADAPTERTEST_CLI_ROOT``, else ``~/.cache/agent-driver-kit/clis``."""
    if root is not None:
        return Path(root)
    configured = os.environ.get(ROOT_ENV, "")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "agent-driver-kit" / "clis"


def resolve_spec(
    name: str,
    *,
    lock: str | os.PathLike[str] | None = None,
    version: str | None = None,
) -> CLISpec:
    """The lock's spec for ``name``, at ``version`` or ``$ADAPTERTEST_CLI_VERSION_<NAME>``
    when either is given; :class:`LockError` for a name the lock lacks or a bad version."""
    specs = load_lock(lock)
    if name not in specs:
        raise LockError(f"no CLI named {name!r} in the lock (it has: {', '.join(sorted(specs))})")
    spec = specs[name]
    variable = VERSION_ENV_PREFIX + env_suffix(name)
    wanted = version or os.environ.get(variable, "")
    if wanted:
        what = f"version of {name}" if version else variable
        spec = spec.with_version(check_version(wanted, what))
    return spec


def prefix_for(spec: CLISpec, root: str | os.PathLike[str] | None = None) -> Path:
    """The npm prefix of ``spec``: ``<root>/<name>-<version>``."""
    return cli_root(root) / f"{spec.name}-{spec.version}"


def binary_path(spec: CLISpec, root: str | os.PathLike[str] | None = None) -> Path:
    """Where the binary of ``spec`` is once installed."""
    return prefix_for(spec, root) / "node_modules" / ".bin" / spec.bin


def installed_version(prefix: Path, package: str) -> str | None:
    """The version in ``<prefix>/node_modules/<package>/package.json``; None if unreadable."""
    return _package_version(prefix / "node_modules" / package / "package.json")


def _package_version(path: Path, package: str | None = None) -> str | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or (package is not None and data.get("name") != package):
        return None
    version = data.get("version")
    return version if isinstance(version, str) else None


def is_installed(spec: CLISpec, root: str | os.PathLike[str] | None = None) -> bool:
    """Whether a complete install of ``spec`` is under ``root`` (see the module notes)."""
    prefix = prefix_for(spec, root)
    if not binary_path(spec, root).is_file():  # follows the symlink npm makes
        return False
    if installed_version(prefix, spec.package) != spec.version:
        return False
    marker = _read_marker(prefix / MARKER)
    if marker is not None:
        return marker == {"package": spec.package, "version": spec.version}
    return (prefix / "node_modules" / ".package-lock.json").is_file()


def _read_marker(path: Path) -> dict[str, object] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else {}


def npm_command(spec: CLISpec, prefix: Path, npm: str = "npm") -> list[str]:
    """The install command of ``spec`` into ``prefix``."""
    return [
        npm,
        "install",
        "--prefix",
        str(prefix),
        f"{spec.package}@{spec.version}",
        "--save-exact",
        "--no-audit",
        "--no-fund",
    ]


def install(
    names: Iterable[str] | None = None,
    *,
    root: str | os.PathLike[str] | None = None,
    lock: str | os.PathLike[str] | None = None,
    versions: Mapping[str, str] | None = None,
) -> dict[str, Path]:
    """Install each named CLI (all the lock's when ``names`` is None or empty) with npm;
    returns the binary path by name.

    ``versions`` overrides the lock's version per name (else
    ``$ADAPTERTEST_CLI_VERSION_<NAME>``). A complete install is left as it is. Two
    processes installing one prefix take turns (a file lock beside it), so the second
    finds the first one's install. Raises :class:`LockError` for a bad lock, name or
    version, :class:`InstallError` when npm is missing or fails.
    """
    overrides = dict(versions or {})
    wanted = list(names or ()) or list(load_lock(lock))
    stray = sorted(set(overrides) - set(wanted))
    if stray:
        raise LockError(f"a version was given for {', '.join(stray)}, which is not installed")
    # Every name and version is checked before npm runs once.
    specs = [resolve_spec(name, lock=lock, version=overrides.get(name)) for name in wanted]
    binaries = {spec.name: _install_one(spec, root) for spec in specs}
    for spec in specs:  # this process and those it starts now find what it installed
        _record(_found_key(spec.name, spec.version, root, ""), binaries[spec.name], force=True)
    return binaries


def _install_one(spec: CLISpec, root: str | os.PathLike[str] | None) -> Path:
    prefix = prefix_for(spec, root)
    if is_installed(spec, root):
        return binary_path(spec, root)
    npm = shutil.which("npm")
    if npm is None:
        raise InstallError(
            f"npm is not on PATH: install Node.js 20 or later (it brings npm) to install "
            f"{spec.name} ({spec.package}@{spec.version})"
        )
    prefix.parent.mkdir(parents=True, exist_ok=True)
    with _file_lock(prefix.parent / f"{prefix.name}.lock"):
        if is_installed(spec, root):  # another process installed it while this one waited
            return binary_path(spec, root)
        (prefix / MARKER).unlink(missing_ok=True)
        prefix.mkdir(exist_ok=True)
        try:
            done = subprocess.run(
                npm_command(spec, prefix, npm),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                check=False,
            )
        except OSError as exc:
            raise InstallError(f"cannot run npm ({npm}): {exc}") from exc
        if done.returncode != 0:
            _npm_failed(spec, done)
        if not binary_path(spec, root).is_file():
            raise InstallError(
                f"npm installed {spec.package}@{spec.version} but it has no binary "
                f"{spec.bin!r} in {prefix / 'node_modules' / '.bin'}: check the lock's bin"
            )
        marker = {"package": spec.package, "version": spec.version}
        (prefix / MARKER).write_text(json.dumps(marker) + "\n", encoding="utf-8")
    return binary_path(spec, root)


def _npm_failed(spec: CLISpec, done: subprocess.CompletedProcess[bytes]) -> NoReturn:
    text = done.stderr.decode("utf-8", errors="replace").strip()
    if len(text) > STDERR_TAIL:
        text = "..." + text[-STDERR_TAIL:]
    raise InstallError(
        f"npm install {spec.package}@{spec.version} failed (exit {done.returncode})"
        + (f": {text}" if text else " and printed nothing on stderr")
    )


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if needed) for the block."""
    with path.open("a+b") as handle:
        try:
            import fcntl
        except ImportError:  # not POSIX: installs are not guarded against each other
            yield
            return
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


# -- finding and skipping ---------------------------------------------------------------


def _override(name: str) -> tuple[str, str]:
    variable = BIN_ENV_PREFIX + env_suffix(name)
    return variable, os.environ.get(variable, "")


def locate(
    name: str,
    *,
    root: str | os.PathLike[str] | None = None,
    lock: str | os.PathLike[str] | None = None,
) -> Path | None:
    """The binary of ``name``: ``$ADAPTERTEST_CLI_BIN_<NAME>`` when set and a file, else the
    locked version's (or ``$ADAPTERTEST_CLI_VERSION_<NAME>``'s) complete install; None
    when there is none. A bad lock, name or version raises :class:`LockError`."""
    _, override = _override(name)
    spec = None if override else resolve_spec(name, lock=lock)
    key = _found_key(name, spec.version if spec is not None else "", root, override)
    inherited = _inherited(key)
    if inherited is not None:
        return Path(inherited) if inherited else None
    found: Path | None
    if spec is None:
        path = Path(override).expanduser()
        found = path if path.is_file() else None
    else:
        found = binary_path(spec, root) if is_installed(spec, root) else None
    _record(key, found)
    return found


def _found_key(name: str, version: str, root: str | os.PathLike[str] | None, override: str) -> str:
    return json.dumps([name, version, str(cli_root(root)), override])


def _found() -> dict[str, dict[str, object]]:
    try:
        data = json.loads(os.environ.get(FOUND_ENV, "") or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _inherited(key: str) -> str | None:
    """A parent process's answer for ``key`` (a binary path, or "" for none); None when
    no parent looked it up."""
    entry = _found().get(key)
    if not isinstance(entry, dict) or entry.get("pid") == os.getpid():
        return None
    binary = entry.get("binary")
    return binary if isinstance(binary, str) else None


def _record(key: str, found: Path | None, *, force: bool = False) -> None:
    """Keep this process's first answer for ``key`` (every answer, with ``force``) for the
    processes it starts."""
    found_so_far = _found()
    entry = found_so_far.get(key)
    if not force and isinstance(entry, dict) and entry.get("pid") == os.getpid():
        return
    found_so_far[key] = {"pid": os.getpid(), "binary": "" if found is None else str(found)}
    os.environ[FOUND_ENV] = json.dumps(found_so_far, sort_keys=True)


def cli_version(
    name: str,
    *,
    root: str | os.PathLike[str] | None = None,
    lock: str | os.PathLike[str] | None = None,
) -> str | None:
    """The version of the binary :func:`locate` finds: the installed package's
    ``package.json`` (for an ``ADAPTERTEST_CLI_BIN_<NAME>`` binary: the nearest one above
    the file it resolves to that names the locked package); None when unknown."""
    binary = locate(name, root=root, lock=lock)
    if binary is None:
        return None
    spec = resolve_spec(name, lock=lock)
    if not _override(name)[1]:
        return installed_version(prefix_for(spec, root), spec.package)
    for folder in binary.resolve().parents:
        version = _package_version(folder / "package.json", spec.package)
        if version is not None:
            return version
    return None


def skip_reason(
    name: str,
    *,
    root: str | os.PathLike[str] | None = None,
    lock: str | os.PathLike[str] | None = None,
) -> str | None:
    """Why a real-CLI test of ``name`` cannot run here (node or the CLI missing, a bad
    lock or override), naming ``adaptertest install-clis``; None when it can."""
    install_cmd = f"{INSTALL_HINT} {name}"
    if shutil.which("node") is None:
        return (
            f"node is not on PATH: the {name} CLI needs Node.js 20 or later, then run "
            f"`{install_cmd}`"
        )
    try:
        found = locate(name, root=root, lock=lock)
        spec = resolve_spec(name, lock=lock)
    except LockError as exc:
        return f"the {name} CLI cannot be looked up: {exc}"
    if found is not None:
        return None
    variable, override = _override(name)
    if override:
        return (
            f"{variable}={override} is not a file: point it at the {name} binary, or unset "
            f"it and run `{install_cmd}`"
        )
    return (
        f"the {name} CLI ({spec.package}@{spec.version}) is not installed under "
        f"{cli_root(root)}: run `{install_cmd}`"
    )


def require(
    name: str,
    *,
    root: str | os.PathLike[str] | None = None,
    lock: str | os.PathLike[str] | None = None,
) -> Path:
    """The binary of ``name``, or ``pytest.skip`` with :func:`skip_reason` (in a test)."""
    reason = skip_reason(name, root=root, lock=lock)
    found = locate(name, root=root, lock=lock) if reason is None else None
    if found is None:
        import pytest

        pytest.skip(reason or f"the {name} CLI went missing: run `{INSTALL_HINT} {name}`")
    return found


def cli_labels(
    name: str,
    *,
    root: str | os.PathLike[str] | None = None,
    lock: str | os.PathLike[str] | None = None,
) -> dict[str, str]:
    """``{"cli": name, "cli_version": ...}`` for ``Options(labels=...)``: a tier's report
    then says which release it judged (the matrix and ``adaptertest sweep`` read it)."""
    return {"cli": name, "cli_version": cli_version(name, root=root, lock=lock) or ""}
