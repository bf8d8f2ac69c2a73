"""Test support for drivers built on :mod:`driver.clikit`: replays and shared checks.

Each driver's test file keeps its own data (the recordings' expected cases, its
command line, its declarations) and calls the ``check_*`` functions here from
its own test functions, so every driver runs every check. Nothing here needs a
real CLI: the command is the kit's replay stand-in, which writes a recording to
stdout and exits with a chosen code. Needs pytest; ``driver.clikit`` itself does
not import this module.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Literal, NoReturn, Protocol, TypeVar

import anyio
import pytest
from pydantic import ValidationError

import adaptertest
from adaptertest import (
    CLAUSES,
    ClauseStatus,
    ConformanceReport,
    Level,
    Options,
    RecordingSink,
    recording,
)
from adaptertest.dft import result_differences
from adaptertest.liv import verify_live_checkpoint
from adaptertest.options import Backend
from adaptertest.pytest_plugin import hold_snapshots
from adaptertest.so import (
    STRUCTURED_SCHEMA,
    verify_structured_output_descriptor,
    verify_structured_output_value,
)
from adaptertest.so import structured_request as so_structured_request
from driver import (
    SESSION_PARAM_CWD,
    SESSION_PARAM_PROFILE_FINGERPRINT,
    EnvironmentStatus,
    InvalidDriverConfigError,
    OutputFormat,
    Request,
    Response,
    RunEventType,
    SessionState,
    StreamCapability,
    StreamKind,
    StructuredOutput,
    StructuredOutputInvalidPolicy,
    StructuredOutputSource,
    SystemPromptUnsupportedError,
    SystemPromptUnsupportedReason,
)
from driver.clikit._config import CLIConfig
from driver.clikit._driver import CLIDriver
from driver.clikit._emit import RunOutput
from driver.clikit._jsonl import JsonlParser
from driver.clikit._process import LineFramer

__all__ = [
    "BACKENDS",
    "BLOCK_STREAMING",
    "LIVE_RUN_CLAUSES",
    "REASONING",
    "REPLAY_SETTINGS",
    "TERMINALS",
    "TEXT",
    "TOOL",
    "DriverClass",
    "FailedRecording",
    "Replay",
    "ReplaySettings",
    "appended_argv",
    "check_append_refused",
    "check_config_fingerprint_follows_the_config",
    "check_config_validation",
    "check_conformance_level",
    "check_descriptor_and_stream_capability",
    "check_environment_probe",
    "check_expected_failure_is_clean",
    "check_failed_recording",
    "check_failed_run_fails_only_liv01",
    "check_parser_survives_odd_lines",
    "check_recording",
    "check_request_config_wins",
    "check_streaming_off",
    "check_structured_answer",
    "check_structured_refused",
    "conformance_options",
    "failed_run_tests",
    "full_options",
    "live_config",
    "parse_output",
    "passed_argv",
    "recorded_output",
    "recording_names",
    "recording_result",
    "recording_snapshot",
    "recordings_dir",
    "replay_by_flag_command",
    "replay_command",
    "replay_config",
    "replay_settings",
    "structural_violations",
    "structured_request",
]

TERMINALS = {StreamKind.RUN_FINISHED, StreamKind.RUN_ERROR}
TEXT = ("text.start", "text.content", "text.end")
REASONING = ("reasoning.start", "reasoning.content", "reasoning.end")
TOOL = ("tool_call.start", "tool_call.result", "tool_call.end")

BLOCK_STREAMING = StreamCapability(native=True, reasoning=True)
"""The stream capability of a driver that streams whole text and reasoning blocks."""

BACKENDS: tuple[Backend, ...] = ("asyncio", "trio")
"""The anyio backends a recording is replayed on."""

LIVE_RUN_CLAUSES = [c.id for c in CLAUSES if "live_run" in c.probes]
"""Clauses the live run judges; the hermetic ones are covered by ``adaptertest.test_driver``."""

ConfigT = TypeVar("ConfigT", bound=CLIConfig)
ParserT = TypeVar("ParserT", bound=JsonlParser)
DriverT = TypeVar("DriverT", bound=CLIDriver[Any])


class DriverClass(Protocol[ConfigT]):
    """A driver class: built with its config, or with none for the defaults."""

    def __call__(self, config: ConfigT | None = None) -> CLIDriver[ConfigT]: ...


class _Foreign:
    """A config of nobody's type."""


# -- recordings and the replay stand-in --------------------------------------------------------


def recorded_output(path: Path) -> tuple[bytes, bytes]:
    """What a recording makes the CLI write, as ``(stdout, stderr)``: the streams of an
    ``adaptertest record`` file, or the bytes of a plain JSONL transcript as stdout."""
    data = path.read_bytes()
    if recording.is_recording(data.split(b"\n", 1)[0], source=str(path)):
        recorded = recording.loads(data, source=str(path))
        return recorded.stdout, recorded.stderr
    return data, b""


def recordings_dir(test_file: str) -> Path:
    """The ``recordings`` folder beside the ``tests`` folder holding ``test_file``."""
    return Path(test_file).resolve().parent.parent / "recordings"


def replay_command(
    recordings: Path,
    recording: str,
    *,
    exit_code: int | None = 0,
    stderr: str | None = None,
    record_argv: Path | None = None,
    record_stdin: Path | None = None,
    kill: str = "",
) -> tuple[str, ...]:
    """A command that replays a recording as if it were the CLI; the driver's own
    arguments go after the final ``--`` and are ignored (or recorded). ``exit_code``
    None keeps a recording's own exit status (0 for plain JSONL).

    ``kill`` (a signal name such as ``"SIGTERM"``) ends the stand-in with that
    signal once the recording is written, as a CLI killed before its terminal
    line would end. ``record_argv`` and ``record_stdin`` name files that get the
    driver's arguments (JSON) and what it wrote to standard input.
    """
    options = _replay_options(recordings, exit_code, stderr, record_argv)
    if record_stdin is not None:
        options += ["--record-stdin", str(record_stdin)]
    if not kill:
        return (
            sys.executable,
            "-m",
            "adaptertest",
            "replay",
            str(recordings / recording),
            *options,
            "--",
        )
    return _stand_in(str(recordings / recording), options, kill=kill)


def replay_by_flag_command(
    recordings: Path, *, flag: str, with_flag: str, without_flag: str
) -> tuple[str, ...]:
    """A stand-in that replays ``with_flag`` when the driver passes ``flag`` (e.g. the
    structured-output flag) and ``without_flag`` otherwise, so one config answers both
    the live run and the live structured probe with a recording of its own kind."""
    return _stand_in(
        str(recordings / without_flag),
        _replay_options(recordings, 0, None, None),
        flag=flag,
        with_flag=str(recordings / with_flag),
    )


def _replay_options(
    recordings: Path, exit_code: int | None, stderr: str | None, record_argv: Path | None
) -> list[str]:
    options = [] if exit_code is None else ["--exit-code", str(exit_code)]
    if stderr is not None:
        options += ["--stderr", str(recordings / stderr)]
    if record_argv is not None:
        options += ["--record-argv", str(record_argv)]
    return options


# The replay stand-in with a choice of recording and an optional signal at the end; it
# imports only the standard library and the replay module, so it starts fast.
_STAND_IN = """\
import json, os, signal, sys
from adaptertest.replay import main
spec, passed = json.loads(sys.argv[1]), sys.argv[3:]
chosen = spec["with_flag"] if spec["flag"] and spec["flag"] in passed else spec["recording"]
status = main([chosen, *spec["options"], "--", *passed])
if spec["kill"]:
    sys.stdout.flush()
    os.kill(os.getpid(), getattr(signal, spec["kill"]))
sys.exit(status)
"""


def _stand_in(
    recording: str, options: list[str], *, kill: str = "", flag: str = "", with_flag: str = ""
) -> tuple[str, ...]:
    spec = {
        "recording": recording,
        "options": options,
        "kill": kill,
        "flag": flag,
        "with_flag": with_flag,
    }
    return (sys.executable, "-c", _STAND_IN, json.dumps(spec), "--")


REPLAY_SETTINGS = "replay.json"
"""The optional file, in a recordings folder, of per-recording exit codes and signals."""
_SETTINGS_KEYS = frozenset({"exit_code", "signal", "stderr"})


def recording_names(recordings: Path) -> list[str]:
    """Every recording in the folder (``*.jsonl``), sorted: what the tests parametrize
    over, so a new recording is picked up without editing a test."""
    if not recordings.is_dir():
        raise FileNotFoundError(f"recordings folder not found: {recordings}")
    return sorted(path.name for path in recordings.glob("*.jsonl"))


@dataclass(frozen=True)
class ReplaySettings:
    """How the replay stand-in ends after playing one recording."""

    exit_code: int | None = None
    """The exit status; None: a recording's own (``adaptertest record``), else 0."""
    signal: str = ""
    """A signal name (``SIGTERM``): the stand-in kills itself with it, as a killed CLI."""
    stderr: str | None = None
    """A file in the recordings folder replayed as stderr."""


def replay_settings(recordings: Path, recording: str) -> ReplaySettings:
    """The exit code, signal and stderr of ``recording``: ``replay.json``'s entry, and
    ``NAME.stderr.txt`` beside the recording unless the entry names another file."""
    entry: dict[str, Any] = {}
    settings = recordings / REPLAY_SETTINGS
    if settings.is_file():
        table = json.loads(settings.read_text(encoding="utf-8"))
        if not isinstance(table, dict):
            raise ValueError(f"{settings}: expected an object of recording names")
        entry = table.get(recording, {})
        if not isinstance(entry, dict) or not set(entry) <= _SETTINGS_KEYS:
            raise ValueError(
                f"{settings}: {recording!r} takes an object with keys from "
                f"{sorted(_SETTINGS_KEYS)}, got {entry!r}"
            )
    stderr = entry.get("stderr")
    if stderr is None:
        beside = f"{recording.removesuffix('.jsonl')}.stderr.txt"
        stderr = beside if (recordings / beside).is_file() else None
    code = entry.get("exit_code")
    return ReplaySettings(
        exit_code=None if code is None else int(code),
        signal=str(entry.get("signal", "")),
        stderr=stderr,
    )


@dataclass(frozen=True)
class Replay(Generic[DriverT]):
    """A driver's recordings folder, and how to build the driver around a command. Each
    recording is replayed as :func:`replay_settings` says (its exit code, signal and
    stderr)."""

    recordings: Path
    driver: Callable[[tuple[str, ...]], DriverT]

    def settings(self, recording: str) -> ReplaySettings:
        """How ``recording`` is replayed (:func:`replay_settings`)."""
        return replay_settings(self.recordings, recording)

    def command(
        self,
        recording: str,
        *,
        exit_code: int | None = 0,
        stderr: str | None = None,
        record_argv: Path | None = None,
        record_stdin: Path | None = None,
        kill: str = "",
    ) -> tuple[str, ...]:
        """:func:`replay_command` on this driver's recordings."""
        return replay_command(
            self.recordings,
            recording,
            exit_code=exit_code,
            stderr=stderr,
            record_argv=record_argv,
            record_stdin=record_stdin,
            kill=kill,
        )

    async def run(
        self,
        recording: str,
        *,
        streaming: bool = True,
        request: Request | None = None,
        record_argv: Path | None = None,
    ) -> tuple[Response, RecordingSink, DriverT]:
        """Run a driver whose CLI replays ``recording`` with its exit code and stderr."""
        how = self.settings(recording)
        command = self.command(
            recording,
            exit_code=0 if how.signal else how.exit_code,
            stderr=how.stderr,
            record_argv=record_argv,
            kill=how.signal,
        )
        driver = self.driver(command)
        sink = RecordingSink()
        req = request or Request(run_id="run-7", prompt="hello", streaming=streaming)
        response = await driver.run(req, sink)
        return response, sink, driver


# -- the parser, one recording at a time -------------------------------------------------------


def parse_output(
    make_parser: Callable[[RunOutput], ParserT], data: bytes, *, streaming: bool = True
) -> tuple[ParserT, RunOutput, RecordingSink]:
    """Feed ``data`` to a fresh parser line by line, as the process would."""
    sink = RecordingSink()
    out = RunOutput(sink, streaming=streaming, run_id="run-1", thread_id="")
    parser = make_parser(out)
    framer = LineFramer(parser.feed)
    framer.feed(data)
    framer.flush()
    return parser, out, sink


def check_parser_survives_odd_lines(
    make_parser: Callable[[RunOutput], JsonlParser],
    *,
    truncated: bytes,
    not_an_object: bytes,
    unexpected: bytes,
    nan_terminal: bytes,
) -> None:
    """Blank, non-JSON, cut-off, wrongly shaped and non-UTF-8 lines, mixed with the
    format's own odd lines: only ``stdout`` items, no payload, no terminal."""
    __tracebackhide__ = True  # pytest shows the test's line, not the kit's
    lines = [
        b"",
        b"   ",
        b"not json at all",
        truncated,
        b"[1, 2, 3]",
        not_an_object,
        unexpected,
        nan_terminal,
        b"\xff\xfe binary noise",
    ]
    parser, out, sink = parse_output(make_parser, b"\n".join(lines))
    assert [i.kind for i in out.transcript] == ["stdout", "stdout", "stdout", "stdout", "stdout"]
    assert parser.malformed_lines == 2  # the cut-off object and the NaN line
    assert parser.terminal is None
    assert sink.stream == []


# -- the driver, through a replayed process ----------------------------------------------------


def structural_violations(
    driver: CLIDriver[Any], response: Response, sink: RecordingSink
) -> list[str]:
    """Every stream, event, transcript, outcome and checkpoint rule the suite checks."""
    found = [
        *adaptertest.verify_stream_sequence(sink.stream),
        *adaptertest.verify_stream_capability(driver.stream_capability(), sink.stream),
        *adaptertest.verify_run_events(sink.events),
        *adaptertest.verify_transcript_mirror(sink.events, response.transcript),
        *adaptertest.verify_outcome(response, None),
        *adaptertest.verify_checkpoint_codec(driver, response),
    ]
    return [str(v) for v in found]


def recording_snapshot(snapshot: Any) -> Any:
    """pytest's syrupy ``snapshot`` fixture, storing JSON files in the recordings folder
    (``recordings/snapshots/<test file>/``), for a test's own snapshots."""
    from adaptertest.snapshot import recording_snapshot as in_recordings

    return in_recordings(snapshot)


def check_recording(
    replay: Replay[Any], recording: str, snapshot: Any, *, backends: Sequence[Backend] = BACKENDS
) -> None:
    """The whole path on one recording, on each of ``backends``, against its snapshot.

    The rules every run keeps are checked here (a legal stream, events, transcript,
    outcome and checkpoint; the raw streams and chunks are the recording's bytes; one
    terminal payload, matching the outcome; the terminal line verbatim); what this
    driver made of the recording (transcript and stream kinds, output, usage, failure,
    checkpoint) is the same on every backend and equals ``snapshot`` (pytest's syrupy
    fixture), a JSON file beside the recordings (``recordings/snapshots/``).
    ``python -m pytest --snapshot-update`` writes it for a new recording.

    A failure reads as the suite's do: the broken clause first, with its rule, else each
    field that changed, old and new, and the command that reruns this test alone; no
    frames of the kit."""
    results: dict[Backend, dict[str, Any]] = {}
    for backend in backends:
        data, problems = anyio.run(_recording_outcome, replay, recording, backend=backend)
        if problems:
            _fail_recording(recording, problems, f"replayed on {backend}")
        results[backend] = data
    first = results[backends[0]]
    for backend, data in results.items():
        if data != first:
            changed = result_differences(first, data, show=True, limit=8)
            _fail_recording(
                recording, [f"{backends[0]} and {backend} differ: {c}" for c in changed], ""
            )
    from adaptertest.snapshot import compare_with_snapshot

    changes = compare_with_snapshot(snapshot, first)
    if changes:
        _fail_recording(recording, changes, "")


def _rerun_this_test() -> str:
    """``pytest NODEID`` for the test that is running (pytest says which), else ""."""
    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    nodeid = current.rpartition(" (")[0] if " (" in current else current
    return f"pytest {shlex.quote(nodeid)}" if nodeid else ""


def _fail_recording(recording: str, problems: Sequence[str], how: str) -> NoReturn:
    """Fail the running test with ``problems`` as the suite words them: every clause
    broken first, each with its rule, then the rest; the recording, and how to rerun."""
    rules = {clause.id: clause.rule for clause in CLAUSES}
    broken = [p for p in problems if p.partition(":")[0] in rules]
    others = [p for p in problems if p.partition(":")[0] not in rules]
    lines = [*broken, *others]
    for clause in dict.fromkeys(p.partition(":")[0] for p in broken):
        lines.append(f"  rule ({clause}): {rules[clause]}")
    lines.append(f"  recording: {recording}" + (f" ({how})" if how else ""))
    rerun = _rerun_this_test()
    if rerun:
        lines.append(f"  rerun alone: {rerun}")
    if broken:
        ids = " or ".join(dict.fromkeys(p.partition(":")[0] for p in broken))
        lines.append(f"  the conformance test judges the same: pytest -k '{ids}'")
    hold_snapshots("a recording's rule")  # its snapshot was not compared: keep it as it is
    pytest.fail("\n".join(lines), pytrace=False)


async def recording_result(replay: Replay[Any], recording: str) -> dict[str, Any]:
    """Run the driver on ``recording``, check the rules every run keeps, and return what
    it made of the recording: the data :func:`check_recording` compares with the
    snapshot. A broken rule fails the test, the clause first."""
    data, problems = await _recording_outcome(replay, recording)
    if problems:
        _fail_recording(recording, problems, "")
    return data


async def _recording_outcome(
    replay: Replay[Any], recording: str
) -> tuple[dict[str, Any], list[str]]:
    """What the driver made of ``recording``, and every rule the run broke: the suite's
    clause violations first, then differences from the recording itself."""
    from adaptertest.snapshot import result_data

    response, sink, driver = await replay.run(recording)
    problems = structural_violations(driver, response, sink)
    if response.failure is None:
        if driver.descriptor().sessions.supports_resume:
            problems += [str(v) for v in verify_live_checkpoint(True, response)]
        elif response.checkpoint is None or not response.checkpoint.valid:
            problems.append("a successful run returned no valid checkpoint")
    problems += _replay_problems(replay, recording, response, sink)
    return result_data(response, sink), problems


def _bytes_problem(field: str, got: bytes, recorded: bytes) -> list[str]:
    if got == recorded:
        return []
    at = next(
        (i for i, (x, y) in enumerate(zip(got, recorded, strict=False)) if x != y),
        min(len(got), len(recorded)),
    )
    return [f"{field} is {len(got)} bytes, the recording's {len(recorded)}: they part at byte {at}"]


def _replay_problems(
    replay: Replay[Any], recording: str, response: Response, sink: RecordingSink
) -> list[str]:
    """How the run differs from the recording it replayed, and its outcome from its
    terminal payload (the rules the clauses above leave to a replay)."""
    stdout, recorded_stderr = recorded_output(replay.recordings / recording)
    how = replay.settings(recording)
    raw = response.raw_streams
    if raw is None:
        return ["response.raw_streams is missing: a CLI driver returns what the CLI printed"]
    stderr = (replay.recordings / how.stderr).read_bytes() if how.stderr else recorded_stderr
    chunks = [e for e in sink.events if e.type == RunEventType.CHUNK and e.stream == "stdout"]
    problems = [
        *_bytes_problem("raw_streams.stdout", raw.stdout, stdout),
        *_bytes_problem("raw_streams.stderr", raw.stderr, stderr),
        *_bytes_problem(
            "the stdout chunk events, joined,", b"".join(e.chunk for e in chunks), stdout
        ),
    ]
    if not sink.stream:
        return [*problems, "the run sent no stream payload"]
    if sink.stream[0].kind != StreamKind.RUN_STARTED:
        problems.append(f"the first payload is {sink.stream[0].kind}, not run.started")
    terminals = sum(p.kind in TERMINALS for p in sink.stream)
    if terminals != 1:
        problems.append(f"the stream has {terminals} terminal payloads, not one")
    last = sink.stream[-1]
    if response.failure is None:
        if last.kind != StreamKind.RUN_FINISHED:
            problems.append(f"a successful run's last payload is {last.kind}, not run.finished")
        elif last.usage != response.usage:
            problems.append("the run.finished payload's usage differs from response.usage")
    else:
        if not response.transcript or response.transcript[-1].kind != "failure":
            problems.append("a failed run's transcript does not end with a failure item")
        if last.kind != StreamKind.RUN_ERROR:
            problems.append(f"a failed run's last payload is {last.kind}, not run.error")
        elif last.error != response.failure:
            problems.append("the run.error payload's error differs from response.failure")
        if response.checkpoint is not None:
            problems.append("a failed run returned a checkpoint")
    if (
        raw.terminal is not None
        and raw.terminal.raw_json not in stdout.decode("utf-8", "replace").splitlines()
    ):
        problems.append("raw_streams.terminal.raw_json is not a line of the recording's stdout")
    return problems


def structured_request(
    *, on_invalid: StructuredOutputInvalidPolicy | Literal[""] = "", streaming: bool = True
) -> Request:
    """The suite's structured probe request (native ``{"ok": true}``), here with a
    chosen transport and invalid-answer policy."""
    request = so_structured_request(None, None)
    request.streaming = streaming
    if request.output_schema is not None:
        request.output_schema.on_invalid = on_invalid
    return request


async def check_structured_answer(
    replay: Replay[Any], recording: str, argv_file: Path
) -> tuple[Response, list[str]]:
    """A native structured run on a recording that carries the answer: a valid, native
    ``{"ok": true}`` tied to the schema by its hash, on a legal stream and response.
    Returns the response and the argv the CLI was given."""
    __tracebackhide__ = True  # pytest shows the test's line, not the kit's
    response, sink, driver = await replay.run(
        recording, request=structured_request(), record_argv=argv_file
    )
    _require_rules(recording, driver, response, sink)
    assert response.failure is None
    assert response.structured_output == StructuredOutput(
        format=OutputFormat.JSON_SCHEMA,
        source=StructuredOutputSource.NATIVE,
        raw_json='{"ok":true}',
        value={"ok": True},
        valid=True,
        schema_hash=hashlib.sha256(STRUCTURED_SCHEMA.encode()).hexdigest(),
    )
    assert verify_structured_output_value(response.structured_output) == []
    argv: list[str] = json.loads(argv_file.read_text(encoding="utf-8"))
    return response, argv


async def check_structured_refused(replay: Replay[Any], recording: str, problem: str) -> None:
    """A native structured run whose answer is missing or off-schema fails (no checkpoint,
    ``run.error`` last) and says why; ``structured_output`` is there with ``valid=False``.
    When the CLI itself succeeded, ``on_invalid=return_invalid`` returns it instead."""
    __tracebackhide__ = True  # pytest shows the test's line, not the kit's
    response, sink, driver = await replay.run(recording, request=structured_request())
    _require_rules(recording, driver, response, sink)
    assert response.failure is not None
    assert problem in response.failure.message
    assert response.checkpoint is None
    assert sink.stream[-1].kind == StreamKind.RUN_ERROR
    judged = response.structured_output
    assert judged is not None
    assert not judged.valid
    assert judged.validation_errors
    plain, _, _ = await replay.run(recording)
    if plain.failure is None:  # the CLI itself succeeded
        lenient = structured_request(on_invalid=StructuredOutputInvalidPolicy.RETURN_INVALID)
        returned, _, _ = await replay.run(recording, request=lenient)
        assert returned.failure is None
        assert returned.structured_output == judged


async def check_streaming_off(replay: Replay[Any], recording: str) -> None:
    """Without streaming no payload goes out, and the transcript (and its mirror) stays."""
    __tracebackhide__ = True  # pytest shows the test's line, not the kit's
    streamed, streamed_sink, driver = await replay.run(recording)
    _require_rules(recording, driver, streamed, streamed_sink)
    response, sink, _ = await replay.run(recording, streaming=False)
    problems = [
        str(v) for v in adaptertest.verify_transcript_mirror(sink.events, response.transcript)
    ]
    if sink.stream:
        kinds = ", ".join(dict.fromkeys(str(p.kind) for p in sink.stream))
        problems.append(
            f"with Request.streaming=False, {len(sink.stream)} stream payload(s) reached the "
            f"sink ({kinds}); a run that is not streamed sends none"
        )
    if response.transcript != streamed.transcript:
        problems.append(
            f"the transcript differs with streaming off ({len(response.transcript)} items, "
            f"streamed {len(streamed.transcript)}): streaming changes only the payloads"
        )
    if problems:
        _fail_recording(recording, problems, "streaming off")


def _require_rules(
    recording: str, driver: CLIDriver[Any], response: Response, sink: RecordingSink
) -> None:
    """Fail the test, clause first, when the run broke a rule every run keeps."""
    problems = structural_violations(driver, response, sink)
    if problems:
        _fail_recording(recording, problems, "")


async def passed_argv(driver: CLIDriver[Any], request: Request, argv_file: Path) -> list[str]:
    """Run ``driver`` (its command records its argv to ``argv_file``) and return what the
    CLI was given after the replay command's ``--``."""
    await driver.run(request, RecordingSink())
    passed: list[str] = json.loads(argv_file.read_text(encoding="utf-8"))
    return passed


async def appended_argv(
    replay: Replay[Any], text: str, tmp_path: Path, *, extra_args: Sequence[str] = ()
) -> list[str]:
    """The argv the CLI gets for a run on ``success.jsonl`` with prompt ``hello``,
    ``text`` as the appended system prompt and ``extra_args`` in the config. A driver
    with ``prompt_on_stdin`` must hand the CLI the prompt untouched on standard input."""
    argv_file, stdin_file = tmp_path / "appended-argv.json", tmp_path / "appended-stdin.bin"
    command = replay.command("success.jsonl", record_argv=argv_file, record_stdin=stdin_file)
    driver = replay.driver(command)
    config = driver.config.model_copy(update={"extra_args": tuple(extra_args)})
    request = Request(prompt="hello", config=config, append_system_prompt=text)
    passed = await passed_argv(driver, request, argv_file)
    if driver.prompt_on_stdin:
        assert stdin_file.read_bytes() == b"hello"
    return passed


async def check_append_refused(
    replay: Replay[Any],
    reason: str,
    tmp_path: Path,
    *,
    extra_args: Sequence[str] = (),
    text: str = "Be brief.",
    argument: str | None = None,
) -> None:
    """A run with ``text`` as the appended system prompt (empty: none) that the driver
    cannot take (``extra_args`` in its config) is refused with
    ``SystemPromptUnsupportedError(reason)`` naming the driver (and ``argument``, when
    given), before the CLI starts (it never writes its argv) and with nothing emitted;
    the error's text never holds the append."""
    __tracebackhide__ = True  # pytest shows the test's line, not the kit's
    argv_file = tmp_path / "refused-argv.json"
    driver = replay.driver(replay.command("success.jsonl", record_argv=argv_file))
    config = driver.config.model_copy(update={"extra_args": tuple(extra_args)})
    request = Request(prompt="hi", config=config, append_system_prompt=text)
    sink = RecordingSink()
    with pytest.raises(SystemPromptUnsupportedError) as refused:
        await driver.run(request, sink)
    # A project written before the rename expects "unsupported": read as upstream's name.
    try:
        expected = SystemPromptUnsupportedReason(reason).value
    except ValueError:
        expected = reason  # a driver's own reason, compared as given
    assert (refused.value.driver, refused.value.reason) == (driver.driver_type, expected)
    if argument is not None:
        assert refused.value.argument == argument
    if text.strip():
        assert text not in str(refused.value)
    assert not argv_file.exists(), "the CLI was started"
    assert sink.events == []
    assert sink.stream == []


async def check_request_config_wins(
    driver: CLIDriver[ConfigT], config: ConfigT, expected_output: str
) -> None:
    """A config in the request replaces the one the driver was built with."""
    __tracebackhide__ = True  # pytest shows the test's line, not the kit's
    response = await driver.run(Request(prompt="hi", config=config), RecordingSink())
    assert response.output == expected_output


# -- declarations and config -------------------------------------------------------------------


def check_config_validation(
    driver_class: DriverClass[ConfigT],
    config_class: type[ConfigT],
    *,
    default_command: tuple[str, ...],
    other: ConfigT,
) -> None:
    """None and the driver's own config pass; a foreign one, an empty command, a negative
    timeout and changing a built config fail."""
    __tracebackhide__ = True  # pytest shows the test's line, not the kit's
    driver = driver_class()
    assert driver.config.command == default_command
    driver.validate_config(None)
    driver.validate_config(other)
    with pytest.raises(InvalidDriverConfigError):
        driver.validate_config(_Foreign())
    with pytest.raises(ValidationError):
        config_class(command=())
    with pytest.raises(ValidationError):
        config_class.model_validate({"timeout": -1})  # the class's default command
    with pytest.raises(ValidationError):
        driver.config.model = "x"  # type: ignore[misc]


def check_descriptor_and_stream_capability(
    driver_class: DriverClass[ConfigT],
    config: ConfigT,
    driver_type: str,
    *,
    capability: StreamCapability = BLOCK_STREAMING,
    structured_native: bool = False,
) -> list[str]:
    """Resume declared; skills not; native structured output exactly as
    ``structured_native`` says (on ``run``, SO-01 clean); the stream capability is
    exactly ``capability`` (by default whole blocks with reasoning, no token deltas,
    tool-call args or HITL). Returns the declared model ids."""
    __tracebackhide__ = True  # pytest shows the test's line, not the kit's
    descriptor = driver_class(config).descriptor()
    assert descriptor.type == driver_type
    assert descriptor.sessions.supports_resume
    assert not descriptor.skills.supported
    structured = descriptor.structured_output
    assert structured.json_schema_native is structured_native
    assert structured.works_with_run is structured_native
    assert not structured.json_schema_prompt_validate
    assert verify_structured_output_descriptor(descriptor) == []
    assert driver_class().stream_capability() == capability
    assert driver_class(config).stream_capability() == capability
    return [m.id for m in descriptor.models]


def check_config_fingerprint_follows_the_config(
    driver_class: DriverClass[ConfigT], one: ConfigT, same: ConfigT, other: ConfigT
) -> None:
    """Equal configs give equal fingerprints; a changed field changes it."""
    __tracebackhide__ = True  # pytest shows the test's line, not the kit's
    fingerprint = driver_class(one).session_config_fingerprint()
    assert fingerprint == driver_class(same).session_config_fingerprint()
    assert fingerprint != driver_class(other).session_config_fingerprint()


async def check_environment_probe(
    driver_class: DriverClass[ConfigT], config_class: type[ConfigT], missing_program: str
) -> None:
    """A program that resolves passes; a missing one (from the probe's config) fails."""
    __tracebackhide__ = True  # pytest shows the test's line, not the kit's
    found = await driver_class(config_class(command=(sys.executable,))).check_environment(None)
    assert found.status == EnvironmentStatus.PASS
    assert found.healthy
    missing = await driver_class().check_environment(config_class(command=(missing_program,)))
    assert missing.status == EnvironmentStatus.FAIL
    assert not missing.healthy
    assert missing.checks[0].code == "cli_missing"


# -- the conformance suite ---------------------------------------------------------------------


def conformance_options(
    config: CLIConfig,
    *,
    resume_id: str,
    concurrent_runs: int = 0,
    backend: Backend = "asyncio",
    live_structured_output: bool = False,
) -> Options:
    """Suite options for a CLI driver whose ``config`` replays a successful run (and, with
    ``live_structured_output``, a structured one when the driver asks for it).

    The seed session carries ``resume_id`` and the guard values the drivers store. A
    replay carries no provider secret, so failures show the CLI's and the driver's own
    words (``show_live_details``); secrets are masked all the same.
    """
    return Options(
        config=config,
        live_run=True,
        live_prompt=adaptertest.DEFAULT_LIVE_PROMPT,
        live_expected_output="OK",
        live_run_timeout=30,
        session_state=SessionState(
            resume_id=resume_id,
            data={
                SESSION_PARAM_CWD: "/home/ana/projects/demo-repo",
                SESSION_PARAM_PROFILE_FINGERPRINT: "p-1",
            },
        ),
        session_keys=(SESSION_PARAM_CWD,),
        guard_keys=(SESSION_PARAM_CWD, SESSION_PARAM_PROFILE_FINGERPRINT),
        required_config_fields=("command", "model", "cwd", "extra_args", "timeout"),
        expect_reject_foreign_config=True,
        max_examples=10,
        concurrent_runs=concurrent_runs,
        backend=backend,
        live_structured_output=live_structured_output,
        show_live_details=True,
    )


def replay_config(
    config_class: type[ConfigT],
    recordings: Path,
    recording: str,
    *,
    model: str,
    exit_code: int = 0,
    stderr: str | None = None,
    kill: str = "",
) -> ConfigT:
    """A config whose program is the replay stand-in playing ``recording``."""
    command = replay_command(recordings, recording, exit_code=exit_code, stderr=stderr, kill=kill)
    return config_class(command=command, model=model)


def live_config(
    config_class: type[ConfigT], recordings: Path, *, structured_flag: str, model: str
) -> ConfigT:
    """The config of a hermetic conformance run: ``success.jsonl`` answers the live run,
    ``structured_ok.jsonl`` the structured probe (the driver passes ``structured_flag``)."""
    command = replay_by_flag_command(
        recordings,
        flag=structured_flag,
        with_flag="structured_ok.jsonl",
        without_flag="success.jsonl",
    )
    return config_class(command=command, model=model)


def full_options(config: CLIConfig, *, resume_id: str, backend: Backend = "asyncio") -> Options:
    """:func:`conformance_options` with every live probe on: the structured probe and
    two concurrent runs (CON-01)."""
    return conformance_options(
        config,
        resume_id=resume_id,
        concurrent_runs=2,
        backend=backend,
        live_structured_output=True,
    )


_NEEDS_SUCCESS = frozenset({"LIV-02", "LIV-03", "RSP-04", "SES-09"})
"""Live-run clauses only a successful run can satisfy: skipped on a failed run."""


def _failed_run_report(factory: Callable[[], object], options: Options) -> ConformanceReport:
    # A replay holds no secret; the demand check (OBS-07, off by default) is judged too.
    shown = dataclasses.replace(options, show_live_details=True, strict_observation_demand=True)
    return adaptertest.check_driver(factory, shown, only=LIVE_RUN_CLAUSES)


def _fail_with(report: ConformanceReport, clauses: Sequence[str], why: str) -> NoReturn:
    """Fail the test with each named clause's whole message first, then ``why``; the
    rerun hint selects this test (the clause alone is no test of its own here)."""
    rerun = _rerun_this_test() or None
    texts = [report.result(clause).describe(rerun) for clause in clauses]
    pytest.fail("\n\n".join([*texts, why]), pytrace=False)


def _check_only(report: ConformanceReport, allowed: set[str], why: str) -> None:
    """No clause outside ``allowed`` fails; the first that does is shown whole."""
    unexpected = [r.clause for r in report.results if r.status.is_failure]
    unexpected = [clause for clause in unexpected if clause not in allowed]
    if unexpected:
        _fail_with(report, unexpected, f"{why}; also failed: {', '.join(unexpected)}")


def _check_judged_failure(report: ConformanceReport) -> None:
    """Everything but LIV-01 and the success-only clauses was judged and passed."""
    for clause in sorted(_NEEDS_SUCCESS):
        result = report.result(clause)
        if result.status is not ClauseStatus.SKIPPED or not any(
            "the live run failed (" in m for m in result.messages
        ):
            _fail_with(
                report,
                [clause],
                f"{clause} needs a successful run: it must be skipped, naming the failure "
                f"(it was {result.status.value})",
            )
    judged = set(LIVE_RUN_CLAUSES) - _NEEDS_SUCCESS - {"LIV-01"}
    not_passed = [
        r.clause
        for r in report.results
        if r.clause in judged and r.status is not ClauseStatus.PASSED
    ]
    if not_passed:
        _fail_with(
            report, not_passed, f"a failed run still judges these and they must pass: {not_passed}"
        )


def check_failed_run_fails_only_liv01(factory: Callable[[], object], options: Options) -> None:
    """A failed run fails LIV-01 and nothing else: its stream, run events, transcript and
    response are still judged and legal, FLR-01 finds that it failed cleanly, and only
    the clauses that need a success are skipped, each naming the failure. A clause that
    breaks this is shown first, its message whole."""
    report = _failed_run_report(factory, options)
    _check_only(report, {"LIV-01"}, "a failed run must fail LIV-01 alone")
    if not report.result("LIV-01").status.is_failure:
        _fail_with(report, ["LIV-01"], "the run was meant to fail, and LIV-01 with it")
    _check_judged_failure(report)


def check_expected_failure_is_clean(
    factory: Callable[[], object], options: Options, reason: str
) -> None:
    """With ``Options(live_expect_failure=reason)`` a failed run fails no clause: LIV-01
    is skipped, FLR-01 and every stream, event, transcript and response clause pass."""
    expecting = dataclasses.replace(options, live_expect_failure=reason)
    report = _failed_run_report(factory, expecting)
    _check_only(report, set(), "an expected failure must fail no clause")
    if report.result("LIV-01").status is not ClauseStatus.SKIPPED:
        _fail_with(report, ["LIV-01"], "an expected failure skips LIV-01")
    if report.result("FLR-01").status is not ClauseStatus.PASSED:
        _fail_with(report, ["FLR-01"], "FLR-01 must find the expected failure clean")
    _check_judged_failure(report)


@dataclass(frozen=True)
class FailedRecording:
    """A recording of a failed run, and how the stand-in ends after playing it."""

    recording: str
    exit_code: int = 1
    stderr: str | None = None
    kill: str = ""
    """A signal name: the stand-in ends with it, as a CLI killed before its terminal line."""
    expected: str = ""
    """Why the run fails, for the runs a host must expect (429, budget stop, killed
    process): their conformance check sets ``Options(live_expect_failure=expected)``."""

    def __str__(self) -> str:
        return self.recording


def check_failed_recording(
    make_driver: Callable[[ConfigT], object],
    config_class: type[ConfigT],
    recordings: Path,
    failed: FailedRecording,
    *,
    model: str,
    resume_id: str,
    backend: Backend = "asyncio",
    expect_failure: bool = False,
) -> None:
    """The suite on a driver whose CLI replays ``failed``: the run fails only LIV-01 (the
    stream, events, transcript and response judged and legal), or, with
    ``expect_failure``, fails no clause at all and FLR-01 finds it failed cleanly."""
    __tracebackhide__ = True  # pytest shows the test's line, not the kit's
    config = replay_config(
        config_class,
        recordings,
        failed.recording,
        model=model,
        exit_code=failed.exit_code,
        stderr=failed.stderr,
        kill=failed.kill,
    )
    options = conformance_options(config, resume_id=resume_id, backend=backend)
    if expect_failure:
        assert failed.expected, f"{failed.recording}: no reason to expect its failure"
        check_expected_failure_is_clean(lambda: make_driver(config), options, failed.expected)
    else:
        check_failed_run_fails_only_liv01(lambda: make_driver(config), options)


def failed_run_tests(
    make_driver: Callable[[ConfigT], object],
    config_class: type[ConfigT],
    recordings: Path,
    failed_runs: Sequence[FailedRecording],
    *,
    model: str,
    resume_id: str,
) -> type:
    """A pytest class judging every failed-run recording (bind it to a ``Test*`` name):
    each fails only LIV-01; each with an ``expected`` reason, on asyncio and trio, fails
    no clause under ``Options(live_expect_failure=...)``."""
    expected = [f for f in failed_runs if f.expected]

    def check(failed: FailedRecording, backend: Backend, expect_failure: bool) -> None:
        check_failed_recording(
            make_driver,
            config_class,
            recordings,
            failed,
            model=model,
            resume_id=resume_id,
            backend=backend,
            expect_failure=expect_failure,
        )

    @pytest.mark.adaptertest  # clause checks: they run with the clause items, first
    class FailedRuns:
        @pytest.mark.parametrize("failed", failed_runs, ids=str)
        def test_failed_run_fails_only_liv01(self, failed: FailedRecording) -> None:
            check(failed, "asyncio", False)

        @pytest.mark.parametrize("backend", ["asyncio", "trio"])
        @pytest.mark.parametrize("failed", expected, ids=str)
        def test_expected_failure_fails_cleanly(
            self, failed: FailedRecording, backend: Backend
        ) -> None:
            check(failed, backend, True)

    return FailedRuns


def check_conformance_level(factory: Callable[[], object], options: Options, level: Level) -> None:
    """The whole suite reaches exactly ``level`` (every failing clause is shown if not)."""
    report = adaptertest.check_driver(factory, options)
    if report.level is not level:
        failing = [r.clause for r in report.results if r.status.is_failure]
        _fail_with(report, failing, f"expected level {level}, got: {report.summary()}")
