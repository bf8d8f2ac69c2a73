"""Per-run emission: stream payloads, run events and the transcript, with lifecycle bookkeeping.

The parser says *what* happened (a text block, a tool call, its result); this
module turns that into payloads that keep the stream rules: unique message ids,
tool calls started once and closed once, balanced steps, and exactly one
terminal payload, emitted last, after every open lifecycle was closed.
"""

from __future__ import annotations

from typing import Any, Literal

from driver import (
    EventSink,
    RunEvent,
    RunEventType,
    RunFailure,
    StreamKind,
    StreamPayload,
    TranscriptItem,
    Usage,
)

__all__ = ["BlockKind", "RunOutput"]

BlockKind = Literal["text", "reasoning"]
"""Which lifecycle a block of model output opens: ``text.*`` or ``reasoning.*``."""

_Kinds = tuple[StreamKind, StreamKind, StreamKind]  # start, content, end
_TEXT: _Kinds = (StreamKind.TEXT_START, StreamKind.TEXT_CONTENT, StreamKind.TEXT_END)
_REASONING: _Kinds = (
    StreamKind.REASONING_START,
    StreamKind.REASONING_CONTENT,
    StreamKind.REASONING_END,
)
# Namespaces of the normalized kinds (run, text, tool_call ...): no vendor kind may use one.
_RESERVED_NAMESPACES = frozenset(kind.value.split(".")[0] for kind in StreamKind)


class RunOutput:
    """Everything one run hands to its sink, plus the transcript it returns.

    One instance per ``run`` call, so concurrent runs share nothing mutable.
    Stream payloads go out only on streaming requests and never after the
    terminal; run events and transcript items go out either way, so the
    transcript mirror (RUN-04) holds. The sink gets copies, so it cannot change
    the response.
    """

    def __init__(self, sink: EventSink, *, streaming: bool, run_id: str, thread_id: str) -> None:
        self._sink = sink
        self._streaming = streaming
        self.run_id = run_id
        self.thread_id = thread_id
        """Stamped on every payload; the parser updates it once the CLI names its session."""
        self.transcript: list[TranscriptItem] = []
        self._message_ids: set[str] = set()
        self._open_blocks: dict[str, tuple[_Kinds, str]] = {}
        """Open text/reasoning blocks: message id -> (their kinds, parent tool call)."""
        self._tool_parents: dict[str, str] = {}
        self._open_tools: list[str] = []
        self._tool_results: set[str] = set()
        self._steps: list[str] = []
        self._terminal_sent = False

    # -- run events and transcript ------------------------------------------------------

    def event(self, event: RunEvent) -> None:
        """Emit an operational run event; ``seq`` and ``timestamp`` stay zero (RUN-03)."""
        self._sink.emit(event)

    def chunk(self, stream: str, data: bytes) -> None:
        """Emit raw process output exactly as read (RUN-01)."""
        self._sink.emit(RunEvent(type=RunEventType.CHUNK, stream=stream, chunk=data))

    def item(self, item: TranscriptItem) -> None:
        """Append to the transcript and mirror it as an ``item`` event (RUN-02, RUN-04)."""
        self.transcript.append(item)
        self._sink.emit(RunEvent(type=RunEventType.ITEM, item=item.model_copy(deep=True)))

    # -- stream payloads ----------------------------------------------------------------

    def stream(self, payload: StreamPayload) -> None:
        """Emit one payload stamped with run and thread ids; core owns seq and timestamp."""
        if self._streaming and not self._terminal_sent:
            stamp = {"run_id": self.run_id, "thread_id": self.thread_id}
            self._sink.emit_stream(payload.model_copy(update=stamp, deep=True))

    def vendor(self, kind: str, fields: dict[str, Any]) -> None:
        """A payload of a CLI's own kind, ``"<cli>.<what>"``, with ``fields`` in ``raw``.

        For what a host may want to see but no normalized kind carries (a retry, a
        rate-limit notice, a warning line). Hosts skip kinds they do not know and
        the stream rules do not judge them. A kind without a namespace, or in the
        namespace of a normalized kind (``run.``, ``text.`` ...), is a programming
        error and raises ``ValueError``.
        """
        namespace, dot, rest = kind.partition(".")
        if not (namespace and dot and rest) or namespace in _RESERVED_NAMESPACES:
            raise ValueError(f"{kind!r} is not a vendor kind of the form '<cli>.<what>'")
        self.stream(StreamPayload(kind=kind, raw=fields))

    def text(self, message_id: str, text: str, *, parent: str = "") -> None:
        """One complete assistant text block: start, one content delta, end."""
        self._whole_block("text", message_id, text, parent)

    def reasoning(self, message_id: str, text: str, *, parent: str = "") -> None:
        """One complete reasoning block: start, one content delta, end."""
        self._whole_block("reasoning", message_id, text, parent)

    def _whole_block(self, kind: BlockKind, wanted: str, text: str, parent: str) -> None:
        if not text:
            return  # a content payload needs a non-empty delta (EVT-04, EVT-06)
        message_id = self.block_start(kind, wanted, parent=parent)
        self.block_delta(message_id, text)
        self.block_end(message_id)

    # Token-level streaming: a block opened once, fed chunk by chunk, closed once.

    def block_start(self, kind: BlockKind, wanted: str, *, parent: str = "") -> str:
        """Open a text or reasoning block and return its message id.

        The id is ``wanted`` unless that was used before in this run (then it is
        suffixed, EVT-03). Feed it with :meth:`block_delta` and close it with
        :meth:`block_end`; the terminal closes a block left open (EVT-11).
        """
        message_id = self._fresh_message_id(wanted)
        kinds = _TEXT if kind == "text" else _REASONING
        self._open_blocks[message_id] = (kinds, parent)
        self.stream(StreamPayload(kind=kinds[0], message_id=message_id, parent_tool_call_id=parent))
        return message_id

    def block_delta(self, message_id: str, delta: str) -> None:
        """One chunk of an open block; empty chunks and closed or unknown ids are dropped."""
        block = self._open_blocks.get(message_id)
        if block is None or not delta:
            return  # EVT-04/EVT-06: content only while open, never empty
        kinds, parent = block
        self.stream(
            StreamPayload(
                kind=kinds[1], message_id=message_id, delta=delta, parent_tool_call_id=parent
            )
        )

    def block_end(self, message_id: str) -> None:
        """Close an open block; a closed or unknown id is ignored."""
        block = self._open_blocks.pop(message_id, None)
        if block is not None:
            kinds, parent = block
            self.stream(
                StreamPayload(kind=kinds[2], message_id=message_id, parent_tool_call_id=parent)
            )

    def _fresh_message_id(self, wanted: str) -> str:
        """A message id may never be reopened (EVT-03): suffix repeats with ``#2``, ``#3``."""
        wanted = wanted or "message"
        message_id, n = wanted, 1
        while message_id in self._message_ids:
            n += 1
            message_id = f"{wanted}#{n}"
        self._message_ids.add(message_id)
        return message_id

    def tool_started(self, tool_id: str) -> bool:
        """Whether ``tool_call.start`` was already emitted for ``tool_id``."""
        return tool_id in self._tool_parents

    def tool_start(
        self, tool_id: str, name: str, args: dict[str, Any], *, parent: str = ""
    ) -> None:
        """Open a tool call with its complete arguments (no ``tool_call.args`` follows).

        A repeated or empty id is ignored: a tool call is never reopened (EVT-05).
        """
        if not tool_id or tool_id in self._tool_parents:
            return
        parent = "" if parent == tool_id else parent  # a call is never its own parent (EVT-14)
        self._tool_parents[tool_id] = parent
        self._open_tools.append(tool_id)
        self.stream(
            StreamPayload(
                kind=StreamKind.TOOL_CALL_START,
                tool_call_id=tool_id,
                name=name or "tool",
                args=args,
                parent_tool_call_id=parent,
            )
        )

    def tool_result(self, tool_id: str, result: dict[str, Any]) -> None:
        """Report a started call's result once, then close it if it is still open."""
        parent = self._tool_parents.get(tool_id)
        if parent is None or tool_id in self._tool_results:
            return  # unknown call, or a second result (EVT-05, EVT-14)
        self._tool_results.add(tool_id)
        self.stream(
            StreamPayload(
                kind=StreamKind.TOOL_CALL_RESULT,
                tool_call_id=tool_id,
                result=result,
                parent_tool_call_id=parent,
            )
        )
        self._end_tool(tool_id)

    def _end_tool(self, tool_id: str) -> None:
        if tool_id in self._open_tools:
            self._open_tools.remove(tool_id)
            self.stream(
                StreamPayload(
                    kind=StreamKind.TOOL_CALL_END,
                    tool_call_id=tool_id,
                    parent_tool_call_id=self._tool_parents[tool_id],
                )
            )

    def end_open_tools(self) -> None:
        """Close every tool call still open (the CLI ended its turn without their results)."""
        for tool_id in list(self._open_tools):
            self._end_tool(tool_id)

    def step_start(self, name: str) -> None:
        """Open a step (one model request, or one turn)."""
        self._steps.append(name)
        self.stream(StreamPayload(kind=StreamKind.STEP_STARTED, name=name))

    def step_finish(self, name: str) -> None:
        """Close the newest open step called ``name``; unknown names are ignored (EVT-07)."""
        for index in range(len(self._steps) - 1, -1, -1):
            if self._steps[index] == name:
                del self._steps[index]
                self.stream(StreamPayload(kind=StreamKind.STEP_FINISHED, name=name))
                return

    # -- the terminal -------------------------------------------------------------------

    def finish(self, usage: Usage | None) -> None:
        """Close what is open and emit ``run.finished`` (once; EVT-02, EVT-11)."""
        self._terminal(StreamPayload(kind=StreamKind.RUN_FINISHED, usage=usage))

    def fail(self, failure: RunFailure) -> None:
        """Close what is open and emit ``run.error`` (once; EVT-02, EVT-11)."""
        self._terminal(StreamPayload(kind=StreamKind.RUN_ERROR, error=failure))

    def _terminal(self, payload: StreamPayload) -> None:
        if self._terminal_sent:
            return
        for message_id in list(self._open_blocks):
            self.block_end(message_id)
        self.end_open_tools()
        while self._steps:
            self.step_finish(self._steps[-1])
        self.stream(payload)
        self._terminal_sent = True
