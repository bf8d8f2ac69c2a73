"""Parser of ``claude -p --output-format stream-json --verbose`` output.

One JSON object per stdout line. Dispatch is on the parsed ``type`` (key order
is not stable). What each line becomes:

* ``system``/``init``: an ``init`` transcript item (model, session id);
  ``system``/``api_retry``: a ``system`` item; other subtypes are skipped.
* ``assistant``: one line per content block, all blocks of one model request
  sharing ``message.id``. A new top-level ``message.id`` opens a step. ``text``
  becomes a text lifecycle plus an ``assistant`` item, ``thinking`` a reasoning
  lifecycle plus a ``thinking`` item (signature-only thinking is skipped),
  ``tool_use`` a ``tool_call.start`` with the complete input plus a
  ``tool_call`` item. Subagent lines carry ``parent_tool_use_id``, kept as
  ``parent_tool_call_id``. A synthetic API-error line is remembered for the
  failure message, not shown as model output.
* ``user``: its ``tool_result`` blocks become ``tool_call.result`` (then
  ``tool_call.end``) plus a ``tool_result`` item.
* ``result``: the official terminal event, kept verbatim; a ``result`` item.
* anything else (``stream_event``, ``rate_limit_event``, control frames ...) is
  skipped; lines that are not JSON objects become ``stdout`` items.

Reading lines and the order of the failure checks come from
:class:`driver.clikit.JsonlParser`.
"""

from __future__ import annotations

from typing import Any

from driver import TerminalPayload, TranscriptItem, TranscriptKind
from driver.clikit import (
    JsonlParser,
    RunOutput,
    dict_field,
    int_field,
    list_field,
    read_usage,
    str_field,
)

__all__ = ["ClaudeStreamParser"]

_SYNTHETIC_MODEL = "<synthetic>"


def _tool_result_text(content: object) -> str:
    """``tool_result.content`` is a string or a list of blocks; keep the text blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            block["text"]
            for block in content
            if isinstance(block, dict) and isinstance(block.get("text"), str)
        ]
        return "\n".join(parts)
    return ""


class ClaudeStreamParser(JsonlParser):
    """Turns stream-json lines into payloads and items as they arrive; never raises.

    ``model`` is the one named by ``system/init``; ``terminal`` and ``usage``
    come from the ``result`` line.
    """

    program = "claude"
    missing_terminal = "a result line"

    def __init__(self, out: RunOutput) -> None:
        super().__init__(out)
        self._result: dict[str, Any] | None = None
        self._step = ""
        self._final_message = ""
        self._final_parts: list[str] = []

    # -- feeding --------------------------------------------------------------------------

    def on_object(self, line: dict[str, Any], text: str) -> None:
        """Dispatch one line on its ``type``."""
        kind = line.get("type")
        if kind == "system":
            self._system(line)
        elif kind == "assistant":
            self._assistant(line)
        elif kind == "user":
            self._user(line)
        elif kind == "result":
            self._result_line(line, text)

    def _system(self, line: dict[str, Any]) -> None:
        subtype = str_field(line, "subtype")
        if subtype == "init":
            session_id = str_field(line, "session_id")
            self.model = str_field(line, "model") or self.model
            if session_id:
                self._out.thread_id = session_id
            self._out.item(
                TranscriptItem(kind=TranscriptKind.INIT, model=self.model, session_id=session_id)
            )
        elif subtype == "api_retry":
            attempt, limit = int_field(line, "attempt"), int_field(line, "max_retries")
            status = line.get("error_status")
            self._out.item(
                TranscriptItem(
                    kind=TranscriptKind.SYSTEM,
                    subtype=subtype,
                    text=f"API request failed (status {status}); retry {attempt} of {limit}",
                )
            )

    def _assistant(self, line: dict[str, Any]) -> None:
        message = dict_field(line, "message")
        parent = str_field(line, "parent_tool_use_id")
        blocks = [block for block in list_field(message, "content") if isinstance(block, dict)]
        synthetic = str_field(message, "model") == _SYNTHETIC_MODEL
        if synthetic or line.get("is_api_error_message") is True:
            texts = [str_field(block, "text") for block in blocks if block.get("type") == "text"]
            self._error_hint = "\n".join(t for t in texts if t) or self._error_hint
            return
        message_id = str_field(message, "id") or str_field(line, "uuid")
        if not parent and message_id != self._step:
            if self._step:
                self._out.step_finish(self._step)
            self._step = message_id
            self._out.step_start(message_id)
        for block in blocks:
            kind = block.get("type")
            if kind == "text":
                self._text(message_id, str_field(block, "text"), parent)
            elif kind == "thinking":
                thinking = str_field(block, "thinking")
                if thinking.strip():
                    self._out.reasoning(message_id, thinking, parent=parent)
                    self._out.item(
                        TranscriptItem(
                            kind=TranscriptKind.THINKING, text=thinking, parent_tool_call_id=parent
                        )
                    )
            elif kind == "tool_use":
                self._tool_use(block, parent)

    def _text(self, message_id: str, text: str, parent: str) -> None:
        if not text:
            return
        self._out.text(message_id, text, parent=parent)
        self._out.item(
            TranscriptItem(kind=TranscriptKind.ASSISTANT, text=text, parent_tool_call_id=parent)
        )
        if not parent:  # subagent text is never the run's answer
            if message_id != self._final_message:
                self._final_message, self._final_parts = message_id, []
            self._final_parts.append(text)

    def _tool_use(self, block: dict[str, Any], parent: str) -> None:
        tool_id, name = str_field(block, "id"), str_field(block, "name")
        tool_input = block.get("input")
        args = tool_input if isinstance(tool_input, dict) else {"input": tool_input}
        self._out.tool_start(tool_id, name, args, parent=parent)
        self._out.item(
            TranscriptItem(
                kind=TranscriptKind.TOOL_CALL,
                tool_use_id=tool_id,
                tool_name=name or "tool",
                input=tool_input,
                parent_tool_call_id=parent,
            )
        )

    def _user(self, line: dict[str, Any]) -> None:
        parent = str_field(line, "parent_tool_use_id")
        for block in list_field(dict_field(line, "message"), "content"):
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            tool_id = str_field(block, "tool_use_id")
            if not tool_id:
                continue
            text = _tool_result_text(block.get("content"))
            is_error = block.get("is_error") is True
            self._out.tool_result(tool_id, {"output": text, "is_error": is_error})
            self._out.item(
                TranscriptItem(
                    kind=TranscriptKind.TOOL_RESULT,
                    tool_use_id=tool_id,
                    text=text,
                    is_error=is_error,
                    parent_tool_call_id=parent,
                )
            )

    def _result_line(self, line: dict[str, Any], text: str) -> None:
        self._result = line
        self.terminal = TerminalPayload(event="result", raw_json=text)
        if self._step:
            self._out.step_finish(self._step)
            self._step = ""
        usage = line.get("usage")
        self.usage = (
            read_usage(usage, cached_key="cache_read_input_tokens")
            if isinstance(usage, dict)
            else None
        )
        cost = line.get("total_cost_usd")
        subtype = str_field(line, "subtype")
        self._out.item(
            TranscriptItem(
                kind=TranscriptKind.RESULT,
                text=str_field(line, "result") or subtype,
                subtype=subtype,
                is_error=line.get("is_error") is not False,
                session_id=str_field(line, "session_id"),
                usage=self.usage,
                cost_usd=float(cost) if isinstance(cost, int | float) else None,
                errors=[e for e in list_field(line, "errors") if isinstance(e, str)],
            )
        )

    # -- the outcome ------------------------------------------------------------------------

    @property
    def succeeded(self) -> bool:
        """The terminal line says success: ``subtype`` success *and* ``is_error`` false."""
        result = self._result
        return (
            result is not None
            and result.get("subtype") == "success"
            and result.get("is_error") is False
        )

    @property
    def resume_id(self) -> str:
        """The top-level ``session_id`` of the ``result`` line (never the init's)."""
        return str_field(self._result, "session_id") if self._result is not None else ""

    def output(self) -> str:
        """The final assistant text: the result's text on success, else the last top-level
        assistant message (possibly empty)."""
        if self.succeeded and self._result is not None:
            final = str_field(self._result, "result")
            if final:
                return final
        return "\n".join(self._final_parts)

    def reported_failure(self, meta: dict[str, Any]) -> str:
        """An error ``result`` line: its errors, its text, an API error, or its subtype."""
        result = self._result or {}
        for key in ("subtype", "terminal_reason", "api_error_status"):
            if result.get(key) is not None:
                meta[key] = result[key]
        errors = [e for e in list_field(result, "errors") if isinstance(e, str) and e]
        return (
            "; ".join(errors)
            or str_field(result, "result")
            or self._error_hint
            or f"claude reported {str_field(result, 'subtype') or 'an error'}"
        )
