"""benchmarks/run.py works: each function runs at tiny sizes and returns well-formed rows.

Nothing here judges speed or memory (that is the script's job, on a quiet machine);
only the shape of what the script produces and the validity of its benchmark stream.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from adaptertest.evt import verify_stream_sequence
from driver.events import StreamKind
from load_script import load_script

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "run.py"
RESULTS = {"PASS", "MISS", "info", "n/a"}


bench = load_script(SCRIPT, "benchmarks_run")


def _by_name(figures: list[Any]) -> dict[str, Any]:
    names = [f.name for f in figures]
    assert len(names) == len(set(names)), "figure names must be unique"
    return {f.name: f for f in figures}


def _well_formed(figure: Any) -> None:
    assert figure.name
    assert figure.shown
    assert figure.result in RESULTS
    if figure.result in ("PASS", "MISS"):
        assert figure.target, f"{figure.name}: a judged figure names its target"
        assert figure.value is not None


@pytest.mark.parametrize("n", [2, 3, 57, 1000])
def test_stream_has_exact_size_and_is_compliant(n: int) -> None:
    payloads = list(bench.realistic_stream(n))
    assert len(payloads) == n
    assert payloads[0].kind == StreamKind.RUN_STARTED
    assert payloads[-1].kind == StreamKind.RUN_FINISHED
    assert verify_stream_sequence(payloads) == []


def test_stream_mixes_lifecycles_vendor_kinds_and_fresh_ids() -> None:
    payloads = bench.build_stream(2000)
    kinds = Counter(p.kind for p in payloads)
    for kind in (
        StreamKind.TEXT_CONTENT,
        StreamKind.REASONING_CONTENT,
        StreamKind.TOOL_CALL_ARGS,
        StreamKind.TOOL_CALL_RESULT,
        StreamKind.DROPPED,
        *bench.VENDOR_KINDS,
    ):
        assert kinds[kind] > 0, kind
    message_ids = [
        p.message_id
        for p in payloads
        if p.kind in (StreamKind.TEXT_START, StreamKind.REASONING_START)
    ]
    tool_ids = [p.tool_call_id for p in payloads if p.kind == StreamKind.TOOL_CALL_START]
    assert len(message_ids) == len(set(message_ids)) > 10
    assert len(tool_ids) == len(set(tool_ids)) > 10
    assert any(p.scope_id for p in payloads), "some tools run in a sub-agent scope"


def test_stream_is_lazy_and_refuses_impossible_sizes() -> None:
    stream = bench.realistic_stream(10**12)
    assert next(stream).kind == StreamKind.RUN_STARTED  # nothing near that size was built
    with pytest.raises(ValueError, match="at least"):
        list(bench.realistic_stream(1))


def test_stream_figures_cover_every_size_form_and_target() -> None:
    figures = bench.stream_figures((300, 600, 1200), repeats=1)
    by_name = _by_name(figures)
    for figure in figures:
        _well_formed(figure)
    for form in ("verify_stream_sequence", "StreamVerifier.feed"):
        for size in ("300", "600", "1200"):
            assert by_name[f"{form} {size}: throughput"].value > 0
            assert by_name[f"{form} {size}: time / bare loop"].value > 0
        assert by_name[f"{form}: time(1200) / time(600)"].target == "<= 2.2x"
    growth = by_name["StreamVerifier: peak(1200) / peak(300)"]
    assert growth.target == "<= 2x"
    peaks = [by_name[f"StreamVerifier {n}: peak memory (generator-fed)"] for n in (300, 600, 1200)]
    assert all(p.value > 0 and "ids tracked" in p.detail for p in peaks)


def test_memory_probe_reports_the_ids_the_verifier_keeps() -> None:
    small, large = bench.incremental_peak(200), bench.incremental_peak(2000)
    assert 0 < small.tracked < large.tracked
    assert small.peak > 0
    assert large.peak > 0
    assert bench.generator_peak(200) > 0


def test_suite_figures_measure_check_driver_and_its_first_call() -> None:
    figures = bench.suite_figures(repeats=1, cold_repeats=1)
    assert [f.name for f in figures] == [
        "check_driver, every option, concurrent_runs=4",
        "check_driver, first call in a fresh process",
    ]
    for figure in figures:
        _well_formed(figure)
        assert not figure.shown.startswith("unavailable"), figure.shown


def test_cli_figures_run_the_command_whole() -> None:
    figures = bench.cli_figures(repeats=1)
    main = figures[0]
    _well_formed(main)
    assert main.name == "CLI check --live, whole process"
    assert not main.shown.startswith("unavailable"), main.shown
    assert main.target == "< 1.5 s"


def test_import_figures_judge_cost_and_heavy_modules() -> None:
    cost, heavy = bench.import_figures(repeats=1)
    _well_formed(cost)
    _well_formed(heavy)
    assert cost.target == "< 200 ms"
    assert heavy.name == "import adaptertest: heavy modules loaded"


def test_replay_figures_time_both_forms_and_list_what_it_loads() -> None:
    figures = bench.replay_figures(repeats=1)
    by_name = _by_name(figures)
    for figure in figures:
        _well_formed(figure)
    for form in ("plain", "recording"):
        assert by_name[f"replay start-up, {form}"].target == "< 15 ms"
    assert by_name["replay start-up, plain, no bytecode cache"].result == "info"
    loaded = by_name["replay: modules it avoids, loaded"]
    assert loaded.shown == "none", loaded.shown


def test_replay_sample_files_replay_the_same_bytes(tmp_path: Path) -> None:
    from adaptertest import recording

    plain, recorded = bench.replay_files(str(tmp_path))
    assert recording.read(recorded).stdout == Path(plain).read_bytes()


def test_heavy_modules_names_packages_not_submodules() -> None:
    forbidden, notable = bench.heavy_modules(["sys", "_pytest.main", "rich.console", "pydantic"])
    assert forbidden == ["_pytest", "rich"]
    assert notable == ["pydantic"]
    assert bench.heavy_modules(["adaptertest", "typing"]) == ([], [])


def test_import_profile_parses_importtime_output() -> None:
    parsed = bench.import_profile(["-c", "import json"])
    assert parsed is not None
    total, top = parsed
    assert total > 0
    assert 0 < len(top) <= 4
    assert all(isinstance(name, str) and seconds >= 0 for name, seconds in top)


def test_render_lines_up_one_row_per_figure() -> None:
    figures = [
        bench.Figure("a", "1.00 M payloads/s", ">= 1", True, 1.0, "note"),
        bench.Figure("longer name", "2x", "<= 10x", False, 2.0),
        bench.Figure("c", "3 MiB", value=3.0),
        bench.unavailable("d", "the CLI is not there yet", "< 1.5 s"),
    ]
    assert [f.result for f in figures] == ["PASS", "MISS", "info", "n/a"]
    lines = bench.render(figures).splitlines()
    assert len(lines) == 2 + len(figures)
    assert lines[0].split() == ["figure", "measured", "target", "result", "detail"]
    assert "unavailable (the CLI is not there yet)" in lines[-1]
    column = lines[0].index("result")
    cells = [line[column : column + 4].strip() for line in lines[2:]]
    assert cells == ["PASS", "MISS", "info", "n/a"]


def test_size_labels() -> None:
    assert [bench.size_label(n) for n in (10_000, 100_000, 1_000_000, 1500)] == [
        "10k",
        "100k",
        "1M",
        "1500",
    ]


def test_profile_names_the_verifier_hot_path() -> None:
    text = bench.profile_verifier(bench.build_stream(500), top=5)
    assert "feed" in text


def test_main_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--quick", "--only", "import"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("benchmarks: ")
    assert "Python " in out
    assert "import adaptertest (fresh process)" in out


def test_drift_figures_time_a_small_probe() -> None:
    (probe,) = bench.drift_figures(variants=3)
    _well_formed(probe)
    assert probe.name == "drift probe, 3 variants of each of 2 recordings"
    assert probe.target == "< 5 s"
    assert "not passed" not in probe.detail, probe.detail
    assert "driver runs (variants: 1 per clause and recording; plus the baselines)" in probe.detail


def test_fresh_check_figures_measure_the_uncached_check_and_the_opt_out() -> None:
    figures = bench.fresh_check_figures(repeats=1)
    assert [f.name for f in figures] == [
        "check_driver, every option, fresh-interpreter check uncached",
        "check_driver, every option, Options(fresh_process=False)",
    ]
    for figure in figures:
        _well_formed(figure)
    assert "the fresh interpreter alone: median" in figures[0].detail
