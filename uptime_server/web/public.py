"""Public pages without a session: ``/status/{slug}`` (HTML and JSON) and ``/badge/{token}/...``.

Both read roll-ups only and are cached in-process for a short time
(``RenderCache``, on the injected clock): a burst of visitors costs one
render. Every answer carries an ETag and Cache-Control, and an
``If-None-Match`` that matches gets 304 without a body; large bodies go
gzipped to clients that accept it (compressed once per render).

A badge is cached by its token, a page by its slug. The services that
change what they show (a monitor changed or deleted, a token rotated, a page
edited) drop their entries once committed (``services.render_purges``), so in this
process the old answers stop at once; another process serving the same
database stops giving them within ``BADGE_TTL`` (``PAGE_TTL``), the max-age
every downstream cache is allowed anyway. Unknown tokens are never cached
(docs/status-pages.md#badges).
"""

from __future__ import annotations

import json
from typing import Any

from flask import Blueprint, Response, request

from uptime_server.auth.badge_tokens import monitor_for
from uptime_server.clock import isoformat
from uptime_server.errors import ApiError
from uptime_server.models import StatusPage
from uptime_server.schemas.status_pages import SLUG_PATTERN, PublicPage
from uptime_server.web import page_content
from uptime_server.web.badge_figures import KINDS, figure
from uptime_server.web.render_cache import RenderCache, Rendered, rendered
from uptime_server.web.rendering import CONTENT_SECURITY_POLICY, badge_svg, status_page_html
from uptime_server.wsgi.access import public
from uptime_server.wsgi.context import now, state
from uptime_server.wsgi.operations import JSON, documented

bp = Blueprint("public", __name__)

PAGE_TTL = 30  # seconds a rendered page is served from memory, and may be cached by others
BADGE_TTL = 60
UPTIME_PERIODS = ("24h", "7d", "30d", "90d")
# Headers of each kind of answer besides the cache's own (also fast_paths/public_pages').
HTML_PAGE_HEADERS = (
    ("Content-Security-Policy", CONTENT_SECURITY_POLICY),
    ("Referrer-Policy", "no-referrer"),
)
BADGE_HEADERS = (("Content-Security-Policy", "default-src 'none'"),)


def page_cache() -> RenderCache:
    return state().services["status_page_cache"]


def badge_cache() -> RenderCache:
    return state().services["badge_cache"]


def _path(name: str, schema: JSON) -> JSON:
    return {"name": name, "in": "path", "required": True, "schema": schema}


SLUG_PARAM = _path("slug", {"type": "string", "pattern": SLUG_PATTERN})
TOKEN_PARAM = _path("badge_token", {"type": "string", "minLength": 32, "maxLength": 32})
NOT_MODIFIED = {"description": "Not modified (If-None-Match matched the ETag)"}
HTML = {
    "description": "The page, for people",
    "content": {"text/html": {"schema": {"type": "string"}}},
}
SVG = {
    "description": "A shields.io-style badge",
    "content": {"image/svg+xml": {"schema": {"type": "string"}}},
}


def _public_doc(op_id: str, ok: Any, params: tuple[JSON, ...]) -> Any:
    return documented(
        op_id,
        tag="public",
        ok={200: ok, 304: NOT_MODIFIED},
        errors=(404,),
        params=params,
        limited=False,
    )


@bp.get("/status/<slug>.json")
@public
@_public_doc("getStatusPageJson", PublicPage, (SLUG_PARAM,))
def status_page_json(slug: str) -> Any:
    """A public status page as JSON."""
    return _page(slug, "json")


@bp.get("/status/<slug>")
@public
@_public_doc("getStatusPage", HTML, (SLUG_PARAM,))
def status_page(slug: str) -> Any:
    """A public status page."""
    return _page(slug, "html")


def _page(slug: str, fmt: str) -> Response:
    def render() -> Rendered | None:
        page = StatusPage.get_or_none(StatusPage.slug == slug)
        if page is None:
            return None
        # Plain dicts (the PublicPage shape, which a test holds them to):
        # a pydantic round trip of 9,000 day cells would cost more than the render.
        content = page_content.build(page, now())
        if fmt == "json":
            body = json.dumps(content, separators=(",", ":"), default=isoformat).encode()
            return rendered(body, "application/json")
        return rendered(status_page_html(content).encode(), "text/html")

    # An unknown slug is not cached: a page created next is served at once.
    hit = page_cache().get((slug, fmt), render) if len(slug) <= 64 else None
    if hit is None:
        raise ApiError("NOT_FOUND", "No status page at this address")
    return _cacheable(hit, PAGE_TTL, HTML_PAGE_HEADERS if fmt == "html" else ())


@bp.get("/badge/<badge_token>/status.svg")
@public
@_public_doc("getStatusBadge", SVG, (TOKEN_PARAM,))
def status_badge(badge_token: str) -> Any:
    """A monitor's status badge."""
    return _badge(badge_token, "status")


@bp.get("/badge/<badge_token>/uptime-<period>.svg")
@public
@_public_doc(
    "getUptimeBadge",
    SVG,
    (TOKEN_PARAM, _path("period", {"type": "string", "enum": list(UPTIME_PERIODS)})),
)
def uptime_badge(badge_token: str, period: str) -> Any:
    """A monitor's uptime badge."""
    if period not in UPTIME_PERIODS:
        raise ApiError("NOT_FOUND", "No such badge")
    return _badge(badge_token, f"uptime-{period}")


@bp.get("/badge/<badge_token>/response-time.svg")
@public
@_public_doc("getResponseTimeBadge", SVG, (TOKEN_PARAM,))
def response_time_badge(badge_token: str) -> Any:
    """A monitor's response-time badge."""
    return _badge(badge_token, "response-time")


def _badge(token: str, kind: str) -> Response:
    assert kind in KINDS

    def render() -> Rendered | None:
        monitor = monitor_for(token)
        if monitor is None:
            return None  # not cached: a token turned on next answers at once
        svg = badge_svg(*figure(monitor, kind, now()))
        return rendered(svg.encode(), "image/svg+xml")

    hit = badge_cache().get((token, kind), render)
    if hit is None:
        raise ApiError("NOT_FOUND", "No such badge")
    return _cacheable(hit, BADGE_TTL, BADGE_HEADERS)


def _cacheable(hit: Rendered, max_age: int, extra: tuple[tuple[str, str], ...]) -> Response:
    """The cached body (gzipped when the client takes it), with its ETag and Cache-Control."""
    if hit.gzipped is not None and "gzip" in request.accept_encodings:
        response = Response(hit.gzipped, mimetype=hit.mimetype)
        response.headers["Content-Encoding"] = "gzip"
        response.set_etag(hit.etag + "-gz")  # another representation, another tag
    else:
        response = Response(hit.body, mimetype=hit.mimetype)
        response.set_etag(hit.etag)
    if hit.gzipped is not None:
        response.vary.add("Accept-Encoding")
    response.headers["Cache-Control"] = f"public, max-age={max_age}"
    response.make_conditional(request)
    response.headers.extend(extra)
    return response
