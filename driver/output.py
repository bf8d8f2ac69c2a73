"""Structured output: the schema a run is asked for and the value it produced.

Mirrors upstream ``output.go``. Core negotiates the mechanism and tells the
driver which one to use through ``Request.structured_output_source``. JSON
documents are kept as exact text and never re-serialized.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import Field

from driver._base import SPIModel

__all__ = [
    "OutputFormat",
    "OutputSchema",
    "StructuredOutput",
    "StructuredOutputInvalidPolicy",
    "StructuredOutputSource",
]


class OutputFormat(StrEnum):
    """The business-output format requested (not a CLI protocol envelope)."""

    JSON_SCHEMA = "json_schema"


class StructuredOutputInvalidPolicy(StrEnum):
    """What core does when prompt-validated output is missing or invalid."""

    FAIL_RUN = "fail_run"
    RETURN_INVALID = "return_invalid"


class StructuredOutputSource(StrEnum):
    """The mechanism that produces the structured value."""

    NATIVE = "native"
    PROMPT_VALIDATE = "prompt_validate"


class OutputSchema(SPIModel):
    """A request for a final JSON value matching a JSON Schema.

    ``schema_document`` is the exact text of the schema document.
    """

    format: OutputFormat | Literal[""] = ""
    schema_document: str = ""
    name: str = ""
    description: str = ""
    on_invalid: StructuredOutputInvalidPolicy | Literal[""] = ""


class StructuredOutput(SPIModel):
    """The final structured value of a run.

    ``raw_json`` is the exact text of the validated assistant JSON value, never
    raw stdout or a provider terminal wrapper; ``value`` is its decoded form.
    """

    format: OutputFormat | Literal[""] = ""
    source: StructuredOutputSource | Literal[""] = ""
    raw_json: str = ""
    value: Any = None
    valid: bool = False
    validation_errors: list[str] = Field(default_factory=list)
    schema_hash: str = ""
