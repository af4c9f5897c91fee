"""Cached badges and status pages answered before Flask, straight from the render cache.

A cached badge costs a memory lookup, but through Flask it still paid a
whole request: the URL map, flask-login's and flask-limiter's hooks, the
session's Vary, the after-request headers. ``PublicPages`` answers GET and HEAD of
``/badge/{badge_token}/{kind}.svg``, ``/status/{slug}`` and
``/status/{slug}.json`` itself when the entry is in this process's
``RenderCache`` (``peek``: nothing is rendered here). The answer is the one
``web/public.py`` gives for the same entry: status, body and headers, in the
same order (tests/fast_paths/test_public_pages.py compares them byte for byte).

Everything else goes to Flask unchanged: a miss (Flask renders it, or
answers 404 for an unknown, rotated or turned-off token: those are never in
the cache, and the services that rotate a token, turn badges off or change
a monitor drop its entries through ``services.render_purges``), any other method or path, and any
request out of the ordinary: a cookie or an Authorization header (Flask's
session and sign-in hooks might answer differently), a request body,
``If-Match`` (412), or a path that is not plain ASCII. The public routes are
not rate limited (``app._init_limiter`` exempts them), so there is no budget
to count here.
"""

from __future__ import annotations

import time
from functools import lru_cache

from werkzeug.http import http_date, is_resource_modified, parse_accept_header
from werkzeug.utils import get_content_type

from uptime_server.web.badge_figures import KINDS
from uptime_server.web.public import (
    BADGE_HEADERS,
    BADGE_TTL,
    HTML_PAGE_HEADERS,
    PAGE_TTL,
)
from uptime_server.web.render_cache import RenderCache, Rendered
from uptime_server.wsgi.types import RESPONSE_HEADERS, Answer, Environ, Headers

BADGE_PREFIX = "/badge/"
PAGE_PREFIX = "/status/"
BADGE_FILES = {f"{kind}.svg": kind for kind in KINDS}
METHODS = frozenset(("GET", "HEAD"))
# Request headers after which Flask answers, whatever the cache holds.
UNUSUAL = ("HTTP_COOKIE", "HTTP_AUTHORIZATION", "HTTP_IF_MATCH", "HTTP_TRANSFER_ENCODING")
CONDITIONAL = (
    "HTTP_IF_NONE_MATCH",
    "HTTP_IF_MODIFIED_SINCE",
    "HTTP_IF_UNMODIFIED_SINCE",
    "HTTP_IF_RANGE",
    "HTTP_RANGE",
)
_AFTER = list(RESPONSE_HEADERS.items())  # the app's after-request headers
_ENTITY = frozenset(("Content-Type", "Content-Length", "Content-Encoding"))  # not in a 304


class PublicPages:
    segments = ("badge", "status")

    def __init__(self, badges: RenderCache, pages: RenderCache) -> None:
        self.badges = badges
        self.pages = pages
        self._date: tuple[int, str] = (0, "")

    def answer(self, environ: Environ) -> Answer | None:
        found = self._cached(environ)
        if found is None:
            return None
        hit, max_age, extra = found
        return self._hit(environ, hit, max_age, extra)

    def _cached(self, environ: Environ) -> tuple[Rendered, int, tuple[tuple[str, str], ...]] | None:
        """The cache entry a plain GET/HEAD of a public URL asks for, or None: Flask's."""
        path: str = environ.get("PATH_INFO", "")
        if path.startswith(BADGE_PREFIX):
            token, _, name = path[len(BADGE_PREFIX) :].partition("/")
            kind = BADGE_FILES.get(name)
            if not token or kind is None:
                return None
            cache, key, max_age, extra = self.badges, (token, kind), BADGE_TTL, BADGE_HEADERS
        elif path.startswith(PAGE_PREFIX):
            slug = path[len(PAGE_PREFIX) :]
            if "/" in slug:
                return None
            if slug.endswith(".json") and len(slug) > len(".json"):
                cache, key, max_age, extra = self.pages, (slug[:-5], "json"), PAGE_TTL, ()
            else:
                cache, key, max_age, extra = self.pages, (slug, "html"), PAGE_TTL, HTML_PAGE_HEADERS
        else:
            return None
        if (
            environ.get("REQUEST_METHOD") not in METHODS
            or not path.isascii()
            or environ.get("CONTENT_LENGTH", "0") not in ("", "0")
            or any(name in environ for name in UNUSUAL)
        ):
            return None
        hit = cache.peek(key)
        return None if hit is None else (hit, max_age, extra)

    def _hit(
        self,
        environ: Environ,
        hit: Rendered,
        max_age: int,
        extra: tuple[tuple[str, str], ...],
    ) -> Answer:
        """Status, headers and body of *hit*, as ``public._cacheable`` makes them in Flask."""
        gzipped = hit.gzipped is not None and _takes_gzip(environ.get("HTTP_ACCEPT_ENCODING"))
        body = hit.gzipped if gzipped else hit.body
        assert body is not None
        etag = f'"{hit.etag}-gz"' if gzipped else f'"{hit.etag}"'
        headers: Headers = [
            ("Content-Type", _content_type(hit.mimetype)),
            ("Content-Length", str(len(body))),
        ]
        if gzipped:
            headers.append(("Content-Encoding", "gzip"))
        headers.append(("ETag", etag))
        # Flask's session adds "Cookie" to Vary: after the others when there are some.
        if hit.gzipped is not None:
            headers.append(("Vary", "Accept-Encoding, Cookie"))
        headers += [("Cache-Control", f"public, max-age={max_age}"), ("Date", self._now())]
        headers += extra
        headers += _AFTER
        if hit.gzipped is None:
            headers.append(("Vary", "Cookie"))
        if any(name in environ for name in CONDITIONAL) and not is_resource_modified(environ, etag):
            return ("304 NOT MODIFIED", [h for h in headers if h[0] not in _ENTITY], b"")
        return ("200 OK", headers, body)

    def _now(self) -> str:
        """The Date header (werkzeug's format), formatted once a second."""
        second = int(time.time())
        at, text = self._date
        if at != second:
            text = http_date(second)
            self._date = (second, text)
        return text


@lru_cache(maxsize=256)
def _takes_gzip(accept_encoding: str | None) -> bool:
    """Whether Flask's ``"gzip" in request.accept_encodings`` holds for this header."""
    return "gzip" in parse_accept_header(accept_encoding)


@lru_cache(maxsize=16)
def _content_type(mimetype: str) -> str:
    return get_content_type(mimetype, "utf-8")
