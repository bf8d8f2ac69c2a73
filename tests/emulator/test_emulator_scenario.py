"""Scenarios are data: loaded from JSON, and bad input is named down to the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adaptertest.emulator import Fault, Scenario, ScenarioError, ToolCall, Turn, TurnUsage


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_load_reads_every_field(tmp_path: Path) -> None:
    data = {
        "repeat_last": True,
        "turns": [
            {
                "text": "Reading it.",
                "deltas": 2,
                "thinking": "The file first.",
                "tool_calls": [{"name": "Read", "arguments": {"file_path": "a.txt"}, "id": "t1"}],
                "usage": {
                    "input_tokens": 100,
                    "output_tokens": 20,
                    "cached_input_tokens": 60,
                    "cache_creation_input_tokens": 10,
                    "reasoning_tokens": 5,
                },
            },
            {
                "structured": {"answer": "OK"},
                "fault": {"status": 429, "times": 2, "headers": {"retry-after": "1"}},
            },
            {"text": "slow", "fault": {"event_delay": 0.01}},
        ],
    }
    scenario = Scenario.load(write(tmp_path, data))
    assert scenario.repeat_last
    first, second, third = scenario.turns
    assert first.tool_calls == [ToolCall(name="Read", arguments={"file_path": "a.txt"}, id="t1")]
    assert first.usage == TurnUsage(
        input_tokens=100,
        output_tokens=20,
        cached_input_tokens=60,
        cache_creation_input_tokens=10,
        reasoning_tokens=5,
    )
    assert second.fault == Fault(status=429, times=2, headers={"retry-after": "1"})
    assert second.structured == {"answer": "OK"}
    assert third.fault is not None
    assert not third.fault.fails
    assert Scenario.model_validate(scenario.model_dump()) == scenario


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"turns": []}, "turns: List should have at least 1 item"),
        ({"turns": [{"txt": "OK"}]}, "turns[0].txt: Extra inputs are not permitted"),
        ({"turns": [{"deltas": 0}]}, "turns[0].deltas: Input should be greater than or equal to 1"),
        ({"turns": [{"usage": {"input_tokens": -1}}]}, "turns[0].usage.input_tokens"),
        (
            {"turns": [{"usage": {"input_tokens": 5, "cached_input_tokens": 6}}]},
            "turns[0].usage: Value error, cached_input_tokens + cache_creation_input_tokens",
        ),
        (
            {"turns": [{"usage": {"output_tokens": 1, "reasoning_tokens": 2}}]},
            "reasoning_tokens must not exceed output_tokens",
        ),
        (
            {"turns": [{"tool_calls": [{"arguments": {}}]}]},
            "turns[0].tool_calls[0].name: Field required",
        ),
        ({"turns": [{}, {"fault": {"status": 200}}]}, "turns[1].fault.status"),
        ({"turns": [{"fault": {}}]}, "a fault needs status, cut_after_events, hang"),
        ({"turns": [{"fault": {"hang": True, "status": 500}}]}, "a fault is one of"),
        ({"turns": [{"fault": {"hang": True, "times": 0}}]}, "times must be positive"),
        ({"turns": [{"fault": {"hang": True, "times": -2}}]}, "turns[0].fault.times"),
        ({"turns": [{}], "repeat": True}, "repeat: Extra inputs are not permitted"),
        ([], "(top level): Input should be a valid dictionary"),
    ],
)
def test_bad_scenarios_name_the_field(tmp_path: Path, data: object, message: str) -> None:
    path = write(tmp_path, data)
    with pytest.raises(ScenarioError) as raised:
        Scenario.load(path)
    assert message in str(raised.value)
    assert str(path) in str(raised.value)


def test_unreadable_and_non_json_files_are_named(tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    with pytest.raises(ScenarioError, match=r"missing\.json: cannot read it"):
        Scenario.load(missing)
    bad = tmp_path / "bad.json"
    bad.write_text('{"turns": [', encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"bad\.json: not JSON \(line 1, column 12"):
        Scenario.load(bad)


def test_turn_defaults() -> None:
    turn = Turn()
    assert (turn.text, turn.deltas, turn.thinking, turn.structured, turn.fault) == (
        "",
        1,
        None,
        None,
        None,
    )
    assert turn.usage == TurnUsage()
    assert turn.tool_calls == []
