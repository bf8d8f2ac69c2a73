"""How deeply a driver's value is nested, measured without recursion.

Vendor data can nest thousands of levels deep. Python's ``==``, ``repr``, ``deepcopy``
and pydantic's dumps recurse once per level and raise ``RecursionError`` long before
that, inside the suite's own code. The suite measures first, with an explicit stack,
and reports a value nested deeper than :data:`MAX_DEPTH` as a violation of the clause
that would have compared it, naming the depth.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pydantic import BaseModel

__all__ = ["MAX_DEPTH", "depth_of", "too_deep"]

MAX_DEPTH = 200
"""The deepest nesting (containers and models) the suite compares or dumps."""


def _children(value: object) -> Iterable[object]:
    if isinstance(value, BaseModel):
        extra = value.__pydantic_extra__ or {}
        return [*(getattr(value, name, None) for name in type(value).model_fields), *extra.values()]
    if isinstance(value, Mapping):
        return list(value.values())
    if isinstance(value, list | tuple | set | frozenset):
        return list(value)
    return ()


def depth_of(value: object) -> int:
    """The nesting depth of ``value`` (a scalar is 0). Each object is walked once, so a
    cycle ends the walk instead of looping."""
    deepest = 0
    seen: set[int] = set()
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        current, depth = stack.pop()
        children = list(_children(current))
        if not children and not isinstance(current, BaseModel | Mapping | list | tuple):
            continue
        if id(current) in seen:
            continue
        seen.add(id(current))
        depth += 1
        deepest = max(deepest, depth)
        stack.extend((child, depth) for child in children)
    return deepest


def too_deep(value: object, limit: int = MAX_DEPTH) -> int | None:
    """The depth of ``value`` when it is nested deeper than ``limit``, else None."""
    depth = depth_of(value)
    return depth if depth > limit else None
