"""The driver methods every CLI driver words the same way, around its format-specific parts.

A driver subclasses :class:`CLIDriver`, names itself in class attributes and
supplies what depends on its CLI: the command line and the parser of the CLI's
output. The descriptor is built from the class attributes; a driver that
declares more (model aliases, structured output) overrides :meth:`~CLIDriver.descriptor`.
"""

from __future__ import annotations

import contextlib
from abc import abstractmethod
from collections.abc import Sequence
from typing import ClassVar, TypeVar

import anyio.abc
import anyio.lowlevel

from driver import (
    APPEND_INLINE_LIMIT,
    Descriptor,
    EventSink,
    ModelInfo,
    Request,
    Response,
    SessionCapability,
    StreamCapability,
    StructuredOutputSource,
    StructuredOutputUnsupportedError,
    SystemPromptUnsupportedError,
    SystemPromptUnsupportedReason,
    WorkspaceCapability,
    check_append_system_prompt,
)
from driver.clikit._config import CLIConfig
from driver.clikit._emit import RunOutput
from driver.clikit._probes import cli_config_schema
from driver.clikit._process import TERMINAL_GRACE_SECONDS, StdinWriter
from driver.clikit._program import ProgramDriver
from driver.clikit._structured import NativeSchema, native_schema, schema_file
from driver.clikit._turn import StreamParser, run_turn

__all__ = ["CLIDriver"]

ConfigT = TypeVar("ConfigT", bound=CLIConfig)


class CLIDriver(ProgramDriver[ConfigT]):
    """Runs a JSONL-printing CLI once per run; holds only its frozen config, so one
    instance serves concurrent runs.

    Config validation, the probes, the stream capability, the session codec and the
    config fingerprint come from :class:`~driver.clikit._program.ProgramDriver`; the
    descriptor and ``run`` are shared here; see
    :func:`driver.clikit.run_turn` for the outcome rules.
    """

    display_name: ClassVar[str] = ""
    """``Descriptor.display_name``; empty means ``driver_type``."""
    extra_args_hint: ClassVar[str] = ""
    """An example of ``extra_args`` for the config form, e.g. ``--sandbox read-only``."""
    capability: ClassVar[StreamCapability] = StreamCapability(native=True, reasoning=True)
    """What :meth:`stream_capability` declares. The default: whole text and reasoning
    blocks (no token deltas), tool arguments complete at the start, no HITL."""
    schema_in_file: ClassVar[bool] = False
    """The CLI reads a native output schema from a file (a temporary one is written for
    the run and removed after it), not from its command line."""
    prompt_on_stdin: ClassVar[bool] = False
    """The CLI reads the prompt from its standard input: the default :meth:`stdin_writer`
    writes it there (UTF-8) and closes it, and :meth:`command_line` leaves it out of
    argv. Linux caps one argv entry at 128 KiB (``MAX_ARG_STRLEN``), and argv and the
    environment together, so a prompt in argv fails to start (``E2BIG``) long before a
    model's context is full; a prompt in argv is also readable by every local user in
    the process table."""
    stdout_to_file: ClassVar[bool] = False
    """The CLI's stdout is a private unnamed file, read as it grows, instead of a pipe: for
    a CLI that loses output still queued for a full pipe when it exits (a Node.js CLI
    that calls ``process.exit()``: Node writes to pipes asynchronously, to files
    synchronously). Costs a few milliseconds of latency per line read; see
    :func:`driver.clikit.run_cli`."""

    terminal_grace: ClassVar[float] = TERMINAL_GRACE_SECONDS
    """Seconds the CLI may keep running after its terminal line (background tasks, MCP
    servers) before it is ended; the run keeps what the terminal line says, and the
    response's metadata notes the end (``ended_after_terminal``)."""
    system_prompt_flags: ClassVar[tuple[str, ...]] = ()
    """Options of the CLI that set its own system prompt (``--system-prompt`` ...): an
    ``extra_args`` entry equal to one (or ``FLAG=VALUE``) makes a run with an appended
    system prompt fail with ``conflicting_extra_args``."""
    system_prompt_inline: ClassVar[bool] = False
    """:meth:`system_prompt_args` put the text itself on the command line (not in a
    file): an append over :data:`driver.APPEND_INLINE_LIMIT` UTF-8 bytes is refused with
    ``inline_limit`` before anything starts."""
    system_prompt_conflicts_always: ClassVar[bool] = False
    """Refuse ``extra_args`` that set the CLI's system prompt on every run, with or
    without an append (upstream's codex driver does so for its instruction keys)."""

    # -- what each driver supplies --------------------------------------------------------

    def descriptor(self) -> Descriptor:
        """Declare exactly what the driver delivers; built fresh on every call (DRV-02/03).

        Resume (the CLI's session handle), workspace leases, :meth:`declared_models`
        and the config form of :class:`CLIConfig`; no skills, MCP, HITL or
        structured output. A driver that declares more overrides this, e.g. with
        ``super().descriptor().model_copy(update=...)``.
        """
        default = self._config_type.model_validate({})
        return Descriptor(
            type=self.driver_type,
            display_name=self.display_name or self.driver_type,
            models=tuple(ModelInfo(id=m, label=m) for m in self.declared_models()),
            config_schema=cli_config_schema(
                program=default.command[0],
                extra_args_hint=self.extra_args_hint,
                timeout=default.timeout,
            ),
            sessions=SessionCapability(supports_resume=True),
            workspace=WorkspaceCapability(supported=True),
        )

    def declared_models(self) -> tuple[str, ...]:
        """The model ids the descriptor lists: the configured one, if any."""
        return (self._config.model,) if self._config.model else ()

    @abstractmethod
    def command_line(
        self, config: ConfigT, prompt: str, *, model: str, resume_id: str
    ) -> list[str]:
        """The argv of one run; ``resume_id`` is ``""`` for a new session. With
        :attr:`prompt_on_stdin` the prompt is not in it."""

    @abstractmethod
    def stream_parser(self, out: RunOutput, *, model: str) -> StreamParser:
        """A fresh parser of the CLI's output for one run."""

    def structured_command_line(
        self, config: ConfigT, prompt: str, *, model: str, resume_id: str, schema: NativeSchema
    ) -> list[str]:
        """The argv of a run that asks the CLI to enforce ``schema`` natively.

        Only called when the descriptor declares ``json_schema_native``; a driver
        that declares it overrides this. The parser's ``structured_json()`` then
        says what came back, and the run validates it against the schema.
        """
        raise StructuredOutputUnsupportedError(self.driver_type, "no native structured output")

    def stdin_writer(
        self, config: ConfigT, request: Request, sink: EventSink, parser: StreamParser
    ) -> StdinWriter | None:
        """What writes the CLI's stdin during a run (a prompt, answers to the CLI's own
        requests), given the run's parser; None gives the CLI ``/dev/null``. The default:
        the prompt with :attr:`prompt_on_stdin`, else None.

        The writer runs while the process does, is cancelled once it has ended, and the
        pipe is closed when the writer returns (see :func:`driver.clikit.run_cli`).
        """
        return _sender(request.prompt.encode()) if self.prompt_on_stdin else None

    def system_prompt_args(self, text: str, cleanup: contextlib.ExitStack) -> list[str]:
        """The arguments that hand ``text``, unchanged, to the CLI's own mechanism for
        appending to its system prompt; they go in front of ``extra_args``.

        Only called for a non-empty append when the descriptor declares
        ``system_prompt.append``; a driver that declares it overrides this. A file it
        writes goes through ``cleanup``, which removes it after the run.
        """
        raise SystemPromptUnsupportedError(
            self.driver_type, SystemPromptUnsupportedReason.UNSUPPORTED_DRIVER
        )

    def conflicting_system_prompt_arg(self, extra_args: Sequence[str]) -> str | None:
        """The name of the ``extra_args`` entry that already sets the CLI's system
        prompt, if any: by default an entry equal to one of :attr:`system_prompt_flags`,
        or that entry with ``=VALUE`` (a longer flag that merely starts the same is
        another flag). Only the name: the error that quotes it never holds a value."""
        for arg in extra_args:
            name = arg.partition("=")[0]
            if name in self.system_prompt_flags:
                return name
        return None

    # -- the run --------------------------------------------------------------------------

    async def run(self, request: Request, sink: EventSink) -> Response:
        """Run the CLI once; ``request.config``, when given, replaces the captured one."""
        await anyio.lowlevel.checkpoint()
        config = self._config_for(request.config)
        model = request.model_override or config.model
        schema = self._native_schema(request)
        with contextlib.ExitStack() as cleanup:
            config = self._with_system_prompt(config, request.append_system_prompt, cleanup)
            native = None
            if schema:
                path = cleanup.enter_context(schema_file(schema)) if self.schema_in_file else ""
                native = NativeSchema(schema, path)

            def argv(resume_id: str) -> list[str]:
                if native is None:
                    return self.command_line(
                        config, request.prompt, model=model, resume_id=resume_id
                    )
                return self.structured_command_line(
                    config, request.prompt, model=model, resume_id=resume_id, schema=native
                )

            return await run_turn(
                request,
                sink,
                driver_type=self.driver_type,
                argv=argv,
                cwd=request.workspace.cwd or config.cwd,
                env=self.process_env(config),
                model=model,
                timeout=config.timeout,
                parser=lambda out: self.stream_parser(out, model=model),
                structured=native is not None,
                terminal_grace=self.terminal_grace,
                stdin=lambda parser: self.stdin_writer(config, request, sink, parser),
                stdout_to_file=self.stdout_to_file,
            )

    def _with_system_prompt(
        self, config: ConfigT, text: str, cleanup: contextlib.ExitStack
    ) -> ConfigT:
        """``config`` with the arguments that append ``text`` in front of its extra args.

        Refused before launch, with nothing emitted, in upstream's order: invalid UTF-8,
        NUL, an undeclared append (``unsupported_driver``), over the inline limit when
        :attr:`system_prompt_inline`; then extra args that already set the CLI's own
        system prompt (``conflicting_extra_args``, checked on every run when
        :attr:`system_prompt_conflicts_always`).
        """
        if text:
            check_append_system_prompt(
                self.driver_type,
                text,
                supported=self.descriptor().system_prompt.append,
                inline_limit=APPEND_INLINE_LIMIT if self.system_prompt_inline else None,
            )
        if text or self.system_prompt_conflicts_always:
            conflict = self.conflicting_system_prompt_arg(config.extra_args)
            if conflict is not None:
                raise SystemPromptUnsupportedError(
                    self.driver_type,
                    SystemPromptUnsupportedReason.CONFLICTING_EXTRA_ARGS,
                    argument=conflict,
                )
        if not text:
            return config
        args = self.system_prompt_args(text, cleanup)
        return config.model_copy(update={"extra_args": (*args, *config.extra_args)})

    def _native_schema(self, request: Request) -> str:
        """The schema text when ``request`` asks for native structured output, else ``""``.

        Refused before launch when the descriptor does not declare it
        (``StructuredOutputUnsupportedError``) or the schema is unusable
        (``InvalidOutputSchemaError``): no mechanism is switched silently.
        """
        if request.structured_output_source != StructuredOutputSource.NATIVE:
            return ""
        if not self.descriptor().structured_output.json_schema_native:
            raise StructuredOutputUnsupportedError(
                self.driver_type, "native structured output is not declared"
            )
        schema = native_schema(request)
        return schema.schema_document if schema is not None else ""


def _sender(data: bytes) -> StdinWriter:
    """A stdin writer that sends ``data`` and is done (the pipe is then closed: end of
    input). A CLI that exits without reading it all breaks the pipe, which ends the
    writing quietly; the run's outcome says what became of it."""

    async def send(pipe: anyio.abc.ByteSendStream) -> None:
        await pipe.send(data)

    return send
