"""The Codex driver: runs ``codex exec --json`` once per run and parses its JSONL events.

The probes, the session codec, the config fingerprint and ``run`` come from
:class:`driver.clikit.CLIDriver`; this module declares the driver and supplies
the command line and the parser.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path

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
    ModelInfo,
    SessionCapability,
    StructuredOutputCapability,
    SystemPromptCapability,
    WorkspaceCapability,
)
from driver.clikit import CLIDriver, NativeSchema, RunOutput, cli_config_schema

__all__ = ["CodexDriver", "build_argv", "toml_string"]

# Config keys that set the model's instructions; an append is refused when extra_args set one.
_INSTRUCTION_KEYS = frozenset({"developer_instructions", "instructions"})
_TOML_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string: quotes, backslashes and control characters escaped."""
    out = []
    for char in text:
        if char in _TOML_ESCAPES:
            out.append(_TOML_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _config_overrides(extra_args: Sequence[str]) -> list[str]:
    """The ``key=value`` overrides of ``-c``/``--config`` in ``extra_args``, in any spelling."""
    found: list[str] = []
    args = list(extra_args)
    for index, arg in enumerate(args):
        if arg in ("-c", "--config"):
            if index + 1 < len(args):
                found.append(args[index + 1])
        elif arg.startswith("--config="):
            found.append(arg.removeprefix("--config="))
        elif arg.startswith("-c") and not arg.startswith("--"):
            found.append(arg[2:])
    return found


def build_argv(
    config: CodexConfig, prompt: str, *, model: str, resume_id: str, schema_path: str = ""
) -> list[str]:
    """The command line of one run.

    ``exec`` flags go before the ``resume`` subcommand; ``--`` keeps a prompt
    starting with ``-`` (or spelling a subcommand) a prompt. ``schema_path``
    (a file holding the JSON Schema) asks for native structured output.
    """
    argv = [*config.command, "exec", "--json"]
    if model:
        argv += ["--model", model]
    if schema_path:
        argv += ["--output-schema", schema_path]
    argv += config.extra_args
    if resume_id:
        argv += ["resume", resume_id]
    return [*argv, "--", prompt]


class CodexDriver(CLIDriver[CodexConfig]):
    """Drives the Codex CLI in ``exec`` mode, one process per run.

    Declares resume (the ``thread.started`` thread id), workspace leases,
    item-level streaming with reasoning summaries, and native structured output
    (``--output-schema FILE``; the final agent message is the value, validated
    against the schema since codex ignores it while tools or MCP servers are
    active), and the appended system prompt (``-c developer_instructions=<TOML
    string>``; refused as ``conflicting_extra_args`` when ``extra_args`` already set
    ``developer_instructions`` or ``instructions`` with ``-c``/``--config``); no skills,
    MCP or HITL.
    """

    driver_type = CODEX_DRIVER_TYPE
    fingerprint_domain = FINGERPRINT_DOMAIN
    supported_cli_versions = ">=0.162.0"
    install_hint = "install the Codex CLI or set CodexConfig.command"
    schema_in_file = True

    def __init__(self, config: CodexConfig | None = None) -> None:
        super().__init__(CodexConfig, config)

    def descriptor(self) -> Descriptor:
        """Declare exactly what this driver delivers; built fresh on every call (DRV-02/03)."""
        model = self.config.model
        return Descriptor(
            type=CODEX_DRIVER_TYPE,
            display_name="Codex CLI (exec --json example)",
            models=(ModelInfo(id=model, label=model),) if model else (),
            config_schema=_schema(),
            sessions=SessionCapability(supports_resume=True),
            workspace=WorkspaceCapability(supported=True),
            structured_output=StructuredOutputCapability(
                json_schema_native=True,
                works_with_run=True,
                works_with_streaming=True,
                notes="--output-schema FILE; the final agent message is the value, validated "
                "here because codex ignores the schema while tools or MCP servers are active",
            ),
            system_prompt=SystemPromptCapability(append=True),
        )

    def system_prompt_args(self, text: str, cleanup: contextlib.ExitStack) -> list[str]:
        """``-c developer_instructions=<text as a TOML string>``: codex sends it to the model
        as developer instructions, beside its own."""
        return ["-c", f"developer_instructions={toml_string(text)}"]

    def conflicting_system_prompt_arg(self, extra_args: Sequence[str]) -> str | None:
        """A ``-c``/``--config`` override of ``developer_instructions`` or ``instructions``."""
        for override in _config_overrides(extra_args):
            if override.split("=", 1)[0].strip() in _INSTRUCTION_KEYS:
                return override
        return None

    def command_line(
        self, config: CodexConfig, prompt: str, *, model: str, resume_id: str
    ) -> list[str]:
        """``codex exec --json``; see :func:`build_argv`."""
        return build_argv(config, prompt, model=model, resume_id=resume_id)

    def structured_command_line(
        self, config: CodexConfig, prompt: str, *, model: str, resume_id: str, schema: NativeSchema
    ) -> list[str]:
        """The same, with ``--output-schema`` naming the run's temporary schema file."""
        return build_argv(config, prompt, model=model, resume_id=resume_id, schema_path=schema.path)

    def stream_parser(self, out: RunOutput, *, model: str) -> CodexStreamParser:
        """An ``exec --json`` parser; the CLI does not report the model, so it is the asked one."""
        return CodexStreamParser(out, model=model)

    def home_env(self, home: Path) -> dict[str, str]:
        """Codex keeps its config and sessions in ``CODEX_HOME`` (by default
        ``~/.codex``): ``<home>/.codex``."""
        return {"CODEX_HOME": str(home / ".codex")}


def _schema() -> ConfigSchema:
    return cli_config_schema(
        program="codex", extra_args_hint="--sandbox workspace-write", timeout=DEFAULT_TIMEOUT
    )
