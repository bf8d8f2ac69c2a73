"""Native structured output of a CLI run: which schema to pass, and judging what came back.

A CLI that can constrain its final answer to a JSON Schema (Claude Code's
``--json-schema``, Codex's ``--output-schema``) still hands back text or a JSON
value that the driver must check: Codex documents that it ignores the schema
when tools or MCP servers are active. So the value is always validated here
against the request's schema before the response calls it valid.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from driver import (
    InvalidOutputSchemaError,
    OutputFormat,
    OutputSchema,
    Request,
    StructuredOutput,
    StructuredOutputSource,
)

__all__ = [
    "NativeSchema",
    "StructuredSource",
    "judge_structured",
    "native_schema",
    "private_text_file",
    "schema_file",
]


@dataclass(frozen=True, slots=True)
class NativeSchema:
    """The output schema a run asks the CLI to enforce natively.

    ``document`` is the exact schema text; ``path`` a temporary file holding it,
    for CLIs that read the schema from a file (empty otherwise).
    """

    document: str
    path: str = ""


@runtime_checkable
class StructuredSource(Protocol):
    """A parser that can say what the CLI returned as its structured answer."""

    def structured_json(self) -> str | None:
        """The JSON text of the CLI's structured answer, or None when it gave none."""


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise ValueError("an object repeats a key")
    return obj


def _strict_loads(text: str) -> Any:
    """One JSON document: no NaN/Infinity, no repeated object keys."""
    return json.loads(text, parse_constant=_no_constant, object_pairs_hook=_no_repeated_keys)


def native_schema(request: Request) -> OutputSchema | None:
    """The schema when ``request`` asks for native JSON Schema output, else None.

    Raises :class:`driver.InvalidOutputSchemaError` before launch when the
    schema is missing, of another format, not JSON, or not a valid JSON Schema.
    """
    if request.structured_output_source != StructuredOutputSource.NATIVE:
        return None
    schema = request.output_schema
    if schema is None:
        raise InvalidOutputSchemaError("native structured output was asked without a schema")
    if schema.format != OutputFormat.JSON_SCHEMA:
        raise InvalidOutputSchemaError(f"unsupported output format {str(schema.format)!r}")
    SchemaError, validator_for = _jsonschema()

    try:
        document = _strict_loads(schema.schema_document)
        validator_for(document).check_schema(document)
    except (ValueError, SchemaError) as exc:
        raise InvalidOutputSchemaError("the schema does not compile", exc) from exc
    return schema


@contextlib.contextmanager
def private_text_file(text: str, *, prefix: str, suffix: str) -> Iterator[str]:
    """A temporary file holding ``text`` (UTF-8) that only this user may read or write
    (mode 0600); removed when the block ends."""
    fd, path = tempfile.mkstemp(prefix=prefix, suffix=suffix)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        yield path
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def schema_file(document: str) -> contextlib.AbstractContextManager[str]:
    """A private temporary file holding ``document``; removed when the block ends."""
    return private_text_file(document, prefix="clikit-schema-", suffix=".json")


def judge_structured(schema_document: str, candidate: str | None) -> StructuredOutput:
    """Validate the CLI's answer against the schema the run asked for.

    ``raw_json`` is the answer's text (surrounding whitespace removed); ``valid``
    only when it is one strict JSON document that satisfies the schema.
    """
    digest = hashlib.sha256(schema_document.encode("utf-8", "surrogatepass")).hexdigest()

    def judged(
        raw_json: str = "", value: Any = None, errors: list[str] | None = None
    ) -> StructuredOutput:
        return StructuredOutput(
            format=OutputFormat.JSON_SCHEMA,
            source=StructuredOutputSource.NATIVE,
            raw_json=raw_json,
            value=value,
            valid=errors == [],
            validation_errors=errors or [],
            schema_hash=digest,
        )

    if candidate is None:
        return judged(errors=["the CLI returned no structured value"])
    raw_json = candidate.strip()
    try:
        value = _strict_loads(raw_json)
    except (ValueError, RecursionError) as exc:
        return judged(raw_json, errors=[f"the answer is not one JSON document: {exc}"])
    _, validator_for = _jsonschema()

    schema = json.loads(schema_document)
    found = sorted(
        validator_for(schema)(schema).iter_errors(value), key=lambda e: [str(p) for p in e.path]
    )
    return judged(
        raw_json,
        value,
        [f"{'/'.join(str(p) for p in e.absolute_path) or 'top level'}: {e.message}" for e in found],
    )


def _jsonschema() -> tuple[type[Exception], Any]:
    """jsonschema's ``SchemaError`` and ``validator_for``, imported on first native run.

    Only native structured output needs it, so the base install (what an agent host
    imports a driver with) does without; a driver that declares native output depends
    on ``agent-driver-kit[clikit]``. Asked for before launch, so a missing extra fails
    the run's set-up with this message rather than after the CLI has run.
    """
    try:
        from jsonschema import SchemaError
        from jsonschema.validators import validator_for
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(
            "native structured output in driver.clikit validates answers with jsonschema, "
            "which is not installed: python -m pip install 'agent-driver-kit[clikit]'",
            name="jsonschema",
        ) from exc
    return SchemaError, validator_for
