"""The construction config every CLI driver shares: program, cwd, model, flags, deadline,
and the process's own environment and home."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from driver.secret_names import is_secret_name

__all__ = ["DEFAULT_TIMEOUT", "REDACTED", "CLIConfig", "masked_env"]

DEFAULT_TIMEOUT = 1800.0
"""Seconds a run may take before the process is stopped."""

REDACTED = "[REDACTED]"
"""What a secret value is shown as (the marker ``adaptertest record`` writes, too)."""


def masked_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with the value of every secret-named variable (:func:`driver.is_secret_name`)
    replaced by :data:`REDACTED`; the names stay."""
    return {name: REDACTED if is_secret_name(name) else value for name, value in env.items()}


class CLIConfig(BaseModel):
    """Fields of a one-process-per-run CLI driver; frozen so a running driver cannot see
    it change.

    A driver subclasses it to give ``command`` its program as the default (and may
    add fields of its own). The session-config fingerprint covers every field, except
    the values of secret-named ``env`` variables (their names count). Those values are
    shown as ``[REDACTED]`` in ``repr``/``str``, and validation errors never quote
    the input.
    """

    model_config = ConfigDict(
        frozen=True, extra="forbid", protected_namespaces=(), hide_input_in_errors=True
    )

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
    env: dict[str, str] = Field(default_factory=dict)
    """Environment variables set for the CLI, over the inherited environment and over
    what :attr:`home` sets (e.g. an API key, a base URL)."""
    home: str = ""
    """An absolute directory the CLI keeps its config and sessions under, mapped onto the
    CLI's own variables by :meth:`driver.clikit.CLIDriver.home_env`; empty = inherit."""

    @field_validator("env")
    @classmethod
    def _check_env(cls, env: dict[str, str]) -> dict[str, str]:
        for name, value in env.items():
            if not name:
                raise ValueError("env: a variable name must not be empty")
            if "=" in name or "\0" in name:
                shown = name.replace("\0", "\\0")
                raise ValueError(f"env: variable name {shown!r} must not contain '=' or NUL")
            if "\0" in value:
                raise ValueError(f"env[{name!r}]: the value must not contain NUL")
        return env

    @field_validator("home")
    @classmethod
    def _check_home(cls, home: str) -> str:
        if "\0" in home:
            raise ValueError("home: must not contain NUL")
        if home and not os.path.isabs(home):
            raise ValueError("home: must be an absolute path (or empty to inherit)")
        return home

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        for name, value in super().__repr_args__():
            yield name, masked_env(value) if name == "env" else value

    def __hash__(self) -> int:
        # Frozen, so hashable as before ``env`` (a dict) was added: dicts hash as their items.
        return hash((type(self), *(_hashable(value) for value in self.__dict__.values())))


def _hashable(value: object) -> object:
    return frozenset(value.items()) if isinstance(value, dict) else value
