"""A toolkit for drivers of agents that speak the Agent Client Protocol (ACP).

ACP is JSON-RPC 2.0 over the agent process's stdin and stdout; the official Python SDK
(``agent-client-protocol``, imported as ``acp``; the kit's ``acp`` extra) speaks it.
:class:`ACPDriver` starts an agent (``gemini --acp``, ``claude-agent-acp``, ``qwen
--acp`` ...), initializes protocol version 1, opens or loads a session, sends the
run's prompt and maps every ``session/update`` to stream payloads, run events and
transcript items; a permission request is answered by the run's human-decision
policy. docs/acp.md has the mapping, the modes and each agent's setup.

- ``_config.py``: :class:`ACPConfig` (the CLI fields, the process mode).
- ``_bridge.py``: the SDK's asyncio loop in a thread of its own, so the driver runs on
  trio too.
- ``_agent.py``: one agent process and the client side of its connection.
- ``_mapping.py``: updates to payloads and items; usage.
- ``_decision.py``: permission requests and the human-decision policy.
- ``_structured.py``: :class:`StructuredOutputExtension`, an agent's native structured
  output through ACP's extension points.
- ``_driver.py``: :class:`ACPDriver`.
"""

from __future__ import annotations

import importlib.util

if importlib.util.find_spec("acp") is None:
    raise ModuleNotFoundError(
        "driver.acpkit needs the Agent Client Protocol SDK (agent-client-protocol), which is "
        "not installed: pip install 'agent-driver-kit[acp]'",
        name="acp",
    )

from driver.acpkit._agent import PROTOCOL_VERSION
from driver.acpkit._config import DEFAULT_CLOSE_GRACE, ACPConfig
from driver.acpkit._decision import PermissionOutcome, decide_permission
from driver.acpkit._driver import ASKS_PERMISSION, CANCEL_GRACE, ACPDriver
from driver.acpkit._mapping import TurnMapper, acp_usage, content_text
from driver.acpkit._structured import StructuredOutputExtension

__all__ = [
    "ASKS_PERMISSION",
    "CANCEL_GRACE",
    "DEFAULT_CLOSE_GRACE",
    "PROTOCOL_VERSION",
    "ACPConfig",
    "ACPDriver",
    "PermissionOutcome",
    "StructuredOutputExtension",
    "TurnMapper",
    "acp_usage",
    "content_text",
    "decide_permission",
]
