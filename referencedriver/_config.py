"""Construction config of the reference driver and the constants that name it."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "DEFAULT_MODEL",
    "FINGERPRINT_DOMAIN",
    "REFERENCE_DRIVER_TYPE",
    "ReferenceConfig",
]

REFERENCE_DRIVER_TYPE = "reference"
"""``Descriptor.type``, the codec name and the ``driver_type`` of every report."""

DEFAULT_MODEL = "reference-1"
"""Model used when the config leaves ``model`` empty."""

FINGERPRINT_DOMAIN = "adaptertest/reference/v1;codec/reference/v1"
"""Names the config encoding and the codec contract; bump it when either changes meaning."""


class ReferenceConfig(BaseModel):
    """What the driver is built with; frozen so a running driver cannot see it change.

    A real driver keeps here everything its CLI sees at construction (binary,
    model, working dir, flags): the session-config fingerprint covers every field.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", protected_namespaces=())

    model: str = DEFAULT_MODEL
    """Model id passed to the provider; empty means :data:`DEFAULT_MODEL`."""
    cwd: str = ""
    """Working directory when the request brings no workspace lease."""
    fail_run: bool = False
    """Make every run end in a provider-level failure (exercises the failure path)."""
    model_url: str = ""
    """Root of an Anthropic Messages API (``http://127.0.0.1:PORT``): runs then talk to it
    over HTTP and run its tool calls for real (see ``_http.py``); empty: the scripted
    in-memory model."""
    api_key: str = ""
    """The key sent to ``model_url``."""
    home: str = ""
    """Where the network mode keeps its sessions (``{home}/sessions``)."""
    env: dict[str, str] = Field(default_factory=dict)
    """Variables added to the environment of every tool command the network mode runs."""
    timeout: float = 0.0
    """Seconds a network-mode run may take before it ends as timed out; 0: no deadline."""
    model_retries: int = 4
    """How often the network mode asks again after a rate limit, an overload, an outage
    or a cut stream before the run fails."""
