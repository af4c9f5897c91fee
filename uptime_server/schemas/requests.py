"""Request bodies → models, or one VALIDATION_ERROR naming every bad field.

A field's constraints are declared once, as ``Annotated`` metadata, and so
are both checked and shown in the OpenAPI document. A ``Rule`` beside them
is the message a caller reads when the field breaks any of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    ValidationError,
)

from uptime_server.errors import validation_error


@dataclass(frozen=True)
class Rule:
    """What a field must be, in the words of its error message."""

    message: str
    # The pydantic error types it words; none: every error of the field.
    on: tuple[str, ...] = ()

    def words(self, error_type: str) -> bool:
        return not self.on or error_type in self.on


# Compared by identity: a union of Annotated types hashes its metadata.
@dataclass(frozen=True, eq=False)
class Checked:
    """A check pydantic has no constraint for, and the JSON Schema keywords saying it.

    Built by one helper from one constant, so what is checked and what the
    document shows cannot drift apart.
    """

    check: Callable[[Any], Any]
    schema: dict[str, Any] = field(default_factory=dict)

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> Any:
        return AfterValidator(self.check).__get_pydantic_core_schema__(source, handler)

    def __get_pydantic_json_schema__(
        self, schema: Any, handler: GetJsonSchemaHandler
    ) -> dict[str, Any]:
        return {**handler(schema), **self.schema}


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
        message = error_message(model, err)
        details.setdefault(name, [])
        if message not in details[name]:
            details[name].append(message)
    return details


def error_message(model: type[BaseModel], err: Any) -> str:
    """The ``Rule`` of the field of *err* that words it, or pydantic's message."""
    if err["type"] == "extra_forbidden":
        return "unknown field"
    info = model.model_fields.get(str(err["loc"][0])) if err["loc"] else None
    rules = [m for m in info.metadata if isinstance(m, Rule)] if info else []
    for rule in rules:
        if rule.words(err["type"]):
            return rule.message
    return err["msg"].removeprefix("Value error, ")


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
