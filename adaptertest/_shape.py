"""Shape checks for values that may have bypassed pydantic validation.

A driver can build models with ``model_construct`` or assign fields after validation,
so a ``Response`` may hold ``None`` where text belongs. The suite re-validates such
values before judging them, and reports the first bad field by location and error
type only: the value itself may be provider text.

Re-validation alone misses a value that validation would have converted: a ``str``
assigned to a bytes field re-validates as text, and ``"1"`` in an int field as 1. So
the re-validated model is also compared with the original, type by type.
"""

from __future__ import annotations

from typing import Any, get_args

from pydantic import BaseModel, ValidationError


def shape_problem(value: object, model: type[BaseModel]) -> str | None:
    """Why ``value`` is not a well-formed ``model`` (None when it is)."""
    if not isinstance(value, model):
        package = model.__module__.split(".")[0]
        return f"a {type(value).__qualname__}, not a {package}.{model.__qualname__}"
    try:
        revalidated = model.model_validate(value.model_dump(round_trip=True, warnings=False))
    except ValidationError as exc:
        first = exc.errors(include_input=False, include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "the model"
        return f"{where}: {first['type']}"
    except Exception as exc:  # noqa: BLE001 - a value so broken it cannot even be dumped
        return f"{type(exc).__name__} while reading its fields"
    return _converted(value, revalidated, "")


def _converted(original: object, valid: object, where: str) -> str | None:
    """The first field whose value validation would change into another type, if any.

    Walks declared model fields and the lists, tuples and dicts around models. Fields
    typed ``Any`` are skipped: their dump is plain data (a model in one becomes a dict).
    """
    if isinstance(valid, BaseModel) and isinstance(original, BaseModel):
        for name, info in type(valid).model_fields.items():
            if _mentions_any(info.annotation):
                continue
            path = f"{where}.{name}" if where else name
            found = _converted(getattr(original, name, None), getattr(valid, name), path)
            if found is not None:
                return found
        return None
    pairs: list[tuple[object, object, str]] = []
    if isinstance(valid, list | tuple) and isinstance(original, list | tuple):
        pairs = [
            (o, v, f"{where}.{i}") for i, (o, v) in enumerate(zip(original, valid, strict=True))
        ]
    elif isinstance(valid, dict) and isinstance(original, dict):
        pairs = [(original.get(k), v, f"{where}.{k}") for k, v in valid.items()]
    elif not isinstance(original, type(valid)):
        return (
            f"{where}: holds {type(original).__qualname__} where {type(valid).__qualname__} "
            "belongs (set past validation: construct the model instead)"
        )
    return next((found for o, v, w in pairs if (found := _converted(o, v, w))), None)


def _mentions_any(annotation: object) -> bool:
    return annotation is Any or any(_mentions_any(arg) for arg in get_args(annotation))
