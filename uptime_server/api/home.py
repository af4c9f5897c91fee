"""``GET /``: where a browser lands after sign-in.

A minimal page: who is signed in and where the API document is, or how to
sign in. The product is the API and the CLI; this page only confirms that a
sign-in worked.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response
from flask_login import current_user
from markupsafe import escape

from uptime_server.auth.sessions import current_session
from uptime_server.wsgi.context import settings

bp = Blueprint("home", __name__)

API_DOC = "/api/v1/openapi.json"

_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>uptime</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 3em auto">
<h1>uptime</h1>
{body}
</body></html>
"""


@bp.get("/")
def home() -> Any:
    body = _signed_in() if current_user.is_authenticated else _signed_out()
    response = Response(_PAGE.format(body=body), mimetype="text/html")
    response.headers["Cache-Control"] = "no-store"
    return response


def _signed_in() -> str:
    session = current_session()
    provider = session.provider if session else ""
    return (
        f"<p>Signed in as <strong>{escape(current_user.name)}</strong> "
        f"({escape(current_user.email)}) with {escape(provider)}.</p>\n"
        f'<p>API document: <a href="{API_DOC}">{API_DOC}</a></p>\n'
        "<p>From a terminal: <code>uptime login</code>, then "
        "<code>uptime monitors list</code>.</p>"
    )


def _signed_out() -> str:
    providers = sorted(settings().oauth_providers)
    if not providers:
        return (
            "<p>You are not signed in, and no sign-in provider is configured "
            "(UPTIME_OAUTH_&lt;NAME&gt;_CLIENT_ID).</p>\n"
            "<p>On the server's machine: <code>uptime login --local</code>.</p>"
        )
    links = "\n".join(
        f'<li><a href="/api/v1/auth/{escape(name)}/login">Sign in with {escape(name)}</a></li>'
        for name in providers
    )
    return (
        f"<p>You are not signed in.</p>\n<ul>\n{links}\n</ul>\n"
        "<p>From a terminal: <code>uptime login</code>.</p>"
    )
