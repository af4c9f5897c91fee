"""The OpenAPI 3.1 document of the whole API, served at /api/v1/openapi.json.

Built from the app itself (docs/api.md#endpoint-index): every route of
Flask's URL map with its ``@documented`` operation, then the routes only a
fast path answers (``FAST_PATH_ROUTES``: the ping route), and the JSON Schemas of
the pydantic models those operations name (``uptime_server.schemas``). A
changed model is a changed document. Request schemas bound to settings (the
minimum check interval, the known locations) come from the running server
(``request_schemas``); the document is built per app and cached on first use.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from flask import Blueprint, Flask, current_app, jsonify
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from uptime_server import __version__
from uptime_server.config import Settings
from uptime_server.errors import STATUS_BY_CODE
from uptime_server.schemas.errors import Error
from uptime_server.wsgi.access import (
    is_agent_only,
    is_public,
    is_session_only,
    is_team_free,
    public,
)
from uptime_server.wsgi.operations import (
    JSON,
    Operation,
    RequestSchema,
    documented,
    json_response,
    operation_of,
    path_id,
    query,
)

bp = Blueprint("openapi", __name__)

ERROR_TEXT = {
    400: "Invalid request: VALIDATION_ERROR (details name the fields), INVALID_JSON, ...",
    401: "No valid session or API token (unknown, revoked or expired)",
    403: "Cross-origin request refused, API token scope too narrow (FORBIDDEN), "
    "quota exceeded, or sign-up closed",
    404: "No such resource, or one of another user",
    405: "Method not allowed on this resource (with an Allow header)",
    409: "The resource is not in a state that allows this",
    413: "Request body over 1 MiB",
    429: "Rate limit exceeded; retry after Retry-After seconds",
    500: "Internal error (no details are disclosed)",
    503: "A ping the server could not record (database unavailable); send it again",
    504: "A test run did not finish within UPTIME_TEST_RUN_TIMEOUT; nothing was recorded",
}
RATE_HEADERS = {
    "Retry-After": "Seconds until the limit resets",
    "X-RateLimit-Limit": "Requests allowed in the window",
    "X-RateLimit-Remaining": "Requests left in the window",
    "X-RateLimit-Reset": "Epoch seconds when the window resets",
}
TAGS = (
    "auth",
    "tokens",
    "monitors",
    "notifications",
    "channels",
    "status-pages",
    "maintenance",
    "agents",
    "pings",
    "public",
    "service",
)
# The ping route (fast_paths/pings.py) has no Flask view to carry its operation.
_PING_OK = {"description": "Recorded", "content": {"text/plain": {"schema": {"type": "string"}}}}
_TOKEN = {**query("token", {"type": "string", "maxLength": 64}), "in": "path", "required": True}
_KIND = {
    **query(
        "kind",
        {"type": "string", "pattern": "^(start|fail|log|[0-9]{1,3})$"},
        "start, fail, log, or the job's exit code (0 is success, 1..255 failure)",
    ),
    "in": "path",
    "required": True,
}


def _ping(op_id: str, summary: str, *params: JSON) -> Operation:
    return Operation(op_id, summary, "pings", {200: _PING_OK}, errors=(404, 503), params=params)


# (path, method, operation) of each route a fast path answers alone; all public.
FAST_PATH_ROUTES = (
    ("/ping/{token}", "get", _ping("ping", "Report a successful run", _TOKEN)),
    (
        "/ping/{token}",
        "post",
        _ping("pingPost", "Report a successful run, with a message as the body", _TOKEN),
    ),
    (
        "/ping/{token}/{kind}",
        "get",
        _ping("pingKind", "Report a start, a failure, an exit code or a log line", _TOKEN, _KIND),
    ),
    (
        "/ping/{token}/{kind}",
        "post",
        _ping(
            "pingKindPost",
            "Report a start, a failure, an exit code or a log line, with a message as the body",
            _TOKEN,
            _KIND,
        ),
    ),
)
# Sessions and API tokens; token management and sign-in take a session only.
EITHER = [{"session": []}, {"apiToken": []}]
SESSION = [{"session": []}]
REF = "#/components/schemas/{model}"


def ref(name: str) -> JSON:
    return {"$ref": REF.format(model=name)}


def build_document(settings: Settings, app: Flask) -> JSON:
    """The document of *app*'s documented routes, for *settings*."""
    routes = list(_routes(app))
    schemas = _model_schemas(op for _, _, op, _, _ in routes)
    paths: JSON = {}
    for path, method, operation, access, ids in routes:
        body = operation.body
        if isinstance(body, RequestSchema):
            schemas[body.name] = body.build(settings)
        paths.setdefault(path, {})[method] = _operation_json(operation, ids, *access)
    schemas["Error"] = _error_schema(schemas.pop("Error"), schemas.pop("ErrorBody"))
    _strip_titles(schemas)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "uptime",
            "version": __version__,
            "description": "Self-hosted HTTP/HTTPS uptime monitor. Every endpoint needs the "
            "session cookie or an API token (Authorization: Bearer upt_...) unless marked "
            "otherwise. Errors: {error: {code, message, details}}.",
        },
        "servers": [{"url": "/"}],
        "security": EITHER,
        "tags": [{"name": n} for n in TAGS],
        "paths": paths,
        "components": {
            "securitySchemes": {
                "session": {"type": "apiKey", "in": "cookie", "name": "session_cookie"},
                "apiToken": {
                    "type": "http",
                    "scheme": "bearer",
                    "bearerFormat": "upt_...",
                    "description": "An API token (POST /api/v1/tokens). read: every GET; "
                    "write: everything but tokens and sign-in; ping: no API endpoint.",
                },
                "agentToken": {
                    "type": "http",
                    "scheme": "bearer",
                    "bearerFormat": "upa_...",
                    "description": "A probe agent's token (uptime server agent-token, "
                    "POST /api/v1/agents): the agent API only.",
                },
                "metricsToken": {"type": "http", "scheme": "bearer"},
            },
            "schemas": schemas,
            "responses": _error_responses(schemas["Error"]),
        },
    }


def _routes(app: Flask) -> Any:
    """(path, method, operation, (public, session only), path ids) of every documented route."""
    for rule in app.url_map.iter_rules():
        view = app.view_functions.get(rule.endpoint)
        operation = operation_of(view)
        if operation is None:
            continue  # pages for browsers, static files
        path = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", rule.rule)
        ids = tuple(path_id(name) for name in re.findall(r"<int:(\w+)>", rule.rule))
        for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
            team_scoped = not (is_public(view) or is_team_free(view) or is_agent_only(view))
            access = (is_public(view), is_session_only(view), team_scoped)
            yield path, method.lower(), operation, access, ids
    for path, method, operation in FAST_PATH_ROUTES:
        yield path, method, operation, (True, False, False), ()


def _model_schemas(operations: Any) -> JSON:
    """The JSON Schemas of every model the operations name, and of the error."""
    models: dict[tuple[type[BaseModel], str], None] = {(Error, "serialization"): None}
    for operation in operations:
        for response in operation.ok.values():
            if isinstance(response, type):
                models[(response, "serialization")] = None
        if isinstance(operation.body, type):
            models[(operation.body, "validation")] = None
    _, defs = models_json_schema(list(models), ref_template=REF)
    return copy.deepcopy(defs.get("$defs", {}))


def _response_json(response: Any, description: str = "OK") -> JSON:
    if not isinstance(response, type):
        return response
    return json_response(ref(response.__name__), description)


# Every operation that acts in a team takes it from this header (docs/teams.md).
TEAM_HEADER = {
    "name": "X-Uptime-Team",
    "in": "header",
    "required": False,
    "schema": {"type": "string", "minLength": 1, "maxLength": 64},
    "description": "The team to act in, by id or slug. Default: a session's personal team, "
    "a token's own team. A team you are not in: 404 TEAM_NOT_FOUND.",
}


def _operation_json(
    operation: Operation,
    path_ids: tuple[JSON, ...],
    is_public: bool,
    session_only: bool,
    team_scoped: bool = False,
) -> JSON:
    responses: JSON = {
        str(status): _response_json(response, "Created" if status == 201 else "OK")
        for status, response in operation.ok.items()
    }
    statuses = set(operation.error_statuses(is_public=is_public, session_only=session_only))
    if team_scoped:
        statuses.add(404)  # TEAM_NOT_FOUND
    for status in sorted(statuses):
        responses[str(status)] = {"$ref": f"#/components/responses/E{status}"}
    out: JSON = {
        "operationId": operation.op_id,
        "summary": operation.summary,
        "tags": [operation.tag],
        "responses": responses,
    }
    params = [*path_ids, *operation.params, *([TEAM_HEADER] if team_scoped else [])]
    if params:
        out["parameters"] = params
    body = operation.body
    if body is not None:
        name = body.name if isinstance(body, RequestSchema) else body.__name__
        out["requestBody"] = {
            "required": operation.body_required,
            "content": {"application/json": {"schema": ref(name)}},
        }
    if operation.security is not None:
        out["security"] = operation.security
    elif is_public:
        out["security"] = []
    elif session_only:
        out["security"] = SESSION
    return out


def _error_schema(error: JSON, body: JSON, codes: list[str] | None = None) -> JSON:
    """The error object, inline, with ``code`` one of *codes* (default: every code)."""
    body = copy.deepcopy(body)
    body["properties"]["code"]["enum"] = codes or sorted(STATUS_BY_CODE)
    return {**copy.deepcopy(error), "properties": {"error": body}}


def _error_responses(error: JSON) -> JSON:
    out: JSON = {}
    for status, text in ERROR_TEXT.items():
        codes = sorted(code for code, st in STATUS_BY_CODE.items() if st == status)
        schema = _error_schema(error, error["properties"]["error"], codes)
        response: JSON = {
            "description": text,
            "content": {"application/json": {"schema": schema}},
        }
        if status == 429:
            response["headers"] = {
                name: {"description": desc, "schema": {"type": "integer"}}
                for name, desc in RATE_HEADERS.items()
            }
        out[f"E{status}"] = response
    return out


def _strip_titles(node: Any) -> None:
    """pydantic titles every schema after its name; the document names them already."""
    if isinstance(node, dict):
        if isinstance(node.get("title"), str):
            node.pop("title")
        for value in node.values():
            _strip_titles(value)
    elif isinstance(node, list):
        for item in node:
            _strip_titles(item)


@bp.get("/openapi.json")
@public
@documented("openapi", tag="service", ok={200: json_response({"type": "object"})})
def openapi_json() -> Any:
    """This document."""
    from uptime_server.wsgi.context import state

    uptime = state()
    document = uptime.openapi
    if document is None:
        document = uptime.openapi = build_document(uptime.settings, current_app)
    return jsonify(document)
