"""Structured answers by each CLI's own mechanism, the minimal instance for a schema the
turn has no value for, and side requests that leave the scenario where it was."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anthropic
import jsonschema
import openai
import pytest
from google import genai
from google.genai import types

from adaptertest.emulator import (
    Emulator,
    Scenario,
    ToolCall,
    Turn,
    TurnUsage,
    minimal_instance,
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "count": {"type": "integer"}},
    "required": ["answer", "count"],
    "additionalProperties": False,
}
HI: list[anthropic.types.MessageParam] = [{"role": "user", "content": "hi"}]
STRUCTURED_TOOL: anthropic.types.ToolParam = {
    "name": "StructuredOutput",
    "description": "Return the final answer in the requested format.",
    "input_schema": SCHEMA,
}
Post = Callable[..., tuple[int, dict[str, str], bytes]]


def test_claude_code_structured_output_tool_is_answered_with_the_value() -> None:
    scenario = Scenario(turns=[Turn(structured={"answer": "OK", "count": 2})])
    with (
        Emulator(scenario) as emu,
        anthropic.Anthropic(base_url=emu.base_url, api_key="x", max_retries=0) as client,
        client.messages.stream(
            model="m", max_tokens=64, messages=HI, tools=[STRUCTURED_TOOL]
        ) as stream,
    ):
        message = stream.get_final_message()
    assert message.stop_reason == "tool_use"
    (block,) = message.content
    assert block.type == "tool_use"
    assert (block.name, block.input) == ("StructuredOutput", {"answer": "OK", "count": 2})
    assert emu.turns_served == 1


def test_codex_output_schema_is_answered_with_the_json_text() -> None:
    scenario = Scenario(turns=[Turn(text="ignored", structured={"answer": "OK", "count": 2})])
    text_format: Any = {
        "format": {"type": "json_schema", "name": "codex_output_schema", "schema": SCHEMA}
    }
    with (
        Emulator(scenario) as emu,
        openai.OpenAI(base_url=emu.base_url + "/v1", api_key="x", max_retries=0) as client,
    ):
        events = list(
            client.responses.create(model="gpt-5.5", input="hi", text=text_format, stream=True)
        )
    done = events[-1]
    assert done.type == "response.completed"
    assert json.loads(done.response.output_text) == {"answer": "OK", "count": 2}


def test_gemini_response_schema_in_a_stream_is_answered_with_the_json_text() -> None:
    scenario = Scenario(turns=[Turn(structured={"answer": "OK", "count": 2})])
    config = types.GenerateContentConfig(
        response_mime_type="application/json", response_json_schema=SCHEMA
    )
    with Emulator(scenario) as emu:
        client = genai.Client(api_key="x", http_options=types.HttpOptions(base_url=emu.base_url))
        with client:
            chunks = list(
                client.models.generate_content_stream(
                    model="gemini-2.5-flash", contents="hi", config=config
                )
            )
    text = "".join(chunk.text or "" for chunk in chunks)
    assert json.loads(text) == {"answer": "OK", "count": 2}
    assert emu.turns_served == 1


def test_a_schema_request_without_structured_gets_a_minimal_instance_and_keeps_the_turn() -> None:
    usage = TurnUsage(input_tokens=9, output_tokens=4)
    scenario = Scenario(turns=[Turn(text="OK", usage=usage), Turn(text="second")])
    with (
        Emulator(scenario) as emu,
        anthropic.Anthropic(base_url=emu.base_url, api_key="x", max_retries=0) as client,
    ):
        structured = client.messages.create(
            model="m", max_tokens=64, messages=HI, tools=[STRUCTURED_TOOL]
        )
        plain = client.messages.create(model="m", max_tokens=64, messages=HI)
    block = structured.content[0]
    assert block.type == "tool_use"
    jsonschema.validate(block.input, SCHEMA)
    assert structured.usage.input_tokens == 9  # the turn's usage, the turn itself kept
    assert plain.content[0].type == "text"
    assert plain.content[0].text == "OK"
    assert [(r.side, r.turn) for r in emu.requests] == [(True, None), (False, 0)]
    assert [r.turn for r in emu.main_requests] == [0]


def test_a_tool_turn_is_served_even_when_the_request_carries_a_schema() -> None:
    turns = [
        Turn(tool_calls=[ToolCall(name="Read", arguments={"file_path": "a.txt"})]),
        Turn(structured={"answer": "read", "count": 1}),
    ]
    with (
        Emulator(Scenario(turns=turns)) as emu,
        anthropic.Anthropic(base_url=emu.base_url, api_key="x", max_retries=0) as client,
    ):
        first = client.messages.create(
            model="m", max_tokens=64, messages=HI, tools=[STRUCTURED_TOOL]
        )
        second = client.messages.create(
            model="m", max_tokens=64, messages=HI, tools=[STRUCTURED_TOOL]
        )
    assert [b.type == "tool_use" and b.name for b in first.content] == ["Read"]
    assert [b.type == "tool_use" and b.input for b in second.content] == [
        {"answer": "read", "count": 1}
    ]


def test_a_tool_less_schema_request_leaves_a_tool_turn_to_the_next_request() -> None:
    # claude-agent-acp asks for a session title (a JSON shape, no tools) while its main
    # request, which offers tools, is on the way: the title must not take the tool turn.
    turns = [Turn(tool_calls=[ToolCall(name="Bash", arguments={"command": "ls"})])]
    title = {"format": {"type": "json_schema", "schema": SCHEMA}}
    bash: anthropic.types.ToolParam = {
        "name": "Bash",
        "description": "Run a shell command.",
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}},
    }
    with (
        Emulator(Scenario(turns=turns)) as emu,
        anthropic.Anthropic(base_url=emu.base_url, api_key="x", max_retries=0) as client,
    ):
        named = client.messages.create(
            model="m", max_tokens=64, messages=HI, extra_body={"output_config": title}
        )
        main = client.messages.create(model="m", max_tokens=64, messages=HI, tools=[bash])
    assert named.content[0].type == "text"
    jsonschema.validate(json.loads(named.content[0].text), SCHEMA)
    assert [b.type == "tool_use" and b.name for b in main.content] == ["Bash"]
    assert [(r.side, r.turn) for r in emu.requests] == [(True, None), (False, 0)]


ROUTER_SCHEMA = {
    "type": "OBJECT",
    "properties": {
        "complexity_reasoning": {"type": "STRING"},
        "complexity_score": {"type": "INTEGER", "description": "Complexity score from 1-100."},
    },
    "required": ["complexity_reasoning", "complexity_score"],
}


def test_gemini_router_is_a_side_request_answered_with_a_valid_choice(post: Post) -> None:
    scenario = Scenario(turns=[Turn(text="main answer", usage=TurnUsage(input_tokens=5))])
    with Emulator(scenario) as emu:
        status, _, data = post(
            emu.base_url + "/v1beta/models/gemini-3.5-flash-lite:generateContent",
            {
                "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
                "generationConfig": {
                    "responseMimeType": "application/json",
                    "responseJsonSchema": ROUTER_SCHEMA,
                },
            },
        )
        assert status == 200
        reply = json.loads(data)
        choice = json.loads(reply["candidates"][0]["content"]["parts"][0]["text"])
        assert choice == {"complexity_reasoning": "OK", "complexity_score": 1}
        assert reply["usageMetadata"]["promptTokenCount"] == 0  # side answers count nothing
        status, _, data = post(
            emu.base_url + "/v1beta/models/gemini-2.5-flash:generateContent",
            {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]},
        )
    assert json.loads(data)["candidates"][0]["content"]["parts"] == [{"text": "main answer"}]
    assert [(r.side, r.turn) for r in emu.requests] == [(True, None), (False, 0)]


def test_claude_code_auxiliary_call_is_side_and_an_sdk_call_is_not(post: Post) -> None:
    body = {"model": "claude-haiku", "max_tokens": 512, "messages": HI}
    with Emulator(Scenario(turns=[Turn(text="main")])) as emu:
        _, _, aux = post(
            emu.base_url + "/v1/messages?beta=true",
            body,
            {"user-agent": "claude-cli/2.1.328 (external, cli)"},
        )
        _, _, main = post(emu.base_url + "/v1/messages", body)
        _, _, counted = post(emu.base_url + "/v1/messages/count_tokens", body)
    assert json.loads(aux)["content"] == [{"type": "text", "text": "OK"}]
    assert json.loads(main)["content"] == [{"type": "text", "text": "main"}]
    assert json.loads(counted)["input_tokens"] > 0
    assert [r.side for r in emu.requests] == [True, False, True]


def test_used_up_scenario_answers_an_error_naming_repeat_last() -> None:
    with (
        Emulator(Scenario(turns=[Turn(text="only")])) as emu,
        anthropic.Anthropic(base_url=emu.base_url, api_key="x", max_retries=0) as client,
    ):
        client.messages.create(model="m", max_tokens=5, messages=HI)
        with pytest.raises(anthropic.InternalServerError, match="repeat_last"):
            client.messages.create(model="m", max_tokens=5, messages=HI)


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": "object", "properties": {"a": {"type": "string"}}}, {}),
        (SCHEMA, {"answer": "OK", "count": 1}),
        ({"type": "string", "enum": ["flash", "pro"]}, "flash"),
        ({"const": 3}, 3),
        ({"type": "array", "items": {"type": "boolean"}, "minItems": 2}, [False, False]),
        ({"type": "array", "items": {"type": "integer"}}, []),
        ({"type": "number", "minimum": 0, "maximum": 0}, 0),
        ({"type": "integer", "exclusiveMinimum": 5}, 6),
        ({"type": "number", "minimum": 2.5}, 2.5),
        ({"type": "string", "minLength": 5}, "OKOKO"),
        ({"type": "string", "maxLength": 1}, "O"),
        ({"type": ["null", "string"]}, "OK"),
        ({"type": "null"}, None),
        ({"anyOf": [{"type": "integer"}, {"type": "string"}]}, 1),
        (
            {
                "allOf": [
                    {"properties": {"a": {"type": "string"}}, "required": ["a"]},
                    {"properties": {"b": {"type": "boolean"}}, "required": ["b"]},
                ]
            },
            {"a": "OK", "b": False},
        ),
        (
            {
                "$defs": {
                    "Item": {
                        "type": "object",
                        "required": ["id"],
                        "properties": {"id": {"type": "integer"}},
                    }
                },
                "type": "object",
                "required": ["item"],
                "properties": {"item": {"$ref": "#/$defs/Item"}},
            },
            {"item": {"id": 1}},
        ),
        ({"type": "string", "default": "dflt"}, "dflt"),
        (ROUTER_SCHEMA, {"complexity_reasoning": "OK", "complexity_score": 1}),
    ],
)
def test_minimal_instance(schema: dict[str, Any], expected: object) -> None:
    value = minimal_instance(schema)
    assert value == expected
    lowered = json.loads(
        json.dumps(schema)
        .replace('"OBJECT"', '"object"')
        .replace('"STRING"', '"string"')
        .replace('"INTEGER"', '"integer"')
    )
    jsonschema.validate(value, lowered)


def test_anthropic_output_config_format_is_answered_with_the_json_text(post: Post) -> None:
    scenario = Scenario(turns=[Turn(text="ignored", structured={"answer": "OK", "count": 2})])
    with Emulator(scenario) as emu:
        _, _, data = post(
            emu.base_url + "/v1/messages",
            {
                "model": "m",
                "max_tokens": 64,
                "messages": HI,
                "output_config": {"format": {"type": "json_schema", "schema": SCHEMA}},
            },
        )
    (block,) = json.loads(data)["content"]
    assert block["type"] == "text"
    assert json.loads(block["text"]) == {"answer": "OK", "count": 2}
