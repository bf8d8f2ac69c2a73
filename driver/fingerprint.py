"""Canonical fingerprint of a driver's construction-time config.

A resume-capable driver must tell whether a stored session was created under
the same provider-visible config (``SessionConfigFingerprinter``). This module
provides the helper most drivers build that on: a deterministic, type-tagged
encoding hashed with SHA-256.

The encoding is Python-native. Tokens are stable across processes, hash seeds
and dict insertion orders, but they are **not** byte-compatible with the Go
helper, which encodes Go type names and kinds.

Encoding (every "string" is an 8-byte big-endian length followed by its bytes):

* the version string, then the domain, then the value rooted at ``$config``;
* each value starts with a tag string, then:

  - ``none``: nothing; ``bool``: one byte 0 or 1;
  - ``int``: the two's complement big-endian bytes (``bit_length // 8 + 1``
    of them) as a string, so any size is exact;
  - ``float``: the 8 IEEE-754 bytes (``-0.0`` and ``0.0`` differ);
  - ``str``: UTF-8 (lone surrogates pass through); ``bytes``: the raw bytes;
  - ``enum``: the qualified class name, then the member's value;
  - ``datetime``/``date``/``time``: ISO text; ``timedelta``: microseconds as int;
  - ``path`` (``PurePath``), ``url`` (pydantic URLs): the qualified class name,
    then the text; ``uuid``: the 16 bytes; ``decimal``: its exact text;
  - ``secret`` (pydantic ``SecretStr``/``SecretBytes``/``Secret``): the secret value;
  - ``seq`` (list, tuple, deque): the count, then each element;
  - ``set`` (set, frozenset, other abstract sets): the count, then the element
    encodings in byte order;
  - ``map`` (any ``Mapping``): the count, then (key, value) pairs ordered by the
    key's encoding; two keys with one encoding are an error;
  - ``model`` / ``dataclass``: the qualified class name, the field count, then
    each declared field's name and value in declaration order, defaults included.

A field whose declared type is a single collection kind (optionally ``| None``)
encodes ``None`` as the empty collection of that kind, so a missing and an
empty collection are alike. Anywhere else ``None`` differs from a zero value.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime
import decimal
import enum
import hashlib
import inspect
import pathlib
import struct
import types
import typing
import uuid
from collections.abc import Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet

import pydantic
import pydantic_core

from driver.errors import SessionConfigFingerprintError

if typing.TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = ["FINGERPRINT_VERSION", "canonical_session_config_fingerprint"]

FINGERPRINT_VERSION = "agent-driver-kit/session-config/py/v1"
"""Version string written first; change it whenever the encoding changes."""

_ROOT = "$config"
_MAX_DEPTH = 100  # far beyond any real config; keeps clear of Python's recursion limit

_SEQ, _SET, _MAP = "seq", "set", "map"

# Declared annotations (their typing origin) and the collection kind they denote.
_COLLECTION_ORIGINS: dict[object, str] = {
    list: _SEQ,
    tuple: _SEQ,
    collections.deque: _SEQ,
    Sequence: _SEQ,
    collections.abc.MutableSequence: _SEQ,
    set: _SET,
    frozenset: _SET,
    AbstractSet: _SET,
    collections.abc.MutableSet: _SET,
    dict: _MAP,
    collections.OrderedDict: _MAP,
    collections.defaultdict: _MAP,
    Mapping: _MAP,
    collections.abc.MutableMapping: _MAP,
}

_EMPTY_BY_KIND: dict[str, object] = {_SEQ: (), _SET: frozenset(), _MAP: {}}


def canonical_session_config_fingerprint(domain: str, value: object) -> str:
    """Return ``"sha256:" + 64 hex`` for ``value`` under ``domain``.

    ``domain`` names the driver and its codec contract (e.g. ``"acme/v2;codec/v1"``)
    and must change whenever the meaning of the encoded config changes. A blank
    domain raises ``ValueError``. Values without a stable cross-process form
    (callables, classes, generators, arbitrary objects, private model state,
    cycles) raise :class:`SessionConfigFingerprintError`, whose message names
    only the path and the type, never a value.
    """
    if not domain.strip():
        raise ValueError("session config fingerprint domain must not be blank")
    encoder = _Encoder()
    body = _string(FINGERPRINT_VERSION.encode()) + _string(domain.encode("utf-8", "surrogatepass"))
    body += encoder.encode(value, _ROOT, 0)
    return "sha256:" + hashlib.sha256(body).hexdigest()


def _string(data: bytes) -> bytes:
    return struct.pack(">Q", len(data)) + data


def _count(n: int) -> bytes:
    return struct.pack(">Q", n)


def _tag(name: str) -> bytes:
    return _string(name.encode())


def _type_name(tp: type) -> str:
    return f"{tp.__module__}.{tp.__qualname__}"


def _encode_int(n: int) -> bytes:
    return _string(n.to_bytes(n.bit_length() // 8 + 1, "big", signed=True))


def _collection_kind(annotation: object) -> str | None:
    """Collection kind of a declared field type, or None when it is not one single kind."""
    kinds: set[str] = set()
    for member in _union_members(annotation):
        if member is None or member is type(None):
            continue
        origin = typing.get_origin(member) or member
        try:
            kind = _COLLECTION_ORIGINS.get(origin)
        except TypeError:  # an unhashable annotation object is no collection type
            return None
        if kind is None:
            return None
        kinds.add(kind)
    return kinds.pop() if len(kinds) == 1 else None


def _union_members(annotation: object) -> list[object]:
    """Flatten ``Annotated``, ``Optional`` and ``X | Y`` into their members."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _union_members(typing.get_args(annotation)[0])
    if origin is typing.Union or origin is types.UnionType:
        members: list[object] = []
        for arg in typing.get_args(annotation):
            members.extend(_union_members(arg))
        return members
    return [annotation]


def _dataclass_hints(cls: type) -> dict[str, object]:
    """Resolved field annotations of a dataclass; empty if they cannot be resolved."""
    try:
        return dict(typing.get_type_hints(cls, include_extras=True))
    except Exception:  # noqa: BLE001 - annotations may fail to resolve in many ways
        # Unresolvable string annotations only cost the None-as-empty rule.
        return {}


class _Encoder:
    """One encoding pass; remembers the containers on the current path to detect cycles."""

    def __init__(self) -> None:
        self._active: set[int] = set()

    def _fail(self, path: str, value: object, kind: str, why: str) -> SessionConfigFingerprintError:
        return SessionConfigFingerprintError(
            path=path, type_name=_type_name(type(value)), kind=kind, why=why
        )

    def encode(self, value: object, path: str, depth: int) -> bytes:
        if depth > _MAX_DEPTH:
            raise self._fail(path, value, "nesting", f"nested deeper than {_MAX_DEPTH} levels")
        if value is None:
            return _tag("none")
        if isinstance(value, type):
            raise self._fail(path, value, "class", "a class has no stable cross-process value")
        scalar = self._scalar(value, path, depth)
        if scalar is not None:
            return scalar
        if isinstance(value, pydantic.BaseModel | Mapping | list | tuple | collections.deque):
            return self._container(value, path, depth)
        if isinstance(value, AbstractSet) or dataclasses.is_dataclass(value):
            return self._container(value, path, depth)
        raise self._unsupported(value, path)

    def _scalar(self, value: object, path: str, depth: int) -> bytes | None:
        """Encode a leaf value, or return None when ``value`` is not one."""
        if isinstance(value, enum.Enum):
            return (
                _tag("enum")
                + _string(_type_name(type(value)).encode())
                + self.encode(value.value, path, depth + 1)
            )
        kind = type(value)
        if kind is bool:
            return _tag("bool") + (b"\x01" if value else b"\x00")
        if kind is int:
            return _tag("int") + _encode_int(typing.cast(int, value))
        if kind is float:
            return _tag("float") + struct.pack(">d", value)
        if kind is str:
            return _tag("str") + _string(typing.cast(str, value).encode("utf-8", "surrogatepass"))
        if kind is bytes or kind is bytearray:
            return _tag("bytes") + _string(bytes(typing.cast(bytes, value)))
        if kind is datetime.datetime or kind is datetime.date or kind is datetime.time:
            iso = typing.cast(datetime.date, value).isoformat()
            return _tag(kind.__name__) + _string(iso.encode())
        if kind is datetime.timedelta:
            delta = typing.cast(datetime.timedelta, value)
            micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
            return _tag("timedelta") + _encode_int(micros)
        if isinstance(value, pathlib.PurePath):
            text = str(value).encode("utf-8", "surrogateescape")
            return _tag("path") + _string(_type_name(kind).encode()) + _string(text)
        if isinstance(value, pydantic.AnyUrl | pydantic_core.Url):
            return _tag("url") + _string(_type_name(kind).encode()) + _string(str(value).encode())
        if kind is uuid.UUID:
            return _tag("uuid") + typing.cast(uuid.UUID, value).bytes
        if kind is decimal.Decimal:
            return _tag("decimal") + _string(str(value).encode())
        if isinstance(value, pydantic.SecretStr | pydantic.SecretBytes | pydantic.Secret):
            secret: object = value.get_secret_value()
            return _tag("secret") + self.encode(secret, path, depth + 1)
        return None

    def _unsupported(self, value: object, path: str) -> SessionConfigFingerprintError:
        if (
            inspect.isgenerator(value)
            or inspect.iscoroutine(value)
            or inspect.isasyncgen(value)
            or isinstance(value, Iterator)
        ):
            return self._fail(
                path, value, "iterator", "an iterator, generator or stream has no stable value"
            )
        if callable(value):
            return self._fail(
                path, value, "callable", "code has no stable cross-process representation"
            )
        if isinstance(value, int | float | str | bytes):
            return self._fail(
                path, value, "subclass", "subclasses of builtin scalars may carry hidden state"
            )
        return self._fail(path, value, "type", "no canonical encoding for this type")

    def _container(self, value: object, path: str, depth: int) -> bytes:
        """Encode a value that can hold references, guarding against cycles."""
        key = id(value)
        if key in self._active:
            raise self._fail(path, value, "cycle", "the value contains itself")
        self._active.add(key)
        try:
            if isinstance(value, pydantic.BaseModel):
                return self._model(value, path, depth)
            if isinstance(value, Mapping):
                return self._mapping(value, path, depth)
            if isinstance(value, AbstractSet):
                items = sorted(self.encode(v, f"{path}[element]", depth + 1) for v in value)
                return _tag(_SET) + _count(len(items)) + b"".join(items)
            if isinstance(value, list | tuple | collections.deque):
                parts = [self.encode(v, f"{path}[element]", depth + 1) for v in value]
                return _tag(_SEQ) + _count(len(parts)) + b"".join(parts)
            return self._dataclass(value, path, depth)
        finally:
            self._active.discard(key)

    def _mapping(self, value: Mapping[object, object], path: str, depth: int) -> bytes:
        # Sort on the encoded key alone: values need not be comparable.
        entries = sorted(
            ((self.encode(k, f"{path}[key]", depth + 1), v) for k, v in value.items()),
            key=lambda entry: entry[0],
        )
        out = [_tag(_MAP), _count(len(entries))]
        previous: bytes | None = None
        for encoded_key, item in entries:
            if encoded_key == previous:
                raise self._fail(
                    f"{path}[key]", value, "duplicate key", "two keys share one canonical encoding"
                )
            previous = encoded_key
            out.append(_string(encoded_key))
            out.append(self.encode(item, f"{path}[value]", depth + 1))
        return b"".join(out)

    def _field(self, name: str, item: object, annotation: object, path: str, depth: int) -> bytes:
        field_path = f"{path}.{name}"
        if item is None:
            kind = _collection_kind(annotation)
            if kind is not None:
                item = _EMPTY_BY_KIND[kind]
        return _string(name.encode()) + self.encode(item, field_path, depth + 1)

    def _model(self, value: pydantic.BaseModel, path: str, depth: int) -> bytes:
        if value.__pydantic_private__:
            raise self._fail(path, value, "private state", "private attributes are not encoded")
        if value.__pydantic_extra__:
            raise self._fail(path, value, "extra fields", "undeclared extra fields are not encoded")
        fields = type(value).model_fields
        out = [_tag("model"), _string(_type_name(type(value)).encode()), _count(len(fields))]
        for name, info in fields.items():
            out.append(self._field(name, getattr(value, name), info.annotation, path, depth))
        return b"".join(out)

    def _dataclass(self, value: object, path: str, depth: int) -> bytes:
        fields = dataclasses.fields(typing.cast("DataclassInstance", value))
        names = {f.name for f in fields}
        instance_dict = getattr(value, "__dict__", None)
        if isinstance(instance_dict, dict) and any(n not in names for n in instance_dict):
            raise self._fail(path, value, "private state", "attributes outside declared fields")
        hints = _dataclass_hints(type(value))
        out = [_tag("dataclass"), _string(_type_name(type(value)).encode()), _count(len(fields))]
        for f in fields:
            annotation = hints.get(f.name, f.type)
            out.append(self._field(f.name, getattr(value, f.name), annotation, path, depth))
        return b"".join(out)
