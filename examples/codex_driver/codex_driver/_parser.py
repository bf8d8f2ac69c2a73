"""Parser of ``codex exec --json`` output.

One JSON event per stdout line, dispatched on its parsed ``type``. What each
event becomes (``examples/README.md`` has the table):

* ``thread.started``: an ``init`` transcript item; its top-level ``thread_id``
  is the session a later ``codex exec resume`` continues.
* ``turn.started``: opens the ``turn`` step. ``turn.completed`` (usage) and
  ``turn.failed`` (error message) are the official terminal events, kept
  verbatim; each closes what is open and adds a ``result`` item.
* ``item.completed`` of an ``agent_message``: a text lifecycle plus an
  ``assistant`` item (the last one is the run's output, and the structured
  answer when ``--output-schema`` was given); of a ``reasoning`` summary: a
  reasoning lifecycle plus a ``thinking`` item (empty summaries are skipped);
  of an ``error`` item (a non-fatal warning): ``codex.warning`` plus a
  ``system`` item.
* Tool-like items (``command_execution``, ``file_change``, ``mcp_tool_call``,
  ``web_search`` and newer kinds): ``tool_call.start`` with complete args on
  ``item.started`` (or on ``item.completed`` for items that only complete),
  ``tool_call.result`` then ``tool_call.end`` on ``item.completed``, plus
  ``tool_call`` / ``tool_result`` items.
* A top-level ``error`` event (``Reconnecting... 2/5 (...)``, or the error a
  ``turn.failed`` follows): ``codex.error`` plus a ``system`` item; the last
  one, its reconnect count and HTTP status go into the failure message and
  metadata. Codex 0.162 to 0.164 quote a 400's JSON body as the error message
  (``{"error": {"message": ..., "type": ..., "code": "context_length_exceeded"}}``):
  the failure says it in words (its message, type and code), the payload keeps it.
* ``todo_list`` items, ``item.updated``, ``item.plan.delta`` and unknown
  events are skipped; lines that are not JSON objects become ``stdout`` items.

Usage (``turn.completed.usage``) already has :class:`driver.Usage`'s meaning,
as codex's own token accounting shows (``TokenUsage`` in
``codex-rs/protocol/src/protocol.rs``: non-cached input is ``input_tokens -
cached_input_tokens``, the blended total adds ``output_tokens`` and nothing for
reasoning; ``total_tokens = input_tokens + output_tokens`` in reported runs):
``input_tokens`` includes cache reads (``cached_input_tokens``) and cache writes
(``cache_write_input_tokens``), and ``output_tokens`` includes
``reasoning_output_tokens``. So those two are never added again; they are kept
on the ``result`` item's ``data``. Codex reports no cost.

On a resumed thread ``turn.completed.usage`` is the thread's running total, not
the run's (codex 0.169): the checkpoint keeps that total under
:data:`THREAD_USAGE_KEY` and the next run reports the difference (the total
itself goes on the ``result`` item's ``data`` as ``thread_total``). A checkpoint
without it (a new thread, an older checkpoint) reports the total as given.

Retries: codex prints ``Reconnecting... N/M (...)`` error events and then either
the answer or the final error; the count and the model API's HTTP status (parsed
from ``status NNN`` / ``last status: NNN``, or inferred as 500 from the one fixed
sentence codex prints for it) go into ``Response.metadata`` and into the failure.
A provider that cannot be reached at all gives ``Reconnecting... waiting for network
(...)`` without end: those are counted (``waiting_for_network``) and named in the
failure the driver's deadline ends the run with.

Reading lines and the order of the failure checks come from
:class:`driver.clikit.JsonlParser`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from driver import TerminalPayload, TranscriptItem, TranscriptKind
from driver.clikit import (
    JsonlParser,
    ProcessOutcome,
    RunOutput,
    dict_field,
    int_field,
    make_usage,
    str_field,
)

__all__ = ["THREAD_USAGE_KEY", "CodexStreamParser"]

_STEP = "turn"
# Item kinds that are not tool calls.
_NOT_TOOLS = frozenset({"agent_message", "reasoning", "error", "todo_list"})
# Item fields that describe the outcome, never the call.
_OUTCOME_FIELDS = frozenset(
    {"id", "type", "status", "aggregated_output", "exit_code", "result", "error"}
)
_ERROR_STATUSES = frozenset({"failed", "declined"})
# "Reconnecting... 2/5 (...)": codex retrying a dropped or refused model stream.
_RECONNECT = re.compile(r"^Reconnecting\S*\s+(\d+)/(\d+)")
# "Reconnecting... waiting for network (...)": the provider cannot be reached at all;
# codex 0.169 repeats this without end, so only the driver's deadline ends the run.
_NO_NETWORK = "Reconnecting... waiting for network"
# The HTTP status of the model API: "unexpected status 529 ...: ..." (most statuses) or
# "exceeded retry limit, last status: 429 Too Many Requests" (codex 0.169 on a 429).
_HTTP_STATUS = re.compile(r"\bstatus:? (\d{3})\b")
# What codex prints for an HTTP 500 instead of the status: one fixed sentence (codex 0.169).
_SERVER_ERROR_TEXT = "currently experiencing high demand"
_SERVER_ERROR_STATUS = 500
# Checkpoint key holding the thread's running token total: codex reports that total,
# not the run's own counts, in turn.completed of a resumed thread.
THREAD_USAGE_KEY = "codex.thread_usage"
_TOTAL_KEYS = ("input_tokens", "cached_input_tokens", "output_tokens")
# Usage keys that are parts of input_tokens / output_tokens, kept for information.
_USAGE_PARTS = ("cache_write_input_tokens", "reasoning_output_tokens")


def _described(message: str) -> str:
    """``message`` in words when it is a model API's JSON error body (``{"error":
    {"message", "type", "code"}}``, quoted as it is by codex 0.162 to 0.164): its
    message, then its type and code; any other message unchanged."""
    text = message.strip()
    if not text.startswith("{"):
        return message
    try:
        body = json.loads(text)
    except ValueError:
        return message
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict) or not str_field(error, "message"):
        return message
    kinds = ", ".join(part for part in (str_field(error, "type"), str_field(error, "code")) if part)
    said = f"model API error: {str_field(error, 'message')}"
    return f"{said} ({kinds})" if kinds else said


def _parse_total(text: str) -> tuple[int, int, int] | None:
    """``"input,cached,output"`` as kept by :meth:`CodexStreamParser.session_data`."""
    parts = text.split(",")
    if len(parts) != len(_TOTAL_KEYS) or not all(p.isdigit() for p in parts):
        return None
    return int(parts[0]), int(parts[1]), int(parts[2])


def _run_share(
    total: tuple[int, int, int], prior: tuple[int, int, int] | None
) -> tuple[int, int, int]:
    """This run's counts: the thread total minus the total the resumed checkpoint kept.

    A total below the kept one (a thread that is not the one the checkpoint saw) is
    taken whole, as is a total with nothing kept (a new thread, an older checkpoint).
    """
    if prior is None or any(now < before for now, before in zip(total, prior, strict=True)):
        return total
    return (total[0] - prior[0], total[1] - prior[1], total[2] - prior[2])


def _tool_call(item: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """Tool name and complete arguments of a tool-like item."""
    kind = str_field(item, "type") or "tool"
    if kind == "mcp_tool_call":
        arguments = item.get("arguments")
        name = f"mcp__{str_field(item, 'server')}__{str_field(item, 'tool')}"
        if isinstance(arguments, dict):
            return name, arguments
        return name, {} if arguments is None else {"arguments": arguments}
    return kind, {key: value for key, value in item.items() if key not in _OUTCOME_FIELDS}


def _tool_outcome(item: dict[str, Any]) -> tuple[str, bool, dict[str, Any]]:
    """Text, error flag and result payload of a completed tool-like item."""
    kind, status = str_field(item, "type"), str_field(item, "status")
    is_error = status in _ERROR_STATUSES
    result: dict[str, Any] = {"status": status}
    if kind == "command_execution":
        text = str_field(item, "aggregated_output")
        result.update(output=text, exit_code=item.get("exit_code"))
    elif kind == "mcp_tool_call":
        error = str_field(dict_field(item, "error"), "message")
        content = dict_field(item, "result").get("content")
        blocks = content if isinstance(content, list) else []
        texts = [str_field(b, "text") for b in blocks if isinstance(b, dict)]
        text = error or "\n".join(t for t in texts if t)
        is_error = is_error or bool(error)
        result.update(output=text, is_error=is_error)
    elif kind == "file_change":
        changes = item.get("changes")
        entries = changes if isinstance(changes, list) else []
        text = "\n".join(
            f"{str_field(c, 'kind')} {str_field(c, 'path')}".strip()
            for c in entries
            if isinstance(c, dict)
        )
    else:
        text = ""
    return text or status, is_error, result


class CodexStreamParser(JsonlParser):
    """Turns ``exec --json`` events into payloads and items as they arrive; never raises.

    ``model`` is the requested one (``exec --json`` does not report one);
    ``terminal`` is the last ``turn.completed`` / ``turn.failed`` line and
    ``usage`` comes from ``turn.completed``.
    """

    program = "codex"
    missing_terminal = "turn.completed (the turn was interrupted)"

    def __init__(self, out: RunOutput, *, model: str) -> None:
        super().__init__(out, model=model)
        self.thread_id = ""
        """The top-level ``thread_id`` of ``thread.started``."""
        self._turn_failed: str | None = None
        self._final_text = ""
        self._reconnect: tuple[int, int] | None = None
        self._http_status = 0
        self._network_waits = 0
        self._prior_total: tuple[int, int, int] | None = None
        self._thread_total: tuple[int, int, int] | None = None

    # -- sessions ---------------------------------------------------------------------------

    def resume_from(self, data: Mapping[str, str]) -> None:
        """The thread's token total when the resumed checkpoint was taken, if it kept one."""
        self._prior_total = _parse_total(data.get(THREAD_USAGE_KEY, ""))

    def session_data(self) -> dict[str, str]:
        """The thread's token total after this run, for the next run's difference."""
        if self._thread_total is None:
            return {}
        return {THREAD_USAGE_KEY: ",".join(str(n) for n in self._thread_total)}

    # -- feeding --------------------------------------------------------------------------

    def needs_text(self, line: dict[str, Any]) -> bool:
        """Only a turn's end keeps its line's text (the terminal payload, verbatim)."""
        return line.get("type") in ("turn.completed", "turn.failed")

    def on_object(self, line: dict[str, Any], text: str) -> None:
        """Dispatch one event on its ``type``."""
        kind = line.get("type")
        if kind == "thread.started":
            self._thread_started(line)
        elif kind == "turn.started":
            self._out.step_start(_STEP)
        elif kind in ("turn.completed", "turn.failed"):
            self._turn_ended(line, text)
        elif kind == "item.started":
            self._item_started(dict_field(line, "item"))
        elif kind == "item.completed":
            self._item_completed(dict_field(line, "item"))
        elif kind == "error":
            self._error_event(line)

    def _error_event(self, event: dict[str, Any]) -> None:
        message = _described(str_field(event, "message"))
        if not message:
            return
        self._error_hint = message
        data: dict[str, Any] = {}
        reconnect = _RECONNECT.match(message)
        if reconnect:
            self._reconnect = (int(reconnect[1]), int(reconnect[2]))
            data.update(reconnect_attempt=self._reconnect[0], reconnect_max=self._reconnect[1])
        elif message.startswith(_NO_NETWORK):
            self._network_waits += 1
            data["waiting_for_network"] = self._network_waits
        status = _HTTP_STATUS.search(message)
        if status:
            self._http_status = int(status[1])
        elif _SERVER_ERROR_TEXT in message:
            self._http_status = _SERVER_ERROR_STATUS
        if status or _SERVER_ERROR_TEXT in message:
            data["http_status"] = self._http_status
        fields = {key: value for key, value in event.items() if key != "type"}
        self.vendor(
            "codex.error",
            fields,
            TranscriptItem(kind=TranscriptKind.SYSTEM, subtype="error", text=message, data=data),
        )

    def _thread_started(self, event: dict[str, Any]) -> None:
        self.thread_id = str_field(event, "thread_id")
        if self.thread_id:
            self._out.thread_id = self.thread_id
        self._out.item(
            TranscriptItem(kind=TranscriptKind.INIT, model=self.model, session_id=self.thread_id)
        )

    def _turn_ended(self, event: dict[str, Any], text: str) -> None:
        self.terminal = TerminalPayload(event=str_field(event, "type"), raw_json=text)
        self._out.end_open_tools()  # a failed turn leaves a running command without result
        self._out.step_finish(_STEP)
        if event.get("type") == "turn.completed":
            self._turn_failed = None
            usage = event.get("usage")
            parts: dict[str, Any] = {}
            if isinstance(usage, dict):
                total = (
                    int_field(usage, "input_tokens"),
                    int_field(usage, "cached_input_tokens"),
                    int_field(usage, "output_tokens"),
                )
                self._thread_total = total
                own = _run_share(total, self._prior_total)
                self.usage = make_usage(
                    input_tokens=own[0], cached_input_tokens=own[1], output_tokens=own[2]
                )
                parts = {key: int_field(usage, key) for key in _USAGE_PARTS if key in usage}
                if own != total:
                    parts["thread_total"] = dict(zip(_TOTAL_KEYS, total, strict=True))
            else:
                self.usage = None
            self._out.item(
                TranscriptItem(
                    kind=TranscriptKind.RESULT,
                    subtype="turn.completed",
                    text="turn completed",
                    session_id=self.thread_id,
                    usage=self.usage,
                    data=parts,
                )
            )
            return
        message = _described(str_field(dict_field(event, "error"), "message"))
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
        if str_field(item, "type") not in _NOT_TOOLS:
            self._start_tool(item)

    def _start_tool(self, item: dict[str, Any]) -> None:
        tool_id = str_field(item, "id")
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
        kind, item_id = str_field(item, "type"), str_field(item, "id")
        if kind == "agent_message":
            text = str_field(item, "text")
            if text:
                self._out.text(item_id, text)
                self._out.item(TranscriptItem(kind=TranscriptKind.ASSISTANT, text=text))
                self._final_text = text
        elif kind == "reasoning":
            text = str_field(item, "text")
            if text.strip():
                self._out.reasoning(item_id, text)
                self._out.item(TranscriptItem(kind=TranscriptKind.THINKING, text=text))
        elif kind == "error":
            message = str_field(item, "message")
            if message:
                self.vendor(
                    "codex.warning",
                    {key: value for key, value in item.items() if key != "type"},
                    TranscriptItem(kind=TranscriptKind.SYSTEM, subtype="warning", text=message),
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

    def structured_json(self) -> str | None:
        """The final ``agent_message`` (with ``--output-schema``, the JSON answer)."""
        return self._final_text or None

    def reported_failure(self, meta: dict[str, Any]) -> str:
        """A ``turn.failed`` line: its error message, else the last ``error`` event."""
        meta["event"] = "turn.failed"
        return self._turn_failed or self._error_hint or "codex reported turn.failed"

    def run_metadata(self) -> dict[str, str]:
        """The reconnects codex made and the model API's last HTTP status, also when
        the run succeeded after them (a 429, then the answer)."""
        meta: dict[str, str] = {}
        if self._reconnect is not None:
            meta["reconnect_attempt"] = str(self._reconnect[0])
            meta["reconnect_max"] = str(self._reconnect[1])
        if self._http_status:
            meta["http_status"] = str(self._http_status)
        if self._network_waits:
            meta["waiting_for_network"] = str(self._network_waits)
        return meta

    def failure_context(self, meta: dict[str, Any], message: str, outcome: ProcessOutcome) -> str:
        """The reconnect count, the model API's HTTP status and the last error event, in
        the message (unless it already quotes them) and as metadata."""
        parts: list[str] = []
        if self._network_waits:
            meta["waiting_for_network"] = self._network_waits
            parts.append(
                f"the model provider was unreachable: {self._network_waits} wait(s) for network"
            )
        if self._reconnect is not None:
            attempt, limit = self._reconnect
            meta.update(reconnect_attempt=attempt, reconnect_max=limit)
            if not _RECONNECT.match(self._error_hint):  # else the last error below says it
                parts.append(f"reconnect {attempt} of {limit}")
        if self._http_status:
            meta["http_status"] = self._http_status
            if not _HTTP_STATUS.search(message):  # codex's text for a 500 names no status
                parts.append(f"HTTP status {self._http_status}")
        if self._error_hint:
            meta["last_error"] = self._error_hint
            if self._error_hint not in message:
                parts.append(f"last error: {self._error_hint}")
        return "; ".join(parts)
