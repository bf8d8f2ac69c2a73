"""Parser of ``mycli --json`` output: one JSON object per stdout line.

The format is a small made-up one that shows each kind of event a coding agent
reports; replace it with your CLI's. Dispatch is on the parsed ``type`` (never on
key order). What each line becomes:

* ``session`` (``session_id``, ``model``): an ``init`` transcript item; the id
  becomes the stream's thread id.
* ``reasoning`` (``id``, ``text``): a reasoning lifecycle plus a ``thinking`` item.
* ``tool_call`` (``id``, ``name``, ``input``): ``tool_call.start`` with the complete
  arguments plus a ``tool_call`` item.
* ``tool_result`` (``id``, ``output``, ``is_error``): ``tool_call.result`` then
  ``tool_call.end``, plus a ``tool_result`` item.
* ``message`` (``id``, ``text``): a text lifecycle plus an ``assistant`` item.
* ``result`` (``status`` ``success`` or ``error``, ``session_id``, ``text``,
  ``error``, ``usage``): the official terminal event, kept verbatim; a ``result``
  item. Its ``session_id`` is the handle ``--resume`` takes back. Its ``usage``
  already counts as :class:`driver.Usage` does (input includes cached input,
  output includes reasoning); convert your CLI's counts with
  :func:`driver.clikit.make_usage` if they differ.
* anything else is skipped; lines that are not JSON objects become ``stdout`` items.

Reading lines and the order of the failure checks come from
:class:`driver.clikit.JsonlParser`.
"""

from __future__ import annotations

from typing import Any

from driver import TerminalPayload, TranscriptItem, TranscriptKind
from driver.clikit import JsonlParser, RunOutput, dict_field, read_usage, str_field

__all__ = ["MycliStreamParser"]


class MycliStreamParser(JsonlParser):
    """Turns ``mycli --json`` lines into payloads and items as they arrive; never raises."""

    program = "mycli"
    missing_terminal = "a result line"

    def __init__(self, out: RunOutput, *, model: str = "") -> None:
        super().__init__(out, model=model)
        self._result: dict[str, Any] | None = None
        self._last_message = ""

    def needs_text(self, line: dict[str, Any]) -> bool:
        """Only the ``result`` line's text is kept (the terminal payload, verbatim)."""
        return line.get("type") == "result"

    def on_object(self, line: dict[str, Any], text: str) -> None:
        """Dispatch one line on its ``type``."""
        kind = line.get("type")
        if kind == "session":
            self._session(line)
        elif kind == "reasoning":
            thinking = str_field(line, "text")
            if thinking.strip():
                self._out.reasoning(str_field(line, "id"), thinking)
                self._out.item(TranscriptItem(kind=TranscriptKind.THINKING, text=thinking))
        elif kind == "tool_call":
            self._tool_call(line)
        elif kind == "tool_result":
            self._tool_result(line)
        elif kind == "message":
            message = str_field(line, "text")
            if message:
                self._out.text(str_field(line, "id"), message)
                self._out.item(TranscriptItem(kind=TranscriptKind.ASSISTANT, text=message))
                self._last_message = message
        elif kind == "result":
            self._result_line(line, text)

    def _session(self, line: dict[str, Any]) -> None:
        session_id = str_field(line, "session_id")
        self.model = str_field(line, "model") or self.model
        if session_id:
            self._out.thread_id = session_id
        self._out.item(
            TranscriptItem(kind=TranscriptKind.INIT, model=self.model, session_id=session_id)
        )

    def _tool_call(self, line: dict[str, Any]) -> None:
        tool_id, name = str_field(line, "id"), str_field(line, "name") or "tool"
        self._out.tool_start(tool_id, name, dict_field(line, "input"))
        self._out.item(
            TranscriptItem(
                kind=TranscriptKind.TOOL_CALL,
                tool_use_id=tool_id,
                tool_name=name,
                input=line.get("input"),
            )
        )

    def _tool_result(self, line: dict[str, Any]) -> None:
        tool_id, output = str_field(line, "id"), str_field(line, "output")
        is_error = line.get("is_error") is True
        self._out.tool_result(tool_id, {"output": output, "is_error": is_error})
        self._out.item(
            TranscriptItem(
                kind=TranscriptKind.TOOL_RESULT, tool_use_id=tool_id, text=output, is_error=is_error
            )
        )

    def _result_line(self, line: dict[str, Any], text: str) -> None:
        self._result = line
        self.terminal = TerminalPayload(event="result", raw_json=text)
        usage = line.get("usage")
        self.usage = (
            read_usage(usage, cached_key="cached_input_tokens") if isinstance(usage, dict) else None
        )
        status = str_field(line, "status")
        self._out.item(
            TranscriptItem(
                kind=TranscriptKind.RESULT,
                text=str_field(line, "text") or str_field(line, "error") or status,
                subtype=status,
                is_error=status != "success",
                session_id=str_field(line, "session_id"),
                usage=self.usage,
            )
        )

    # -- the outcome, read once the process has ended -------------------------------------

    @property
    def succeeded(self) -> bool:
        """The ``result`` line says ``status: success``."""
        return self._result is not None and self._result.get("status") == "success"

    @property
    def resume_id(self) -> str:
        """The ``session_id`` of the ``result`` line: what ``--resume`` takes back."""
        return str_field(self._result, "session_id") if self._result is not None else ""

    def output(self) -> str:
        """The final answer: the result's ``text``, else the last message (possibly empty)."""
        if self.succeeded and self._result is not None:
            return str_field(self._result, "text") or self._last_message
        return self._last_message

    def reported_failure(self, meta: dict[str, Any]) -> str:
        """An error ``result`` line: its ``error``, else its status."""
        result = self._result or {}
        meta["status"] = str_field(result, "status")
        return str_field(result, "error") or f"mycli reported {meta['status'] or 'an error'}"
