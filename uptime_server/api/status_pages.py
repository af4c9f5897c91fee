"""The status-pages resource: /api/v1/status-pages (docs/status-pages.md).

A page is addressed by its id or its slug (slugs always hold a letter, so the
two never clash). The public page itself is served by ``web.public``.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint

from uptime_server.api.body import json_body
from uptime_server.auth.teams import current_acting
from uptime_server.schemas.base import Message, data, data_of, json_response
from uptime_server.schemas.status_pages import StatusPage, StatusPageIn, StatusPageList
from uptime_server.services import status_pages as status_page_service
from uptime_server.wsgi.access import requires
from uptime_server.wsgi.context import now, settings
from uptime_server.wsgi.operations import documenter

bp = Blueprint("status_pages", __name__, url_prefix="/status-pages")
doc = documenter("status-pages")
KEY_PARAM = {
    "name": "page",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "minLength": 1, "maxLength": 64},
    "description": "The page's id or slug.",
}


def _out(row: Any) -> StatusPage:
    return StatusPage.of(row, settings().base_url)


@bp.get("")
@doc("listStatusPages", ok=StatusPageList)
def list_pages() -> Any:
    """List the caller's status pages."""
    rows = status_page_service.list_pages(current_acting())
    return json_response(StatusPageList(data=[_out(r) for r in rows]))


@bp.post("")
@requires("admin")
@doc("createStatusPage", ok={201: data(StatusPage)}, errors=(403, 409), body=StatusPageIn)
def create() -> Any:
    """Create a status page."""
    row = status_page_service.create_page(current_acting(), json_body(), now=now())
    return data_of(_out(row)), 201


@bp.get("/<page>")
@doc("getStatusPage", ok=data(StatusPage), errors=(404,), params=(KEY_PARAM,))
def show(page: str) -> Any:
    """One status page's configuration."""
    return data_of(_out(status_page_service.get_owned(current_acting(), page)))


@bp.put("/<page>")
@requires("admin")
@doc(
    "updateStatusPage",
    ok=data(StatusPage),
    errors=(404, 409),
    params=(KEY_PARAM,),
    body=StatusPageIn,
)
def update(page: str) -> Any:
    """Change some of a status page's fields."""
    acting = current_acting()
    row = status_page_service.get_owned(acting, page)
    new = status_page_service.update_page(acting, row, json_body(), now=now())
    return data_of(_out(new))


@bp.delete("/<page>")
@requires("admin")
@doc("deleteStatusPage", ok=Message, errors=(404,), params=(KEY_PARAM,))
def delete(page: str) -> Any:
    """Delete a status page."""
    acting = current_acting()
    status_page_service.delete_page(acting, status_page_service.get_owned(acting, page), now=now())
    return json_response(Message(message="Status page deleted"))
