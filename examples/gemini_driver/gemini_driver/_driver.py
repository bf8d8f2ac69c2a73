"""The Gemini CLI driver: runs ``gemini --output-format stream-json`` once per run.

The descriptor, the probes, the session codec, the config fingerprint and
``run`` come from :class:`driver.clikit.CLIDriver`; this module supplies the
command line, the parser and the stream capability.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from driver import EventSink, Request, Response, RunError, StreamCapability
from driver.clikit import CLIDriver, RunOutput
from gemini_driver._config import FINGERPRINT_DOMAIN, GEMINI_DRIVER_TYPE, GeminiConfig
from gemini_driver._parser import GeminiStreamParser

__all__ = ["GeminiDriver", "build_argv", "merge_settings", "settings_path"]


def settings_path(home: Path) -> Path:
    """Where Gemini CLI reads its user settings under ``GEMINI_CLI_HOME``."""
    return home / ".gemini" / "settings.json"


def _merged(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in extra.items():
        old = merged.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            merged[key] = _merged(old, value)
        else:
            merged[key] = value
    return merged


def merge_settings(home: Path, settings: dict[str, Any]) -> Path:
    """Merge ``settings`` into the settings file under ``home`` and return its path.

    The file is rewritten only when the merge changes it, through a temporary file
    renamed over it, so concurrent runs sharing a home never read half a file. An
    existing file that is not a JSON object is refused (``ValueError`` naming it) rather
    than overwritten.
    """
    path = settings_path(home)
    current: dict[str, Any] = {}
    if path.exists():
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise ValueError(f"{path}: cannot read it as JSON ({exc}); not overwriting") from exc
        if not isinstance(loaded, dict):
            raise ValueError(f"{path}: not a JSON object; not overwriting")
        current = loaded
    merged = _merged(current, settings)
    if merged == current and path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=".settings-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            json.dump(merged, file, indent=2)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def build_argv(config: GeminiConfig, *, model: str, resume_id: str) -> list[str]:
    """The command line of one run.

    It holds no prompt: with its standard input a pipe and no ``--prompt``, Gemini CLI
    runs headless and reads the prompt from standard input, where the driver writes it
    (any size, a leading ``-`` included, and out of the process table). Tools that need
    approval stay unavailable unless ``extra_args`` says otherwise (e.g.
    ``--approval-mode yolo``).
    """
    argv = [*config.command, "--output-format", "stream-json"]
    if model:
        argv += ["--model", model]
    if resume_id:
        argv += ["--resume", resume_id]
    return [*argv, *config.extra_args]


class GeminiDriver(CLIDriver[GeminiConfig]):
    """Drives Gemini CLI headless, one process per run.

    Declares resume (``--resume <session id>`` appends to the session ``init``
    named, under the same id), workspace leases and token-level streaming:
    the CLI prints the answer in ``delta`` chunks, each one a ``text.content``
    payload. No reasoning (stream-json has no thought events), no tool-call
    argument deltas, no HITL (headless mode never asks), no skills, MCP or
    structured output.

    No appended system prompt (``Descriptor.system_prompt.append`` stays False):
    Gemini CLI's only system-prompt hook, the ``GEMINI_SYSTEM_MD`` variable, names a
    file that *replaces* the built-in system prompt rather than adding to it, and
    passing the text as a ``GEMINI.md`` context file or inside the prompt would put it
    in the user turn. A request with a non-empty ``append_system_prompt`` is refused
    before launch with ``SystemPromptUnsupportedError(reason="unsupported_driver")``.

    Usage (:class:`driver.Usage`) comes from ``result.stats``. What its counts
    mean, from gemini-cli's source (``StreamJsonFormatter.convertToStreamStats``
    and the telemetry it sums): per model, ``input_tokens`` is the API's
    ``promptTokenCount``, cached tokens *included*; ``cached`` is the cached
    part and ``input`` the rest (``input_tokens = cached + input``);
    ``output_tokens`` is ``candidatesTokenCount``, thinking tokens *excluded*;
    ``total_tokens`` is ``totalTokenCount``, which adds the thinking tokens (and
    the rare tool-use prompt tokens). stream-json prints no thinking count of
    its own, so:

    - ``input_tokens`` = ``input_tokens`` (or ``cached + input`` if larger);
    - ``cached_input_tokens`` = ``cached`` (cache reads; no cache-write count
      exists);
    - ``output_tokens`` = ``total_tokens - input_tokens`` when that is larger
      than ``output_tokens``, so thinking counts once, as output;
    - ``estimated_cost_milli`` = 0: the CLI reports no cost.

    Stdout is a file, not a pipe (``stdout_to_file``): Gemini CLI 0.61 echoes the
    prompt on stdout and calls ``process.exit()`` when done; with a prompt of a MiB the
    echo is still queued for a full pipe then, and Node drops it and everything after
    it (the answer and the ``result`` line), in about half the runs against a model
    that answers at once. Node writes to a file synchronously, so nothing is lost.

    The top-level counts are the sum over ``stats.models`` (one entry per model
    that answered: auto-routing adds a router model); without them the
    per-model counts are summed the same way.
    """

    driver_type = GEMINI_DRIVER_TYPE
    fingerprint_domain = FINGERPRINT_DOMAIN
    supported_cli_versions = ">=0.52.0"
    install_hint = (
        "install Gemini CLI (npm install -g @google/gemini-cli) or set GeminiConfig.command"
    )
    display_name = "Gemini CLI (stream-json example)"
    extra_args_hint = "--approval-mode yolo"
    capability = StreamCapability(native=True, token_level=True)
    prompt_on_stdin = True
    stdout_to_file = True

    def __init__(self, config: GeminiConfig | None = None) -> None:
        super().__init__(GeminiConfig, config)

    def command_line(
        self, config: GeminiConfig, prompt: str, *, model: str, resume_id: str
    ) -> list[str]:
        """``gemini --output-format stream-json``; see :func:`build_argv`."""
        return build_argv(config, model=model, resume_id=resume_id)

    def stream_parser(self, out: RunOutput, *, model: str) -> GeminiStreamParser:
        """A stream-json parser; ``init`` names the model, ``result.stats`` the one used."""
        return GeminiStreamParser(out, model=model)

    async def run(self, request: Request, sink: EventSink) -> Response:
        """Write ``settings`` into the home's settings file, then run the CLI once.

        A settings file that cannot be merged refuses the run before launch
        (``RunError`` naming the file).
        """
        config = self._config_for(request.config)
        if config.settings:
            try:
                merge_settings(Path(config.home), config.settings)
            except (OSError, ValueError) as exc:
                raise RunError(f"gemini settings: {exc}") from exc
        return await super().run(request, sink)

    def home_env(self, home: Path) -> dict[str, str]:
        """Gemini CLI reads ``GEMINI_CLI_HOME`` in place of the user's home and keeps its
        settings and sessions in ``<home>/.gemini``."""
        return {"GEMINI_CLI_HOME": str(home)}
