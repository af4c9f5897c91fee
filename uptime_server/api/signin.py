"""Sign-in endpoints: /auth/<provider>/login, /auth/<provider>/callback and
/auth/cli/exchange, all reachable without a session and limited per IP.

Login while signed in links the provider account to the current user. Every
browser sign-in mints a new session token and ends the one the browser had.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import Blueprint, Response, redirect, request
from flask_login import current_user

from uptime_server.api.body import json_body
from uptime_server.auth import cli_handoff, login_state, signup
from uptime_server.auth.oauth import authorization_url, fetch_profile
from uptime_server.auth.provider_spec import ProviderSpec, provider_spec
from uptime_server.auth.sessions import create_session, hash_token, session_token, set_cookie
from uptime_server.db import write_tx
from uptime_server.errors import ApiError
from uptime_server.models import OAuthState, Session, User
from uptime_server.schemas.auth import CliSession
from uptime_server.schemas.auth import User as UserOut
from uptime_server.schemas.auth_requests import CliExchangeRequest, parse_cli_exchange
from uptime_server.schemas.base import data, data_of
from uptime_server.wsgi.access import login_limited, public, session_only, team_free
from uptime_server.wsgi.context import now, settings
from uptime_server.wsgi.operations import JSON, documenter, query, redirect_response

log = logging.getLogger(__name__)

bp = Blueprint("signin", __name__, url_prefix="/auth")
doc = documenter("auth")


PROVIDER: JSON = {
    "name": "provider",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": "^[a-z0-9]+$"},
    "description": "github, google, or another configured provider name",
    "examples": {"github": {"value": "github"}, "google": {"value": "google"}},
}


def redirect_uri(provider: str) -> str:
    """The callback URL registered at the provider, exactly."""
    return f"{settings().base_url}/api/v1/auth/{provider}/callback"


@bp.get("/<provider>/login")
@team_free
@public
@session_only
@login_limited
@doc(
    "login",
    ok={302: redirect_response("To the provider's consent screen")},
    errors=(400, 404),
    params=(
        PROVIDER,
        query("next", {"type": "string"}, "Relative path to return to after sign-in"),
        query("cli_redirect", {"type": "string", "format": "uri"}, "CLI loopback redirect"),
        query("cli_challenge", {"type": "string"}, "S256 of the CLI's verifier"),
    ),
)
def login(provider: str) -> Any:
    """Start OAuth sign-in (or link a provider while signed in)."""
    # The provider first, then the CLI parameters, and only then any state:
    # `uptime login` checks a provider with an incomplete request (404 or 400).
    spec = _provider_or_404(provider)
    next_url = login_state.safe_next(request.args.get("next"))
    cli = cli_handoff.cli_request(request.args)
    secret_key = settings().secret_key
    cookie = login_state.browser_cookie(settings().base_url)
    pending = login_state.new_login(
        oidc=spec.is_oidc,
        browser_cookie=request.cookies.get(cookie.name),
        secret_key=secret_key,
        now=now(),
    )
    url = authorization_url(
        spec,
        redirect_uri=redirect_uri(provider),
        state=pending.state,
        verifier=pending.verifier,
        nonce=pending.nonce,
    )
    login_state.save_login(
        pending,
        provider=provider,
        now=now(),
        next_url=next_url,
        cli_redirect=cli[0] if cli else None,
        cli_challenge=cli[1] if cli else None,
        link_user=current_user.id if current_user.is_authenticated else None,
    )
    response = _redirect(url)
    response.set_cookie(
        cookie.name,
        pending.browser_cookie,
        max_age=login_state.STATE_TTL,
        path=cookie.path,
        secure=True,
        httponly=True,
        samesite="Lax",
    )
    return response


@bp.get("/<provider>/callback")
@team_free
@public
@session_only
@login_limited
@doc(
    "loginCallback",
    ok={302: redirect_response("To `next`, or to the CLI loopback with a ticket")},
    errors=(400, 403, 404, 409),
    params=(
        PROVIDER,
        *(query(name, {"type": "string"}) for name in ("code", "state", "error")),
        query("error_description", {"type": "string"}),
    ),
)
def callback(provider: str) -> Any:
    """OAuth callback: creates the session."""
    spec = _provider_or_404(provider)
    state = login_state.claim_state(
        provider=provider,
        state=request.args.get("state"),
        browser_cookie=request.cookies.get(login_state.browser_cookie(settings().base_url).name),
        secret_key=settings().secret_key,
        now=now(),
    )
    verifier = login_state.pkce_verifier(request.args["state"], settings().secret_key)
    try:
        user = _signed_in_user(spec, state, verifier)
    except ApiError as exc:
        if state.cli_redirect:
            return _redirect(cli_handoff.error_url(state.cli_redirect, exc))
        raise
    if state.cli_redirect:
        ticket = cli_handoff.issue_ticket(user, provider, state.cli_challenge, now=now())
        return _redirect(cli_handoff.ticket_url(state.cli_redirect, ticket))
    return _browser_session(user, provider, state.next_url or "/")


@bp.post("/cli/exchange")
@team_free
@public
@session_only
@login_limited
@doc("cliExchange", ok=data(CliSession), body=CliExchangeRequest)
def cli_exchange() -> Any:
    """Exchange a CLI ticket and verifier for a session."""
    exchange = parse_cli_exchange(json_body())
    # Not one transaction: a ticket spent by a wrong verifier stays spent.
    row = cli_handoff.redeem_ticket(exchange.ticket, exchange.verifier, now=now())
    token, session = create_session(
        row.user,
        row.provider,
        now=now(),
        ttl=settings().session_ttl,
        max_age=settings().session_max_age,
    )
    log.info("CLI sign-in of user %s with %s", row.user.id, row.provider)
    user = UserOut.of(row.user, row.provider)
    answer = CliSession(session=token, expires_at=session.expires_at, user=user)
    response = data_of(answer)
    response.headers["Cache-Control"] = "no-store"
    return response


def _provider_or_404(name: str) -> ProviderSpec:
    spec = provider_spec(settings(), name)
    if spec is None:
        configured = ", ".join(sorted(settings().oauth_providers)) or "none"
        raise ApiError(
            "PROVIDER_NOT_FOUND",
            f"No sign-in provider named {name!r} is configured",
            {"provider": [f"configured providers: {configured}"]},
        )
    return spec


def _signed_in_user(spec: ProviderSpec, state: OAuthState, verifier: str) -> User:
    error = request.args.get("error")
    if error:
        raise ApiError(
            "OAUTH_ERROR",
            f"{spec.name} did not complete the sign-in: {error[:100]}",
            {"provider": [spec.name], "reason": [error[:100]]},
        )
    code = request.args.get("code")
    if not code:
        raise ApiError("OAUTH_ERROR", f"{spec.name} sent no authorization code")
    profile = fetch_profile(
        spec,
        code=code,
        redirect_uri=redirect_uri(spec.name),
        verifier=verifier,
        nonce=state.nonce,
    )
    return signup.resolve_user(
        profile,
        spec.name,
        link_user=state.link_user_id,
        allowed=settings().allowed_emails,
        now=now(),
        admins=settings().admins,
    )


def _browser_session(user: User, provider: str, next_url: str) -> Response:
    old_token = session_token(request)
    with write_tx():
        if old_token:
            # A new token at every sign-in: the pre-login cookie dies here.
            Session.delete().where(Session.token_hash == hash_token(old_token)).execute()
        token, session = create_session(
            user,
            provider,
            now=now(),
            ttl=settings().session_ttl,
            max_age=settings().session_max_age,
        )
    log.info("user %s signed in with %s", user.id, provider)
    response = _redirect(next_url)
    set_cookie(response, token, session.expires_at)
    return response


def _redirect(location: str) -> Response:
    response = redirect(location, code=302)
    response.headers["Cache-Control"] = "no-store"
    return response
