"""The ACP driver named after the agent it drives."""

from __future__ import annotations

from typing import ClassVar

from acp_driver._structured import NATIVE_STRUCTURED
from driver import Descriptor
from driver.acpkit import ACPConfig, ACPDriver

__all__ = ["ACPAgentDriver"]


class ACPAgentDriver(ACPDriver):
    """:class:`~driver.acpkit.ACPDriver` with ``plan`` updates as todo snapshots; the
    agent's name goes into the display name, and an agent with a native structured output
    (:data:`~acp_driver._structured.NATIVE_STRUCTURED`) gets it."""

    declares_todos: ClassVar[bool] = True

    def __init__(self, config: ACPConfig, *, agent: str = "") -> None:
        super().__init__(config, structured=NATIVE_STRUCTURED.get(agent))
        self._agent = agent

    def descriptor(self) -> Descriptor:
        """The ACP descriptor, displayed as ``<agent> over ACP``."""
        base = super().descriptor()
        if not self._agent:
            return base
        return base.model_copy(update={"display_name": f"{self._agent} over ACP"})
