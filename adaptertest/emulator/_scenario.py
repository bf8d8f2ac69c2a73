"""The scenario: what the emulated model answers, as data a user can write in JSON.

Token counts use the kit's meaning (:class:`driver.Usage`): ``input_tokens`` includes the
cache reads (``cached_input_tokens``) and the cache writes
(``cache_creation_input_tokens``); ``output_tokens`` includes ``reasoning_tokens``. Each
protocol spells them its own way on the wire (see ``docs/emulator.md``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError, model_validator

__all__ = ["Fault", "Scenario", "ScenarioError", "ToolCall", "Turn", "TurnUsage"]


class ScenarioError(ValueError):
    """A scenario that cannot be used; the message names the field and the file."""


class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TurnUsage(_Data):
    """The token counts the model reports for one answer, in the kit's meaning."""

    input_tokens: int = Field(default=0, ge=0)
    output_tokens: int = Field(default=0, ge=0)
    cached_input_tokens: int = Field(default=0, ge=0)
    cache_creation_input_tokens: int = Field(default=0, ge=0)
    reasoning_tokens: int = Field(default=0, ge=0)

    @model_validator(mode="after")
    def _parts_fit(self) -> Self:
        if self.cached_input_tokens + self.cache_creation_input_tokens > self.input_tokens:
            raise ValueError(
                "cached_input_tokens + cache_creation_input_tokens must not exceed "
                "input_tokens (input counts the cache reads and writes)"
            )
        if self.reasoning_tokens > self.output_tokens:
            raise ValueError(
                "reasoning_tokens must not exceed output_tokens (output counts the reasoning)"
            )
        return self


class ToolCall(_Data):
    """A tool the model asks the CLI to run; the CLI runs it and sends the result back."""

    name: str = Field(min_length=1)
    arguments: dict[str, JsonValue] = Field(default_factory=dict)
    id: str | None = Field(default=None, min_length=1)
    """The call id on the wire; None: the emulator makes one up (``toolu_...``, ``call_...``)."""


class Fault(_Data):
    """What goes wrong when the turn is asked for.

    ``status`` answers with that HTTP status (``body`` and ``headers`` as given; no body:
    the protocol's own error body for that status). ``cut_after_events`` sends that many
    stream events, then half of the next one, and drops the connection. ``hang`` never
    answers: the request stays open until the client disconnects or the emulator stops.
    Each of these fails the request and leaves the turn in place; ``times`` requests fail
    so (-1: every one), then the turn is served. ``event_delay`` alone is no failure: it
    slows every stream of the turn (seconds between events) and the turn completes.
    """

    status: int | None = Field(default=None, ge=400, le=599)
    body: JsonValue = None
    headers: dict[str, str] = Field(default_factory=dict)
    times: int = Field(default=1, ge=-1)
    cut_after_events: int | None = Field(default=None, ge=0)
    event_delay: float = Field(default=0.0, ge=0.0, le=60.0)
    hang: bool = False

    @model_validator(mode="after")
    def _one_kind(self) -> Self:
        kinds = [
            name
            for name, on in (
                ("status", self.status is not None),
                ("cut_after_events", self.cut_after_events is not None),
                ("hang", self.hang),
            )
            if on
        ]
        if len(kinds) > 1:
            raise ValueError(f"a fault is one of status, cut_after_events, hang; got {kinds}")
        if not kinds and self.event_delay == 0:
            raise ValueError(
                "a fault needs status, cut_after_events, hang or a positive event_delay"
            )
        if self.times == 0:
            raise ValueError("times must be positive, or -1 for every request")
        return self

    @property
    def fails(self) -> bool:
        """Whether the fault fails the request (not only slows it)."""
        return self.status is not None or self.cut_after_events is not None or self.hang


class Turn(_Data):
    """One model answer."""

    text: str = ""
    deltas: int = Field(default=1, ge=1)
    """How many text deltas the stream splits ``text`` into (at most one per character)."""
    thinking: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    structured: JsonValue = None
    """The structured answer, given by the CLI's own mechanism; None: no structured answer."""
    usage: TurnUsage = Field(default_factory=TurnUsage)
    fault: Fault | None = None


class Scenario(_Data):
    """The turns the emulated model answers with, one per main request, in order."""

    turns: list[Turn] = Field(min_length=1)
    repeat_last: bool = False
    """Keep serving the last turn once the others are used (a suite run, concurrent CLIs)."""

    @classmethod
    def load(cls, path: str | Path) -> Scenario:
        """Read a scenario from a JSON file; :class:`ScenarioError` names what is wrong."""
        where = Path(path)
        try:
            text = where.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ScenarioError(f"scenario {where}: cannot read it: {exc}") from exc
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ScenarioError(
                f"scenario {where}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
            ) from None
        return cls.parse(data, source=str(where))

    @classmethod
    def parse(cls, data: object, *, source: str = "scenario") -> Scenario:
        """Validate parsed JSON; :class:`ScenarioError` names each bad field."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ScenarioError(f"{source}: {describe_errors(exc)}") from None


def describe_errors(exc: ValidationError) -> str:
    """One line per problem: the field's path (``turns[0].fault.status``) and the rule."""
    lines = []
    for error in exc.errors(include_url=False):
        path = ""
        for part in error["loc"]:
            path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
        lines.append(f"{path or '(top level)'}: {error['msg']}")
    return "; ".join(lines)
