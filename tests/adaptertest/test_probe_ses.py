"""The session_codec probe: the reference passes SES-01..08, each broken codec fails
exactly its clause, hangs are bounded, and the hypothesis property finds what a
tame seed cannot."""

from __future__ import annotations

import inspect
import json
import random
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from adaptertest import ClauseStatus, ConformanceReport, Options, check_driver
from adaptertest.options import Backend
from adaptertest.ses import CODEC_CLAUSES, MUTATION_SUFFIX, mutated, reordered
from driver import Descriptor, SessionCapability, SessionParams, SessionState
from referencedriver import ReferenceDriver, ReferenceSessionCodec

KEYS = ("cwd", "workspace_id")
SEED = SessionState(
    resume_id="sess-1", data={"cwd": "workspace-a", "workspace_id": "ws-1", "note": "kept"}
)
FULL = Options(session_state=SEED, session_keys=KEYS, guard_keys=KEYS)


class CodecDriver:
    """The reference descriptor with a chosen codec (resume declared unless told not to)."""

    def __init__(self, codec: object, *, resume: bool = True) -> None:
        self._codec = codec
        self._resume = resume

    def descriptor(self) -> Descriptor:
        desc = ReferenceDriver().descriptor()
        return desc.model_copy(update={"sessions": SessionCapability(supports_resume=self._resume)})

    def session_codec(self) -> object:
        return self._codec


class NoCodecDriver:
    """Declares no resume and has no session_codec() at all."""

    def descriptor(self) -> Descriptor:
        return CodecDriver(None, resume=False).descriptor()


def run(driver: Callable[[], object], options: Options = FULL) -> ConformanceReport:
    return check_driver(driver, options, only=CODEC_CLAUSES)


def statuses(report: ConformanceReport) -> dict[str, ClauseStatus]:
    return {r.clause: r.status for r in report.results}


def failed(report: ConformanceReport) -> dict[str, tuple[str, ...]]:
    return {r.clause: r.messages for r in report.results if r.status is ClauseStatus.FAILED}


def only_failure(report: ConformanceReport, clause: str) -> str:
    """Assert ``clause`` is the single failing clause; return its first message."""
    fails = failed(report)
    assert list(fails) == [clause], fails
    messages = fails[clause]
    assert all(m.startswith(f"{clause}: ") for m in messages), messages
    return messages[0]


# -- the reference and the skips -------------------------------------------------------------


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_reference_passes_every_codec_clause(backend: Backend) -> None:
    options = Options(session_state=SEED, session_keys=KEYS, guard_keys=KEYS, backend=backend)
    report = run(ReferenceDriver, options)
    assert statuses(report) == dict.fromkeys(CODEC_CLAUSES, ClauseStatus.PASSED)


def test_reference_with_default_seed_skips_the_opt_in_clauses() -> None:
    report = run(ReferenceDriver, Options())
    got = statuses(report)
    assert got.pop("SES-06") is ClauseStatus.SKIPPED
    assert got.pop("SES-08") is ClauseStatus.SKIPPED
    assert set(got.values()) == {ClauseStatus.PASSED}
    by_clause = {r.clause: r.messages[0] for r in report.results if r.messages}
    assert by_clause["SES-06"].startswith("SES-06 skipped:")
    assert "Options(guard_keys=...)" in by_clause["SES-06"]
    assert "Options(session_keys=...)" in by_clause["SES-08"]


@pytest.mark.parametrize(
    "driver",
    [NoCodecDriver, lambda: CodecDriver(None, resume=False)],
    ids=["no-provider", "provider-returns-none"],
)
def test_driver_without_codec_skips_with_reason(driver: Callable[[], object]) -> None:
    report = run(driver)
    for result in report.results:
        assert result.status is ClauseStatus.SKIPPED
        assert result.messages[0].startswith(
            f"{result.clause} skipped: driver exposes no session codec (session_codec"
        )


def test_codec_without_resume_declaration_is_still_checked() -> None:
    report = run(lambda: CodecDriver(ReferenceSessionCodec(), resume=False))
    assert set(statuses(report).values()) == {ClauseStatus.PASSED}


@pytest.mark.parametrize(
    ("driver", "fragment"),
    [
        (lambda: CodecDriver(None), "returned None although the descriptor declares"),
        (lambda: CodecDriver(object()), "without callable name, to_params"),
    ],
    ids=["none", "not-a-codec"],
)
def test_missing_codec_with_resume_declared_is_an_ses01_fatal(
    driver: Callable[[], object], fragment: str
) -> None:
    report = run(driver)
    message = only_failure(report, "SES-01")
    assert fragment in message
    assert "CAP-01" in message
    others = [r for r in report.results if r.clause != "SES-01"]
    assert all(r.status is ClauseStatus.SKIPPED for r in others)
    assert all("not judged" in r.messages[0] for r in others)


def test_unknown_session_key_is_a_misconfiguration() -> None:
    report = run(ReferenceDriver, Options(session_state=SEED, session_keys=("cwd", "absent")))
    message = only_failure(report, "SES-08")
    assert "misconfiguration" in message
    assert "'absent'" in message


# -- broken codecs ----------------------------------------------------------------------------


class DriftingName(ReferenceSessionCodec):
    def __init__(self) -> None:
        self.calls = 0

    def name(self) -> str:
        self.calls += 1
        return f"reference-{self.calls}"


class AsyncName(ReferenceSessionCodec):
    async def name(self) -> str:  # type: ignore[override]
        return "reference"


class NoneNotZero(ReferenceSessionCodec):
    def to_params(self, state: SessionState | None) -> SessionParams:
        if state is None:
            return SessionParams(values={"x": "y"})
        return super().to_params(state)


class RestoresNothing(ReferenceSessionCodec):
    def from_params(self, params: SessionParams) -> SessionState | None:
        return super().from_params(params) or SessionState()


class DropsDataKey(ReferenceSessionCodec):
    def to_params(self, state: SessionState | None) -> SessionParams:
        params = super().to_params(state)
        params.values.pop("note", None)
        return params


class DropsDisplayId(ReferenceSessionCodec):
    def to_params(self, state: SessionState | None) -> SessionParams:
        return super().to_params(state).model_copy(update={"display_id": ""})


class LossyRestore(ReferenceSessionCodec):
    def from_params(self, params: SessionParams) -> SessionState | None:
        state = super().from_params(params)
        if state is None:
            return None
        return state.model_copy(
            update={"data": {k: state.data[k] for k in KEYS if k in state.data}}
        )


class IdentityGuard(ReferenceSessionCodec):
    def guard_fingerprint(self, params: SessionParams) -> str:
        return f"{id(params):x}"


class RandomGuard(ReferenceSessionCodec):
    def guard_fingerprint(self, params: SessionParams) -> str:
        return f"{super().guard_fingerprint(params)}-{random.random()}"


class IgnoresWorkspace(ReferenceSessionCodec):
    def guard_fingerprint(self, params: SessionParams) -> str:
        values = {k: v for k, v in params.values.items() if k != "workspace_id"}
        return super().guard_fingerprint(params.model_copy(update={"values": values}))


class RaisesOnNone(ReferenceSessionCodec):
    def to_params(self, state: SessionState | None) -> SessionParams:
        if state is None:
            raise RuntimeError("no state to convert")
        return super().to_params(state)


RAISE_LINE = inspect.getsourcelines(RaisesOnNone.to_params)[1] + 2
"""Where RaisesOnNone raises: the location every raise is reported with."""


@pytest.mark.parametrize(
    ("codec", "clause", "fragment"),
    [
        (DriftingName, "SES-01", "name() returned 'reference-1', then 'reference-2'"),
        (AsyncName, "SES-01", "name() returned coroutine"),
        (NoneNotZero, "SES-02", "to_params(None) returned"),
        (RestoresNothing, "SES-02", "from_params(SessionParams()) returned SessionState("),
        (DropsDataKey, "SES-03", "dropped data key(s) 'note'"),
        (DropsDisplayId, "SES-03", "left display_id empty"),
        (LossyRestore, "SES-04", "values lost key(s) 'note'"),
        (IdentityGuard, "SES-05", "guard_fingerprint(params) returned"),
        (RandomGuard, "SES-05", "guard_fingerprint(params) returned"),
        (IgnoresWorkspace, "SES-06", "values['workspace_id'] became 'ws-1-adaptertest-mutated'"),
        (
            RaisesOnNone,
            "SES-07",
            "to_params(None) raised builtins.RuntimeError at tests/adaptertest/"
            f"test_probe_ses.py:{RAISE_LINE} in to_params: no state",
        ),
    ],
    ids=lambda value: value.__name__ if isinstance(value, type) else None,
)
def test_broken_codec_fails_exactly_its_clause(
    codec: Callable[[], object], clause: str, fragment: str
) -> None:
    report = run(lambda: CodecDriver(codec()))
    message = only_failure(report, clause)
    assert fragment in message


@pytest.mark.parametrize("codec", [RandomGuard, IdentityGuard], ids=lambda c: c.__name__)
def test_a_nondeterministic_guard_is_diagnosed_as_such(codec: Callable[[], object]) -> None:
    """A guard that changes between two calls on the same params is told to be
    deterministic, not to sort its keys (insertion order is not its problem)."""
    message = only_failure(run(lambda: CodecDriver(codec())), "SES-05")
    assert "a guard must be deterministic" in message
    assert "sort the keys" not in message
    assert "insertion order" not in message


# -- guards that lean on dict order or on data being there -----------------------------------


class InsertionOrderGuard(ReferenceSessionCodec):
    """Hashes the values as JSON without sort_keys: dict order leaks into the guard."""

    def guard_fingerprint(self, params: SessionParams) -> str:
        return json.dumps([params.resume_id, params.values])


class GuardNeedsData(ReferenceSessionCodec):
    """An empty guard whenever there are no values."""

    def guard_fingerprint(self, params: SessionParams) -> str:
        return super().guard_fingerprint(params) if params.values else ""


def reference_with(codec: type[ReferenceSessionCodec]) -> type[ReferenceDriver]:
    """The whole reference driver, with its codec swapped for ``codec``."""

    class Driver(ReferenceDriver):
        def session_codec(self) -> ReferenceSessionCodec:
            return codec()

    return Driver


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@pytest.mark.parametrize(
    ("codec", "fragment"),
    [
        (InsertionOrderGuard, "inserted in another order"),
        (GuardNeedsData, "returned an empty string (params.values is empty)"),
    ],
    ids=["insertion-order", "empty-without-data"],
)
def test_guard_bugs_fail_exactly_ses05_on_both_backends(
    codec: type[ReferenceSessionCodec], fragment: str, backend: Backend
) -> None:
    report = check_driver(reference_with(codec), Options(backend=backend, max_examples=10))
    message = only_failure(report, "SES-05")
    assert fragment in message


def test_insertion_order_guard_fails_on_the_seed() -> None:
    message = only_failure(run(lambda: CodecDriver(InsertionOrderGuard())), "SES-05")
    assert not message.startswith("SES-05: on a generated state"), message
    assert "keys 'cwd', 'workspace_id', 'note' vs 'note', 'workspace_id', 'cwd'" in message


def test_insertion_order_guard_fails_on_generated_states_past_a_one_key_seed() -> None:
    seed = SessionState(resume_id="sess-1", data={"cwd": "workspace-a"})
    report = run(lambda: CodecDriver(InsertionOrderGuard()), Options(session_state=seed))
    message = only_failure(report, "SES-05")
    assert message.startswith("SES-05: on a generated state (hypothesis, shrunk): "), message
    assert "inserted in another order" in message


def test_guard_needing_data_passes_the_seed_but_not_the_generated_states() -> None:
    message = only_failure(run(lambda: CodecDriver(GuardNeedsData())), "SES-05")
    assert message.startswith("SES-05: on a generated state (hypothesis, shrunk): "), message
    assert message.endswith("data={})"), message


def test_reordered_params_are_equal_with_values_in_reverse_order() -> None:
    params = SessionParams(resume_id="r", values={"b": "1", "a": "2", "c": "3"})
    other = reordered(params)
    assert other == params
    assert list(other.values) == ["c", "a", "b"]
    assert list(params.values) == ["b", "a", "c"]


def test_generated_states_include_no_data_and_only_the_required_keys() -> None:
    seen: list[SessionState] = []

    class Recording(ReferenceSessionCodec):
        def to_params(self, state: SessionState | None) -> SessionParams:
            if state is not None:
                seen.append(state.model_copy(deep=True))
            return super().to_params(state)

    report = run(lambda: CodecDriver(Recording()), FULL)
    assert not failed(report)
    generated = [s for s in seen if s.resume_id != SEED.resume_id]
    assert any(not s.data for s in generated)
    assert any(set(s.data) == set(SEED.data) for s in generated)
    assert any(len(s.data) > 20 for s in generated)


# -- hangs ------------------------------------------------------------------------------------


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Lets abandoned codec calls finish when the test is over."""
    event = threading.Event()
    yield event
    event.set()


def test_hanging_codec_method_is_a_bounded_fatal(release: threading.Event) -> None:
    class HangingGuard(ReferenceSessionCodec):
        def guard_fingerprint(self, params: SessionParams) -> str:
            release.wait(10)
            return super().guard_fingerprint(params)

    options = Options(session_state=SEED, probe_timeout=1.0)
    report = run(lambda: CodecDriver(HangingGuard()), options)
    message = only_failure(report, "SES-07")
    assert "guard_fingerprint(SessionParams()) did not return within 1 s" in message
    assert statuses(report)["SES-03"] is ClauseStatus.SKIPPED


def test_hang_inside_the_property_names_the_clause_being_checked(
    release: threading.Event,
) -> None:
    class HangsOnStrangers(ReferenceSessionCodec):
        def to_params(self, state: SessionState | None) -> SessionParams:
            if state is not None and state.resume_id != SEED.resume_id:
                release.wait(10)
            return super().to_params(state)

    options = Options(session_state=SEED, probe_timeout=1.0)
    report = run(lambda: CodecDriver(HangsOnStrangers()), options)
    message = only_failure(report, "SES-03")
    assert message.startswith(
        "SES-03: on generated states (hypothesis): the property did not finish within 1 s"
    )
    assert "it was waiting on to_params(state); state=SessionState(" in message


# -- what only the property finds -------------------------------------------------------------


class LineJoinCodec(ReferenceSessionCodec):
    """Packs data into ``key=value`` lines and parses them back: fine for tame keys only."""

    def from_params(self, params: SessionParams) -> SessionState | None:
        state = super().from_params(params)
        if state is None:
            return None
        blob = "\n".join(f"{k}={v}" for k, v in state.data.items())
        data: dict[str, str] = {}
        for line in blob.split("\n") if blob else []:
            key, _, value = line.partition("=")
            data[key] = value
        return state.model_copy(update={"data": data})


def test_line_join_codec_passes_the_seed() -> None:
    codec = LineJoinCodec()
    params = codec.to_params(SEED)
    restored = codec.from_params(params)
    assert restored is not None
    assert codec.to_params(restored) == params


def test_property_catches_what_the_seed_cannot() -> None:
    report = run(lambda: CodecDriver(LineJoinCodec()))
    message = only_failure(report, "SES-04")
    # The seed passed (a seed failure would be reported instead of the property's).
    assert message.startswith("SES-04: on a generated state (hypothesis, shrunk): ")
    shown = message.partition("state=")[2]
    assert shown.startswith("SessionState(")
    data = shown.partition("data=")[2]
    assert "=" in data or "\\n" in data, shown


def test_property_failure_is_deterministic() -> None:
    first = failed(run(lambda: CodecDriver(LineJoinCodec())))
    second = failed(run(lambda: CodecDriver(LineJoinCodec())))
    assert first == second


def test_property_leaves_hypothesis_setup_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    profile = repr(settings())
    report = run(lambda: CodecDriver(LineJoinCodec()))
    assert "SES-04" in failed(report)
    assert repr(settings()) == profile
    assert list(tmp_path.iterdir()) == []  # no example database written


def test_mutation_appends_suffix_and_creates_missing_keys() -> None:
    params = SessionParams(resume_id="r", values={"cwd": "a"})
    assert mutated(params, "cwd").values == {"cwd": "a" + MUTATION_SUFFIX}
    assert mutated(params, "gone").values == {"cwd": "a", "gone": MUTATION_SUFFIX}
    assert params.values == {"cwd": "a"}


# -- SES-01: a blank codec name ---------------------------------------------------------------


class NamedCodec(ReferenceSessionCodec):
    """The reference codec under another name."""

    def __init__(self, name: str) -> None:
        self._name = name

    def name(self) -> str:
        return self._name


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("", "an empty name ''"),
        (" ", "a blank name ' '"),
        ("\t\r\n", "a blank name '\\t\\r\\n'"),
        ("\xa0\u3000", "a blank name '\\xa0\\u3000'"),  # Unicode spaces Go trims too
    ],
    ids=["empty", "space", "controls", "unicode-spaces"],
)
def test_a_blank_codec_name_fails_ses01_alone(name: str, shown: str) -> None:
    message = only_failure(run(lambda: CodecDriver(NamedCodec(name))), "SES-01")
    assert message == f"SES-01: name() returned {shown}"


def test_a_name_with_spaces_around_it_is_not_blank() -> None:
    report = run(lambda: CodecDriver(NamedCodec(" reference ")))
    assert statuses(report) == dict.fromkeys(CODEC_CLAUSES, ClauseStatus.PASSED)
