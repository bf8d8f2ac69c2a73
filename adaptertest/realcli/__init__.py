"""The real agent CLIs, pinned and installed for the real-CLI tier.

``examples/cli-versions.json`` pins each CLI (npm package, exact version, binary
name); ``adaptertest install-clis`` installs them with npm under
``~/.cache/agent-driver-kit/clis/<name>-<version>/`` (``$ADAPTERTEST_CLI_ROOT``
elsewhere). A test calls :func:`require` for the binary, which skips with a reason
naming ``adaptertest install-clis`` when node or the CLI is missing.

Overrides: ``ADAPTERTEST_CLI_BIN_<NAME>`` (a binary to use instead) and
``ADAPTERTEST_CLI_VERSION_<NAME>`` (another exact version, installed and found
beside the locked one). Standard library only (``require`` imports pytest).
"""

from __future__ import annotations

from adaptertest.realcli._binding import (
    TIER_API_KEY,
    endpoint_fields,
    pinned_command,
    tier_endpoint,
)
from adaptertest.realcli._install import (
    BIN_ENV_PREFIX,
    FOUND_ENV,
    INSTALL_HINT,
    MARKER,
    ROOT_ENV,
    VERSION_ENV_PREFIX,
    InstallError,
    binary_path,
    cli_labels,
    cli_root,
    cli_version,
    install,
    installed_version,
    is_installed,
    locate,
    npm_command,
    prefix_for,
    require,
    resolve_spec,
    skip_reason,
)
from adaptertest.realcli._lock import DEFAULT_LOCK, CLISpec, LockError, load_lock, parse_lock

__all__ = [
    "BIN_ENV_PREFIX",
    "DEFAULT_LOCK",
    "FOUND_ENV",
    "INSTALL_HINT",
    "MARKER",
    "ROOT_ENV",
    "TIER_API_KEY",
    "VERSION_ENV_PREFIX",
    "CLISpec",
    "InstallError",
    "LockError",
    "binary_path",
    "cli_labels",
    "cli_root",
    "cli_version",
    "endpoint_fields",
    "install",
    "installed_version",
    "is_installed",
    "load_lock",
    "locate",
    "npm_command",
    "parse_lock",
    "pinned_command",
    "prefix_for",
    "require",
    "resolve_spec",
    "skip_reason",
    "tier_endpoint",
]
