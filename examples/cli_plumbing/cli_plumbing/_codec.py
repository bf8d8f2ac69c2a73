"""Session codec of a CLI driver: the reference codec's mapping under the driver's name."""

from __future__ import annotations

import hashlib
import json

from driver import SessionParams
from referencedriver import ReferenceSessionCodec

__all__ = ["ResumeCodec"]


class ResumeCodec(ReferenceSessionCodec):
    """Maps the checkpoint state one to one onto session params, as the reference does.

    ``resume_id`` is the handle the CLI takes back to continue a session (a
    Claude Code session id, a Codex thread id); ``data`` holds the guard values
    (cwd, workspace id, profile fingerprint). ``name`` is the driver type.
    Only the guard hash differs from the reference: cwd values are paths, which
    may hold ``=`` or a newline, so keys and values are kept apart by JSON
    rather than by separators. No method raises (SES-07).
    """

    def __init__(self, name: str) -> None:
        super().__init__(name)

    def guard_fingerprint(self, params: SessionParams) -> str:
        """Hash the handle and every value, so any guard change moves it (SES-05/06).

        The hashed text is the JSON array ``[resume_id, [[key, value], ...]]`` with
        keys sorted, which keeps keys and values apart whatever they contain.
        """
        text = json.dumps([params.resume_id, sorted(params.values.items())], separators=(",", ":"))
        return hashlib.sha256(text.encode("ascii")).hexdigest()
