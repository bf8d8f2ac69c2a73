"""Provider-independent construction config shared by built-in drivers.

Mirrors upstream ``config.go``. Each driver translates every field into its
provider's own execution form.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Literal

from pydantic import Field

from driver._base import SPIModel
from driver.profile import InstructionsBundleRef
from driver.runtime import EnvBinding, RuntimeServiceSpec, WorkspaceStrategyType

__all__ = ["CommonConfig", "WorkspaceRuntimeConfig", "WorkspaceStrategy"]


class WorkspaceStrategy(SPIModel):
    """Default workspace provisioning intent; call options may replace it."""

    type: WorkspaceStrategyType | Literal[""] = ""
    base_ref: str = ""
    branch_template: str = ""
    worktree_parent_dir: str = ""


class WorkspaceRuntimeConfig(SPIModel):
    """Runtime services a workspace needs by default."""

    services: list[RuntimeServiceSpec] = Field(default_factory=list)


class CommonConfig(SPIModel):
    """Process defaults most provider configs embed: command, directory, env, timeouts."""

    command: str = ""
    cwd: str = ""
    env: list[EnvBinding] = Field(default_factory=list)
    instructions: InstructionsBundleRef | None = None
    prompt_template: str = ""
    bootstrap_prompt_template: str = ""
    workspace_strategy: WorkspaceStrategy | None = None
    workspace_runtime: WorkspaceRuntimeConfig | None = None
    timeout: timedelta = timedelta(0)
    grace_period: timedelta = timedelta(0)
    extra_args: list[str] = Field(default_factory=list)

    def clone(self) -> CommonConfig:
        """Return a deep, type-preserving copy (no JSON round trip).

        A constructor can keep the copy as its snapshot while the caller goes
        on mutating the original, nested ``native`` maps included.
        """
        return self.model_copy(deep=True)
