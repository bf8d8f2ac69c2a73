"""The server's life: sync and async context managers, ephemeral port, recording, masking."""

from __future__ import annotations

import json
import urllib.error
from collections.abc import Callable

import anthropic
import pytest

from adaptertest.emulator import Emulator, EmulatorError, Scenario, Turn, TurnUsage


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
