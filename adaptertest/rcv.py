"""RCV family (Python extension): what a host received stays what it received.

A Go sink receives a copy of each value; a Python sink receives the object itself. A
host that records the stream keeps references to those objects, so a driver that reuses
one payload object and edits its ``delta`` before each emit, or edits a transcript
item's text after emitting its run event, rewrites the host's history behind its back.
The same holds for a returned :class:`~driver.Response`: a checkpoint state shared
between runs ends with every response carrying the last run's resume id.

The suite's :class:`~adaptertest.sink.RecordingSink` keeps a deep snapshot of every
emission as it arrives, and every stream, run-event and transcript clause judges those
snapshots. The live probes snapshot the returned response too, and compare each
snapshot with the object itself once the run has settled, and a returned response once
more when the verdicts are read (at the end of the suite, after waiting, bounded, for
what the run left running): an edit made a second later by a reaper task or a background
flush is seen there, and the message says when:

* RCV-01: an emitted stream payload or run event (its transcript item included)
  changed after it was emitted;
* RCV-02: a returned Response changed after ``run`` returned, or the responses of two
  concurrent runs share a mutable object (CON-01's runs).

See ``docs/received-values.md`` for why the SPI's models stay mutable.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from adaptertest._depth import MAX_DEPTH
from adaptertest._violation import Violation

__all__ = [
    "changed_path",
    "shared_objects",
    "snapshot",
    "verify_received",
    "verify_returned",
]

T = TypeVar("T")

_ADVICE_EMIT = (
    "a sink may keep what it receives, so emit a new object each time and never edit one "
    "once emitted"
)
_ADVICE_RETURN = (
    "a host keeps the Response it was given, so build a new one per run and share no "
    "mutable state (a checkpoint state, a dict, a list) between runs"
)


def snapshot(value: T) -> T:
    """A deep copy of ``value`` as it is now; ``value`` itself when it cannot be copied
    (nested too deep, or an object that refuses ``deepcopy``): then no later change can
    be seen, and the depth is reported where the value is compared."""
    try:
        return copy.deepcopy(value)
    except (RecursionError, Exception):  # noqa: BLE001 - a driver's object may refuse
        return value


def _fields(value: BaseModel) -> list[tuple[str, Any]]:
    names = list(type(value).model_fields)
    extra = value.__pydantic_extra__ or {}
    return [(name, getattr(value, name, None)) for name in names] + list(extra.items())


def changed_path(then: object, now: object) -> str | None:
    """Where ``now`` first differs from ``then`` (``.checkpoint.state.resume_id``,
    ``.data['k'][2]``); None when they are equal. Walked with an explicit stack, at most
    :data:`~adaptertest._depth.MAX_DEPTH` levels deep (deeper is not compared)."""
    stack: list[tuple[str, object, object, int]] = [("", then, now, 0)]
    while stack:
        path, a, b, depth = stack.pop()
        if depth > MAX_DEPTH:
            continue
        if type(a) is not type(b):
            return path or "(the object)"
        children: list[tuple[str, object, object]] = []
        if isinstance(a, BaseModel) and isinstance(b, BaseModel):
            children = [
                (f"{path}.{name}", value, getattr(b, name, None)) for name, value in _fields(a)
            ]
            if len(_fields(b)) != len(children):
                return path or "(the object)"
        elif isinstance(a, Mapping) and isinstance(b, Mapping):
            if list(a) != list(b):
                return f"{path} (keys)" if path else "(keys)"
            children = [(f"{path}[{key!r}]", a[key], b[key]) for key in a]
        elif isinstance(a, list | tuple) and isinstance(b, list | tuple):
            if len(a) != len(b):
                return f"{path} (length {len(a)}, now {len(b)})"
            children = [(f"{path}[{i}]", x, y) for i, (x, y) in enumerate(zip(a, b, strict=True))]
        elif type(a).__eq__ is object.__eq__:
            continue  # compared by identity only: a copy never equals it, so not judged
        else:
            try:
                if a != b:
                    return path or "(the object)"
            except Exception:  # noqa: BLE001 - a driver's __eq__ may raise
                return path or "(the object)"
            continue
        stack.extend((p, x, y, depth + 1) for p, x, y in reversed(children))
    return None


def _equal(then: object, now: object) -> bool:
    """The fast check first: plain ``==`` (False when it cannot tell)."""
    try:
        return bool(then == now)
    except Exception:  # noqa: BLE001 - too deep, or a driver's __eq__ raised
        return False


def verify_received(
    events: Sequence[tuple[object, object]], stream: Sequence[tuple[object, object]]
) -> list[Violation]:
    """RCV-01: each ``(as emitted, the object now)`` pair of run events and payloads is
    still equal: nothing emitted was edited afterwards."""
    out: list[Violation] = []
    compared: set[tuple[int, int]] = set()  # one object emitted again shares its snapshot
    for label, pairs in (("run event", events), ("payload", stream)):
        for index, (then, now) in enumerate(pairs):
            if then is now or (id(then), id(now)) in compared:
                continue  # not copyable (nothing to compare with), or compared already
            compared.add((id(then), id(now)))
            if _equal(then, now):
                continue
            where = changed_path(then, now)
            if where is not None:
                kind = getattr(then, "kind", None) or getattr(then, "type", None) or "?"
                out.append(
                    Violation(
                        "RCV-01",
                        f"{label} {index} ({kind!s}) changed after it was emitted (at "
                        f"{where}): {_ADVICE_EMIT}",
                    )
                )
    return out


def verify_returned(
    returned: object, kept: object, label: str = "run()", *, seen: str = ""
) -> list[Violation]:
    """RCV-02: the response ``run`` returned still equals its snapshot ``kept``; ``seen``
    says when this look was (``"seen 0.5 s after it returned"``)."""
    if returned is kept or returned is None:
        return []
    where = changed_path(kept, returned)
    if where is None:
        return []
    when = f", {seen}" if seen else ""
    return [
        Violation(
            "RCV-02",
            f"the Response {label} returned changed after it returned (at {where}{when}): "
            f"{_ADVICE_RETURN}",
        )
    ]


def _mutable_parts(value: object) -> dict[int, str]:
    """id -> path of every mutable container reachable from ``value`` (dicts, lists,
    sets, unfrozen models), at most MAX_DEPTH levels deep."""
    found: dict[int, str] = {}
    stack: list[tuple[str, object, int]] = [("", value, 0)]
    while stack:
        path, current, depth = stack.pop()
        if depth > MAX_DEPTH or id(current) in found:
            continue
        children: Iterable[tuple[str, object]] = ()
        if isinstance(current, BaseModel):
            if not current.model_config.get("frozen", False):
                found[id(current)] = path or "(the response)"
            children = [(f"{path}.{name}", child) for name, child in _fields(current)]
        elif isinstance(current, dict):
            found[id(current)] = path
            children = [(f"{path}[{key!r}]", child) for key, child in current.items()]
        elif isinstance(current, list | set):
            found[id(current)] = path
            children = [(f"{path}[{i}]", child) for i, child in enumerate(current)]
        elif isinstance(current, tuple):
            children = [(f"{path}[{i}]", child) for i, child in enumerate(current)]
        stack.extend((p, child, depth + 1) for p, child in children)
    return found


def shared_objects(responses: Mapping[int, object]) -> list[Violation]:
    """RCV-02: the responses of concurrent runs (run index -> the object returned) share
    no mutable object; one violation per pair, naming the first shared path."""
    out: list[Violation] = []
    parts = {i: _mutable_parts(r) for i, r in responses.items() if r is not None}
    runs = sorted(parts)
    for position, first in enumerate(runs):
        for second in runs[position + 1 :]:
            common = [path for key, path in parts[first].items() if key in parts[second]]
            if common:
                where = min(common, key=len)
                out.append(
                    Violation(
                        "RCV-02",
                        f"the Responses of run {first} and run {second} share one mutable "
                        f"object (at {where}): {_ADVICE_RETURN}",
                    )
                )
    return out
