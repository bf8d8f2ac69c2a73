"""Construction config of the Mycli driver and the constants that name it."""

from __future__ import annotations

from pydantic import Field

from driver.clikit import CLIConfig

__all__ = [
    "DEFAULT_COMMAND",
    "DISPLAY_NAME",
    "FINGERPRINT_DOMAIN",
    "MYCLI_DRIVER_TYPE",
    "MycliConfig",
]

MYCLI_DRIVER_TYPE = "mycli"
"""``Descriptor.type``, the codec name and the ``driver_type`` of every report.

It is stored with every session, so choose it once."""

DISPLAY_NAME = "Mycli"
"""``Descriptor.display_name``: what a host shows for this driver."""

DEFAULT_COMMAND = ("mycli",)
"""The program (and leading arguments) run when the config names none."""

FINGERPRINT_DOMAIN = "mycli/v1;codec/mycli/v1"
"""Names the config encoding and the codec contract; bump it when either changes meaning,
so sessions stored under the old meaning stop matching."""


class MycliConfig(CLIConfig):
    """What the driver is built with; frozen so a running driver cannot see it change.

    The fields (``command``, ``cwd``, ``model``, ``extra_args``, ``timeout``, ``env``,
    ``home``) are ``driver.clikit.CLIConfig``'s; add the CLI's own settings here. The
    session-config fingerprint covers every field but the values of secret-named
    ``env`` variables. Tests swap ``command`` for the kit's replay stand-in.
    """

    command: tuple[str, ...] = Field(default=DEFAULT_COMMAND, min_length=1)
    """Program and leading arguments, e.g. ``("mycli",)`` or a wrapper script."""
