"""The unit every verify helper returns: one broken rule, tagged with its clause."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Violation:
    """One observed breach of a clause.

    ``message`` says what was observed and where (payload or item index); the suite adds
    the rule text and the rerun hint when it reports the violation.
    """

    clause: str
    message: str

    def __str__(self) -> str:
        return f"{self.clause}: {self.message}"
