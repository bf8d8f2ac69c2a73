"""Parser of ``gemini --output-format stream-json`` output.

One JSON event per stdout line, dispatched on its parsed ``type``. What each
event becomes:

* ``init``: an ``init`` transcript item (model, session id). Its top-level
  ``session_id`` is the session a later ``--resume`` continues; the ``result``
  line names none.
* ``message`` from the assistant: token-level text. Each ``delta: true`` chunk
  is one ``text.content``; the first chunk opens the text block (and a step,
  one per model request), the next event of another type closes it, and the
  joined chunks become one ``assistant`` item. A message without ``delta``
  (some versions print the whole answer once) is a block of its own. The
  prompt echoed back as a ``user`` message is skipped: the host sent it.
* ``tool_use``: ``tool_call.start`` with the complete ``parameters`` plus a
  ``tool_call`` item. ``tool_result``: ``tool_call.result`` (status, output,
  error) then ``tool_call.end``, plus a ``tool_result`` item, ``is_error`` on
  ``status: "error"`` (the run goes on). Model output after tool results
  starts the next step.
* ``error`` (not terminal: loop detected, session turn limit, an empty model
  stream): a ``gemini.error`` payload with ``severity`` and ``message``, a
  ``system`` item whose subtype is the severity, and the last one is filed
  with a failure.
* ``result``: the official terminal event, kept verbatim; a ``result`` item
  with the usage and the rest of ``stats`` (duration, tool calls, per model).
* Unknown types are skipped; lines that are not JSON objects become ``stdout``
  items.

Gemini CLI reports API retries only on stderr (``Attempt 1 failed with status 429.
Retrying with backoff...``), so the parser reads stderr too, line by line: each retry
becomes a ``gemini.retry`` payload and a ``system`` item (subtype ``api_retry``) as it
happens, the count goes into ``Response.metadata`` (``retries``, ``last_retry_status``)
and into a failure's metadata. A failed API call ends in an error ``result`` whose
message quotes the API's error JSON; its HTTP status is filed as ``http_status`` (the
process exits with that status modulo 256).

Reading lines and the order of the failure checks come from
:class:`driver.clikit.JsonlParser`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from driver import TerminalPayload, TranscriptItem, TranscriptKind, Usage
from driver.clikit import (
    JsonlParser,
    ProcessOutcome,
    RunOutput,
    dict_field,
    int_field,
    stderr_tail,
    str_field,
)

__all__ = ["ERROR_KIND", "EXIT_REASONS", "RETRY_KIND", "GeminiStreamParser", "stats_usage"]

ERROR_KIND = "gemini.error"
"""The vendor stream kind of an ``error`` line; ``raw`` holds its severity and message."""

RETRY_KIND = "gemini.retry"
"""The vendor stream kind of a retried API call (read from stderr); ``raw`` holds the
failed ``attempt``, its HTTP ``status`` (0 when not printed) and the stderr ``message``."""

EXIT_REASONS = {
    41: "authentication",
    42: "input",
    44: "sandbox",
    52: "config",
    53: "turn_limit",
    54: "tool_execution",
    55: "untrusted_workspace",
    130: "cancelled",
}
"""Gemini CLI's fatal exit codes (``FatalError`` subclasses), filed as ``exit_reason``."""

# Ends the open text block: every known event but ``message`` itself.
_CLOSES_TEXT = frozenset({"init", "tool_use", "tool_result", "error", "result"})
_COUNTS = ("total_tokens", "input_tokens", "output_tokens", "cached", "input")
# stderr: "Attempt 3 failed with status 500. Retrying with backoff... <error>" (a retry),
# "Attempt 4 failed: <error>. Retrying after 5200ms..." (a retry after the server's delay)
# or "Attempt 10 failed: <error>. Max attempts reached" (the last one).
_ATTEMPT = re.compile(r"^Attempt (\d+) failed(?: with status (\d+))?")
_API_ERROR = "[API Error:"
# stderr of a request that got no HTTP answer (Node's fetch): the error's cause, e.g.
# "[cause]: SocketError: other side closed", then its "code: 'UND_ERR_SOCKET',".
_CAUSE = re.compile(r"^\[cause\]: (\w*Error): (.*?)(?: \{)?$")
_CAUSE_CODE = re.compile(r"^code: '([A-Z][A-Z0-9_]*)',?$")
_CUT = "terminated"
"""What Node's fetch says when the connection closes in the middle of a response body."""
_CODE = re.compile(r'"code"\s*:\s*(\d{3})')


def _api_error(message: str) -> tuple[int, str]:
    """The HTTP status and the API's own message in ``[API Error: {"error": {...}}]``."""
    start, end = message.find("{"), message.rfind("}")
    if start >= 0 and end > start:
        try:
            error = json.loads(message[start : end + 1]).get("error")
        except (ValueError, AttributeError):
            error = None
        if isinstance(error, dict):
            code = int_field(error, "code")
            text = " ".join(
                p for p in (str_field(error, "status"), str_field(error, "message")) if p
            )
            return code, text
    found = _CODE.search(message)
    return (int(found[1]) if found else 0), ""


def _count(counts: dict[str, Any], key: str) -> int:
    return max(0, int_field(counts, key))


def stats_usage(stats: dict[str, Any]) -> Usage | None:
    """``result.stats`` as :class:`driver.Usage`; None when it holds no counts.

    The top-level counts when present, else the per-model ones summed; see
    :class:`gemini_driver.GeminiDriver` for what each count means.
    """
    models = [m for m in dict_field(stats, "models").values() if isinstance(m, dict)]
    sources = [stats] if any(key in stats for key in _COUNTS) else models
    if not sources:
        return None
    usage = Usage()
    for counts in sources:
        cached = _count(counts, "cached")
        processed = max(_count(counts, "input_tokens"), cached + _count(counts, "input"))
        # total_tokens also counts the thinking tokens that output_tokens leaves out.
        generated = max(_count(counts, "output_tokens"), _count(counts, "total_tokens") - processed)
        usage = Usage(
            input_tokens=usage.input_tokens + processed,
            output_tokens=usage.output_tokens + generated,
            cached_input_tokens=usage.cached_input_tokens + cached,
        )
    return usage


class GeminiStreamParser(JsonlParser):
    """Turns stream-json events into payloads and items as they arrive; never raises.

    ``model`` is the one ``init`` names (the requested one, ``auto`` when none
    was) until ``result.stats.models`` names exactly one model that answered;
    ``terminal`` and ``usage`` come from the ``result`` line.
    """

    program = "gemini"
    missing_terminal = "a result line"

    def __init__(self, out: RunOutput, *, model: str) -> None:
        super().__init__(out, model=model)
        self.session_id = ""
        """The top-level ``session_id`` of ``init``."""
        self._result: dict[str, Any] | None = None
        self._step = ""
        self._steps = 0
        self._tools_ran = False
        self._block = ""  # the open text block's message id
        self._chunks: list[str] = []
        self._final_text = ""
        self._last_error: dict[str, str] = {}
        self._retries: list[dict[str, Any]] = []
        self._attempts = 0
        self._cause = ""
        self._cause_code = ""

    # -- feeding --------------------------------------------------------------------------

    def on_object(self, line: dict[str, Any], text: str) -> None:
        """Dispatch one event on its ``type``."""
        kind = line.get("type")
        if kind == "message":
            self._message(line)
            return
        if kind in _CLOSES_TEXT:
            self._close_text()
        if kind == "init":
            self._init(line)
        elif kind == "tool_use":
            self._tool_use(line)
        elif kind == "tool_result":
            self._tool_result(line)
        elif kind == "error":
            self._error(line)
        elif kind == "result":
            self._result_line(line, text)

    def needs_text(self, line: dict[str, Any]) -> bool:
        """Only the ``result`` line's text is kept (the terminal payload, verbatim)."""
        return line.get("type") == "result"

    def _init(self, line: dict[str, Any]) -> None:
        self.session_id = str_field(line, "session_id")
        self.model = str_field(line, "model") or self.model
        if self.session_id:
            self._out.thread_id = self.session_id
        self._out.item(
            TranscriptItem(kind=TranscriptKind.INIT, model=self.model, session_id=self.session_id)
        )

    def _model_output(self) -> None:
        """Open a step for the model's first output, or its first after tool results."""
        if self._step and not self._tools_ran:
            return
        if self._step:
            self._out.step_finish(self._step)
        self._steps += 1
        self._step, self._tools_ran = f"turn-{self._steps}", False
        self._out.step_start(self._step)

    def _message(self, line: dict[str, Any]) -> None:
        if line.get("role") != "assistant":
            return
        whole = line.get("delta") is not True
        if whole:
            self._close_text()
        content = str_field(line, "content")
        if content:
            if not self._block:
                self._model_output()
                self._block = self._out.block_start("text", f"{self._step}/text")
            self._out.block_delta(self._block, content)
            self._chunks.append(content)
        if whole:
            self._close_text()

    def _close_text(self) -> None:
        if not self._block:
            return
        self._out.block_end(self._block)
        self._final_text = "".join(self._chunks)
        self._block, self._chunks = "", []
        self._out.item(TranscriptItem(kind=TranscriptKind.ASSISTANT, text=self._final_text))

    def _tool_use(self, line: dict[str, Any]) -> None:
        tool_id = str_field(line, "tool_id")
        if not tool_id or self._out.tool_started(tool_id):
            return
        self._model_output()
        name = str_field(line, "tool_name") or "tool"
        parameters = line.get("parameters")
        if isinstance(parameters, dict):
            args = parameters
        else:
            args = {} if parameters is None else {"parameters": parameters}
        self._out.tool_start(tool_id, name, args)
        self._out.item(
            TranscriptItem(
                kind=TranscriptKind.TOOL_CALL, tool_use_id=tool_id, tool_name=name, input=args
            )
        )

    def _tool_result(self, line: dict[str, Any]) -> None:
        tool_id = str_field(line, "tool_id")
        if not tool_id:
            return
        self._tools_ran = True
        status, error = str_field(line, "status"), dict_field(line, "error")
        result: dict[str, Any] = {"status": status}
        output = line.get("output")
        if isinstance(output, str):
            result["output"] = output
        if error:
            result["error"] = error
        self._out.tool_result(tool_id, result)
        self._out.item(
            TranscriptItem(
                kind=TranscriptKind.TOOL_RESULT,
                tool_use_id=tool_id,
                text=str_field(line, "output") or str_field(error, "message") or status,
                is_error=status == "error" or bool(error),
            )
        )

    def _error(self, line: dict[str, Any]) -> None:
        severity = str_field(line, "severity") or "error"
        message = str_field(line, "message")
        self._last_error = {"severity": severity, "message": message}
        self._out.vendor(ERROR_KIND, dict(self._last_error))
        self._out.item(
            TranscriptItem(
                kind=TranscriptKind.SYSTEM,
                subtype=severity,
                text=message or f"gemini reported an {severity} without a message",
            )
        )

    def _result_line(self, line: dict[str, Any], text: str) -> None:
        self._result = line
        self.terminal = TerminalPayload(event="result", raw_json=text)
        if self._step:
            self._out.step_finish(self._step)
            self._step = ""
        stats = dict_field(line, "stats")
        self.usage = stats_usage(stats)
        models = dict_field(stats, "models")
        if len(models) == 1:
            self.model = next(iter(models))
        status = str_field(line, "status")
        message = str_field(dict_field(line, "error"), "message")
        self._out.item(
            TranscriptItem(
                kind=TranscriptKind.RESULT,
                subtype=status,
                text=message or status or "result",
                is_error=status != "success",
                model=self.model,
                session_id=self.session_id,
                usage=self.usage,
                errors=[message] if message else [],
                data={key: value for key, value in stats.items() if key not in _COUNTS},
            )
        )

    # -- stderr -----------------------------------------------------------------------------

    def feed_stderr(self, raw: bytes) -> None:
        """A retried API call becomes a ``gemini.retry`` payload and an ``api_retry`` item;
        the cause of a request that got no HTTP answer is kept for the failure message."""
        text = raw.decode("utf-8", errors="replace").strip()
        if cause := _CAUSE.match(text):
            self._cause, self._cause_code = f"{cause[1]}: {cause[2]}", ""
            return
        if self._cause and not self._cause_code and (named := _CAUSE_CODE.match(text)):
            self._cause_code = named[1]
            return
        found = _ATTEMPT.match(text)
        if found is None:
            return
        attempt = int(found[1])
        self._attempts = max(self._attempts, attempt)
        if "Max attempts reached" in text:
            return  # the last attempt: the error result says how it ended
        code = found[2] or (m[1] if (m := _CODE.search(text)) else "")
        retry = {"attempt": attempt, "status": int(code) if code else 0, "message": text}
        self._retries.append(retry)
        self.vendor(
            RETRY_KIND,
            dict(retry),
            TranscriptItem(
                kind=TranscriptKind.SYSTEM,
                subtype="api_retry",
                text=text,
                metadata={"attempt": str(attempt), "status": code},
            ),
        )

    def run_metadata(self) -> dict[str, str]:
        """``retries`` and ``last_retry_status`` when an API call was retried."""
        if not self._retries:
            return {}
        meta = {"retries": str(len(self._retries))}
        if self._retries[-1]["status"]:
            meta["last_retry_status"] = str(self._retries[-1]["status"])
        return meta

    # -- the outcome ------------------------------------------------------------------------

    @property
    def succeeded(self) -> bool:
        """The ``result`` line says ``status: "success"``."""
        return self._result is not None and self._result.get("status") == "success"

    @property
    def resume_id(self) -> str:
        """The session id announced at top level by ``init``."""
        return self.session_id

    def output(self) -> str:
        """The final assistant text: the last text block, its chunks joined."""
        return self._final_text

    def reported_failure(self, meta: dict[str, Any]) -> str:
        """A ``result`` that is not a success: its error, else the last ``error`` line."""
        result = self._result or {}
        status, error = str_field(result, "status"), dict_field(result, "error")
        meta["status"] = status
        if str_field(error, "type"):
            meta["error_type"] = error["type"]
        message = str_field(error, "message")
        if message.startswith(_API_ERROR) and message.endswith("]"):
            code, api_message = _api_error(message)
            if not code:  # no HTTP answer: the stream broke ("terminated"), a network error
                return self._network_failure(meta, message[len(_API_ERROR) : -1].strip())
            meta["http_status"] = code
            return f"gemini API error: HTTP {code} {api_message}".rstrip()
        return (
            message
            or self._last_error.get("message", "")
            or (f"gemini reported status {status!r}" if status else "gemini reported no status")
        )

    def _network_failure(self, meta: dict[str, Any], error: str) -> str:
        """A request that got no HTTP answer, with the cause the CLI printed on stderr.

        The result line says only Node's words (``terminated`` for a connection closed
        mid-response); the stream cut is named, and the socket error quoted."""
        cause = ", ".join(part for part in (self._cause, self._cause_code) if part)
        if cause:
            meta["network_error"] = cause
        detail = f"{error}; {cause}" if cause else error
        if error == _CUT:
            meta["stream_cut"] = True
            return (
                "gemini API error: the model's response stream was cut (the connection "
                f"closed before the answer was complete: {detail})"
            )
        return f"gemini API error: {detail}"

    def exit_detail(self, outcome: ProcessOutcome) -> str:
        """Fatal errors (auth, turn limit, API) go to stderr; the last ``error`` line is
        the fallback."""
        return stderr_tail(outcome.stderr) or self._last_error.get("message", "")

    def failure_context(self, meta: dict[str, Any], message: str, outcome: ProcessOutcome) -> str:
        """The last ``error`` line and what a fatal exit code means, as metadata only
        (the message already quotes the error)."""
        if self._last_error:
            meta["last_error"] = self._last_error["message"]
            meta["last_error_severity"] = self._last_error["severity"]
        reason = EXIT_REASONS.get(outcome.exit_code)
        if reason and not (outcome.timed_out or outcome.signal):
            meta["exit_reason"] = reason
        if not self._retries:
            return ""
        meta["retries"] = len(self._retries)
        last = self._retries[-1]["status"]
        if last:
            meta["last_retry_status"] = last
        attempts = max(self._attempts, len(self._retries) + 1)
        retried = "1 retry" if len(self._retries) == 1 else f"{len(self._retries)} retries"
        return f"after {attempts} attempts, {retried}" + (f", last HTTP {last}" if last else "")
