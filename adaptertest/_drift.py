"""The DFT probe's inputs: a recorded CLI output and the drifted variants hypothesis makes.

A :class:`Source` is one recording split into stdout lines, each parsed when it is a JSON
object. A :class:`Variant` is what the replay stand-in plays for one driver run (chunks,
exit status, whether pauses matter) together with the words that say what changed and
where, so a failure names the drift that broke it in terms of line numbers. Three
strategies make variants:

- :func:`additive`: unknown line types, unknown fields at any depth, shuffled key order,
  blank lines, CRLF line endings (DFT-01), delivered one line per chunk; in a JSON-RPC
  recording (an ACP agent's side) the unknown lines are extension notifications and
  ``session/update`` notifications of unknown kinds, ``_meta`` objects get new fields,
  and the JSON-RPC envelope itself is left alone;
- :func:`corrupt`: a truncated last line, a line that starts like JSON but does not
  parse, invalid UTF-8 inside a string value, the process exiting mid-line, and for a
  JSON-RPC recording an answer carrying an earlier answer's id (DFT-02);
- :func:`rechunked`: the same bytes in arbitrary chunks and pauses (DFT-03).

Inserted names are never ones the recording uses, and nothing is added inside an object
the driver passes through as content (a tool's input, say: adding a key there changes the
call, not the format); :func:`content_objects` finds those from the baseline run.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import random
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import adaptertest.recording as recording
from adaptertest.report import plural

if TYPE_CHECKING:
    from hypothesis.strategies import DrawFn, SearchStrategy

__all__ = [
    "MULTIBYTE",
    "Corruption",
    "Source",
    "Variant",
    "additive",
    "as_recorded",
    "content_objects",
    "corrupt",
    "line_by_line",
    "load_source",
    "rechunked",
    "with_multibyte",
]

MULTIBYTE = " \u00e9 \u2713 \u4e2d \U0001f642"
"""Appended to the recording's prose for DFT-03: characters of 2, 3, 3 and 4 UTF-8 bytes."""

_PAUSES = (0.0, 0.005, 0.025)
_IDENTIFIER = re.compile(r"[a-z0-9_.:/-]+")
_BLANKS = (b"", b" ", b"\t ")
_INVALID_UTF8 = (b"\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xc0\xaf", b"\x80")
_KILLED = 9  # SIGKILL: the process exiting mid-line without a word
_SHOWN = 60


# -- the source --------------------------------------------------------------------------


def _object(line: bytes) -> dict[str, Any] | None:
    """The JSON object a line holds (strict UTF-8, no NaN/Infinity), else None."""
    text = line.strip()
    if not text.startswith(b"{"):
        return None
    try:
        value = json.loads(text.decode("utf-8"), parse_constant=_no_constant)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _walk(value: object) -> Iterator[object]:
    """Every value inside ``value``, keys of objects included, depth first."""
    yield value
    if isinstance(value, dict):
        for key, inner in value.items():
            yield key
            yield from _walk(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _walk(inner)


@dataclass(frozen=True, repr=False)
class Source:
    """One recording, ready to drift: stdout lines (without ``\\n``), each line's object."""

    name: str
    lines: tuple[bytes, ...]
    ends_with_newline: bool
    stderr: bytes
    exit_code: int | None
    signal: int | None
    recorded: tuple[recording.Chunk, ...]
    objects: tuple[dict[str, Any] | None, ...] = field(init=False)
    vocabulary: frozenset[str] = field(init=False)
    """Every key and string value the recording holds: inserted names avoid them."""
    numbers: frozenset[float] = field(init=False)
    discriminator: str = field(init=False)
    """The key that names a line's type (``type`` in every known format, ``method`` in
    JSON-RPC)."""
    jsonrpc: bool = field(init=False)
    """Every JSON line is a JSON-RPC 2.0 message: the agent's side of a two-way
    conversation (an ACP agent), which the two-way replay stand-in plays."""

    def __post_init__(self) -> None:
        objects = tuple(_object(line) for line in self.lines)
        found = [v for obj in objects if obj is not None for v in _walk(obj)]
        words = frozenset(v for v in found if isinstance(v, str))
        numbers = frozenset(
            float(v) for v in found if isinstance(v, int | float) and not isinstance(v, bool)
        )
        object.__setattr__(self, "objects", objects)
        object.__setattr__(self, "vocabulary", words)
        object.__setattr__(self, "numbers", numbers)
        rpc = any(obj is not None for obj in objects) and all(
            obj.get("jsonrpc") == "2.0" for obj in objects if obj is not None
        )
        object.__setattr__(self, "jsonrpc", rpc)
        object.__setattr__(self, "discriminator", "method" if rpc else _discriminator(objects))

    def __repr__(self) -> str:
        return f"Source({self.name!r}, {len(self.lines)} lines)"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        # Hypothesis prints what it drew with its own printer: the name, not every line.
        printer.text(repr(self))

    @property
    def stdout(self) -> bytes:
        return b"\n".join(self.lines) + (b"\n" if self.ends_with_newline else b"")

    @property
    def object_lines(self) -> list[int]:
        """Indices of lines holding a JSON object long enough to cut (two bytes or more)."""
        return [
            i for i, obj in enumerate(self.objects) if obj is not None and len(self.lines[i]) > 1
        ]

    def kind(self, index: int) -> str:
        """How messages name line ``index``: its number and, for an object, its type."""
        obj = self.objects[index]
        value = obj.get(self.discriminator) if obj is not None else None
        typed = f", type {_short(value)}" if isinstance(value, str) else ""
        if self.jsonrpc and obj is not None:
            typed = f", method {_short(value)}" if isinstance(value, str) else ""
            if "id" in obj and value is None:
                typed = f", the answer to request id {_short(obj['id'])}"
        return f"recording line {index + 1}{typed}"


def _discriminator(objects: Sequence[dict[str, Any] | None]) -> str:
    """``type`` when lines carry it; else the string-valued key most lines share."""
    counts: dict[str, int] = {}
    for obj in objects:
        for key, value in (obj or {}).items():
            if isinstance(value, str):
                counts[key] = counts.get(key, 0) + 1
    if "type" in counts or not counts:
        return "type"
    return max(counts, key=lambda k: counts[k])


def load_source(path: Path) -> Source:
    """Read a plain JSONL transcript or a v1 recording (OSError, RecordingError)."""
    data = path.read_bytes()
    if recording.is_recording(data.split(b"\n", 1)[0], source=path.name):
        played = recording.loads(data, source=path.name)
        stdout, stderr = played.stdout, played.stderr
        exit_code, signal = played.exit_code, played.signal
        recorded = tuple(played.chunks)
    else:
        stdout, stderr, exit_code, signal = data, b"", 0, None
        recorded = tuple(
            recording.Chunk(0.0, recording.STDOUT, line) for line in data.splitlines(keepends=True)
        )
    lines = stdout.split(b"\n")
    ends = len(lines) > 1 and lines[-1] == b""
    if ends:
        lines.pop()
    return Source(
        name=path.name,
        lines=tuple(lines) if stdout else (),
        ends_with_newline=ends,
        stderr=stderr,
        exit_code=exit_code,
        signal=signal,
        recorded=recorded,
    )


# -- variants ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Corruption:
    """The corrupt line of a DFT-02 variant: its number in the output and its bytes."""

    line: int
    data: bytes

    def spellings(self) -> set[str]:
        """How a driver may show the line: decoded in any usual way, trimmed."""
        forms = {
            self.data.decode("utf-8", errors).strip()
            for errors in ("replace", "backslashreplace", "surrogateescape", "ignore")
        }
        return {form for form in forms if form}


@dataclass(frozen=True, repr=False)
class Variant:
    """One run's input for the replay stand-in, and what it is in words."""

    chunks: tuple[recording.Chunk, ...]
    exit_code: int | None
    signal: int | None
    words: str
    realtime: bool = False
    corruption: Corruption | None = None
    added: frozenset[str] = frozenset()
    """Names of the fields the drift added to the recording's own objects."""

    def __repr__(self) -> str:
        return f"Variant({self.words!r})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        # What hypothesis prints of a failing example: the drift in words, not the bytes.
        printer.text(repr(self))

    @property
    def key(self) -> tuple[object, ...]:
        """Equal for variants that play the same bytes the same way."""
        played = tuple((c.t, c.fd, c.data) for c in self.chunks)
        return (played, self.exit_code, self.signal, self.realtime)

    @property
    def stderr(self) -> bytes:
        return b"".join(c.data for c in self.chunks if c.fd == recording.STDERR)

    def plain(self) -> bytes | None:
        """The stdout as a plain transcript, when the replay's plain path plays the variant
        the same way (a chunk per line, no pause, no signal, stderr after stdout): that
        path reads no JSON and starts faster. None when only a recording can say it."""
        if self.realtime or self.signal is not None or self.exit_code is None:
            return None
        out = [c.data for c in self.chunks if c.fd == recording.STDOUT]
        if any(c.fd != recording.STDOUT for c in self.chunks[: len(out)]):
            return None
        data = b"".join(out)
        if out != data.splitlines(keepends=True):  # e.g. a lone CR, which splits a line there
            return None
        if recording.FORMAT_KEY.encode() in data.split(b"\n", 1)[0]:
            return None  # it would be read as a recording's header
        return data

    def dumps(self) -> bytes:
        """The variant as a recording (format v1) for ``adaptertest replay``."""
        return recording.Recording(
            argv=[],
            chunks=self.chunks,
            exit_code=self.exit_code,
            signal=self.signal,
            duration=self.chunks[-1].t if self.chunks else 0.0,
        ).dumps()


def _stderr(source: Source) -> list[recording.Chunk]:
    return [recording.Chunk(0.0, recording.STDERR, source.stderr)] if source.stderr else []


def _per_line(data: bytes) -> list[recording.Chunk]:
    """A chunk per line, split at ``\n`` only (a lone CR stays inside its line)."""
    parts = [part + b"\n" for part in data.split(b"\n")]
    parts[-1] = parts[-1][:-1]
    return [recording.Chunk(0.0, recording.STDOUT, part) for part in parts if part]


def as_recorded(source: Source, words: str = "the recording as is") -> Variant:
    """The baseline: the chunks as recorded, without pauses."""
    return Variant(source.recorded, source.exit_code, source.signal, words)


def line_by_line(source: Source, stdout: bytes, words: str) -> Variant:
    """``stdout`` one line per chunk, then the recorded stderr and exit status."""
    chunks = (*_per_line(stdout), *_stderr(source))
    return Variant(chunks, source.exit_code, source.signal, words)


def _short(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _SHOWN else f"{text[:_SHOWN]}... ({len(text)} chars)"


def _dump(obj: dict[str, Any]) -> bytes | None:
    """``obj`` as one compact JSON line; None when it cannot be written back as JSON."""
    try:
        text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate the recording escaped
            return json.dumps(obj, separators=(",", ":"), allow_nan=False).encode("ascii")
    except ValueError:
        return None


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=True, default=repr)


def content_objects(values: Iterable[object]) -> frozenset[str]:
    """Objects a driver passed through as content (found in its baseline result), in the
    canonical form :func:`additive` compares a line's objects with."""
    return frozenset(_canonical(v) for value in values for v in _walk(value) if isinstance(v, dict))


def _nodes(obj: dict[str, Any], content: frozenset[str]) -> list[tuple[str, dict[str, Any]]]:
    """The format's own objects in a line (path, object), content objects left out."""
    found: list[tuple[str, dict[str, Any]]] = []

    def visit(value: object, path: str) -> None:
        if isinstance(value, dict):
            if path and _canonical(value) in content:
                return
            found.append((path, value))
            for key, inner in value.items():
                visit(inner, f"{path}.{key}" if path else key)
        elif isinstance(value, list):
            for index, inner in enumerate(value):
                visit(inner, f"{path}[{index}]")

    visit(obj, "")
    return found


def _shuffled(obj: dict[str, Any], rng: random.Random, content: frozenset[str]) -> dict[str, Any]:
    """``obj`` with its keys reordered at every depth (content objects kept); the first
    top-level key always moves, so a parser that expects it first is caught."""

    def visit(value: Any, top: bool) -> Any:
        if isinstance(value, list):
            return [visit(inner, False) for inner in value]
        if not isinstance(value, dict) or (not top and _canonical(value) in content):
            return value
        keys = list(value)
        rng.shuffle(keys)
        if top and len(keys) > 1 and keys[0] == next(iter(value)):
            keys = keys[1:] + keys[:1]
        return {key: visit(value[key], False) for key in keys}

    result: dict[str, Any] = visit(obj, True)
    return result


@dataclass
class _Line:
    """One output line while a variant is built."""

    data: bytes
    origin: int | None
    notes: list[str] = field(default_factory=list)


def _json_values() -> SearchStrategy[Any]:
    from hypothesis import strategies as st

    leaves = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**53), max_value=2**53),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=12),
    )
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
        ),
        max_leaves=6,
    )


def _fresh(source: Source) -> SearchStrategy[str]:
    """Names the recording never uses (keys or string values)."""
    from hypothesis import strategies as st

    taken = source.vocabulary | {source.discriminator}
    return st.text(max_size=10).filter(lambda name: name not in taken)


def additive(source: Source, content: frozenset[str]) -> SearchStrategy[Variant]:
    """Variants with one to four additive changes, maybe CRLF line endings (DFT-01)."""
    from hypothesis import strategies as st

    objects = [i for i, obj in enumerate(source.objects) if obj is not None]
    positions = st.integers(min_value=0, max_value=len(source.lines))
    fields = st.dictionaries(_fresh(source), _json_values(), max_size=3)
    edits: list[SearchStrategy[tuple[Any, ...]]]
    if source.jsonrpc:
        edits = _rpc_lines(source, positions, fields)
    else:
        edits = [
            st.builds(
                lambda at, kind, more: ("insert", at, {source.discriminator: kind, **more}),
                positions,
                _fresh(source),
                fields,
            )
        ]
    blank = st.tuples(st.just("blank"), positions, st.sampled_from(_BLANKS))
    if objects:
        line = st.sampled_from(objects)
        scope = st.sampled_from(("object", "line", "everywhere"))
        edits.append(
            st.tuples(
                st.just("field"),
                line,
                st.integers(0, 2**16),
                _fresh(source),
                _json_values(),
                scope,
            )
        )
        edits.append(st.tuples(st.just("shuffle"), line, st.integers(0, 2**16)))
        if source.jsonrpc:
            meta = (st.just("meta"), line, st.integers(0, 2**16), _fresh(source), _json_values())
            edits.append(st.tuples(*meta))
    edits.append(blank)

    @st.composite
    def build(draw: DrawFn) -> Variant:
        changes = draw(st.lists(st.one_of(*edits), min_size=1, max_size=4))
        crlf = draw(st.booleans())
        return _additive_variant(source, content, changes, crlf)

    return build()


def _rpc_lines(
    source: Source, positions: SearchStrategy[int], fields: SearchStrategy[dict[str, Any]]
) -> list[SearchStrategy[tuple[Any, ...]]]:
    """New JSON-RPC notifications: an extension method (``_vendor/thing``), and a
    ``session/update`` of an unknown kind for a session the recording names."""
    from hypothesis import strategies as st

    def notification(at: int, method: str, params: dict[str, Any]) -> tuple[Any, ...]:
        return ("insert", at, {"jsonrpc": "2.0", "method": method, "params": params})

    methods = st.builds(lambda vendor, what: f"_{vendor}/{what}", _fresh(source), _fresh(source))
    lines = [st.builds(notification, positions, methods, fields)]
    sessions = sorted(
        {
            obj["params"]["sessionId"]
            for obj in source.objects
            if obj is not None
            and obj.get("method") == "session/update"
            and isinstance(obj.get("params"), dict)
            and isinstance(obj["params"].get("sessionId"), str)
        }
    )
    if sessions:

        def update(session: str, kind: str, more: dict[str, Any]) -> dict[str, Any]:
            return {"sessionId": session, "update": {"sessionUpdate": kind, **more}}

        params = st.builds(update, st.sampled_from(sessions), _fresh(source), fields)
        lines.append(st.builds(notification, positions, st.just("session/update"), params))
    return lines


def _additive_variant(
    source: Source, content: frozenset[str], changes: list[tuple[Any, ...]], crlf: bool
) -> Variant:
    lines = [_Line(data, index) for index, data in enumerate(source.lines)]
    edited: dict[int, dict[str, Any]] = {}
    inserts: list[tuple[int, _Line]] = []
    everywhere: list[str] = []
    added: set[str] = set()

    def edit(index: int) -> dict[str, Any]:
        return edited.setdefault(index, copy.deepcopy(source.objects[index] or {}))

    def nodes(index: int) -> list[tuple[str, dict[str, Any]]]:
        found = _nodes(edit(index), content)
        # A JSON-RPC message's envelope is the protocol's, not the agent's format.
        return [node for node in found if node[0]] if source.jsonrpc else found

    for change in changes:
        what, at = change[0], change[1]
        if what == "insert":
            data = _dump(change[2])
            if data is not None:
                inserts.append((at, _Line(data, None, [f"unknown line {_short(change[2])}"])))
        elif what == "blank":
            inserts.append((at, _Line(change[2], None, ["blank line"])))
        elif what == "field":
            _, _, node, key, value, scope = change
            added.add(key)
            field_words = f"unknown field {_short(key)}: {_short(value)}"
            if scope == "everywhere":
                for index, obj in enumerate(source.objects):
                    if obj is not None:
                        for _, inner in nodes(index):
                            inner.setdefault(key, copy.deepcopy(value))  # never shared: no cycle
                everywhere.append(f"{field_words} in every object of every line")
                continue
            found = nodes(at)
            if not found:
                continue
            if scope == "line":
                chosen, where = found, "in every object"
            else:
                chosen = [found[node % len(found)]]
                where = f"in {chosen[0][0]}" if chosen[0][0] else "at top level"
            for _, inner in chosen:
                inner.setdefault(key, copy.deepcopy(value))  # never shared: no cycle
            lines[at].notes.append(f"{field_words} {where}")
        elif what == "meta":
            _, _, node, key, value = change
            found = nodes(at)
            if not found:
                continue
            path, inner = found[node % len(found)]
            meta = inner.setdefault("_meta", {})
            if isinstance(meta, dict):
                added.add(key)
                meta.setdefault(key, copy.deepcopy(value))
                lines[at].notes.append(f"_meta field {_short(key)}: {_short(value)} in {path}")
        else:
            edited[at] = _shuffled(edit(at), random.Random(change[2]), content)
            lines[at].notes.append("keys reordered at every depth")
    for index, obj in edited.items():
        data = _dump(obj)
        if data is None:  # a number JSON cannot spell back: leave the line alone
            lines[index].notes.clear()
        else:
            lines[index].data = data
    for at, line in sorted(inserts, key=lambda pair: pair[0]):
        before = next(
            i for i, kept in enumerate([*lines, None]) if kept is None or kept.origin == at
        )
        lines.insert(before, line)
    newline = b"\r\n" if crlf else b"\n"
    out = newline.join(line.data for line in lines)
    if source.ends_with_newline or not lines:
        out += newline if lines else b""
    words = [*everywhere, *_describe(source, lines)]
    if crlf:
        words.append("every line ends with CRLF")
    variant = line_by_line(source, out, "; ".join(words) or "no change")
    return dataclasses.replace(variant, added=frozenset(added))


def _describe(source: Source, lines: list[_Line]) -> list[str]:
    words: list[str] = []
    for number, line in enumerate(lines, start=1):
        if not line.notes:
            continue
        if line.origin is None:
            where = f"line {number} (inserted)"
        else:
            where = f"line {number} ({source.kind(line.origin)})"
        words.append(f"{where}: {', '.join(line.notes)}")
    return words


# -- corrupt output ------------------------------------------------------------------------


def _string_spans(line: bytes) -> list[tuple[int, int]]:
    """(start, end) of the contents of every string *value* in a JSON object line."""
    spans: list[tuple[int, int]] = []
    index = 0
    while index < len(line):
        if line[index] != 0x22:  # '"'
            index += 1
            continue
        end = index + 1
        while end < len(line) and line[end] != 0x22:
            end += 2 if line[end] == 0x5C else 1  # a backslash escapes the next byte
        after = line[end + 1 :].lstrip()
        if not after.startswith(b":"):
            spans.append((index + 1, end))
        index = end + 1
    return spans


def _boundaries(line: bytes, start: int, end: int) -> list[int]:
    """Offsets in ``line[start:end]`` (a string's contents) between two characters."""
    offsets = [start]
    index = start
    while index < end:
        lead = line[index]
        if lead == 0x5C:
            step = 6 if line[index + 1 : index + 2] == b"u" else 2
        else:
            step = 1 if lead < 0xC0 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
        index = min(index + step, end)
        offsets.append(index)
    return offsets


def corrupt(source: Source) -> SearchStrategy[Variant] | None:
    """Variants with one corruption (DFT-02); None when no line is a JSON object."""
    from hypothesis import strategies as st

    candidates = source.object_lines
    answers = _answers(source)
    if answers:  # after the last answer the conversation is over: a client need not read on
        candidates = [i for i in candidates if i <= answers[-1]]
    if not candidates:
        return None
    last = max((i for i, line in enumerate(source.lines) if line.strip()), default=-1)
    fraction = st.floats(min_value=0.0, max_value=1.0, exclude_max=True)
    strategies = [st.builds(_cut_inside, st.just(source), st.sampled_from(candidates), fraction)]
    if last in candidates:
        strategies.append(st.builds(_truncated_last, st.just(source), fraction))
    with_strings = [i for i in candidates if _string_spans(source.lines[i])]
    if with_strings:
        strategies.append(
            st.builds(
                _invalid_utf8,
                st.just(source),
                st.sampled_from(with_strings),
                fraction,
                fraction,
                st.sampled_from(_INVALID_UTF8),
            )
        )
    if len(answers) > 1:
        later = st.sampled_from(answers[1:])
        strategies.append(st.builds(_wrong_id, st.just(source), later, fraction))
    exits = [(source.exit_code, source.signal), (1, None), (None, _KILLED)]
    strategies.append(
        st.builds(
            _exit_mid_line,
            st.just(source),
            st.sampled_from(candidates),
            fraction,
            st.sampled_from(list(dict.fromkeys(exits))),
        )
    )
    return st.one_of(*strategies)


def _cut(line: bytes, fraction: float) -> bytes:
    """A proper prefix of ``line``'s JSON text, at least one byte: never valid JSON."""
    lead = len(line) - len(line.lstrip())
    text = line.strip()
    return line[: lead + 1 + int(fraction * (len(text) - 1))]


def _numbered(source: Source, index: int) -> str:
    return f"line {index + 1} ({source.kind(index)})"


def _cut_inside(source: Source, index: int, fraction: float) -> Variant:
    data = _cut(source.lines[index], fraction)
    lines = [*source.lines[:index], data, *source.lines[index + 1 :]]
    out = b"\n".join(lines) + (b"\n" if source.ends_with_newline else b"")
    words = (
        f"{_numbered(source, index)} cut after {len(data)} of {len(source.lines[index])} bytes, "
        "so it starts like JSON but does not parse; the output goes on after it"
    )
    variant = line_by_line(source, out, words)
    return _with_corruption(variant, index, data)


def _truncated_last(source: Source, fraction: float) -> Variant:
    index = max(i for i, line in enumerate(source.lines) if line.strip())
    data = _cut(source.lines[index], fraction)
    out = b"".join(line + b"\n" for line in source.lines[:index]) + data
    words = (
        f"the last line, {_numbered(source, index)}, truncated after {len(data)} of "
        f"{len(source.lines[index])} bytes (no newline); the process exits as recorded"
    )
    return _with_corruption(line_by_line(source, out, words), index, data)


def _invalid_utf8(
    source: Source, index: int, which: float, where: float, invalid: bytes
) -> Variant:
    line = source.lines[index]
    spans = _string_spans(line)
    start, end = spans[int(which * len(spans))]
    offsets = _boundaries(line, start, end)
    at = offsets[int(where * len(offsets))]
    data = line[:at] + invalid + line[at:]
    lines = [*source.lines[:index], data, *source.lines[index + 1 :]]
    out = b"\n".join(lines) + (b"\n" if source.ends_with_newline else b"")
    words = (
        f"{_numbered(source, index)}: the invalid UTF-8 bytes {invalid!r} inserted at byte "
        f"{at} (inside a string value)"
    )
    return _with_corruption(line_by_line(source, out, words), index, data)


def _answers(source: Source) -> list[int]:
    """Lines of a JSON-RPC recording that answer a request (they carry no method)."""
    if not source.jsonrpc:
        return []
    return [
        i
        for i, obj in enumerate(source.objects)
        if obj is not None and "id" in obj and "method" not in obj
    ]


def _wrong_id(source: Source, index: int, which: float) -> Variant:
    """The answer on line ``index`` carries the id of an answer before it instead of its
    own: the client's request it answers is never answered."""
    earlier = [source.objects[i]["id"] for i in _answers(source) if i < index]  # type: ignore[index]
    obj = dict(source.objects[index] or {})
    wrong = earlier[int(which * len(earlier))]
    right, obj["id"] = obj.get("id"), wrong
    data = _dump(obj) or source.lines[index]
    lines = [*source.lines[:index], data, *source.lines[index + 1 :]]
    out = b"\n".join(lines) + (b"\n" if source.ends_with_newline else b"")
    words = (
        f"{_numbered(source, index)}: its id changed from {_short(right)} to {_short(wrong)}, "
        "the id of an earlier answer, so the request it answers stays unanswered"
    )
    return _with_corruption(line_by_line(source, out, words), index, data)


def _exit_mid_line(
    source: Source, index: int, fraction: float, status: tuple[int | None, int | None]
) -> Variant:
    data = _cut(source.lines[index], fraction)
    out = b"".join(line + b"\n" for line in source.lines[:index]) + data
    exit_code, signal = status
    how = f"exits with status {exit_code}" if signal is None else f"is killed by signal {signal}"
    words = (
        f"the process {how} in the middle of {_numbered(source, index)}, after "
        f"{len(data)} of its {len(source.lines[index])} bytes; nothing after it is written"
    )
    chunks = (*_per_line(out), *_stderr(source))
    variant = Variant(chunks, exit_code, signal, words)
    return _with_corruption(variant, index, data)


def _with_corruption(variant: Variant, index: int, data: bytes) -> Variant:
    return Variant(
        variant.chunks,
        variant.exit_code,
        variant.signal,
        variant.words,
        corruption=Corruption(index + 1, data),
    )


# -- chunking ------------------------------------------------------------------------------


def with_multibyte(source: Source, texts: set[str]) -> tuple[bytes, int]:
    """The recording's stdout with :data:`MULTIBYTE` appended to each string value that the
    baseline surfaced as text (output, item or delta text; not identifier-like words such
    as ``success``, which may be a subtype), so that chunk boundaries can split
    multi-byte characters the driver shows; and how many values were changed."""
    prose = {text for text in texts if not _IDENTIFIER.fullmatch(text)}
    suffix = MULTIBYTE.encode("utf-8")
    lines: list[bytes] = []
    changed = 0
    for line, obj in zip(source.lines, source.objects, strict=True):
        if obj is not None:
            for start, end in reversed(_string_spans(line)):
                try:
                    value = json.loads(line[start - 1 : end + 1])
                except ValueError:
                    continue
                if value in prose:
                    line = line[:end] + suffix + line[end:]
                    changed += 1
        lines.append(line)
    out = b"\n".join(lines) + (b"\n" if source.ends_with_newline else b"")
    return out, changed


def _split_points(data: bytes) -> list[int]:
    """Offsets worth cutting at: inside each multi-byte character, around each newline."""
    points: set[int] = set()
    for index, byte in enumerate(data):
        if 0x80 <= byte < 0xC0:  # a continuation byte: cutting before it splits a character
            points.add(index)
        elif byte == 0x0A:
            points.update((index, index + 1))
    return sorted(p for p in points if 0 < p < len(data))


def rechunked(source: Source, data: bytes, label: str) -> SearchStrategy[Variant] | None:
    """``data`` cut into chunks at one to six offsets, each followed by a pause of 0, 5 or
    25 ms (DFT-03); None when there is nothing to cut."""
    from hypothesis import strategies as st

    if len(data) < 2:
        return None
    points = _split_points(data)
    anywhere = st.integers(min_value=1, max_value=len(data) - 1)
    offsets = st.one_of(st.sampled_from(points), anywhere) if points else anywhere
    cuts = st.lists(
        st.tuples(offsets, st.sampled_from(_PAUSES)),
        min_size=1,
        max_size=6,
        unique_by=lambda cut: cut[0],
    )
    return st.builds(lambda chosen: _chunked(source, data, label, chosen), cuts)


def _chunked(source: Source, data: bytes, label: str, cuts: list[tuple[int, float]]) -> Variant:
    chunks: list[recording.Chunk] = []
    words: list[str] = []
    start, clock = 0, 0.0
    for offset, pause in sorted(cuts):
        chunks.append(recording.Chunk(clock, recording.STDOUT, data[start:offset]))
        clock += pause
        words.append(f"cut at byte {offset} ({_where(data, offset)})" + _pause(pause))
        start = offset
    chunks.append(recording.Chunk(clock, recording.STDOUT, data[start:]))
    chunks.extend(recording.Chunk(clock, c.fd, c.data) for c in _stderr(source))
    text = f"{label} in {plural(len(chunks), 'chunk')}: " + "; ".join(words)
    return Variant(tuple(chunks), source.exit_code, source.signal, text, realtime=clock > 0)


def _pause(seconds: float) -> str:
    return f", then a {seconds * 1000:g} ms pause" if seconds else ""


def _where(data: bytes, offset: int) -> str:
    line = data.count(b"\n", 0, offset) + 1
    if 0x80 <= data[offset] < 0xC0:
        lead = offset
        while lead > 0 and 0x80 <= data[lead] < 0xC0:
            lead -= 1
        size = len(data[lead : lead + 4].decode("utf-8", errors="ignore")[:1].encode("utf-8"))
        return f"line {line}, inside a {size}-byte UTF-8 character"
    if data[offset : offset + 1] == b"\n":
        return f"line {line}, just before its newline"
    if data[offset - 1 : offset] == b"\n":
        return f"the start of line {line}"
    return f"line {line}"
