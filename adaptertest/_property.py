"""How the suite runs its hypothesis properties (session codec laws, format drift).

A property is driver data, not a test of the user's: it runs with explicit settings
(the same examples on every run, no example database, no deadline, shrinking on) and
leaves the user's hypothesis profile alone. A law broken by a generated example raises
a :class:`Falsified` subclass of its clause: hypothesis tells failures apart by
exception type and shrinks each one separately.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from hypothesis import settings

__all__ = ["Falsified", "falsified_by_clause", "falsified_for", "leaves", "property_settings"]


def property_settings(max_examples: int) -> settings:
    """Settings for one suite property: derandomized, no database, quiet, no explain phase
    (it reruns examples, which for driver runs means processes)."""
    from hypothesis import HealthCheck, Phase, Verbosity, settings

    return settings(
        derandomize=True,
        database=None,
        deadline=None,
        max_examples=max_examples,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
        phases=[phase for phase in Phase if phase is not Phase.explain],
        verbosity=Verbosity.quiet,
    )


class Falsified(Exception):
    """A law broken by a generated example; subclass it once per clause."""

    clause: ClassVar[str] = ""

    def __init__(self, message: str, example: str) -> None:
        super().__init__(f"{self.clause}: {message}")
        self.message = message
        self.example = example


_FALSIFIED: dict[str, type[Falsified]] = {}


def falsified_for(clause: str) -> type[Falsified]:
    """The :class:`Falsified` subclass of ``clause``, made once and then reused."""
    cls = _FALSIFIED.get(clause)
    if cls is None:
        name = f"Falsified{clause.replace('-', '')}"
        cls = _FALSIFIED[clause] = type(name, (Falsified,), {"clause": clause})
    return cls


def leaves(error: BaseException) -> Iterator[BaseException]:
    """The exceptions inside ``error``, exception groups flattened."""
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            yield from leaves(inner)
    else:
        yield error


def falsified_by_clause(error: BaseException) -> tuple[dict[str, Falsified], list[BaseException]]:
    """Split what a property raised: the first falsification per clause, and the rest."""
    found: dict[str, Falsified] = {}
    other: list[BaseException] = []
    for leaf in leaves(error):
        if isinstance(leaf, Falsified):
            found.setdefault(leaf.clause, leaf)
        else:
            other.append(leaf)
    return found, other
