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
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Literal, Protocol, TypeVar

import pytest
from pydantic import ValidationError

import adaptertest
from adaptertest import CLAUSES, ClauseStatus, Level, Options, RecordingSink, recording
from adaptertest.options import Backend
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
    FailureCode,
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
    Usage,
)
from driver.clikit._config import CLIConfig
from driver.clikit._driver import CLIDriver
from driver.clikit._emit import RunOutput
from driver.clikit._jsonl import JsonlParser
from driver.clikit._process import LineFramer, ProcessOutcome

__all__ = [
    "BLOCK_STREAMING",
    "LIVE_RUN_CLAUSES",
    "REASONING",
    "TERMINALS",
    "TEXT",
    "TOOL",
    "Case",
    "DriverClass",
    "FailedRecording",
    "Replay",
    "appended_argv",
    "check_append_refused",
    "check_config_fingerprint_follows_the_config",
    "check_config_validation",
    "check_conformance_level",
    "check_descriptor_and_stream_capability",
    "check_driver_on_both_backends",
    "check_driver_on_recording",
    "check_environment_probe",
    "check_expected_failure_is_clean",
    "check_failed_recording",
    "check_failed_run_fails_only_liv01",
    "check_parser_on_recording",
    "check_parser_survives_odd_lines",
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
    "recordings_dir",
    "replay_by_flag_command",
    "replay_command",
    "replay_config",
    "structural_violations",
    "structured_request",
]

TERMINALS = {StreamKind.RUN_FINISHED, StreamKind.RUN_ERROR}
TEXT = ("text.start", "text.content", "text.end")
REASONING = ("reasoning.start", "reasoning.content", "reasoning.end")
TOOL = ("tool_call.start", "tool_call.result", "tool_call.end")

BLOCK_STREAMING = StreamCapability(native=True, reasoning=True)
"""The stream capability of a driver that streams whole text and reasoning blocks."""

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
    if recording.is_recording(data.split(b"\n", 1)[0]):
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
    exit_code: int = 0,
    stderr: str | None = None,
    record_argv: Path | None = None,
    kill: str = "",
) -> tuple[str, ...]:
    """A command that replays a recording as if it were the CLI; the driver's own
    arguments go after the final ``--`` and are ignored (or recorded).

    ``kill`` (a signal name such as ``"SIGTERM"``) ends the stand-in with that
    signal once the recording is written, as a CLI killed before its terminal
    line would end.
    """
    options = _replay_options(recordings, exit_code, stderr, record_argv)
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
    recordings: Path, exit_code: int, stderr: str | None, record_argv: Path | None
) -> list[str]:
    options = ["--exit-code", str(exit_code)]
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


@dataclass(frozen=True)
class Case:
    """What one recording must give: transcript and payload kinds, output, outcome.

    ``session`` is the resume handle the recording names (a Claude Code session
    id, a Codex thread id); ``failure`` a part of the failure message, None for
    a success; ``stderr`` a recording of stderr to replay with it. ``signal``
    ends the process with that signal after the recording (``exit_code`` is then
    -1, as a killed process reports). ``usage``, when set, is the usage the run
    must report (cost included); ``failure_metadata`` entries the failure's
    metadata must hold.
    """

    recording: str
    exit_code: int
    items: tuple[str, ...]
    payloads: tuple[str, ...]
    output: str
    succeeded: bool
    session: str
    failure: str | None
    stderr: str | None = None
    signal: str = ""
    usage: Usage | None = None
    failure_metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Replay(Generic[DriverT]):
    """A driver's recordings and cases, and how to build the driver around a command."""

    recordings: Path
    cases: Sequence[Case]
    driver: Callable[[tuple[str, ...]], DriverT]

    def case(self, recording: str) -> Case:
        """The case of ``recording``."""
        return next(case for case in self.cases if case.recording == recording)

    def command(
        self,
        recording: str,
        *,
        exit_code: int = 0,
        stderr: str | None = None,
        record_argv: Path | None = None,
        kill: str = "",
    ) -> tuple[str, ...]:
        """:func:`replay_command` on this driver's recordings."""
        return replay_command(
            self.recordings,
            recording,
            exit_code=exit_code,
            stderr=stderr,
            record_argv=record_argv,
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
        """Run a driver whose CLI replays ``recording`` with its case's exit code and stderr."""
        case = self.case(recording)
        command = self.command(
            recording,
            exit_code=0 if case.signal else case.exit_code,
            stderr=case.stderr,
            record_argv=record_argv,
            kill=case.signal,
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


def check_parser_on_recording(
    case: Case, recordings: Path, make_parser: Callable[[RunOutput], ParserT]
) -> tuple[ParserT, RunOutput]:
    """Kinds, output, handle and verdict of one recording, straight from the parser."""
    data, recorded_stderr = recorded_output(recordings / case.recording)
    parser, out, sink = parse_output(make_parser, data)
    assert tuple(i.kind for i in out.transcript) == case.items
    assert tuple(p.kind for p in sink.stream) == case.payloads
    assert parser.output() == case.output
    assert parser.succeeded is case.succeeded
    assert parser.resume_id == case.session
    stderr = (recordings / case.stderr).read_bytes() if case.stderr else recorded_stderr
    outcome = ProcessOutcome(case.exit_code, case.signal, False, data, stderr)
    failure = parser.failure(outcome, 60)
    if case.usage is not None:
        assert parser.usage == case.usage
    if case.failure is None:
        assert failure is None
    else:
        assert failure is not None
        assert failure.code == FailureCode.AGENT_ERROR
        assert case.failure in failure.message
        assert failure.metadata["exit_code"] == case.exit_code
        _check_metadata(failure.metadata, case)
    return parser, out


def _check_metadata(metadata: dict[str, Any], case: Case) -> None:
    wanted = {**case.failure_metadata, **({"signal": case.signal} if case.signal else {})}
    assert {key: metadata.get(key) for key in wanted} == wanted


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


async def check_driver_on_recording(
    replay: Replay[Any], case: Case, *, is_terminal_line: Callable[[str], bool]
) -> None:
    """The whole path on one recording: raw streams, chunks, transcript, stream shape,
    outcome, checkpoint and the verbatim terminal line (the last one that
    ``is_terminal_line``)."""
    response, sink, driver = await replay.run(case.recording)
    assert structural_violations(driver, response, sink) == []
    stdout, recorded_stderr = recorded_output(replay.recordings / case.recording)
    raw = response.raw_streams
    assert raw is not None
    assert raw.stdout == stdout
    stderr = (replay.recordings / case.stderr).read_bytes() if case.stderr else recorded_stderr
    assert raw.stderr == stderr
    chunks = [e for e in sink.events if e.type == RunEventType.CHUNK and e.stream == "stdout"]
    assert b"".join(e.chunk for e in chunks) == stdout
    assert response.exit_code == case.exit_code
    assert response.signal == case.signal
    assert response.output == case.output
    if case.usage is not None:
        assert response.usage == case.usage
    assert [i.kind for i in response.transcript] == [
        *case.items,
        *(["failure"] if case.failure else []),
    ]
    assert sink.stream[0].kind == StreamKind.RUN_STARTED
    assert sum(p.kind in TERMINALS for p in sink.stream) == 1
    if case.failure is None:
        assert response.failure is None
        assert sink.stream[-1].kind == StreamKind.RUN_FINISHED
        assert sink.stream[-1].usage == response.usage
        assert response.checkpoint is not None
        assert response.checkpoint.valid
        assert response.checkpoint.state is not None
        assert response.checkpoint.state.resume_id == case.session
    else:
        assert response.failure is not None
        assert case.failure in response.failure.message
        _check_metadata(response.failure.metadata, case)
        assert sink.stream[-1].kind == StreamKind.RUN_ERROR
        assert sink.stream[-1].error == response.failure
        assert response.checkpoint is None
    result_lines = [line for line in stdout.decode().splitlines() if is_terminal_line(line)]
    if result_lines:
        assert raw.terminal is not None
        assert raw.terminal.raw_json == result_lines[-1]
    else:
        assert raw.terminal is None


async def check_driver_on_both_backends(replay: Replay[Any], recording: str) -> None:
    """Run on the current backend; a run cut off mid-tool closes its lifecycles in order."""
    response, sink, driver = await replay.run(recording)
    assert structural_violations(driver, response, sink) == []
    if recording == "nonzero_exit.jsonl":
        # The tool call never got its result: it and its step close before run.error.
        kinds = [p.kind for p in sink.stream]
        assert kinds[-3:] == [
            StreamKind.TOOL_CALL_END,
            StreamKind.STEP_FINISHED,
            StreamKind.RUN_ERROR,
        ]


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
    response, sink, driver = await replay.run(
        recording, request=structured_request(), record_argv=argv_file
    )
    assert structural_violations(driver, response, sink) == []
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
    response, sink, driver = await replay.run(recording, request=structured_request())
    assert structural_violations(driver, response, sink) == []
    assert response.failure is not None
    assert problem in response.failure.message
    assert response.checkpoint is None
    assert sink.stream[-1].kind == StreamKind.RUN_ERROR
    judged = response.structured_output
    assert judged is not None
    assert not judged.valid
    assert judged.validation_errors
    if replay.case(recording).succeeded:
        lenient = structured_request(on_invalid=StructuredOutputInvalidPolicy.RETURN_INVALID)
        returned, _, _ = await replay.run(recording, request=lenient)
        assert returned.failure is None
        assert returned.structured_output == judged


async def check_streaming_off(replay: Replay[Any], recording: str) -> None:
    """Without streaming no payload goes out, and the transcript (and its mirror) stays."""
    streamed, _, _ = await replay.run(recording)
    response, sink, _ = await replay.run(recording, streaming=False)
    assert sink.stream == []
    assert response.transcript == streamed.transcript
    assert adaptertest.verify_transcript_mirror(sink.events, response.transcript) == []


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
    ``text`` as the appended system prompt and ``extra_args`` in the config."""
    argv_file = tmp_path / "appended-argv.json"
    driver = replay.driver(replay.command("success.jsonl", record_argv=argv_file))
    config = driver.config.model_copy(update={"extra_args": tuple(extra_args)})
    request = Request(prompt="hello", config=config, append_system_prompt=text)
    return await passed_argv(driver, request, argv_file)


async def check_append_refused(
    replay: Replay[Any], reason: str, tmp_path: Path, *, extra_args: Sequence[str] = ()
) -> None:
    """A run with an appended system prompt the driver cannot take (``extra_args`` in its
    config) is refused with ``SystemPromptUnsupportedError(reason)`` naming the driver,
    before the CLI starts (it never writes its argv) and with nothing emitted."""
    argv_file = tmp_path / "refused-argv.json"
    driver = replay.driver(replay.command("success.jsonl", record_argv=argv_file))
    config = driver.config.model_copy(update={"extra_args": tuple(extra_args)})
    request = Request(prompt="hi", config=config, append_system_prompt="Be brief.")
    sink = RecordingSink()
    with pytest.raises(SystemPromptUnsupportedError) as refused:
        await driver.run(request, sink)
    assert (refused.value.driver, refused.value.reason) == (driver.driver_type, reason)
    assert "Be brief." not in str(refused.value)
    assert not argv_file.exists(), "the CLI was started"
    assert sink.events == []
    assert sink.stream == []


async def check_request_config_wins(
    driver: CLIDriver[ConfigT], config: ConfigT, expected_output: str
) -> None:
    """A config in the request replaces the one the driver was built with."""
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
    fingerprint = driver_class(one).session_config_fingerprint()
    assert fingerprint == driver_class(same).session_config_fingerprint()
    assert fingerprint != driver_class(other).session_config_fingerprint()


async def check_environment_probe(
    driver_class: DriverClass[ConfigT], config_class: type[ConfigT], missing_program: str
) -> None:
    """A program that resolves passes; a missing one (from the probe's config) fails."""
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

    The seed session carries ``resume_id`` and the guard values the drivers store.
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


def _failed_run_report(
    factory: Callable[[], object], options: Options
) -> tuple[dict[str, ClauseStatus], list[str]]:
    report = adaptertest.check_driver(factory, options, only=LIVE_RUN_CLAUSES)
    status = {r.clause: r.status for r in report.results}
    return status, [m for r in report.results for m in r.messages]


def _check_judged_failure(status: dict[str, ClauseStatus], messages: list[str]) -> None:
    """Everything but LIV-01 and the success-only clauses was judged and passed."""
    for clause in _NEEDS_SUCCESS:
        assert status[clause] is ClauseStatus.SKIPPED, (clause, messages)
        reason = next(m for m in messages if m.startswith(f"{clause} skipped"))
        assert "the live run failed (" in reason, reason
    judged = set(LIVE_RUN_CLAUSES) - _NEEDS_SUCCESS - {"LIV-01"}
    not_passed = {c: status[c].value for c in judged if status[c] is not ClauseStatus.PASSED}
    assert not not_passed, (not_passed, messages)


def check_failed_run_fails_only_liv01(factory: Callable[[], object], options: Options) -> None:
    """A failed run fails LIV-01 and nothing else: its stream, run events, transcript and
    response are still judged and legal, FLR-01 finds that it failed cleanly, and only
    the clauses that need a success are skipped, each naming the failure."""
    status, messages = _failed_run_report(factory, options)
    failed = {clause for clause, s in status.items() if s is ClauseStatus.FAILED}
    assert failed == {"LIV-01"}, messages
    _check_judged_failure(status, messages)


def check_expected_failure_is_clean(
    factory: Callable[[], object], options: Options, reason: str
) -> None:
    """With ``Options(live_expect_failure=reason)`` a failed run fails no clause: LIV-01
    is skipped, FLR-01 and every stream, event, transcript and response clause pass."""
    expecting = dataclasses.replace(options, live_expect_failure=reason)
    status, messages = _failed_run_report(factory, expecting)
    failed = {clause for clause, s in status.items() if s.is_failure}
    assert not failed, messages
    assert status["LIV-01"] is ClauseStatus.SKIPPED, messages
    assert status["FLR-01"] is ClauseStatus.PASSED, messages
    _check_judged_failure(status, messages)


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
    failing = [r.describe() for r in report.results if r.status.is_failure]
    assert report.level is level, (report.summary(), failing)
