"""Request bodies → models, or one VALIDATION_ERROR naming every bad field.

A field's constraints are declared once, as ``Annotated`` metadata, and so
are both checked and shown in the OpenAPI document. A ``Rule`` beside them
is the message a caller reads when the field breaks any of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from uptime_server.errors import validation_error


@dataclass(frozen=True)
class Rule:
    """What a field must be, in the words of its error message."""

    message: str


M = TypeVar("M", bound=BaseModel)


def require_object(data: Any, message: str = "must be a JSON object") -> dict[str, Any]:
    if not isinstance(data, dict):
        raise validation_error({"body": [message]})
    return data


def field_errors(model: type[BaseModel], exc: ValidationError) -> dict[str, list[str]]:
    """Each bad field of *exc* with its ``Rule`` (or pydantic's message), once."""
    details: dict[str, list[str]] = {}
    for err in exc.errors():
        name = str(err["loc"][0]) if err["loc"] else "body"
        if err["type"] == "extra_forbidden":
            message = "unknown field"
        else:
            field = model.model_fields.get(name)
            rules = [m for m in field.metadata if isinstance(m, Rule)] if field else []
            message = rules[0].message if rules else err["msg"].removeprefix("Value error, ")
        details.setdefault(name, [])
        if message not in details[name]:
            details[name].append(message)
    return details


def parse_body(model: type[M], data: Any, not_object: str = "must be a JSON object") -> M:
    """*data* as *model*, or a VALIDATION_ERROR naming every bad field."""
    try:
        return model.model_validate(require_object(data, not_object))
    except ValidationError as exc:
        raise validation_error(field_errors(model, exc)) from None


def check_fields(model: type[M], data: dict[str, Any]) -> tuple[M | None, dict[str, list[str]]]:
    """(*data* as *model*, {}) or (None, every bad field), for rules between fields after."""
    try:
        return model.model_validate(data), {}
    except ValidationError as exc:
        return None, field_errors(model, exc)
