"""Session parameters: the host-facing view of a resumable session.

Mirrors the data part of upstream ``session_codec.go``. A driver's session
codec converts its private ``SessionState`` to and from these parameters.
"""

from __future__ import annotations

from pydantic import Field

from driver._base import SPIModel

__all__ = [
    "SESSION_PARAM_CWD",
    "SESSION_PARAM_PROFILE_FINGERPRINT",
    "SESSION_PARAM_WORKSPACE_ID",
    "SessionParams",
]

SESSION_PARAM_CWD = "cwd"
"""``values`` key for the workspace directory a session was captured in."""

SESSION_PARAM_WORKSPACE_ID = "workspace_id"
"""``values`` key for the SDK workspace lease id."""

SESSION_PARAM_PROFILE_FINGERPRINT = "profile_fingerprint"
"""``values`` key for ``ProfilePayload.session_fingerprint()``."""


class SessionParams(SPIModel):
    """Structured view of one session: the engine token, a label and guard values.

    The zero value (everything empty) means "no session".
    """

    resume_id: str = ""
    display_id: str = ""
    values: dict[str, str] = Field(default_factory=dict)
