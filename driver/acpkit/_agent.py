"""One ACP agent process and the client side of its connection, on the loop thread.

Everything here runs on the :class:`~driver.acpkit._bridge.LoopThread`'s asyncio loop.
What the agent sends for a session goes to the :class:`~driver.acpkit._bridge.Inbox`
of the run attached to that session; a permission request waits there for the run's
answer. The process is started with a fresh marker in its environment
(:mod:`driver.clikit._proctable`), so closing it also ends whatever it started, even
in a session of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, cast

import acp
from acp import schema
from acp.connection import StreamDirection, StreamEvent

from driver.acpkit._bridge import Inbox
from driver.acpkit._wire import WireTransport
from driver.clikit import STDERR_KEEP, StderrKeeper
from driver.clikit._proctable import RUN_MARKER_VARIABLE, end_marked, new_marker

__all__ = [
    "PROTOCOL_VERSION",
    "AgentProcess",
    "BrokenLine",
    "ExtNotice",
    "PermissionAsk",
    "SessionUpdate",
    "StderrChunk",
    "WireLine",
]

PROTOCOL_VERSION = 1
"""The ACP version the driver speaks (the stable one)."""

CLIENT_INFO = schema.Implementation(name="agent-driver-kit", version="0.1.0")

_READ_LIMIT = 64 * 1024 * 1024
"""Longest JSON-RPC line read from an agent (a tool result with a big file in it)."""


@dataclass(frozen=True, slots=True)
class SessionUpdate:
    """A ``session/update`` notification for the attached session."""

    update: Any


@dataclass(frozen=True, slots=True)
class ExtNotice:
    """An extension notification for the attached session: its method as the SDK names it
    (without the leading underscore) and its params."""

    method: str
    params: dict[str, Any]


@dataclass(frozen=True, slots=True)
class WireLine:
    """One JSON-RPC message of the attached session, as the agent sent it (``in``) or the
    client did (``out``), serialized one per line."""

    direction: str
    line: bytes


@dataclass(frozen=True, slots=True)
class BrokenLine:
    """The line of the agent's stdout that broke the protocol (sent to every run)."""

    data: bytes


@dataclass(frozen=True, slots=True)
class StderrChunk:
    """Bytes the agent process wrote to stderr (sent only to a process's owner run)."""

    data: bytes


@dataclass(slots=True)
class PermissionAsk:
    """A ``session/request_permission`` waiting for the run's answer in ``answer``."""

    tool_call: schema.ToolCallUpdate
    options: list[schema.PermissionOption]
    answer: asyncio.Future[schema.RequestPermissionResponse] = field(repr=False)


class _Client:
    """The host side the agent calls: updates and permission requests go to the run of
    their session. It declares no file system and no terminal (see docs/acp.md) and has
    no handlers for them: the SDK answers such a call with "method not found"."""

    def __init__(self, owner: AgentProcess) -> None:
        self._owner = owner

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        inbox = self._owner.attached(session_id)
        if inbox is not None:
            inbox.put(SessionUpdate(update))

    async def request_permission(
        self,
        session_id: str,
        tool_call: schema.ToolCallUpdate,
        options: list[schema.PermissionOption],
        **kwargs: Any,
    ) -> schema.RequestPermissionResponse:
        inbox = self._owner.attached(session_id)
        if inbox is None:  # no run is listening: nobody can decide
            return schema.RequestPermissionResponse(
                outcome=schema.DeniedOutcome(outcome="cancelled")
            )
        answer: asyncio.Future[schema.RequestPermissionResponse] = (
            asyncio.get_running_loop().create_future()
        )
        inbox.put(PermissionAsk(tool_call, list(options), answer))
        return await answer

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise acp.RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        session_id = params.get("sessionId")
        inbox = self._owner.attached(session_id) if isinstance(session_id, str) else None
        if inbox is not None:
            inbox.put(ExtNotice(method, params))

    def on_connect(self, conn: Any) -> None:
        return None


class AgentProcess:
    """An agent started in ACP mode and initialized (protocol version 1).

    Create it and call :meth:`start` on the loop thread. ``owner`` is the inbox of the
    one run a one-shot process serves: it also gets the process's stderr and every
    message, whatever its session.
    """

    wire_type: ClassVar[type[WireTransport]] = WireTransport
    """How the agent's lines are read and written (the kit's tests swap in broken ones)."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: str | None,
        close_grace: float,
        owner: Inbox | None = None,
    ) -> None:
        self.argv = list(argv)
        self.marker = new_marker()
        self._env = {**env, RUN_MARKER_VARIABLE: self.marker}
        self._cwd = cwd
        self._close_grace = close_grace
        self._owner = owner
        self._routes: dict[str, Inbox] = {}
        self.sessions: dict[str, str] = {}
        """Sessions this process created or loaded (they need no ``session/load``), each
        with the ``_meta`` it was opened with as JSON text (``""`` for none)."""
        self.stderr = StderrKeeper(STDERR_KEEP)
        self.pid = 0
        self.initialized: schema.InitializeResponse | None = None
        self.returncode: int | None = None
        self._proc: asyncio.subprocess.Process | None = None
        self._conn: acp.ClientSideConnection | None = None
        self._wire: WireTransport | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._closed = False

    # -- routing (loop thread) ------------------------------------------------------------

    def route(self, session_id: str) -> Inbox | None:
        """The inbox of the run attached to ``session_id`` (the owner's as a fallback)."""
        return self._routes.get(session_id, self._owner)

    def attached(self, session_id: str) -> Inbox | None:
        """The inbox of the run attached to ``session_id``, if any (a loaded session's
        replayed history arrives before its run attaches, and goes nowhere)."""
        return self._routes.get(session_id)

    def attach(self, session_id: str, inbox: Inbox) -> None:
        """Send what arrives for ``session_id`` to ``inbox`` from now on."""
        self._routes[session_id] = inbox

    def detach(self, session_id: str) -> None:
        """Stop routing ``session_id`` (its run ended)."""
        self._routes.pop(session_id, None)

    # -- lifecycle ------------------------------------------------------------------------

    @property
    def alive(self) -> bool:
        """Started, not closed, the process has not exited nor broken the protocol."""
        return (
            self._proc is not None
            and not self._closed
            and self.returncode is None
            and not self.broken
        )

    @property
    def broken(self) -> str:
        """How the agent broke the protocol (a line that is not JSON, an answer to no
        request), which ended the connection; empty while it has not."""
        return self._wire.problem if self._wire is not None else ""

    @property
    def load_session(self) -> bool:
        """Whether the agent declared ``loadSession`` in its ``initialize`` answer."""
        caps = self.initialized.agent_capabilities if self.initialized else None
        return bool(caps is not None and caps.load_session)

    def exit_description(self) -> str:
        """How the process ended (``exit 1``, ``signal SIGKILL``), or ``running``."""
        code = self.returncode
        if code is None:
            return "running"
        if code < 0:
            with contextlib.suppress(ValueError):
                return f"signal {signal.Signals(-code).name}"
            return f"signal {-code}"
        return f"exit {code}"

    async def start(self) -> schema.InitializeResponse:
        """Start the process and initialize the connection; raises ``OSError`` when the
        program cannot be started and the SDK's error when ``initialize`` fails."""
        self._proc = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self._env,
            cwd=self._cwd,
            limit=_READ_LIMIT,
            start_new_session=True,
        )
        self.pid = self._proc.pid
        client = cast(acp.Client, _Client(self))  # the methods it leaves out are refused
        assert self._proc.stdin is not None  # both are piped
        assert self._proc.stdout is not None
        self._wire = self.wire_type(
            self._proc.stdin,
            self._proc.stdout,
            self._broken_line,
            lambda message: self._observe(StreamEvent(StreamDirection.INCOMING, message)),
        )
        self._conn = acp.connect_to_agent(client, self._wire, observers=[self._observe])
        self._tasks = [
            asyncio.ensure_future(self._pump_stderr()),
            asyncio.ensure_future(self._watch_exit()),
        ]
        capabilities = schema.ClientCapabilities(
            fs=schema.FileSystemCapabilities(read_text_file=False, write_text_file=False),
            terminal=False,
        )
        self.initialized = await self._conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=capabilities,
            client_info=CLIENT_INFO,
        )
        return self.initialized

    def _observe(self, event: StreamEvent) -> None:
        message = event.message
        params = message.get("params")
        session = params.get("sessionId") if isinstance(params, dict) else None
        inbox = self.route(session) if isinstance(session, str) else self._owner
        if inbox is None:
            return
        direction = "in" if event.direction == StreamDirection.INCOMING else "out"
        line = json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n"
        inbox.put(WireLine(direction, line.encode()))

    def _broken_line(self, line: bytes) -> None:
        runs = {id(inbox): inbox for inbox in [self._owner, *self._routes.values()] if inbox}
        for inbox in runs.values():
            inbox.put(BrokenLine(line))

    async def _pump_stderr(self) -> None:
        stream = self._proc.stderr if self._proc is not None else None
        if stream is None:
            return
        while data := await stream.read(65536):
            self.stderr.feed(data)
            if self._owner is not None:
                self._owner.put(StderrChunk(data))

    async def _watch_exit(self) -> None:
        if self._proc is not None:
            self.returncode = await self._proc.wait()

    def connection(self) -> acp.ClientSideConnection:
        """The live connection; ``ConnectionError`` once the process is gone."""
        if self.broken:
            raise ConnectionError(f"the agent broke the protocol: {self.broken}")
        if self._conn is None or not self.alive:
            raise ConnectionError(f"the agent process is not running ({self.exit_description()})")
        return self._conn

    async def wait_exit(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for the process to be reaped (after a broken
        connection, so the failure can say how it ended); not when the client ended the
        connection itself, on a broken protocol: that failure says why."""
        if self._proc is not None and self.returncode is None and not self.broken:
            with contextlib.suppress(asyncio.TimeoutError):
                self.returncode = await asyncio.wait_for(self._proc.wait(), timeout)

    async def close(self) -> None:
        """End the connection and the process, then anything still carrying its marker.

        Idempotent. Stdin is closed first (an agent exits on end of input), then after
        ``close_grace`` seconds the process and every process with its marker get
        SIGTERM, then SIGKILL.
        """
        if self._closed:
            return
        self._closed = True
        if self._conn is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._conn.close(), self._close_grace)
        proc = self._proc
        if proc is not None and proc.stdin is not None:
            with contextlib.suppress(Exception):
                proc.stdin.close()
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(proc.wait(), self._close_grace)
        # What is left of the agent, and whatever it started, carries its marker.
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(
            None, lambda: end_marked(RUN_MARKER_VARIABLE, self.marker, grace=self._close_grace)
        )
        if proc is not None:
            if proc.returncode is None:  # no process table to scan: its group, then
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(proc.wait(), self._close_grace)
            self.returncode = proc.returncode
            # A killed agent's pipes may still be open (a grandchild held them): asyncio
            # offers no public way to close a subprocess's transport but this one.
            transport = getattr(proc, "_transport", None)
            if transport is not None:
                transport.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
