"""Parser of ``codex exec --json`` output.

One JSON event per stdout line, dispatched on its parsed ``type``. What each
event becomes:

* ``thread.started``: an ``init`` transcript item; its top-level ``thread_id``
  is the session a later ``codex exec resume`` continues.
* ``turn.started``: opens the ``turn`` step. ``turn.completed`` (usage) and
  ``turn.failed`` (error message) are the official terminal events, kept
  verbatim; each closes the step and adds a ``result`` item.
* ``item.completed`` of an ``agent_message``: a text lifecycle plus an
  ``assistant`` item (the last one is the run's output); of a ``reasoning``
  summary: a reasoning lifecycle plus a ``thinking`` item (empty summaries are
  skipped); of an ``error`` item (a non-fatal warning): a ``system`` item.
* Tool-like items (``command_execution``, ``file_change``, ``mcp_tool_call``,
  ``web_search`` and newer kinds): ``tool_call.start`` with complete args on
  ``item.started`` (or on ``item.completed`` for items that only complete),
  ``tool_call.result`` then ``tool_call.end`` on ``item.completed``, plus
  ``tool_call`` / ``tool_result`` items.
* A top-level ``error`` event: a ``system`` item, remembered for the failure
  message. ``todo_list`` items, ``item.updated`` and unknown events are
  skipped; lines that are not JSON objects become ``stdout`` items.
"""

from __future__ import annotations

import json
from typing import Any

from cli_plumbing import ProcessOutcome, RunOutput
from driver import FailureCode, RunFailure, TerminalPayload, TranscriptItem, TranscriptKind, Usage

__all__ = ["CodexStreamParser"]

_STEP = "turn"
_STDERR_TAIL = 2000
# Item kinds that are not tool calls.
_NOT_TOOLS = frozenset({"agent_message", "reasoning", "error", "todo_list"})
# Item fields that describe the outcome, never the call.
_OUTCOME_FIELDS = frozenset(
    {"id", "type", "status", "aggregated_output", "exit_code", "result", "error"}
)
_ERROR_STATUSES = frozenset({"failed", "declined"})


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _str(obj: dict[str, Any], key: str) -> str:
    value = obj.get(key)
    return value if isinstance(value, str) else ""


def _dict(obj: dict[str, Any], key: str) -> dict[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


def _int(obj: dict[str, Any], key: str) -> int:
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _tool_call(item: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Tool name and complete arguments of a tool-like item."""
    kind = _str(item, "type") or "tool"
    if kind == "mcp_tool_call":
        arguments = item.get("arguments")
        name = f"mcp__{_str(item, 'server')}__{_str(item, 'tool')}"
        if isinstance(arguments, dict):
            return name, arguments
        return name, {} if arguments is None else {"arguments": arguments}
    return kind, {key: value for key, value in item.items() if key not in _OUTCOME_FIELDS}


def _tool_outcome(item: dict[str, Any]) -> tuple[str, bool, dict[str, Any]]:
    """Text, error flag and result payload of a completed tool-like item."""
    kind, status = _str(item, "type"), _str(item, "status")
    is_error = status in _ERROR_STATUSES
    result: dict[str, Any] = {"status": status}
    if kind == "command_execution":
        text = _str(item, "aggregated_output")
        result.update(output=text, exit_code=item.get("exit_code"))
    elif kind == "mcp_tool_call":
        error = _str(_dict(item, "error"), "message")
        content = _dict(item, "result").get("content")
        blocks = content if isinstance(content, list) else []
        texts = [_str(b, "text") for b in blocks if isinstance(b, dict)]
        text = error or "\n".join(t for t in texts if t)
        is_error = is_error or bool(error)
        result.update(output=text, is_error=is_error)
    elif kind == "file_change":
        changes = item.get("changes")
        entries = changes if isinstance(changes, list) else []
        text = "\n".join(
            f"{_str(c, 'kind')} {_str(c, 'path')}".strip() for c in entries if isinstance(c, dict)
        )
    else:
        text = ""
    return text or status, is_error, result


class CodexStreamParser:
    """Turns stdout lines into payloads and items as they arrive; never raises.

    After the process ended, :meth:`failure`, :meth:`output` and
    :attr:`resume_id` give the run's outcome from the same pass.
    """

    def __init__(self, out: RunOutput, *, model: str) -> None:
        self._out = out
        self.model = model
        """The requested model (``exec --json`` does not report one)."""
        self.thread_id = ""
        """The top-level ``thread_id`` of ``thread.started``."""
        self.terminal: TerminalPayload | None = None
        """The last ``turn.completed`` / ``turn.failed`` line, verbatim."""
        self.usage: Usage | None = None
        """Token counts of ``turn.completed``; None when not reported."""
        self.malformed_lines = 0
        """Lines that start like JSON but do not parse: the protocol is not trustworthy."""
        self._turn_failed: str | None = None
        self._last_error = ""
        self._final_text = ""

    # -- feeding --------------------------------------------------------------------------

    def feed(self, raw: bytes) -> None:
        """Parse one stdout line (without its newline)."""
        text = raw.decode("utf-8", errors="replace").strip()
        if not text:
            return
        value: object = None
        if text.startswith("{"):
            try:
                value = json.loads(text, parse_constant=_reject_constant)
            except ValueError:
                self.malformed_lines += 1
        if not isinstance(value, dict):
            # Log output that leaked to stdout, or a corrupt line: keep it visible.
            self._out.item(TranscriptItem(kind=TranscriptKind.STDOUT, text=text))
            return
        kind = value.get("type")
        if kind == "thread.started":
            self._thread_started(value)
        elif kind == "turn.started":
            self._out.step_start(_STEP)
        elif kind in ("turn.completed", "turn.failed"):
            self._turn_ended(value, text)
        elif kind == "item.started":
            self._item_started(_dict(value, "item"))
        elif kind == "item.completed":
            self._item_completed(_dict(value, "item"))
        elif kind == "error":
            self._last_error = _str(value, "message") or self._last_error
            if self._last_error:
                self._out.item(
                    TranscriptItem(
                        kind=TranscriptKind.SYSTEM, subtype="error", text=self._last_error
                    )
                )

    def _thread_started(self, event: dict[str, Any]) -> None:
        self.thread_id = _str(event, "thread_id")
        if self.thread_id:
            self._out.thread_id = self.thread_id
        self._out.item(
            TranscriptItem(kind=TranscriptKind.INIT, model=self.model, session_id=self.thread_id)
        )

    def _turn_ended(self, event: dict[str, Any], text: str) -> None:
        self.terminal = TerminalPayload(event=_str(event, "type"), raw_json=text)
        self._out.step_finish(_STEP)
        if event.get("type") == "turn.completed":
            self._turn_failed = None
            usage = event.get("usage")
            self.usage = (
                Usage(
                    input_tokens=_int(usage, "input_tokens"),
                    output_tokens=_int(usage, "output_tokens"),
                    cached_input_tokens=_int(usage, "cached_input_tokens"),
                )
                if isinstance(usage, dict)
                else None
            )
            self._out.item(
                TranscriptItem(
                    kind=TranscriptKind.RESULT,
                    subtype="turn.completed",
                    text="turn completed",
                    session_id=self.thread_id,
                    usage=self.usage,
                )
            )
            return
        message = _str(_dict(event, "error"), "message")
        self._turn_failed = message
        self._out.item(
            TranscriptItem(
                kind=TranscriptKind.RESULT,
                subtype="turn.failed",
                text=message or "turn failed",
                is_error=True,
                session_id=self.thread_id,
                errors=[message] if message else [],
            )
        )

    def _item_started(self, item: dict[str, Any]) -> None:
        if _str(item, "type") not in _NOT_TOOLS:
            self._start_tool(item)

    def _start_tool(self, item: dict[str, Any]) -> None:
        tool_id = _str(item, "id")
        if not tool_id or self._out.tool_started(tool_id):
            return
        name, args = _tool_call(item)
        self._out.tool_start(tool_id, name, args)
        self._out.item(
            TranscriptItem(
                kind=TranscriptKind.TOOL_CALL, tool_use_id=tool_id, tool_name=name, input=args
            )
        )

    def _item_completed(self, item: dict[str, Any]) -> None:
        kind, item_id = _str(item, "type"), _str(item, "id")
        if kind == "agent_message":
            text = _str(item, "text")
            if text:
                self._out.text(item_id, text)
                self._out.item(TranscriptItem(kind=TranscriptKind.ASSISTANT, text=text))
                self._final_text = text
        elif kind == "reasoning":
            text = _str(item, "text")
            if text.strip():
                self._out.reasoning(item_id, text)
                self._out.item(TranscriptItem(kind=TranscriptKind.THINKING, text=text))
        elif kind == "error":
            message = _str(item, "message")
            if message:
                self._out.item(
                    TranscriptItem(kind=TranscriptKind.SYSTEM, subtype="warning", text=message)
                )
        elif kind not in _NOT_TOOLS and item_id:
            self._start_tool(item)  # items that only complete (older file_change)
            text, is_error, result = _tool_outcome(item)
            self._out.tool_result(item_id, result)
            self._out.item(
                TranscriptItem(
                    kind=TranscriptKind.TOOL_RESULT,
                    tool_use_id=item_id,
                    text=text,
                    is_error=is_error,
                )
            )

    # -- the outcome ------------------------------------------------------------------------

    @property
    def succeeded(self) -> bool:
        """The last terminal event was ``turn.completed``."""
        return self.terminal is not None and self.terminal.event == "turn.completed"

    @property
    def resume_id(self) -> str:
        """The thread id announced at top level by ``thread.started``."""
        return self.thread_id

    def output(self) -> str:
        """The final assistant text: the last ``agent_message`` (possibly empty)."""
        return self._final_text

    def failure(self, outcome: ProcessOutcome, timeout: float) -> RunFailure | None:
        """Classify the run; None only for ``turn.completed`` with a clean exit."""
        meta: dict[str, Any] = {"exit_code": outcome.exit_code}
        if outcome.signal:
            meta["signal"] = outcome.signal
        if outcome.timed_out:
            message = f"codex did not finish within {timeout:g} s and was stopped"
        elif self.terminal is not None and not self.succeeded:
            meta["event"] = "turn.failed"
            message = self._turn_failed or self._last_error or "codex reported turn.failed"
        elif outcome.signal:
            message = f"codex was ended by {outcome.signal}"
        elif outcome.exit_code != 0:
            message = f"codex exited with code {outcome.exit_code}"
            detail = self._last_error or _stderr_tail(outcome.stderr)
            if detail:
                message = f"{message}: {detail}"
        elif self.terminal is None:
            message = "codex exited without turn.completed (the turn was interrupted)"
        else:
            return None
        return RunFailure(code=FailureCode.AGENT_ERROR, message=message, metadata=meta)


def _stderr_tail(stderr: bytes) -> str:
    text = stderr.decode("utf-8", errors="replace").strip()
    return text if len(text) <= _STDERR_TAIL else "..." + text[-_STDERR_TAIL:]
