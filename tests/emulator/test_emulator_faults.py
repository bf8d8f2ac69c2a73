"""Faults as the SDKs see them: the right error class and status, a cut stream raises, a
slow stream completes, a hang times the client out and never holds up the emulator's stop."""

from __future__ import annotations

import socket
import time

import anthropic
import openai
import pytest
from google import genai
from google.genai import errors, types

from adaptertest.emulator import Emulator, Fault, Scenario, Turn, TurnUsage

HI: list[anthropic.types.MessageParam] = [{"role": "user", "content": "hi"}]


def faulty(fault: Fault, text: str = "recovered") -> Scenario:
    return Scenario(turns=[Turn(text=text, deltas=4, fault=fault)], repeat_last=True)


def claude(emu: Emulator, *, retries: int = 0, timeout: float = 10) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=emu.base_url, api_key="x", max_retries=retries, timeout=timeout
    )


def codex(emu: Emulator) -> openai.OpenAI:
    return openai.OpenAI(base_url=emu.base_url + "/v1", api_key="x", max_retries=0)


def gemini(emu: Emulator) -> genai.Client:
    retry = types.HttpRetryOptions(attempts=1)
    options = types.HttpOptions(base_url=emu.base_url, retry_options=retry, timeout=10_000)
    return genai.Client(api_key="x", http_options=options)


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (429, anthropic.RateLimitError),
        (500, anthropic.InternalServerError),
        (503, anthropic.InternalServerError),
        (529, anthropic.OverloadedError),
        (401, anthropic.AuthenticationError),
        (400, anthropic.BadRequestError),
    ],
)
def test_anthropic_status_faults_raise_the_sdk_error(
    status: int, error: type[anthropic.APIStatusError]
) -> None:
    with Emulator(faulty(Fault(status=status, times=-1))) as emu:
        with claude(emu) as client, pytest.raises(error) as raised:
            client.messages.create(model="m", max_tokens=5, messages=HI)
        assert raised.value.status_code == status
        assert emu.requests[0].turn == 0
        assert emu.turns_served == 0  # a failed request leaves the turn in place
    if status == 400:
        assert "prompt is too long" in str(raised.value)
    if status == 529:
        assert "overloaded_error" in str(raised.value)


def test_429_with_retry_after_then_success_consumes_the_turn_once() -> None:
    fault = Fault(status=429, headers={"retry-after": "0"}, times=2)
    with Emulator(faulty(fault)) as emu:
        with claude(emu) as client, pytest.raises(anthropic.RateLimitError) as raised:
            client.messages.create(model="m", max_tokens=5, messages=HI)
        assert raised.value.response.headers["retry-after"] == "0"
        with claude(emu, retries=1) as client:
            message = client.messages.create(model="m", max_tokens=5, messages=HI)
        assert message.content[0].type == "text"
        assert message.content[0].text == "recovered"
        assert [r.turn for r in emu.requests] == [0, 0, 0]
        assert [r.headers["x-stainless-retry-count"] for r in emu.requests] == ["0", "0", "1"]
        assert emu.turns_served == 1


def test_custom_fault_body_and_headers_are_sent_as_given() -> None:
    body = {"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}}
    fault = Fault(status=429, body=body, headers={"retry-after": "7"}, times=-1)
    with (
        Emulator(faulty(fault)) as emu,
        gemini(emu) as client,
        pytest.raises(errors.ClientError) as raised,
    ):
        client.models.generate_content(model="gemini-2.5-flash", contents="hi")
    assert raised.value.code == 429
    assert raised.value.message == "quota"
    assert raised.value.response is not None


@pytest.mark.parametrize(
    ("status", "error"),
    [
        (429, openai.RateLimitError),
        (500, openai.InternalServerError),
        (401, openai.AuthenticationError),
    ],
)
def test_openai_status_faults(status: int, error: type[openai.APIStatusError]) -> None:
    with Emulator(faulty(Fault(status=status))) as emu, codex(emu) as client:
        with pytest.raises(error):
            client.responses.create(model="gpt-5.5", input="hi")
        served = client.responses.create(model="gpt-5.5", input="hi")  # times=1: once
    assert served.output_text == "recovered"


def test_gemini_server_errors() -> None:
    with (
        Emulator(faulty(Fault(status=503, times=-1))) as emu,
        gemini(emu) as client,
        pytest.raises(errors.ServerError) as raised,
    ):
        client.models.generate_content(model="gemini-2.5-flash", contents="hi")
    assert (raised.value.code, raised.value.status) == (503, "UNAVAILABLE")


def test_cut_stream_raises_in_each_sdk_after_the_events_before_the_cut() -> None:
    with (
        Emulator(faulty(Fault(cut_after_events=5, times=-1))) as emu,
        claude(emu) as anthropic_client,
        codex(emu) as openai_client,
        gemini(emu) as client,
    ):
        seen: list[str] = []
        with (
            pytest.raises(Exception, match="incomplete chunked read"),
            anthropic_client.messages.stream(model="m", max_tokens=5, messages=HI) as stream,
        ):
            seen.extend(stream.text_stream)
        assert seen == ["rec", "ov"]  # message_start, ping, block start, two deltas, cut
        kinds: list[str] = []
        events = openai_client.responses.create(model="gpt-5.5", input="hi", stream=True)
        with pytest.raises(openai.APIConnectionError):
            kinds.extend(e.type for e in events)
        assert "response.completed" not in kinds
        texts: list[str] = []
        chunks = client.models.generate_content_stream(model="gemini-2.5-flash", contents="hi")
        with pytest.raises(Exception, match="incomplete chunked read"):
            texts.extend(chunk.text or "" for chunk in chunks)
        assert 0 < len(texts) < 4
        with pytest.raises(anthropic.APIConnectionError):  # the whole body, cut in half
            anthropic_client.messages.create(model="m", max_tokens=5, messages=HI)
        assert emu.turns_served == 0


def test_slow_stream_completes_and_takes_the_delays() -> None:
    fault = Fault(event_delay=0.05)
    turn = Turn(
        text="slow", deltas=2, usage=TurnUsage(input_tokens=3, output_tokens=2), fault=fault
    )
    with Emulator(Scenario(turns=[turn])) as emu:
        started = time.monotonic()
        with (
            claude(emu) as client,
            client.messages.stream(model="m", max_tokens=5, messages=HI) as stream,
        ):
            text = "".join(stream.text_stream)
        elapsed = time.monotonic() - started
        assert text == "slow"
        assert emu.turns_served == 1  # a slow stream is no failure
    events = 8  # message_start, ping, block start, 2 deltas, block stop, delta, stop
    assert elapsed >= (events - 1) * 0.05


def test_hang_times_the_client_out_and_the_emulator_still_stops_promptly() -> None:
    emu = Emulator(faulty(Fault(hang=True, times=-1))).start()
    try:
        with claude(emu, timeout=0.3) as client, pytest.raises(anthropic.APITimeoutError):
            client.messages.create(model="m", max_tokens=5, messages=HI)
        # a client that never gives up: the stop releases it
        held = socket.create_connection(("127.0.0.1", emu.port))
        body = b'{"model":"m","max_tokens":5,"messages":[]}'
        held.sendall(
            b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
            b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
        )
        emu.wait_for_requests(2, timeout=5)
    finally:
        started = time.monotonic()
        emu.stop()
        stopped_in = time.monotonic() - started
    held.close()
    assert stopped_in < 3


@pytest.mark.anyio
async def test_hang_under_async_code_on_each_backend() -> None:
    async with Emulator(faulty(Fault(hang=True, times=-1))) as emu:
        client = anthropic.AsyncAnthropic(
            base_url=emu.base_url, api_key="x", max_retries=0, timeout=0.2
        )
        async with client:
            with pytest.raises(anthropic.APITimeoutError):
                await client.messages.create(model="m", max_tokens=5, messages=HI)
        started = time.monotonic()
    assert time.monotonic() - started < 3
