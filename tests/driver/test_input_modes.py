"""Python input versus JSON input: where the SPI models read the two differently.

pydantic validates a ``str`` handed over in Python and a ``str`` read from JSON by
separate rules for some types. Each difference (and each trap that looks like one
but is not) is pinned here, so a pydantic upgrade or a model change that moves one
shows up as a failing test instead of as lost data in a driver.
"""

from __future__ import annotations

import base64
import json
import math
import typing
from collections import deque
from datetime import UTC, date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

import driver
from driver import (
    AgentPayload,
    ConfigField,
    ConfigSchema,
    Descriptor,
    FailureCode,
    HumanDecisionPolicy,
    InvocationPhase,
    QuotaWindow,
    RawStreams,
    Response,
    RunEvent,
    RunFailure,
    SessionState,
    Skill,
    SkillSource,
    StreamKind,
    StreamPayload,
    TranscriptItem,
)
from driver._base import RawBytes

PROPERTY = settings(max_examples=60, deadline=None, derandomize=True, database=None)


def _models() -> list[type[BaseModel]]:
    return [
        obj
        for name in driver.__all__
        if isinstance(obj := getattr(driver, name), type) and issubclass(obj, BaseModel)
    ]


def _mentions_bytes(annotation: object) -> bool:
    return annotation is bytes or any(_mentions_bytes(a) for a in typing.get_args(annotation))


# Every bytes field of the SPI, found by walking the models (not written out by hand).
BYTES_FIELDS = sorted(
    (model.__name__, name)
    for model in _models()
    for name, info in model.model_fields.items()
    if _mentions_bytes(info.annotation)
)
_BYTES_MODELS = {model.__name__: model for model in _models()}


def test_the_bytes_fields_are_the_raw_output_fields() -> None:
    assert BYTES_FIELDS == [
        ("RawStreams", "stderr"),
        ("RawStreams", "stdout"),
        ("RunEvent", "chunk"),
    ]


@pytest.mark.parametrize(("model", "field"), BYTES_FIELDS)
def test_every_bytes_field_uses_the_one_raw_bytes_type(model: str, field: str) -> None:
    info = _BYTES_MODELS[model].model_fields[field]
    assert info.annotation is bytes
    assert info.metadata == list(typing.get_args(RawBytes)[1:])


# ---------------------------------------------------------------------------
# bytes fields: Python str is text, JSON str is base64


def _build(model: str, field: str, value: object) -> BaseModel:
    return _BYTES_MODELS[model].model_validate({field: value})


def test_the_issue_examples() -> None:
    assert RawStreams(stdout="done").stdout == b"done"  # was b'v\x89\xde' (base64-decoded)
    assert RawStreams(stdout="hello\n").stdout == b"hello\n"  # was a base64 error
    assert RunEvent(type="chunk", stream="stdout", chunk="日本\n").chunk == "日本\n".encode()


@pytest.mark.parametrize(("model", "field"), BYTES_FIELDS)
@PROPERTY
@given(raw=st.binary(max_size=200))
def test_decoded_output_given_as_text_round_trips_to_the_same_bytes(
    model: str, field: str, raw: bytes
) -> None:
    text = raw.decode("utf-8", errors="surrogateescape")
    from_text = _build(model, field, text)
    from_bytes = _build(model, field, raw)
    assert getattr(from_text, field) == raw
    assert type(getattr(from_bytes, field)) is bytes
    assert from_text == from_bytes
    # JSON carries the bytes as standard base64, both ways, without loss
    dumped = from_text.model_dump_json()
    assert json.loads(dumped)[field] == base64.b64encode(raw).decode()
    assert type(from_text).model_validate_json(dumped) == from_text
    assert type(from_text).model_validate(from_text.model_dump()) == from_text


# Text that names bytes: any code point except the lone surrogates that stand for none.
_ESCAPES = st.characters(min_codepoint=0xDC80, max_codepoint=0xDCFF)


@pytest.mark.parametrize(("model", "field"), BYTES_FIELDS)
@PROPERTY
@given(text=st.text(st.characters(exclude_categories=["Cs"]) | _ESCAPES, max_size=80))
def test_any_text_is_encoded_as_utf8_with_surrogateescape(
    model: str, field: str, text: str
) -> None:
    built = _build(model, field, text)
    assert getattr(built, field) == text.encode("utf-8", errors="surrogateescape")
    assert type(built).model_validate_json(built.model_dump_json()) == built


@pytest.mark.parametrize(("model", "field"), BYTES_FIELDS)
def test_a_surrogate_that_stands_for_no_byte_is_a_clear_error(model: str, field: str) -> None:
    with pytest.raises(ValidationError) as info:
        _build(model, field, "ok \ud800")
    [error] = info.value.errors()
    assert error["loc"] == (field,)
    assert "lone surrogate" in error["msg"]
    assert "index 3" in error["msg"]


def test_bytearray_becomes_bytes_and_other_types_are_rejected() -> None:
    assert type(RawStreams(stdout=bytearray(b"\x00\xff")).stdout) is bytes
    for wrong in (3, None, ["a"], memoryview(b"x")):
        with pytest.raises(ValidationError):
            RawStreams.model_validate({"stdout": wrong})


@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        ('"//77"', b"\xff\xfe\xfb"),  # the standard alphabet Go writes
        ('"__77"', b"\xff\xfe\xfb"),  # the URL-safe one earlier pydantic dumps used
        ('"aGk"', b"hi"),  # padding may be left off
        ('""', b""),
    ],
)
def test_json_reads_base64(wire: str, expected: bytes) -> None:
    assert RawStreams.model_validate_json(f'{{"stdout": {wire}}}').stdout == expected


@pytest.mark.parametrize("wire", ['"hello"', '"a b="', "7", "null", '["aGk="]'])
def test_json_rejects_what_is_not_base64_text(wire: str) -> None:
    with pytest.raises(ValidationError) as info:
        RawStreams.model_validate_json(f'{{"stdout": {wire}}}')
    assert info.value.errors()[0]["loc"] == ("stdout",)


def test_json_writes_the_standard_alphabet() -> None:
    dumped = RawStreams(stdout=b"\xff\xfe\xfb", stderr=b"\xfb\xff").model_dump_json()
    assert json.loads(dumped) == {"stdout": "//77", "stderr": "+/8=", "terminal": None}


def test_a_python_dict_from_a_json_dump_is_python_input() -> None:
    """``model_validate`` cannot tell a JSON-mode dump from text a driver hands over.

    Both are a Python ``str``, and in Python a ``str`` is text, so the base64 text of a
    ``model_dump(mode="json")`` comes back as its own ASCII bytes. Round-trip through
    JSON text, or through a Python-mode dump, instead.
    """
    streams = RawStreams(stdout=b"\xff\xfe\xfb")
    as_json = streams.model_dump(mode="json")
    assert as_json["stdout"] == "//77"
    assert RawStreams.model_validate(as_json).stdout == b"//77"
    assert RawStreams.model_validate_json(json.dumps(as_json)) == streams
    assert RawStreams.model_validate(streams.model_dump()) == streams
    assert RawStreams.model_validate_json(streams.model_dump_json()) == streams


def test_strings_mode_reads_the_wire_form() -> None:
    # model_validate_strings parses every value from its text form, as JSON does
    assert RawStreams.model_validate_strings({"stdout": "//77"}).stdout == b"\xff\xfe\xfb"


def test_python_dumps_keep_bytes_and_the_schema_says_base64() -> None:
    assert RawStreams(stdout="x").model_dump()["stdout"] == b"x"
    for mode in ("validation", "serialization"):
        schema = RawStreams.model_json_schema(mode=mode)["properties"]["stdout"]
        assert schema["type"] == "string"
        assert schema["contentEncoding"] == "base64"


def test_bytes_inside_an_any_field_are_json_text_or_an_error() -> None:
    """``Any`` fields hold JSON values: bytes there are written as UTF-8 text if they are.

    Only the declared bytes fields know to use base64; in an ``Any`` field, bytes come
    back from JSON as a str, and bytes that are not UTF-8 cannot be written at all.
    """
    assert RunFailure(metadata={"raw": b"\xff"}).metadata["raw"] == b"\xff"
    assert json.loads(RunEvent(data={"raw": b"hi"}).model_dump_json())["data"] == {"raw": "hi"}
    with pytest.raises(ValueError, match="invalid utf-8"):
        RunFailure(metadata={"raw": b"\xff"}).model_dump_json()


# ---------------------------------------------------------------------------
# datetimes


def test_an_offset_json_cannot_write_is_rejected_in_python_too() -> None:
    odd = datetime(2024, 1, 1, tzinfo=timezone(timedelta(hours=5, minutes=30, seconds=15)))
    with pytest.raises(ValidationError, match="not whole minutes"):
        StreamPayload(timestamp=odd)
    # JSON text cannot even say it
    with pytest.raises(ValidationError):
        StreamPayload.model_validate_json('{"timestamp": "2024-01-01T00:00:00+05:30:15"}')
    # the local mean time of zoneinfo's early dates has second offsets too
    with pytest.raises(ValidationError, match="not whole minutes"):
        RunEvent(timestamp=datetime(1800, 1, 1, tzinfo=ZoneInfo("America/New_York")))


@pytest.mark.parametrize("minutes", [0, 330, -(23 * 60 + 59), 23 * 60 + 59, -45])
def test_whole_minute_offsets_keep_instant_and_offset(minutes: int) -> None:
    moment = datetime(2024, 2, 29, 23, 59, 59, 999999, tzinfo=timezone(timedelta(minutes=minutes)))
    restored = RunEvent.model_validate_json(RunEvent(timestamp=moment).model_dump_json())
    assert restored.timestamp == moment
    assert restored.timestamp is not None
    assert restored.timestamp.utcoffset() == timedelta(minutes=minutes)


def test_json_keeps_a_zones_offset_not_its_name() -> None:
    # 01:30 on this day happens twice in New York; fold=1 is the second (EST) one
    moment = datetime(2024, 11, 3, 1, 30, fold=1, tzinfo=ZoneInfo("America/New_York"))
    restored = RunEvent.model_validate_json(RunEvent(timestamp=moment).model_dump_json())
    assert restored.timestamp is not None
    assert restored.timestamp.utcoffset() == timedelta(hours=-5)
    assert restored.timestamp.timestamp() == moment.timestamp()
    # Python never calls a datetime in a fold equal to one in another zone (PEP 495)
    assert restored.timestamp != moment


@pytest.mark.parametrize(
    ("python", "wire", "expected"),
    [
        (datetime(2024, 1, 1), '"2024-01-01T00:00:00"', datetime(2024, 1, 1)),  # naive stays
        (date(2024, 1, 1), '"2024-01-01"', datetime(2024, 1, 1)),  # a date is midnight
        (0, "0", datetime(1970, 1, 1, tzinfo=UTC)),  # a number is Unix time in UTC
        ("2024-01-01T00:00:00Z", '"2024-01-01T00:00:00Z"', datetime(2024, 1, 1, tzinfo=UTC)),
    ],
)
def test_datetime_inputs_both_modes_agree_on(python: object, wire: str, expected: datetime) -> None:
    from_python = RunEvent.model_validate({"timestamp": python}).timestamp
    from_json = RunEvent.model_validate_json(f'{{"timestamp": {wire}}}').timestamp
    assert from_python == from_json == expected
    assert from_python is not None
    assert from_json is not None
    assert from_python.utcoffset() == from_json.utcoffset() == expected.utcoffset()


def test_timedeltas_read_alike_and_negative_ones_round_trip() -> None:
    for python, wire in (
        (1.5, "1.5"),
        ("PT1.5S", '"PT1.5S"'),
        (timedelta(seconds=1.5), '"PT1.5S"'),
    ):
        from_python = HumanDecisionPolicy.model_validate({"timeout": python}).timeout
        from_json = HumanDecisionPolicy.model_validate_json(f'{{"timeout": {wire}}}').timeout
        assert from_python == from_json == timedelta(seconds=1.5)
    policy = HumanDecisionPolicy(timeout=timedelta(days=-3, microseconds=7))
    assert HumanDecisionPolicy.model_validate_json(policy.model_dump_json()) == policy


# ---------------------------------------------------------------------------
# numbers


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_floats_are_rejected_in_both_modes(value: float) -> None:
    # JSON has no such numbers: pydantic would have written null, and Go cannot encode them
    with pytest.raises(ValidationError):
        TranscriptItem(cost_usd=value)
    with pytest.raises(ValidationError):
        TranscriptItem.model_validate_json(f'{{"cost_usd": {json.dumps(value)}}}')


def test_bool_is_an_int_in_both_modes_and_becomes_a_plain_int() -> None:
    """A trap, pinned: pydantic's lax mode reads True as 1, in Python and JSON alike."""
    from_python = Response(exit_code=True).exit_code
    from_json = Response.model_validate_json('{"exit_code": true}').exit_code
    assert type(from_python) is int
    assert type(from_json) is int
    assert from_python == from_json == 1
    assert json.loads(Response(exit_code=True).model_dump_json())["exit_code"] == 1
    assert type(QuotaWindow(used_percent=False).used_percent) is int


def test_ints_past_64_bits_survive_both_modes() -> None:
    for n in (2**64, -(2**64) - 1, 10**30):
        assert Response.model_validate_json(Response(exit_code=n).model_dump_json()).exit_code == n
        assert StreamPayload(seq=2**70).seq == 2**70


def test_number_strings_and_integral_floats_read_alike() -> None:
    assert (
        Response(exit_code="3").exit_code
        == Response.model_validate_json('{"exit_code": "3"}').exit_code
        == 3
    )
    assert Response(exit_code=3.0).exit_code == 3
    with pytest.raises(ValidationError):
        Response(exit_code=3.5)


def test_bool_fields_read_the_same_words_in_both_modes() -> None:
    for python, wire in ((1, "1"), ("yes", '"yes"'), ("off", '"off"')):
        from_python = Response.model_validate({"timed_out": python}).timed_out
        from_json = Response.model_validate_json(f'{{"timed_out": {wire}}}').timed_out
        assert type(from_python) is bool
        assert from_python == from_json


# ---------------------------------------------------------------------------
# text


def test_python_bytes_in_a_str_field_are_decoded_strictly() -> None:
    """Python only (JSON has no bytes): a str field takes UTF-8 bytes, not other bytes."""
    assert TranscriptItem(text=b"caf\xc3\xa9").text == "café"
    assert SessionState(data={"cwd": b"/srv"}).data == {"cwd": "/srv"}
    with pytest.raises(ValidationError):
        TranscriptItem(text=b"\xff")


def test_lone_surrogates_live_in_python_only() -> None:
    """Python str fields keep lone surrogates; JSON cannot carry them.

    pydantic refuses to write one in a value, refuses to read a ``\\udXXX`` escape,
    and writes one in a dict key as U+FFFD, so undecodable output belongs in the
    bytes fields, not in text.
    """
    item = TranscriptItem(text="a\udcff")
    assert TranscriptItem.model_validate(item.model_dump()) == item
    with pytest.raises(ValueError, match="surrogates not allowed"):
        item.model_dump_json()
    with pytest.raises(ValidationError):
        TranscriptItem.model_validate_json('{"text": "\\udcff"}')
    [key] = json.loads(RunFailure(metadata={"k\udcff": 1}).model_dump_json())["metadata"]
    assert key[0] == "k"
    assert set(key[1:]) == {"\ufffd"}


def test_open_sets_store_a_member_of_any_enum_as_its_plain_string() -> None:
    payload = StreamPayload(kind=StreamKind.TEXT_START)
    assert type(payload.kind) is str
    assert StreamPayload.model_validate_json('{"kind": "text.start"}') == payload


def test_closed_enums_take_any_str_with_a_known_value_in_python() -> None:
    """Python only: a member of another enum is read by its value (JSON has just strings)."""
    code = RunFailure(code=InvocationPhase.CANCELLED).code
    assert code is FailureCode.CANCELLED
    assert RunFailure.model_validate_json('{"code": "cancelled"}').code is FailureCode.CANCELLED
    assert RunFailure(code="").code == ""
    with pytest.raises(ValidationError):
        RunFailure(code=InvocationPhase.STARTED)  # "started" is no FailureCode


def test_the_new_request_fields_read_alike_in_both_modes() -> None:
    wire = (
        '{"append_system_prompt": "Be terse.\\n", '
        '"observation": {"capability_invocations": true, "todos": "false"}}'
    )
    from_json = driver.Request.model_validate_json(wire)
    from_python = driver.Request.model_validate(json.loads(wire))
    assert from_json == from_python
    assert from_json.append_system_prompt == "Be terse.\n"
    assert from_json.observation == driver.ObservationDemand(capability_invocations=True)
    with pytest.raises(ValidationError):
        driver.Request.model_validate({"observation": {"skills": True}})  # not a demand flag
    with pytest.raises(ValidationError):
        driver.Request.model_validate({"append_system_prompt": None})
    code = RunFailure.model_validate_json('{"code": "active_execution_timeout"}').code
    assert code is FailureCode.ACTIVE_EXECUTION_TIMEOUT
    capability = Descriptor.model_validate_json('{"system_prompt": {"append": "true"}}')
    assert capability.system_prompt.append is True


# ---------------------------------------------------------------------------
# containers and nested models


def test_tuple_fields_take_any_python_sequence_and_json_arrays() -> None:
    rows: list[object] = [
        [{"name": "a"}],
        ({"name": "a"},),
        deque([{"name": "a"}]),
        (f for f in [{"name": "a"}]),
    ]
    expected = ConfigSchema.model_validate_json('{"fields": [{"name": "a"}]}')
    for python in rows:
        schema = ConfigSchema.model_validate({"fields": python})
        assert schema == expected
        assert type(schema.fields) is tuple
    with pytest.raises(ValidationError):
        ConfigSchema.model_validate({"fields": {"name": "a"}})


def test_list_fields_take_python_sets_in_their_iteration_order() -> None:
    """Python only: a set is accepted for a list, in whatever order it iterates."""
    names = {"a", "b", "c"}
    warnings = AgentPayload(warnings=names).warnings
    assert sorted(warnings) == sorted(names)
    assert warnings == list(names)
    with pytest.raises(ValidationError):
        AgentPayload(warnings="abc")  # a str is no list of str


def test_python_keeps_the_nested_instance_it_is_given() -> None:
    """Python stores the caller's model object (shared, not copied); JSON builds new ones."""
    streams = RawStreams(stdout=b"x")
    response = Response(raw_streams=streams)
    assert response.raw_streams is streams
    streams.stdout = b"changed"
    assert response.raw_streams.stdout == b"changed"
    restored = Response.model_validate_json(response.model_dump_json())
    assert restored.raw_streams is not streams


def test_a_skill_source_subclass_is_kept_as_given_but_cannot_be_read_back() -> None:
    """Python keeps the host's subclass; a dump of it (Python or JSON) needs that class."""

    class DirSource(SkillSource):
        path: str = ""

    skill = Skill(key="lint", source=DirSource(path="skills/lint"))
    assert isinstance(skill.source, DirSource)
    with pytest.raises(ValidationError):  # the base has no "path"
        Skill.model_validate(skill.model_dump())
    with pytest.raises(ValidationError):
        Skill.model_validate_json(skill.model_dump_json())


@pytest.mark.parametrize(
    ("python", "after_json"),
    [
        ((1, 2), [1, 2]),
        ({3}, [3]),
        (math.nan, None),
        (Descriptor(type="acme"), None),  # a model becomes its dict; compared below
    ],
    ids=["tuple", "set", "nan", "model"],
)
def test_any_fields_keep_python_values_that_json_turns_into_plain_data(
    python: object, after_json: object
) -> None:
    item = TranscriptItem(input=python)
    assert item.input is python
    restored = TranscriptItem.model_validate_json(item.model_dump_json()).input
    if isinstance(python, BaseModel):
        assert restored == json.loads(python.model_dump_json())
    else:
        assert restored == after_json


def test_an_any_field_takes_objects_json_cannot_write() -> None:
    item = TranscriptItem(input=object())
    with pytest.raises(ValueError, match="Unable to serialize"):
        item.model_dump_json()


def test_frozen_models_are_frozen_whichever_way_they_are_read() -> None:
    for field in (ConfigField(name="a"), ConfigField.model_validate_json('{"name": "a"}')):
        with pytest.raises(ValidationError):
            field.name = "b"  # type: ignore[misc]


def test_a_model_read_from_json_dumps_back_to_the_same_text() -> None:
    text = (
        '{"type":"chunk","seq":3,"timestamp":"2024-01-01T00:00:00+05:30","stream":"stdout",'
        '"chunk":"//77","item":null,"text":"","metadata":{},"data":{"k":[1,"2",null]}}'
    )
    assert RunEvent.model_validate_json(text).model_dump_json() == text
