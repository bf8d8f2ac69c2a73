"""In-memory reference driver: passes every conformance clause and serves as a template.

Copy this package to start a driver; the places marked ``# provider:`` are where
a real driver talks to its CLI. Everything else (declarations, the session
codec, emitting stream payloads, run events and the transcript from one pass,
the checkpoint) keeps its shape in a real driver.

- ``_config.py``: the frozen construction config and the driver's constants.
- ``_codec.py``: the session codec (checkpoint state <-> session params).
- ``_driver.py``: the descriptor, the probes and ``run``.
- ``_conformance.py``: the suite options the driver is checked with.
"""

from __future__ import annotations

from referencedriver._codec import ReferenceSessionCodec
from referencedriver._config import (
    DEFAULT_MODEL,
    FINGERPRINT_DOMAIN,
    REFERENCE_DRIVER_TYPE,
    ReferenceConfig,
)
from referencedriver._conformance import adaptertest_options
from referencedriver._driver import (
    REFERENCE_SYSTEM_PROMPT,
    ModelTurn,
    ReferenceDriver,
    ReferenceModel,
    new_reference_driver,
)

__all__ = [
    "DEFAULT_MODEL",
    "FINGERPRINT_DOMAIN",
    "REFERENCE_DRIVER_TYPE",
    "REFERENCE_SYSTEM_PROMPT",
    "ModelTurn",
    "ReferenceConfig",
    "ReferenceDriver",
    "ReferenceModel",
    "ReferenceSessionCodec",
    "adaptertest_options",
    "new_reference_driver",
]
