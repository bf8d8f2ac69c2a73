"""Base classes shared by every SPI model.

Every model rejects unknown fields, so a misspelt or removed upstream field
fails loudly instead of being dropped. ``protected_namespaces`` is cleared
because upstream names fields ``model``, ``model_override`` and so on.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["FrozenSPIModel", "SPIModel"]


class SPIModel(BaseModel):
    """Mutable SPI value: unknown fields are rejected, defaults are Go zero values."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())


class FrozenSPIModel(SPIModel):
    """Immutable SPI value, used for static declarations such as ``Descriptor``.

    Sequences inside frozen models are tuples, so a declaration handed to the
    host cannot be changed behind the driver's back.
    """

    model_config = ConfigDict(frozen=True)
