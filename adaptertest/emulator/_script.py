"""The scenario's progress: which turn the next main request gets, and the faults left."""

from __future__ import annotations

import dataclasses
import threading

from adaptertest.emulator._scenario import Scenario, Turn

__all__ = ["Plan", "Script"]


@dataclasses.dataclass(frozen=True)
class Plan:
    """What one request gets."""

    side: bool
    turn: Turn | None
    """The turn to serve or fail (a side request: whose usage a structured answer reports);
    None: the scenario is used up, or a side request outside the turns."""
    index: int | None
    fail: bool = False
    """Whether the turn's fault fails this request (the turn stays for the next one)."""


class Script:
    """Hands out the turns of a scenario, one per main request, thread-safely."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self._next = 0
        self._faults_left = [
            turn.fault.times if turn.fault is not None and turn.fault.fails else 0
            for turn in scenario.turns
        ]
        self._lock = threading.Lock()

    @property
    def served(self) -> int:
        """How many turns main requests have consumed (repeats of the last one included)."""
        with self._lock:
            return self._next

    def take(self, *, side: bool, schema: bool, tools: bool = True) -> Plan:
        """The plan for a request: ``side`` by its look, ``schema`` when it asks for a
        structured answer (side too when the turn has nothing structured to give, unless
        it calls tools the request offers: a tool-less request asking for a shape, such as
        a session title, cannot take a turn of tool calls)."""
        if side:
            return Plan(side=True, turn=None, index=None)
        turns = self.scenario.turns
        with self._lock:
            index = self._next
            if index >= len(turns):
                if not self.scenario.repeat_last:
                    return Plan(side=False, turn=None, index=None)
                index = len(turns) - 1
            turn = turns[index]
            left = self._faults_left[index]
            if left != 0:
                if left > 0:
                    self._faults_left[index] = left - 1
                return Plan(side=False, turn=turn, index=index, fail=True)
            if schema and turn.structured is None and not (turn.tool_calls and tools):
                return Plan(side=True, turn=turn, index=None)
            self._next += 1
            return Plan(side=False, turn=turn, index=index)
