"""The Mycli driver: runs ``mycli --json`` once per run and parses what it prints.

The descriptor (from the class attributes below), config validation, the probes,
the stream capability, the session codec, the config fingerprint and ``run`` come
from :class:`driver.clikit.CLIDriver`; this module supplies the command line and
the parser.
"""

from __future__ import annotations

from driver.clikit import CLIDriver, RunOutput
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

    The inherited descriptor declares resume (the ``result`` line's ``session_id``),
    workspace leases and the configured model; the inherited stream capability,
    whole text and reasoning blocks. No skills, MCP, HITL or structured output:
    override :meth:`descriptor` (and ``capability``) to declare more once it works,
    as the suite holds the driver to what it declares.

    No appended system prompt either: a request with ``append_system_prompt`` set is
    refused before launch with ``SystemPromptUnsupportedError(reason="unsupported_driver")``
    (SYS-01). If your CLI has a flag that adds to its own system prompt, declare
    ``system_prompt=SystemPromptCapability(append=True)``, return that flag from
    :meth:`system_prompt_args`, and list the CLI's own system-prompt options in
    ``system_prompt_flags`` so extra args that set one are refused; set
    ``system_prompt_inline = True`` when the text itself goes on the command line, so
    an append over 32,768 UTF-8 bytes is refused as ``inline_limit``.
    """

    driver_type = MYCLI_DRIVER_TYPE
    fingerprint_domain = FINGERPRINT_DOMAIN
    install_hint = "install mycli or set MycliConfig.command"
    display_name = DISPLAY_NAME
    extra_args_hint = "--max-turns 3"

    def __init__(self, config: MycliConfig | None = None) -> None:
        super().__init__(MycliConfig, config)

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
