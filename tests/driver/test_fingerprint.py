"""Tests of canonical_session_config_fingerprint: determinism, sensitivity, rejections."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import enum
import json
import os
import re
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import AnyUrl, BaseModel, ConfigDict, Field, PrivateAttr, SecretStr

from driver.config import CommonConfig
from driver.errors import SessionConfigFingerprintError
from driver.fingerprint import canonical_session_config_fingerprint as fingerprint

DOMAIN = "adaptertest/v1;codec/v1"
SECRET = "sk-live-DO-NOT-LEAK-4242"
TOKEN = re.compile(r"^sha256:[0-9a-f]{64}$")


class Color(enum.StrEnum):
    RED = "red"
    BLUE = "blue"


class Inner(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = "inner"
    weight: float = 1.5
    flags: list[bool] = Field(default_factory=list)


class SampleConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    model: str = "model-a"
    retries: int = 3
    temperature: float = 0.25
    verbose: bool = False
    color: Color = Color.RED
    note: str | None = None
    timeout: datetime.timedelta = datetime.timedelta(seconds=30)
    api_key: SecretStr = SecretStr("")
    inner: Inner = Field(default_factory=Inner)
    fallback: Inner | None = None
    args: list[str] = Field(default_factory=lambda: ["--fast"])
    env: dict[str, str] = Field(default_factory=lambda: {"HOME": "/home/a"})
    scopes: frozenset[str] = frozenset({"read"})
    extra_tags: list[str] | None = None


# One different value per field of SampleConfig (and of its nested Inner).
FIELD_MUTATIONS: dict[str, Callable[[SampleConfig], SampleConfig]] = {
    "model": lambda c: c.model_copy(update={"model": "model-b"}),
    "retries": lambda c: c.model_copy(update={"retries": 4}),
    "temperature": lambda c: c.model_copy(update={"temperature": 0.26}),
    "verbose": lambda c: c.model_copy(update={"verbose": True}),
    "color": lambda c: c.model_copy(update={"color": Color.BLUE}),
    "note": lambda c: c.model_copy(update={"note": ""}),
    "timeout": lambda c: c.model_copy(update={"timeout": datetime.timedelta(seconds=31)}),
    "api_key": lambda c: c.model_copy(update={"api_key": SecretStr(SECRET)}),
    "inner": lambda c: c.model_copy(update={"inner": Inner(name="other")}),
    "fallback": lambda c: c.model_copy(update={"fallback": Inner()}),
    "args": lambda c: c.model_copy(update={"args": ["--slow"]}),
    "env": lambda c: c.model_copy(update={"env": {"HOME": "/home/b"}}),
    "scopes": lambda c: c.model_copy(update={"scopes": frozenset({"read", "write"})}),
    "extra_tags": lambda c: c.model_copy(update={"extra_tags": ["x"]}),
    "inner.weight": lambda c: c.model_copy(update={"inner": Inner(weight=2.5)}),
    "inner.flags": lambda c: c.model_copy(update={"inner": Inner(flags=[False])}),
    "env key": lambda c: c.model_copy(update={"env": {"HOME2": "/home/a"}}),
}


def test_token_shape() -> None:
    token = fingerprint(DOMAIN, SampleConfig())
    assert TOKEN.fullmatch(token)
    assert len(token) == 71


def test_deterministic_within_a_process() -> None:
    assert fingerprint(DOMAIN, SampleConfig()) == fingerprint(DOMAIN, SampleConfig())


def test_spi_common_config_is_fingerprintable() -> None:
    config = CommonConfig(extra_args=["--fast"])
    assert TOKEN.fullmatch(fingerprint(DOMAIN, config))
    assert fingerprint(DOMAIN, config.clone()) == fingerprint(DOMAIN, config)
    assert fingerprint(DOMAIN, config) != fingerprint(DOMAIN, CommonConfig())


def test_every_field_is_covered_by_a_mutation() -> None:
    top_level = {name for name in FIELD_MUTATIONS if "." not in name and " " not in name}
    assert top_level == set(SampleConfig.model_fields)
    nested = {name.split(".", 1)[1] for name in FIELD_MUTATIONS if name.startswith("inner.")}
    assert nested | {"name"} == set(Inner.model_fields)


@pytest.mark.parametrize("field", sorted(FIELD_MUTATIONS))
def test_changing_any_single_field_changes_the_token(field: str) -> None:
    base = SampleConfig()
    mutated = FIELD_MUTATIONS[field](base)
    assert mutated != base
    assert fingerprint(DOMAIN, mutated) != fingerprint(DOMAIN, base)


def test_all_single_field_changes_give_distinct_tokens() -> None:
    base = SampleConfig()
    tokens = {fingerprint(DOMAIN, mutate(base)) for mutate in FIELD_MUTATIONS.values()}
    tokens.add(fingerprint(DOMAIN, base))
    assert len(tokens) == len(FIELD_MUTATIONS) + 1


def test_defaults_participate() -> None:
    class Smaller(BaseModel):
        model: str = "model-a"

    class Larger(BaseModel):
        model: str = "model-a"
        retries: int = 0

    class Twin(BaseModel):
        model: str = "model-a"

    smaller = fingerprint(DOMAIN, Smaller())
    # An explicit value equal to the default is the same config.
    assert smaller == fingerprint(DOMAIN, Smaller(model="model-a"))
    # A new field, even at its default, changes every token (fails closed).
    assert smaller != fingerprint(DOMAIN, Larger())
    # The class name is part of the encoding, so a same-shaped twin differs too.
    assert smaller != fingerprint(DOMAIN, Twin())


def test_domain_changes_the_token() -> None:
    assert fingerprint("acme/v1", SampleConfig()) != fingerprint("acme/v2", SampleConfig())


@pytest.mark.parametrize("domain", ["", " ", "\t\n"])
def test_blank_domain_is_a_value_error(domain: str) -> None:
    with pytest.raises(ValueError, match="domain") as info:
        fingerprint(domain, SampleConfig())
    assert not isinstance(info.value, SessionConfigFingerprintError)


def test_insertion_order_is_irrelevant() -> None:
    names = [f"key-{i}" for i in range(40)]
    forward = {name: name.upper() for name in names}
    backward = {name: name.upper() for name in reversed(names)}
    assert list(forward) != list(backward)
    assert fingerprint(DOMAIN, forward) == fingerprint(DOMAIN, backward)
    assert fingerprint(DOMAIN, SampleConfig(env=forward)) == fingerprint(
        DOMAIN, SampleConfig(env=backward)
    )
    backward_set: set[str] = set()
    for name in reversed(names):
        backward_set.add(name)
    assert fingerprint(DOMAIN, set(names)) == fingerprint(DOMAIN, backward_set)


def test_sequence_order_matters() -> None:
    assert fingerprint(DOMAIN, ["a", "b"]) != fingerprint(DOMAIN, ["b", "a"])


class CollectionFields(BaseModel):
    items: list[str] | None = None
    pairs: dict[str, int] | None = None
    members: set[str] | None = None
    seq: Sequence[int] | None = None
    mapping: Mapping[str, str] | None = None
    label: str | None = None


@dataclasses.dataclass
class CollectionRecord:
    items: list[str] | None = None
    pairs: dict[str, int] | None = None
    label: str | None = None


@pytest.mark.parametrize(
    ("field", "empty"),
    [("items", []), ("pairs", {}), ("members", set()), ("seq", ()), ("mapping", {})],
)
def test_empty_and_missing_collection_alike(field: str, empty: object) -> None:
    missing = CollectionFields()
    present = CollectionFields.model_validate({field: empty})
    assert getattr(present, field) is not None
    assert fingerprint(DOMAIN, missing) == fingerprint(DOMAIN, present)


def test_empty_and_missing_collection_alike_in_dataclasses() -> None:
    missing = CollectionRecord()
    assert fingerprint(DOMAIN, missing) == fingerprint(DOMAIN, CollectionRecord(items=[]))
    assert fingerprint(DOMAIN, missing) == fingerprint(DOMAIN, CollectionRecord(pairs={}))
    assert fingerprint(DOMAIN, missing) != fingerprint(DOMAIN, CollectionRecord(items=["a"]))


def test_none_elsewhere_differs_from_a_zero_value() -> None:
    assert fingerprint(DOMAIN, CollectionFields()) != fingerprint(
        DOMAIN, CollectionFields(label="")
    )
    assert fingerprint(DOMAIN, CollectionRecord()) != fingerprint(
        DOMAIN, CollectionRecord(label="")
    )
    assert fingerprint(DOMAIN, SampleConfig()) != fingerprint(
        DOMAIN, SampleConfig(fallback=Inner())
    )
    assert fingerprint(DOMAIN, None) != fingerprint(DOMAIN, [])
    assert fingerprint(DOMAIN, {"k": None}) != fingerprint(DOMAIN, {"k": []})


@pytest.mark.parametrize(
    ("left", "right"),
    [
        (1, True),
        (1, 1.0),
        (1, "1"),
        (0.0, -0.0),
        (b"a", "a"),
        (["a"], {"a"}),
        (["a"], ("a", "b")),
        (2**100, 2**100 + 1),
        (-1, 255),
        (Color.RED, "red"),
        (SecretStr("x"), "x"),
        ({"a": 1}, [("a", 1)]),
        (datetime.timedelta(0), 0),
        (PurePosixPath("a/b"), "a/b"),
    ],
)
def test_type_tags_keep_values_apart(left: object, right: object) -> None:
    assert fingerprint(DOMAIN, left) != fingerprint(DOMAIN, right)


def test_list_and_tuple_are_one_sequence_kind() -> None:
    assert fingerprint(DOMAIN, [1, 2]) == fingerprint(DOMAIN, (1, 2))
    assert fingerprint(DOMAIN, {1, 2}) == fingerprint(DOMAIN, frozenset({2, 1}))


def test_secret_value_counts() -> None:
    assert fingerprint(DOMAIN, SampleConfig(api_key=SecretStr("a"))) != fingerprint(
        DOMAIN, SampleConfig(api_key=SecretStr("b"))
    )


def test_aliasing_without_a_cycle_is_fine() -> None:
    shared = ["x", "y"]
    assert fingerprint(DOMAIN, {"a": shared, "b": shared}) == fingerprint(
        DOMAIN, {"a": ["x", "y"], "b": ["x", "y"]}
    )
    inner = Inner()
    assert fingerprint(DOMAIN, [inner, inner]) == fingerprint(DOMAIN, [Inner(), Inner()])


def _rejection(value: object) -> SessionConfigFingerprintError:
    with pytest.raises(SessionConfigFingerprintError) as info:
        fingerprint(DOMAIN, value)
    message = str(info.value)
    assert SECRET not in message
    assert SECRET not in repr(info.value)
    assert info.value.__cause__ is None
    return info.value


def _generator() -> Any:
    yield SECRET


class Opaque:
    def __init__(self) -> None:
        self.secret = SECRET


class Holder(BaseModel):
    hooks: dict[str, Any] = Field(default_factory=dict)
    items: list[Any] = Field(default_factory=list)
    api_key: SecretStr = SecretStr(SECRET)


@pytest.mark.parametrize(
    ("value", "path", "kind"),
    [
        ({SECRET: {"hook": lambda: SECRET}}, "$config[value][value]", "callable"),
        (Holder(hooks={SECRET: lambda: None}), "$config.hooks[value]", "callable"),
        (Holder(items=[SECRET, Opaque()]), "$config.items[element]", "type"),
        (Holder(hooks={SECRET: _generator()}), "$config.hooks[value]", "iterator"),
        (Holder(hooks={SECRET: Inner}), "$config.hooks[value]", "class"),
        (Holder(hooks={SECRET: Inner().model_dump}), "$config.hooks[value]", "callable"),
        ({Opaque(): SECRET}, "$config[key]", "type"),
        ([{SECRET: iter([SECRET])}], "$config[element][value]", "iterator"),
        (Holder(items=[print]), "$config.items[element]", "callable"),
    ],
)
def test_rejections_name_the_path_and_hide_values(value: object, path: str, kind: str) -> None:
    error = _rejection(value)
    assert error.path == path
    assert error.kind == kind
    assert f" at {path} " in str(error)


def test_cycle_is_rejected() -> None:
    config: dict[str, Any] = {SECRET: []}
    config[SECRET].append(config)
    error = _rejection(config)
    assert error.kind == "cycle"
    assert error.path == "$config[value][element]"


def test_model_cycle_is_rejected() -> None:
    holder = Holder()
    holder.items.append(holder)
    error = _rejection(holder)
    assert error.kind == "cycle"
    assert error.path == "$config.items[element]"


def test_private_model_state_is_rejected() -> None:
    class WithPrivate(BaseModel):
        name: str = ""
        _cache: dict[str, str] = PrivateAttr(default_factory=lambda: {"k": SECRET})

    error = _rejection({"nested": WithPrivate()})
    assert error.path == "$config[value]"
    assert error.kind == "private state"


def test_extra_model_fields_are_rejected() -> None:
    class Open(BaseModel):
        model_config = ConfigDict(extra="allow")
        name: str = ""

    assert TOKEN.fullmatch(fingerprint(DOMAIN, Open()))
    error = _rejection(Open.model_validate({"token": SECRET}))
    assert error.kind == "extra fields"


def test_undeclared_dataclass_attributes_are_rejected() -> None:
    record = CollectionRecord()
    record.__dict__["cache"] = SECRET
    assert _rejection(record).kind == "private state"


def test_keys_with_one_encoding_are_rejected() -> None:
    config = {float("nan"): SECRET, float("nan"): SECRET}
    assert len(config) == 2
    error = _rejection(config)
    assert error.kind == "duplicate key"
    assert error.path == "$config[key]"


def test_deep_nesting_is_rejected_with_a_path() -> None:
    value: list[Any] = []
    for _ in range(150):
        value = [value]
    error = _rejection(value)
    assert error.kind == "nesting"
    assert error.path.startswith("$config[element][element]")


def test_secret_in_rejected_model_never_leaks() -> None:
    error = _rejection(Holder(hooks={"cb": lambda: None}))
    assert "cb" not in str(error)


def test_other_supported_scalars() -> None:
    now = datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
    config = {
        "when": now,
        "day": now.date(),
        "clock": now.timetz(),
        "path": PurePosixPath("/srv/app"),
        "raw": bytearray(b"\x00\xff"),
        "id": uuid.UUID(int=7),
        "price": decimal.Decimal("1.50"),
        "endpoint": AnyUrl("https://example.invalid/api"),
    }
    token = fingerprint(DOMAIN, config)
    assert TOKEN.fullmatch(token)
    changes = {
        "when": now + datetime.timedelta(microseconds=1),
        "id": uuid.UUID(int=8),
        "price": decimal.Decimal("1.5"),
        "endpoint": AnyUrl("https://example.invalid/v2"),
        "path": PurePosixPath("/srv/other"),
    }
    for key, other in changes.items():
        assert fingerprint(DOMAIN, dict(config, **{key: other})) != token, key


# Text of any code point, lone surrogates included (the encoding passes them through);
# ints well past 64 bits; containers of up to 6 items.
_TEXT = st.text(st.characters(), max_size=24)
_BIG = 2**80
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-_BIG, max_value=_BIG)
    | st.sampled_from([2**64, -(2**64), 2**64 - 1, 2**63])
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT,
    lambda children: st.lists(children, max_size=6) | st.dictionaries(_TEXT, children, max_size=6),
    max_leaves=16,
)


@settings(derandomize=True, database=None, deadline=None, max_examples=200)
@given(left=json_values, right=json_values)
def test_tokens_agree_exactly_when_canonical_json_agrees(left: object, right: object) -> None:
    same_json = json.dumps(left, sort_keys=True) == json.dumps(right, sort_keys=True)
    assert (fingerprint(DOMAIN, left) == fingerprint(DOMAIN, right)) == same_json


def _reordered(value: Any, rnd: Any) -> Any:
    """An equal copy of ``value`` with every dict's keys inserted in another order."""
    if isinstance(value, dict):
        keys = list(value)
        rnd.shuffle(keys)
        if len(keys) > 1 and keys == list(value):
            keys.reverse()
        return {key: _reordered(value[key], rnd) for key in keys}
    if isinstance(value, list):
        return [_reordered(item, rnd) for item in value]
    return value


class MapHolder(BaseModel):
    settings: dict[str, Any] = Field(default_factory=dict)
    rows: list[dict[str, Any]] = Field(default_factory=list)


@settings(derandomize=True, database=None, deadline=None, max_examples=60)
@given(st.dictionaries(_TEXT, json_values, min_size=2, max_size=6), st.randoms())
def test_dicts_differing_only_in_key_order_share_a_token(mapping: dict[str, Any], rnd: Any) -> None:
    other = _reordered(mapping, rnd)
    assert other == mapping
    assert list(other) != list(mapping)  # the order really differs, at least at the top
    assert fingerprint(DOMAIN, other) == fingerprint(DOMAIN, mapping)
    held = MapHolder(settings=mapping, rows=[mapping, {}])
    assert fingerprint(DOMAIN, MapHolder(settings=other, rows=[other, {}])) == fingerprint(
        DOMAIN, held
    )


_ZONES = (
    None,
    datetime.UTC,
    datetime.timezone(datetime.timedelta(0)),
    ZoneInfo("UTC"),
    datetime.timezone(datetime.timedelta(hours=5, minutes=30)),
    ZoneInfo("Asia/Kolkata"),  # +05:30 as well
    datetime.timezone(datetime.timedelta(hours=-3, seconds=-17)),
    ZoneInfo("America/New_York"),
)
_WALL_TIMES = (
    datetime.datetime(2024, 11, 3, 1, 30),  # twice in New York that day (fold 0 and 1)
    datetime.datetime(2024, 11, 3, 1, 30, 0, 1),
    datetime.datetime(1850, 1, 1),  # local mean time: New York was -04:56:02
)
_MOMENTS = st.tuples(st.sampled_from(_WALL_TIMES), st.sampled_from(_ZONES), st.sampled_from((0, 1)))


@settings(derandomize=True, database=None, deadline=None, max_examples=150)
@given(_MOMENTS, _MOMENTS)
def test_datetimes_share_a_token_exactly_when_wall_time_and_offset_agree(
    left: tuple[datetime.datetime, Any, int], right: tuple[datetime.datetime, Any, int]
) -> None:
    """The zone object does not count, only what it says: UTC is UTC however spelt."""
    a, b = (wall.replace(tzinfo=zone, fold=fold) for wall, zone, fold in (left, right))
    same = (a.replace(tzinfo=None), a.utcoffset()) == (b.replace(tzinfo=None), b.utcoffset())
    assert (fingerprint(DOMAIN, a) == fingerprint(DOMAIN, b)) == same


@settings(derandomize=True, database=None, deadline=None, max_examples=100)
@given(st.dictionaries(st.text(max_size=4), st.integers(), max_size=8), st.randoms())
def test_generated_mappings_ignore_insertion_order(mapping: dict[str, int], rnd: Any) -> None:
    keys = list(mapping)
    rnd.shuffle(keys)
    shuffled = {key: mapping[key] for key in keys}
    assert fingerprint(DOMAIN, shuffled) == fingerprint(DOMAIN, mapping)


CROSS_PROCESS_SCRIPT = textwrap.dedent(
    """
    import enum

    from pydantic import AnyUrl, BaseModel, Field

    from driver.fingerprint import canonical_session_config_fingerprint as fingerprint


    class Mode(enum.Enum):
        FAST = "fast"


    class Config(BaseModel):
        env: dict[str, str] = Field(default_factory=dict)
        scopes: set[str] = Field(default_factory=set)
        mode: Mode = Mode.FAST
        nested: dict[str, object] = Field(default_factory=dict)


    names = [f"key-{i}" for i in range(50)]
    forward = Config(
        env={n: n.upper() for n in names},
        scopes=set(names),
        nested={"frozen": frozenset(names), "pairs": {(1, "x"): 1.5, (2, "y"): None}},
    )
    backward = Config(
        env={n: n.upper() for n in reversed(names)},
        scopes=set(reversed(names)),
        nested={"pairs": {(2, "y"): None, (1, "x"): 1.5}, "frozen": frozenset(reversed(names))},
    )
    token = fingerprint("adaptertest/v1", forward)
    assert token == fingerprint("adaptertest/v1", backward)
    print(token)
    print(",".join(list(forward.scopes)[:10]))
    """
)


def _run_with_hash_seed(seed: str) -> tuple[str, str]:
    env = dict(os.environ, PYTHONHASHSEED=seed)
    result = subprocess.run(
        [sys.executable, "-c", CROSS_PROCESS_SCRIPT],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    token, set_order = result.stdout.splitlines()
    return token, set_order


def test_identical_across_processes_with_different_hash_seeds() -> None:
    token_one, order_one = _run_with_hash_seed("1")
    token_two, order_two = _run_with_hash_seed("2")
    # The seeds really change set iteration order, so the equality below means something.
    assert order_one != order_two
    assert TOKEN.fullmatch(token_one)
    assert token_one == token_two
