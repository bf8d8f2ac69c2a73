"""Run policy: the host-facing guardrails and the driver's declared support for them.

Mirrors upstream ``policy.go``. Values are abstract intents that each driver
maps to its provider's own controls; an empty value inherits the binding default.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from driver._base import FrozenSPIModel, SPIModel
from driver.decision import HumanDecisionPolicy, HumanDecisionSupport, QuestionSupport

__all__ = [
    "FeatureLevel",
    "IsolationLevel",
    "RunPolicy",
    "RunPolicyCapabilities",
]


class IsolationLevel(StrEnum):
    """How far the agent may reach outside its workspace; inherit keeps the default."""

    INHERIT = ""
    READ_ONLY = "read_only"
    WORKSPACE_WRITE = "workspace_write"
    UNRESTRICTED = "unrestricted"


class FeatureLevel(StrEnum):
    """Allow or deny an optional agent feature such as web search or a browser."""

    INHERIT = ""
    ALLOW = "allow"
    DENY = "deny"


class RunPolicy(SPIModel):
    """The guardrails of one run, already validated by core against the descriptor."""

    isolation: IsolationLevel = IsolationLevel.INHERIT
    web_search: FeatureLevel = FeatureLevel.INHERIT
    browser: FeatureLevel = FeatureLevel.INHERIT
    human_decision: HumanDecisionPolicy = Field(default_factory=HumanDecisionPolicy)


class RunPolicyCapabilities(FrozenSPIModel):
    """Which policy dimensions and decision modes the driver can apply.

    A false dimension means the driver does not model it; explicitly asking for
    it is rejected before launch.
    """

    isolation: bool = False
    web_search: bool = False
    browser: bool = False
    permission: HumanDecisionSupport = Field(default_factory=HumanDecisionSupport)
    plan_review: HumanDecisionSupport = Field(default_factory=HumanDecisionSupport)
    question: QuestionSupport = Field(default_factory=QuestionSupport)
