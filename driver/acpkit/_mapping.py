"""``session/update`` notifications of one turn as stream payloads and transcript items.

The table (docs/acp.md has it for readers):

- ``agent_message_chunk``: text deltas of one ``text.*`` block per ACP message id (a
  new block when the id changes or something else came in between); an ``assistant``
  item when the block closes.
- ``agent_thought_chunk``: the same as ``reasoning.*`` blocks and ``thinking`` items.
- ``tool_call``: ``tool_call.start`` named by the announced title, with the call's
  ``rawInput`` as its arguments, and a ``tool_call`` item. A call announced without input
  (none or ``{}``, ``pending``) starts at its first update that brings input or a status
  past pending, or at its permission request.
- ``tool_call_update``: ``completed``/``failed`` close the call with
  ``tool_call.result`` (``status``, the text of its content, ``rawOutput``) and a
  ``tool_result`` item; an update of a call never announced (Gemini CLI announces
  permission-gated calls only by updates) starts it first. A call whose content has no
  text gets the command output its updates streamed in ``_meta`` (codex-acp); a result is
  an error when the call failed or its command reports a non-zero exit code.
- ``plan``: ``todo.updated`` with the whole list when the run asked for todos (and the
  descriptor declares them), else the vendor payload ``acp.plan``.
- ``usage_update``: kept; its cost becomes ``Usage.estimated_cost_milli``.
- ``_meta.usage`` on message chunks (Qwen Code reports each model call's tokens there and
  none in the prompt's answer): summed, the turn's usage when the answer has none.
- every other kind (``user_message_chunk`` echoes, ``available_commands_update``,
  ``current_mode_update``, ``config_option_update``, ``session_info_update``,
  ``plan_update``, ``plan_removed``): the vendor payload ``acp.<kind>`` with the update's
  fields, for a host that wants them.
"""

from __future__ import annotations

from typing import Any

from acp import schema

from driver import (
    StreamKind,
    StreamPayload,
    TodoItem,
    TodoSnapshot,
    TodoSource,
    TodoStatus,
    TranscriptItem,
    TranscriptKind,
    Usage,
)
from driver.clikit import BlockKind, RunOutput

__all__ = ["TurnMapper", "acp_usage", "content_text"]

_TODO_STATUS = {
    "pending": TodoStatus.PENDING,
    "in_progress": TodoStatus.IN_PROGRESS,
    "completed": TodoStatus.COMPLETED,
}


def content_text(content: object) -> str:
    """The text of a content block, or of a tool call's content list; ``""`` for
    images, audio, diffs and terminals."""
    if isinstance(content, list):
        return "".join(content_text(item) for item in content)
    if isinstance(content, schema.ContentToolCallContent):
        return content_text(content.content)
    if isinstance(content, schema.TextContentBlock):
        return content.text
    if isinstance(content, schema.EmbeddedResourceContentBlock):
        resource = content.resource
        return resource.text if isinstance(resource, schema.TextResourceContents) else ""
    return ""


def acp_usage(usage: schema.Usage | None, cost: schema.Cost | None) -> Usage | None:
    """The turn's token counts in the kit's meaning (input includes cache reads and
    writes; the cost in thousandths of a dollar when reported in USD).

    Agents differ on ACP's ``inputTokens``: claude-agent-acp counts cache reads apart
    (its total is input + cache + output), Copilot CLI and Qwen Code include them (their
    total is input + output + thought). The total tells which; cache is added only when
    it is apart."""
    if usage is None and cost is None:
        return None
    milli = round(cost.amount * 1000) if cost is not None and cost.currency == "USD" else 0
    if usage is None:
        return Usage(estimated_cost_milli=milli)
    cached_read = usage.cached_read_tokens or 0
    cached_write = usage.cached_write_tokens or 0
    given, output = usage.input_tokens, usage.output_tokens
    inclusive = usage.total_tokens == given + output + (usage.thought_tokens or 0)
    return Usage(
        input_tokens=given if inclusive else given + cached_read + cached_write,
        cached_input_tokens=cached_read,
        output_tokens=output,
        estimated_cost_milli=milli,
    )


_TERMINAL_OUTPUT_KEYS = ("terminal_output_delta", "terminal_output")


def terminal_output(meta: object) -> str:
    """The command output chunk an update carries in its ``_meta``: codex-acp streams a
    shell call's output there (``terminal_output_delta``, or Zed's ``terminal_output``),
    not in ``content``, to a client that offers no terminal."""
    if not isinstance(meta, dict):
        return ""
    for key in _TERMINAL_OUTPUT_KEYS:
        chunk = meta.get(key)
        if isinstance(chunk, dict) and isinstance(chunk.get("data"), str):
            return str(chunk["data"])
    return ""


def exit_code(update: schema.ToolCallStart | schema.ToolCallProgress) -> int | None:
    """The exit code a finished command reports, if any: agents mark a command that exited
    non-zero ``completed`` (the call did complete) and say how it ended in ``rawOutput``
    (``exit_code``; OpenCode's ``metadata.exit``; Copilot CLI's ``contents`` part of type
    ``shell_exit``) or in ``_meta.terminal_exit`` (codex-acp)."""
    raw = update.raw_output if isinstance(update.raw_output, dict) else {}
    meta = update.field_meta if isinstance(update.field_meta, dict) else {}
    nested = raw.get("metadata")
    ended = meta.get("terminal_exit")
    parts = raw.get("contents")
    shell_exits = [
        part.get("exitCode")
        for part in (parts if isinstance(parts, list) else [])
        if isinstance(part, dict) and part.get("type") == "shell_exit"
    ]
    for found in (
        raw.get("exit_code"),
        raw.get("exitCode"),
        nested.get("exit") if isinstance(nested, dict) else None,
        ended.get("exit_code") if isinstance(ended, dict) else None,
        *shell_exits,
    ):
        if isinstance(found, int) and not isinstance(found, bool):
            return found
    return None


def meta_usage(meta: object) -> Usage | None:
    """The tokens of one model call an update carries in ``_meta.usage`` with ACP's
    field names (Qwen Code), read as :func:`acp_usage` reads the prompt answer's."""
    usage = meta.get("usage") if isinstance(meta, dict) else None
    if not isinstance(usage, dict):
        return None
    try:
        return acp_usage(schema.Usage.model_validate(usage), None)
    except ValueError:
        return None


def _fields(update: Any) -> dict[str, Any]:
    dumped = update.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dumped if isinstance(dumped, dict) else {}


def _args(raw_input: object) -> dict[str, Any]:
    if raw_input is None:
        return {}
    return dict(raw_input) if isinstance(raw_input, dict) else {"input": raw_input}


class TurnMapper:
    """Applies one turn's updates to a run's :class:`~driver.clikit.RunOutput`.

    ``todos``: the run asked for todo snapshots and the driver declares them.
    """

    def __init__(self, out: RunOutput, *, todos: bool) -> None:
        self._out = out
        self._todos = todos
        self._block: tuple[BlockKind, str, str] | None = None
        """The open block: its kind, the ACP message id it belongs to, its id here."""
        self._block_text: list[str] = []
        self._blocks = 0
        self._last_text = ""
        self._announced: dict[str, schema.ToolCallStart | schema.ToolCallProgress] = {}
        self._streamed: dict[str, list[str]] = {}
        """Command output each call's updates carried in ``_meta``, by tool call id."""
        self._revision = 0
        self.cost: schema.Cost | None = None
        self._chunk_usage: list[Usage] = []
        self.context_used = -1

    # -- text and reasoning -----------------------------------------------------------

    def _chunk(self, kind: BlockKind, update: schema.AgentMessageChunk | Any) -> None:
        text = content_text(update.content)
        if not text:
            return
        acp_id = update.message_id or ""
        if self._block is not None and (self._block[0] != kind or self._block[1] != acp_id):
            self.close_block()
        if self._block is None:
            self._blocks += 1
            wanted = acp_id or f"{kind}-{self._blocks}"
            self._block = (kind, acp_id, self._out.block_start(kind, wanted))
            self._block_text = []
        self._block_text.append(text)
        self._out.block_delta(self._block[2], text)

    def close_block(self) -> None:
        """End the open text or reasoning block and record its transcript item."""
        if self._block is None:
            return
        kind, _, message_id = self._block
        self._block = None
        self._out.block_end(message_id)
        text = "".join(self._block_text)
        if kind == "text":
            self._last_text = text
            self._out.item(TranscriptItem(kind=TranscriptKind.ASSISTANT, text=text))
        else:
            self._out.item(TranscriptItem(kind=TranscriptKind.THINKING, text=text))

    def output(self) -> str:
        """The turn's answer: its last text block."""
        return self._last_text

    # -- tool calls -------------------------------------------------------------------

    def start_tool(self, call: schema.ToolCallStart | schema.ToolCallUpdate) -> None:
        """Open ``call`` (once) with what is known of it; also used for a call that a
        permission request names before any update did."""
        tool_id = call.tool_call_id
        if not tool_id or self._out.tool_started(tool_id):
            return
        self.close_block()
        known = self._announced.pop(tool_id, None)
        raw_input = call.raw_input if call.raw_input else getattr(known, "raw_input", None)
        # The title the call was announced with names the tool ("Terminal"); later titles
        # tend to describe the invocation ("touch note.txt").
        name = (known.title if known is not None else None) or call.title or call.kind or "tool"
        args = _args(raw_input)
        self._out.tool_start(tool_id, name, args)
        self._out.item(
            TranscriptItem(
                kind=TranscriptKind.TOOL_CALL, tool_use_id=tool_id, tool_name=name, input=args
            )
        )

    def _tool_call(self, update: schema.ToolCallStart) -> None:
        if not update.raw_input and update.status in (None, "pending"):
            self._announced[update.tool_call_id] = update  # wait for its input
            return
        self.start_tool(update)
        self._tool_progress(update)

    def _tool_progress(self, update: schema.ToolCallStart | schema.ToolCallProgress) -> None:
        tool_id = update.tool_call_id
        chunk = terminal_output(update.field_meta)
        if chunk:
            self._streamed.setdefault(tool_id, []).append(chunk)
        if not self._out.tool_started(tool_id):
            if not update.raw_input and update.status in (None, "pending"):
                if tool_id not in self._announced:
                    self._announced[tool_id] = update
                return
            self.start_tool(update)
        if update.status not in ("completed", "failed"):
            return
        result: dict[str, Any] = {"status": update.status}
        text = content_text(update.content or []) or "".join(self._streamed.pop(tool_id, []))
        if text:
            result["content"] = text
        if update.raw_output is not None:
            result["raw_output"] = update.raw_output
        self._out.tool_result(tool_id, result)
        self._out.item(
            TranscriptItem(
                kind=TranscriptKind.TOOL_RESULT,
                tool_use_id=tool_id,
                text=text,
                is_error=update.status == "failed" or exit_code(update) not in (None, 0),
                data={"raw_output": update.raw_output} if update.raw_output is not None else {},
            )
        )

    def finish_tools(self) -> None:
        """At the end of the turn: start calls that were only announced, so none is lost."""
        for call in list(self._announced.values()):
            self.start_tool(call)

    # -- the rest ---------------------------------------------------------------------

    def _plan(self, update: schema.AgentPlanUpdate) -> None:
        if not self._todos:
            self._out.vendor("acp.plan", _fields(update))
            return
        self._revision += 1
        items = [
            TodoItem(
                id=f"plan-{index}",
                content=entry.content,
                status=_TODO_STATUS.get(entry.status, TodoStatus.PENDING),
                synthetic_id=True,
            )
            for index, entry in enumerate(update.entries, start=1)
        ]
        snapshot = TodoSnapshot(items=items, source=TodoSource.PLAN_UPDATE, revision=self._revision)
        self._out.stream(StreamPayload(kind=StreamKind.TODO_UPDATED, todo=snapshot))

    def usage(self, answered: schema.Usage | None) -> Usage | None:
        """The turn's usage: the prompt answer's, else what its chunks reported."""
        if answered is not None or not self._chunk_usage:
            return acp_usage(answered, self.cost)
        found = acp_usage(None, self.cost) or Usage()
        return found.model_copy(
            update={
                "input_tokens": sum(u.input_tokens for u in self._chunk_usage),
                "cached_input_tokens": sum(u.cached_input_tokens for u in self._chunk_usage),
                "output_tokens": sum(u.output_tokens for u in self._chunk_usage),
            }
        )

    def apply(self, update: Any) -> None:
        """Map one update (any kind; unknown ones become vendor payloads)."""
        if isinstance(update, (schema.AgentMessageChunk, schema.AgentThoughtChunk)):
            reported = meta_usage(update.field_meta)
            if reported is not None:
                self._chunk_usage.append(reported)
        if isinstance(update, schema.AgentMessageChunk):
            self._chunk("text", update)
        elif isinstance(update, schema.AgentThoughtChunk):
            self._chunk("reasoning", update)
        elif isinstance(update, schema.ToolCallStart):
            self._tool_call(update)
        elif isinstance(update, schema.ToolCallProgress):
            self._tool_progress(update)
        elif isinstance(update, schema.AgentPlanUpdate):
            self._plan(update)
        elif isinstance(update, schema.UsageUpdate):
            self.context_used = update.used
            if update.cost is not None:
                self.cost = update.cost
            self._out.vendor("acp.usage_update", _fields(update))
        else:
            kind = getattr(update, "session_update", "") or "update"
            self._out.vendor(f"acp.{kind}", _fields(update))
