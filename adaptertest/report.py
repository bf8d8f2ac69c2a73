"""What a suite run produces: one result per clause, a conformance level, a summary."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from adaptertest._screen import screen
from adaptertest._violation import WITHHELD
from adaptertest.clauses import CLAUSE_BY_ID, CLAUSES, Clause, Mode

MAX_MESSAGES = 25
"""How many violations of one clause are spelled out before the rest are counted."""


class ClauseStatus(StrEnum):
    """Outcome of one clause."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    XFAILED = "xfailed"  # listed in known_failures and failing, as expected
    XPASSED = "xpassed"  # listed in known_failures but passing: the entry is stale

    @property
    def is_failure(self) -> bool:
        """Whether this status fails a run."""
        return self in (ClauseStatus.FAILED, ClauseStatus.XPASSED)


class Level(StrEnum):
    """Conformance tiers, each including the one before."""

    CORE = "core"  # every hermetic and opt-in clause holds, extensions included
    LIVE = "live"  # core, and the live run succeeded with no live clause failing
    FULL = "full"  # live, with resume and native structured output declared and passing


def rerun_hint(clause: str) -> str:
    """How to run one clause alone, when the caller's own command line is not known."""
    return f"pytest -k {clause}  (or: python -m adaptertest check ... --clause {clause})"


UNKNOWN_DRIVER = "driver type unknown (see DRV-01)"
"""What a report names when no driver gave its type (the factory or descriptor() failed)."""


def plural(count: int, noun: str, many: str = "") -> str:
    """``1 chunk``, ``2 chunks`` (``many`` for an irregular plural)."""
    return f"{count} {noun if count == 1 else many or noun + 's'}"


DETAILS_HINT = "rerun with Options(show_live_details=True) to see the withheld provider text"
"""The generic advice for a message with withheld text; front ends name their own flag."""


@dataclass(frozen=True, slots=True)
class ClauseResult:
    """The outcome of one clause: ``messages`` each start with the clause ID."""

    clause: str
    status: ClauseStatus
    messages: tuple[str, ...] = ()
    duration: float = 0.0
    notes: tuple[str, ...] = ()

    @property
    def info(self) -> Clause:
        """The catalogue entry of this clause."""
        return CLAUSE_BY_ID[self.clause]

    def headline(self) -> str:
        """The first message line without the repeated clause ID, and how many more follow.

        What a one-row-per-clause table shows (the CLI's table, the Markdown report).
        """
        if not self.messages:
            return ""
        line = self.messages[0].splitlines()[0] if self.messages[0] else ""
        for prefix in (f"{self.clause} skipped: ", f"{self.clause}: ", f"{self.clause} "):
            if line.startswith(prefix):
                line = line[len(prefix) :]
                break
        more = len(self.messages) - 1
        return screen(f"{line} (+{more} more)" if more else line)

    @property
    def withheld(self) -> bool:
        """Whether a message or note withholds provider text."""
        return any(WITHHELD in text for text in (*self.messages, *self.notes))

    def describe(self, rerun: str | None = None, details: str = DETAILS_HINT) -> str:
        """A full failure/skip text: observations, the rule, how to rerun, then notes.

        ``rerun`` is the command that runs this clause alone and ``details`` how to see
        withheld provider text; front ends pass their own (the CLI its command line,
        pytest the node id)."""
        shown = list(self.messages[:MAX_MESSAGES])
        if len(self.messages) > MAX_MESSAGES:
            more = len(self.messages) - MAX_MESSAGES
            shown.append(f"{self.clause}: ... and {more} more violation(s)")
        lines = shown or [f"{self.clause}: {self.status.value}"]
        lines.append(f"  rule: {self.info.rule}")
        lines.append(f"  rerun alone: {rerun or rerun_hint(self.clause)}")
        if self.withheld:
            lines.append(f"  details: {details}")
        # Notes (the live diagnostic, a driver traceback) come after the readable lines.
        lines.extend(f"  note: {n}" for n in compact_notes(self.notes))
        return screen("\n".join(lines))


DIAGNOSTIC = "live diagnostic"
"""How a live probe's diagnostic note starts: ``live diagnostic[ (label)]: {json}``."""


def compact_notes(notes: tuple[str, ...]) -> list[str]:
    """The notes as a failure text shows them: each live diagnostic cut to the fields that
    explain a failed run (the whole one stays in the JSON report), and diagnostics that
    read the same folded into one line naming their runs."""
    shown: dict[str, list[str]] = {}
    for note in notes:
        head, _, body = note.partition(": ")
        if not head.startswith(DIAGNOSTIC):
            shown.setdefault(note, [])
            continue
        try:
            fields = json.loads(body)
        except ValueError:
            shown.setdefault(note, [])
            continue
        label = head.removeprefix(DIAGNOSTIC).strip(" ()")
        line = _diagnostic_line(fields) if isinstance(fields, dict) else body
        shown.setdefault(line, []).append(label)
    out: list[str] = []
    for line, labels in shown.items():
        if not labels:
            out.append(line)
            continue
        named = ", ".join(label for label in labels if label)
        where = f" ({named})" if named else ""
        out.append(f"{DIAGNOSTIC}{where}: {line} (every field: the JSON report)")
    return out


def _size(value: object) -> str:
    """A digest of provider text: its text when shown, else its size."""
    if not isinstance(value, dict):
        return "none"
    if "text" in value:
        return repr(value["text"]) if len(str(value["text"])) <= 60 else f"{value['bytes']} bytes"
    return f"{value.get('bytes', '?')} bytes"


def _diagnostic_line(d: dict[str, object]) -> str:
    parts: list[str] = []
    if d.get("error_type"):
        where = f" at {d['error_at']}" if d.get("error_at") else ""
        parts.append(f"run() raised {d['error_type']}{where}")
    if d.get("response_present") is False:
        parts.append("no response")
        return ", ".join(parts)
    parts.append(f"exit {d.get('exit')}")
    signal = d.get("signal")
    if isinstance(signal, dict) and signal.get("bytes"):
        parts.append(f"signal {_size(signal)}")
    if d.get("timed_out"):
        parts.append("timed out")
    if d.get("failure"):
        code = d.get("failure_code")
        shown = isinstance(code, dict) and "text" in code
        parts.append(f"failure {_size(code)}" if shown else "a failure")
    parts.append(f"output {_size(d.get('output'))}")
    parts.append(f"stdout {_size(d.get('stdout'))}, stderr {_size(d.get('stderr'))}")
    if d.get("terminal_present"):
        valid = "" if d.get("terminal_json_valid") else " (not valid JSON)"
        parts.append(f"terminal line {_size(d.get('terminal_event'))}{valid}")
    else:
        parts.append("no terminal line")
    if not d.get("checkpoint"):
        parts.append("no checkpoint")
    elif not d.get("checkpoint_valid"):
        parts.append("an invalid checkpoint")
    else:
        resume = "" if d.get("resume_id_present") else " without a resume id"
        parts.append(f"a valid checkpoint{resume}")
    return ", ".join(parts)


def parse_labels(given: Sequence[str], option: str = "--label") -> dict[str, str]:
    """``NAME=VALUE`` texts as labels (later ones win); ValueError names ``option`` and the
    text that is not one."""
    labels: dict[str, str] = {}
    for text in given:
        name, sep, value = text.partition("=")
        if not sep or not name.strip():
            raise ValueError(
                f"{option} wants NAME=VALUE (such as cli_version=2.1.328), got {text!r}"
            )
        labels[name.strip()] = value
    return labels


@dataclass(frozen=True, slots=True)
class RunInfo:
    """What a report says about the run itself, so runs can be set side by side (the matrix).

    ``options`` holds the options that differ from their defaults, as text; ``labels``
    what the caller named (``Options.labels``, ``check --label``), e.g. the CLI and its
    version."""

    started_at: str
    """When the suite run started: ISO 8601, UTC, seconds."""
    backend: str
    driver_version: str | None = None
    """The version of the distribution the driver's module comes from, when installed."""
    options: Mapping[str, str] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ConformanceReport:
    """Every clause result of one suite run against one driver."""

    driver_type: str
    results: tuple[ClauseResult, ...]
    duration: float = 0.0
    notes: tuple[str, ...] = field(default=())
    run: RunInfo | None = None

    def __iter__(self) -> Iterator[ClauseResult]:
        return iter(self.results)

    def result(self, clause: str) -> ClauseResult:
        """The result of one clause by ID."""
        for r in self.results:
            if r.clause == clause:
                return r
        raise KeyError(clause)

    @property
    def failures(self) -> tuple[ClauseResult, ...]:
        """Results that fail the run (failed, and stale known failures)."""
        return tuple(r for r in self.results if r.status.is_failure)

    @property
    def ok(self) -> bool:
        """True when no clause fails the run."""
        return not self.failures

    def counts(self) -> dict[ClauseStatus, int]:
        """How many clauses ended in each status."""
        out = dict.fromkeys(ClauseStatus, 0)
        for r in self.results:
            out[r.status] += 1
        return out

    @property
    def level(self) -> Level | None:
        """The highest conformance level met.

        Every clause counts, extensions included: one that fails keeps the level below
        its mode (a hermetic or opt-in one: no level; a live or scenario one: core).
        ``live`` needs LIV-01 to pass, so a run that failed (even as expected) reaches
        core at most. A scenario clause counts like a live one: skipped (no binding, or
        declared in ``ModelBinding.cannot``) it holds, failed it keeps the level at core.
        """
        if not self.complete:
            return None  # a partial run (only=...) proves no level
        by_id = {r.clause: r for r in self.results}

        def holds(r: ClauseResult) -> bool:
            return r.status in (ClauseStatus.PASSED, ClauseStatus.SKIPPED)

        running = (Mode.LIVE, Mode.SCENARIO)
        if not all(holds(r) for r in self.results if r.info.mode not in running):
            return None
        live = [r for r in self.results if r.info.mode in running]
        if by_id["LIV-01"].status is not ClauseStatus.PASSED or not all(map(holds, live)):
            return Level.CORE
        full = all(by_id[c].status is ClauseStatus.PASSED for c in ("LIV-03", "RSP-04", "SO-02"))
        return Level.FULL if full else Level.LIVE

    @property
    def complete(self) -> bool:
        """Whether every clause of the catalogue was judged: only then can a level be met."""
        ran = {r.clause for r in self.results}
        return all(c.id in ran for c in CLAUSES)

    def summary(self) -> str:
        """Counts per status, the level, and the failing clauses, on one line.

        ``"40 passed, 27 skipped; level: core"``; a partial run says why it has no level.
        """
        counts = ", ".join(f"{n} {s.value}" for s, n in self.counts().items() if n)
        failing = ", ".join(r.clause for r in self.failures)
        text = f"{counts or 'no clauses'}; level: {self.level_text()}"
        return text + (f"; failing: {failing}" if failing else "")

    def level_text(self) -> str:
        """The level met, or why none is: ``"core"``, ``"none (partial run: 9 of 67 clauses)"``
        (the count is the whole catalogue's, extension clauses included)."""
        level = self.level
        if level is not None:
            return level.value
        if not self.complete:
            return f"none (partial run: {len(self.results)} of {len(CLAUSES)} clauses)"
        return "none (not every hermetic clause holds)"

    def raise_for_violations(self) -> None:
        """Raise :class:`ConformanceError` listing every failing clause, if any."""
        if self.failures:
            raise ConformanceError(self)


class ConformanceError(AssertionError):
    """Raised by :meth:`ConformanceReport.raise_for_violations`."""

    def __init__(self, report: ConformanceReport) -> None:
        self.report = report
        body = "\n".join(r.describe() for r in report.failures)
        super().__init__(f"{len(report.failures)} clause(s) failed\n{body}")
