"""Parser of ``claude -p --output-format stream-json --verbose`` output.

One JSON object per stdout line. Dispatch is on the parsed ``type`` (key order
is not stable). What each line becomes (``examples/README.md`` has the table):

* ``system``/``init``: an ``init`` transcript item (model, session id).
* ``system``/``api_retry``, ``system``/``status`` (compaction started, its
  ``compact_result``), ``system``/``compact_boundary`` and ``rate_limit_event``:
  a vendor stream kind (``claude.api_retry``, ``claude.status``,
  ``claude.compact_boundary``, ``claude.rate_limit``) whose ``raw`` holds the
  line's fields, plus a ``system`` item. The last retry, rate limit and a
  failed compaction are remembered for the failure message and metadata.
* ``assistant``: one line per content block, all blocks of one model request
  sharing ``message.id``. A new top-level ``message.id`` opens a step. ``text``
  becomes a text lifecycle plus an ``assistant`` item, ``thinking`` a reasoning
  lifecycle plus a ``thinking`` item (signature-only thinking is skipped),
  ``tool_use`` a ``tool_call.start`` with the complete input plus a
  ``tool_call`` item. Subagent lines carry ``parent_tool_use_id``, kept as
  ``parent_tool_call_id``. A synthetic API-error line (``model: "<synthetic>"``)
  is not model output: it becomes ``claude.api_error`` plus a ``system`` item,
  and its text is quoted when the run fails.
* ``user``: its ``tool_result`` blocks become ``tool_call.result`` (then
  ``tool_call.end``) plus a ``tool_result`` item; a synthetic turn
  (``isSynthetic: true``, e.g. the summary that re-seeds a compacted session)
  becomes ``claude.synthetic_user`` plus a ``user`` item with subtype
  ``synthetic``.
* ``result``: the official terminal event, kept verbatim; a ``result`` item.
  One process may print several (a background task wakes the agent again); the
  last one decides the run, and usage is the sum over all of them. Usage is
  summed over the models of ``model_usage_since_last_result`` (this run only;
  Claude Code 2.1.3xx), else ``modelUsage``, else ``usage``, in the
  :class:`driver.Usage` meaning: input counts fresh input, cache reads and
  cache writes; cached counts cache reads; output includes thinking. The cost
  is the sum of that object's ``costUSD``, else ``total_cost_usd``: on a resumed
  session ``modelUsage`` and ``total_cost_usd`` count the whole session, not
  the run. With ``--json-schema``, ``structured_output`` is the structured answer.
* control frames (``control_request``, ``control_response``,
  ``control_cancel_request``) go to the two-way mode's :class:`ControlChannel` when the
  run has one (see ``_control.py``), and are skipped otherwise;
* anything else (``stream_event``, ``tool_progress``, ``ui_invalidate`` ...) is
  skipped; lines that are not JSON objects become
  ``stdout`` items.

Reading lines and the order of the failure checks come from
:class:`driver.clikit.JsonlParser`.
"""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from typing import Any

from claude_driver._control import CONTROL_TYPES, ControlChannel
from driver import RunFailure, TerminalPayload, TranscriptItem, TranscriptKind, Usage
from driver.clikit import (
    JsonlParser,
    ProcessOutcome,
    RunOutput,
    dict_field,
    int_field,
    list_field,
    make_usage,
    str_field,
)

__all__ = ["ClaudeStreamParser", "claude_usage"]

_SYNTHETIC_MODEL = "<synthetic>"
# Keys every line carries; the rest of a vendor line is its payload.
_ENVELOPE = frozenset({"type", "subtype", "session_id", "uuid"})


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


def _dollars(value: object) -> float | None:
    """A finite, non-negative number of dollars, or None."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value) if value >= 0 else None
    return None


def claude_usage(result: dict[str, Any]) -> tuple[Usage | None, float | None]:
    """Usage and cost of one ``result`` line, in :class:`driver.Usage`'s meaning.

    The per-model object (camelCase) is summed: ``model_usage_since_last_result`` when
    the line has it, what this run used (Claude Code 2.1.3xx, where ``modelUsage`` and
    ``total_cost_usd`` count the whole resumed session), else ``modelUsage``.
    ``result.usage`` (snake case, per run) is the fallback when that object is empty,
    since a budget stop reports zeros there. Claude Code counts fresh input, cache
    reads and cache writes apart, so input is their sum and cached is the reads;
    output already includes thinking. The cost is the sum of the per-run models'
    ``costUSD`` (None when there are none); on older lines ``total_cost_usd``, else the
    sum of ``modelUsage``'s ``costUSD``. Usage is None when the line reports no usage.
    """
    per_run = "model_usage_since_last_result" in result
    models = _models(result, "model_usage_since_last_result" if per_run else "modelUsage")
    if models:
        fresh, read, write, output = (
            sum(int_field(m, key) for m in models)
            for key in (
                "inputTokens",
                "cacheReadInputTokens",
                "cacheCreationInputTokens",
                "outputTokens",
            )
        )
    elif isinstance(result.get("usage"), dict):
        usage = dict_field(result, "usage")
        fresh, read, write, output = (
            int_field(usage, key)
            for key in (
                "input_tokens",
                "cache_read_input_tokens",
                "cache_creation_input_tokens",
                "output_tokens",
            )
        )
    else:
        return None, _dollars(result.get("total_cost_usd"))
    if per_run:  # total_cost_usd counts the whole (resumed) session
        cost = _model_costs(models)
    else:
        cost = _dollars(result.get("total_cost_usd"))
        if cost is None:
            cost = _model_costs(models)
    usage_value = make_usage(
        input_tokens=fresh + read + write,
        cached_input_tokens=read,
        output_tokens=output,
        cost_usd=cost or 0.0,
    )
    return usage_value, cost


def _models(result: dict[str, Any], key: str) -> list[dict[str, Any]]:
    return [m for m in dict_field(result, key).values() if isinstance(m, dict)]


def _model_costs(models: list[dict[str, Any]]) -> float | None:
    """The sum of the models' ``costUSD``; None when none reports one."""
    costs = [c for c in (_dollars(m.get("costUSD")) for m in models) if c is not None]
    return sum(costs) if costs else None


def _added(first: Usage | None, second: Usage | None) -> Usage | None:
    """Two result lines' usage together (None when neither reported one)."""
    if first is None or second is None:
        return second or first
    return Usage(
        input_tokens=first.input_tokens + second.input_tokens,
        cached_input_tokens=first.cached_input_tokens + second.cached_input_tokens,
        output_tokens=first.output_tokens + second.output_tokens,
        estimated_cost_milli=first.estimated_cost_milli + second.estimated_cost_milli,
    )


def _when(epoch: object) -> str:
    """An epoch-seconds reset time as ISO 8601 UTC, or ``""``."""
    if isinstance(epoch, int | float) and not isinstance(epoch, bool) and math.isfinite(epoch):
        try:
            return datetime.fromtimestamp(epoch, tz=UTC).isoformat().replace("+00:00", "Z")
        except (OverflowError, OSError, ValueError):
            return ""
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
        self._last_retry: dict[str, Any] = {}
        self._retries = 0
        self._rate_limit: dict[str, Any] = {}
        self._compaction = ""
        self._api_error = ""
        self.control: ControlChannel | None = None
        """The two-way mode's channel: it gets the control lines and the end of the turn,
        and a decision that ended the run decides its failure."""

    @property
    def out(self) -> RunOutput:
        """Where this run's payloads, events and items go (the two-way channel emits there)."""
        return self._out

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
        elif kind == "rate_limit_event":
            self._rate_limit_event(dict_field(line, "rate_limit_info"))
        elif kind in CONTROL_TYPES and self.control is not None:
            self.control.take(line)

    def needs_text(self, line: dict[str, Any]) -> bool:
        """Only the ``result`` line's text is kept (the terminal payload, verbatim)."""
        return line.get("type") == "result"

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
            return
        fields = {key: value for key, value in line.items() if key not in _ENVELOPE}
        if subtype == "api_retry":
            self._last_retry = fields
            self._retries += 1
            delay = int_field(line, "retry_delay_ms") / 1000
            text = (
                f"API request failed (HTTP {line.get('error_status')}, "
                f"{str_field(line, 'error') or 'unknown error'}); retry "
                f"{int_field(line, 'attempt')} of {int_field(line, 'max_retries')} in {delay:g} s"
            )
        elif subtype == "status":
            status, result = line.get("status"), str_field(line, "compact_result")
            if result == "failed":
                self._compaction = "failed"
            parts = [f"status {status}" if isinstance(status, str) and status else "status cleared"]
            if result:
                parts.append(f"compaction {result}")
            text = ", ".join(parts)
        elif subtype == "compact_boundary":
            meta = dict_field(line, "compact_metadata")
            text = (
                f"conversation compacted ({str_field(meta, 'trigger') or 'unknown trigger'}, "
                f"{int_field(meta, 'pre_tokens')} tokens before)"
            )
        else:
            return  # hooks, tasks, ui_invalidate ...: not part of the run's story
        self.vendor(
            f"claude.{subtype}",
            fields,
            TranscriptItem(kind=TranscriptKind.SYSTEM, subtype=subtype, text=text, data=fields),
        )

    def _rate_limit_event(self, info: dict[str, Any]) -> None:
        self._rate_limit = info
        status = str_field(info, "status") or "unknown"
        text = f"rate limit {status} ({str_field(info, 'rateLimitType') or 'unknown window'})"
        resets = _when(info.get("resetsAt"))
        if resets:
            text += f", resets {resets}"
        self.vendor(
            "claude.rate_limit",
            info,
            TranscriptItem(kind=TranscriptKind.SYSTEM, subtype="rate_limit", text=text, data=info),
        )

    def _assistant(self, line: dict[str, Any]) -> None:
        message = dict_field(line, "message")
        parent = str_field(line, "parent_tool_use_id")
        blocks = [block for block in list_field(message, "content") if isinstance(block, dict)]
        synthetic = str_field(message, "model") == _SYNTHETIC_MODEL
        if synthetic or line.get("is_api_error_message") is True:
            self._synthetic_error(line, blocks)
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

    def _synthetic_error(self, line: dict[str, Any], blocks: list[dict[str, Any]]) -> None:
        """The CLI's own stand-in for a failed request: shown as a diagnostic, not output."""
        texts = [str_field(block, "text") for block in blocks if block.get("type") == "text"]
        text = "\n".join(t for t in texts if t)
        self._error_hint = text or self._error_hint
        self._api_error = str_field(line, "error") or self._api_error
        fields = {"error": self._api_error, "text": text}
        self.vendor(
            "claude.api_error",
            fields,
            TranscriptItem(
                kind=TranscriptKind.SYSTEM,
                subtype="api_error",
                text=text or self._api_error or "API error",
                data={"error": self._api_error},
            ),
        )

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
        content = dict_field(line, "message").get("content")
        if line.get("isSynthetic") is True:
            text = _tool_result_text(content)
            if text:
                self.vendor(
                    "claude.synthetic_user",
                    {"text": text},
                    TranscriptItem(
                        kind=TranscriptKind.USER,
                        subtype="synthetic",
                        text=text,
                        parent_tool_call_id=parent,
                    ),
                )
        for block in content if isinstance(content, list) else []:
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
        self._out.end_open_tools()  # a budget or turn limit can stop the run mid-call
        if self._step:
            self._out.step_finish(self._step)
            self._step = ""
        usage, cost = claude_usage(line)
        if "model_usage_since_last_result" in line:
            # Each line counts what came since the one before: the run is their sum.
            self.usage = _added(self.usage, usage)
        else:
            self.usage = usage  # older releases: the last line counts the whole process
        subtype = str_field(line, "subtype")
        self._out.item(
            TranscriptItem(
                kind=TranscriptKind.RESULT,
                text=str_field(line, "result") or subtype,
                subtype=subtype,
                is_error=line.get("is_error") is not False,
                session_id=str_field(line, "session_id"),
                usage=self.usage,
                cost_usd=cost,
                errors=[e for e in list_field(line, "errors") if isinstance(e, str)],
            )
        )
        if self.control is not None:
            self.control.turn_ended()

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
        """The final assistant text: the result's text on success (the structured answer
        when that text is empty), else the last top-level assistant message."""
        if self.succeeded and self._result is not None:
            final = str_field(self._result, "result") or (self.structured_json() or "")
            if final:
                return final
        return "\n".join(self._final_parts)

    def structured_json(self) -> str | None:
        """``result.structured_output`` (asked for with ``--json-schema``) as JSON text."""
        value = None if self._result is None else self._result.get("structured_output")
        if value is None:
            return None
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    def failure(self, outcome: ProcessOutcome, timeout: float) -> RunFailure | None:
        """A decision that ended the run (two-way mode) is its failure; otherwise the
        stream and the exit decide, as for every CLI."""
        if self.control is not None and self.control.failure is not None:
            return self.control.failure
        return super().failure(outcome, timeout)

    def reported_failure(self, meta: dict[str, Any]) -> str:
        """An error ``result`` line: its errors, its text, an API error, or its subtype."""
        result = self._result or {}
        for key in (
            "subtype",
            "terminal_reason",
            "api_error_status",
            "api_error_type",
            "api_error",
        ):
            if result.get(key) is not None:
                meta[key] = result[key]
        errors = [e for e in list_field(result, "errors") if isinstance(e, str) and e]
        return (
            "; ".join(errors)
            or str_field(result, "result")
            or self._error_hint
            or f"claude reported {str_field(result, 'subtype') or 'an error'}"
        )

    def run_metadata(self) -> dict[str, str]:
        """``Response.metadata``: the API retries the CLI made (``api_retries``, and the
        last one's ``last_retry_status`` and ``last_retry_error``), success or not."""
        retry = self._last_retry
        if not retry:
            return {}
        meta = {
            "api_retries": str(self._retries),
            "max_retries": str(int_field(retry, "max_retries")),
            "last_retry_error": str_field(retry, "error"),
        }
        status = retry.get("error_status")
        if isinstance(status, int) and not isinstance(status, bool):
            meta["last_retry_status"] = str(status)
        return meta

    def failure_context(self, meta: dict[str, Any], message: str, outcome: ProcessOutcome) -> str:
        """The last API retry, a limiting rate limit and a failed compaction, in the
        message and as metadata, whatever ended the run."""
        parts: list[str] = []
        retry = self._last_retry
        if retry:
            attempt, limit = int_field(retry, "attempt"), int_field(retry, "max_retries")
            status, error = retry.get("error_status"), str_field(retry, "error")
            meta.update(retry_attempt=attempt, max_retries=limit, last_retry_error=error)
            if isinstance(status, int) and not isinstance(status, bool):
                meta["last_retry_status"] = status
            last = f"HTTP {status}" if "last_retry_status" in meta else "no HTTP status"
            parts.append(f"{attempt} API retries of {limit}, last: {last} {error}".rstrip())
        if self._api_error:
            meta.setdefault("api_error", self._api_error)  # the result line's is more exact
        info = self._rate_limit
        status = str_field(info, "status")
        if status and status != "allowed":
            window, resets = str_field(info, "rateLimitType"), _when(info.get("resetsAt"))
            meta.update(rate_limit_status=status, rate_limit_type=window)
            if resets:
                meta["rate_limit_resets_at"] = resets
            for key, name in (
                ("overageStatus", "overage_status"),
                ("overageDisabledReason", "overage_disabled_reason"),
            ):
                if str_field(info, key):
                    meta[name] = str_field(info, key)
            parts.append(
                f"rate limit {status} ({window or 'unknown window'}"
                + (f", resets {resets})" if resets else ")")
            )
        if self._compaction:
            meta["compaction"] = self._compaction
            parts.append("context compaction failed")
        return "; ".join(parts)
