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
"""

from __future__ import annotations

import json
from typing import Any

from cli_plumbing import ProcessOutcome, RunOutput
from driver import FailureCode, RunFailure, TerminalPayload, TranscriptItem, TranscriptKind, Usage

__all__ = ["ClaudeStreamParser"]

_SYNTHETIC_MODEL = "<synthetic>"
_STDERR_TAIL = 2000


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _str(obj: dict[str, Any], key: str) -> str:
    value = obj.get(key)
    return value if isinstance(value, str) else ""


def _dict(obj: dict[str, Any], key: str) -> dict[str, Any]:
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


def _list(obj: dict[str, Any], key: str) -> list[Any]:
    value = obj.get(key)
    return value if isinstance(value, list) else []


def _int(obj: dict[str, Any], key: str) -> int:
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


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


def _usage(raw: dict[str, Any]) -> Usage:
    return Usage(
        input_tokens=_int(raw, "input_tokens"),
        output_tokens=_int(raw, "output_tokens"),
        cached_input_tokens=_int(raw, "cache_read_input_tokens"),
    )


class ClaudeStreamParser:
    """Turns stdout lines into payloads and items as they arrive; never raises.

    After the process ended, :meth:`failure`, :meth:`output` and
    :attr:`resume_id` give the run's outcome from the same pass.
    """

    def __init__(self, out: RunOutput) -> None:
        self._out = out
        self.model = ""
        """Model named by ``system/init``."""
        self.terminal: TerminalPayload | None = None
        """The ``result`` line, verbatim; None until one was seen."""
        self.usage: Usage | None = None
        """Token counts of the ``result`` line; None when not reported."""
        self.malformed_lines = 0
        """Lines that start like JSON but do not parse: the protocol is not trustworthy."""
        self._result: dict[str, Any] | None = None
        self._step = ""
        self._final_message = ""
        self._final_parts: list[str] = []
        self._api_error = ""

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
            # Debug output some builds print to stdout, or a corrupt line: keep it visible.
            self._out.item(TranscriptItem(kind=TranscriptKind.STDOUT, text=text))
            return
        kind = value.get("type")
        if kind == "system":
            self._system(value)
        elif kind == "assistant":
            self._assistant(value)
        elif kind == "user":
            self._user(value)
        elif kind == "result":
            self._result_line(value, text)

    def _system(self, line: dict[str, Any]) -> None:
        subtype = _str(line, "subtype")
        if subtype == "init":
            session_id = _str(line, "session_id")
            self.model = _str(line, "model") or self.model
            if session_id:
                self._out.thread_id = session_id
            self._out.item(
                TranscriptItem(kind=TranscriptKind.INIT, model=self.model, session_id=session_id)
            )
        elif subtype == "api_retry":
            attempt, limit = _int(line, "attempt"), _int(line, "max_retries")
            status = line.get("error_status")
            self._out.item(
                TranscriptItem(
                    kind=TranscriptKind.SYSTEM,
                    subtype=subtype,
                    text=f"API request failed (status {status}); retry {attempt} of {limit}",
                )
            )

    def _assistant(self, line: dict[str, Any]) -> None:
        message = _dict(line, "message")
        parent = _str(line, "parent_tool_use_id")
        blocks = [block for block in _list(message, "content") if isinstance(block, dict)]
        if _str(message, "model") == _SYNTHETIC_MODEL or line.get("is_api_error_message") is True:
            texts = [_str(block, "text") for block in blocks if block.get("type") == "text"]
            self._api_error = "\n".join(t for t in texts if t) or self._api_error
            return
        message_id = _str(message, "id") or _str(line, "uuid")
        if not parent and message_id != self._step:
            if self._step:
                self._out.step_finish(self._step)
            self._step = message_id
            self._out.step_start(message_id)
        for block in blocks:
            kind = block.get("type")
            if kind == "text":
                self._text(message_id, _str(block, "text"), parent)
            elif kind == "thinking":
                thinking = _str(block, "thinking")
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
        tool_id, name = _str(block, "id"), _str(block, "name")
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
        parent = _str(line, "parent_tool_use_id")
        for block in _list(_dict(line, "message"), "content"):
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            tool_id = _str(block, "tool_use_id")
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
        self.usage = _usage(usage) if isinstance(usage, dict) else None
        cost = line.get("total_cost_usd")
        subtype = _str(line, "subtype")
        self._out.item(
            TranscriptItem(
                kind=TranscriptKind.RESULT,
                text=_str(line, "result") or subtype,
                subtype=subtype,
                is_error=line.get("is_error") is not False,
                session_id=_str(line, "session_id"),
                usage=self.usage,
                cost_usd=float(cost) if isinstance(cost, int | float) else None,
                errors=[e for e in _list(line, "errors") if isinstance(e, str)],
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
        return _str(self._result, "session_id") if self._result is not None else ""

    def output(self) -> str:
        """The final assistant text: the result's text on success, else the last top-level
        assistant message (possibly empty)."""
        if self.succeeded and self._result is not None:
            final = _str(self._result, "result")
            if final:
                return final
        return "\n".join(self._final_parts)

    def failure(self, outcome: ProcessOutcome, timeout: float) -> RunFailure | None:
        """Classify the run; None only for a successful result with a clean exit."""
        meta: dict[str, Any] = {"exit_code": outcome.exit_code}
        if outcome.signal:
            meta["signal"] = outcome.signal
        result = self._result
        if outcome.timed_out:
            message = f"claude did not finish within {timeout:g} s and was stopped"
        elif result is not None and not self.succeeded:
            for key in ("subtype", "terminal_reason", "api_error_status"):
                if result.get(key) is not None:
                    meta[key] = result[key]
            errors = [e for e in _list(result, "errors") if isinstance(e, str) and e]
            message = (
                "; ".join(errors)
                or _str(result, "result")
                or self._api_error
                or f"claude reported {_str(result, 'subtype') or 'an error'}"
            )
        elif outcome.signal:
            message = f"claude was ended by {outcome.signal}"
        elif outcome.exit_code != 0:
            message = f"claude exited with code {outcome.exit_code}"
            detail = self._api_error or _stderr_tail(outcome.stderr)
            if detail:
                message = f"{message}: {detail}"
        elif result is None:
            message = "claude exited without a result line"
        else:
            return None
        return RunFailure(code=FailureCode.AGENT_ERROR, message=message, metadata=meta)


def _stderr_tail(stderr: bytes) -> str:
    text = stderr.decode("utf-8", errors="replace").strip()
    return text if len(text) <= _STDERR_TAIL else "..." + text[-_STDERR_TAIL:]
