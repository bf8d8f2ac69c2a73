"""Per-recording snapshots: a new CLI needs a parser and ``--snapshot-update``, no test edits.

A generated cli project gets recordings of a different CLI (a small Python fake with a
format of its own, recorded with ``adaptertest record``) and a parser for that format;
``python -m pytest --snapshot-update`` then rewrites the snapshots beside the
recordings, and the project's whole test run is green without one test file edited.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from adaptertest import clikit
from adaptertest._scaffold import project_names, render, write_project

FAKE_CLI = r"""
import json, sys
mode = sys.argv[1]
sid = {"ok": "toy-s-1", "tool": "toy-s-2", "fail": "toy-s-3"}[mode]
def say(**line):
    print(json.dumps(line), flush=True)
say(event="hello", sid=sid, model="toy-1")
if mode == "tool":
    say(event="tool", id="t1", name="read_file", args={"path": "README"})
    say(event="tool_done", id="t1", output="# toy")
    say(event="say", id="m1", text="It is called toy.")
    say(event="done", ok=True, sid=sid, answer="It is called toy.", tokens={"in": 40, "out": 6})
elif mode == "ok":
    say(event="say", id="m1", text="OK")
    say(event="done", ok=True, sid=sid, answer="OK", tokens={"in": 12, "out": 1})
else:
    say(event="say", id="m1", text="Trying.")
    say(event="done", ok=False, sid=sid, error="quota exhausted")
    sys.exit(1)
"""

TOY_PARSER = '''"""Parser of the toy CLI: ``{"event": ...}`` lines; ``done`` is the last."""

from __future__ import annotations

from typing import Any

from driver import TerminalPayload, TranscriptItem, TranscriptKind
from driver.clikit import JsonlParser, RunOutput, dict_field, int_field, make_usage, str_field

__all__ = ["ToyStreamParser"]


class ToyStreamParser(JsonlParser):
    """Turns the toy CLI's lines into payloads and items."""

    program = "toy"
    missing_terminal = "a done line"

    def __init__(self, out: RunOutput, *, model: str = "") -> None:
        super().__init__(out, model=model)
        self._done: dict[str, Any] | None = None
        self._last = ""

    def on_object(self, line: dict[str, Any], text: str) -> None:
        event = line.get("event")
        if event == "hello":
            self.model = str_field(line, "model") or self.model
            self._out.thread_id = str_field(line, "sid")
            self._out.item(
                TranscriptItem(
                    kind=TranscriptKind.INIT, model=self.model, session_id=str_field(line, "sid")
                )
            )
        elif event == "say" and str_field(line, "text"):
            self._last = str_field(line, "text")
            self._out.text(str_field(line, "id"), self._last)
            self._out.item(TranscriptItem(kind=TranscriptKind.ASSISTANT, text=self._last))
        elif event == "tool":
            tool_id, name = str_field(line, "id"), str_field(line, "name") or "tool"
            self._out.tool_start(tool_id, name, dict_field(line, "args"))
            self._out.item(
                TranscriptItem(kind=TranscriptKind.TOOL_CALL, tool_use_id=tool_id, tool_name=name)
            )
        elif event == "tool_done":
            tool_id, output = str_field(line, "id"), str_field(line, "output")
            self._out.tool_result(tool_id, {"output": output})
            self._out.item(
                TranscriptItem(kind=TranscriptKind.TOOL_RESULT, tool_use_id=tool_id, text=output)
            )
        elif event == "done":
            self._done = line
            self.terminal = TerminalPayload(event="done", raw_json=text)
            tokens = dict_field(line, "tokens")
            self.usage = make_usage(
                input_tokens=int_field(tokens, "in"),
                cached_input_tokens=0,
                output_tokens=int_field(tokens, "out"),
            )
            self._out.item(
                TranscriptItem(
                    kind=TranscriptKind.RESULT,
                    text=str_field(line, "answer") or str_field(line, "error"),
                    is_error=line.get("ok") is not True,
                    session_id=str_field(line, "sid"),
                    usage=self.usage,
                )
            )

    @property
    def succeeded(self) -> bool:
        return self._done is not None and self._done.get("ok") is True

    @property
    def resume_id(self) -> str:
        return str_field(self._done, "sid") if self._done is not None else ""

    def output(self) -> str:
        if self.succeeded and self._done is not None:
            return str_field(self._done, "answer") or self._last
        return self._last

    def reported_failure(self, meta: dict[str, Any]) -> str:
        return str_field(self._done or {}, "error") or "toy reported an error"
'''


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )


def _texts(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(folder.rglob("*.py"))
        if "__pycache__" not in p.parts
    }


@pytest.mark.slow
def test_a_new_cli_needs_only_a_parser_and_a_snapshot_update(tmp_path: Path) -> None:
    project = tmp_path / "toy_driver"
    write_project(project, render("cli", project_names("toy_driver")))
    fake = tmp_path / "toycli.py"
    fake.write_text(FAKE_CLI, encoding="utf-8")
    # The inner runs are plain pytest runs: none of an outer xdist worker's variables.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = str(project)
    env.pop("ADAPTERTEST_SHOW_DETAILS", None)
    recordings = project / "recordings"
    for name, mode in (
        ("success.jsonl", "ok"),
        ("tool_use.jsonl", "tool"),
        ("error.jsonl", "fail"),
    ):
        record = [sys.executable, "-m", "adaptertest", "record", str(recordings / name)]
        done = _run([*record, "--force", "--", sys.executable, str(fake), mode], tmp_path, env)
        assert done.returncode == (1 if mode == "fail" else 0), done.stderr
    (project / "toy_driver" / "_parser.py").write_text(TOY_PARSER, encoding="utf-8")
    tests_before = _texts(project / "tests")

    pytest_cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    stale = _run(pytest_cmd, project, env)
    assert stale.returncode == 1, stale.stdout[-3000:]
    assert "snapshot" in stale.stdout  # the old CLI's snapshots no longer match
    updated = _run([*pytest_cmd, "--snapshot-update"], project, env)
    assert updated.returncode == 0, updated.stdout[-3000:]
    green = _run(pytest_cmd, project, env)
    assert green.returncode == 0, green.stdout[-3000:]
    assert "snapshots passed" in green.stdout

    assert _texts(project / "tests") == tests_before
    snapshots = recordings / "snapshots" / "test_toy_driver"
    success = json.loads((snapshots / "test_recording[success.jsonl].json").read_text())
    assert success["transcript"] == ["init", "assistant", "result"]
    assert success["output"] == "OK"
    assert success["usage"] == {"input_tokens": 12, "output_tokens": 1}
    assert success["checkpoint"] == {"valid": True, "resume_id": "toy-s-1"}
    error = json.loads((snapshots / "test_recording[error.jsonl].json").read_text())
    assert error["failure"]["message"] == "quota exhausted"
    assert error["exit_code"] == 1
    assert clikit.recording_names(recordings) == ["error.jsonl", "success.jsonl", "tool_use.jsonl"]
