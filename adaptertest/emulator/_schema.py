"""A minimal JSON value valid for a JSON Schema: the answer to a schema request whose turn
scripts no structured value.

It covers what agent CLIs send: ``type`` (a name or a list; Gemini's upper-case names
too), ``const``, ``enum`` (the first value), ``properties`` with ``required`` (only the
required ones are filled), ``items`` with ``minItems``, ``minLength``, ``minimum`` and
``exclusiveMinimum`` (a number is 1 when no bound says otherwise: scores and counts
in real schemas often start at 1 with the range only in the description, as in Gemini
CLI's router), ``anyOf``/``oneOf`` (the first branch), ``allOf`` (merged), local
``$ref`` into ``$defs``/``definitions``, and ``default``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["minimal_instance"]

_MAX_DEPTH = 32


def minimal_instance(schema: object) -> Any:
    """The smallest value this generator knows to be valid for ``schema``."""
    root = schema if isinstance(schema, dict) else {}
    return _value(schema, root, 0)


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#"):
        return schema
    node: Any = root
    for part in ref.lstrip("#").strip("/").split("/"):
        if not part:
            continue
        if not isinstance(node, dict) or part not in node:
            return {}
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node if isinstance(node, dict) else {}


def _value(schema: object, root: dict[str, Any], depth: int) -> Any:
    if schema is True or not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return None if depth > _MAX_DEPTH else {}
    schema = _resolve(schema, root)
    if "const" in schema:
        return schema["const"]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    if "default" in schema:
        return schema["default"]
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches:
            return _value(branches[0], root, depth + 1)
    parts = schema.get("allOf")
    if isinstance(parts, list) and parts:
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        for part in parts:
            if isinstance(part, dict):
                part = _resolve(part, root)
                for key, value in part.items():
                    if key == "properties" and isinstance(value, dict):
                        merged["properties"] = {**merged.get("properties", {}), **value}
                    elif key == "required" and isinstance(value, list):
                        merged["required"] = [*merged.get("required", []), *value]
                    else:
                        merged.setdefault(key, value)
        return _value(merged, root, depth + 1)
    kind = _type(schema)
    if kind == "object":
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        required = schema.get("required")
        names = required if isinstance(required, list) else []
        return {name: _value(properties.get(name, {}), root, depth + 1) for name in names}
    if kind == "array":
        count = schema.get("minItems", 0)
        count = count if isinstance(count, int) and count > 0 else 0
        items = schema.get("items", {})
        return [_value(items, root, depth + 1) for _ in range(count)]
    if kind == "string":
        length = schema.get("minLength", 0)
        length = length if isinstance(length, int) and length > 2 else 2
        most = schema.get("maxLength")
        if isinstance(most, int) and 0 <= most < length:
            length = most
        return ("OK" * length)[:length]
    if kind in ("integer", "number"):
        return _number(schema, integer=kind == "integer")
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return {}


def _type(schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        names = [str(k).lower() for k in kind]
        kind = next((k for k in names if k != "null"), names[0] if names else None)
    if isinstance(kind, str):
        return kind.lower()
    if "properties" in schema or "required" in schema:
        return "object"
    if "items" in schema:
        return "array"
    return ""


def _number(schema: dict[str, Any], *, integer: bool) -> int | float:
    low = schema.get("minimum")
    above = schema.get("exclusiveMinimum")
    value: float = 1
    if isinstance(low, int | float) and not isinstance(low, bool):
        value = low
    if isinstance(above, int | float) and not isinstance(above, bool) and value <= above:
        value = above + 1
    high = schema.get("maximum")
    if isinstance(high, int | float) and not isinstance(high, bool) and value > high:
        value = high
    if integer:
        return int(value) if float(value).is_integer() else int(value) + 1
    return value
