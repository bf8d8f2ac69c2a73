"""SO family: structured-output declarations (SO-01) and the native probe's value (SO-02).

SO-01 is judged on the descriptor alone. SO-02 is judged on what the live structured
probe gets back; its request is built here too (``structured_request``), so the shape
that SO-03 promises never to exceed lives next to the rule it serves.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from adaptertest._depth import MAX_DEPTH, too_deep
from adaptertest._violation import Violation
from driver.descriptor import (
    Descriptor,
    StructuredOutputCapability,
    StructuredOutputHITLCapability,
)
from driver.output import (
    OutputFormat,
    OutputSchema,
    StructuredOutput,
    StructuredOutputSource,
)
from driver.run import Request
from driver.runtime import WorkspaceLease

__all__ = [
    "STRUCTURED_PROMPT",
    "STRUCTURED_RUN_ID",
    "STRUCTURED_SCHEMA",
    "STRUCTURED_SCHEMA_NAME",
    "STRUCTURED_WORKSPACE_ID",
    "StrictJSONError",
    "parse_strict_json",
    "probe_value_matches",
    "structured_request",
    "verify_structured_output_capability",
    "verify_structured_output_descriptor",
    "verify_structured_output_value",
]

STRUCTURED_RUN_ID = "adaptertest-live-structured"
STRUCTURED_WORKSPACE_ID = "adaptertest-ws-structured"
STRUCTURED_SCHEMA_NAME = "adaptertest_result"

#: The probe's schema as exact JSON text: one required boolean ``ok``, nothing else.
STRUCTURED_SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"],
        "additionalProperties": False,
    }
)

STRUCTURED_PROMPT = (
    'Reply with a JSON object that has exactly one property, "ok", set to the boolean '
    "true, and nothing else."
)

_HITL_KINDS = ("permission", "plan_review", "question")

# ------------------------------------------------------------------------------------
# SO-01
# ------------------------------------------------------------------------------------


def _true_kinds(matrix: StructuredOutputHITLCapability | None) -> list[str]:
    if matrix is None:
        return []
    return [kind for kind in _HITL_KINDS if getattr(matrix, kind)]


def _matrices(
    cap: StructuredOutputCapability,
) -> list[tuple[str, str, bool, StructuredOutputHITLCapability | None]]:
    """(matrix field, mechanism field, mechanism declared, matrix) for both mechanisms."""
    return [
        ("native_hitl", "json_schema_native", cap.json_schema_native, cap.native_hitl),
        (
            "prompt_validate_hitl",
            "json_schema_prompt_validate",
            cap.json_schema_prompt_validate,
            cap.prompt_validate_hitl,
        ),
    ]


def verify_structured_output_capability(cap: StructuredOutputCapability) -> list[Violation]:
    """SO-01 rules that the capability alone can break.

    A ``works_with_*`` flag needs a mechanism; a declared mechanism needs
    ``works_with_run``; a HITL matrix with a true kind needs its own mechanism and
    ``works_with_run``.
    """
    out: list[Violation] = []
    declared = cap.json_schema_native or cap.json_schema_prompt_validate
    works = [
        name
        for name in ("works_with_run", "works_with_streaming", "works_with_hitl")
        if getattr(cap, name)
    ]
    if works and not declared:
        out.append(
            Violation(
                "SO-01",
                f"{', '.join(works)} declared but neither json_schema_native nor "
                "json_schema_prompt_validate is",
            )
        )
    if declared and not cap.works_with_run:
        mechanisms = [
            name
            for name in ("json_schema_native", "json_schema_prompt_validate")
            if getattr(cap, name)
        ]
        out.append(
            Violation("SO-01", f"{', '.join(mechanisms)} declared with works_with_run=False")
        )
    for matrix_name, mechanism_name, mechanism, matrix in _matrices(cap):
        kinds = _true_kinds(matrix)
        if not kinds:
            continue
        missing = [] if mechanism else [f"{mechanism_name}=False"]
        if not cap.works_with_run:
            missing.append("works_with_run=False")
        if missing:
            out.append(
                Violation(
                    "SO-01",
                    f"{matrix_name} declares {', '.join(kinds)} but {' and '.join(missing)}",
                )
            )
    return out


def verify_structured_output_descriptor(desc: Descriptor) -> list[Violation]:
    """SO-01 on a whole descriptor: the capability rules plus, for every true HITL-matrix
    kind, the matching ``run_policy_caps.<kind>.ask``."""
    cap = desc.structured_output
    out = verify_structured_output_capability(cap)
    for matrix_name, _, _, matrix in _matrices(cap):
        for kind in _true_kinds(matrix):
            support = getattr(desc.run_policy_caps, kind)
            if not support.ask:
                out.append(
                    Violation(
                        "SO-01",
                        f"{matrix_name}.{kind}=True but run_policy_caps.{kind}.ask=False",
                    )
                )
    return out


# ------------------------------------------------------------------------------------
# SO-02
# ------------------------------------------------------------------------------------


class StrictJSONError(ValueError):
    """The text is not one strictly valid JSON document."""


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise StrictJSONError(f"duplicate object key {key!r}")
        result[key] = value
    return result


def _no_constant(name: str) -> Any:
    raise StrictJSONError(f"non-standard JSON constant {name}")


def parse_strict_json(text: str) -> Any:
    """Parse exactly one JSON document, rejecting duplicate keys, NaN/Infinity and
    anything after the document (Python's ``json`` allows the first two)."""
    try:
        text.encode("utf-8")
        return json.loads(text, object_pairs_hook=_unique_object, parse_constant=_no_constant)
    except StrictJSONError:
        raise
    except (ValueError, RecursionError) as exc:
        raise StrictJSONError(str(exc)) from exc


def _is_probe_shape(value: Any) -> bool:
    # ``is True`` keeps 1 and 1.0 out; the exact key set keeps extras out.
    return isinstance(value, dict) and list(value) == ["ok"] and value["ok"] is True


def probe_value_matches(raw_json: str) -> bool:
    """Report whether ``raw_json`` is exactly the single-key object ``{"ok": true}``."""
    try:
        return _is_probe_shape(parse_strict_json(raw_json))
    except StrictJSONError:
        return False


def _encode_value(value: Any) -> str | None:
    try:
        return json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None


@functools.cache
def _schema_validator() -> Any:
    """Built on first use: jsonschema is only needed when SO-02 fails."""
    import jsonschema

    return jsonschema.Draft202012Validator(json.loads(STRUCTURED_SCHEMA))


def _schema_verdict(value: Any) -> str:
    """Why ``value`` is not the probe object, from the schema's point of view.

    Names the failing keyword and location only, never the value itself.
    """
    errors = sorted(_schema_validator().iter_errors(value), key=lambda e: list(e.absolute_path))
    if not errors:
        return 'it satisfies the schema but is not exactly {"ok": true}'
    first = errors[0]
    where = "/".join(str(part) for part in first.absolute_path) or "top level"
    return f"it fails the probe schema ({first.validator} at {where})"


def verify_structured_output_value(so: StructuredOutput | None) -> list[Violation]:
    """SO-02: the native probe returned ``structured_output`` with source native,
    ``valid=True``, ``raw_json`` exactly ``{"ok": true}`` and, if ``value`` is set, a
    value that encodes to that same object."""
    if so is None:
        return [Violation("SO-02", "the native structured run returned no structured_output")]
    out: list[Violation] = []
    if so.source != StructuredOutputSource.NATIVE:
        out.append(Violation("SO-02", f"structured_output.source is {str(so.source)!r}"))
    if not so.valid:
        out.append(Violation("SO-02", "structured_output.valid is False"))
    try:
        parsed = parse_strict_json(so.raw_json)
    except StrictJSONError:
        out.append(
            Violation(
                "SO-02",
                f"structured_output.raw_json ({len(so.raw_json)} chars) is not one strict "
                "JSON document",
            )
        )
    else:
        if not _is_probe_shape(parsed):
            out.append(
                Violation(
                    "SO-02",
                    f"structured_output.raw_json decodes to a {type(parsed).__name__} and "
                    f"{_schema_verdict(parsed)}",
                )
            )
    if so.value is not None:
        depth = too_deep(so.value)
        encoded = _encode_value(so.value) if depth is None else None
        if depth is not None:
            out.append(
                Violation(
                    "SO-02",
                    f"structured_output.value is nested {depth} levels deep: the suite "
                    f"encodes values nested at most {MAX_DEPTH} levels deep",
                )
            )
        elif encoded is None:
            out.append(
                Violation(
                    "SO-02",
                    f"structured_output.value ({type(so.value).__name__}) is not JSON-encodable",
                )
            )
        elif not probe_value_matches(encoded):
            out.append(
                Violation(
                    "SO-02",
                    f"structured_output.value ({type(so.value).__name__}) encodes to JSON "
                    f"and {_schema_verdict(json.loads(encoded))}",
                )
            )
    return out


def structured_request(config: object | None, workspace_cwd: str | None) -> Request:
    """The request of the live structured probe: native source, batch transport
    (``streaming=False``), the probe schema, and a workspace lease when a cwd is given."""
    request = Request(
        run_id=STRUCTURED_RUN_ID,
        prompt=STRUCTURED_PROMPT,
        config=config,
        streaming=False,
        structured_output_source=StructuredOutputSource.NATIVE,
        output_schema=OutputSchema(
            format=OutputFormat.JSON_SCHEMA,
            schema_document=STRUCTURED_SCHEMA,
            name=STRUCTURED_SCHEMA_NAME,
        ),
    )
    if workspace_cwd is not None:
        request.workspace = WorkspaceLease(id=STRUCTURED_WORKSPACE_ID, cwd=workspace_cwd)
    return request
