"""``adaptertest emulate [--scenario FILE] [--port N]``: serve the model-API emulator.

It prints the base URL, then how to point each agent CLI at it, and serves until
Ctrl-C or SIGTERM (exit status 0), with a line on stderr for each request. A bad
argument fails at once, naming itself (exit status 2). The emulator (uvicorn) is
imported only when the command runs, so ``--help`` works on the base install.
"""

from __future__ import annotations

import argparse
import shlex
import signal
import sys
import threading
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from adaptertest.emulator import RecordedRequest

__all__ = ["DESCRIPTION", "add_arguments", "main"]

DESCRIPTION = (
    "Serve a model API on 127.0.0.1 (Anthropic Messages, OpenAI Responses, Gemini) that "
    "answers from a scenario and records every request, and print how to point Claude "
    "Code, codex and Gemini CLI at it. Serves until Ctrl-C or SIGTERM. Exit status: 0 "
    "stopped, 2 bad arguments."
)


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 0 to 65535, got {value}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--scenario",
        type=Path,
        metavar="FILE",
        help="a scenario JSON file (default: every request answered 'OK')",
    )
    parser.add_argument(
        "--port", type=_port, default=0, metavar="N", help="port on 127.0.0.1 (default: a free one)"
    )


def instructions(base_url: str) -> str:
    """What the command prints: the URL, then a shell snippet per CLI (its own home in a
    fresh temporary folder, the files it needs there, its environment and flags)."""
    from adaptertest.emulator import CLI_NAMES, cli_setup

    lines = [f"emulator listening on {base_url}", ""]
    commands = {
        "claude": ["claude", "-p", "hi", "--output-format", "stream-json", "--verbose"],
        "codex": ["codex", "exec", "--json", "--skip-git-repo-check", "-m", "gpt-5.5"],
        "gemini": ["gemini", "-p", "hi", "-o", "stream-json", "-m", "gemini-2.5-flash"],
    }
    for name in CLI_NAMES:
        setup = cli_setup(name, base_url)
        home = f'"${setup.home_variable}"'
        lines.append(f"# {name}")
        lines.append(f"export {setup.home_variable}=$(mktemp -d)")
        for path, content in setup.home_files.items():
            folder = str(Path(path).parent)
            lines.append(
                f"mkdir -p {home}/{folder} && printf '%s' {shlex.quote(content)} > {home}/{path}"
            )
        argv = commands[name]
        if name == "codex":
            argv = [*argv[:2], *setup.args, *argv[2:], "hi"]
        else:
            argv = [*argv, *setup.args]
        assignments = " ".join(f"{k}={shlex.quote(v)}" for k, v in setup.env.items())
        lines.append(f"{assignments} {shlex.join(argv)}")
        lines.append("")
    return "\n".join(lines)


def describe(request: RecordedRequest) -> str:
    """One line for a request: what it asked, and which turn it got."""
    query = "?" + "&".join(f"{k}={v}" for k, v in request.query.items()) if request.query else ""
    got = (
        "side"
        if request.side
        else ("no turn left" if request.turn is None else f"turn {request.turn}")
    )
    stream = " stream" if request.stream else ""
    return (
        f"{request.method} {request.path}{query} {request.protocol} {request.model}{stream}: {got}"
    )


def _log_request(request: RecordedRequest) -> None:
    print(f"adaptertest emulate: {describe(request)}", file=sys.stderr, flush=True)


def main(ns: argparse.Namespace) -> int:
    """Run the command with parsed arguments; returns the exit status."""
    from adaptertest.emulator import Emulator, EmulatorError, Scenario, ScenarioError

    prog = "adaptertest emulate"
    scenario = None
    if ns.scenario is not None:
        try:
            scenario = Scenario.load(ns.scenario)
        except ScenarioError as exc:
            print(f"{prog}: error: --scenario: {exc}", file=sys.stderr)
            return 2
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            emulator = Emulator(scenario, port=ns.port, on_request=_log_request).start()
        except EmulatorError as exc:
            print(f"{prog}: error: --port {ns.port}: {exc}", file=sys.stderr)
            return 2
        try:
            print(instructions(emulator.base_url), flush=True)
            stop.wait()
        finally:
            emulator.stop()
        count = len(emulator.requests)
        print(f"{prog}: stopped after {count} request(s)", file=sys.stderr)
        return 0
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
