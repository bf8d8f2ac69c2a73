"""CFG family: ``validate_config`` on no config, the caller's config, and a foreign one.

Go separates a returned error (allowed) from a panic (a breach). Here the allowed
failure is :class:`driver.errors.InvalidDriverConfigError`; any other exception plays
the panic's part.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from adaptertest._calls import Outcome, describe_error, describe_hang
from adaptertest._probe import ProbeContext
from driver.errors import InvalidDriverConfigError

__all__ = ["probe_config"]


class _ForeignConfig:
    """A config type private to the suite, so no driver can know it (CFG-03)."""

    __slots__ = ("marker",)

    def __init__(self) -> None:
        self.marker = "adaptertest-foreign-config"

    def __repr__(self) -> str:
        return "adaptertest foreign config"


_FOREIGN_NAME = f"{__name__}.{_ForeignConfig.__qualname__}"


def _hang(ctx: ProbeContext, label: str, outcome: Outcome) -> str:
    return describe_hang(label, outcome, ctx.options.probe_timeout)


def _returned(value: object) -> str:
    """A note on a non-None return: ``validate_config`` signals rejection by raising only."""
    if value is None:
        return ""
    return f" (it returned {type(value).__qualname__}; rejection must be raised, not returned)"


def _validate(ctx: ProbeContext, method: Callable[..., Any], config: object | None) -> Outcome:
    # awaitable=False: a coroutine result means the check never ran (it is reported).
    return ctx.attempt(method, config, awaitable=False)


def _coroutine_result(value: object) -> bool:
    return inspect.isawaitable(value)


def _check_none(ctx: ProbeContext, method: Callable[..., Any]) -> None:
    """CFG-01: return, or raise the config error; anything else is a breach."""
    label = "validate_config(None)"
    outcome = _validate(ctx, method, None)
    if outcome.timed_out:
        ctx.fail("CFG-01", _hang(ctx, label, outcome))
    elif isinstance(outcome.error, InvalidDriverConfigError):
        ctx.note(f"{describe_error(label, outcome.error)} (allowed by CFG-01)")
    elif outcome.error is not None:
        ctx.fail("CFG-01", f"{describe_error(label, outcome.error)}, not InvalidDriverConfigError")
    elif _coroutine_result(outcome.value):
        ctx.fail("CFG-01", f"{label} returned a coroutine; validate_config must be a plain method")
    ctx.judge("CFG-01")


def _check_supplied(ctx: ProbeContext, method: Callable[..., Any]) -> None:
    """CFG-02: the caller's own config passes validation."""
    config = ctx.options.config
    if config is None:
        ctx.skip(["CFG-02"], "no config given: pass Options(config=...)")
        return
    label = "validate_config(Options.config)"
    outcome = _validate(ctx, method, config)
    if outcome.timed_out:
        ctx.fail("CFG-02", _hang(ctx, label, outcome))
    elif outcome.error is not None:
        ctx.fail("CFG-02", f"the config was rejected: {describe_error(label, outcome.error)}")
    elif _coroutine_result(outcome.value):
        ctx.fail("CFG-02", f"{label} returned a coroutine; validate_config must be a plain method")
    else:
        if outcome.value is not None:
            ctx.note(f"{label} returned {type(outcome.value).__qualname__}, not None")
        ctx.judge("CFG-02")


def _check_foreign(ctx: ProbeContext, method: Callable[..., Any]) -> None:
    """CFG-03 (opt-in): an instance of a type private to the suite is rejected."""
    if not ctx.options.expect_reject_foreign_config:
        ctx.skip(["CFG-03"], "opt-in: pass Options(expect_reject_foreign_config=True)")
        return
    label = f"validate_config({_FOREIGN_NAME}())"
    outcome = _validate(ctx, method, _ForeignConfig())
    if outcome.timed_out:
        ctx.fail("CFG-03", _hang(ctx, label, outcome))
    elif outcome.error is None:
        if _coroutine_result(outcome.value):
            ctx.fail("CFG-03", f"{label} returned a coroutine instead of raising")
        else:
            ctx.fail("CFG-03", f"{label} accepted the foreign config{_returned(outcome.value)}")
    elif not isinstance(outcome.error, InvalidDriverConfigError):
        ctx.fail("CFG-03", f"{describe_error(label, outcome.error)}, not InvalidDriverConfigError")
    ctx.judge("CFG-03")


def probe_config(ctx: ProbeContext) -> None:
    """CFG-01..03: three ``validate_config`` calls, each bounded and judged on its own."""
    method = ctx.method("validate_config")
    if method is None:
        ctx.fatal("CFG-01", f"{type(ctx.driver).__qualname__} has no callable validate_config")
    if inspect.iscoroutinefunction(method):
        # Core calls it synchronously: the coroutine would never run, so nothing is checked.
        ctx.skip(("CFG-02", "CFG-03"), "not judged: validate_config never runs (see CFG-01)")
        ctx.fatal("CFG-01", "validate_config is a coroutine function; it must be a plain method")
    _check_none(ctx, method)
    _check_supplied(ctx, method)
    _check_foreign(ctx, method)
