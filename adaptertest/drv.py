"""DRV family: the driver names itself with a static, independent descriptor.

DRV-01 and DRV-02 compare values; DRV-03 compares object identity. Go passes a
``Descriptor`` by value, so only its slices and maps can alias; in Python every nested
object can, so :func:`shared_mutables` walks two snapshots and reports every mutable
object (list, dict, set, non-frozen model, arbitrary object) reachable from both.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import fractions
import uuid
from collections.abc import Callable, Iterator
from enum import Enum
from pathlib import PurePath

from pydantic import BaseModel

from adaptertest._probe import ProbeContext
from adaptertest._violation import Violation
from driver.descriptor import Descriptor

__all__ = ["probe_descriptor", "shared_mutables", "verify_descriptor_names"]

# Values that cannot change, so two snapshots may share them freely.
_IMMUTABLE_LEAVES: tuple[type, ...] = (
    str,
    bytes,
    int,
    float,
    complex,
    type(None),
    Enum,
    range,
    datetime.date,
    datetime.time,
    datetime.timedelta,
    datetime.tzinfo,
    decimal.Decimal,
    fractions.Fraction,
    uuid.UUID,
    PurePath,
    type,
)


def _blank(value: object) -> bool:
    return not isinstance(value, str) or not value.strip()


def _shown(value: object) -> str:
    if isinstance(value, str):
        return f"blank ({value!r})" if value else "empty"
    return f"a {type(value).__qualname__}, not a string"


def verify_descriptor_names(desc: Descriptor) -> list[Violation]:
    """DRV-01: ``type`` and ``display_name`` hold text (whitespace alone is empty)."""
    out: list[Violation] = []
    for name in ("type", "display_name"):
        value = getattr(desc, name, None)
        if _blank(value):
            out.append(Violation("DRV-01", f"descriptor().{name} is {_shown(value)}"))
    return out


def _is_frozen(value: object) -> bool:
    """Whether a container can never be changed in place (its items may still be)."""
    if isinstance(value, tuple | frozenset):
        return True
    if isinstance(value, BaseModel):
        return bool(type(value).model_config.get("frozen", False))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        params = getattr(type(value), "__dataclass_params__", None)
        return bool(getattr(params, "frozen", False))
    return False


def _children(value: object, path: str) -> Iterator[tuple[object, str]]:
    """The objects held by one container, each with its path."""
    if isinstance(value, BaseModel):
        for name in type(value).model_fields:
            yield getattr(value, name, None), f"{path}.{name}"
        extra = getattr(value, "__pydantic_extra__", None)
        if isinstance(extra, dict):
            for key, item in extra.items():
                yield item, f"{path}.{key}"
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield getattr(value, f.name, None), f"{path}.{f.name}"
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key, f"{path} key {key!r}"
            yield item, f"{path}[{key!r}]"
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield item, f"{path}[{index}]"
    elif isinstance(value, set | frozenset):
        for item in value:
            yield item, f"{path} item {item!r}"
    # Anything else (bytearray, arbitrary objects) is judged as a whole, not opened.


def _walk(root: object, path: str, visit: Callable[[object, str], bool]) -> None:
    """Call ``visit`` on every mutable object reachable from ``root``, outermost first.

    Each object is visited once; the walk goes inside a mutable object only when
    ``visit`` returns True, and always inside frozen containers.
    """
    seen: set[int] = set()
    stack: list[tuple[object, str]] = [(root, path)]
    while stack:
        value, where = stack.pop()
        if isinstance(value, _IMMUTABLE_LEAVES) or id(value) in seen:
            continue
        seen.add(id(value))
        if not _is_frozen(value) and not visit(value, where):
            continue
        stack.extend(reversed(list(_children(value, where))))


def shared_mutables(first: object, second: object, *, label: str = "descriptor()") -> list[str]:
    """Paths (in ``second``) of mutable objects that ``second`` shares with ``first``.

    Only the outermost object of a shared subtree is named.
    """
    owned: set[int] = set()

    def collect(value: object, _: str) -> bool:
        owned.add(id(value))
        return True

    shared: list[str] = []

    def compare(value: object, where: str) -> bool:
        if id(value) in owned:
            shared.append(f"{where} ({type(value).__qualname__})")
            return False
        return True

    _walk(first, label, collect)
    _walk(second, label, compare)
    return shared


def _differing_fields(a: Descriptor, b: Descriptor) -> list[str]:
    names = [n for n in Descriptor.model_fields if getattr(a, n, None) != getattr(b, n, None)]
    if type(a) is not type(b):
        names.insert(0, f"its type ({type(b).__qualname__} vs {type(a).__qualname__})")
    return names or ["a private or extra attribute"]


def _snapshot(ctx: ProbeContext, driver: object, label: str) -> Descriptor:
    """One more ``descriptor()`` call; a raise, hang or wrong type is fatal for DRV-02."""
    method = ctx.method("descriptor", driver)
    if method is None:
        ctx.fatal("DRV-02", f"{label}: the driver has no callable descriptor() method")
    value = ctx.call("DRV-02", label, method, awaitable=False)
    return ctx.expect_type("DRV-02", label, value, Descriptor)


def probe_descriptor(ctx: ProbeContext) -> None:
    """DRV-01..03 from the suite's first snapshot, a second call and a second instance."""
    first = ctx.descriptor
    ctx.report(verify_descriptor_names(first), judge=["DRV-01"])

    second = _snapshot(ctx, ctx.driver, "descriptor() (second call)")
    if second != first:
        fields = ", ".join(_differing_fields(first, second))
        ctx.fail("DRV-02", f"a second descriptor() call differs from the first in {fields}")
    for where in shared_mutables(first, second):
        ctx.fail("DRV-03", f"{where} is the same object in two descriptor() snapshots")
    ctx.judge("DRV-03")

    other = ctx.new_driver("DRV-02")
    third = _snapshot(ctx, other, "descriptor() of a second factory instance")
    if third != first:
        fields = ", ".join(_differing_fields(first, third))
        ctx.fail(
            "DRV-02",
            f"the descriptor of a second factory instance differs from the first in {fields}",
        )
    ctx.judge("DRV-02")
    for where in shared_mutables(first, third):
        ctx.fail(
            "DRV-03",
            f"{where} is the same object in the descriptors of two factory instances",
        )
