"""The emulator's HTTP server: uvicorn on its own thread and event loop.

Why uvicorn on a thread: uvicorn is a maintained ASGI server (h11 underneath) that frames
HTTP/1.1, keep-alive and chunked streams correctly; a thread with its own asyncio loop
makes the emulator behave the same whether the test around it is sync, asyncio or trio,
and keeps the CLI's traffic off the caller's loop. The listening socket is bound on
127.0.0.1 (port 0: the system picks a free one) before the thread starts, so the port is
known at once and ``start`` returns when uvicorn accepts connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from types import TracebackType
from typing import Any, Self
from urllib.parse import parse_qsl

import anyio.to_thread
import uvicorn

from adaptertest.emulator._recording import RecordedRequest, mask_headers, mask_query
from adaptertest.emulator._roles import RoleError, resolve_roles
from adaptertest.emulator._scenario import Fault, Scenario, Turn, TurnUsage
from adaptertest.emulator._schema import minimal_instance
from adaptertest.emulator._script import Plan, Script
from adaptertest.emulator.protocols import WIRES, Answer, Route, Wire
from adaptertest.options import ToolShape

__all__ = ["Emulator", "EmulatorError"]

log = logging.getLogger("adaptertest.emulator")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

START_TIMEOUT = 10.0
"""Seconds ``start`` waits for uvicorn to accept connections."""
STOP_TIMEOUT = 5.0
"""Seconds ``stop`` waits for the server thread (hung requests are released at once)."""
MAX_BODY = 64 * 1024 * 1024


class EmulatorError(RuntimeError):
    """The emulator could not start or stop in time."""


class _Server(uvicorn.Server):
    """uvicorn that says when it accepts connections and lets handlers see a stop."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = threading.Event()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.stopping: asyncio.Event | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self.loop = asyncio.get_running_loop()
        self.stopping = asyncio.Event()
        await super().startup(sockets=sockets)
        self.ready.set()

    def request_stop(self) -> None:
        self.should_exit = True
        loop, stopping = self.loop, self.stopping
        if loop is not None and stopping is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(stopping.set)


class Emulator:
    """A model API on 127.0.0.1 that answers from a :class:`Scenario`.

    Use it as a context manager (``with`` or ``async with``) or call :meth:`start` and
    :meth:`stop`. One emulator serves the three protocols at once; :attr:`base_url` is
    what each CLI is pointed at. ``on_request`` is called (on the server's thread) with
    each request as it is recorded; what it raises is logged, not sent. ``tools`` names
    the agent's tool for a role a scenario calls (``$shell``) where the tools the request
    offers do not tell (see ``adaptertest.emulator._roles``).
    """

    def __init__(
        self,
        scenario: Scenario | None = None,
        *,
        port: int = 0,
        on_request: Callable[[RecordedRequest], None] | None = None,
        tools: Mapping[str, ToolShape] | None = None,
    ) -> None:
        if scenario is None:
            scenario = Scenario.model_validate({"turns": [{"text": "OK"}], "repeat_last": True})
        if not isinstance(scenario, Scenario):
            raise TypeError(f"scenario must be a Scenario, got {type(scenario).__name__}")
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise ValueError(f"port must be an int from 0 to 65535, got {port!r}")
        if on_request is not None and not callable(on_request):
            raise TypeError(f"on_request must be callable, got {type(on_request).__name__}")
        self._port = port
        self._on_request = on_request
        self._script = Script(scenario)
        self._requests: list[RecordedRequest] = []
        self._changed = threading.Condition()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None
        self._errors: list[BaseException] = []
        self._unserved: list[str] = []
        self._tools = dict(tools or {})
        self._problems: list[str] = []

    # -- lifecycle -----------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The port it listens on (after :meth:`start`)."""
        if self._socket is None:
            raise EmulatorError("the emulator is not started")
        port: int = self._socket.getsockname()[1]
        return port

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``, no trailing slash."""
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = START_TIMEOUT) -> Self:
        """Bind, start serving, and return once connections are accepted."""
        if self._thread is not None:
            raise EmulatorError("the emulator is already started")
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(("127.0.0.1", self._port))
        except OSError as exc:
            sock.close()
            raise EmulatorError(f"cannot listen on 127.0.0.1:{self._port}: {exc}") from exc
        sock.set_inheritable(False)
        # Accepted connections inherit it: without it, a keep-alive exchange of small
        # writes waits out the client's delayed ACK (about 40 ms a request).
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        config = uvicorn.Config(
            self._app,
            log_config=None,
            log_level="critical",
            lifespan="off",
            interface="asgi3",
            access_log=False,
            timeout_graceful_shutdown=1,
            timeout_keep_alive=30,
            server_header=False,
        )
        server = _Server(config)
        thread = threading.Thread(
            target=self._serve, args=(server, sock), name="adaptertest-emulator", daemon=True
        )
        self._server, self._thread, self._socket = server, thread, sock
        thread.start()
        if not server.ready.wait(timeout) or not thread.is_alive():
            self.stop()
            detail = f": {self._errors[0]!r}" if self._errors else ""
            raise EmulatorError(f"the emulator did not start within {timeout} s{detail}")
        return self

    def _serve(self, server: _Server, sock: socket.socket) -> None:
        try:
            server.run(sockets=[sock])
        except BaseException as exc:  # noqa: BLE001 - reported by start/stop
            self._errors.append(exc)

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Stop serving: hung requests are released, the thread is joined (bounded)."""
        server, thread, sock = self._server, self._thread, self._socket
        if server is None or thread is None:
            return
        server.request_stop()
        thread.join(timeout)
        if sock is not None:
            sock.close()
        self._thread, self._socket = None, None
        if thread.is_alive():
            raise EmulatorError(f"the emulator did not stop within {timeout} s")

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        return await anyio.to_thread.run_sync(self.start)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await anyio.to_thread.run_sync(self.stop)

    # -- what it saw ---------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request answered so far, in order (a snapshot)."""
        with self._changed:
            return list(self._requests)

    @property
    def main_requests(self) -> list[RecordedRequest]:
        """The requests that were given (or failed on) a scenario turn: side ones left out."""
        return [r for r in self.requests if not r.side]

    @property
    def unserved(self) -> list[str]:
        """``METHOD /path`` of each request no protocol serves (answered 404), in order."""
        with self._changed:
            return list(self._unserved)

    @property
    def problems(self) -> list[str]:
        """Why a turn could not be served as written (a tool role the request offers no
        tool for), in order; each such request was answered with a 500."""
        with self._changed:
            return list(self._problems)

    @property
    def scenario(self) -> Scenario:
        """The scenario being served."""
        return self._script.scenario

    def use(self, scenario: Scenario) -> None:
        """Serve ``scenario`` from its first turn on, without a restart (the port and the
        recorded requests stay): one emulator for many runs, each with its own script."""
        if not isinstance(scenario, Scenario):
            raise TypeError(f"scenario must be a Scenario, got {type(scenario).__name__}")
        self._script = Script(scenario)

    def clear_requests(self) -> None:
        """Forget the requests recorded so far (and the unserved ones)."""
        with self._changed:
            self._requests.clear()
            self._unserved.clear()
            self._problems.clear()

    @property
    def turns_served(self) -> int:
        """How many turns main requests have consumed."""
        return self._script.served

    def wait_for_requests(
        self, count: int, timeout: float, *, main: bool = False
    ) -> list[RecordedRequest]:
        """Wait until ``count`` requests (``main``: main ones) are recorded; returns them.
        Raises TimeoutError naming what it saw after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout

        def seen() -> list[RecordedRequest]:
            return [r for r in self._requests if not (main and r.side)]

        with self._changed:
            while len(seen()) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    got = len(seen())
                    raise TimeoutError(
                        f"emulator: {got} {'main ' if main else ''}request(s) after "
                        f"{timeout} s, waited for {count}"
                    )
                self._changed.wait(left)
            return seen()

    async def await_requests(
        self, count: int, timeout: float, *, main: bool = False
    ) -> list[RecordedRequest]:
        """:meth:`wait_for_requests` for async code (asyncio or trio): the wait runs on a
        worker thread, so the caller's event loop keeps running."""
        return await anyio.to_thread.run_sync(
            lambda: self.wait_for_requests(count, timeout, main=main)
        )

    def _record(self, request: RecordedRequest) -> None:
        with self._changed:
            self._requests.append(request)
            self._changed.notify_all()
        if self._on_request is not None:
            try:
                self._on_request(request)
            except Exception:
                log.exception("emulator: on_request raised")

    def __repr__(self) -> str:
        where = self.base_url if self._socket is not None else "not started"
        return f"<Emulator {where}, {len(self.requests)} request(s)>"

    # -- the ASGI app --------------------------------------------------------------------

    async def _app(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        try:
            await self._handle(scope, receive, send)
        except Exception as exc:
            log.exception("emulator: the answer to %s %s failed", scope["method"], scope["path"])
            self._errors.append(exc)
            raise

    async def _handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        method: str = scope["method"]
        path: str = scope["path"]
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        raw = await _read_body(receive)
        found = _match(method, path)
        if found is None:
            with self._changed:
                self._unserved.append(f"{method} {path}")
            await _send_json(
                send, 404, {"error": {"message": f"the emulator does not serve {method} {path}"}}
            )
            return
        wire, route = found
        try:
            body = json.loads(raw) if raw else {}
        except json.JSONDecodeError as exc:
            await _send_json(send, 400, wire.error(400, f"the body is not JSON: {exc}"))
            return
        if not isinstance(body, dict):
            await _send_json(send, 400, wire.error(400, "the body is not a JSON object"))
            return
        schema = wire.schema(body)
        side = wire.side(route, body, {k.lower(): v for k, v in headers.items()})
        script = self._script
        plan = script.take(side=side, schema=schema is not None, tools=bool(body.get("tools")))
        stream = wire.stream(route, body)
        model = wire.model(route, body)
        texts = wire.texts(body)
        self._record(
            RecordedRequest(
                protocol=wire.name,
                method=method,
                path=path,
                query=mask_query(query),
                headers=mask_headers(headers),
                body=body,
                side=plan.side,
                model=model,
                stream=stream,
                system_text="\n".join(texts.system),
                user_text="\n".join(texts.user),
                assistant_text="\n".join(texts.assistant),
                tool_results=texts.tool_results,
                turn=plan.index,
            )
        )
        if plan.side and route.kind != "generate":
            await _send_json(send, 200, wire.side_answer(route, body))
            return
        if plan.side:
            # A structured request the turn has no value for reports the turn's usage; other
            # side requests (a router, a title) report none, so a CLI's totals are the
            # scenario's.
            usage = plan.turn.usage if plan.turn is not None else TurnUsage()
            answer = _answer(Turn(text="OK", usage=usage), model, schema, side=True)
        elif plan.turn is None:
            message = (
                f"emulator: the scenario's {len(script.scenario.turns)} turn(s) are used up "
                "(set repeat_last to keep serving the last one)"
            )
            await _send_json(send, 500, wire.error(500, message))
            return
        else:
            try:
                turn = resolve_roles(plan.turn, body, self._tools)
            except RoleError as exc:
                with self._changed:
                    self._problems.append(str(exc))
                await _send_json(send, 500, wire.error(500, f"emulator: {exc}"))
                return
            answer = _answer(turn, model, schema, side=False)
        await self._respond(plan, wire, answer, body, stream, receive, send)

    async def _respond(
        self,
        plan: Plan,
        wire: Wire,
        answer: Answer,
        body: Mapping[str, Any],
        stream: bool,
        receive: Receive,
        send: Send,
    ) -> None:
        fault: Fault | None = plan.turn.fault if plan.turn is not None else None
        failing = fault if plan.fail else None
        if failing is not None and failing.hang:
            await self._hang(receive)
            return
        if failing is not None and failing.status is not None:
            content = failing.body if failing.body is not None else wire.error(failing.status, None)
            await _send_json(send, failing.status, content, failing.headers)
            return
        delay = fault.event_delay if fault is not None else 0.0
        cut = failing.cut_after_events if failing is not None else None
        if not stream:
            data = json.dumps(wire.whole(answer, body)).encode()
            await _start(send, 200, "application/json", length=len(data))
            if cut is not None:  # half the body, then uvicorn drops the connection
                await send(
                    {
                        "type": "http.response.body",
                        "body": data[: len(data) // 2],
                        "more_body": True,
                    }
                )
                return
            await send({"type": "http.response.body", "body": data})
            return
        events = wire.events(answer, body)
        await _start(send, 200, "text/event-stream")
        for index, event in enumerate(events):
            if cut is not None and index >= min(cut, len(events) - 1):
                await send(
                    {
                        "type": "http.response.body",
                        "body": event[: len(event) // 2],
                        "more_body": True,
                    }
                )
                return  # uvicorn drops the connection mid-event
            if delay and index and await self._stopped_within(delay):
                return
            await send({"type": "http.response.body", "body": event, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    async def _stopped_within(self, seconds: float) -> bool:
        """Wait ``seconds`` (a slow stream); True when the emulator stops meanwhile."""
        stopping = self._server.stopping if self._server is not None else None
        if stopping is None:
            return True
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stopping.wait(), seconds)
            return True
        return False

    async def _hang(self, receive: Receive) -> None:
        """Answer nothing until the client disconnects or the emulator stops."""
        stopping = self._server.stopping if self._server is not None else None
        if stopping is None:
            return

        async def disconnected() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass

        waiters = [asyncio.ensure_future(disconnected()), asyncio.ensure_future(stopping.wait())]
        try:
            await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()


def _match(method: str, path: str) -> tuple[Wire, Route] | None:
    for wire in WIRES:
        route = wire.route(method, path)
        if route is not None:
            return wire, route
    return None


def _answer(turn: Turn, model: str, schema: dict[str, Any] | None, *, side: bool) -> Answer:
    structured = schema is not None and (side or turn.structured is not None)
    value: Any = None
    if structured:
        value = turn.structured if turn.structured is not None else minimal_instance(schema)
    return Answer(
        model=model,
        text="" if structured else turn.text,
        deltas=turn.deltas,
        thinking=turn.thinking,
        tool_calls=list(turn.tool_calls),
        usage=turn.usage,
        structured=structured,
        value=value,
    )


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            raise ValueError(f"request body over {MAX_BODY} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


async def _start(
    send: Send,
    status: int,
    content_type: str,
    *,
    length: int | None = None,
    headers: Mapping[str, str] | None = None,
) -> None:
    pairs = [(b"content-type", content_type.encode())]
    if content_type == "text/event-stream":
        pairs.append((b"cache-control", b"no-cache"))
    if length is not None:
        pairs.append((b"content-length", str(length).encode()))
    pairs.extend(
        (k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()
    )
    await send({"type": "http.response.start", "status": status, "headers": pairs})


async def _send_json(
    send: Send, status: int, content: Any, headers: Mapping[str, str] | None = None
) -> None:
    data = json.dumps(content).encode()
    await _start(send, status, "application/json", length=len(data), headers=headers)
    await send({"type": "http.response.body", "body": data})
