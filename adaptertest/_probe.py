"""ProbeContext: what a probe uses to call the driver and record verdicts per clause.

A probe is one interaction with the driver (Go's ``t.Run`` subtest: ``descriptor``,
``session_codec``, ``live_run`` ...). It judges several clauses from that one
interaction. Probes are plain functions ``probe(ctx) -> None`` living in the family
module of the clauses they judge; they never raise for anything the driver does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, NoReturn, TypeVar

from adaptertest._calls import CallRunner, Outcome, describe_error, describe_hang
from adaptertest._violation import Violation
from adaptertest.clauses import CLAUSE_BY_ID
from adaptertest.options import Options
from driver.descriptor import Descriptor
from driver.protocols import implements

T = TypeVar("T")


class ProbeAbort(Exception):
    """Stops the current probe after a fatal verdict (Go's ``t.Fatal``)."""


@dataclass
class ProbeRecord:
    """Verdicts a probe gathered: violations, judged clauses, skips, notes."""

    violations: dict[str, list[str]] = field(default_factory=dict)
    judged: set[str] = field(default_factory=set)
    skipped: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    stopped_by: str | None = None


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
        self._factory_calls = 1  # the suite's setup made the first

    # -- verdicts -----------------------------------------------------------------------

    def judge(self, *clauses: str) -> None:
        """Mark clauses as evaluated: they pass unless a violation was recorded."""
        for clause in clauses:
            _known(clause)
            self.record.judged.add(clause)

    def fail(self, clause: str, message: str) -> None:
        """Record one violation of ``clause`` (which also marks it judged)."""
        _known(clause)
        self.record.judged.add(clause)
        self.record.violations.setdefault(clause, []).append(f"{clause}: {message}")

    def report(self, violations: Iterable[Violation], *, judge: Iterable[str] = ()) -> None:
        """Record a verify helper's violations, and judge the clauses it covers."""
        self.judge(*judge)
        for v in violations:
            self.fail(v.clause, v.message)

    def fatal(self, clause: str, message: str) -> NoReturn:
        """Record a violation and stop this probe; unjudged clauses get skipped."""
        self.fail(clause, message)
        self.record.stopped_by = f"{clause}: {message}"
        raise ProbeAbort(clause)

    def skip(self, clauses: Iterable[str], reason: str) -> None:
        """Skip clauses with a reason that names the clause and what would enable it."""
        for clause in clauses:
            _known(clause)
            self.record.skipped.setdefault(clause, f"{clause} skipped: {reason}")

    def note(self, text: str) -> None:
        """Attach context to every clause of this probe (like Go's ``t.Log``)."""
        self.record.notes.append(text)

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
            self.fatal(clause, describe_error(label, outcome.error))

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
