"""Session codec of a CLI driver: the checkpoint state <-> session params."""

from __future__ import annotations

import hashlib
import json

from driver import SessionParams, SessionState, params_from_state, state_from_params

__all__ = ["ResumeCodec"]


class ResumeCodec:
    """Maps the checkpoint state one to one onto session params.

    ``resume_id`` is the handle the CLI takes back to continue a session (a
    Claude Code session id, a Codex thread id); ``data`` holds the guard values
    (cwd, workspace id, profile fingerprint). ``name`` is the driver type, so it
    is stable across instances and processes. Stateless; no method raises (SES-07).
    """

    def __init__(self, name: str) -> None:
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
        """Hash the handle and every value, so any guard change moves it (SES-05/06).

        The hashed text is the JSON array ``[resume_id, [[key, value], ...]]`` with
        keys sorted: cwd values are paths, which may hold ``=`` or a newline, and
        JSON keeps keys and values apart whatever they contain. Insertion order
        never matters.
        """
        pairs = sorted(params.values.items())
        text = json.dumps([params.resume_id, pairs], separators=(",", ":"))
        return hashlib.sha256(text.encode("ascii")).hexdigest()
