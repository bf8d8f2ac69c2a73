"""The construction config every CLI driver shares: program, cwd, model, flags, deadline."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["DEFAULT_TIMEOUT", "CLIConfig"]

DEFAULT_TIMEOUT = 1800.0
"""Seconds a run may take before the process is stopped."""


class CLIConfig(BaseModel):
    """Fields of a one-process-per-run CLI driver; frozen so a running driver cannot see
    it change.

    A driver subclasses it to give ``command`` its program as the default (and may
    add fields of its own). The session-config fingerprint covers every field.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", protected_namespaces=())

    command: tuple[str, ...] = Field(min_length=1)
    """Program and leading arguments, e.g. the CLI's name or a wrapper script."""
    cwd: str = ""
    """Working directory when the request brings no workspace lease; empty = inherit."""
    model: str = ""
    """Value of ``--model``; empty leaves the CLI's own default."""
    extra_args: tuple[str, ...] = ()
    """More CLI flags, passed through as given."""
    timeout: float = Field(default=DEFAULT_TIMEOUT, ge=0)
    """Seconds before the process is stopped and the run reported as timed out; 0 = none."""
