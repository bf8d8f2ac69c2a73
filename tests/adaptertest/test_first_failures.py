"""A driver author's first failures: a generated cli project broken on purpose.

Three faults a new author makes (the raw terminal line as output, no resume id, a
payload after the terminal one) each fail in the suite's words: every failure printed
starts with the clause it breaks, the conformance items come before the snapshot tests,
no frame of the kit or of anyio is shown, the live diagnostic is one short line, the
failed-run check's rerun hint selects that very test, and ``--snapshot-update`` writes
and deletes nothing while a clause fails.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from adaptertest._scaffold import project_names, render, write_project

PARSER = "acme_cli/_parser.py"
DRIVER = "acme_cli/_driver.py"

BREAKS: dict[str, list[tuple[str, str, str]]] = {
    # The result line's raw JSON as the output: a protocol dump (RSP-03).
    "protocol-dump-as-output": [
        (
            PARSER,
            "        self._result = line\n",
            "        self._result = line\n        self._raw = text\n",
        ),
        (
            PARSER,
            'return str_field(self._result, "text") or self._last_message',
            "return self._raw",
        ),
    ],
    # The session id of the result line is never read: no checkpoint (LIV-03).
    "no-resume-id": [
        (
            PARSER,
            'return str_field(self._result, "session_id") if self._result is not None else ""',
            'return ""',
        ),
    ],
    # One more text payload once run() has its response (EVT-02).
    "text-after-the-terminal": [
        (
            DRIVER,
            "    def stream_parser(",
            "    async def run(self, request: Request, sink: EventSink) -> Response:\n"
            "        response = await super().run(request, sink)\n"
            "        late = StreamPayload(kind=StreamKind.TEXT_CONTENT, delta='!')\n"
            "        sink.emit_stream(late)\n"
            "        return response\n\n"
            "    def stream_parser(",
        ),
        (
            DRIVER,
            "from __future__ import annotations\n",
            "from __future__ import annotations\n\n"
            "from driver import EventSink, Request, Response, StreamKind, StreamPayload\n",
        ),
    ],
}
CLAUSE_FIRST = re.compile(r"^[A-Z]{2,4}-\d{2}: ")
HEADER = re.compile(r"^_{3,} (.+?) _{3,}$")


def broken_project(root: Path, fault: str) -> Path:
    project = root / "acme_cli"
    files = render("cli", project_names("acme_cli"))
    for path, old, new in BREAKS[fault]:
        assert old in files[path], (fault, old)
        files[path] = files[path].replace(old, new, 1)
    write_project(project, files)
    return project


def run_pytest(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = str(project)
    env.pop("ADAPTERTEST_SHOW_DETAILS", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def failures(stdout: str) -> list[tuple[str, list[str]]]:
    """Each failure block of a pytest run: its title and its lines, in printed order."""
    body = stdout.split(" FAILURES ", 1)[1].split(" short test summary info ", 1)[0]
    blocks: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        header = HEADER.match(line)
        if header:
            blocks.append((header.group(1), []))
        elif blocks:
            blocks[-1][1].append(line)
    return blocks


def snapshot_files(project: Path) -> dict[str, bytes]:
    folder = project / "recordings" / "snapshots"
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*.json"))
    }


@pytest.mark.slow
@pytest.mark.parametrize("fault", list(BREAKS))
def test_a_broken_generated_driver_shows_the_clause_first(tmp_path: Path, fault: str) -> None:
    project = broken_project(tmp_path, fault)
    done = run_pytest(project)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    blocks = failures(done.stdout)
    assert blocks
    assert "TestAcmeCli" in blocks[0][0], [title for title, _ in blocks]  # the suite first
    for title, lines in blocks:
        assert CLAUSE_FIRST.match(lines[0]), (title, lines[:5])
    snapshot_tests = [lines for title, lines in blocks if title.startswith("test_recording[")]
    assert snapshot_tests, [title for title, _ in blocks]
    assert all(any(line.startswith("  rerun alone: pytest ") for line in b) for b in snapshot_tests)
    for frame in ("anyio/", "asyncio/", "adaptertest/clikit.py", "adaptertest/snapshot.py"):
        assert frame not in done.stdout, frame
    assert "--snapshot-update to delete unused snapshots" not in done.stdout
    assert "--snapshot-update is held back while one fails" in done.stdout
    diagnostics = [line for line in done.stdout.splitlines() if "note: live diagnostic" in line]
    assert diagnostics
    assert all(len(line) < 300 and "{" not in line for line in diagnostics), diagnostics


@pytest.mark.slow
def test_the_failed_run_checks_rerun_hint_selects_the_failing_test(tmp_path: Path) -> None:
    project = broken_project(tmp_path, "protocol-dump-as-output")
    done = run_pytest(project, "tests/test_conformance.py", "-k", "FailedRuns")
    assert done.returncode == 1, done.stdout[-3000:]
    (_, lines), *_ = failures(done.stdout)
    hint = next(line for line in lines if line.startswith("  rerun alone: "))
    command = shlex.split(hint.removeprefix("  rerun alone: "))
    assert command[0] == "pytest", hint
    assert "::TestAcmeCliFailedRuns::" in command[1], hint
    again = run_pytest(project, *command[1:])
    assert again.returncode == 1
    assert re.search(r"^1 failed in ", again.stdout, re.M), again.stdout[-2000:]


@pytest.mark.slow
def test_snapshot_update_leaves_reviewed_snapshots_alone_while_a_clause_fails(
    tmp_path: Path,
) -> None:
    project = broken_project(tmp_path, "protocol-dump-as-output")
    reviewed = snapshot_files(project)
    done = run_pytest(project, "--snapshot-update")
    assert done.returncode == 1, done.stdout[-3000:]
    assert snapshot_files(project) == reviewed
    assert "adaptertest: --snapshot-update held back: " in done.stdout
    assert "deleted" not in done.stdout.split("held back: ", 1)[1].split("\n", 1)[1]
    # Only the snapshot tests, with the clause failing among them: still nothing written.
    done = run_pytest(project, "tests/test_acme_cli_driver.py", "--snapshot-update")
    assert done.returncode == 1, done.stdout[-3000:]
    assert snapshot_files(project) == reviewed


def test_a_changed_result_names_each_field_with_its_old_and_new_value(tmp_path: Path) -> None:
    """No clause broken, the result changed: the failure lists the fields, the snapshot's
    value as the expected one, and says what --snapshot-update would do; no frames."""
    project = tmp_path / "acme_cli"
    files = render("cli", project_names("acme_cli"))
    old = '"text":"The project is called demo."'
    assert old in files["recordings/tool_use.jsonl"]
    files["recordings/tool_use.jsonl"] = files["recordings/tool_use.jsonl"].replace(
        old, '"text":"The project is called demo, version 2."'
    )
    write_project(project, files)
    done = run_pytest(project, "tests/test_acme_cli_driver.py", "-k", "test_recording")
    assert done.returncode == 1, done.stdout[-3000:]
    ((title, lines),) = failures(done.stdout)
    assert title == "test_recording[tool_use.jsonl]"
    assert lines[0].startswith("what the driver made of it differs from its reviewed snapshot")
    assert (
        "  output is 'The project is called demo, version 2.', "
        "expected 'The project is called demo.'" in lines
    )
    assert any("--snapshot-update` rewrites the snapshots" in line for line in lines)
    assert (
        "  rerun alone: pytest 'tests/test_acme_cli_driver.py::test_recording[tool_use.jsonl]'"
        in lines
    )
    assert "clikit.py" not in done.stdout


@pytest.mark.slow
def test_a_recording_rule_broken_without_a_clause_also_keeps_the_snapshots(
    tmp_path: Path,
) -> None:
    """The driver loses the CLI's stderr: no clause names it, the recording check does;
    its snapshot was never compared, so --snapshot-update neither deletes nor rewrites."""
    project = tmp_path / "acme_cli"
    files = render("cli", project_names("acme_cli"))
    files[DRIVER] = (
        files[DRIVER]
        .replace(
            "    def stream_parser(",
            "    async def run(self, request: Request, sink: EventSink) -> Response:\n"
            "        response = await super().run(request, sink)\n"
            "        assert response.raw_streams is not None\n"
            "        raw = response.raw_streams.model_copy(update={'stderr': b'lost'})\n"
            "        return response.model_copy(update={'raw_streams': raw})\n\n"
            "    def stream_parser(",
            1,
        )
        .replace(
            "from __future__ import annotations\n",
            "from __future__ import annotations\n\n"
            "from driver import EventSink, Request, Response\n",
            1,
        )
    )
    write_project(project, files)
    reviewed = snapshot_files(project)
    done = run_pytest(project, "tests/test_acme_cli_driver.py", "--snapshot-update")
    assert done.returncode == 1, done.stdout[-3000:]
    assert "raw_streams.stderr is 4 bytes" in done.stdout
    assert "held back" in done.stdout
    assert "deleted" not in done.stdout.split("snapshot report summary", 1)[-1]
    assert snapshot_files(project) == reviewed


def test_a_shared_check_that_fails_shows_the_tests_line_not_the_kits(tmp_path: Path) -> None:
    """The checks of adaptertest.clikit hide their own frames: a failing one points at
    the line of the project's test that called it."""
    project = tmp_path / "acme_cli"
    files = render("cli", project_names("acme_cli"))
    old = '        elif kind == "result":\n'
    assert old in files[PARSER]
    files[PARSER] = files[PARSER].replace(
        old, '        elif kind == "progress":\n            self._out.text("p", "busy")\n' + old, 1
    )
    write_project(project, files)
    done = run_pytest(project, "tests/test_acme_cli_driver.py", "-k", "odd_lines")
    assert done.returncode == 1, done.stdout[-3000:]
    ((title, lines),) = failures(done.stdout)
    assert title == "test_parser_survives_corrupt_and_odd_lines"
    assert any(
        line.startswith(">       testing.check_parser_survives_odd_lines(") for line in lines
    )
    assert "adaptertest/clikit.py" not in done.stdout
