"""The ACP driver named after the agent it drives."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from acp_driver._structured import NATIVE_STRUCTURED
from driver import Descriptor, HumanDecisionSupport
from driver.acpkit import ASKS_PERMISSION, ACPConfig, ACPDriver

__all__ = ["UNASKED", "ACPAgentDriver"]

UNASKED: Mapping[str, str] = {
    "codex-acp": (
        "codex-acp 2.6.0 runs its shell tool without a session/request_permission in its "
        "default mode (it asks only for a command that requests escalation after "
        "session/set_mode read-only, which the driver does not send): the driver can "
        "neither ask the host nor refuse, so it declares auto_approve only"
    ),
}
"""Agents that never ask before running a tool, with why: their driver declares only the
``auto_approve`` permission mode, so a host is never told a refusal was possible."""


class ACPAgentDriver(ACPDriver):
    """:class:`~driver.acpkit.ACPDriver` with ``plan`` updates as todo snapshots; the
    agent's name goes into the display name, and an agent with a native structured output
    (:data:`~acp_driver._structured.NATIVE_STRUCTURED`) gets it."""

    declares_todos: ClassVar[bool] = True

    def __init__(self, config: ACPConfig, *, agent: str = "") -> None:
        super().__init__(
            config,
            structured=NATIVE_STRUCTURED.get(agent),
            permission=HumanDecisionSupport(auto_approve=True)
            if agent in UNASKED
            else ASKS_PERMISSION,
        )
        self._agent = agent

    def descriptor(self) -> Descriptor:
        """The ACP descriptor, displayed as ``<agent> over ACP``."""
        base = super().descriptor()
        if not self._agent:
            return base
        return base.model_copy(update={"display_name": f"{self._agent} over ACP"})
