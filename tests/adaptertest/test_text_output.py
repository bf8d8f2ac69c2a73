"""A driver that hands its CLI's output over as text, not bytes.

The SPI encodes a ``str`` given to a bytes field as UTF-8 (``surrogateescape``), so
such a driver passes every live clause. A ``str`` smuggled past validation (field
assignment, ``model_copy(update=...)``, ``model_construct``) is still not bytes, and
the suite says so by field instead of crashing on it.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

import pytest
from pydantic import BaseModel

from adaptertest import CLAUSES, ClauseStatus, ConformanceReport, Options, check_driver
from adaptertest._shape import shape_problem
from adaptertest.run import verify_run_events
from driver import (
    EventSink,
    RawStreams,
    Request,
    Response,
    RunEvent,
    RunEventType,
    TranscriptItem,
    TranscriptKind,
)
from referencedriver import ReferenceConfig, ReferenceDriver

M = TypeVar("M", bound=BaseModel)
LIVE = [c.id for c in CLAUSES if {"live_run", "live_structured_output"} & set(c.probes)]
TEXT = '{"type":"result","result":"caf\u00e9"}\n'
UNDECODABLE = b"\xff\xfe raw \xe6\x97".decode("utf-8", errors="surrogateescape")


class TextOutput(ReferenceDriver):
    """Reads its CLI's output as text and hands the text to every bytes field."""

    def __init__(self, smuggle: bool = False) -> None:
        super().__init__(ReferenceConfig())
        self._smuggle = smuggle

    async def run(self, request: Request, sink: EventSink) -> Response:
        response = await super().run(request, sink)
        sink.emit(RunEvent(type=RunEventType.CHUNK, stream="stdout", chunk=TEXT))
        sink.emit(RunEvent(type=RunEventType.CHUNK, stream="stderr", chunk=UNDECODABLE))
        assert response.raw_streams is not None
        terminal = response.raw_streams.terminal
        if self._smuggle:  # model_copy(update=...) skips validation
            raw = response.raw_streams.model_copy(update={"stdout": TEXT})
        else:
            raw = RawStreams(stdout=TEXT, stderr=UNDECODABLE, terminal=terminal)
        return response.model_copy(update={"raw_streams": raw})


def _unchecked(model: type[M], **fields: Any) -> M:
    """``model_construct`` with values of the wrong type, the way a careless driver could."""
    return model.model_construct(**fields)


def _check(smuggle: bool, backend: Literal["asyncio", "trio"] = "asyncio") -> ConformanceReport:
    options = Options(
        config=ReferenceConfig(),
        live_run=True,
        live_structured_output=True,
        strict_observation_demand=True,
        backend=backend,
    )
    return check_driver(lambda: TextOutput(smuggle), options, only=LIVE)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_text_handed_to_bytes_fields_passes_every_live_clause(
    backend: Literal["asyncio", "trio"],
) -> None:
    report = _check(smuggle=False, backend=backend)
    statuses = {r.clause: r.status for r in report.results}
    assert statuses == dict.fromkeys(LIVE, ClauseStatus.PASSED), [
        m for r in report.results for m in r.messages
    ]


def test_text_smuggled_past_validation_is_named_not_crashed_on() -> None:
    report = _check(smuggle=True)
    [liv01] = [r for r in report.results if r.clause == "LIV-01"]
    assert liv01.status is ClauseStatus.FAILED
    assert all("raw_streams.stdout: holds str where bytes belongs" in m for m in liv01.messages)
    assert not any("please report" in m for r in report.results for m in r.messages)
    assert TEXT.strip() not in " ".join(m for r in report.results for m in r.messages)


def test_a_constructed_chunk_of_text_is_a_run02_violation_by_field() -> None:
    event = _unchecked(RunEvent, type="chunk", stream="stdout", chunk="text")
    [violation] = verify_run_events([RunEvent(type="chunk", stream="stdout", chunk="ok"), event])
    assert violation.clause == "RUN-02"
    assert violation.message.startswith("event 1 is not a well-formed RunEvent: chunk: holds str")


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (Response(exit_code=2), None),
        (_unchecked(Response, exit_code="2"), "exit_code: holds str where int belongs"),
        (
            Response(transcript=[TranscriptItem(kind=TranscriptKind.USER)]).model_copy(
                update={"transcript": [_unchecked(TranscriptItem, kind="user")]}
            ),
            "transcript.0.kind: holds str where TranscriptKind belongs",
        ),
        (
            Response(raw_streams=RawStreams()).model_copy(
                update={"raw_streams": _unchecked(RawStreams, stderr=bytearray(b"x"))}
            ),
            "raw_streams.stderr: holds bytearray where bytes belongs",
        ),
    ],
    ids=["valid", "int-as-str", "nested-enum-as-str", "bytearray"],
)
def test_shape_problem_names_values_that_validation_would_convert(
    value: Response, problem: str | None
) -> None:
    found = shape_problem(value, Response)
    if problem is None:
        assert found is None
    else:
        assert found is not None
        assert found.startswith(problem)


@pytest.mark.parametrize(
    "value",
    [{"model": ReferenceConfig()}, (1, 2), {1, 2}, b"\xff", RawStreams(stdout=b"x")],
    ids=["model", "tuple", "set", "bytes", "spi-model"],
)
def test_any_fields_hold_whatever_python_value_they_were_given(value: Any) -> None:
    item = TranscriptItem(kind=TranscriptKind.TOOL_CALL, input=value)
    assert shape_problem(Response(transcript=[item]), Response) is None
