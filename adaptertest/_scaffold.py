"""``adaptertest new``: write a standalone driver project from a template.

Two templates, each a driver package plus its tests, renamed for the new project:

- ``memory``: the kit's reference driver, read from the installed ``referencedriver``
  source at run time, so there is no second copy to keep in sync. It implements the
  whole interface in memory and passes every clause; its ``# provider:`` markers show
  where a real driver talks to its agent.
- ``cli``: a subprocess driver for a JSONL-printing CLI on :mod:`driver.clikit`, with
  recordings and replay-based tests. Its source is the project in ``cli-template/``
  beside this module, written for a made-up CLI called ``mycli`` and tested as it
  stands by the kit's own test run.

Renaming is systematic: the template's package name, and its stem in every case form
(``REFERENCE``, ``Reference`` + a capital, ``Reference``, ``reference`` next to an
underscore, ``reference``), plus a few whole strings per template (display name,
fingerprint domain, profile dir, environment variable). A spelling no rule knows
stops the generation instead of being left behind, and a ``memory`` project is
checked for any leftover ``reference`` before anything is written.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import keyword
import os
import re
import shlex
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from adaptertest import __version__

PROG = "adaptertest new"

TEMPLATES = ("memory", "cli")
"""The template names, the default first."""

_CLI_TEMPLATE = Path(__file__).with_name("cli-template")
_CLI_TEMPLATE_PARTS = ("mycli_driver", "recordings", "tests")
_TEXT_SUFFIXES = frozenset({".py", ".jsonl", ".json", ".txt", ".typed"})

_NAME = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")
# Names a project package must not shadow: the kit's packages and what it depends on.
_TAKEN = frozenset(
    {
        "adaptertest",
        "driver",
        "referencedriver",
        "pydantic",
        "pydantic_core",
        "anyio",
        "pytest",
        "hypothesis",
        "jsonschema",
        "rich",
        "syrupy",
        "trio",
        "tests",
        "test",
    }
)
_LEFTOVER = re.compile("reference", re.IGNORECASE)


class ScaffoldError(Exception):
    """A project that cannot be written (exit status 2); nothing was written."""


# -- names ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Names:
    """Every spelling of the new driver's name that a template needs."""

    package: str
    """The Python package, e.g. ``acme_driver``."""
    stem: str
    """The package without a ``driver`` suffix, e.g. ``acme``: identifiers build on it."""
    display: str
    """``Descriptor.display_name``, e.g. ``Acme``."""

    @property
    def camel(self) -> str:
        """``Acme`` as in ``AcmeDriver``."""
        return "".join(part.capitalize() for part in self.stem.split("_"))

    @property
    def upper(self) -> str:
        """``ACME`` as in ``ACME_DRIVER_TYPE``."""
        return self.stem.upper()

    @property
    def kebab(self) -> str:
        """``acme``: the driver type, the program, ids in strings."""
        return self.stem.replace("_", "-")

    @property
    def title(self) -> str:
        """``Acme`` in prose and labels."""
        return " ".join(part.capitalize() for part in self.stem.split("_"))

    @property
    def distribution(self) -> str:
        """The project's distribution name in ``pyproject.toml``."""
        return self.package.replace("_", "-")


def project_names(name: str, display_name: str | None = None) -> Names:
    """Validate ``name`` as the new package's name and derive the rest from it."""
    if not name.isidentifier() or not name.isascii():
        suggestion = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
        hint = f"; for example {suggestion!r}" if _NAME.fullmatch(suggestion) else ""
        raise ScaffoldError(
            f"NAME must be a Python identifier, the new project's package name: letters, "
            f"digits and underscores, not starting with a digit; got {name!r}{hint}"
        )
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        raise ScaffoldError(f"NAME {name!r} is a Python keyword; choose another package name")
    if not _NAME.fullmatch(name):
        raise ScaffoldError(
            f"NAME must be a lower-case package name (a-z, 0-9, single underscores between "
            f"words), got {name!r}; for example {re.sub('_+', '_', name.lower()).strip('_')!r}"
        )
    if name in _TAKEN or name in sys.stdlib_module_names:
        raise ScaffoldError(
            f"NAME {name!r} is taken by the standard library, the kit or one of its "
            "dependencies; importing it would pick the wrong package. Choose another name"
        )
    if _LEFTOVER.search(name):
        raise ScaffoldError(
            f"NAME {name!r} contains 'reference', which a generated project must not "
            "(it would pass for a leftover of the reference driver); choose another name"
        )
    stem = name
    for suffix in ("_driver", "driver"):
        if name.endswith(suffix) and len(name) > len(suffix):
            stem = name[: -len(suffix)]
            break
    display = _display_name(display_name, stem)
    return Names(package=name, stem=stem, display=display)


def _display_name(given: str | None, stem: str) -> str:
    if given is None:
        return " ".join(part.capitalize() for part in stem.split("_"))
    display = given.strip()
    if not display or not display.isprintable() or len(display) > 80:
        raise ScaffoldError(
            f"--display-name must be one printable line of 1 to 80 characters, got {given!r}"
        )
    if _LEFTOVER.search(display):
        raise ScaffoldError(
            f"--display-name {given!r} contains 'reference', which a generated project "
            "must not (it would pass for a leftover of the reference driver)"
        )
    return display


def _quoted(text: str) -> str:
    """A double-quoted string literal, valid in Python and in TOML."""
    return json.dumps(text, ensure_ascii=False)


# -- renaming ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Source:
    """A template's driver package: its name, the stem of its identifiers, and the whole
    strings that name it (each must occur somewhere, so a changed source is noticed)."""

    package: str
    stem: str
    fixed: Callable[[Names], dict[str, str]]


_MEMORY = _Source(
    package="referencedriver",
    stem="reference",
    fixed=lambda n: {
        '"Adaptertest Reference Driver"': _quoted(n.display),
        "adaptertest/reference/v1": f"{n.kebab}/v1",
        "adaptertest-reference-profile": f"{n.kebab}-profile",
        "ADAPTERTEST_REFERENCE_HOME": f"{n.upper}_HOME",
        "In-memory reference driver: passes every conformance clause and serves as a template.": (
            f"The {n.title} driver, generated by ``adaptertest new`` from the kit's in-memory "
            "template."
        ),
        "Copy this package to start a driver; the places": (
            "It passes every conformance clause as it is; the places"
        ),
    },
)

_CLI = _Source(
    package="mycli_driver",
    stem="mycli",
    fixed=lambda n: {'DISPLAY_NAME = "Mycli"': f"DISPLAY_NAME = {_quoted(n.display)}"},
)


class _Renamer:
    """Rewrites every spelling of a source's names in one pass over each text."""

    def __init__(self, source: _Source, names: Names) -> None:
        stem, cap, upper = source.stem, source.stem.capitalize(), source.stem.upper()
        self._fixed = source.fixed(names)
        self._unused = set(self._fixed)
        rules: list[tuple[str, Callable[[str], str]]] = [
            (re.escape(old), lambda old: self._use(old)) for old in self._fixed
        ]
        rules += [
            (rf"\b{source.package}\b", lambda _: names.package),
            (re.escape(upper), lambda _: names.upper),
            (rf"{cap}(?=[A-Z])", lambda _: names.camel),
            (re.escape(cap), lambda _: names.title),
            (rf"(?<=_){stem}|{stem}(?=_)", lambda _: names.stem),
            (re.escape(stem), lambda _: names.kebab),
            (rf"(?i:{stem})", self._unknown),
        ]
        self._rules = [replace for _, replace in rules]
        self._pattern = re.compile("|".join(f"({pattern})" for pattern, _ in rules))
        self._where = ""

    def _use(self, old: str) -> str:
        self._unused.discard(old)
        return self._fixed[old]

    def _unknown(self, spelling: str) -> str:
        raise ScaffoldError(
            f"internal error: no renaming rule for {spelling!r} in {self._where}; "
            "adaptertest/_scaffold.py needs one"
        )

    def __call__(self, text: str, where: str) -> str:
        """``text`` with every name replaced; ``where`` names it in errors."""
        self._where = where

        def replace(match: re.Match[str]) -> str:
            index = match.lastindex
            assert index is not None  # every alternative is one group
            return self._rules[index - 1](match.group())

        return self._pattern.sub(replace, text)

    def check_complete(self) -> None:
        """Every whole-string rule matched somewhere: the template still says what we think."""
        if self._unused:
            raise ScaffoldError(
                "internal error: the template no longer contains "
                f"{', '.join(sorted(map(repr, self._unused)))}; update adaptertest/_scaffold.py"
            )


# -- the files of each template ------------------------------------------------------------


def _package_files(package: str) -> Iterator[tuple[str, str]]:
    """``(relative path, text)`` of an installed package's modules and marker files."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ScaffoldError(f"internal error: package {package!r} is not installed")
    root = Path(next(iter(spec.submodule_search_locations)))
    for path in sorted(root.iterdir()):
        if path.is_file() and path.suffix in _TEXT_SUFFIXES:
            yield f"{package}/{path.name}", path.read_text(encoding="utf-8")


def _cli_template_files() -> Iterator[tuple[str, str]]:
    for part in _CLI_TEMPLATE_PARTS:
        for path in sorted((_CLI_TEMPLATE / part).rglob("*")):
            if path.is_file() and path.suffix in _TEXT_SUFFIXES and "__pycache__" not in path.parts:
                yield path.relative_to(_CLI_TEMPLATE).as_posix(), path.read_text(encoding="utf-8")


_MEMORY_TEST = '''"""The Reference driver against the whole conformance suite, live clauses too.

Its "provider" is in memory, so the live run needs no network or account. Each
clause is its own test item: ``pytest -k SES-04`` reruns one.
"""

from __future__ import annotations

import dataclasses

import adaptertest
from referencedriver import adaptertest_options, new_reference_driver

TestReferenceDriver = adaptertest.test_driver(
    new_reference_driver, dataclasses.replace(adaptertest_options(), live_run=True)
)
'''


def _memory_files() -> Iterator[tuple[str, str]]:
    yield from _package_files(_MEMORY.package)
    yield "tests/test_conformance.py", _MEMORY_TEST


_PYPROJECT = """[build-system]
requires = ["hatchling>=1.18"]
build-backend = "hatchling.build"

[project]
name = "{distribution}"
version = "0.1.0"
description = {description}
readme = "README.md"
requires-python = ">=3.11"
# What an agent host needs to run the driver: the kit's base install (driver, pydantic, anyio).
dependencies = ["{kit}"]

[project.optional-dependencies]
# The conformance suite and its test stack, for this project's own tests only.
test = ["{kit_test}"]

[tool.hatch.build.targets.wheel]
packages = ["{package}"]

[tool.pytest.ini_options]
testpaths = ["tests"]
xfail_strict = true
"""

_README_COMMANDS = """```sh
python -m pip install -e '.[test]' && python -m pytest
python -m adaptertest check {package}:new_{stem}_driver --live
```
"""

KIT_DISTRIBUTION = "agent-driver-kit"
_KIT_EXTRAS = "[test,trio]"


def kit_install_command(direct_url: str | None = None) -> str | None:
    """The command that installs the kit where this one came from, or None when it came
    from a package index (the project's own install then finds it there).

    ``direct_url`` is the installed distribution's ``direct_url.json`` (PEP 610; read from
    the installed kit when not given): an editable checkout gives ``pip install -e
    CHECKOUT[test,trio]``, a wheel or a folder ``pip install PATH[test,trio]``, another
    URL ``pip install 'agent-driver-kit[test,trio] @ URL'``.
    """
    if direct_url is None:
        try:
            direct_url = importlib.metadata.distribution(KIT_DISTRIBUTION).read_text(
                "direct_url.json"
            )
        except importlib.metadata.PackageNotFoundError:
            direct_url = None
    if not direct_url:
        return None
    try:
        info = json.loads(direct_url)
        url = str(info["url"])
    except (ValueError, KeyError, TypeError):
        return None
    parts = urlsplit(url)
    if parts.scheme == "file":
        path = unquote(parts.path)
        target = shlex.quote(f"{path}{_KIT_EXTRAS}")
        editable = isinstance(info.get("dir_info"), dict) and info["dir_info"].get("editable")
        return f"python -m pip install {'-e ' if editable else ''}{target}"
    return f"python -m pip install {shlex.quote(f'{KIT_DISTRIBUTION}{_KIT_EXTRAS} @ {url}')}"


_README_MEMORY = """# {display}

A driver for the agent-driver-kit `driver` interface, generated by `adaptertest new
{package} --template memory`. It starts as the kit's in-memory template driver under
new names: it implements the whole interface and passes every conformance clause, with
no agent behind it. Each place marked `# provider:` in `{package}/_driver.py` is where a
real driver talks to its agent; replace them one at a time and keep the tests passing.

{commands}
The first command installs the project with its test dependencies and runs
`tests/test_conformance.py`: every clause of the suite, the live ones included, one test
item per clause (`python -m pytest -k SES-04` reruns one). The second command runs the suite
without pytest and prints one row per clause and the conformance level reached; its
options come from `adaptertest_options()` in `{package}/_conformance.py`.
{kit_note}"""

_README_CLI = """# {display}

A driver for the `{kebab}` agent CLI, generated by `adaptertest new {package} --template
cli`. It runs `{kebab} --json ... -- PROMPT` once per run and turns the JSON lines the CLI
prints into stream payloads, run events and a transcript, on `driver.clikit`, the kit's
toolkit for JSONL-printing CLIs. The output format in `{package}/_parser.py` and the flags
in `build_argv` (`{package}/_driver.py`) are a made-up example: change them to your CLI's.

{commands}
The first command installs the project with its test dependencies and runs the tests,
which need no CLI: `adaptertest replay` plays the recordings in `recordings/` in its place.
`tests/test_conformance.py` runs every clause of the suite, the live ones against
`recordings/success.jsonl`; `tests/test_{stem}_driver.py` checks the parser and the driver
on each recording. The second command runs the suite against the real `{kebab}` on your
PATH.

Replace the recordings with runs of your CLI (`adaptertest record OUT -- COMMAND ARGS...`
keeps a run's output and exit status, with secrets redacted), keeping one that answers
the suite's live prompt, `Reply with exactly: OK`. What the driver makes of each
recording is a reviewed snapshot in `recordings/snapshots/`: after a new recording or a
parser change, run `python -m pytest --snapshot-update`: it rewrites the snapshot of
every recording whose result changed and deletes those no test uses any more, so review
the diff of that folder before you commit it; no test needs editing. Use it only once the
run without it fails on snapshots alone: while a clause fails, the update is held back
and nothing is written or deleted, since a broken driver's result is no snapshot to
keep. A plain JSONL recording whose CLI exits non-zero gets its exit code in
`recordings/replay.json`.
{kit_note}"""

_KIT_NOTE = """
Both need the kit, the `agent-driver-kit` distribution, which the project's install
takes from your package index. If your package index does not have it, install it first,
from a checkout (`python -m pip install -e 'path/to/checkout[test,trio]'`) or a built wheel
(`python -m pip install 'path/to/agent_driver_kit-{version}-py3-none-any.whl[test,trio]'`);
`adaptertest new` printed that command for the kit it ran from.
"""


_GITIGNORE = """# Python
__pycache__/
*.py[cod]
*.egg-info/
build/
dist/
# virtualenvs
.venv/
venv/
# tools
.pytest_cache/
.hypothesis/
.mypy_cache/
.ruff_cache/
# reports the suite writes
report.json
"""


def _shell_files(template: str, names: Names) -> dict[str, str]:
    """``pyproject.toml``, ``README.md`` and ``.gitignore``: the same for every template."""
    major, minor = __version__.split(".")[:2]
    kit = f"agent-driver-kit>={__version__},<{major}.{int(minor) + 1}"
    fields = {
        "package": names.package,
        "stem": names.stem,
        "kebab": names.kebab,
        "display": names.display,
        "distribution": names.distribution,
        "version": __version__,
    }
    what = "an in-memory driver" if template == "memory" else f"a driver for the {names.kebab} CLI"
    pyproject = _PYPROJECT.format(
        description=_quoted(f"{names.display}: {what}, built on agent-driver-kit"),
        kit=kit,
        # trio too: the generated tests run the suite on both anyio backends.
        kit_test=kit.replace("agent-driver-kit", "agent-driver-kit[test,trio]", 1),
        **fields,
    )
    # No path of this machine goes into the project: where the kit was installed from
    # is printed by `new` (next_steps), not written into a file that is committed.
    commands = _README_COMMANDS.format(**fields)
    readme = (_README_MEMORY if template == "memory" else _README_CLI).format(
        commands=commands, kit_note=_KIT_NOTE.format(**fields), **fields
    )
    return {"pyproject.toml": pyproject, "README.md": readme, ".gitignore": _GITIGNORE}


_ALL_BLOCK = re.compile(r"^__all__ = \[\n((?:    \"\w+\",\n)+)\]", re.M)
_IMPORT_BLOCK = re.compile(r"^(from [\w.]+ import \(\n)((?:    \w+(?: as \w+)?,\n)+)(\))", re.M)


def _isort_key(name: str) -> tuple[int, str]:
    """isort's order by type, as ruff applies it: CONSTANTS, then Classes, then the rest."""
    bare = name.split(" as ")[0]
    if bare.isupper() and len(bare) > 1:
        return 0, bare
    return (1, bare) if bare[:1].isupper() else (2, bare)


def _sorted_lines(block: str) -> str:
    lines = block.splitlines(keepends=True)
    return "".join(sorted(lines, key=lambda line: _isort_key(line.strip().strip('",'))))


_STATEMENT = re.compile(
    r"^(?:import ([\w.]+)[^\n]*|from ([\w.]+) import (?:\([^)]*\)|[^\n]*))\n", re.M
)


def _regroup_imports(text: str, package: str) -> str:
    """The module's leading import block in the sections a standalone project has: the
    standard library, third party (the kit included: ``driver`` and ``adaptertest`` are
    first party only inside the kit's own repository), then ``package``; each sorted as
    ruff's isort does (plain imports first, then by module, case-insensitively)."""
    start = 0
    future = re.search(r"^from __future__ import annotations\n\n", text, re.M)
    if future is not None:
        start = future.end()
    statements: list[tuple[str, str, bool]] = []  # (root module, text, is plain import)
    position = end = start
    while True:
        while text.startswith("\n", position):
            position += 1
        match = _STATEMENT.match(text, position)
        if match is None:
            break
        module = match.group(1) or match.group(2)
        statements.append((module, match.group(0), match.group(1) is not None))
        position = end = match.end()
    if len(statements) < 2:
        return text
    sections: dict[int, list[tuple[str, str, bool]]] = {0: [], 1: [], 2: []}
    for statement in statements:
        root = statement[0].split(".")[0]
        section = 0 if root in sys.stdlib_module_names else 2 if root == package else 1
        sections[section].append(statement)
    blocks = [
        "".join(s[1] for s in sorted(group, key=lambda s: (not s[2], s[0].lower())))
        for group in sections.values()
        if group
    ]
    return text[:start] + "\n".join(blocks) + text[end:]


def tidy_python(text: str, package: str = "") -> str:
    """``text`` with its multi-line ``__all__`` lists and parenthesized import lists sorted
    again, and its leading imports in a standalone project's sections: renaming may move a
    name (``B2_DRIVER_TYPE`` now sorts before ``DEFAULT_COMMAND``), and the project must
    pass ruff's RUF022 and I001 as the template does in the kit."""
    text = _ALL_BLOCK.sub(lambda m: f"__all__ = [\n{_sorted_lines(m.group(1))}]", text)
    text = _IMPORT_BLOCK.sub(lambda m: m.group(1) + _sorted_lines(m.group(2)) + m.group(3), text)
    return _regroup_imports(text, package) if package else text


def render(template: str, names: Names) -> dict[str, str]:
    """Every file of the new project, by relative path; nothing is written."""
    if template == "memory":
        source, files = _MEMORY, _memory_files()
    elif template == "cli":
        source, files = _CLI, _cli_template_files()
    else:
        raise ScaffoldError(f"unknown template {template!r}; choose one of {', '.join(TEMPLATES)}")
    rename = _Renamer(source, names)
    project = {rename(path, path): rename(text, path) for path, text in files}
    project = {
        path: tidy_python(text, names.package) if path.endswith(".py") else text
        for path, text in project.items()
    }
    rename.check_complete()
    project.update(_shell_files(template, names))
    for path, text in project.items():
        match = _LEFTOVER.search(path) or _LEFTOVER.search(text)
        if match is not None:
            raise ScaffoldError(
                f"internal error: {path} still says {match.group()!r} after renaming; "
                "adaptertest/_scaffold.py needs a rule for it"
            )
    return project


def write_project(target: Path, project: dict[str, str]) -> None:
    """Write the files under ``target``, which must not exist or be an empty directory."""
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise ScaffoldError(f"{target} exists and is not an empty directory; not overwriting it")
    for path, text in sorted(project.items()):
        file = target / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text, encoding="utf-8", newline="\n")


# -- the command ---------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``new`` options."""
    parser.add_argument(
        "name",
        metavar="NAME",
        help="the new driver's Python package name (lower case, e.g. acme_driver); the other "
        "names derive from it: AcmeDriver, new_acme_driver, driver type 'acme'",
    )
    parser.add_argument(
        "--template",
        choices=TEMPLATES,
        default=TEMPLATES[0],
        help="memory: the whole interface in memory, from the reference driver (default); "
        "cli: a subprocess driver for a CLI that prints JSON lines, with recordings",
    )
    parser.add_argument(
        "--dir",
        type=Path,
        default=None,
        metavar="PATH",
        help="the project folder to create (default: ./NAME); must not exist or be empty",
    )
    parser.add_argument(
        "--display-name",
        default=None,
        metavar="TEXT",
        help="Descriptor.display_name (default: NAME without 'driver', capitalised)",
    )


def main(ns: argparse.Namespace) -> int:
    """Run ``new`` from parsed arguments; returns the exit status."""
    try:
        names = project_names(ns.name, ns.display_name)
        target: Path = ns.dir if ns.dir is not None else Path(names.package)
        project = render(ns.template, names)
        write_project(target, project)
    except ScaffoldError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{PROG}: error: cannot write the project: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {len(project)} files to {target} ({ns.template} template):")
    for path in sorted(project):
        print(f"  {path}")
    print("next:")
    for line in next_steps(target):
        print(f"  {line}")
    return 0


def next_steps(target: Path) -> list[str]:
    """The commands that install the new project and run its tests, as printed."""
    steps = []
    if target.resolve() != Path.cwd().resolve():
        steps.append(f"cd {shlex.quote(os.fspath(target))}")
    kit_install = kit_install_command()
    if kit_install is not None:
        steps.append(kit_install)
    steps.append("python -m pip install -e '.[test]' && python -m pytest")
    return steps
