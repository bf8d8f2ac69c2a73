"""The Claude Code driver: runs ``claude -p`` once per run and parses its stream-json output.

In the two-way mode (``ClaudeConfig.two_way``) the prompt goes on stdin and the CLI's
permission prompts are answered over its control messages (``_control.py``).

The probes, the session codec, the config fingerprint and ``run`` come from
:class:`driver.clikit.CLIDriver`; this module declares the driver and supplies
the command line and the parser.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from claude_driver._config import (
    CLAUDE_DRIVER_TYPE,
    DEFAULT_TIMEOUT,
    FINGERPRINT_DOMAIN,
    ClaudeConfig,
)
from claude_driver._control import ControlChannel
from claude_driver._parser import ClaudeStreamParser
from driver import (
    ConfigField,
    ConfigSchema,
    Descriptor,
    EventSink,
    HumanDecisionSupport,
    ModelInfo,
    QuestionSupport,
    Request,
    RunPolicyCapabilities,
    SessionCapability,
    StreamCapability,
    StructuredOutputCapability,
    StructuredOutputHITLCapability,
    SystemPromptCapability,
    WorkspaceCapability,
)
from driver.clikit import (
    CLIDriver,
    NativeSchema,
    RunOutput,
    StdinWriter,
    StreamParser,
    cli_config_schema,
    private_text_file,
)

__all__ = ["ClaudeDriver", "build_argv"]

# Aliases the CLI's --model accepts besides full model names.
_MODEL_ALIASES = ("sonnet", "opus")
_SNAPSHOT_FLAG = "--system-prompt-snapshot"


def _names(arg: str, flag: str) -> bool:
    """``arg`` is ``flag`` or ``flag=value``."""
    return arg == flag or arg.startswith(f"{flag}=")


def build_argv(
    config: ClaudeConfig, *, model: str, resume_id: str, json_schema: str = ""
) -> list[str]:
    """The command line of one run. It holds no prompt: ``claude -p`` without a prompt
    argument reads it from standard input, where the driver writes it (any size, a
    leading ``-`` included, and out of the process table).

    ``json_schema`` (the schema's exact text) asks for native structured output. In the
    two-way mode (``config.two_way``) stdin carries the prompt as a stream-json user
    message, and ``--permission-prompt-tool stdio`` sends the CLI's permission prompts
    to the driver as control requests. A
    resumed run passes ``--system-prompt-snapshot off`` (unless ``extra_args`` choose):
    Claude Code 2.1.3xx otherwise replays the session's first system prompt on resume,
    so a run's own appended system prompt (or its absence) would be ignored.
    """
    argv = [*config.command, "-p", "--output-format", "stream-json", "--verbose"]
    if config.two_way:
        argv += ["--input-format", "stream-json", "--permission-prompt-tool", "stdio"]
    if model:
        argv += ["--model", model]
    if resume_id:
        argv += ["--resume", resume_id]
        if not any(_names(arg, _SNAPSHOT_FLAG) for arg in config.extra_args):
            argv += [_SNAPSHOT_FLAG, "off"]
    if json_schema:
        argv += ["--json-schema", json_schema]
    return [*argv, *config.extra_args]


class ClaudeDriver(CLIDriver[ClaudeConfig]):
    """Drives the Claude Code CLI in print mode, one process per run.

    Declares resume (the ``result`` line's ``session_id``), workspace leases,
    block-level streaming with reasoning, native structured output
    (``--json-schema``; the value is ``result.structured_output``, validated
    again against the schema), and the appended system prompt
    (``--append-system-prompt-file`` naming a private temporary file, removed after
    the run; refused as ``conflicting_extra_args`` when ``extra_args`` already pass
    ``--append-system-prompt*`` or ``--system-prompt*``); no skills or MCP. HITL only
    in the two-way mode: every mode of permission, plan review and question decisions,
    retries included, and typed ``hitl.*`` payloads.
    """

    driver_type = CLAUDE_DRIVER_TYPE
    fingerprint_domain = FINGERPRINT_DOMAIN
    supported_cli_versions = ">=2.1.323"
    install_hint = "install Claude Code or set ClaudeConfig.command"
    prompt_on_stdin = True
    system_prompt_flags = (
        "--append-system-prompt",
        "--append-system-prompt-file",
        "--system-prompt",
        "--system-prompt-file",
    )

    def __init__(self, config: ClaudeConfig | None = None) -> None:
        super().__init__(ClaudeConfig, config)

    def descriptor(self) -> Descriptor:
        """Declare exactly what this driver delivers; built fresh on every call (DRV-02/03)."""
        models = list(_MODEL_ALIASES)
        if self.config.model and self.config.model not in models:
            models.insert(0, self.config.model)
        return Descriptor(
            type=CLAUDE_DRIVER_TYPE,
            display_name="Claude Code (stream-json example)",
            models=tuple(ModelInfo(id=m, label=m) for m in models),
            config_schema=_schema(),
            sessions=SessionCapability(supports_resume=True),
            workspace=WorkspaceCapability(supported=True),
            structured_output=StructuredOutputCapability(
                json_schema_native=True,
                works_with_run=True,
                works_with_streaming=True,
                # Checked against the real CLI: a permission asked mid-run, then the answer.
                native_hitl=_NATIVE_HITL if self.config.two_way else None,
                notes="--json-schema; the value is result.structured_output",
            ),
            system_prompt=SystemPromptCapability(append=True),
            run_policy_caps=_TWO_WAY_POLICY if self.config.two_way else RunPolicyCapabilities(),
        )

    def stream_capability(self) -> StreamCapability:
        """Whole blocks with reasoning; typed ``hitl.*`` payloads in the two-way mode."""
        return self.capability.model_copy(update={"hitl": self.config.two_way})

    def stdin_writer(
        self, config: ClaudeConfig, request: Request, sink: EventSink, parser: StreamParser
    ) -> StdinWriter | None:
        """In the two-way mode, a :class:`ControlChannel` writes the prompt and answers the
        CLI's permission prompts; otherwise what every CLI driver's stdin gets."""
        if not config.two_way or not isinstance(parser, ClaudeStreamParser):
            return super().stdin_writer(config, request, sink, parser)
        session = request.session.state if request.session is not None else None
        channel = ControlChannel(
            parser.out,
            sink,
            prompt=request.prompt,
            policy=request.policy.human_decision,
            run_id=request.run_id,
            session_id=session.resume_id if session is not None else "",
        )
        parser.control = channel
        return channel

    def system_prompt_args(self, text: str, cleanup: contextlib.ExitStack) -> list[str]:
        """``--append-system-prompt-file`` naming a private (0600) file with ``text``."""
        path = cleanup.enter_context(private_text_file(text, prefix="claude-append-", suffix=".md"))
        return ["--append-system-prompt-file", path]

    def command_line(
        self, config: ClaudeConfig, prompt: str, *, model: str, resume_id: str
    ) -> list[str]:
        """``claude -p`` with stream-json output; see :func:`build_argv`."""
        return build_argv(config, model=model, resume_id=resume_id)

    def structured_command_line(
        self, config: ClaudeConfig, prompt: str, *, model: str, resume_id: str, schema: NativeSchema
    ) -> list[str]:
        """The same, with ``--json-schema '<schema>'``."""
        return build_argv(config, model=model, resume_id=resume_id, json_schema=schema.document)

    def stream_parser(self, out: RunOutput, *, model: str) -> ClaudeStreamParser:
        """A stream-json parser; the model comes from the CLI's ``system/init`` line."""
        return ClaudeStreamParser(out)

    def home_env(self, home: Path) -> dict[str, str]:
        """Claude Code keeps its settings, sessions and ``.claude.json`` in
        ``CLAUDE_CONFIG_DIR`` (by default ``~/.claude``): ``<home>/.claude``."""
        return {"CLAUDE_CONFIG_DIR": str(home / ".claude")}


_NATIVE_HITL = StructuredOutputHITLCapability(permission=True)
"""Native structured output with permission decisions asked during the run (two-way mode)."""
_ASK_ANY = HumanDecisionSupport(ask=True, auto_approve=True, auto_reject=True, retry=True)
_TWO_WAY_POLICY = RunPolicyCapabilities(
    permission=_ASK_ANY,
    plan_review=_ASK_ANY,
    question=QuestionSupport(ask=True, auto_reject=True, retry=True),
)
"""What the two-way mode can apply: every decision mode (a question has no auto-approve)."""


def _schema() -> ConfigSchema:
    base = cli_config_schema(
        program="claude", extra_args_hint="--permission-mode acceptEdits", timeout=DEFAULT_TIMEOUT
    )
    switch = ConfigField(
        name="two_way",
        label="Ask the host",
        type="toggle",
        group="permissions",
        default=False,
        description="Send the prompt on stdin and route Claude Code's permission prompts, "
        "questions and plan reviews to the host (stream-json control messages).",
    )
    return base.model_copy(update={"fields": (*base.fields, switch)})
