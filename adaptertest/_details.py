"""Whether a pytest run asked to see provider text: the option and the variable.

Imports only the standard library, so the pytest plugin (which pytest loads in every run)
and ``adaptertest.test_driver`` can both use it.
"""

from __future__ import annotations

import os
from typing import Protocol


class _Config(Protocol):
    def getoption(self, name: str, default: object = ...) -> object: ...


SHOW_DETAILS_OPTION = "--adaptertest-show-details"
SHOW_DETAILS_ENV = "ADAPTERTEST_SHOW_DETAILS"
"""Set to ``1`` (or ``true``/``yes``/``on``), it works as :data:`SHOW_DETAILS_OPTION`."""


def show_details(config: _Config) -> bool:
    """Whether this run asked to see provider text (``--adaptertest-show-details`` or
    ``ADAPTERTEST_SHOW_DETAILS=1``): every ``test_driver`` class then runs with
    ``Options(show_live_details=True)``. Secrets stay masked either way."""
    if config.getoption("adaptertest_show_details", default=False):
        return True
    return os.environ.get(SHOW_DETAILS_ENV, "").strip().lower() in {"1", "true", "yes", "on"}
