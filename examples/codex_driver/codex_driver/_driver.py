"""The Codex driver: runs ``codex exec --json`` once per run and parses its JSONL events.

The probes, the session codec, the config fingerprint and ``run`` come from
:class:`driver.clikit.CLIDriver`; this module declares the driver and supplies
the command line and the parser.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path

from codex_driver._config import (
    CODEX_DRIVER_TYPE,
    DEFAULT_TIMEOUT,
    FINGERPRINT_DOMAIN,
    RUN_FLAGS,
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

__all__ = [
    "RESERVED_CONFIG_KEYS",
    "CodexDriver",
    "build_argv",
    "provider_args",
    "toml_string",
]

RESERVED_CONFIG_KEYS = (
    "developer_instructions",
    "instructions",
    "base_instructions",
    "model_instructions_file",
    "experimental_instructions_file",
)
"""codex config keys that set the model's instructions. ``extra_args`` that override one
are refused as ``conflicting_extra_args`` on every run, with or without an append: the
driver owns these keys (upstream's codex driver refuses them the same way)."""
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
    config: CodexConfig, *, model: str, resume_id: str, schema_path: str = ""
) -> list[str]:
    """The command line of one run.

    ``exec`` flags go before the ``resume`` subcommand; the prompt argument is ``-``,
    which makes codex read the prompt from standard input, where the driver writes it
    (any size, and out of the process table). ``schema_path`` (a file holding the JSON
    Schema) asks for native structured output.
    """
    argv = [*config.command, "exec", "--json", *RUN_FLAGS]
    if model:
        argv += ["--model", model]
    if schema_path:
        argv += ["--output-schema", schema_path]
    argv += config.extra_args
    if resume_id:
        argv += ["resume", resume_id]
    return [*argv, "-"]


def provider_args(
    base_url: str,
    *,
    name: str = "local",
    env_key: str = "",
    request_max_retries: int | None = None,
    stream_max_retries: int | None = None,
    stream_idle_timeout_ms: int | None = None,
) -> tuple[str, ...]:
    """``-c`` flags that point codex at an OpenAI Responses endpoint (for ``extra_args``).

    ``base_url`` is the API root including ``/v1`` (e.g. the model-API emulator's
    ``base_url + "/v1"``); ``env_key`` names the environment variable holding the
    API key (put its value in ``CodexConfig.env``). The retry counts and the idle
    timeout are codex's own provider settings; None leaves codex's defaults
    (5 stream retries, 4 request retries in 0.169).
    """
    if not base_url:
        raise ValueError("provider_args: base_url must not be empty")
    if not name or not all(c.isalnum() or c in "-_" for c in name):
        raise ValueError(f"provider_args: name must be letters, digits, - or _, got {name!r}")
    fields = {"name": name, "base_url": base_url, "wire_api": "responses"}
    if env_key:
        fields["env_key"] = env_key
    numbers = {
        "request_max_retries": request_max_retries,
        "stream_max_retries": stream_max_retries,
        "stream_idle_timeout_ms": stream_idle_timeout_ms,
    }
    parts = [f"{key}={toml_string(value)}" for key, value in fields.items()]
    for key, number in numbers.items():
        if number is not None:
            if isinstance(number, bool) or not isinstance(number, int) or number < 0:
                raise ValueError(f"provider_args: {key} must be an int >= 0, got {number!r}")
            parts.append(f"{key}={number}")
    # A TOML inline table.
    return ("-c", f"model_provider={name}", "-c", f"model_providers.{name}={{{','.join(parts)}}}")


class CodexDriver(CLIDriver[CodexConfig]):
    """Drives the Codex CLI in ``exec`` mode, one process per run.

    Declares resume (the ``thread.started`` thread id), workspace leases,
    item-level streaming with reasoning summaries, and native structured output
    (``--output-schema FILE``; the final agent message is the value, validated
    against the schema since codex ignores it while tools or MCP servers are
    active), and the appended system prompt (``-c developer_instructions=<TOML
    string>``, on the command line, so over 32,768 UTF-8 bytes it is refused as
    ``inline_limit``); ``extra_args`` that override one of :data:`RESERVED_CONFIG_KEYS`
    with ``-c``/``--config`` are refused as ``conflicting_extra_args`` on every run. No
    skills, MCP or HITL.
    """

    driver_type = CODEX_DRIVER_TYPE
    fingerprint_domain = FINGERPRINT_DOMAIN
    supported_cli_versions = ">=0.162.0"
    install_hint = "install the Codex CLI or set CodexConfig.command"
    schema_in_file = True
    prompt_on_stdin = True
    system_prompt_inline = True
    system_prompt_conflicts_always = True

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
        """The key of a ``-c``/``--config`` override of one of :data:`RESERVED_CONFIG_KEYS`
        (bare or quoted, any spacing around ``=``)."""
        for override in _config_overrides(extra_args):
            key = override.split("=", 1)[0].strip().strip("\"'")
            if key in RESERVED_CONFIG_KEYS:
                return key
        return None

    def command_line(
        self, config: CodexConfig, prompt: str, *, model: str, resume_id: str
    ) -> list[str]:
        """``codex exec --json``; see :func:`build_argv`."""
        return build_argv(config, model=model, resume_id=resume_id)

    def structured_command_line(
        self, config: CodexConfig, prompt: str, *, model: str, resume_id: str, schema: NativeSchema
    ) -> list[str]:
        """The same, with ``--output-schema`` naming the run's temporary schema file."""
        return build_argv(config, model=model, resume_id=resume_id, schema_path=schema.path)

    def stream_parser(self, out: RunOutput, *, model: str) -> CodexStreamParser:
        """An ``exec --json`` parser; the CLI does not report the model, so it is the asked one."""
        return CodexStreamParser(out, model=model)

    def home_env(self, home: Path) -> dict[str, str]:
        """Codex keeps its config and sessions in ``CODEX_HOME`` (by default
        ``~/.codex``): ``<home>/.codex``."""
        return {"CODEX_HOME": str(home / ".codex")}

    def process_env(self, config: CodexConfig) -> dict[str, str]:
        """The inherited environment, the home's ``CODEX_HOME`` and ``config.env``; the
        ``CODEX_HOME`` folder is created when missing, since codex 0.169 refuses to start
        without it ("CODEX_HOME points to ..., but that path does not exist")."""
        env = super().process_env(config)
        if config.home:
            os.makedirs(env.get("CODEX_HOME") or config.home, exist_ok=True)
        return env


def _schema() -> ConfigSchema:
    return cli_config_schema(
        program="codex", extra_args_hint="--sandbox workspace-write", timeout=DEFAULT_TIMEOUT
    )
