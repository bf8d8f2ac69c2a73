"""The server's life: sync and async context managers, ephemeral port, recording, masking."""

from __future__ import annotations

import json
import urllib.error
from collections.abc import Callable, Sequence

import anthropic
import anyio.to_thread
import pytest

from adaptertest.emulator import (
    Emulator,
    EmulatorError,
    RecordedRequest,
    Scenario,
    Turn,
    TurnUsage,
)
from adaptertest.options import ModelRequest


def one_turn(text: str = "OK") -> Scenario:
    return Scenario(
        turns=[Turn(text=text, usage=TurnUsage(input_tokens=12, output_tokens=3))],
        repeat_last=True,
    )


Post = Callable[..., tuple[int, dict[str, str], bytes]]


def test_sync_context_manager_serves_and_stops(post: Post) -> None:
    with Emulator(one_turn()) as emu:
        url = emu.base_url
        assert url.startswith("http://127.0.0.1:")
        assert not url.endswith("/")
        status, _, data = post(
            url + "/v1/messages",
            {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]},
        )
        assert status == 200
        assert json.loads(data)["content"] == [{"type": "text", "text": "OK"}]
    with pytest.raises(urllib.error.URLError):
        post(url + "/v1/messages", {})


@pytest.mark.anyio
async def test_async_context_manager_on_each_backend() -> None:
    async with Emulator(one_turn("async OK")) as emu:
        client = anthropic.AsyncAnthropic(base_url=emu.base_url, api_key="x", max_retries=0)
        message = await client.messages.create(
            model="m", max_tokens=5, messages=[{"role": "user", "content": "hi"}]
        )
        await client.close()
    assert message.content[0].type == "text"
    assert message.content[0].text == "async OK"


def test_two_emulators_get_two_ports_and_a_busy_port_is_named() -> None:
    with Emulator(one_turn()) as first, Emulator(one_turn()) as second:
        assert first.port != second.port
        with pytest.raises(EmulatorError, match=f"127.0.0.1:{first.port}"):
            Emulator(one_turn(), port=first.port).start()


def test_bad_arguments_are_named() -> None:
    with pytest.raises(TypeError, match="scenario must be a Scenario"):
        Emulator({"turns": []})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="port must be"):
        Emulator(one_turn(), port=70000)
    with pytest.raises(EmulatorError, match="not started"):
        _ = Emulator(one_turn()).base_url


def test_requests_are_recorded_with_secrets_masked(post: Post) -> None:
    with Emulator(one_turn()) as emu:
        post(
            emu.base_url + "/v1beta/models/gemini-2.5-flash:generateContent?key=AIza-secret",
            {
                "systemInstruction": {"parts": [{"text": "Be brief."}]},
                "contents": [{"role": "user", "parts": [{"text": "hello"}]}],
            },
            {"x-goog-api-key": "AIza-secret", "X-Custom-Token": "t0k", "x-trace": "7"},
        )
        post(
            emu.base_url + "/v1/responses",
            {
                "model": "gpt-5.1-codex",
                "instructions": "You are codex.",
                "input": [
                    {"type": "message", "role": "developer", "content": "Sandbox: none."},
                    {
                        "type": "message",
                        "role": "user",
                        "content": [{"type": "input_text", "text": "read a.txt"}],
                    },
                    {"type": "function_call_output", "call_id": "c1", "output": "file body"},
                ],
            },
            {"authorization": "Bearer sk-secret"},
        )
        gemini, codex = emu.wait_for_requests(2, timeout=5)
    assert gemini.protocol == "gemini"
    assert gemini.query == {"key": "***"}
    assert gemini.headers["x-goog-api-key"] == "***"
    assert gemini.headers["x-custom-token"] == "***"
    assert gemini.headers["x-trace"] == "7"
    assert (gemini.system_text, gemini.user_text, gemini.model) == (
        "Be brief.",
        "hello",
        "gemini-2.5-flash",
    )
    assert codex.headers["authorization"] == "***"
    assert codex.system_text == "You are codex.\nSandbox: none."
    assert codex.user_text == "read a.txt"
    assert codex.tool_results == ["file body"]
    assert (codex.turn, codex.side, codex.stream) == (0, False, False)
    assert "secret" not in repr(emu.requests)


def test_wait_for_requests_is_bounded() -> None:
    with Emulator(one_turn()) as emu, pytest.raises(TimeoutError, match="0 request"):
        emu.wait_for_requests(1, timeout=0.05)


def test_history_is_read_per_protocol(post: Post) -> None:
    with Emulator(one_turn()) as emu:
        post(
            emu.base_url + "/v1/messages",
            {
                "model": "m",
                "max_tokens": 5,
                "system": [{"type": "text", "text": "You are Claude."}],
                "messages": [
                    {"role": "user", "content": "first"},
                    {"role": "system", "content": [{"type": "text", "text": "cwd: /w"}]},
                    {"role": "assistant", "content": [{"type": "text", "text": "FIRST"}]},
                    {
                        "role": "user",
                        "content": [
                            {"type": "tool_result", "tool_use_id": "t", "content": "42"},
                            {"type": "text", "text": "second"},
                        ],
                    },
                ],
            },
        )
        post(
            emu.base_url + "/v1/responses",
            {
                "model": "gpt-5.5",
                "input": [
                    {"role": "user", "content": "first"},
                    {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": "FIRST"}],
                    },
                    {"role": "user", "content": "second"},
                ],
            },
        )
        post(
            emu.base_url + "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
            {
                "contents": [
                    {"role": "user", "parts": [{"text": "first"}]},
                    {
                        "role": "model",
                        "parts": [{"text": "hm", "thought": True}, {"text": "FIRST"}],
                    },
                    {
                        "role": "user",
                        "parts": [
                            {"functionResponse": {"name": "f", "response": {"output": "42"}}},
                            {"text": "second"},
                        ],
                    },
                ]
            },
        )
        claude, codex, gemini = emu.wait_for_requests(3, timeout=5)
    assert (claude.system_text, claude.user_text) == ("You are Claude.\ncwd: /w", "first\nsecond")
    assert (claude.assistant_text, claude.tool_results) == ("FIRST", ["42"])
    assert (codex.user_text, codex.assistant_text) == ("first\nsecond", "FIRST")
    assert (gemini.user_text, gemini.assistant_text) == ("first\nsecond", "FIRST")
    assert gemini.tool_results == ["42"]
    assert gemini.stream


@pytest.mark.anyio
async def test_await_requests_keeps_the_loop_running(post: Post) -> None:
    async with Emulator(one_turn()) as emu:
        with pytest.raises(TimeoutError, match="0 main request"):
            await emu.await_requests(1, timeout=0.05, main=True)
        body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
        await anyio.to_thread.run_sync(lambda: post(emu.base_url + "/v1/messages", body))
        (seen,) = await emu.await_requests(1, timeout=5, main=True)
    assert seen.user_text == "hi"


def test_recorded_requests_are_model_requests_for_the_suite(post: Post) -> None:
    with Emulator(one_turn()) as emu:
        post(emu.base_url + "/v1/responses", {"model": "gpt-5.5", "input": "hi"})
        seen: Sequence[ModelRequest] = emu.requests  # typed: RecordedRequest fits
    assert [(r.system_text, r.user_text) for r in seen] == [("", "hi")]


def test_on_request_sees_each_request_and_its_errors_are_not_sent(post: Post) -> None:
    seen: list[str] = []

    def watch(request: RecordedRequest) -> None:
        seen.append(request.path)
        raise RuntimeError("a watcher's bug")

    with Emulator(one_turn(), on_request=watch) as emu:
        status, _, _ = post(emu.base_url + "/v1/responses", {"model": "gpt-5.5", "input": "hi"})
        assert repr(emu) == f"<Emulator {emu.base_url}, 1 request(s)>"
    assert status == 200
    assert seen == ["/v1/responses"]
    assert repr(emu) == "<Emulator not started, 1 request(s)>"
    with pytest.raises(TypeError, match="on_request must be callable"):
        Emulator(one_turn(), on_request="print")  # type: ignore[arg-type]


def test_use_swaps_the_scenario_without_a_restart(post: Post) -> None:
    body = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
    with Emulator(one_turn("first")) as emu:
        port = emu.port
        _, _, before = post(emu.base_url + "/v1/messages", body)
        emu.use(Scenario(turns=[Turn(text="second")]))
        _, _, after = post(emu.base_url + "/v1/messages", body)
        assert emu.port == port
        assert emu.turns_served == 1
        assert emu.scenario.turns[0].text == "second"
        assert [r.turn for r in emu.requests] == [0, 0]
        emu.clear_requests()
        assert emu.requests == []
        with pytest.raises(TypeError, match="scenario must be a Scenario"):
            emu.use({"turns": []})  # type: ignore[arg-type]
    assert json.loads(before)["content"][0]["text"] == "first"
    assert json.loads(after)["content"][0]["text"] == "second"
