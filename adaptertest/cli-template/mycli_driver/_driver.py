"""The Mycli driver: runs ``mycli --json`` once per run and parses what it prints.

Config validation, the probes, the stream capability, the session codec, the
config fingerprint and ``run`` come from :class:`driver.clikit.CLIDriver`; this
module declares the driver and supplies the command line and the parser.
"""

from __future__ import annotations

from driver import Descriptor, ModelInfo, SessionCapability, WorkspaceCapability
from driver.clikit import DEFAULT_TIMEOUT, CLIDriver, RunOutput, cli_config_schema
from mycli_driver._config import (
    DISPLAY_NAME,
    FINGERPRINT_DOMAIN,
    MYCLI_DRIVER_TYPE,
    MycliConfig,
)
from mycli_driver._parser import MycliStreamParser

__all__ = ["MycliDriver", "build_argv", "new_mycli_driver"]


def build_argv(config: MycliConfig, prompt: str, *, model: str, resume_id: str) -> list[str]:
    """The command line of one run; ``--`` keeps a prompt that starts with ``-`` a prompt."""
    argv = [*config.command, "--json"]
    if model:
        argv += ["--model", model]
    if resume_id:
        argv += ["--resume", resume_id]
    return [*argv, *config.extra_args, "--", prompt]


class MycliDriver(CLIDriver[MycliConfig]):
    """Drives ``mycli``, one process per run.

    Declares resume (the ``result`` line's ``session_id``), workspace leases and
    block-level streaming with reasoning; no skills, MCP, HITL or structured output.
    Declare more only once it works: the suite holds the driver to its descriptor.
    """

    driver_type = MYCLI_DRIVER_TYPE
    fingerprint_domain = FINGERPRINT_DOMAIN
    install_hint = "install mycli or set MycliConfig.command"

    def __init__(self, config: MycliConfig | None = None) -> None:
        super().__init__(MycliConfig, config)

    def descriptor(self) -> Descriptor:
        """Declare exactly what this driver delivers; built fresh on every call (DRV-02/03)."""
        model = self.config.model
        return Descriptor(
            type=MYCLI_DRIVER_TYPE,
            display_name=DISPLAY_NAME,
            models=(ModelInfo(id=model, label=model),) if model else (),
            config_schema=cli_config_schema(
                program=MycliConfig().command[0],
                extra_args_hint="--max-turns 3",
                timeout=DEFAULT_TIMEOUT,
            ),
            sessions=SessionCapability(supports_resume=True),
            workspace=WorkspaceCapability(supported=True),
        )

    def command_line(
        self, config: MycliConfig, prompt: str, *, model: str, resume_id: str
    ) -> list[str]:
        """``mycli --json``; see :func:`build_argv`."""
        return build_argv(config, prompt, model=model, resume_id=resume_id)

    def stream_parser(self, out: RunOutput, *, model: str) -> MycliStreamParser:
        """A fresh parser; the model is the asked one until the ``session`` line names it."""
        return MycliStreamParser(out, model=model)


def new_mycli_driver(config: MycliConfig | None = None) -> MycliDriver:
    """Build the driver; no config means ``MycliConfig()`` (``mycli`` on PATH)."""
    return MycliDriver(config)
