"""Recording format v1: what ``adaptertest record`` writes and ``adaptertest replay`` reads.

A recording is a UTF-8 JSONL file. Line 1 is a header object::

    {"adaptertest_recording": 1, "argv": [...], "exit_code": 3, "signal": null,
     "redactions": ["env:OPENAI_API_KEY", "home"], "marker": "[REDACTED]", "duration": 1.52}

``argv`` is the recorded command line (redacted), ``chunks`` the number of chunk lines
that follow (so a file cut at a line boundary is caught; optional, older files lack
it), ``exit_code`` its exit status or
``signal`` the signal that killed it (exactly one of the two is set), ``redactions``
names what was replaced in the file and ``marker`` the text secrets were replaced by.
An optional ``cli`` object names the recorded CLI, e.g. ``{"name": "claude", "version":
"2.1.328"}`` (written by ``adaptertest record --cli``, or when the program is detected).
Every following line is one chunk of output, in arrival order::

    {"t": 0.183, "fd": 1, "data": "{\\"type\\":\\"system\\"}\\n"}

``t`` is seconds since the command started, ``fd`` is 1 (stdout) or 2 (stderr), and the
bytes are in ``data`` when they are valid UTF-8, else base64 in ``b64``. A file whose
first line is not such a header is a plain JSONL transcript, replayed line by line.

Lines are split on ``\\n`` only: JSON text written without ASCII escaping may contain
U+2028 or U+0085, which :meth:`str.splitlines` would wrongly treat as line ends.

Imported by the replay stand-in, which starts once per driver run: standard library only,
and nothing beyond ``json`` unless a chunk needs base64.
"""

from __future__ import annotations

import math

TYPE_CHECKING = False  # typing itself costs the replay stand-in milliseconds of start-up
if TYPE_CHECKING:
    import os
    from collections.abc import Iterable, Mapping, Sequence

FORMAT_KEY = "adaptertest_recording"
"""The header key that marks a file as a recording; its value is the format version."""
VERSION = 1
DEFAULT_MARKER = "[REDACTED]"
STDOUT, STDERR = 1, 2


class RecordingError(ValueError):
    """A recording that cannot be read; the message names the line and the problem."""


class Chunk:
    """Bytes one stream delivered at ``t`` seconds after the start."""

    __slots__ = ("data", "fd", "t")

    def __init__(self, t: float, fd: int, data: bytes) -> None:
        self.t = t
        self.fd = fd
        self.data = data

    def __repr__(self) -> str:
        return f"Chunk(t={self.t!r}, fd={self.fd!r}, data={self.data!r})"

    def to_json(self) -> dict[str, object]:
        """The chunk's line: text in ``data`` when the bytes are UTF-8, else ``b64``."""
        line: dict[str, object] = {"t": round(self.t, 6), "fd": self.fd}
        try:
            line["data"] = self.data.decode("utf-8")
        except UnicodeDecodeError:
            import base64

            line["b64"] = base64.b64encode(self.data).decode("ascii")
        return line


class Recording:
    """One recorded run: the header's facts and the chunks in arrival order."""

    __slots__ = (
        "argv",
        "chunks",
        "cli",
        "duration",
        "exit_code",
        "marker",
        "redactions",
        "signal",
    )

    def __init__(
        self,
        *,
        argv: Sequence[str],
        chunks: Iterable[Chunk],
        exit_code: int | None,
        signal: int | None = None,
        redactions: Sequence[str] = (),
        marker: str = DEFAULT_MARKER,
        duration: float = 0.0,
        cli: Mapping[str, str] | None = None,
    ) -> None:
        if (exit_code is None) == (signal is None):
            raise ValueError("a recording has exactly one of exit_code and signal")
        self.argv = list(argv)
        self.chunks = list(chunks)
        self.exit_code = exit_code
        self.signal = signal
        self.redactions = list(redactions)
        self.marker = marker
        self.duration = duration
        self.cli = dict(cli) if cli else None
        """The recorded CLI (``{"name": ..., "version": ...}``), when known; None otherwise."""

    @property
    def returncode(self) -> int:
        """The exit status as :mod:`subprocess` reports it: negative for a signal."""
        if self.signal is not None:
            return -self.signal
        assert self.exit_code is not None  # the constructor demands one of the two
        return self.exit_code

    def output(self, fd: int) -> bytes:
        """Everything one stream wrote (1: stdout, 2: stderr), joined."""
        return b"".join(c.data for c in self.chunks if c.fd == fd)

    @property
    def stdout(self) -> bytes:
        return self.output(STDOUT)

    @property
    def stderr(self) -> bytes:
        return self.output(STDERR)

    def header(self) -> dict[str, object]:
        """The header object, key order fixed; ``cli`` only when known."""
        head: dict[str, object] = {
            FORMAT_KEY: VERSION,
            "argv": self.argv,
            "exit_code": self.exit_code,
            "signal": self.signal,
            "redactions": self.redactions,
            "marker": self.marker,
            "duration": round(self.duration, 6),
            "chunks": len(self.chunks),
        }
        if self.cli:
            head["cli"] = self.cli
        return head

    def dumps(self) -> bytes:
        """The whole file: the header line, then one line per chunk."""
        import json

        lines = [self.header(), *(c.to_json() for c in self.chunks)]
        text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
        return text.encode("utf-8")


def is_recording(first_line: bytes, *, source: str = "recording") -> bool:
    """Whether a file's first line is a recording header (cheap for plain transcripts).

    A line that starts as a header (``{"adaptertest_recording": ...``) but is cut off or
    not a JSON object raises :class:`RecordingError` naming the header, instead of being
    replayed as a plain transcript."""
    return _header(first_line, source=source) is not None


_HEADER_START = ('{"' + FORMAT_KEY + '"').encode()


def _header(first_line: bytes, *, source: str = "recording") -> dict[str, object] | None:
    if FORMAT_KEY.encode() not in first_line:
        return None  # a plain transcript: no need to load json
    import json

    try:
        head = json.loads(first_line)
    except ValueError:
        head = None
    if isinstance(head, dict) and FORMAT_KEY in head:
        return head
    if first_line.lstrip().startswith(_HEADER_START):
        raise RecordingError(
            f"{source}:1: the recording header ({FORMAT_KEY!r}) is cut off or not one JSON "
            f"object ({len(first_line)} bytes); record the run again"
        )
    return None


def loads(data: bytes, *, source: str = "recording") -> Recording:
    """Parse a recording; :class:`RecordingError` names the line of the first problem."""
    lines = data.split(b"\n")
    head = _header(lines[0], source=source)
    where = f"{source}:1"
    if head is None:
        raise RecordingError(f"{where}: not a recording header ({FORMAT_KEY!r})")
    version = head[FORMAT_KEY]
    if type(version) is not int or version != VERSION:
        raise RecordingError(f"{where}: recording format {version!r} is unknown (reads {VERSION})")
    chunks = [
        _chunk(line, f"{source}:{number}")
        for number, line in enumerate(lines[1:], start=2)
        if line.strip()
    ]
    counted = head.get("chunks")
    if counted is not None and (type(counted) is not int or counted < 0):
        raise RecordingError(f"{where}: 'chunks' must be a count, got {counted!r}")
    if counted is not None and counted != len(chunks):
        raise RecordingError(
            f"{source}: the header counts {counted} chunk lines, the file has {len(chunks)}: "
            "the recording is cut short (or was edited); record the run again"
        )
    exit_code, signal = _status(head, "exit_code", where), _status(head, "signal", where)
    if (exit_code is None) == (signal is None):
        raise RecordingError(f"{where}: exactly one of 'exit_code' and 'signal' must be set")
    return Recording(
        argv=_strings(head, "argv", where),
        chunks=chunks,
        exit_code=exit_code,
        signal=signal,
        redactions=_strings(head, "redactions", where),
        marker=_text(head, "marker", where, DEFAULT_MARKER),
        duration=_seconds(head, "duration", where, 0.0),
        cli=_cli(head, where),
    )


def read(path: str | os.PathLike[str]) -> Recording:
    """Read a recording file (:class:`RecordingError` for a bad one, OSError as raised)."""
    with open(path, "rb") as file:
        return loads(file.read(), source=str(path))


# -- validation --------------------------------------------------------------------------


def _chunk(line: bytes, where: str) -> Chunk:
    import json

    try:
        obj = json.loads(line)
    except ValueError as exc:
        raise RecordingError(f"{where}: not a JSON line: {exc}") from None
    if not isinstance(obj, dict):
        raise RecordingError(f"{where}: a chunk is a JSON object, got {type(obj).__name__}")
    fd = obj.get("fd")
    if type(fd) is not int or fd not in (STDOUT, STDERR):  # bool is an int: refused
        raise RecordingError(f"{where}: 'fd' must be 1 or 2, got {fd!r}")
    t = _seconds(obj, "t", where, None)
    if ("data" in obj) == ("b64" in obj):
        raise RecordingError(f"{where}: a chunk has exactly one of 'data' and 'b64'")
    if "data" in obj:
        text = obj["data"]
        if not isinstance(text, str):
            raise RecordingError(f"{where}: 'data' must be a string, got {type(text).__name__}")
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as exc:  # a lone surrogate escaped as \\udXXX
            raise RecordingError(f"{where}: 'data' is not encodable text: {exc}") from None
    else:
        data = _base64(obj["b64"], where)
    return Chunk(t, fd, data)


def _base64(value: object, where: str) -> bytes:
    import base64
    import binascii

    if not isinstance(value, str):
        raise RecordingError(f"{where}: 'b64' must be a string, got {type(value).__name__}")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise RecordingError(f"{where}: 'b64' is not valid base64: {exc}") from None


def _seconds(obj: dict[str, object], key: str, where: str, default: float | None) -> float:
    value = obj.get(key, default)
    # bool is an int, and json.loads accepts NaN and Infinity: refuse all three.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise RecordingError(f"{where}: {key!r} must be a number of seconds, got {value!r}")
    if not math.isfinite(value) or value < 0:
        raise RecordingError(f"{where}: {key!r} must be finite and >= 0, got {value!r}")
    return float(value)


def _status(obj: dict[str, object], key: str, where: str) -> int | None:
    if key not in obj:
        raise RecordingError(f"{where}: the header lacks {key!r}")
    value = obj[key]
    if value is None:
        return None
    low, high = (0, 255) if key == "exit_code" else (1, 127)
    if type(value) is not int or not low <= value <= high:  # bool is an int: refused
        raise RecordingError(f"{where}: {key!r} must be null or {low}..{high}, got {value!r}")
    return value


def _cli(obj: dict[str, object], where: str) -> dict[str, str] | None:
    value = obj.get("cli")
    if value is None:
        return None
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise RecordingError(f"{where}: 'cli' must be an object of strings, got {value!r}")
    return dict(value)


def _strings(obj: dict[str, object], key: str, where: str) -> list[str]:
    value = obj.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RecordingError(f"{where}: {key!r} must be a list of strings, got {value!r}")
    return [v for v in value if isinstance(v, str)]


def _text(obj: dict[str, object], key: str, where: str, default: str) -> str:
    value = obj.get(key, default)
    if not isinstance(value, str):
        raise RecordingError(f"{where}: {key!r} must be a string, got {value!r}")
    return value
