"""The registry of documented operations: ``@documented`` next to each view.

A view says what it answers (response models by status), which errors of
its own it can give, its parameters and its body; ``api/openapi.py`` walks
Flask's URL map and builds the document from these records. What follows
from the route itself is not repeated here: the path and method, whether
it is public (``access.public``) or refused to API tokens
(``access.session_only``), the 403 of the CSRF Origin rule and of token
scopes, and the errors every operation of its kind can give (401, 429, 500;
400 and 413 with a body).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from uptime_server.config import Settings
from uptime_server.db import INT64_MAX

JSON = dict[str, Any]


@dataclass(frozen=True)
class RequestSchema:
    """A request body whose schema depends on the server's settings."""

    name: str
    build: Callable[[Settings], JSON]


# A response model, or a whole OpenAPI response object (redirects, text).
Response = type[BaseModel] | JSON
Body = type[BaseModel] | RequestSchema


@dataclass(frozen=True)
class Operation:
    op_id: str
    summary: str
    tag: str
    ok: Mapping[int, Response]
    errors: tuple[int, ...] = ()
    params: tuple[JSON, ...] = ()
    body: Body | None = None
    body_required: bool = True
    limited: bool = True
    security: list[JSON] | None = field(default=None)

    def error_statuses(self, *, is_public: bool, session_only: bool = False) -> list[int]:
        statuses = set(self.errors) | {500}
        if self.limited:
            statuses.add(429)
        if not is_public:
            # 403: the CSRF Origin rule, or a token whose scope does not reach it
            statuses |= {401, 403}
        if session_only:
            statuses.add(403)  # any API token
        if self.body is not None:
            statuses |= {400, 413}
        return sorted(statuses)


def documented(
    op_id: str, *, tag: str, ok: Mapping[int, Response] | Response, **more: Any
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Record the operation a view serves; see ``Operation`` for *more*.

    The summary is the first line of the view's docstring. *ok* is the
    responses by status, or the one 200 response. Integer path parameters
    (``<int:monitor_id>``) follow from the route; *params* lists the others.
    """
    responses = ok if isinstance(ok, Mapping) and all(isinstance(k, int) for k in ok) else {200: ok}

    def mark(view: Callable[..., Any]) -> Callable[..., Any]:
        summary = (view.__doc__ or "").strip().splitlines()[0].rstrip(".")
        if not summary:
            raise TypeError(f"{view.__name__}: a documented view needs a docstring")
        operation = Operation(op_id, summary, tag, responses, **more)
        view.uptime_operation = operation  # type: ignore[attr-defined]
        return view

    return mark


def documenter(tag: str) -> Callable[..., Callable[[Callable[..., Any]], Callable[..., Any]]]:
    """``documented`` with the tag of one resource's views filled in."""

    def document(op_id: str, **more: Any) -> Any:
        return documented(op_id, tag=tag, **more)

    return document


def operation_of(view: Callable[..., Any] | None) -> Operation | None:
    return getattr(view, "uptime_operation", None)


def query(name: str, schema: JSON, description: str = "") -> JSON:
    param: JSON = {"name": name, "in": "query", "required": False, "schema": schema}
    if description:
        param["description"] = description
    return param


ID_SCHEMA = {"type": "integer", "minimum": 1, "maximum": INT64_MAX}
TIME_QUERY = {"type": "string", "format": "date-time"}


def path_id(name: str) -> JSON:
    return {"name": name, "in": "path", "required": True, "schema": ID_SCHEMA}


def choice(name: str, allowed: tuple[str, ...] | list[str], default: str | None = None) -> JSON:
    schema: JSON = {"type": "string", "enum": list(allowed)}
    if default is not None:
        schema["default"] = default
    return query(name, schema)


def limit(default: int, maximum: int) -> JSON:
    return query("limit", {"type": "integer", "minimum": 1, "maximum": maximum, "default": default})


PAGE = query("page", {"type": "integer", "minimum": 1, "maximum": INT64_MAX, "default": 1})


def redirect_response(description: str) -> JSON:
    return {
        "description": description,
        "headers": {"Location": {"schema": {"type": "string"}, "required": True}},
    }


def json_response(schema: JSON, description: str = "OK") -> JSON:
    return {"description": description, "content": {"application/json": {"schema": schema}}}
