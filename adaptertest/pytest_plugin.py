"""The kit's pytest plugin (``pytest11`` entry point ``adaptertest``).

pytest loads it in every run of an environment where the kit is installed, with or
without the ``test`` extra, so importing it needs nothing but pytest (present, since
pytest is loading it) and the standard library; the rest of the suite is imported only
when its items run or a report is written. It registers the ``adaptertest`` marker and
the ``--adaptertest-report``, ``--adaptertest-markdown`` and ``--adaptertest-show-details``
options (the last also as ``ADAPTERTEST_SHOW_DETAILS=1``) and otherwise stays inert until
items made by :func:`adaptertest.test_driver` run, which cannot exist without the extra. Then it

- writes ``clause``, ``family`` and ``mode`` into each item's ``user_properties``
  (JUnit XML ``<property>`` elements, with no xunit2 warning);
- prints one summary line per driver class, with the conformance level reached;
- with ``--adaptertest-report=FILE``, writes the JSON report (``report.schema.json``);
- with ``--adaptertest-markdown=FILE``, appends the same report as Markdown (a clause
  table and the level per driver), so ``--adaptertest-markdown=$GITHUB_STEP_SUMMARY``
  shows it on the CI job's page.

Results are gathered from test reports, never from suite objects, so the summary and
the report come out the same under pytest-xdist: each kit item's report carries an
extra ``adaptertest`` attribute, which pytest serialises along with the report.

Clause items (and the other items marked ``adaptertest``) run before the rest, so the
first failure a driver author reads names a clause, not a snapshot. With syrupy's
``--snapshot-update``, a failing clause holds the update back: from the first test that
fails a clause on, no snapshot is written or deleted in that process and the run ends
saying so (the clause failures are the news; a snapshot of a broken driver is not).
"""

from __future__ import annotations

import dataclasses
import os
from collections import Counter
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from adaptertest._details import SHOW_DETAILS_ENV, SHOW_DETAILS_OPTION

if TYPE_CHECKING:
    from adaptertest.report import ClauseResult, ClauseStatus, ConformanceReport

MARKER = "adaptertest"
REPORT_ATTRIBUTE = "adaptertest"
"""Name of the extra attribute on a kit item's ``TestReport`` (a JSON-able dict)."""
LABEL_OPTION = "--adaptertest-label"
LABEL_INI = "adaptertest_labels"
PROPERTIES = ("clause", "family", "mode")
"""Marker keywords copied into ``user_properties``."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("adaptertest", "driver conformance kit (adaptertest)")
    group.addoption(
        "--adaptertest-report",
        metavar="FILE",
        default=None,
        help="write the per-clause JSON report of every adaptertest.test_driver class to FILE",
    )
    group.addoption(
        "--adaptertest-markdown",
        metavar="FILE",
        default=None,
        help="append the report as Markdown (clause table and level) to FILE, e.g. "
        "$GITHUB_STEP_SUMMARY",
    )
    group.addoption(
        LABEL_OPTION,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a fact about this run for every driver's run block in the report (and so the "
        "matrix), such as cli_version=2.1.328 or variant=nightly; repeatable; wins over the "
        f"class's Options.labels, which win over the {LABEL_INI} ini option",
    )
    parser.addini(
        LABEL_INI,
        type="linelist",
        default=[],
        help="NAME=VALUE labels (one a line) for every driver's run block in the report",
    )
    group.addoption(
        SHOW_DETAILS_OPTION,
        action="store_true",
        default=False,
        help="show provider text in the suite's failures (withheld by default; secrets stay "
        f"masked); also {SHOW_DETAILS_ENV}=1",
    )


def run_labels(config: pytest.Config) -> tuple[dict[str, str], dict[str, str]]:
    """The labels of the ini option and of the command line (``pytest.UsageError`` for a
    text that is not ``NAME=VALUE``)."""
    from adaptertest.report import parse_labels

    try:
        ini = parse_labels(config.getini(LABEL_INI), LABEL_INI)
        given = parse_labels(config.getoption("adaptertest_label") or [], LABEL_OPTION)
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from None
    return ini, given


def pytest_configure(config: pytest.Config) -> None:
    run_labels(config)  # a bad label stops the run before anything is collected
    config.addinivalue_line(
        "markers",
        "adaptertest(clause, family, mode, probe): a driver conformance clause item",
    )
    global _snapshots_held, _broken_rule
    _snapshots_held, _broken_rule = False, ""
    config.pluginmanager.register(SnapshotGuard(config), "adaptertest-snapshot-guard")
    # Results are gathered where reports arrive: in-process, or on the xdist controller.
    if not hasattr(config, "workerinput"):
        config.pluginmanager.register(ResultCollector(config), "adaptertest-results")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Items marked ``adaptertest`` (the clause items, the failed-run checks) first, each
    group in its collected order."""
    marked = [item for item in items if item.get_closest_marker(MARKER) is not None]
    if marked and len(marked) < len(items):
        rest = [item for item in items if item.get_closest_marker(MARKER) is None]
        items[:] = [*marked, *rest]


_snapshots_held = False
"""Set once a clause failed while ``--snapshot-update`` was asked (see :class:`SnapshotGuard`)."""
_broken_rule = ""
"""What the running test broke before it could compare its snapshot (see :func:`hold_snapshots`)."""


def hold_snapshots(what: str) -> None:
    """Called by a kit check that fails the running test before its snapshot is compared
    (a recording's run broke a rule): the test counts as failing a clause, ``what``
    naming it in the summary, so its snapshot is neither rewritten nor deleted."""
    global _broken_rule
    _broken_rule = what


def snapshots_held() -> bool:
    """Whether this process holds snapshot writes and deletions back: a clause failed
    during a ``--snapshot-update`` run."""
    return _snapshots_held


def failed_clause(report: pytest.TestReport) -> str | None:
    """The clause a failed test report names first (``SES-04: ...``), if any."""
    if not report.failed:
        return None
    text = _report_text(report).lstrip()
    head = text.partition(":")[0]
    if not head or len(head) > 8 or "-" not in head:
        return None
    from adaptertest.clauses import CLAUSES

    return head if any(clause.id == head for clause in CLAUSES) else None


class SnapshotGuard:
    """Holds ``--snapshot-update`` back once a test fails a clause: the option is turned
    off (later snapshot tests compare and report; no unused snapshot is deleted) and
    :func:`snapshots_held` tells the kit's snapshot files not to write."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.failed: dict[str, str] = {}
        self.held = False

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        global _broken_rule
        clause = failed_clause(report)
        if report.failed and clause is None and _broken_rule:
            clause = _broken_rule
        if report.when == "teardown":
            _broken_rule = ""
        if clause is None:
            return
        self.failed.setdefault(report.nodeid, clause)
        option = self.config.option
        if not hasattr(option, "update_snapshots"):
            return  # no syrupy in this run
        # A snapshot test that failed its clause never compared its snapshot: that is no
        # sign the snapshot is unused, so nothing is counted (or deleted) as unused.
        option.disable_unused_snapshots = True
        if option.update_snapshots:
            global _snapshots_held
            _snapshots_held = self.held = True
            option.update_snapshots = False

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if not self.failed or not hasattr(self.config.option, "update_snapshots"):
            return
        from adaptertest.report import plural

        clauses = ", ".join(dict.fromkeys(self.failed.values()))
        tests = plural(len(self.failed), "test")
        if self.held:
            terminalreporter.write_line(
                f"adaptertest: --snapshot-update held back: {tests} failed a clause or a rule "
                f"({clauses}); from the first on, no snapshot was written or deleted. Fix "
                "the clauses, then run --snapshot-update again and review the diff.",
                red=True,
            )
        else:
            terminalreporter.write_line(
                f"adaptertest: {tests} failed a clause or a rule ({clauses}): fix those "
                "first; --snapshot-update is held back while one fails.",
                red=True,
            )


def _clause_mark(item: pytest.Item) -> pytest.Mark | None:
    mark = item.get_closest_marker(MARKER)
    return mark if mark is not None and "clause" in mark.kwargs else None


def pytest_itemcollected(item: pytest.Item) -> None:
    mark = _clause_mark(item)
    if mark is None:
        return
    present = {name for name, _ in item.user_properties}
    item.user_properties.extend(
        (name, str(mark.kwargs[name]))
        for name in PROPERTIES
        if name in mark.kwargs and name not in present
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    mark = _clause_mark(item)
    if mark is not None:
        setattr(report, REPORT_ATTRIBUTE, _payload(item, str(mark.kwargs["clause"]), call.when))
    return report


def _payload(item: pytest.Item, clause: str, when: str) -> dict[str, Any]:
    """What the controller needs about one phase of one kit item, as plain data."""
    cls = getattr(item, "cls", None)
    parent = item.getparent(pytest.Class)
    payload: dict[str, Any] = {
        "clause": clause,
        "driver": parent.nodeid if parent is not None else item.nodeid.rpartition("::")[0],
        # The name the user bound the class to (the class itself is "DriverConformance").
        "name": parent.name if parent is not None else "",
        "driver_type": "",
        "result": None,
    }
    suite_of = getattr(cls, "adaptertest_suite", None)
    if when != "call" or not callable(suite_of):
        return payload
    try:
        suite = suite_of()
        # Probe records are cached, so this re-reads the verdict the test just acted on.
        result = suite.clause_result(clause)
    except Exception:  # noqa: BLE001 - the test itself already reported the error
        return payload
    payload["driver_type"] = suite.driver_type
    run = getattr(suite, "run_info", None)
    if callable(run):
        from adaptertest.report_json import run_to_json

        payload["run"] = run_to_json(run())
    payload["result"] = {
        "status": result.status.value,
        "messages": list(result.messages),
        "notes": list(result.notes),
        "duration": result.duration,
    }
    return payload


def _status(report: pytest.TestReport) -> ClauseStatus:
    """The clause status a phase report stands for (strict xfail marks included)."""
    from adaptertest.report import ClauseStatus

    if hasattr(report, "wasxfail"):
        return ClauseStatus.XFAILED if report.skipped else ClauseStatus.XPASSED
    if report.failed and str(report.longrepr).startswith("[XPASS(strict)]"):
        return ClauseStatus.XPASSED
    if report.passed:
        return ClauseStatus.PASSED
    return ClauseStatus.SKIPPED if report.skipped else ClauseStatus.FAILED


def _report_text(report: pytest.TestReport) -> str:
    """The reason of a skip, or the one-line error of a failure."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple | list) and len(longrepr) == 3:  # a skip: (path, line, reason)
        return str(longrepr[2]).removeprefix("Skipped: ")
    crash = getattr(longrepr, "reprcrash", None)
    message = getattr(crash, "message", None)
    text = str(message) if message else report.longreprtext.strip()
    return text.removeprefix("Failed: ")  # how pytest.fail() texts are shown


def _phase_result(clause: str, report: pytest.TestReport, payload: dict[str, Any]) -> ClauseResult:
    from adaptertest.report import ClauseResult

    status = _status(report)
    verdict = payload.get("result")
    if isinstance(verdict, dict) and verdict.get("status") == status.value:
        return ClauseResult(
            clause=clause,
            status=status,
            messages=tuple(verdict["messages"]),
            duration=float(verdict["duration"]),
            notes=tuple(verdict["notes"]),
        )
    text = _report_text(report)
    if report.failed and report.when != "call":
        text = f"in {report.when}: {text}"
    if text and not text.startswith(clause):
        text = f"{clause}: {text}"
    messages = (text,) if text else ()
    return ClauseResult(clause=clause, status=status, messages=messages, duration=report.duration)


@dataclass
class DriverResults:
    """Everything gathered for one ``test_driver`` class."""

    nodeid: str
    name: str
    driver_type: str = ""
    run: dict[str, Any] | None = None
    results: dict[str, ClauseResult] = field(default_factory=dict)
    duration: float = 0.0

    def add(self, clause: str, report: pytest.TestReport, payload: dict[str, Any]) -> None:
        """Fold one phase report into the clause's result."""
        self.duration += report.duration
        if payload.get("driver_type"):
            self.driver_type = str(payload["driver_type"])
        if isinstance(payload.get("run"), dict):
            self.run = payload["run"]
        if report.when != "call" and report.passed:
            return
        result = _phase_result(clause, report, payload)
        earlier = self.results.get(clause)
        if report.when == "teardown" and earlier is not None:
            # A failing teardown fails the clause but keeps what the call found.
            result = dataclasses.replace(
                earlier,
                status=earlier.status if earlier.status.is_failure else result.status,
                messages=earlier.messages + result.messages,
                duration=earlier.duration + result.duration,
            )
        self.results[clause] = result

    def report(self, labels: tuple[dict[str, str], dict[str, str]] = ({}, {})) -> ConformanceReport:
        """The gathered report; ``labels`` (the ini option's, the command line's) go
        below and above the class's own in the run block."""
        from adaptertest.report import ConformanceReport, RunInfo
        from adaptertest.report_json import run_from_json

        run = run_from_json(self.run)
        ini, given = labels
        if ini or given:
            run = run or RunInfo(started_at="", backend="")
            run = dataclasses.replace(run, labels={**ini, **run.labels, **given})
        return ConformanceReport(
            driver_type=self.driver_type,
            results=tuple(self.results.values()),
            duration=self.duration,
            run=run,
        )


class ResultCollector:
    """Gathers kit items' reports; prints the summary and writes the JSON report."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.drivers: dict[str, DriverResults] = {}
        self.written: list[Path] = []
        self.write_errors: list[str] = []

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        payload = getattr(report, REPORT_ATTRIBUTE, None)
        if not isinstance(payload, dict):
            return
        nodeid = str(payload["driver"])
        driver = self.drivers.get(nodeid)
        if driver is None:
            driver = self.drivers[nodeid] = DriverResults(nodeid, str(payload["name"]))
        driver.add(str(payload["clause"]), report, payload)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        json_target = self.config.getoption("adaptertest_report")
        markdown_target = self.config.getoption("adaptertest_markdown")
        if not (json_target or markdown_target):
            return
        from adaptertest.report_json import document, driver_to_json, dumps

        labels = run_labels(self.config)
        doc = document(
            [
                driver_to_json(d.report(labels), name=d.name, nodeid=d.nodeid)
                for d in self.drivers.values()
            ],
            producer="pytest",
        )
        if json_target:
            self._write(json_target, dumps(doc), mode="w")
        if markdown_target:
            from adaptertest.report_markdown import document_to_markdown

            self._write(markdown_target, document_to_markdown(doc) + "\n", mode="a")

    def _write(self, target: str, text: str, *, mode: str) -> None:
        path = Path(self.config.invocation_params.dir, target)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open(mode + "+b") as file:
                if mode == "a" and file.seek(0, os.SEEK_END):  # after earlier text:
                    file.seek(-1, os.SEEK_END)  # leave one blank line before ours
                    text = ("\n" if file.read(1) == b"\n" else "\n\n") + text
                file.write(text.encode("utf-8"))
        except OSError as exc:
            self.write_errors.append(f"adaptertest: cannot write {path}: {exc}")
        else:
            self.written.append(path)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        for error in self.write_errors:
            terminalreporter.write_line(error, red=True)
        if not self.drivers:
            return

        from adaptertest.report import UNKNOWN_DRIVER

        names = Counter(d.name for d in self.drivers.values())
        for d in self.drivers.values():
            label = d.name if d.name and names[d.name] == 1 else d.nodeid
            report = d.report()
            terminalreporter.write_line(
                f"adaptertest: {label} ({report.driver_type or UNKNOWN_DRIVER}): "
                f"{report.summary()}",
                red=not report.ok,
                green=report.ok,
            )
        for path in self.written:
            terminalreporter.write_line(f"adaptertest: report written to {path}")
