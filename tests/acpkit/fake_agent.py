"""A scripted ACP agent on the SDK's agent side, for the driver's hermetic tests.

The prompt's first word picks the behaviour (see ``Agent.prompt``); anything else
answers ``OK`` in two chunks after a thought, with token usage. A session opened with
``_meta.fake`` answers ``answer <json>`` with the ``_fake/answer`` extension
notification (a stand-in for an agent's native structured output).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import acp
from acp import schema


class FakeAgent:
    def __init__(self) -> None:
        self._conn: Any = None
        self._history: dict[str, list[str]] = {}
        self._cancelled: dict[str, asyncio.Event] = {}
        self._files: dict[str, Path] = {}
        self._meta: dict[str, Any] = {}
        self._opened: dict[str, int] = {}

    def on_connect(self, conn: Any) -> None:
        self._conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> schema.InitializeResponse:
        if os.environ.get("FAKE_AGENT_STUCK_START"):  # never ready: a deadline must end it
            await asyncio.Event().wait()
        return schema.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=schema.AgentCapabilities(
                load_session=not os.environ.get("FAKE_AGENT_NO_LOAD")
            ),
            agent_info=schema.Implementation(name="fake-agent", version="1.0.0"),
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> schema.NewSessionResponse:
        session_id = f"s-{uuid.uuid4().hex[:8]}"
        self._history[session_id] = []
        self._files[session_id] = Path(cwd) / f".fake-agent-{session_id}.json"
        self._opened_with(session_id, kwargs)
        return schema.NewSessionResponse(session_id=session_id)

    def _opened_with(self, session_id: str, meta: dict[str, Any]) -> None:
        self._meta[session_id] = meta.get("fake")
        self._opened[session_id] = self._opened.get(session_id, 0) + 1

    async def load_session(self, cwd: str, session_id: str, **kwargs: Any) -> None:
        """Sessions are kept in files under their cwd, so another process can load them;
        the history is replayed as user messages, as real agents do."""
        path = Path(cwd) / f".fake-agent-{session_id}.json"
        if not path.is_file():
            raise acp.RequestError(-32603, f"no session {session_id}")
        self._files[session_id] = path
        self._opened_with(session_id, kwargs)
        self._history[session_id] = json.loads(path.read_text())
        for text in self._history[session_id]:
            await self._say(session_id, acp.update_user_message_text(text))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self._cancelled.setdefault(session_id, asyncio.Event()).set()

    async def _say(self, session_id: str, update: Any) -> None:
        await self._conn.session_update(session_id=session_id, update=update)

    async def prompt(
        self, prompt: list[Any], session_id: str, **kwargs: Any
    ) -> schema.PromptResponse:
        text = "".join(getattr(block, "text", "") for block in prompt)
        self._history.setdefault(session_id, []).append(text)
        if session_id in self._files:
            self._files[session_id].write_text(json.dumps(self._history[session_id]))
        word = text.split()[0] if text.split() else ""

        async def say(update: Any) -> None:
            await self._say(session_id, update)

        if word == "crash":
            await say(acp.update_agent_message_text("about to"))
            sys.stderr.write("fake agent: crashing on purpose\n")
            sys.stderr.flush()
            os._exit(3)
        if word == "hang":
            event = self._cancelled.setdefault(session_id, asyncio.Event())
            event.clear()
            await say(acp.update_agent_message_text("waiting"))
            await event.wait()
            return schema.PromptResponse(stop_reason="cancelled")
        if word == "spawn":  # a grandchild in a session of its own, to be reaped
            subprocess.Popen(["sleep", "600"], start_new_session=True)
        if word == "refuse":
            return schema.PromptResponse(stop_reason="refusal")
        if word == "pid":
            await say(acp.update_agent_message_text(str(os.getpid())))
            return schema.PromptResponse(stop_reason="end_turn")
        if word == "answer":  # the JSON after the word, if the session was opened for it
            value = text.partition(" ")[2]
            if self._meta.get(session_id) is not None and value:
                answer = {"sessionId": session_id, "value": json.loads(value)}
                await self._conn.ext_notification("fake/answer", answer)
            return schema.PromptResponse(stop_reason="end_turn")
        if word == "meta":  # how the session was last opened, and how often
            opened = {"meta": self._meta.get(session_id), "opened": self._opened.get(session_id)}
            await say(acp.update_agent_message_text(json.dumps(opened, sort_keys=True)))
            return schema.PromptResponse(stop_reason="end_turn")
        if word == "history":
            await say(acp.update_agent_message_text(str(len(self._history[session_id]))))
            return schema.PromptResponse(stop_reason="end_turn")
        if word == "plan":
            await say(
                acp.update_plan(
                    [
                        acp.plan_entry("read the code", status="completed"),
                        acp.plan_entry("fix the bug", status="in_progress"),
                    ]
                )
            )
        if word == "terminal":  # codex-acp: the output in _meta, no content
            await say(
                acp.start_tool_call(
                    "call-2", "ls", kind="execute", status="in_progress", raw_input={"cmd": "ls"}
                )
            )
            for chunk in ("a.txt\n", "b.txt\n"):
                meta = {"terminal_output_delta": {"data": chunk, "terminal_id": "call-2"}}
                await say(
                    schema.ToolCallProgress.model_validate(
                        {"sessionUpdate": "tool_call_update", "toolCallId": "call-2", "_meta": meta}
                    )
                )
            await say(acp.update_tool_call("call-2", status="completed"))
        if word == "exits":  # OpenCode: a command that exits 1 is a completed call
            await say(
                acp.start_tool_call(
                    "call-3",
                    "cat x",
                    kind="execute",
                    status="in_progress",
                    raw_input={"command": "cat x"},
                )
            )
            await say(
                acp.update_tool_call(
                    "call-3",
                    status="completed",
                    content=[acp.tool_content(acp.text_block("cat: x: No such file\n"))],
                    raw_output={"output": "cat: x: No such file\n", "metadata": {"exit": 1}},
                )
            )
            # Copilot CLI: the exit code in a part of rawOutput's contents.
            await say(
                acp.start_tool_call(
                    "call-4",
                    "false",
                    kind="execute",
                    status="in_progress",
                    raw_input={"command": "false"},
                )
            )
            exited = {"contents": [{"type": "shell_exit", "shellId": "0", "exitCode": 2}]}
            await say(acp.update_tool_call("call-4", status="completed", raw_output=exited))
        if word == "inclusive":  # Copilot CLI: input includes cache reads, total says so
            await say(acp.update_agent_message_text("OK"))
            usage = schema.Usage(
                input_tokens=45, output_tokens=7, total_tokens=52, cached_read_tokens=20
            )
            return schema.PromptResponse(stop_reason="end_turn", usage=usage)
        if word == "metausage":  # Qwen Code: each model call's tokens on a message chunk
            for tokens in (
                {"inputTokens": 20, "outputTokens": 5, "totalTokens": 25},
                {"inputTokens": 45, "outputTokens": 7, "totalTokens": 52, "cachedReadTokens": 20},
            ):
                said = acp.update_agent_message_text("")
                said.field_meta = {"usage": tokens}
                await say(said)
            await say(acp.update_agent_message_text("OK"))
            return schema.PromptResponse(stop_reason="end_turn")
        if word in ("tool", "permission"):
            await say(acp.start_tool_call("call-1", "Run ls", kind="execute", status="pending"))
            if word == "permission":
                options = [
                    schema.PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
                    schema.PermissionOption(option_id="always", name="Always", kind="allow_always"),
                    schema.PermissionOption(option_id="no", name="Reject", kind="reject_once"),
                    schema.PermissionOption(option_id="never", name="Never", kind="reject_always"),
                ]
                call = schema.ToolCallUpdate(
                    tool_call_id="call-1", title="Run ls", raw_input={"command": "ls"}
                )
                answer = await self._conn.request_permission(
                    session_id=session_id, tool_call=call, options=options
                )
                chosen = getattr(answer.outcome, "option_id", "cancelled")
                if chosen not in ("yes", "always"):
                    await say(acp.update_tool_call("call-1", status="failed"))
                    await say(acp.update_agent_message_text(f"denied:{chosen}"))
                    return schema.PromptResponse(stop_reason="end_turn")
            await say(
                acp.update_tool_call("call-1", status="in_progress", raw_input={"command": "ls"})
            )
            await say(
                acp.update_tool_call(
                    "call-1",
                    status="completed",
                    content=[acp.tool_content(acp.text_block("a.txt\n"))],
                    raw_output={"exit_code": 0},
                )
            )
        await say(acp.update_agent_thought_text("The user wants OK."))
        await say(acp.update_agent_message_text("O"))
        await say(acp.update_agent_message_text("K"))
        return schema.PromptResponse(
            stop_reason="end_turn",
            usage=schema.Usage(
                input_tokens=10, output_tokens=2, total_tokens=15, cached_read_tokens=3
            ),
        )


if __name__ == "__main__":
    asyncio.run(acp.run_agent(FakeAgent()))  # type: ignore[arg-type]
