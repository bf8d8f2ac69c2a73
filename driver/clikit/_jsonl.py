"""What every parser of a JSONL-printing CLI does the same way.

Reading a line (a UTF-8 byte-order mark before the first one dropped, blank lines
skipped, non-objects kept visible as ``stdout`` items, corrupt JSON counted), telling
that a line printed without its newline is complete, tolerant field access, and the
order in which a run's failure is classified. A format's parser subclasses :class:`JsonlParser`
and handles the decoded objects.
"""

from __future__ import annotations

import json
import math
from abc import ABC, abstractmethod
from typing import Any, ClassVar

from pydantic_core import from_json

from driver import (
    FailureCode,
    RunFailure,
    TerminalPayload,
    TranscriptItem,
    TranscriptKind,
    Usage,
)
from driver.clikit._emit import RunOutput
from driver.clikit._process import ProcessOutcome

__all__ = [
    "STDERR_TAIL",
    "JsonlParser",
    "dict_field",
    "int_field",
    "list_field",
    "make_usage",
    "read_usage",
    "stderr_tail",
    "str_field",
]

STDERR_TAIL = 2000
"""Characters of stderr quoted in a failure message."""

_BOM = b"\xef\xbb\xbf"
_TRAILING_SPACE = frozenset(b" \t\r")


def str_field(obj: dict[str, Any], key: str) -> str:
    """``obj[key]`` when it is a string, else ``""``."""
    value = obj.get(key)
    return value if isinstance(value, str) else ""


def dict_field(obj: dict[str, Any], key: str) -> dict[str, Any]:
    """``obj[key]`` when it is an object, else ``{}``."""
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


def list_field(obj: dict[str, Any], key: str) -> list[Any]:
    """``obj[key]`` when it is an array, else ``[]``."""
    value = obj.get(key)
    return value if isinstance(value, list) else []


def int_field(obj: dict[str, Any], key: str) -> int:
    """``obj[key]`` when it is an integer (not a bool), else 0."""
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def read_usage(raw: dict[str, Any], *, cached_key: str) -> Usage:
    """Token counts of a format whose ``input_tokens`` already include the cached ones
    (named ``cached_key``), kept within the definition as :func:`make_usage` keeps them."""
    return make_usage(
        input_tokens=int_field(raw, "input_tokens"),
        cached_input_tokens=int_field(raw, cached_key),
        output_tokens=int_field(raw, "output_tokens"),
    )


def make_usage(
    *, input_tokens: int, cached_input_tokens: int, output_tokens: int, cost_usd: float = 0.0
) -> Usage:
    """A :class:`driver.Usage` from counts already in its meaning (input inclusive of
    cache reads and writes, output inclusive of reasoning) and a cost in dollars.

    Negative counts (and a negative or non-finite cost) become 0 and the cached
    part never exceeds the input, so a CLI's inconsistent numbers cannot break
    the definition.
    """
    inclusive = max(input_tokens, 0)
    milli = round(cost_usd * 1000) if math.isfinite(cost_usd) else 0
    return Usage(
        input_tokens=inclusive,
        cached_input_tokens=min(max(cached_input_tokens, 0), inclusive),
        output_tokens=max(output_tokens, 0),
        estimated_cost_milli=max(milli, 0),
    )


def stderr_tail(stderr: bytes) -> str:
    """The end of stderr, where a CLI's fatal error usually is."""
    text = stderr.decode("utf-8", errors="replace").strip()
    return text if len(text) <= STDERR_TAIL else "..." + text[-STDERR_TAIL:]


_JSON_SPACE = frozenset(b" \t\r\n")


def _looks_like_object(raw: bytes) -> bool:
    """The line, but for JSON whitespace around it, starts with ``{`` and ends with ``}``."""
    start, end = 0, len(raw)
    while start < end and raw[start] in _JSON_SPACE:
        start += 1
    while end > start and raw[end - 1] in _JSON_SPACE:
        end -= 1
    return end - start >= 2 and raw[start] == 0x7B and raw[end - 1] == 0x7D


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


class JsonlParser(ABC):
    """Turns stdout lines into payloads and items as they arrive; never raises.

    Implements :class:`driver.clikit.StreamParser` except for what depends on
    the format: :meth:`on_object` for each decoded line, :attr:`succeeded`,
    :attr:`resume_id`, :meth:`output` and :meth:`reported_failure`. After the
    process ended, :meth:`failure` classifies the run from the same pass;
    :meth:`exit_detail` and :meth:`failure_context` let a format say more.
    """

    program: ClassVar[str]
    """The CLI's name as failure messages spell it."""
    missing_terminal: ClassVar[str]
    """What a clean exit lacked when no terminal event came, after "exited without"."""

    def __init__(self, out: RunOutput, *, model: str = "") -> None:
        self._out = out
        self.model = model
        """The model the CLI reported (or was asked for), or ``""``."""
        self.terminal: TerminalPayload | None = None
        """The official terminal line, verbatim; None until one was seen."""
        self.usage: Usage | None = None
        """Token counts of the terminal line; None when not reported."""
        self.malformed_lines = 0
        """Lines that start like JSON but do not parse (or are not UTF-8): the protocol is not
        trustworthy."""
        self._error_hint = ""
        """An error the CLI printed on stdout, quoted when the exit code fails the run."""
        self._first_line = True

    def feed(self, raw: bytes) -> None:
        """Parse one stdout line (without its newline).

        A UTF-8 byte-order mark that starts the stream (some Windows builds and wrappers
        write one) is not part of the first line; the raw stdout keeps it.

        A line that is one JSON object is parsed from its bytes (``pydantic_core``'s
        parser), so no decoded copy of it is held while its values are built; the text
        of the line is decoded only when :meth:`needs_text` asks for it. Anything else
        (and whatever that parser refuses) takes the ``json`` module's path, which decides.
        """
        data: bytes | memoryview = raw
        if self._first_line:
            self._first_line = False
            if raw.startswith(_BOM):
                data = memoryview(raw)[len(_BOM) :]  # no copy of a long first line
        if data is raw and _looks_like_object(raw):
            try:
                parsed = from_json(raw, allow_inf_nan=False)
            except ValueError:
                parsed = None  # the json module's path below decides, as it always did
            if isinstance(parsed, dict):
                text = str(raw, "utf-8").strip() if self.needs_text(parsed) else ""
                self.on_object(parsed, text)
                return
        try:
            text, utf8 = str(data, "utf-8"), True  # decoded once: a line may be megabytes
        except UnicodeDecodeError:
            text, utf8 = str(data, "utf-8", errors="replace"), False
        text = text.strip()
        if not text:
            return
        value: object = None
        if text.startswith("{"):
            try:
                if not utf8:  # invalid UTF-8 in a JSON line is corruption, not text
                    raise ValueError("not UTF-8")
                value = json.loads(text, parse_constant=_reject_constant)
            except ValueError:
                self.malformed_lines += 1
        if not isinstance(value, dict):
            # Debug or log output that reached stdout, or a corrupt line: keep it visible.
            self._out.item(TranscriptItem(kind=TranscriptKind.STDOUT, text=text))
            return
        self.on_object(value, text)

    def needs_text(self, line: dict[str, Any]) -> bool:
        """Whether :meth:`on_object` uses the ``text`` of this parsed line (by default,
        always). A format whose parser reads the text of its terminal line only says so
        here: every other line is then handed on with ``text`` empty, and a line of
        megabytes is never held decoded next to its parsed values."""
        return True

    def is_whole_line(self, raw: memoryview) -> bool:
        """Whether an unterminated stdout line is one complete JSON object already.

        Asked (see :class:`driver.clikit.LineJudge`) when a read drained the pipe and a
        line is pending without its newline: a CLI that prints its terminal line so and
        keeps running has its terminal grace start there. Cheap unless the bytes end
        with ``}``; only then are they parsed.
        """
        end = len(raw)
        while end and raw[end - 1] in _TRAILING_SPACE:
            end -= 1
        if not end or raw[end - 1] != ord("}"):
            return False
        start = len(_BOM) if self._first_line and raw[: len(_BOM)] == _BOM else 0
        try:
            value = json.loads(str(raw[start:end], "utf-8"), parse_constant=_reject_constant)
        except ValueError:  # not UTF-8, or not JSON (yet)
            return False
        return isinstance(value, dict)

    @abstractmethod
    def on_object(self, line: dict[str, Any], text: str) -> None:
        """Handle one JSON object line; ``text`` is the line as printed (stripped)."""

    def vendor(self, kind: str, raw: dict[str, Any], item: TranscriptItem) -> None:
        """A line no normalized kind fits: a vendor stream kind (namespaced, e.g.
        ``claude.api_retry``) carrying the CLI's fields as ``raw``, and its item."""
        self._out.vendor(kind, raw)
        self._out.item(item)

    @property
    @abstractmethod
    def succeeded(self) -> bool:
        """The terminal line says the run succeeded."""

    @property
    @abstractmethod
    def resume_id(self) -> str:
        """The session handle the protocol named explicitly at top level, or ``""``."""

    @abstractmethod
    def output(self) -> str:
        """The final assistant text."""

    @abstractmethod
    def reported_failure(self, meta: dict[str, Any]) -> str:
        """The message of a terminal line that reports an error; may add to ``meta``."""

    def exit_detail(self, outcome: ProcessOutcome) -> str:
        """What the message of a non-zero exit quotes after the code: by default the
        error the CLI printed on stdout, else the end of stderr."""
        return self._error_hint or stderr_tail(outcome.stderr)

    def failure_context(self, meta: dict[str, Any], message: str, outcome: ProcessOutcome) -> str:
        """What the stream said before any failure (the last error line, retries, limits
        ...), appended to the failure ``message`` in parentheses; may add to ``meta``.
        Default: nothing."""
        return ""

    def structured_json(self) -> str | None:
        """The JSON text of the CLI's native structured answer; None by default."""
        return None

    def failure(self, outcome: ProcessOutcome, timeout: float) -> RunFailure | None:
        """Classify the run; None only for a successful terminal line with a clean exit."""
        meta: dict[str, Any] = {"exit_code": outcome.exit_code}
        if outcome.signal:
            meta["signal"] = outcome.signal
        if outcome.timed_out:
            message = f"{self.program} did not finish within {timeout:g} s and was stopped"
        elif self.terminal is not None and not self.succeeded:
            message = self.reported_failure(meta)
        elif outcome.signal:
            message = f"{self.program} was ended by {outcome.signal}"
        elif outcome.exit_code != 0:
            message = f"{self.program} exited with code {outcome.exit_code}"
            detail = self.exit_detail(outcome)
            if detail:
                message = f"{message}: {detail}"
        elif self.terminal is None:
            message = f"{self.program} exited without {self.missing_terminal}"
        else:
            return None
        context = self.failure_context(meta, message, outcome)
        if context:
            message = f"{message} ({context})"
        return RunFailure(code=FailureCode.AGENT_ERROR, message=message, metadata=meta)
