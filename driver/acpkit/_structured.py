"""Native structured output over ACP extensions, for the agents that offer it.

ACP version 1 has no structured-output method, but an agent may take options in the
``_meta`` of ``session/new`` and ``session/load`` and report back through extension
notifications (claude-agent-acp does both). :class:`StructuredOutputExtension` is what
a driver is given to use such an agent's mechanism: the ``_meta`` a structured run's
session is opened with, and where the answer is read from. Without one, the driver
declares no native structured output and refuses a native request before launch.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from driver import OutputSchema

__all__ = ["StructuredOutputExtension"]


class StructuredOutputExtension(Protocol):
    """An agent's native structured output, reached through ACP's extension points.

    A session opened with :meth:`session_meta` answers every turn the agent's way, so
    the driver opens (or reloads) a structured run's session with it and a later plain
    run's without it; a session keeps the ``_meta`` it was last opened with.
    """

    @property
    def notes(self) -> str:
        """What the descriptor says of the mechanism (``StructuredOutputCapability.notes``)."""
        ...

    def session_meta(self, schema: OutputSchema) -> dict[str, Any]:
        """The ``_meta`` of ``session/new`` (and ``session/load``) for a run that asks for
        ``schema``; its ``schema_document`` is valid JSON Schema text."""
        ...

    def structured_json(self, method: str, params: Mapping[str, Any]) -> str | None:
        """The JSON text of the structured answer if the extension notification ``method``
        (as the SDK names it: without the leading underscore) carries one, else None."""
        ...
