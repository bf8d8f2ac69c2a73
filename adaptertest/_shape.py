"""Shape checks for values that may have bypassed pydantic validation.

A driver can build models with ``model_construct`` or assign fields after validation,
so a ``Response`` may hold ``None`` where text belongs. The suite re-validates such
values before judging them, and reports the first bad field by location and error
type only: the value itself may be provider text.
"""

from __future__ import annotations

from pydantic import BaseModel, ValidationError


def shape_problem(value: object, model: type[BaseModel]) -> str | None:
    """Why ``value`` is not a well-formed ``model`` (None when it is)."""
    if not isinstance(value, model):
        package = model.__module__.split(".")[0]
        return f"a {type(value).__qualname__}, not a {package}.{model.__qualname__}"
    try:
        model.model_validate(value.model_dump(round_trip=True, warnings=False))
    except ValidationError as exc:
        first = exc.errors(include_input=False, include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "the model"
        return f"{where}: {first['type']}"
    except Exception as exc:  # noqa: BLE001 - a value so broken it cannot even be dumped
        return f"{type(exc).__name__} while reading its fields"
    return None
