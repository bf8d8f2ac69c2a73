"""The DFT family: the drift option, the variants, the comparisons and the probe.

The variant strategies are checked as properties (what additive drift may and may not
change, that a corruption is exactly one corrupt line, that chunks join to the same
bytes); the judging helpers on hand-made results; the probe end to end on the Claude
example driver and small variations of it, through the kit's replay stand-in.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adaptertest import ClauseStatus, ConformanceReport, Drift, Options, check_driver
from adaptertest._drift import (
    MULTIBYTE,
    Corruption,
    Source,
    Variant,
    _additive_variant,
    additive,
    content_objects,
    corrupt,
    line_by_line,
    load_source,
    rechunked,
    with_multibyte,
)
from adaptertest.dft import DRIFT_CLAUSES, corruption_problems, result_differences, snapshot
from adaptertest.liv import LiveRun
from adaptertest.options import Backend
from adaptertest.recording import STDERR, STDOUT, Chunk, Recording, RecordingError
from claude_driver import ClaudeConfig, ClaudeDriver, ClaudeStreamParser
from driver import (
    Checkpoint,
    FailureCode,
    Response,
    RunFailure,
    StreamKind,
    StreamPayload,
    TranscriptItem,
    TranscriptKind,
)
from driver.clikit import RunOutput
from referencedriver import ReferenceDriver

RECORDINGS = Path(__file__).resolve().parents[2] / "examples/claude_driver/recordings"
SUCCESS = RECORDINGS / "success.jsonl"

LINES: list[dict[str, Any]] = [
    {"type": "init", "session_id": "s-1", "tools": ["Read"]},
    {"type": "tool", "id": "t-1", "input": {"pattern": "x", "path": "src"}},
    {"type": "text", "message": {"id": "m-1", "content": [{"kind": "text", "text": "Hi there"}]}},
    {"type": "result", "status": "success", "text": "Hi there"},
]
TOOL_INPUT = LINES[1]["input"]


def jsonl(objects: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(o, separators=(",", ":")).encode() + b"\n" for o in objects)


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Source:
    path = tmp_path_factory.mktemp("drift") / "toy.jsonl"
    path.write_bytes(jsonl(LINES))
    return load_source(path)


def stdout_of(chunks: tuple[Chunk, ...]) -> bytes:
    return b"".join(c.data for c in chunks if c.fd == STDOUT)


def strict_object(line: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(line.decode("utf-8"))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def without_added(value: Any, original: Any) -> Any:
    """``value`` with every key ``original`` lacks removed, at every depth."""
    if isinstance(value, dict) and isinstance(original, dict):
        return {k: without_added(v, original[k]) for k, v in value.items() if k in original}
    if isinstance(value, list) and isinstance(original, list) and len(value) == len(original):
        return [without_added(v, o) for v, o in zip(value, original, strict=True)]
    return value


# -- the option ----------------------------------------------------------------------------------


def claude_around(command: tuple[str, ...]) -> ClaudeDriver:
    return ClaudeDriver(ClaudeConfig(command=command))


@pytest.mark.parametrize(
    ("changes", "error", "message"),
    [
        ({"recordings": str(SUCCESS)}, TypeError, "a list of paths, not one path"),
        ({"recordings": [b"success.jsonl"]}, TypeError, "str or os.PathLike paths, got bytes"),
        ({"recordings": ["no/such.jsonl"]}, ValueError, "no such file: no/such.jsonl"),
        ({"recordings": []}, ValueError, "at least one recording"),
        ({"driver": "claude"}, TypeError, "Drift.driver must be callable"),
        ({"max_examples": True}, TypeError, "max_examples must be an int, got bool"),
        ({"max_examples": 0}, ValueError, "max_examples must be at least 1"),
    ],
)
def test_drift_refuses_bad_values_by_name(
    changes: dict[str, Any], error: type[Exception], message: str
) -> None:
    kwargs: dict[str, Any] = {"recordings": [SUCCESS], "driver": claude_around, **changes}
    with pytest.raises(error, match=message):
        Drift(**kwargs)


def test_drift_keeps_paths_as_a_tuple_and_options_take_only_a_drift() -> None:
    drift = Drift(recordings=iter([str(SUCCESS)]), driver=claude_around)
    assert drift.recordings == (SUCCESS,)
    assert drift.max_examples == 8
    assert Options(drift=drift).drift is drift
    with pytest.raises(TypeError, match=r"Options\.drift must be an adaptertest\.Drift"):
        Options(drift={"recordings": [SUCCESS]})  # type: ignore[arg-type]


# -- the source ----------------------------------------------------------------------------------


def test_a_plain_recording_is_its_lines_with_exit_status_0(source: Source) -> None:
    assert len(source.lines) == 4
    assert source.ends_with_newline
    assert (source.exit_code, source.signal, source.stderr) == (0, None, b"")
    assert source.discriminator == "type"
    assert {"session_id", "Read", "t-1", "pattern"} <= source.vocabulary
    assert stdout_of(source.recorded) == jsonl(LINES)
    assert source.stdout == jsonl(LINES)


def test_a_v1_recording_brings_stderr_and_the_exit_status(tmp_path: Path) -> None:
    chunks = [Chunk(0.0, STDOUT, b'{"type":"a"}\n{"ty'), Chunk(0.5, STDOUT, b'pe":"b"}'),
              Chunk(0.6, STDERR, b"boom\n")]  # fmt: skip
    path = tmp_path / "rec.jsonl"
    path.write_bytes(Recording(argv=["cli"], chunks=chunks, exit_code=None, signal=9).dumps())
    loaded = load_source(path)
    assert loaded.lines == (b'{"type":"a"}', b'{"type":"b"}')
    assert not loaded.ends_with_newline
    assert (loaded.exit_code, loaded.signal, loaded.stderr) == (None, 9, b"boom\n")
    assert [c.t for c in loaded.recorded] == [0.0, 0.5, 0.6]


def test_a_broken_v1_recording_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"adaptertest_recording": 1, "exit_code": 0}\n{"t": 0, "fd": 3}\n')
    with pytest.raises(RecordingError, match="'fd' must be 1 or 2"):
        load_source(path)


# -- the variants ----------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_additive_drift_only_adds(source: Source, data: st.DataObject) -> None:
    """Remove the inserted lines and keys, and the recording's objects are back, in order;
    content the driver passes through is never touched."""
    content = content_objects([TOOL_INPUT])
    variant = data.draw(additive(source, content))
    out = stdout_of(variant.chunks)
    assert (b"\r\n" in out) == ("CRLF" in variant.words)
    kept: list[dict[str, Any]] = []
    for line in out.split(b"\n"):
        if not line.strip():
            continue
        obj = strict_object(line)
        assert obj is not None
        if obj["type"] in source.vocabulary:
            kept.append(obj)
        else:
            assert "unknown line" in variant.words
    assert [without_added(o, orig) for o, orig in zip(kept, LINES, strict=True)] == LINES
    tool = kept[1]["input"]
    assert (tool, list(tool)) == (TOOL_INPUT, list(TOOL_INPUT))


def test_a_reordered_line_never_keeps_its_first_key(source: Source) -> None:
    for seed in range(20):
        variant = _additive_variant(source, frozenset(), [("shuffle", 0, seed)], False)
        first = stdout_of(variant.chunks).split(b"\n")[0]
        obj = strict_object(first)
        assert obj == LINES[0]
        assert next(iter(obj)) != "type"
        assert (
            variant.words == 'line 1 (recording line 1, type "init"): keys reordered at every depth'
        )


def test_drift_words_name_each_line_and_what_was_added(source: Source) -> None:
    changes = [
        ("insert", 2, {"type": "x-new", "n": 1}),
        ("field", 2, 1, "extra", [1], "object"),
        ("blank", 4, b""),
    ]
    variant = _additive_variant(source, frozenset(), changes, True)
    assert variant.words == (
        'line 3 (inserted): unknown line {"type": "x-new", "n": 1}; '
        'line 4 (recording line 3, type "text"): unknown field "extra": [1] in message; '
        "line 6 (inserted): blank line; every line ends with CRLF"
    )


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_a_corrupt_variant_has_exactly_its_one_corrupt_line(
    source: Source, data: st.DataObject
) -> None:
    strategy = corrupt(source)
    assert strategy is not None
    variant = data.draw(strategy)
    corruption = variant.corruption
    assert corruption is not None
    lines = stdout_of(variant.chunks).split(b"\n")
    assert lines[corruption.line - 1] == corruption.data
    assert strict_object(corruption.data) is None
    assert corruption.data.startswith(b"{")
    others = [
        strict_object(line) for i, line in enumerate(lines) if line and i != corruption.line - 1
    ]
    assert others == [o for o in LINES if o in others]  # the others parse, in order
    if "invalid UTF-8" in variant.words:
        decoded = json.loads(corruption.data.decode("utf-8", errors="replace"))
        assert "\ufffd" in json.dumps(decoded, ensure_ascii=False)  # inside a string value


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_rechunking_keeps_the_bytes(source: Source, data: st.DataObject) -> None:
    payload = with_multibyte(source, {"Hi there"})[0]
    strategy = rechunked(source, payload, "stdout")
    assert strategy is not None
    variant = data.draw(strategy)
    assert stdout_of(variant.chunks) == payload
    assert len(variant.chunks) >= 2
    times = [c.t for c in variant.chunks]
    assert times == sorted(times)
    assert variant.realtime == (times[-1] > 0)


def test_a_variant_plays_as_a_plain_transcript_only_when_that_plays_it_alike(
    source: Source,
) -> None:
    per_line = line_by_line(source, b'{"type":"a"}\r\n\n{"type":"b"}', "CRLF")
    assert per_line.plain() == b'{"type":"a"}\r\n\n{"type":"b"}'
    assert per_line.stderr == b""
    lone_cr = line_by_line(source, b'{"type":"a"}\r{"type":"b"}\n', "a lone CR")
    assert lone_cr.plain() is None  # the plain path would cut the line at the CR
    header = line_by_line(source, b'{"adaptertest_recording": 1}\n', "a header look-alike")
    assert header.plain() is None
    killed = Variant(per_line.chunks, None, 9, "killed")
    assert killed.plain() is None
    cut = Variant((Chunk(0.0, STDOUT, b'{"ty'), Chunk(0.0, STDOUT, b'pe":"a"}\n')), 0, None, "cut")
    assert cut.plain() is None
    late = Variant((Chunk(0.0, STDERR, b"warn\n"), *per_line.chunks), 0, None, "stderr first")
    assert late.plain() is None


def test_multibyte_text_goes_only_where_the_driver_shows_text(source: Source) -> None:
    data, changed = with_multibyte(source, {"Hi there", "success", "s-1"})
    assert changed == 2  # the text block and the result's text; not the status or an id
    objects = [json.loads(line) for line in data.splitlines()]
    assert objects[2]["message"]["content"][0]["text"] == "Hi there" + MULTIBYTE
    assert objects[3] == {**LINES[3], "text": "Hi there" + MULTIBYTE}
    assert objects[0] == LINES[0]


# -- comparing and judging (pure) -------------------------------------------------------------


def run_of(*items: TranscriptItem, output: str = "OK", stream: int = 0) -> LiveRun:
    payloads = [StreamPayload(kind=StreamKind.TEXT_CONTENT, delta=f"d{i}") for i in range(stream)]
    return LiveRun(value=Response(output=output, transcript=list(items)), stream=payloads)


def test_ids_and_times_the_driver_makes_are_numbered_the_recorded_ones_kept(
    source: Source,
) -> None:
    def made() -> LiveRun:
        return run_of(
            TranscriptItem(kind=TranscriptKind.INIT, session_id="s-1"),
            TranscriptItem(
                kind=TranscriptKind.SYSTEM,
                metadata={"trace_id": str(uuid.uuid4())},
                data={"timestamp": str(uuid.uuid4()), "note": "fixed"},
            ),
        )

    first, second = snapshot(made(), source), snapshot(made(), source)
    assert result_differences(first, second, show=True) == []
    items = first["response"]["transcript"]
    assert items[0]["session_id"] == "s-1"
    assert items[1]["metadata"]["trace_id"] == "<made by the driver #1>"
    assert items[1]["data"] == {"timestamp": "<made by the driver #2>", "note": "fixed"}


def test_an_added_field_passed_on_under_its_own_name_is_no_change(source: Source) -> None:
    """A driver that copies a line's fields into vendor data passes a new field on: the
    CLI's data, not a change. Under another name, or with a known field, it is one."""
    base = snapshot(run_of(TranscriptItem(kind=TranscriptKind.SYSTEM, data={"a": 1})), source)

    def copied(data: dict[str, Any]) -> dict[str, Any]:
        item = TranscriptItem(kind=TranscriptKind.SYSTEM, data=data)
        return snapshot(run_of(item), source, frozenset({"x-new"}))

    assert result_differences(base, copied({"a": 1, "x-new": [1, {"x-new": 2}]}), show=True) == []
    assert result_differences(base, copied({"a": 1, "renamed": 1}), show=True) == [
        "response.transcript[0].data.renamed is new: 1"
    ]
    assert result_differences(base, copied({"a": 2, "x-new": 1}), show=True) == [
        "response.transcript[0].data.a is 2, expected 1"
    ]


def test_additive_variants_name_the_fields_they_add(source: Source) -> None:
    changes = [("field", 0, 0, "x-new", 1, "object"), ("insert", 0, {"type": "t", "k": 1})]
    variant = _additive_variant(source, frozenset(), changes, False)
    assert variant.added == {"x-new"}  # the inserted line's fields are not the recording's


def test_differences_name_the_path_and_withhold_provider_text(source: Source) -> None:
    base = snapshot(run_of(TranscriptItem(kind=TranscriptKind.ASSISTANT, text="a")), source)
    other = snapshot(
        run_of(
            TranscriptItem(kind=TranscriptKind.STDOUT, text="{oops"),
            TranscriptItem(kind=TranscriptKind.ASSISTANT, text="a", data={"odd key": 1}),
            output="secret answer",
            stream=1,
        ),
        source,
    )
    withheld = result_differences(base, other, show=False, limit=5)
    assert withheld == [
        "response.output is a text (withheld), expected a text (withheld)",
        "response.transcript has 2 entries, expected 1; at response.transcript[0]: "
        "kind 'stdout', expected kind 'assistant'",
        "stream has 1 entries, expected 0; at stream[0]: kind 'text.content', expected nothing",
    ]
    shown = result_differences(base, other, show=True, limit=1)
    assert shown == ["response.output is 'secret answer', expected 'OK'"]
    nested = snapshot(run_of(TranscriptItem(kind=TranscriptKind.ASSISTANT, text="a",
                                            data={"odd key": 1})), source)  # fmt: skip
    assert result_differences(base, nested, show=False) == [
        'response.transcript[0].data["odd key"] is new: 1'
    ]


def test_corrupt_output_must_fail_by_name_or_stay_visible_and_never_checkpoint() -> None:
    corruption = Corruption(3, b'{"type":"text","message":{"id":"m-1","conte')
    shown = TranscriptItem(kind=TranscriptKind.STDOUT, text=corruption.data.decode())
    named = RunFailure(code=FailureCode.AGENT_ERROR, message="cli printed a corrupt line 3")
    vague = RunFailure(code=FailureCode.AGENT_ERROR, message="cli printed a corrupt line 31")
    checkpoint = Checkpoint(valid=True)
    assert corruption_problems(Response(transcript=[shown]), corruption) == []
    assert corruption_problems(Response(failure=named), corruption) == []
    assert corruption_problems(Response(failure=vague), corruption) == [
        "the corrupt line 3 is lost: the failure does not name it (as 'line N' or by its "
        "text) and no transcript item shows it"
    ]
    assert corruption_problems(Response(transcript=[shown], checkpoint=checkpoint), corruption) == [
        "a valid checkpoint was offered"
    ]
    mentioned = TranscriptItem(kind=TranscriptKind.ASSISTANT, text="see line 3")
    assert (
        "the run succeeded" in corruption_problems(Response(transcript=[mentioned]), corruption)[0]
    )


# -- the probe, end to end -------------------------------------------------------------------


def drift_report(
    driver: Any, *recordings: Path, examples: int = 2, **options: Any
) -> ConformanceReport:
    drift = Drift(recordings=recordings or [SUCCESS], driver=driver, max_examples=examples)
    return check_driver(lambda: claude_around(("claude",)), Options(drift=drift, **options),
                        only=DRIFT_CLAUSES)  # fmt: skip


def verdicts(report: ConformanceReport) -> dict[str, str]:
    return {r.clause: r.status.value for r in report}


def test_the_probe_is_off_without_the_option() -> None:
    report = check_driver(lambda: claude_around(("claude",)), Options(), only=DRIFT_CLAUSES)
    for result in report:
        assert result.status is ClauseStatus.SKIPPED
        assert "the drift probe is off: for a driver that runs a CLI" in result.messages[0]


def test_a_driver_that_runs_no_cli_skips_with_the_reason() -> None:
    report = drift_report(lambda command: ReferenceDriver())
    for result in report:
        assert result.status is ClauseStatus.SKIPPED
        assert "never ran the command it was given" in result.messages[0]


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_claude_driver_passes_on_both_backends(backend: Backend) -> None:
    report = drift_report(claude_around, backend=backend)
    assert verdicts(report) == dict.fromkeys(DRIFT_CLAUSES, "passed")
    assert any("driver runs in" in note for note in report.results[0].notes)


def test_a_v1_recording_of_a_failed_run_is_judged_against_its_failure(tmp_path: Path) -> None:
    lines = (RECORDINGS / "nonzero_exit.jsonl").read_bytes().splitlines(keepends=True)
    chunks = [Chunk(0.01 * i, STDOUT, line) for i, line in enumerate(lines)]
    chunks.append(Chunk(0.1, STDERR, (RECORDINGS / "nonzero_exit.stderr.txt").read_bytes()))
    path = tmp_path / "failed.jsonl"
    path.write_bytes(Recording(argv=["claude"], chunks=chunks, exit_code=1).dumps())
    assert verdicts(drift_report(claude_around, path)) == dict.fromkeys(DRIFT_CLAUSES, "passed")


def test_a_factory_that_raises_fails_dft01_and_stops_there() -> None:
    def broken(command: tuple[str, ...]) -> ClaudeDriver:
        raise RuntimeError("no config for this command")

    report = drift_report(broken)
    assert verdicts(report) == {"DFT-01": "failed", "DFT-02": "skipped", "DFT-03": "skipped"}
    message = report.results[0].messages[0]
    assert message.startswith(
        "DFT-01: success.jsonl: on the recording as is, Drift.driver(command)"
    )
    assert "raised builtins.RuntimeError" in message
    assert "no config for this command" in message
    assert "success.jsonl as is fails (see DFT-01)" in report.results[1].messages[0]


def test_an_unreadable_recording_fails_every_clause(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"adaptertest_recording": 7, "exit_code": 0}\n')
    report = drift_report(claude_around, path)
    for result in report:
        assert result.status is ClauseStatus.FAILED
        assert "bad.jsonl: the recording cannot be read" in result.messages[0]


class _CountsLines(ClaudeStreamParser):
    """Answers with the number of lines it was fed: blank and unknown lines change it."""

    def __init__(self, out: RunOutput) -> None:
        super().__init__(out)
        self.fed = 0

    def feed(self, raw: bytes) -> None:
        self.fed += 1
        super().feed(raw)

    def output(self) -> str:
        return f"{super().output()} after {self.fed} lines"


class _Unsettled(ClaudeStreamParser):
    """Answers with a fresh uuid, in free text, on every run."""

    def output(self) -> str:
        return f"{super().output()} {uuid.uuid4()}"


def with_parser(parser: type[ClaudeStreamParser]) -> Any:
    class Driver(ClaudeDriver):
        def stream_parser(self, out: RunOutput, *, model: str) -> ClaudeStreamParser:
            return parser(out)

    return lambda command: Driver(ClaudeConfig(command=command))


@pytest.mark.parametrize("show", [False, True])
def test_a_failure_names_the_drift_and_withholds_text_unless_asked(show: bool) -> None:
    report = drift_report(with_parser(_CountsLines), examples=4, show_live_details=show)
    assert verdicts(report)["DFT-01"] == "failed"
    message = report.results[0].messages[0]
    assert message.startswith("DFT-01: success.jsonl: line ")
    assert "the result differs from the recording's as is: response.output is " in message
    assert "(hypothesis, the smallest drift found in " in message
    assert ("after 3 lines" in message) is show
    assert ("a text (withheld)" in message) is not show


def test_a_driver_that_differs_run_to_run_fails_dft03_and_skips_dft01() -> None:
    report = drift_report(with_parser(_Unsettled))
    assert verdicts(report) == {"DFT-01": "skipped", "DFT-02": "passed", "DFT-03": "failed"}
    assert (
        "two runs of the recording as is, delivered the same way, differ: response.output"
        in (report.results[2].messages[0])
    )
    assert "gives a different result on every run (see DFT-03)" in report.results[0].messages[0]


class RaisesAfterRunning(ClaudeDriver):
    """Runs the CLI, then raises with text that could quote the provider."""

    async def run(self, request: Any, sink: Any) -> Response:
        await super().run(request, sink)
        raise FileNotFoundError("provider canary 7f3e")


@pytest.mark.parametrize("show", [False, True])
def test_a_raising_run_names_where_it_raised_and_withholds_its_message(show: bool) -> None:
    report = drift_report(
        lambda command: RaisesAfterRunning(ClaudeConfig(command=command)),
        show_live_details=show,
    )
    message = report.results[0].messages[0]
    assert message.startswith("DFT-01: success.jsonl:"), message
    assert "run() raised builtins.FileNotFoundError at " in message
    assert "test_dft.py:" in message
    assert " in run" in message
    assert ("provider canary 7f3e" in message) is show
    if not show:
        assert "<withheld: 20 chars, sha256:" in message


def test_two_long_texts_are_shown_where_they_differ() -> None:
    """Two outputs alike for their first 60 characters are shown from where they part,
    not cut at the same length (which would print them equal)."""
    common = '{"type": "result", "status": "success", "session_id": "7d1e4a90-2c5b-4f8e"'
    expected = {"response": {"output": common + ', "text": "OK"}'}}
    got = {"response": {"output": common + ', "": null, "text": "OK"}'}}
    (line,) = result_differences(expected, got, show=True)
    at = len(common) + len(', "')  # where '"": null' and '"text"' part
    assert line.startswith(f"response.output differs from character {at} on (")
    shown_got, _, shown_expected = line.partition(": ")[2].partition(", expected ")
    assert shown_got != shown_expected
    assert '"": null' in shown_got
    assert '"text": "OK"' in shown_expected
    withheld = result_differences(expected, got, show=False)
    assert withheld == ["response.output is a text (withheld), expected a text (withheld)"]
