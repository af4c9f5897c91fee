"""The building blocks of the response models: the wire time, percentages, envelopes.

Every response model is closed (``additionalProperties: false`` in the
document) and lists its fields in the order the API has always sent them.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from functools import cache
from typing import Annotated, Any, Self

from flask import Response
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    TypeAdapter,
    WithJsonSchema,
    create_model,
)

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


def data_of(model: ResponseModel) -> Response:
    """``{"data": model}``, a JSON response (a view may add a status: ``data_of(m), 201``)."""
    return json_response(data(type(model))(data=model))


_JSON: TypeAdapter[Any] = TypeAdapter(Any)  # plain JSON values, written by pydantic


def json_response(body: ResponseModel | Mapping[str, Any]) -> Response:
    """*body* (a model, or a dict of JSON values) as a JSON response, written by pydantic.

    ``jsonify(model.to_json())`` built a dict of JSON values and then encoded
    it again with Python's json, a visible share of a monitor's read
    (bench/README.md#api-answers-written-by-pydantic). The text is the same
    JSON but for two spellings: other than
    ASCII is sent as UTF-8, not ``\\u`` escapes, and a float such as 1e-05 is
    written 0.00001.
    """
    text = (
        body.model_dump_json().encode()
        if isinstance(body, ResponseModel)
        else _JSON.dump_json(body)
    )
    return Response(text + b"\n", mimetype="application/json")


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


class UserRef(ResponseModel):
    """A user as another object names them: who acted (docs/teams.md)."""

    id: int
    name: str

    @classmethod
    def maybe(cls, user_id: int | None, name: str | None) -> UserRef | None:
        """The reference, or None without a user (nobody, or an account since deleted)."""
        return None if user_id is None else cls(id=user_id, name=name or "")
