"""Exceptions of the driver SPI.

Go's typed errors that unwrap to a sentinel become one exception class per
category: ``isinstance(exc, InvalidPolicyError)`` plays the part of
``errors.Is(err, ErrInvalidPolicy)``. ``str()`` of an instance built without
arguments is the upstream sentinel text; the optional fields are appended in
upstream's ``key=value`` shape. Errors that wrap a cause keep it both as
``.cause`` and as ``__cause__``, and :func:`error_matches` walks that chain the
way ``errors.Is`` walks ``Unwrap``.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterator
from enum import StrEnum
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from driver.run import Response

__all__ = [
    "LEGACY_UNSUPPORTED_REASON",
    "DriverError",
    "HumanDecisionModeUnsupportedError",
    "InvalidDriverConfigError",
    "InvalidOutputSchemaError",
    "InvalidPolicyError",
    "PolicyCapabilityUnsupportedError",
    "RunError",
    "SessionConfigFingerprintError",
    "StructuredOutputUnsupportedError",
    "SystemPromptUnsupportedError",
    "SystemPromptUnsupportedReason",
    "error_matches",
    "find_error",
]

E = TypeVar("E", bound=BaseException)

# Sentinel texts of the upstream categories (the Go errors.New strings).
_INVALID_DRIVER_CONFIG = "agentadaptor: invalid driver config"
_INVALID_POLICY = "agentadaptor: invalid run policy"
_POLICY_CAPABILITY_UNSUPPORTED = "agentadaptor: policy capability unsupported by driver"
_HUMAN_DECISION_MODE_UNSUPPORTED = "agentadaptor: human decision mode unsupported by driver"
_STRUCTURED_OUTPUT_UNSUPPORTED = "agentadaptor: structured output unsupported by adapter"
_SYSTEM_PROMPT_UNSUPPORTED = "agentadaptor: system prompt append unsupported by driver"
_INVALID_OUTPUT_SCHEMA = "agentadaptor: invalid output schema"
_FINGERPRINT = "session config cannot be fingerprinted"


def _with_details(sentinel: str, *pairs: tuple[str, str]) -> str:
    """Append the non-empty ``key=value`` pairs: ``": "`` before the first, spaces between.

    Upstream puts the colon only before ``driver=``; when the driver is set the
    result is identical, and without it the text still reads cleanly.
    """
    details = [f"{key}={value}" for key, value in pairs if value]
    if not details:
        return sentinel
    return f"{sentinel}: {' '.join(details)}"


def _go_quote(value: str) -> str:
    """Quote like Go's ``%q`` for the common cases (double quotes, backslash escapes)."""
    return json.dumps(value, ensure_ascii=False)


class DriverError(Exception):
    """Base of every error the SPI defines.

    A driver method that may fail signals it with a ``DriverError`` subclass; the
    conformance suite treats any other exception at those points as a Go panic.
    """


class InvalidDriverConfigError(DriverError, ValueError):
    """``validate_config`` rejected the configured driver before launch.

    Core wraps a rejection in this error before every launch (rule C4) and keeps
    the driver's own exception as ``cause``. ``validate_config(None)`` may raise
    it; any other exception there is a CFG-01 violation.
    """

    def __init__(self, driver: str = "", cause: BaseException | None = None) -> None:
        self.driver = driver
        self.cause = cause
        message = _with_details(_INVALID_DRIVER_CONFIG, ("driver", driver))
        if cause is not None:
            message = f"{message}: {cause}"
        super().__init__(message)
        self.__cause__ = cause


class InvalidPolicyError(DriverError):
    """A ``RunPolicy`` value is out of its domain (including a negative ``max_retries``).

    ``value`` is text because the policy mixes several enums and an integer.
    Capability misses use :class:`PolicyCapabilityUnsupportedError` or
    :class:`HumanDecisionModeUnsupportedError` instead.
    """

    def __init__(self, driver: str = "", field: str = "", value: str = "") -> None:
        self.driver = driver
        self.field = field
        self.value = value
        quoted = _go_quote(value) if value else ""
        super().__init__(
            _with_details(_INVALID_POLICY, ("driver", driver), ("field", field), ("value", quoted))
        )


class PolicyCapabilityUnsupportedError(DriverError):
    """A valid, explicitly selected non-approval policy value the driver cannot honour.

    Raised before launch for isolation, web search or browser values that
    ``Descriptor.run_policy_caps`` does not cover.
    """

    def __init__(self, driver: str = "", dimension: str = "", value: str = "") -> None:
        self.driver = driver
        self.dimension = dimension
        self.value = value
        super().__init__(
            _with_details(
                _POLICY_CAPABILITY_UNSUPPORTED,
                ("driver", driver),
                ("dimension", dimension),
                ("value", value),
            )
        )


class HumanDecisionModeUnsupportedError(DriverError):
    """An explicitly selected human-decision mode the descriptor does not support.

    ``kind`` is the ``HumanDecisionKind`` value; ``mode`` is text because
    permission/plan review and questions use different mode enums.
    """

    def __init__(self, driver: str = "", kind: str = "", mode: str = "") -> None:
        self.driver = driver
        self.kind = kind
        self.mode = mode
        super().__init__(
            _with_details(
                _HUMAN_DECISION_MODE_UNSUPPORTED,
                ("driver", driver),
                ("kind", str(kind)),
                ("mode", str(mode)),
            )
        )


class StructuredOutputUnsupportedError(DriverError):
    """The requested structured output cannot be honoured by the driver or run mode.

    Raised before launch, so no provider process is started for a request that
    would come back without its structured result.
    """

    def __init__(self, driver: str = "", reason: str = "") -> None:
        self.driver = driver
        self.reason = reason
        super().__init__(
            _with_details(_STRUCTURED_OUTPUT_UNSUPPORTED, ("driver", driver), ("reason", reason))
        )


class SystemPromptUnsupportedReason(StrEnum):
    """Why a driver refused a request's ``append_system_prompt``: upstream's closed set.

    :func:`driver.check_append_system_prompt` applies the first three in upstream's
    order (invalid UTF-8, then NUL, then an undeclared append) and the inline limit.
    ``SystemPromptUnsupportedReason("unsupported")``, the value this port used before
    it followed upstream's names, still reads as :attr:`UNSUPPORTED_DRIVER`.
    """

    UNSUPPORTED_DRIVER = "unsupported_driver"
    """The driver has no append mechanism (a whitespace-only append counts as one)."""
    INVALID_UTF8 = "invalid_utf8"
    """The text is not valid UTF-8 (in Python: it holds a lone surrogate)."""
    NUL_BYTE = "nul_byte"
    """The text contains NUL."""
    INLINE_LIMIT = "inline_limit"
    """The driver passes the text on the command line and it is over 32,768 UTF-8 bytes."""
    COMMAND_LINE_LIMIT = "command_line_limit"
    """The whole command line would exceed the platform's limit."""
    UNSAFE_SHELL_ARGUMENT = "unsafe_shell_argument"
    """The text would pass through a shell shim and holds shell metacharacters."""
    CONFLICTING_EXTRA_ARGS = "conflicting_extra_args"
    """The config's extra arguments already set the CLI's own system prompt."""

    @classmethod
    def _missing_(cls, value: object) -> SystemPromptUnsupportedReason | None:
        # Reports stored before the rename spell the undeclared case "unsupported".
        return cls.UNSUPPORTED_DRIVER if value == LEGACY_UNSUPPORTED_REASON else None


LEGACY_UNSUPPORTED_REASON = "unsupported"
"""The port's old spelling of ``unsupported_driver``, still read (never written)."""


class SystemPromptUnsupportedError(DriverError):
    """A ``Request.append_system_prompt`` the driver cannot honour.

    Raised by ``run`` before any provider process starts and before anything reaches
    the sink. ``reason`` is a :class:`SystemPromptUnsupportedReason` value. ``argument``
    (a Python extension, empty by default) names the configured argument a
    ``conflicting_extra_args`` refusal is about: the flag or config key only, never its
    value. The message never holds the appended text.
    """

    def __init__(self, driver: str = "", reason: str = "", *, argument: str = "") -> None:
        self.driver = driver
        self.reason = reason
        self.argument = argument
        super().__init__(
            _with_details(
                _SYSTEM_PROMPT_UNSUPPORTED,
                ("driver", driver),
                ("reason", str(reason)),
                ("argument", argument),
            )
        )


class InvalidOutputSchemaError(DriverError):
    """The output schema is malformed JSON, of an unsupported format, or does not compile.

    Raised before launch. The underlying parser or validator error, if any, is
    kept as ``cause`` so callers can match both this category and the cause.
    """

    def __init__(self, reason: str = "", cause: BaseException | None = None) -> None:
        self.reason = reason
        self.cause = cause
        message = f"{_INVALID_OUTPUT_SCHEMA}: {reason}" if reason else _INVALID_OUTPUT_SCHEMA
        super().__init__(message)
        self.__cause__ = cause


class SessionConfigFingerprintError(DriverError):
    """A construction config holds a value with no stable cross-process encoding.

    Raised by :func:`driver.fingerprint.canonical_session_config_fingerprint`
    (and by fingerprinters built on it) instead of silently skipping the value,
    which could let a session resume under an incompatible config. ``path`` uses
    only field names and the markers ``[element]``, ``[key]`` and ``[value]``;
    ``type_name`` names the offending type; ``kind`` names the rejected shape
    (``"function"``, ``"cycle"`` ...). None of them, nor the message, ever holds
    a config value, so secrets cannot leak through the error.
    """

    def __init__(self, path: str = "", type_name: str = "", kind: str = "", why: str = "") -> None:
        self.path = path
        self.type_name = type_name
        self.kind = kind
        self.why = why
        message = _FINGERPRINT
        if path:
            message += f" at {path}"
        if type_name:
            message += f" (type {type_name})"
        if kind:
            message += f": unsupported {kind}"
        if why:
            message += f": {why}"
        super().__init__(message)


class RunError(DriverError):
    """``run`` failed but still has a response to hand back.

    Go's ``Run`` may return a ``Response`` and an error together (for example a
    valid checkpoint alongside a transport failure). Python raises this error
    with the partial response in ``response``; a plain failed run instead
    returns its ``Response`` with ``failure`` set.
    """

    def __init__(self, message: str = "", *, response: Response | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.response = response


def _chain(error: BaseException) -> Iterator[BaseException]:
    """``error`` and everything it wraps, outermost first, each object once: its
    ``__cause__``, its ``.cause`` and the members of exception groups."""
    seen: set[int] = set()
    pending: deque[BaseException] = deque([error])
    while pending:
        current = pending.popleft()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        if current.__cause__ is not None:
            pending.append(current.__cause__)
        cause = getattr(current, "cause", None)
        if isinstance(cause, BaseException):
            pending.append(cause)
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)


def error_matches(error: BaseException, target: type[BaseException] | BaseException) -> bool:
    """Report whether ``error`` or anything it wraps matches ``target``, like ``errors.Is``.

    ``target`` is an exception class (matched with ``isinstance``) or an
    instance (matched by identity). The walk follows ``__cause__``, ``.cause``
    and the members of exception groups; each object is visited once.
    """
    if isinstance(target, type):
        return find_error(error, target) is not None
    return any(current is target for current in _chain(error))


def find_error(error: BaseException, target: type[E]) -> E | None:
    """The first exception of type ``target`` in ``error``'s chain (``error`` itself,
    then what it wraps, as :func:`error_matches` walks it), like ``errors.As``; None
    when there is none. Read the fields from it, not from a group that carried it."""
    for current in _chain(error):
        if isinstance(current, target):
            return current
    return None
