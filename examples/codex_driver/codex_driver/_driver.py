"""The Codex driver: runs ``codex exec --json`` once per run and parses its JSONL events."""

from __future__ import annotations

import anyio.lowlevel

from cli_plumbing import ResumeCodec, cli_config_schema, program_report, run_turn
from codex_driver._config import (
    CODEX_DRIVER_TYPE,
    DEFAULT_TIMEOUT,
    FINGERPRINT_DOMAIN,
    CodexConfig,
)
from codex_driver._parser import CodexStreamParser
from driver import (
    ConfigSchema,
    Descriptor,
    EnvironmentReport,
    EventSink,
    InvalidDriverConfigError,
    ModelInfo,
    Request,
    Response,
    SessionCapability,
    StreamCapability,
    WorkspaceCapability,
    canonical_session_config_fingerprint,
)

__all__ = ["CodexDriver", "build_argv"]


def build_argv(config: CodexConfig, prompt: str, *, model: str, resume_id: str) -> list[str]:
    """The command line of one run.

    ``exec`` flags go before the ``resume`` subcommand; ``--`` keeps a prompt
    starting with ``-`` (or spelling a subcommand) a prompt.
    """
    argv = [*config.command, "exec", "--json"]
    if model:
        argv += ["--model", model]
    argv += config.extra_args
    if resume_id:
        argv += ["resume", resume_id]
    return [*argv, "--", prompt]


class CodexDriver:
    """Drives the Codex CLI in ``exec`` mode, one process per run.

    Holds only its frozen config, so one instance serves concurrent runs.
    Declares resume (the ``thread.started`` thread id), workspace leases and
    item-level streaming with reasoning summaries; no skills, MCP, HITL or
    structured output.
    """

    def __init__(self, config: CodexConfig | None = None) -> None:
        self._config = config if config is not None else CodexConfig()

    @property
    def config(self) -> CodexConfig:
        """The construction config (immutable)."""
        return self._config

    # -- static declaration and config -------------------------------------------------

    def descriptor(self) -> Descriptor:
        """Declare exactly what this driver delivers; built fresh on every call (DRV-02/03)."""
        model = self._config.model
        return Descriptor(
            type=CODEX_DRIVER_TYPE,
            display_name="Codex CLI (exec --json example)",
            models=(ModelInfo(id=model, label=model),) if model else (),
            config_schema=_schema(),
            sessions=SessionCapability(supports_resume=True),
            workspace=WorkspaceCapability(supported=True),
        )

    def validate_config(self, config: object | None) -> None:
        """Accept None (the captured config is used) or a ``CodexConfig`` (CFG-01..03)."""
        if config is None or isinstance(config, CodexConfig):
            return
        raise InvalidDriverConfigError(
            CODEX_DRIVER_TYPE, TypeError(f"unsupported config type {type(config).__qualname__}")
        )

    def _config_for(self, config: object | None) -> CodexConfig:
        """The given config when it is one of ours, else the construction config."""
        self.validate_config(config)
        return config if isinstance(config, CodexConfig) else self._config

    async def check_environment(self, config: object | None) -> EnvironmentReport:
        """Report whether the configured program can be found (CAP-03)."""
        program = self._config_for(config).command[0]
        return program_report(
            CODEX_DRIVER_TYPE, program, "install the Codex CLI or set CodexConfig.command"
        )

    async def config_schema(self, config: object | None) -> ConfigSchema | None:
        """Return the descriptor's static schema (CAP-08)."""
        self.validate_config(config)
        return _schema()

    # -- streaming and sessions ----------------------------------------------------------

    def stream_capability(self) -> StreamCapability:
        """Whole items, not tokens; reasoning summaries yes; tool args complete; no HITL."""
        return StreamCapability(native=True, reasoning=True)

    def session_codec(self) -> ResumeCodec:
        """Return the codec that makes checkpoints resumable (CAP-01)."""
        return ResumeCodec(CODEX_DRIVER_TYPE)

    def session_config_fingerprint(self) -> str:
        """Fingerprint the whole construction config under the codec's domain (CAP-01)."""
        return canonical_session_config_fingerprint(FINGERPRINT_DOMAIN, self._config)

    # -- the run -------------------------------------------------------------------------

    async def run(self, request: Request, sink: EventSink) -> Response:
        """Run ``codex exec`` once; ``request.config``, when given, replaces the captured one.

        See :func:`cli_plumbing.run_turn` for the outcome rules (failed runs,
        start failures, cancellation, the checkpoint).
        """
        await anyio.lowlevel.checkpoint()
        config = self._config_for(request.config)
        model = request.model_override or config.model
        return await run_turn(
            request,
            sink,
            driver_type=CODEX_DRIVER_TYPE,
            argv=lambda resume_id: build_argv(
                config, request.prompt, model=model, resume_id=resume_id
            ),
            cwd=request.workspace.cwd or config.cwd,
            model=model,
            timeout=config.timeout,
            parser=lambda out: CodexStreamParser(out, model=model),
        )


def _schema() -> ConfigSchema:
    return cli_config_schema(
        program="codex", extra_args_hint="--sandbox workspace-write", timeout=DEFAULT_TIMEOUT
    )
