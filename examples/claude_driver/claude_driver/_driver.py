"""The Claude Code driver: runs ``claude -p`` once per run and parses its stream-json output."""

from __future__ import annotations

import anyio.lowlevel

from claude_driver._config import (
    CLAUDE_DRIVER_TYPE,
    DEFAULT_TIMEOUT,
    FINGERPRINT_DOMAIN,
    ClaudeConfig,
)
from claude_driver._parser import ClaudeStreamParser
from cli_plumbing import ResumeCodec, cli_config_schema, program_report, run_turn
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

__all__ = ["ClaudeDriver", "build_argv"]

# Aliases the CLI's --model accepts besides full model names.
_MODEL_ALIASES = ("sonnet", "opus")


def build_argv(config: ClaudeConfig, prompt: str, *, model: str, resume_id: str) -> list[str]:
    """The command line of one run; ``--`` keeps a prompt starting with ``-`` a prompt."""
    argv = [*config.command, "-p", "--output-format", "stream-json", "--verbose"]
    if model:
        argv += ["--model", model]
    if resume_id:
        argv += ["--resume", resume_id]
    return [*argv, *config.extra_args, "--", prompt]


class ClaudeDriver:
    """Drives the Claude Code CLI in print mode, one process per run.

    Holds only its frozen config, so one instance serves concurrent runs.
    Declares resume (the ``result`` line's ``session_id``), workspace leases and
    block-level streaming with reasoning; no skills, MCP, HITL or structured output.
    """

    def __init__(self, config: ClaudeConfig | None = None) -> None:
        self._config = config if config is not None else ClaudeConfig()

    @property
    def config(self) -> ClaudeConfig:
        """The construction config (immutable)."""
        return self._config

    # -- static declaration and config -------------------------------------------------

    def descriptor(self) -> Descriptor:
        """Declare exactly what this driver delivers; built fresh on every call (DRV-02/03)."""
        models = list(_MODEL_ALIASES)
        if self._config.model and self._config.model not in models:
            models.insert(0, self._config.model)
        return Descriptor(
            type=CLAUDE_DRIVER_TYPE,
            display_name="Claude Code (stream-json example)",
            models=tuple(ModelInfo(id=m, label=m) for m in models),
            config_schema=_schema(),
            sessions=SessionCapability(supports_resume=True),
            workspace=WorkspaceCapability(supported=True),
        )

    def validate_config(self, config: object | None) -> None:
        """Accept None (the captured config is used) or a ``ClaudeConfig`` (CFG-01..03)."""
        if config is None or isinstance(config, ClaudeConfig):
            return
        raise InvalidDriverConfigError(
            CLAUDE_DRIVER_TYPE, TypeError(f"unsupported config type {type(config).__qualname__}")
        )

    def _config_for(self, config: object | None) -> ClaudeConfig:
        """The given config when it is one of ours, else the construction config."""
        self.validate_config(config)
        return config if isinstance(config, ClaudeConfig) else self._config

    async def check_environment(self, config: object | None) -> EnvironmentReport:
        """Report whether the configured program can be found (CAP-03)."""
        program = self._config_for(config).command[0]
        return program_report(
            CLAUDE_DRIVER_TYPE, program, "install Claude Code or set ClaudeConfig.command"
        )

    async def config_schema(self, config: object | None) -> ConfigSchema | None:
        """Return the descriptor's static schema (CAP-08)."""
        self.validate_config(config)
        return _schema()

    # -- streaming and sessions ----------------------------------------------------------

    def stream_capability(self) -> StreamCapability:
        """Whole blocks, not tokens; reasoning yes; tool args arrive complete; no HITL."""
        return StreamCapability(native=True, reasoning=True)

    def session_codec(self) -> ResumeCodec:
        """Return the codec that makes checkpoints resumable (CAP-01)."""
        return ResumeCodec(CLAUDE_DRIVER_TYPE)

    def session_config_fingerprint(self) -> str:
        """Fingerprint the whole construction config under the codec's domain (CAP-01)."""
        return canonical_session_config_fingerprint(FINGERPRINT_DOMAIN, self._config)

    # -- the run -------------------------------------------------------------------------

    async def run(self, request: Request, sink: EventSink) -> Response:
        """Run ``claude -p`` once; ``request.config``, when given, replaces the captured one.

        See :func:`cli_plumbing.run_turn` for the outcome rules (failed runs,
        start failures, cancellation, the checkpoint).
        """
        await anyio.lowlevel.checkpoint()
        config = self._config_for(request.config)
        model = request.model_override or config.model
        return await run_turn(
            request,
            sink,
            driver_type=CLAUDE_DRIVER_TYPE,
            argv=lambda resume_id: build_argv(
                config, request.prompt, model=model, resume_id=resume_id
            ),
            cwd=request.workspace.cwd or config.cwd,
            model=model,
            timeout=config.timeout,
            parser=ClaudeStreamParser,
        )


def _schema() -> ConfigSchema:
    return cli_config_schema(
        program="claude", extra_args_hint="--permission-mode acceptEdits", timeout=DEFAULT_TIMEOUT
    )
