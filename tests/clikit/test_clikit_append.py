"""The appended system prompt in ``driver.clikit``: the refusals a ``CLIDriver`` gets for
free (upstream's order, the inline limit, conflicting extra args), the fingerprint in
the checkpoint's guard data, the resume guard, and ``[redacted]`` in the invocation."""

from __future__ import annotations

import contextlib
import json
import sys
from typing import ClassVar

import pytest

from adaptertest import RecordingSink
from driver import (
    APPEND_INLINE_LIMIT,
    REDACTED_APPEND,
    SESSION_PARAM_APPEND_SYSTEM_PROMPT_FINGERPRINT,
    Descriptor,
    Request,
    RunEventType,
    RunFailure,
    SessionContext,
    SessionState,
    SystemPromptCapability,
    SystemPromptUnsupportedError,
    TerminalPayload,
    Usage,
    append_system_prompt_fingerprint,
)
from driver.clikit import (
    CLIConfig,
    CLIDriver,
    ProcessOutcome,
    RunOutput,
    SessionMismatchError,
    StreamParser,
)

TEXT = "Line one of the rules.\nZweite Zeile: grüße, e\u0301, \ufb01."


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class _Parser:
    """Reads ``done SESSION`` as a successful end; everything else is ignored."""

    def __init__(self, out: RunOutput) -> None:
        self.terminal: TerminalPayload | None = None
        self.usage: Usage | None = None
        self.malformed_lines = 0
        self.resume_id = ""
        self.model = ""

    def feed(self, raw: bytes) -> None:
        word, _, rest = raw.decode().partition(" ")
        if word == "done":
            self.terminal = TerminalPayload(event="done", raw_json=json.dumps({"s": rest}))
            self.resume_id = rest

    def output(self) -> str:
        return "ok"

    def failure(self, outcome: ProcessOutcome, timeout: float) -> RunFailure | None:
        return None


class AppendingDriver(CLIDriver[CLIConfig]):
    """Passes the append inline as ``--append TEXT``; its CLI prints ``done s-1``."""

    driver_type = "toy"
    fingerprint_domain = "tests/toy-append/v1"
    install_hint = "nothing to install"
    system_prompt_flags: ClassVar[tuple[str, ...]] = ("--system",)
    system_prompt_inline = True
    declared = True
    launched: ClassVar[list[list[str]]] = []

    def __init__(self, config: CLIConfig | None = None) -> None:
        super().__init__(CLIConfig, config or CLIConfig(command=(sys.executable,)))

    def descriptor(self) -> Descriptor:
        return Descriptor(
            type=self.driver_type,
            display_name="Toy",
            system_prompt=SystemPromptCapability(append=self.declared),
        )

    def system_prompt_args(self, text: str, cleanup: contextlib.ExitStack) -> list[str]:
        return ["--append", text]

    def command_line(
        self, config: CLIConfig, prompt: str, *, model: str, resume_id: str
    ) -> list[str]:
        argv = [*config.command, "-c", "print('done s-1')", *config.extra_args, prompt]
        self.launched.append(argv)
        return argv

    def stream_parser(self, out: RunOutput, *, model: str) -> StreamParser:
        return _Parser(out)


class Undeclared(AppendingDriver):
    declared = False


class InFile(AppendingDriver):
    system_prompt_inline = False


async def _refusal(driver: AppendingDriver, request: Request) -> SystemPromptUnsupportedError:
    AppendingDriver.launched.clear()
    sink = RecordingSink()
    with pytest.raises(SystemPromptUnsupportedError) as refused:
        await driver.run(request, sink)
    assert AppendingDriver.launched == []
    assert sink.events == []
    assert sink.stream == []
    return refused.value


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("driver", "text", "reason"),
    [
        (AppendingDriver, "a\udcffb", "invalid_utf8"),
        (AppendingDriver, "a\x00b", "nul_byte"),
        (AppendingDriver, "\x00\udcff", "invalid_utf8"),  # UTF-8 is checked first
        (Undeclared, "a\x00b", "nul_byte"),  # NUL before the declaration
        (Undeclared, " ", "unsupported_driver"),  # whitespace is an append
        (Undeclared, "x" * (APPEND_INLINE_LIMIT + 1), "unsupported_driver"),
        (AppendingDriver, "x" * (APPEND_INLINE_LIMIT + 1), "inline_limit"),
        (AppendingDriver, "é" * (APPEND_INLINE_LIMIT // 2) + "x", "inline_limit"),
    ],
    ids=[
        "surrogate",
        "nul",
        "utf8-before-nul",
        "nul-before-unsupported",
        "whitespace",
        "unsupported-before-limit",
        "over-limit",
        "over-limit-in-bytes",
    ],
)
async def test_refusals_follow_upstreams_order(
    anyio_backend: str, driver: type[AppendingDriver], text: str, reason: str
) -> None:
    error = await _refusal(driver(), Request(prompt="hi", append_system_prompt=text))
    assert (error.driver, error.reason) == ("toy", reason)


@pytest.mark.anyio
async def test_the_limit_is_inclusive_and_only_for_inline_drivers(anyio_backend: str) -> None:
    at_limit = "é" * (APPEND_INLINE_LIMIT // 2)
    AppendingDriver.launched.clear()
    response = await AppendingDriver().run(
        Request(prompt="hi", append_system_prompt=at_limit), RecordingSink()
    )
    assert response.failure is None
    assert AppendingDriver.launched[-1][-1] == "hi"
    over = "x" * (APPEND_INLINE_LIMIT + 1)
    response = await InFile().run(Request(prompt="hi", append_system_prompt=over), RecordingSink())
    assert response.failure is None


@pytest.mark.anyio
async def test_a_conflict_names_the_flag_and_never_its_value(anyio_backend: str) -> None:
    config = CLIConfig(command=(sys.executable,), extra_args=("--system=You are a cat.",))
    error = await _refusal(AppendingDriver(config), Request(prompt="hi", append_system_prompt=TEXT))
    assert (error.reason, error.argument) == ("conflicting_extra_args", "--system")
    assert "cat" not in str(error)
    assert "argument=--system" in str(error)
    # Without an append the flag is the config's business.
    response = await AppendingDriver(config).run(Request(prompt="hi"), RecordingSink())
    assert response.failure is None


@pytest.mark.anyio
async def test_the_append_fingerprint_guards_the_session(anyio_backend: str) -> None:
    sink = RecordingSink()
    response = await AppendingDriver().run(Request(prompt="hi", append_system_prompt=TEXT), sink)
    assert response.checkpoint is not None
    assert response.checkpoint.state is not None
    data = response.checkpoint.state.data
    digest = append_system_prompt_fingerprint(TEXT)
    assert data[SESSION_PARAM_APPEND_SYSTEM_PROMPT_FINGERPRINT] == digest
    assert len(digest) == 64
    [invocation] = [e for e in sink.events if e.type == RunEventType.INVOCATION]
    assert invocation.metadata["append_system_prompt"] == REDACTED_APPEND
    for event in sink.events:
        assert "Zweite" not in event.model_dump_json()

    state = response.checkpoint.state

    async def resume(text: str, stored: SessionState) -> None:
        request = Request(
            prompt="again", append_system_prompt=text, session=SessionContext(state=stored)
        )
        await AppendingDriver().run(request, RecordingSink())

    await resume(TEXT, state)  # the same append resumes
    plain = await AppendingDriver().run(Request(prompt="hi"), RecordingSink())
    assert plain.checkpoint is not None
    assert plain.checkpoint.state is not None
    assert SESSION_PARAM_APPEND_SYSTEM_PROMPT_FINGERPRINT not in plain.checkpoint.state.data
    await resume("", plain.checkpoint.state)  # no append, none stored: resumes
    for text, stored in ((TEXT + " ", state), ("", state), (TEXT, plain.checkpoint.state)):
        AppendingDriver.launched.clear()
        sink = RecordingSink()
        request = Request(
            prompt="again", append_system_prompt=text, session=SessionContext(state=stored)
        )
        with pytest.raises(SessionMismatchError, match="appended system prompt"):
            await AppendingDriver().run(request, sink)
        assert AppendingDriver.launched == []
        assert sink.events == []
