"""Session codec of the reference driver: ``SessionState`` <-> ``SessionParams``."""

from __future__ import annotations

import hashlib

from driver import SessionParams, SessionState, params_from_state, state_from_params
from referencedriver._config import REFERENCE_DRIVER_TYPE

__all__ = ["ReferenceSessionCodec"]


class ReferenceSessionCodec:
    """Maps the checkpoint state one to one onto session params.

    The state is the provider session handle (``resume_id``) plus guard values
    in ``data``; a display id falls back to the handle. ``name`` is the codec
    name stored with every session (a driver type, so it is stable across
    instances and processes); another driver may reuse the mapping under its
    own name. Stateless, so one instance may serve any number of threads. No
    method raises (SES-07).
    """

    _name = REFERENCE_DRIVER_TYPE  # also what a subclass that skips __init__ reports

    def __init__(self, name: str = REFERENCE_DRIVER_TYPE) -> None:
        self._name = name

    def name(self) -> str:
        """Return the stable codec name stored with every session (SES-01)."""
        return self._name

    def to_params(self, state: SessionState | None) -> SessionParams:
        """Expose ``state`` to the host; no state gives the zero params (SES-02, SES-03)."""
        return params_from_state(state)

    def from_params(self, params: SessionParams) -> SessionState | None:
        """Rebuild the state; empty params mean "nothing to resume" (SES-02, SES-04)."""
        return state_from_params(params)

    def guard_fingerprint(self, params: SessionParams) -> str:
        """Hash the handle and every value, so changing any guard key changes it (SES-05/06).

        The hashed text is ``resume_id=<id>\\n`` then ``<key>=<value>\\n`` per
        value in sorted key order; the result is lowercase hex SHA-256.
        """
        digest = hashlib.sha256(f"resume_id={params.resume_id}\n".encode("utf-8", "surrogatepass"))
        for key in sorted(params.values):
            digest.update(f"{key}={params.values[key]}\n".encode("utf-8", "surrogatepass"))
        return digest.hexdigest()
