"""The ``adaptertest`` command line: check a driver, list the clauses, record and replay a
CLI run, start a driver project, serve the model-API emulator.

Exit status of ``check``: 0 when no clause fails, 1 when one does (a failed clause, or a
known failure that passes now), 2 when the command line cannot be run.

This module imports on the base install: the test stack (rich included) is imported by
the commands that need it, which first check that it is there (:data:`NEEDS`).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import importlib.util
import json
import os
import shlex
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from adaptertest import __version__, _extra, _scaffold, emulate, record, replay
from adaptertest._screen import screen
from adaptertest.clauses import CLAUSES, clause_ids
from adaptertest.options import ModelBinding, Options, OptionsError
from adaptertest.realcli import cli as install_clis
from adaptertest.report import UNKNOWN_DRIVER, ClauseStatus, ConformanceReport, parse_labels
from adaptertest.report_json import dumps, report_to_json
from driver.errors import InvalidDriverConfigError

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

PROG = "adaptertest"

NEEDS: dict[str, tuple[str, ...]] = {
    "check": ("hypothesis", "jsonschema", "rich"),
    "clauses": ("rich",),
    "emulate": ("uvicorn",),
}
"""The commands that use the test extra, and what of it; the others run on the base install."""

STATUS_STYLE: dict[ClauseStatus, str] = {
    ClauseStatus.PASSED: "green",
    ClauseStatus.FAILED: "bold red",
    ClauseStatus.SKIPPED: "yellow",
    ClauseStatus.XFAILED: "magenta",
    ClauseStatus.XPASSED: "bold red",
}


class UsageError(Exception):
    """A command line that cannot be run (exit status 2)."""


OPTION_FLAGS: dict[str, str] = {
    "live_run": "--live",
    "live_structured_output": "--live",
    "show_live_details": "--show-live-details",
    "concurrent_runs": "--concurrent",
    "config": "--config",
    "backend": "--backend",
    "probe_timeout": "--probe-timeout",
    "labels": "--label",
    "model_binding": "--scenarios",
}
"""The Options field each ``check`` flag sets, to name the flag when its value is bad."""

CLI_WORDS: tuple[tuple[str, str], ...] = (
    ("Options(concurrent_runs=N) (with live_run=True)", "--concurrent N (with --live)"),
    ("Options(live_structured_output=True) (with live_run=True)", "--live"),
    ("Options(live_run=True)", "--live"),
    ("Options(show_live_details=True)", "--show-live-details"),
    ("Options(config=...)", "--config JSON"),
    ("Options(model_binding=ModelBinding(driver=..., protocol=...))", "--scenarios MODULE:BINDING"),
)
"""How the suite's advice names an option, and the ``check`` flag that sets it."""


def in_cli_words(text: str) -> str:
    """``text`` with each piece of advice naming an Options field that ``check`` has a
    flag for naming the flag instead (what a user of the CLI can act on)."""
    for library, flag in CLI_WORDS:
        text = text.replace(library, flag)
    return text


def _report_in_cli_words(report: ConformanceReport) -> ConformanceReport:
    results = tuple(
        dataclasses.replace(
            r,
            messages=tuple(map(in_cli_words, r.messages)),
            notes=tuple(map(in_cli_words, r.notes)),
        )
        for r in report.results
    )
    return dataclasses.replace(report, results=results)


# -- parser ----------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG, description="Driver conformance kit: check a driver against every clause."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    check = commands.add_parser(
        "check",
        help="run the suite against a driver factory",
        description="Run the suite against the drivers FACTORY makes and print one row per "
        "clause. Exit status: 0 ok, 1 a clause fails, 2 bad command line.",
    )
    check.add_argument(
        "target",
        metavar="MODULE:FACTORY",
        help="importable module and a callable in it that returns a new driver, "
        "e.g. referencedriver:new_reference_driver (the current directory is importable)",
    )
    check.add_argument(
        "--config",
        metavar="JSON",
        help="Options(config=...) as JSON text, or @FILE; an object is built with the driver's "
        "config class (--config-class, the factory module's CONFIG_CLASS, or the type of the "
        "published or held config), else passed as a dict",
    )
    check.add_argument(
        "--config-class",
        metavar="MODULE:CLASS",
        help="build the config with CLASS (pydantic model_validate, else CLASS(**json))",
    )
    check.add_argument(
        "--options",
        metavar="MODULE:NAME",
        help="the base Options: an Options object or a callable returning one (default: "
        "the factory module's adaptertest_options, if it has one; else Options())",
    )
    check.add_argument(
        "--live",
        action="store_true",
        help="run the provider: judges the live clauses (and SO-02 when native structured "
        "output is declared)",
    )
    check.add_argument(
        "--concurrent",
        type=int,
        default=None,
        metavar="N",
        help="with --live: N concurrent runs on one instance (CON-01)",
    )
    check.add_argument(
        "--clause",
        action="append",
        default=[],
        metavar="ID",
        help="judge only this clause or family (SES-04, SES); repeat or comma-separate",
    )
    check.add_argument("--report", type=Path, metavar="FILE", help="write the JSON report here")
    check.add_argument(
        "--label",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a fact about this run for the report's run block and the matrix, such as "
        "cli_version=2.1.328 (repeatable; adds to Options.labels)",
    )
    check.add_argument(
        "--format",
        choices=("table", "json", "markdown"),
        default="table",
        help="stdout format (markdown: a clause table and the level, for a CI job summary)",
    )
    check.add_argument("--backend", choices=("asyncio", "trio"), default=None, help="anyio backend")
    check.add_argument(
        "--probe-timeout",
        type=float,
        default=None,
        metavar="S",
        help="seconds each hermetic driver call may take (default: 30)",
    )
    check.add_argument(
        "--show-live-details",
        action="store_true",
        help="show provider text in live failures (withheld by default)",
    )
    check.add_argument(
        "--expect-failure",
        metavar="REASON",
        default=None,
        help="the live run is expected to fail (a replayed 429, say): LIV-01 is skipped and "
        "FLR-01 judges that it failed cleanly",
    )
    check.add_argument(
        "--drift",
        action="store_true",
        help="run the format-drift probe (DFT-01..03) with the Options(drift=Drift(...)) the "
        "base options publish; without this flag a published drift option is left off (it "
        "starts a process per variant)",
    )

    check.add_argument(
        "--scenarios",
        nargs="?",
        const="",
        default=None,
        metavar="MODULE:BINDING",
        help="run the scenario clauses (TOL, RSN, RES, FLT, DLN, INP, OUT, PRC) against the "
        "kit's model emulator, with the ModelBinding MODULE:BINDING names (or a function "
        "returning one), or, without a value, the one the base options publish; without "
        "this flag a published binding is left off (each scenario starts an emulator)",
    )

    clauses = commands.add_parser(
        "clauses", help="print the clause catalogue", description="Print the clause catalogue."
    )
    clauses.add_argument(
        "--format", choices=("table", "markdown", "json"), default="table", help="output format"
    )

    replay.add_arguments(
        commands.add_parser(
            "replay",
            help="stand-in agent CLI: play back a recording or a JSONL transcript",
            description="Play back a recording from adaptertest record (stdout, stderr, "
            "exit status or signal, optionally in real time), or write a JSONL transcript "
            "to stdout line by line and exit with --exit-code: point a subprocess driver "
            "at it to test hermetically.",
        )
    )
    record.add_arguments(
        commands.add_parser(
            "record",
            help="run an agent CLI once and keep a recording that replay plays back",
            usage=record.USAGE,
            description=record.DESCRIPTION,
            epilog=record.EPILOG,
        )
    )
    install_clis.add_arguments(
        commands.add_parser(
            "install-clis",
            help="install the real agent CLIs pinned in the lock file (npm)",
            description=install_clis.DESCRIPTION,
            epilog=install_clis.EPILOG,
        )
    )
    _scaffold.add_arguments(
        commands.add_parser(
            "new",
            help="write a new driver project (package, tests, pyproject) from a template",
            description="Write a standalone driver project that passes the suite as "
            "generated (a cli project at level live, a memory project at full): its "
            "pyproject.toml, the package NAME, tests/test_conformance.py and a README. Exit "
            "status: 0 written, 2 bad name or the folder is not empty.",
        )
    )
    emulate.add_arguments(
        commands.add_parser(
            "emulate",
            help="serve a model API on 127.0.0.1 that real agent CLIs can be pointed at",
            description=emulate.DESCRIPTION,
        )
    )
    from adaptertest.matrix import _command as matrix_command

    matrix_command.add_arguments(
        commands.add_parser(
            "matrix",
            help="set JSON reports side by side: an HTML page, Markdown and a JSON summary",
            description="Read JSON reports (several drivers, one driver against several CLI "
            "releases, or both) and write matrix.html (self-contained: filter, diff of two "
            "runs, each cell's messages), matrix.md and matrix.json into --out. Exit status: "
            "0 written, 2 a report cannot be read.",
        )
    )
    matrix_command.add_sweep_arguments(
        commands.add_parser(
            "sweep",
            help="run a driver's real-CLI tier against the last K releases of its CLI",
            description="Install each of the last K releases of a locked CLI (its own cached "
            "prefix), run the tier command against it, keep each report and write the matrix "
            "into --out. An interrupted sweep resumes where it stopped. Exit status: 0 every "
            "release swept with a report, 1 a tier failed or wrote none, 2 bad input.",
        )
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; returns the exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["replay"]:
        return replay.main(args[1:])
    if args[:1] == ["sweep"]:
        from adaptertest.matrix import _command as matrix_command

        sweep_parser = argparse.ArgumentParser(prog=f"{PROG} sweep")
        matrix_command.add_sweep_arguments(sweep_parser)
        return matrix_command.sweep_main(args[1:], sweep_parser)
    if args[:1] == ["record"]:
        return record.main(args[1:])
    if args[:1] == ["install-clis"]:
        return install_clis.main(args[1:])
    try:
        ns = build_parser().parse_args(args)
    except SystemExit as exc:  # --help, --version, or a usage error already printed
        return replay.exit_status(exc)
    try:
        _extra.require("this command", NEEDS.get(ns.command, ()))
    except ImportError as exc:
        print(f"{PROG} {ns.command}: error: {exc}", file=sys.stderr)
        return 2
    try:
        if ns.command == "clauses":
            return _clauses(ns.format)
        if ns.command == "new":
            return _scaffold.main(ns)
        if ns.command == "emulate":
            return emulate.main(ns)
        if ns.command == "matrix":
            from adaptertest.matrix import _command as matrix_command

            return matrix_command.run(ns)
        return _check(ns, args[1:])
    except UsageError as exc:
        # A factory's import error may quote the driver's own text.
        print(screen(f"{PROG} {ns.command}: error: {exc}"), file=sys.stderr)
        return 2


# -- check -----------------------------------------------------------------------------


def _check(ns: argparse.Namespace, argv: Sequence[str]) -> int:
    factory = load_callable(ns.target, what="MODULE:FACTORY")
    options = options_from_args(ns)
    if isinstance(options.config, dict) and ns.config_class is None:
        _refuse_a_refused_dict(factory, options.config)
    only = select_clauses(ns.clause)
    from rich.text import Text

    from adaptertest._suite import check_driver

    with _progress(f"adaptertest: checking {ns.target}"):
        report = _report_in_cli_words(check_driver(factory, options, only=only))
    doc = report_to_json(report, name=ns.target, producer="cli")
    if ns.report is not None:
        try:
            ns.report.parent.mkdir(parents=True, exist_ok=True)
            ns.report.write_text(dumps(doc), encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write the report: {exc}") from exc
    if ns.format == "json":
        sys.stdout.write(dumps(doc))
    elif ns.format == "markdown":
        from adaptertest.report_markdown import document_to_markdown

        sys.stdout.write(document_to_markdown(doc, title=f"adaptertest check {ns.target}"))
    else:
        render_report(
            report,
            _console(),
            title=Text(f"adaptertest check {ns.target}"),
            rerun=rerun_command(argv),
        )
        if ns.report is not None:
            print(f"report written to {ns.report}", file=sys.stderr)
    return 1 if report.failures else 0


def load_callable(target: str, *, what: str) -> Callable[..., Any]:
    """Import ``module:attr`` (``attr`` may be dotted) and return it; UsageError otherwise."""
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(
            f"expected {what} such as referencedriver:new_reference_driver, got {target!r}"
        )
    if os.getcwd() not in sys.path:  # the console script, unlike python -m, lacks it
        sys.path.insert(0, os.getcwd())
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(f"cannot import {module_name!r}: {exc}") from exc
    except Exception as exc:
        raise UsageError(f"importing {module_name!r} raised {type(exc).__name__}: {exc}") from exc
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise UsageError(f"module {module_name!r} has no attribute {attr!r}") from None
    if not callable(obj):
        raise UsageError(f"{target} is a {type(obj).__name__}, not a callable")
    result: Callable[..., Any] = obj
    return result


def base_options(ns: argparse.Namespace) -> tuple[Options, str | None]:
    """The Options the flags start from, and where they came from (None: the defaults)."""
    target = ns.options
    if target is None:
        module_name = ns.target.partition(":")[0]
        try:
            module = importlib.import_module(module_name)
        except Exception:  # noqa: BLE001 - load_callable reports import errors
            return Options(), None
        if not callable(getattr(module, "adaptertest_options", None)):
            return Options(), None
        target = f"{module_name}:adaptertest_options"
    module_name, sep, attr = target.partition(":")
    if not sep:
        raise UsageError(f"expected --options MODULE:NAME, got {target!r}")
    try:
        obj: Any = getattr(importlib.import_module(module_name), attr)
        value = obj if isinstance(obj, Options) else obj()
    except OptionsError as exc:
        raise UsageError(f"--options {target}: {exc}") from None
    except Exception as exc:
        raise UsageError(f"cannot load options {target}: {type(exc).__name__}: {exc}") from exc
    if not isinstance(value, Options):
        raise UsageError(f"{target} gave {type(value).__qualname__}, not adaptertest.Options")
    return value, target


def _labels(given: Sequence[str]) -> dict[str, str]:
    try:
        return parse_labels(given)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def options_from_args(ns: argparse.Namespace) -> Options:
    """The suite options the check flags ask for, on top of :func:`base_options`."""
    base, source = base_options(ns)
    kwargs: dict[str, Any] = {
        "live_run": ns.live or base.live_run,
        "live_structured_output": ns.live or base.live_structured_output,
        "show_live_details": ns.show_live_details or base.show_live_details,
    }
    if ns.expect_failure is not None:
        kwargs["live_expect_failure"] = ns.expect_failure
    if ns.concurrent is not None:
        if ns.concurrent > 0 and not kwargs["live_run"]:
            raise UsageError(
                f"--concurrent {ns.concurrent} needs --live: CON-01 starts that many live runs "
                "on one driver instance"
            )
        kwargs["concurrent_runs"] = ns.concurrent
    if ns.config is not None or ns.config_class is not None:
        kwargs["config"] = _config(ns.config, ns.config_class, lambda: _config_class(ns, base))
    if ns.backend is not None:
        if ns.backend == "trio" and importlib.util.find_spec("trio") is None:
            raise UsageError("--backend trio needs trio: pip install 'agent-driver-kit[trio]'")
        kwargs["backend"] = ns.backend
    if ns.probe_timeout is not None:
        kwargs["probe_timeout"] = ns.probe_timeout
    if ns.label:
        kwargs["labels"] = {**base.labels, **_labels(ns.label)}
    if not ns.drift:
        kwargs["drift"] = None
    elif base.drift is None:
        raise UsageError(
            f"--drift needs a drift option, and {source or 'Options()'} publishes none: give "
            "the factory module an adaptertest_options() returning Options(drift=Drift("
            "recordings=[...], driver=lambda command: ...)), or pass --options"
        )
    kwargs["model_binding"] = _binding(ns.scenarios, base, source)
    try:
        return dataclasses.replace(base, **kwargs)
    except OptionsError as exc:
        flag = OPTION_FLAGS.get(exc.field) if exc.field in kwargs else None
        where = flag or f"the options from {source or 'Options()'}"
        raise UsageError(f"{where}: {exc}") from None


def _binding(given: str | None, base: Options, source: str | None) -> ModelBinding | None:
    """The model binding ``--scenarios`` asks for: None without the flag, the published
    one for a bare flag, else the one ``MODULE:BINDING`` names."""
    if given is None:
        return None
    if not given:
        if base.model_binding is None:
            raise UsageError(
                f"--scenarios needs a model binding, and {source or 'Options()'} publishes "
                "none: pass --scenarios MODULE:BINDING naming a ModelBinding (or a function "
                "returning one), or publish Options(model_binding=...)"
            )
        return base.model_binding
    from adaptertest._scenarios import binding_from_ref

    try:
        return binding_from_ref(given)
    except Exception as exc:
        raise UsageError(
            f"--scenarios {given}: cannot load the binding: {type(exc).__name__}: {exc}"
        ) from exc


CONFIG_CLASS_ATTRIBUTE = "CONFIG_CLASS"
"""A factory module may publish its driver's config class under this name."""


def _config_class(ns: argparse.Namespace, base: Options) -> tuple[type, str] | None:
    """The driver's config class and where it was found: the factory module's
    ``CONFIG_CLASS``, the type of the published options' config, or the type of the
    config a driver from the factory holds. None when none is known."""
    module_name = ns.target.partition(":")[0]
    try:
        module = importlib.import_module(module_name)
    except Exception:  # noqa: BLE001 - the factory import reports it
        return None
    published = getattr(module, CONFIG_CLASS_ATTRIBUTE, None)
    if isinstance(published, type):
        return published, f"{module_name}.{CONFIG_CLASS_ATTRIBUTE}"
    if base.config is not None and not isinstance(base.config, dict | list | str | int | float):
        return type(base.config), "the config of the published options"
    try:
        held = getattr(load_callable(ns.target, what="MODULE:FACTORY")(), "config", None)
    except Exception:  # noqa: BLE001 - the suite reports a raising factory itself
        return None
    if held is not None and callable(getattr(type(held), "model_validate", None)):
        return type(held), "the driver's config"
    return None


def _build_config(cls: Callable[..., Any], value: Any, name: str) -> object:
    try:
        validate = getattr(cls, "model_validate", None)
        if callable(validate):
            return validate(value)
        return cls(**value) if isinstance(value, dict) else cls(value)
    except Exception as exc:
        raise UsageError(f"--config does not fit {name}: {exc}") from exc


def _config(
    text: str | None,
    class_target: str | None,
    find_class: Callable[[], tuple[type, str] | None] = lambda: None,
) -> object:
    """The --config value: parsed JSON, built by --config-class when one is given, else by
    the driver's config class when one is found (``find_class``)."""
    value: Any = {}
    if text is not None:
        if text.startswith("@"):
            try:
                text = Path(text[1:]).read_text(encoding="utf-8")
            except OSError as exc:
                raise UsageError(f"cannot read --config file: {exc}") from exc
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UsageError(f"--config is not valid JSON: {exc}") from exc
    if class_target is not None:
        cls = load_callable(class_target, what="--config-class MODULE:CLASS")
        return _build_config(cls, value, class_target)
    if not isinstance(value, dict):
        return value
    found = find_class()
    if found is None:
        return value
    cls, where = found
    name = f"{cls.__module__}.{cls.__qualname__} ({where})"
    try:
        return _build_config(cls, value, name)
    except UsageError as exc:
        raise UsageError(f"{exc}; pass --config-class MODULE:CLASS to choose the class") from None


def _refuse_a_refused_dict(factory: Callable[[], object], config: dict[str, Any]) -> None:
    """A JSON object the driver refuses as a config is a usage error naming the fix, not
    a CFG-02 failure that reads as a driver bug."""
    try:
        validate = getattr(factory(), "validate_config", None)
        if callable(validate):
            validate(config)
    except InvalidDriverConfigError as exc:
        raise UsageError(
            f"--config gave a JSON object, which the driver refuses as its config ({exc}): "
            "pass --config-class MODULE:CLASS to build the driver's config class from it, or "
            f"publish it as {CONFIG_CLASS_ATTRIBUTE} in the factory module"
        ) from None
    except Exception:  # noqa: BLE001 - a raising factory or check is the suite's to report
        return


def select_clauses(values: Sequence[str]) -> list[str] | None:
    """Clause IDs named by ``--clause`` values (IDs or family names); None means all."""
    tokens = [t for value in values for t in value.split(",") if t.strip()]
    try:
        return clause_ids(tokens) or None
    except ValueError as exc:
        raise UsageError(f"--clause: {exc}") from None


@contextlib.contextmanager
def _progress(message: str) -> Iterator[None]:
    """A spinner on stderr while the suite runs, only when a person is watching."""
    isatty = getattr(sys.stderr, "isatty", None)
    if not (callable(isatty) and isatty()):
        yield
        return
    from rich.console import Console

    with Console(stderr=True).status(message):
        yield


UNWRAPPED_WIDTH = 100_000
"""The width of piped output: no line a user may copy is ever broken."""


def _console() -> Console:
    """The console of ``check`` and ``clauses``. Piped or in CI it never wraps (whatever
    ``COLUMNS`` says); on a terminal, text lines are soft-wrapped by the terminal only,
    so a copied line (a headline, the ``rerun alone:`` command) stays whole."""
    from rich.console import Console

    console = Console(file=sys.stdout, highlight=False)
    if not console.is_terminal:
        console = Console(file=sys.stdout, highlight=False, width=UNWRAPPED_WIDTH)
    return console


# Flags that select or format the output: a rerun of one clause drops them.
_NOT_RERUN = frozenset({"--clause", "--report", "--format"})


def rerun_command(argv: Sequence[str]) -> Callable[[str], str]:
    """How to rerun one clause: this very command line (the real MODULE:FACTORY, the
    options and flags) with ``--clause ID`` in place of the selection and the output
    flags."""
    kept: list[str] = []
    skip_value = False
    for arg in argv:
        if skip_value:
            skip_value = False
            continue
        name, eq, _ = arg.partition("=")
        if name in _NOT_RERUN:
            skip_value = not eq
            continue
        kept.append(arg)
    return lambda clause: shlex.join(["python", "-m", PROG, "check", *kept, "--clause", clause])


def render_report(
    report: ConformanceReport,
    console: Console,
    *,
    title: Text,
    rerun: Callable[[str], str] | None = None,
) -> None:
    """The per-clause table, the failure details, then the summary line."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, title_justify="left")
    table.add_column("clause", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("detail", overflow="fold")
    for r in report.results:
        # Text, not markup strings: driver messages may contain square brackets.
        table.add_row(
            r.clause, Text(r.status.value, style=STATUS_STYLE[r.status]), Text(r.headline())
        )
    console.print(table)
    details = "rerun with --show-live-details to see the withheld provider text"
    for r in report.failures:
        console.print()
        hint = rerun(r.clause) if rerun is not None else None
        console.print(Text(r.describe(hint, details)), soft_wrap=True)
    console.print()
    style = "bold red" if report.failures else "bold green"
    summary = screen(f"{report.driver_type or UNKNOWN_DRIVER}: {report.summary()}")
    console.print(Text(summary, style=style), soft_wrap=True)


# -- clauses ---------------------------------------------------------------------------


def catalogue_json() -> list[dict[str, Any]]:
    """The clause catalogue as plain data."""
    return [
        {
            "id": c.id,
            "family": c.family,
            "title": c.title,
            "rule": c.rule,
            "mode": c.mode.value,
            "probes": list(c.probes),
            "module": c.module,
            "extension": c.extension,
        }
        for c in CLAUSES
    ]


def _clauses(fmt: str) -> int:
    if fmt == "markdown":
        from adaptertest.report_markdown import clause_table_markdown

        print(clause_table_markdown())
    elif fmt == "json":
        sys.stdout.write(json.dumps(catalogue_json(), indent=2) + "\n")
    else:
        from rich.table import Table
        from rich.text import Text

        table = Table(title="adaptertest clauses", title_justify="left")
        for column in ("clause", "mode", "title"):
            table.add_column(column, no_wrap=column != "title")
        for c in CLAUSES:
            ident = f"{c.id} (ext.)" if c.extension else c.id
            table.add_row(ident, c.mode.value, Text(c.title))
        console = _console()
        console.print(table)
        upstream = sum(1 for c in CLAUSES if not c.extension)
        console.print(f"{upstream} upstream clauses, {len(CLAUSES) - upstream} extension(s)")
    return 0
