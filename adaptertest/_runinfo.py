"""The ``run`` block of a report: when, on which backend, which driver version, which
options and labels. The matrix sets runs side by side by these facts."""

from __future__ import annotations

import functools
import importlib.metadata
import sys
from dataclasses import fields
from datetime import UTC, datetime
from typing import Any

from adaptertest.options import ModelBinding, Options
from adaptertest.report import RunInfo

_NEVER_SHOWN = frozenset({"config", "secrets", "session_state", "labels"})
"""Options whose values may hold secrets or are reported elsewhere."""
_SHOWN_CHARS = 80


def now_utc() -> str:
    """The current time as the report writes it: ISO 8601 in UTC, to the second."""
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def options_summary(options: Options) -> dict[str, str]:
    """The options that differ from their defaults, each as a short text."""
    default = Options()
    out: dict[str, str] = {}
    for item in fields(Options):
        if item.name in _NEVER_SHOWN:
            continue
        value = getattr(options, item.name)
        if value == getattr(default, item.name):
            continue
        out[item.name] = _text(value)
    return out


def _text(value: Any) -> str:
    if isinstance(value, bool | int | float | str):
        text = str(value).lower() if isinstance(value, bool) else str(value)
    elif isinstance(value, tuple):
        text = ", ".join(map(str, value))
    elif isinstance(value, ModelBinding):
        # What a reader of a matrix needs: the model API, and what the agent cannot do.
        text = value.protocol
        if value.cannot:
            text += f"; cannot: {', '.join(sorted(value.cannot))}"
    elif hasattr(value, "keys"):
        text = ", ".join(sorted(map(str, value.keys())))
    else:
        text = "on"
    return text if len(text) <= _SHOWN_CHARS else f"{text[: _SHOWN_CHARS - 3]}..."


@functools.cache
def _distributions() -> dict[str, list[str]]:
    return dict(importlib.metadata.packages_distributions())


_KIT_PACKAGES = frozenset({"driver", "adaptertest", "referencedriver"})


def driver_version(driver: object) -> str | None:
    """The installed version of the distribution that ships ``driver``'s module, if any.

    Editable installs often leave no file map, so the module's own name (with ``-`` for
    ``_``) and its ``__version__`` are tried too."""
    module = type(driver).__module__.partition(".")[0]
    names = list(_distributions().get(module, ()))
    names += ["agent-driver-kit"] if module in _KIT_PACKAGES else [module, module.replace("_", "-")]
    for name in names:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    version = getattr(sys.modules.get(module), "__version__", None)
    return version if isinstance(version, str) else None


def run_info(options: Options, driver: object, started_at: str) -> RunInfo:
    """The ``run`` block for a suite run of ``driver`` under ``options``."""
    return RunInfo(
        started_at=started_at,
        backend=options.backend,
        driver_version=driver_version(driver) if driver is not None else None,
        options=options_summary(options),
        labels=dict(options.labels),
    )
