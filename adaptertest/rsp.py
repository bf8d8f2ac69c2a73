"""RSP family: invariants of the ``Response`` a run returns (RSP-01..05).

``verify_response`` judges what the response alone shows; ``verify_outcome`` adds the
error ``run`` raised, which makes any valid checkpoint unsafe; ``verify_checkpoint_codec``
pushes a valid checkpoint through the driver's own session codec. A failed run that
reports its failure faithfully is legal input to all three.
"""

from __future__ import annotations

import inspect
import json
from typing import TypeVar, cast

from adaptertest._violation import Violation
from adaptertest.trn import verify_transcript
from driver.protocols import SessionCodec, SessionCodecProvider, implements
from driver.run import FailureCode, Response, SessionState
from driver.session import SessionParams

__all__ = [
    "decode_lossless",
    "is_valid_json",
    "trim_space",
    "verify_checkpoint_codec",
    "verify_outcome",
    "verify_response",
]

# Go's unicode.IsSpace set. Python's str.isspace also counts U+001C..U+001F, so
# str.strip() would call a few strings blank that Go does not.
_GO_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)

_HUMAN_DECISION_CODES = frozenset({FailureCode.REJECT, FailureCode.TIMEOUT})


def trim_space(text: str) -> str:
    """Strip leading and trailing whitespace the way Go's ``strings.TrimSpace`` does."""
    return text.strip(_GO_SPACE)


def decode_lossless(raw: bytes) -> str:
    """Decode raw process bytes as UTF-8 without losing any byte (invalid bytes escape)."""
    return raw.decode("utf-8", errors="surrogateescape")


def _reject_constant(name: str) -> object:
    raise ValueError(f"non-standard JSON constant {name}")


def is_valid_json(text: str) -> bool:
    """Report whether ``text`` is exactly one standard JSON value (Go ``json.Valid``).

    NaN/Infinity, trailing documents, control characters in strings and text that is
    not encodable as UTF-8 are rejected; duplicate object keys are accepted, as in Go.
    """
    if not text:
        return False
    try:
        text.encode("utf-8")
        json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return False
    return True


def _check_checkpoint(response: Response) -> list[Violation]:
    checkpoint = response.checkpoint
    if checkpoint is None or not checkpoint.valid:
        return []
    out: list[Violation] = []
    if checkpoint.state is None:
        out.append(Violation("RSP-01", "checkpoint.valid=True with no state"))
    elif checkpoint.state.resume_id == "":
        out.append(Violation("RSP-01", "checkpoint.valid=True with an empty state.resume_id"))
    unsafe = [
        label
        for label, present in (
            (f"exit_code={response.exit_code}", response.exit_code != 0),
            (f"signal={response.signal!r}", response.signal != ""),
            ("timed_out=True", response.timed_out),
            ("failure set", response.failure is not None),
        )
        if present
    ]
    if unsafe:
        out.append(
            Violation(
                "RSP-01",
                f"checkpoint.valid=True on an unsafe outcome ({', '.join(unsafe)})",
            )
        )
    return out


def _check_failure(response: Response) -> list[Violation]:
    failure = response.failure
    if failure is None:
        return []
    human_code = failure.code in _HUMAN_DECISION_CODES
    if human_code and failure.human_decision is None:
        return [
            Violation(
                "RSP-02", f"failure.code={str(failure.code)!r} without failure.human_decision"
            )
        ]
    if not human_code and failure.human_decision is not None:
        return [
            Violation(
                "RSP-02", f"failure.code={str(failure.code)!r} with failure.human_decision set"
            )
        ]
    return []


def _protocol_lines(text: str) -> list[str]:
    """The non-blank lines of ``text``, CR/LF endings and outer spaces stripped."""
    return [line.strip() for line in text.splitlines() if line.strip()]


def _is_object_shaped(line: str) -> bool:
    return line.startswith("{") and line.endswith("}")


def _check_output_dump(response: Response) -> list[Violation]:
    """RSP-03: the output is protocol, not an answer.

    Protocol-shaped means the output is made only of stdout's own JSON-object lines
    (at least one of them valid JSON):
    two or more of them (the whole stdout, or part of it, joined with or without the
    trailing newline, LF or CRLF), or the terminal JSON line alone. An answer that
    merely is JSON (a structured answer, a JSON code block in prose, a one-line JSON
    reply that is no line of stdout as printed) is not.
    """
    raw = response.raw_streams
    if raw is None or trim_space(response.output) == "":
        return []
    output = _protocol_lines(response.output)
    if not all(_is_object_shaped(line) for line in output):
        return []
    stdout = set(_protocol_lines(decode_lossless(raw.stdout)))
    if not all(line in stdout for line in output) or not any(map(is_valid_json, output)):
        return []
    if len(output) >= 2:
        return [
            Violation(
                "RSP-03",
                f"output is {len(output)} JSON lines of stdout ({len(response.output)} chars of "
                "line-delimited JSON), not the final answer",
            )
        ]
    terminal = raw.terminal
    if terminal is not None and output == [terminal.raw_json.strip()]:
        return [
            Violation(
                "RSP-03",
                f"output is the terminal JSON line of stdout ({len(output[0])} chars, event "
                f"{terminal.event!r}), not the final answer",
            )
        ]
    return []


def _check_terminal(response: Response) -> list[Violation]:
    raw = response.raw_streams
    if raw is None or raw.terminal is None:
        return []
    terminal = raw.terminal
    out: list[Violation] = []
    if trim_space(terminal.event) == "":
        out.append(Violation("RSP-05", "raw_streams.terminal.event is blank"))
    if terminal.raw_json == "":
        out.append(Violation("RSP-05", "raw_streams.terminal.raw_json is empty"))
    elif not is_valid_json(terminal.raw_json):
        out.append(
            Violation(
                "RSP-05",
                f"raw_streams.terminal.raw_json ({len(terminal.raw_json)} chars) is not one "
                "valid JSON value",
            )
        )
    return out


def verify_response(response: Response | None) -> list[Violation]:
    """TRN-01..04 over the transcript, then RSP-01 (checkpoint shape and safe outcome),
    RSP-02, RSP-03 and RSP-05. ``None`` (no response at all) has nothing to judge."""
    if response is None:
        return []
    out = verify_transcript(response.transcript or ())
    out.extend(_check_checkpoint(response))
    out.extend(_check_failure(response))
    out.extend(_check_output_dump(response))
    out.extend(_check_terminal(response))
    return out


def verify_outcome(response: Response | None, error: BaseException | None) -> list[Violation]:
    """``verify_response`` plus RSP-01 when ``run`` raised yet a valid checkpoint came back
    (for example through ``RunError.response``)."""
    out = verify_response(response)
    if (
        error is not None
        and response is not None
        and response.checkpoint is not None
        and response.checkpoint.valid
    ):
        out.append(
            Violation(
                "RSP-01",
                f"checkpoint.valid=True although run raised {type(error).__name__}",
            )
        )
    return out


T = TypeVar("T")


class _NotPlain(Exception):
    """A sync-declared codec call returned an awaitable (closed, never awaited)."""


def _plain(value: T, call: str) -> T:
    """``value``, unless a sync-declared call returned an awaitable: close it and raise."""
    if inspect.isawaitable(value):
        close = getattr(value, "close", None)
        if callable(close):
            close()
        raise _NotPlain(call)
    return value


def _codec_of(driver: object) -> tuple[SessionCodec | None, Violation | None]:
    """Fetch the driver's codec, or the RSP-04 violation explaining why there is none."""
    if not implements(driver, SessionCodecProvider):
        return None, Violation("RSP-04", "valid checkpoint from a driver without session_codec()")
    provider = cast(SessionCodecProvider, driver)
    try:
        codec = _plain(provider.session_codec(), "session_codec()")
    except _NotPlain:
        return None, Violation("RSP-04", "session_codec() returned an awaitable, not a codec")
    except Exception as exc:  # noqa: BLE001 - any raise is the RSP-04 finding
        return None, Violation("RSP-04", f"session_codec() raised {type(exc).__name__}")
    if codec is None:
        return None, Violation("RSP-04", "valid checkpoint but session_codec() returned None")
    if not implements(codec, SessionCodec):
        return None, Violation(
            "RSP-04",
            f"session_codec() returned {type(codec).__name__}, which lacks the codec methods",
        )
    return codec, None


def _changed_fields(first: SessionParams, second: SessionParams) -> str:
    names = [
        name
        for name in ("resume_id", "display_id", "values")
        if getattr(first, name) != getattr(second, name)
    ]
    return ", ".join(names) or "no field (values compare unequal)"


def _round_trip(codec: SessionCodec, state: SessionState, out: list[Violation]) -> None:
    params = _plain(codec.to_params(state), "to_params")
    if params.resume_id != state.resume_id:
        out.append(
            Violation(
                "RSP-04",
                f"to_params(checkpoint.state) changed resume_id from {state.resume_id!r} to "
                f"{params.resume_id!r}",
            )
        )
    guard = _plain(codec.guard_fingerprint(params), "guard_fingerprint")
    if not isinstance(guard, str) or guard == "":
        out.append(Violation("RSP-04", "guard_fingerprint of the checkpoint params is empty"))
    restored = _plain(codec.from_params(params), "from_params")
    if restored is None:
        out.append(Violation("RSP-04", "from_params of the checkpoint params returned None"))
        return
    again = _plain(codec.to_params(restored), "to_params")
    if again != params:
        out.append(
            Violation(
                "RSP-04",
                f"checkpoint codec round trip is lossy: {_changed_fields(params, again)} changed",
            )
        )


def verify_checkpoint_codec(driver: object, response: Response | None) -> list[Violation]:
    """RSP-04: a valid checkpoint with state survives the driver's own codec.

    ``to_params`` keeps the resume id, the guard fingerprint is non-empty, ``from_params``
    restores a state and a second ``to_params`` gives equal params. Any exception raised
    by the codec becomes an RSP-04 violation naming its type.
    """
    if response is None or response.checkpoint is None:
        return []
    state = response.checkpoint.state
    if not response.checkpoint.valid or state is None:
        return []
    codec, problem = _codec_of(driver)
    if codec is None:
        return [problem] if problem is not None else []
    out: list[Violation] = []
    try:
        _round_trip(codec, state, out)
    except _NotPlain as exc:
        out.append(Violation("RSP-04", f"codec {exc} returned an awaitable; codec calls are plain"))
    except Exception as exc:  # noqa: BLE001 - any raise is the RSP-04 finding
        out.append(
            Violation(
                "RSP-04",
                f"session codec raised {type(exc).__name__} while checking a valid checkpoint",
            )
        )
    return out
