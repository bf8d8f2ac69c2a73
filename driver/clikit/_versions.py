"""Release numbers: which npm versions are stable, their order, and version ranges.

A range is a comma-separated list of comparisons that must all hold, as in Python
packaging: ``">=2.1.323,<2.2"``. Only plain dotted numbers are ordered; a pre-release
(``1.2.3-beta.1``) is never "stable" and never inside a range.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterable

_STABLE = re.compile(r"\d+(?:\.\d+)*")
_CLAUSE = re.compile(r"\s*(>=|<=|==|!=|>|<)\s*(\d+(?:\.\d+)*)\s*")
_OPS: dict[str, Callable[[tuple[int, ...], tuple[int, ...]], bool]] = {
    ">=": operator.ge,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
    ">": operator.gt,
    "<": operator.lt,
}


class RangeError(ValueError):
    """A version range that cannot be read; the message quotes the bad part."""


def is_stable(version: str) -> bool:
    """Whether ``version`` is a plain release such as ``2.1.328`` (no pre-release tag)."""
    return _STABLE.fullmatch(version) is not None


def key(version: str) -> tuple[int, ...]:
    """The sort key of a stable version, padded so ``1.2`` equals ``1.2.0``."""
    if not is_stable(version):
        raise ValueError(f"{version!r} is not a plain release number such as 1.2.3")
    parts = tuple(int(p) for p in version.split("."))
    return parts + (0,) * (4 - len(parts)) if len(parts) < 4 else parts


def last_stable(versions: Iterable[str], count: int) -> list[str]:
    """The ``count`` newest stable versions, oldest first."""
    if count < 1:
        raise ValueError(f"count must be at least 1, got {count}")
    stable = sorted({v for v in versions if is_stable(v)}, key=key)
    return stable[-count:]


def parse_range(text: str) -> list[tuple[str, tuple[int, ...]]]:
    """The comparisons of ``text``; raises :class:`RangeError` naming a bad part."""
    if not text.strip():
        raise RangeError("a version range is empty: give comparisons such as '>=2.1.323,<2.2'")
    clauses = []
    for part in text.split(","):
        match = _CLAUSE.fullmatch(part)
        if match is None:
            raise RangeError(
                f"cannot read {part.strip()!r} in version range {text!r}: each part is an "
                "operator (>=, >, <=, <, ==, !=) and a release number, such as '>=2.1.323'"
            )
        clauses.append((match.group(1), key(match.group(2))))
    return clauses


def in_range(version: str, text: str) -> bool:
    """Whether the stable ``version`` satisfies every comparison of the range ``text``."""
    clauses = parse_range(text)
    if not is_stable(version):
        return False
    have = key(version)
    return all(_OPS[op](have, bound) for op, bound in clauses)
