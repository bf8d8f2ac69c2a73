"""The Claude Code driver against fake CLIs that print what a real one prints at the edges.

Each fake is a small Python script standing in for ``claude``: it prints stream-json in
Claude Code's shape, then does the awkward thing (leaves out the last newline and keeps
running, starts with a byte-order mark, leaves a process of its own session behind).
The kit must read the output as the CLI meant it and leave nothing running.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import pytest

from adaptertest import RecordingSink
from claude_driver import ClaudeConfig, ClaudeDriver
from driver import InvalidDriverConfigError, Request, TranscriptKind
from driver.clikit._proctable import is_running

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the fake CLIs are POSIX scripts")

SESSION = "5b1c0e2a-3f4d-4c6e-9a8b-7d6e5f4a3b2c"
INIT = {"type": "system", "subtype": "init", "session_id": SESSION, "model": "claude-fake-1"}
ASSISTANT = {
    "type": "assistant",
    "message": {
        "id": "msg_edge",
        "type": "message",
        "role": "assistant",
        "model": "claude-fake-1",
        "content": [{"type": "text", "text": "done"}],
    },
    "parent_tool_use_id": None,
    "session_id": SESSION,
}
RESULT = {
    "type": "result",
    "subtype": "success",
    "is_error": False,
    "result": "done",
    "session_id": SESSION,
    "usage": {"input_tokens": 3, "output_tokens": 1},
}


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    backend: str = request.param
    return backend


def _lines(*objects: Mapping[str, object]) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objects)


def fake_cli(tmp_path: Path, body: str) -> tuple[str, ...]:
    """A fake ``claude``: Python running ``body`` (which may use ``out``, stdout's buffer)."""
    script = tmp_path / "fake_claude.py"
    script.write_text("import os, subprocess, sys, time\nout = sys.stdout.buffer\n" + body)
    return (sys.executable, str(script))


def driver(command: tuple[str, ...], *, timeout: float = 60.0) -> ClaudeDriver:
    return ClaudeDriver(ClaudeConfig(command=command, timeout=timeout))


@pytest.mark.anyio
async def test_a_result_line_without_its_newline_starts_the_grace(tmp_path: Path) -> None:
    """The CLI prints its result with no newline and keeps running: the success counts,
    and the run ends after the terminal grace, not at the deadline."""
    last = json.dumps(RESULT).encode()
    body = f"out.write({_lines(INIT, ASSISTANT)!r} + {last!r})\nout.flush()\ntime.sleep(120)\n"
    started = time.monotonic()
    response = await driver(fake_cli(tmp_path, body), timeout=60).run(
        Request(prompt="hi"), RecordingSink()
    )
    elapsed = time.monotonic() - started
    assert response.failure is None, response.failure
    assert response.output == "done"
    assert response.timed_out is False
    assert response.metadata["ended_after_terminal"].startswith("still running 2 s")
    assert response.checkpoint is not None
    assert response.checkpoint.valid
    assert elapsed < 30, f"held {elapsed:.1f} s: the grace did not start at the result line"
    assert response.raw_streams is not None
    assert response.raw_streams.stdout.endswith(last)  # kept exactly as printed


@pytest.mark.anyio
async def test_a_byte_order_mark_before_the_first_line_is_not_part_of_it(
    tmp_path: Path,
) -> None:
    printed = b"\xef\xbb\xbf" + _lines(INIT, ASSISTANT, RESULT)
    body = f"out.write({printed!r})\n"
    response = await driver(fake_cli(tmp_path, body)).run(Request(prompt="hi"), RecordingSink())
    assert response.failure is None, response.failure
    kinds = [item.kind for item in response.transcript]
    assert kinds[0] == TranscriptKind.INIT, kinds
    assert TranscriptKind.STDOUT not in kinds
    assert response.model == "claude-fake-1"
    assert response.raw_streams is not None
    assert response.raw_streams.stdout == printed  # the raw stream keeps the mark


@pytest.mark.anyio
async def test_a_descendant_in_its_own_session_does_not_outlive_the_run(tmp_path: Path) -> None:
    """A tool started with setsid leaves the CLI's process group; the run ends it anyway."""
    body = (
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'],"
        " start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        f"out.write({_lines(INIT, ASSISTANT)!r})\n"
        "out.write(b'pid %d\\n' % child.pid)\n"
        f"out.write({_lines(RESULT)!r})\n"
    )
    response = await driver(fake_cli(tmp_path, body)).run(Request(prompt="hi"), RecordingSink())
    assert response.raw_streams is not None
    (line,) = [x for x in response.raw_streams.stdout.splitlines() if x.startswith(b"pid ")]
    pid = int(line.split()[1])
    try:
        assert response.failure is None, response.failure
        assert not is_running(pid), "the setsid descendant outlived the run"
    finally:
        if is_running(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.anyio
async def test_a_nul_byte_in_the_prompt_is_refused_before_anything_starts(
    tmp_path: Path,
) -> None:
    started = tmp_path / "started"
    body = f"open({str(started)!r}, 'w').close()\nout.write({_lines(INIT, RESULT)!r})\n"
    sink = RecordingSink()
    with pytest.raises(InvalidDriverConfigError) as raised:
        await driver(fake_cli(tmp_path, body)).run(Request(prompt="a\0b secret"), sink)
    assert "the prompt (character 1) contains a NUL byte" in str(raised.value)
    assert "secret" not in str(raised.value)  # the prompt itself is never quoted
    assert isinstance(raised.value, ValueError)  # what a caller catching ValueError expects
    assert sink.events == []
    assert sink.stream == []
    assert not started.exists()
