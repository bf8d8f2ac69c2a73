"""Peak memory of one CLI-driver run per byte of the CLI's output:
``python benchmarks/clikit_memory.py [--quick]``.

A fake CLI (a small Python script) prints either one JSON line carrying N bytes of text
on stdout, N bytes spread over many short JSON lines, or N bytes of stderr, then its
terminal line. The run goes through ``driver.clikit.run_turn`` with a JSONL parser that
keeps the answer text as a transcript item (as real drivers do) and a sink that keeps
nothing, so what is measured is the kit: reading the pipes, framing lines, parsing,
and the response (which keeps stdout once, by contract, and stderr capped).

The ``claude-*`` shapes are one line in Claude Code's own stream-json shape, read by the
Claude example driver's parser: an assistant message whose text block is N bytes of
source-like text (newlines and tabs escaped, as the CLI prints them), and a ``user``
line whose tool result carries the file twice (``content`` and
``tool_use_result.file.content``), as Claude Code prints a ``Read``, N bytes in all.

Each figure comes from a fresh interpreter (``--child``) tracing allocations with
``tracemalloc``: the peak of the run minus the peak of the same run with empty output,
divided by N. ``tracemalloc`` sees only Python's allocator, not what a native extension
allocates on its own (the JSON parser of ``pydantic_core`` unescapes strings in Rust
buffers), so the same difference of the child's peak resident set (``ru_maxrss``) is
shown beside it, and the verdict takes the larger of the two. Targets: stdout at most 3
bytes per byte (the response keeps one copy); stderr at most 0.5 bytes per byte at 50 MB
(it is capped: head and tail only).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from driver import Request, RunEvent, StreamPayload, TerminalPayload, TranscriptItem, TranscriptKind
from driver.clikit import JsonlParser, RunOutput, StreamParser, run_turn

SHAPES = (
    "stdout-line",
    "stdout-lines",
    "stderr",
    "claude-assistant",
    "claude-tool-result",
    "claude-assistant-emoji",
)
"""One JSON answer line of N bytes (kept as a transcript item); N bytes of 200-byte
progress lines (parsed, not kept: what a driver keeps of each line is its own cost); N
bytes of stderr; one Claude Code assistant line and one tool-result line of N bytes; the
assistant line again with one emoji at the start of its text (for information: Python
then holds the whole text at 4 bytes per character)."""
FULL_SIZES = (5_000_000, 20_000_000, 50_000_000)
QUICK_SIZES = (2_000_000, 10_000_000)
TARGETS: dict[str, float | None] = {
    "stdout-line": 3.0,
    "stdout-lines": 3.0,
    "stderr": 0.5,
    "claude-assistant": 3.0,
    "claude-tool-result": 3.0,
    "claude-assistant-emoji": None,
}
"""Bytes of peak memory per byte of output, at most (None: measured for information)."""

CLI = """
import json, sys
shape, size = sys.argv[1], int(sys.argv[2])
out = sys.stdout.buffer
session = "4c2f9a1e-7b3d-4e8a-9f21-0d5b6c7e8a90"
source = "def step(n):\\n\\treturn n + 1  # next\\n"
def text(length):
    # Source-like text whose JSON form (newlines and tabs escaped) is about length bytes.
    return source * (length // (len(json.dumps(source)) - 2))
def line(obj):
    out.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\\n")
if shape.startswith("claude-"):
    line({"type": "system", "subtype": "init", "session_id": session, "model": "m"})
if shape.startswith("claude-assistant"):
    answer = ("\\U0001F600" if shape.endswith("-emoji") else "") + text(size)
    line({"type": "assistant", "message": {"id": "msg_1", "type": "message",
        "role": "assistant", "model": "m", "content": [{"type": "text", "text": answer}],
        "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 1}},
        "parent_tool_use_id": None, "session_id": session, "uuid": "a1"})
elif shape == "claude-tool-result":
    line({"type": "assistant", "message": {"id": "msg_1", "type": "message",
        "role": "assistant", "model": "m", "content": [{"type": "tool_use",
        "id": "toolu_1", "name": "Read", "input": {"file_path": "/w/big.py"}}]},
        "parent_tool_use_id": None, "session_id": session, "uuid": "a1"})
    content = text(size // 2)
    line({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result",
        "tool_use_id": "toolu_1", "content": content}]}, "parent_tool_use_id": None,
        "session_id": session, "uuid": "u1", "tool_use_result": {"type": "text",
        "file": {"filePath": "/w/big.py", "content": content, "numLines": 1,
        "startLine": 1, "totalLines": 1}}})
if shape.startswith("claude-"):
    line({"type": "result", "subtype": "success", "is_error": False, "result": "ok",
        "session_id": session, "usage": {"input_tokens": 1, "output_tokens": 1}})
elif shape == "stdout-line":
    out.write(b'{"say": "' + b"x" * size + b'"}\\n')
elif shape == "stdout-lines":
    line = b'{"note": "' + b"y" * 188 + b'"}\\n'
    for _ in range(size // len(line)):
        out.write(line)
elif shape == "stderr":
    block = (b"warning: something happened, retrying\\n" * 1700)[:65536]
    for _ in range(size // len(block)):
        sys.stderr.buffer.write(block)
if not shape.startswith("claude-"):
    out.write(b'{"done": true}\\n')
"""


class SayParser(JsonlParser):
    """``{"say": TEXT}`` lines (kept as assistant items), ``{"note": TEXT}`` progress lines
    (parsed, not kept) and a ``{"done": true}`` terminal."""

    program = "say-cli"
    missing_terminal = "a done line"

    def __init__(self, out: RunOutput) -> None:
        super().__init__(out)
        self._last = ""

    def needs_text(self, line: dict[str, Any]) -> bool:
        return "done" in line

    def on_object(self, line: dict[str, Any], text: str) -> None:
        if "say" in line:
            self._last = str(line["say"])
            self._out.item(TranscriptItem(kind=TranscriptKind.ASSISTANT, text=self._last))
        elif line.get("done") is True:
            self.terminal = TerminalPayload(event="done", raw_json=text)

    @property
    def succeeded(self) -> bool:
        return self.terminal is not None

    @property
    def resume_id(self) -> str:
        return ""

    def output(self) -> str:
        return self._last

    def reported_failure(self, meta: dict[str, Any]) -> str:
        return "say-cli failed"


class DiscardingSink:
    """Keeps nothing: the host's cost is not the kit's."""

    def emit(self, event: RunEvent) -> None:
        del event

    def emit_stream(self, payload: StreamPayload) -> None:
        del payload


def parser_for(shape: str) -> Callable[[RunOutput], StreamParser]:
    """The parser of ``shape``'s output: the Claude example driver's for Claude's shapes."""
    if not shape.startswith("claude-"):
        return SayParser
    examples = str(Path(__file__).resolve().parents[1] / "examples" / "claude_driver")
    if examples not in sys.path:
        sys.path.insert(0, examples)
    from claude_driver import ClaudeStreamParser

    return ClaudeStreamParser


def max_rss() -> int:
    """This process's peak resident set, in bytes."""
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # Linux counts KiB


def run_peak(shape: str, size: int) -> tuple[int, int, int]:
    """(tracemalloc peak of one run, len(stdout), len(stderr) as the response holds them)."""
    parser = parser_for(shape)

    async def one() -> tuple[int, int]:
        response = await run_turn(
            Request(prompt="hi"),
            DiscardingSink(),
            driver_type="say",
            argv=lambda resume_id: [sys.executable, "-c", CLI, shape, str(size)],
            cwd="",
            model="",
            timeout=120,
            parser=parser,
        )
        assert response.failure is None, response.failure
        assert response.raw_streams is not None
        return len(response.raw_streams.stdout), len(response.raw_streams.stderr)

    tracemalloc.start()
    try:
        kept_out, kept_err = anyio.run(one)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, kept_out, kept_err


@dataclass(frozen=True)
class Row:
    shape: str
    size: int
    per_byte: float
    kept_stdout: int
    kept_stderr: int
    rss_per_byte: float = 0.0

    @property
    def ok(self) -> bool | None:
        """Whether both figures meet the target; None when the shape has none."""
        target = TARGETS[self.shape]
        return None if target is None else max(self.per_byte, self.rss_per_byte) <= target


def child(shape: str, size: int) -> dict[str, int]:
    """Run in a fresh interpreter: this process's allocations are not the child's."""
    done = subprocess.run(
        [sys.executable, __file__, "--child", shape, str(size)],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    result: dict[str, int] = json.loads(done.stdout)
    return result


def measure(shape: str, size: int) -> Row:
    """Peak bytes per byte of output for ``shape`` at ``size``, over the empty run."""
    base = child(shape, 0)
    got = child(shape, size)
    return Row(
        shape,
        size,
        (got["peak"] - base["peak"]) / size,
        got["stdout"],
        got["stderr"],
        (got["rss"] - base["rss"]) / size,
    )


def render(rows: Sequence[Row]) -> str:
    lines = [
        f"{'output':<24}{'size':>10}{'peak/byte':>11}{'rss/byte':>10}{'target':>9}  result  kept"
    ]
    for row in rows:
        kept = f"stdout {row.kept_stdout:,} B, stderr {row.kept_stderr:,} B"
        target = TARGETS[row.shape]
        verdict = {True: "PASS", False: "MISS", None: "info"}[row.ok]
        lines.append(
            f"{row.shape:<24}{row.size / 1e6:>8.0f}MB{row.per_byte:>11.2f}{row.rss_per_byte:>10.2f}"
            f"{'-' if target is None else f'{target:.1f}':>9}  {verdict:<6}  {kept}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--child", nargs=2, metavar=("SHAPE", "SIZE"), help=argparse.SUPPRESS)
    ns = parser.parse_args(argv)
    if ns.child:
        peak, kept_out, kept_err = run_peak(ns.child[0], int(ns.child[1]))
        report = {"peak": peak, "stdout": kept_out, "stderr": kept_err, "rss": max_rss()}
        print(json.dumps(report))
        return 0
    sizes = QUICK_SIZES if ns.quick else FULL_SIZES
    rows = [measure(shape, size) for shape in SHAPES for size in sizes]
    print("peak memory of one CLI-driver run per byte of output (fresh process each)")
    print(render(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
