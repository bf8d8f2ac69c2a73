"""Session parameters: the host-facing view of a resumable session.

Mirrors the data part of upstream ``session_codec.go``. A driver's session
codec converts its private ``SessionState`` to and from these parameters.
"""

from __future__ import annotations

from pydantic import Field

from driver._base import SPIModel
from driver.run import SessionState

__all__ = [
    "SESSION_PARAM_APPEND_SYSTEM_PROMPT_FINGERPRINT",
    "SESSION_PARAM_CWD",
    "SESSION_PARAM_PROFILE_FINGERPRINT",
    "SESSION_PARAM_WORKSPACE_ID",
    "SessionParams",
    "params_from_state",
    "state_from_params",
]

SESSION_PARAM_CWD = "cwd"
"""``values`` key for the workspace directory a session was captured in."""

SESSION_PARAM_WORKSPACE_ID = "workspace_id"
"""``values`` key for the SDK workspace lease id."""

SESSION_PARAM_PROFILE_FINGERPRINT = "profile_fingerprint"
"""``values`` key for ``ProfilePayload.session_fingerprint()``."""

SESSION_PARAM_APPEND_SYSTEM_PROMPT_FINGERPRINT = "append_system_prompt_fingerprint"
"""``values`` key for the hex SHA-256 of the run's appended system prompt (absent for
an empty one); see :mod:`driver.systemprompt`."""


class SessionParams(SPIModel):
    """Structured view of one session: the engine token, a label and guard values.

    The zero value (everything empty) means "no session".
    """

    resume_id: str = ""
    display_id: str = ""
    values: dict[str, str] = Field(default_factory=dict)


def params_from_state(state: SessionState | None) -> SessionParams:
    """The one-to-one mapping most codecs use, state to params.

    ``resume_id`` and every ``data`` entry as they are; the display id falls back to
    the handle; no state gives the zero params (SES-02, SES-03). Never raises (SES-07).
    """
    if state is None:
        return SessionParams()
    return SessionParams(
        resume_id=state.resume_id,
        display_id=state.display_id or state.resume_id,
        values=dict(state.data),
    )


def state_from_params(params: SessionParams) -> SessionState | None:
    """The inverse of :func:`params_from_state`; zero params mean "nothing to resume"
    (SES-02), and ``params_from_state`` of the result equals ``params`` (SES-04)."""
    if not (params.resume_id or params.display_id or params.values):
        return None
    return SessionState(
        resume_id=params.resume_id,
        display_id=params.display_id or params.resume_id,
        data=dict(params.values),
    )
