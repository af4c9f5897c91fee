"""``/invite/{token}``: the page an invitation's email links to (docs/teams.md#invitations).

Signed out, it says which team invites, as what and until when, and offers
each provider's sign-in with ``next`` back to this page, and the CLI's
``uptime teams join``. Signed in, it shows a button: a form POSTed to the
same URL, which accepts (``services.invitations.accept``) and redirects to
``/``. The POST must come from this site: the browser's Origin (else
Referer) must be the server's own (``UPTIME_BASE_URL``), so another site
cannot make a signed-in visitor join a team; a script without either is
refused too (it has the API). An unknown, used, revoked or expired token is
a 404 page that says nothing more.

The token stays in the URL the visitor already has: the page links only to
this server, sends no Referer elsewhere (``Referrer-Policy: same-origin``)
and is never cached.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from flask import Blueprint, Response, redirect, request
from flask_login import current_user

from uptime_server.auth.sessions import current_session, same_origin
from uptime_server.errors import ApiError
from uptime_server.services import invitations as invitation_service
from uptime_server.web.rendering import environment
from uptime_server.wsgi.context import now, settings

bp = Blueprint("invite", __name__)

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
MAX_TOKEN = 128  # a token is 43 characters; anything longer is no token of ours


def _page(status: int, **context: Any) -> Response:
    values: dict[str, Any] = {"invite": None, "user": None, "providers": [], "message": ""}
    values.update(context)
    html = environment().get_template("invite.html").render(**values)
    response = Response(html, status=status, mimetype="text/html")
    response.headers["Cache-Control"] = "no-store"
    response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    response.headers["Referrer-Policy"] = "same-origin"
    response.headers["X-Frame-Options"] = "DENY"
    return response


def _not_found() -> Response:
    return _page(
        404,
        title="Invitation not found",
        message="This invitation does not exist, was already used, was revoked or has expired.",
    )


def _sign_in_links(path: str) -> list[tuple[str, str]]:
    back = quote(path, safe="/")
    return [
        (name, f"/api/v1/auth/{quote(name, safe='')}/login?next={back}")
        for name in sorted(settings().oauth_providers)
    ]


@bp.get("/invite/<token>")
def show(token: str) -> Response:
    """The invitation: who invites to which team, and how to accept."""
    if len(token) > MAX_TOKEN:
        return _not_found()
    invite = invitation_service.pending(token, now=now())
    if invite is None:
        return _not_found()
    path = f"/invite/{token}"
    signed_in = current_user.is_authenticated
    return _page(
        200,
        title=f"Join {invite.team_name}",
        invite=invite,
        token=token,
        action=path,
        user=(current_user.name or current_user.email) if signed_in else None,
        providers=[] if signed_in else _sign_in_links(path),
    )


@bp.post("/invite/<token>")
def accept(token: str) -> Response:
    """Accept the invitation as the signed-in user, then go to ``/``."""
    origin = request.headers.get("Origin") or request.headers.get("Referer")
    if origin is None or not same_origin(origin, settings().base_url):
        return _page(
            403,
            title="Refused",
            message="This form must be sent from this server's own invitation page.",
        )
    if not current_user.is_authenticated:
        return redirect(f"/invite/{quote(token, safe='')}", code=303)
    if len(token) > MAX_TOKEN:
        return _not_found()
    session = current_session()
    try:
        invitation_service.accept(
            current_user,
            token,
            via=("session", session.id if session is not None else None),
            now=now(),
            settings=settings(),
        )
    except ApiError as exc:
        if exc.code == "NOT_FOUND":
            return _not_found()
        return _page(403, title="Could not join", message=exc.message)
    return redirect("/", code=303)
