"""ProbeContext: what a probe uses to call the driver and record verdicts per clause.

A probe is one interaction with the driver (Go's ``t.Run`` subtest: ``descriptor``,
``session_codec``, ``live_run`` ...). It judges several clauses from that one
interaction. Probes are plain functions ``probe(ctx) -> None`` living in the family
module of the clauses they judge; they never raise for anything the driver does.

Every text a probe records goes through the context, which spells out or withholds the
provider text marked in it (:func:`adaptertest._violation.provider_text`): live probes
withhold it unless ``Options(show_live_details=True)``, hermetic probes never run the
provider and show everything.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, NoReturn, TypeVar

from adaptertest._calls import (
    CallRunner,
    Leftovers,
    Outcome,
    describe_error,
    describe_hang,
    driver_traceback,
)
from adaptertest._screen import mask, ordered
from adaptertest._violation import Violation, render
from adaptertest.clauses import CLAUSE_BY_ID, CLAUSES, Mode
from adaptertest.options import Options
from adaptertest.sink import RecordingSink
from driver.descriptor import Descriptor
from driver.protocols import implements

T = TypeVar("T")

MAX_KEPT = 200
"""Distinct violations of one clause a probe keeps; more are counted."""
_INDEX = re.compile(r"\b(payload|event|item) \d+")

LIVE_PROBES = frozenset(
    p for c in CLAUSES if c.mode in (Mode.LIVE, Mode.SCENARIO) for p in c.probes
)
"""Probes that run the provider (or an agent against the model emulator): their provider
text is withheld unless asked for."""


class ProbeAbort(Exception):
    """Stops the current probe after a fatal verdict (Go's ``t.Fatal``)."""


@dataclass(frozen=True)
class Watch:
    """A sealed sink kept under watch after its run was judged (see ``ProbeContext.watch``)."""

    clause: str
    sink: RecordingSink
    counted: int
    label: str


@dataclass
class ReturnWatch:
    """A returned response kept under watch after its run was judged (see
    ``ProbeContext.watch_returned``): looked at again when the verdict is read."""

    clause: str
    returned: object
    """The object ``run`` returned."""
    kept: object
    """A private snapshot of it as it was at the first look."""
    returned_at: float
    """``time.monotonic()`` when ``run`` returned."""
    label: str
    leftovers: Leftovers | None = None
    """What the run left running (waited for, bounded, before the last look)."""
    loop: object = None
    """The token of the loop the run ran on: the wait is only possible there."""
    settled: bool = False


@dataclass
class ProbeRecord:
    """Verdicts a probe gathered: violations, judged clauses, skips, notes, watches."""

    violations: dict[str, list[str]] = field(default_factory=dict)
    judged: set[str] = field(default_factory=set)
    skipped: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    clause_notes: dict[str, list[str]] = field(default_factory=dict)
    watches: list[Watch] = field(default_factory=list)
    returns: list[ReturnWatch] = field(default_factory=list)
    stopped_by: str | None = None
    repeats: dict[str, int] = field(default_factory=dict)
    """Recorded message -> how many more violations were folded into it."""
    overflow: dict[str, int] = field(default_factory=dict)
    """Clause -> violations beyond what is kept."""

    def messages(self, clause: str) -> list[str]:
        """The violations of ``clause``, each with the count folded into it, then the
        count of those not kept."""
        out = [
            f"{m} (and {self.repeats[m]} more like it)" if m in self.repeats else m
            for m in self.violations.get(clause, ())
        ]
        if self.overflow.get(clause):
            out.append(f"{clause}: ... and {self.overflow[clause]} more violation(s) not kept")
        return out


class ProbeContext:
    """Handed to every probe. Methods that take a clause attribute the outcome to it."""

    def __init__(
        self,
        *,
        name: str,
        factory: Callable[[], object],
        driver: object,
        descriptor: Descriptor,
        options: Options,
        runner: CallRunner,
    ) -> None:
        self.name = name
        self.factory = factory
        self.driver = driver
        self.descriptor = descriptor
        self.options = options
        self.runner = runner
        self.record = ProbeRecord()
        self.show_text = name not in LIVE_PROBES or options.show_live_details
        """Whether provider text marked in this probe's messages is spelled out."""
        self._factory_calls = 1  # the suite's setup made the first
        self._folded: dict[str, str] = {}  # fold key -> the message kept for it
        self._withheld: tuple[str, ...] = ()

    # -- verdicts -----------------------------------------------------------------------

    def judge(self, *clauses: str) -> None:
        """Mark clauses as evaluated: they pass unless a violation was recorded."""
        for clause in clauses:
            _known(clause)
            self.record.judged.add(clause)

    def shown(self, text: str) -> str:
        """``text`` with its marked provider text spelled out or withheld, as this probe
        reports it, and every text passed to :meth:`withhold` masked."""
        return mask(render(text, show=self.show_text), self._withheld)

    def withhold(self, *texts: str) -> None:
        """Never print ``texts`` in this probe's messages, skips and notes (tracebacks
        included), whatever ``Options.show_live_details`` says: text the probe gave the
        driver that must not show up anywhere, such as an appended system prompt."""
        self._withheld = ordered((*self._withheld, *texts))

    def fail(self, clause: str, message: str) -> None:
        """Record one violation of ``clause`` (which also marks it judged).

        A flood stays readable: a violation that differs from an earlier one only in its
        payload, event or item index is folded into it and counted, and past
        :data:`MAX_KEPT` distinct violations of a clause the rest are only counted.
        """
        _known(clause)
        record = self.record
        record.judged.add(clause)
        shown = f"{clause}: {self.shown(message)}"
        key = _INDEX.sub(r"\1 #", shown)
        first = self._folded.get(key)
        if first is not None:
            record.repeats[first] = record.repeats.get(first, 0) + 1
            return
        kept = record.violations.setdefault(clause, [])
        if len(kept) >= MAX_KEPT:
            record.overflow[clause] = record.overflow.get(clause, 0) + 1
            return
        self._folded[key] = shown
        kept.append(shown)

    def report(self, violations: Iterable[Violation], *, judge: Iterable[str] = ()) -> None:
        """Record a verify helper's violations, and judge the clauses it covers."""
        self.judge(*judge)
        for v in violations:
            self.fail(v.clause, v.marked or v.message)

    def fatal(self, clause: str, message: str) -> NoReturn:
        """Record a violation and stop this probe; unjudged clauses get skipped."""
        self.fail(clause, message)
        self.record.stopped_by = f"{clause}: {self.shown(message)}"
        raise ProbeAbort(clause)

    def skip(self, clauses: Iterable[str], reason: str) -> None:
        """Skip clauses with a reason that names the clause and what would enable it."""
        for clause in clauses:
            _known(clause)
            self.record.skipped.setdefault(clause, f"{clause} skipped: {self.shown(reason)}")

    def note(self, text: str, *, clauses: Iterable[str] = ()) -> None:
        """Attach context to some ``clauses``, or to every clause of this probe (like
        Go's ``t.Log``)."""
        wanted = list(clauses)
        if not wanted:
            self.record.notes.append(self.shown(text))
        for clause in wanted:
            _known(clause)
            self.record.clause_notes.setdefault(clause, []).append(self.shown(text))

    def trace(self, error: BaseException, *, clauses: Iterable[str]) -> None:
        """With ``Options(show_live_details=True)``, note the driver's traceback of ``error``
        on ``clauses``."""
        if self.options.show_live_details:
            self.note(f"driver traceback:\n{driver_traceback(error)}", clauses=clauses)

    def raised(self, label: str, error: BaseException, *, clauses: Iterable[str]) -> str:
        """Describe a raise (see :meth:`trace` for the traceback)."""
        self.trace(error, clauses=clauses)
        return describe_error(label, error)

    def watch(self, clause: str, sink: RecordingSink, *, label: str = "") -> None:
        """Keep watching a judged run's sink: emissions that arrive later still fail
        ``clause`` when the suite reads the verdict."""
        self.record.watches.append(Watch(clause, sink, sink.late_count, label))

    def watch_returned(self, watch: ReturnWatch) -> None:
        """Keep watching a returned response that was unchanged at the first look: an edit
        made later still fails ``watch.clause`` when the suite reads the verdict."""
        self.record.returns.append(watch)

    # -- driver calls -------------------------------------------------------------------

    def attempt(
        self,
        fn: Callable[..., Any],
        *args: Any,
        timeout: float | None = None,
        awaitable: bool = True,
    ) -> Outcome:
        """Call driver code under the probe timeout; never raises."""
        return self.runner.call(
            fn, *args, timeout=timeout or self.options.probe_timeout, awaitable=awaitable
        )

    def call(
        self,
        clause: str,
        label: str,
        fn: Callable[..., Any],
        *args: Any,
        timeout: float | None = None,
        awaitable: bool = True,
    ) -> Any:
        """Call driver code; a raise or a hang is a fatal ``clause`` violation."""
        outcome = self.attempt(fn, *args, timeout=timeout, awaitable=awaitable)
        self.fatal_unless_ok(clause, label, outcome, timeout)
        return outcome.value

    def fatal_unless_ok(
        self, clause: str, label: str, outcome: Outcome, timeout: float | None = None
    ) -> None:
        """Turn a raise or a hang into a fatal ``clause`` violation."""
        if outcome.timed_out:
            self.fatal(clause, describe_hang(label, outcome, timeout or self.options.probe_timeout))
        if outcome.error is not None:
            self.fatal(clause, self.raised(label, outcome.error, clauses=(clause,)))

    def expect_type(self, clause: str, label: str, value: object, kind: type[T]) -> T:
        """Fatal unless ``value`` is a ``kind`` (a driver returning a dict, say)."""
        if not isinstance(value, kind):
            self.fatal(
                clause,
                f"{label} returned {type(value).__qualname__}, expected "
                f"{kind.__module__.split('.')[0]}.{kind.__qualname__}",
            )
        return value

    def method(self, name: str, obj: object | None = None) -> Callable[..., Any] | None:
        """The callable attribute ``name`` of the driver (or ``obj``), if any.

        Looked up under the probe timeout: a property may raise or hang. Either way the
        method counts as absent.
        """
        target = self.driver if obj is None else obj
        outcome = self.attempt(getattr, target, name, None, awaitable=False)
        attr = outcome.value if outcome.ok else None
        return attr if callable(attr) else None

    def implements(self, protocol: type, obj: object | None = None) -> bool:
        """``driver.protocols.implements`` on the driver (or ``obj``), under the timeout."""
        target = self.driver if obj is None else obj
        outcome = self.attempt(implements, target, protocol, awaitable=False)
        return outcome.ok and outcome.value is True

    def new_driver(self, clause: str) -> object:
        """Another instance from the factory (for cross-instance determinism)."""
        self._factory_calls += 1
        label = f"the factory (call {self._factory_calls})"
        value = self.call(clause, label, self.factory, awaitable=False)
        if value is None:
            self.fatal(clause, f"{label} returned None")
        return value


def _known(clause: str) -> None:
    if clause not in CLAUSE_BY_ID:
        raise KeyError(f"unknown clause {clause!r}")
