"""Entry point of the kit's pytest plugin (``pytest11`` name ``adaptertest``).

pytest imports every installed ``pytest11`` entry point at start-up, in every project
of the environment. A production install of the kit has no ``test`` extra, and
``adaptertest`` refuses to import without it, so this module lives outside the
package: it loads the real plugin, :mod:`adaptertest.pytest_plugin`, when the suite
can be imported, and is an empty plugin otherwise. ``-p no:adaptertest`` still
turns the whole plugin off.
"""

from __future__ import annotations

try:
    import adaptertest  # noqa: F401 - only to learn whether the suite is installed
except ImportError as exc:
    if exc.name != "adaptertest":  # the suite is installed but broken: say so
        raise
else:
    pytest_plugins = ["adaptertest.pytest_plugin"]
