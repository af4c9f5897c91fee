"""The building blocks of the response models: the wire time, percentages, envelopes.

Every response model is closed (``additionalProperties: false`` in the
document) and lists its fields in the order the API has always sent them.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import Annotated, Any, Self

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, WithJsonSchema, create_model

from uptime_server.clock import isoformat

# ISO 8601 UTC with Z, to the second: the API's one time format (docs/api.md).
UtcTime = Annotated[
    datetime,
    PlainSerializer(isoformat, return_type=str, when_used="json"),
    WithJsonSchema(
        {
            "type": "string",
            "format": "date-time",
            "description": "ISO 8601 UTC, e.g. 2026-01-31T12:00:00Z",
        }
    ),
]
Percent = Annotated[float, Field(ge=0, le=100)]
Count = Annotated[int, Field(ge=0)]


class ResponseModel(BaseModel):
    """A response object; aliases (``from``, ``24h``) are its names on the wire."""

    model_config = ConfigDict(
        extra="forbid", validate_by_name=True, validate_by_alias=True, serialize_by_alias=True
    )

    @classmethod
    def from_row(cls, row: Any, **values: Any) -> Self:
        """The model of *row*'s attributes of the same names, with *values* besides."""
        fields = {name: getattr(row, name) for name in cls.model_fields if name not in values}
        return cls.model_validate({**fields, **values})

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


@cache
def data(model: type[ResponseModel]) -> type[ResponseModel]:
    """The ``{"data": model}`` envelope, named after its model (``MonitorData``)."""
    return create_model(f"{model.__name__}Data", __base__=ResponseModel, data=(model, ...))


def data_of(model: ResponseModel) -> dict[str, Any]:
    """``{"data": model}`` as JSON."""
    return data(type(model))(data=model).to_json()


class Message(ResponseModel):
    message: str


class PageCounts(ResponseModel):
    page: Count
    limit: Count
    total: Count


def page_count(total: int, limit: int) -> int:
    return -(-total // limit)


class Pages(PageCounts):
    pages: Count
