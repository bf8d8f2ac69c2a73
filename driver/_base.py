"""Base classes and field types shared by every SPI model.

Every model rejects unknown fields, so a misspelt or removed upstream field
fails loudly instead of being dropped. ``protected_namespaces`` is cleared
because upstream names fields ``model``, ``model_override`` and so on.

Python input and JSON input differ for two kinds of field, and each gets one
annotated type here so that every model applies the same rule:

- :data:`RawBytes`: in Python, ``str`` is text (UTF-8 with ``surrogateescape``);
  in JSON (and ``model_validate_strings``) it is the base64 wire form.
- :data:`Timestamp`: a UTC offset must be whole minutes, the only offsets
  RFC 3339 text (and so JSON) can carry.

Float fields reject NaN and infinities: JSON has no such numbers (pydantic would
write ``null``, Go refuses to encode them), so they could not survive a round trip.
"""

from __future__ import annotations

import base64
import binascii
import datetime
from typing import Annotated, Any, TypeAlias

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    PlainSerializer,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WithJsonSchema,
    WrapValidator,
)

__all__ = ["FrozenSPIModel", "RawBytes", "SPIModel", "Timestamp"]

_URL_SAFE_TO_STANDARD = str.maketrans("-_", "+/")


def _bytes_from_input(
    value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo
) -> Any:
    """Python ``str`` is text; JSON (and strings-mode) ``str`` is base64; the rest is pydantic's."""
    if not isinstance(value, str):
        return handler(value)  # bytes and bytearray pass, anything else is a bytes_type error
    if info.mode == "python":
        try:
            return value.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError as exc:
            # only U+DC80..U+DCFF stand for raw bytes; other lone surrogates have no bytes
            raise ValueError(
                f"text holds a lone surrogate {value[exc.start]!r} at index {exc.start} that "
                "stands for no byte (only U+DC80..U+DCFF do, as bytes.decode(errors="
                "'surrogateescape') makes them); pass bytes instead"
            ) from None
    try:
        # Go writes the standard alphabet, pydantic's own base64 the URL-safe one and
        # no padding is needed: read every form either wrote
        padded = value + "=" * (-len(value) % 4)
        return base64.b64decode(padded.translate(_URL_SAFE_TO_STANDARD), validate=True)
    except binascii.Error as exc:
        raise ValueError(
            f"bytes travel as base64 text in JSON; this is not base64 ({exc})"
        ) from None


def _bytes_to_base64(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


RawBytes: TypeAlias = Annotated[
    bytes,
    WrapValidator(_bytes_from_input),
    PlainSerializer(_bytes_to_base64, return_type=str, when_used="json"),
    WithJsonSchema({"type": "string", "contentEncoding": "base64"}),
]
"""Raw bytes: ``bytes`` in Python, standard base64 text in JSON (as Go writes ``[]byte``).

A ``str`` given in Python is text and is encoded as UTF-8 with ``surrogateescape``,
so ``bytes.decode("utf-8", errors="surrogateescape")`` round-trips exactly. The same
``str`` read from JSON is base64. ``model_validate`` is Python input even when the
dict came from ``model_dump(mode="json")``: that dict holds base64 text, which is
then taken as text. Round-trip through ``model_dump_json``/``model_validate_json``
or ``model_dump``/``model_validate`` instead.
"""


def _whole_minute_offset(value: datetime.datetime) -> datetime.datetime:
    offset = value.utcoffset()
    if offset is not None and offset % datetime.timedelta(minutes=1):
        sign = "-" if offset < datetime.timedelta(0) else "+"
        raise ValueError(
            f"UTC offset {sign}{abs(offset)} is not whole minutes; JSON (RFC 3339) "
            "cannot carry it, so convert to UTC or round the zone first"
        )
    return value


Timestamp: TypeAlias = Annotated[datetime.datetime, AfterValidator(_whole_minute_offset)]
"""A datetime that JSON can carry exactly: naive, or aware with a whole-minute offset.

JSON keeps the instant and the offset, not a ``zoneinfo`` zone's name.
"""


class SPIModel(BaseModel):
    """Mutable SPI value: unknown fields are rejected, defaults are Go zero values.

    Bytes fields use :data:`RawBytes` rather than a model-wide ``val_json_bytes``, which
    pydantic applies to Python input as well (so a ``str`` would be base64-decoded).
    """

    model_config = ConfigDict(extra="forbid", protected_namespaces=(), allow_inf_nan=False)


class FrozenSPIModel(SPIModel):
    """Immutable SPI value, used for static declarations such as ``Descriptor``.

    Sequences inside frozen models are tuples, so a declaration handed to the
    host cannot be changed behind the driver's back.
    """

    model_config = ConfigDict(frozen=True)
