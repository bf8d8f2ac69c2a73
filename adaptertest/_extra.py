"""What the suite needs beyond the base install, and the error that says so.

The base install (pydantic, anyio) serves ``driver`` and ``referencedriver``, and
``import adaptertest`` works there too, as do the commands that need only the standard
library (``replay``, ``record``, ``new``). Running the suite needs the ``test`` extra:
the front ends ask :func:`require` first, so a missing package is named in one clear
error instead of surfacing as a traceback from deep inside a probe.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable

__all__ = ["INSTALL", "TEST_EXTRA", "missing", "require"]

TEST_EXTRA = ("pytest", "hypothesis", "jsonschema", "rich", "uvicorn", "detect_secrets")
"""The top-level modules of the ``test`` extra's distributions."""

INSTALL = "python -m pip install 'agent-driver-kit[test]'"


def missing(modules: Iterable[str]) -> list[str]:
    """Those of ``modules`` that cannot be imported here (nothing is imported to find out)."""
    return [name for name in modules if importlib.util.find_spec(name) is None]


def require(what: str, modules: Iterable[str]) -> None:
    """Raise :class:`ModuleNotFoundError` naming ``what`` and the extra unless all import."""
    absent = missing(modules)
    if absent:
        raise ModuleNotFoundError(
            f"{what} needs the kit's test extra; missing: {', '.join(absent)}. "
            f"Install it with: {INSTALL} (the base install serves driver and referencedriver)",
            name=absent[0],
        )
