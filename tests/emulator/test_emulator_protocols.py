"""Each protocol spoken to by its vendor's official SDK: what the SDK parses is what the
emulator meant (text, deltas, thinking, tool calls, usage, ids)."""

from __future__ import annotations

from collections.abc import Iterator

import anthropic
import openai
import pytest
from google import genai
from google.genai import types

from adaptertest.emulator import Emulator, Scenario, ToolCall, Turn, TurnUsage

USAGE = TurnUsage(
    input_tokens=120,
    output_tokens=30,
    cached_input_tokens=80,
    cache_creation_input_tokens=10,
    reasoning_tokens=7,
)


def scenario(*turns: Turn) -> Scenario:
    return Scenario(turns=list(turns), repeat_last=True)


@pytest.fixture
def emu() -> Iterator[Emulator]:
    turns = [
        Turn(text="Hello there, friend", deltas=3, thinking="Let me think.", usage=USAGE),
        Turn(
            text="Reading it.",
            tool_calls=[ToolCall(name="Read", arguments={"path": "a.txt"}, id="call_7")],
            usage=USAGE,
        ),
    ]
    with Emulator(Scenario(turns=turns)) as emulator:
        yield emulator


@pytest.fixture
def claude(emu: Emulator) -> Iterator[anthropic.Anthropic]:
    with anthropic.Anthropic(base_url=emu.base_url, api_key="sk-ant-test", max_retries=0) as c:
        yield c


@pytest.fixture
def codex(emu: Emulator) -> Iterator[openai.OpenAI]:
    with openai.OpenAI(base_url=emu.base_url + "/v1", api_key="sk-test", max_retries=0) as c:
        yield c


@pytest.fixture(params=["v1beta", "v1"])
def gemini(emu: Emulator, request: pytest.FixtureRequest) -> Iterator[genai.Client]:
    options = types.HttpOptions(base_url=emu.base_url, api_version=request.param, timeout=10_000)
    with genai.Client(api_key="gm-test", http_options=options) as c:
        yield c


# -- Anthropic Messages ----------------------------------------------------------------


def test_anthropic_stream_text_thinking_usage_then_tool_use(claude: anthropic.Anthropic) -> None:
    client = claude
    messages: list[anthropic.types.MessageParam] = [{"role": "user", "content": "hi"}]
    with client.messages.stream(model="claude-x", max_tokens=64, messages=messages) as stream:
        deltas = list(stream.text_stream)
        message = stream.get_final_message()
    assert deltas == ["Hello t", "here, ", "friend"]
    assert [b.type for b in message.content] == ["thinking", "text"]
    assert message.content[0].type == "thinking"
    assert message.content[0].thinking == "Let me think."
    assert message.stop_reason == "end_turn"
    assert message.id.startswith("msg_")
    assert message.model == "claude-x"
    assert message.usage.input_tokens == 30  # the uncached rest: 120 - 80 read - 10 written
    assert message.usage.cache_read_input_tokens == 80
    assert message.usage.cache_creation_input_tokens == 10
    assert message.usage.output_tokens == 30
    assert message.usage.output_tokens_details is not None
    assert message.usage.output_tokens_details.thinking_tokens == 7

    second = client.messages.create(model="claude-x", max_tokens=64, messages=messages)
    assert second.stop_reason == "tool_use"
    tool = second.content[-1]
    assert tool.type == "tool_use"
    assert (tool.id, tool.name, tool.input) == ("call_7", "Read", {"path": "a.txt"})


def test_anthropic_beta_path_and_count_tokens_are_served(
    emu: Emulator, claude: anthropic.Anthropic
) -> None:
    client = claude
    counted = client.messages.count_tokens(
        model="claude-x", messages=[{"role": "user", "content": "hello"}]
    )
    assert counted.input_tokens > 0
    beta = client.beta.messages.create(  # Claude Code's path: /v1/messages?beta=true
        model="claude-x",
        max_tokens=8,
        messages=[{"role": "user", "content": "hi"}],
        extra_query={"beta": "true"},
    )
    assert beta.content[-1].type == "text"
    paths = [(r.path, r.query.get("beta"), r.side) for r in emu.requests]
    assert paths == [
        ("/v1/messages/count_tokens", None, True),
        ("/v1/messages", "true", False),
    ]


# -- OpenAI Responses ------------------------------------------------------------------


def test_openai_stream_events_reasoning_text_usage(codex: openai.OpenAI) -> None:
    client = codex
    events = list(client.responses.create(model="gpt-5.1-codex", input="hi", stream=True))
    kinds = [e.type for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))
    text = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert text == ["Hello t", "here, ", "friend"]
    done = events[-1]
    assert done.type == "response.completed"
    response = done.response
    assert response.id.startswith("resp_")
    assert [item.type for item in response.output] == ["reasoning", "message"]
    assert response.output_text == "Hello there, friend"
    assert response.usage is not None
    assert response.usage.input_tokens == 120
    assert response.usage.input_tokens_details.cached_tokens == 80
    assert response.usage.input_tokens_details.cache_write_tokens == 10
    assert response.usage.output_tokens == 30
    assert response.usage.output_tokens_details.reasoning_tokens == 7

    second = client.responses.create(model="gpt-5.1-codex", input="hi")
    calls = [item for item in second.output if item.type == "function_call"]
    assert [(c.call_id, c.name, c.arguments) for c in calls] == [
        ("call_7", "Read", '{"path":"a.txt"}')
    ]


# -- Gemini ----------------------------------------------------------------------------


def test_gemini_stream_thought_text_usage(emu: Emulator, gemini: genai.Client) -> None:
    client = gemini
    chunks = list(client.models.generate_content_stream(model="gemini-2.5-flash", contents="hi"))
    parts = [p for c in chunks for p in c.candidates[0].content.parts]  # type: ignore[index,union-attr]
    assert [(p.thought, p.text) for p in parts] == [
        (True, "Let me think."),
        (None, "Hello t"),
        (None, "here, "),
        (None, "friend"),
    ]
    usage = chunks[-1].usage_metadata
    assert usage is not None
    assert usage.prompt_token_count == 120
    assert usage.cached_content_token_count == 80
    assert usage.candidates_token_count == 23  # output less the thoughts
    assert usage.thoughts_token_count == 7
    assert usage.total_token_count == 150
    assert chunks[-1].candidates[0].finish_reason == types.FinishReason.STOP  # type: ignore[index]
    assert emu.requests[0].query == {"alt": "sse"}


def test_gemini_whole_answer_function_call(emu: Emulator, gemini: genai.Client) -> None:
    client = gemini
    client.models.generate_content(model="gemini-2.5-flash", contents="hi")
    second = client.models.generate_content(model="gemini-2.5-flash", contents="hi")
    assert second.function_calls is not None
    assert [(c.id, c.name, c.args) for c in second.function_calls] == [
        ("call_7", "Read", {"path": "a.txt"})
    ]
    assert emu.requests[-1].model == "gemini-2.5-flash"
