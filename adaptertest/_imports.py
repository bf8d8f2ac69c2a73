"""One lock for the kit's lazy imports, shared by the package and the suite engine.

Under pytest the kit's modules are imported through the assertion-rewriting hook,
and CPython 3.11's ``ast`` is not safe to use from two threads at once (suites may
run in parallel threads), so every lazy import goes through :func:`import_attr`.
"""

from __future__ import annotations

import importlib
import threading

TYPE_CHECKING = False  # not typing's: the replay stand-in starts without importing typing
if TYPE_CHECKING:
    from typing import Any

__all__ = ["import_attr"]

_LOCK = threading.Lock()


def import_attr(module: str, name: str) -> Any:
    """Import ``module`` (serialized with every other lazy import) and return ``name``."""
    with _LOCK:
        return getattr(importlib.import_module(module), name)
