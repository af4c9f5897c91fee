"""The application factory: blueprints, error handlers, sessions, limits.

``create_app`` binds the database and wires request handling; it starts no
threads and opens no sockets, so tests build as many apps as they like.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import peewee
from flask import Blueprint, Flask, Request, Response, g, request
from flask.sessions import SecureCookieSession, SecureCookieSessionInterface
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_login import current_user
from werkzeug.exceptions import RequestEntityTooLarge

from uptime_server import db, errors
from uptime_server.api import (
    agent,
    agents,
    audit,
    auth,
    channels,
    checks,
    health,
    home,
    invitations,
    maintenance,
    metrics,
    monitors,
    notifications,
    openapi,
    signin,
    stats,
    status_pages,
    tokens,
)
from uptime_server.api import teams as teams_api
from uptime_server.auth import agent_tokens, teams
from uptime_server.auth.api_tokens import bearer_token, current_token, scope_refusal
from uptime_server.auth.sessions import (
    check_csrf,
    current_session,
    init_login,
    unauthenticated_error,
)
from uptime_server.clock import Clock
from uptime_server.config import Settings, ensure_secret_key
from uptime_server.db import outages
from uptime_server.fast_paths.dispatch import FastPaths
from uptime_server.fast_paths.health import HealthPath
from uptime_server.fast_paths.pings import PingLimit, PingPath
from uptime_server.fast_paths.public_pages import PublicPages
from uptime_server.models import AgentToken
from uptime_server.services import render_purges
from uptime_server.services.metrics import metrics_cache_for
from uptime_server.web import invite, public
from uptime_server.web.render_cache import RenderCache
from uptime_server.wsgi import errors as error_writer
from uptime_server.wsgi import rate_storage
from uptime_server.wsgi.access import (
    is_agent_only,
    is_login_limited,
    is_public,
    is_session_only,
    is_team_free,
    role_needed,
)
from uptime_server.wsgi.check_slots import RunSlots
from uptime_server.wsgi.context import EXTENSION, AppState
from uptime_server.wsgi.read_gate import ReadGate
from uptime_server.wsgi.types import MAX_REQUEST_BODY, RESPONSE_HEADERS

# One blueprint per resource: under /api/v1, and at the root.
API_BLUEPRINTS = (
    auth,
    signin,
    tokens,
    monitors,
    checks,
    stats,
    notifications,
    channels,
    status_pages,
    maintenance,
    agents,
    agent,
    teams_api,
    invitations,
    audit,
    openapi,
)
ROOT_BLUEPRINTS = (health, home, metrics, public, invite)


def create_app(
    settings: Settings,
    *,
    clock: Clock | None = None,
    services: dict[str, Any] | None = None,
    bind_database: bool = True,
) -> Flask:
    settings = ensure_secret_key(settings)
    if bind_database:
        db.bind(settings.database_url)
    app = Flask("uptime_server")
    app.config.update(
        SECRET_KEY=settings.secret_key,
        MAX_CONTENT_LENGTH=MAX_REQUEST_BODY,
        SESSION_COOKIE_NAME="uptime_flask",
        JSON_SORT_KEYS=False,
    )
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.session_interface = _SessionInterface()
    services = dict(services or {})
    # Without the daemon's refresher (tests, embedding) nothing fills it
    # unless asked to: /metrics then serves the process and engine series.
    services.setdefault("metrics_cache", metrics_cache_for(settings))
    clock = clock or Clock()
    services.setdefault("status_page_cache", RenderCache(clock, public.PAGE_TTL))
    services.setdefault("badge_cache", RenderCache(clock, public.BADGE_TTL))
    render_purges.keep(services["badge_cache"], services["status_page_cache"])
    uptime = AppState(
        settings,
        clock,
        services,
        test_slots=RunSlots(settings.test_concurrency, settings.test_concurrency_per_user),
    )
    app.extensions[EXTENSION] = uptime
    error_writer.register(app)
    for error in (peewee.OperationalError, peewee.InterfaceError):
        app.register_error_handler(error, _database_error)
    init_login(app, uptime)
    app.before_request(_refuse_large_body)
    app.after_request(_add_response_headers)
    _register_db_hooks(app)

    api = Blueprint("api", __name__, url_prefix="/api/v1")
    api.before_request(_api_guard)
    for module in API_BLUEPRINTS:
        api.register_blueprint(module.bp)
    app.register_blueprint(api)
    for module in ROOT_BLUEPRINTS:
        app.register_blueprint(module.bp)
    limiter = uptime.limiter = _init_limiter(app, settings)
    # Pings, a fresh /healthz and cached public pages are answered before
    # Flask (fast_paths/), where waitress and the test client both reach them.
    flask_app: Any = app.wsgi_app
    if settings.api_read_concurrency:
        flask_app = ReadGate(flask_app, settings.api_read_concurrency)
    limit = PingLimit(
        limiter.limiter,
        settings.ping_rate_limit,
        settings.rate_limit,
        settings.unknown_ping_rate_limit,
    )
    ping_path = PingPath(uptime, limit)
    fast_paths = FastPaths(
        flask_app,
        [
            ping_path,
            HealthPath(uptime.health_memo, clock, app.json),
            PublicPages(services["badge_cache"], services["status_page_cache"]),
        ],
    )
    uptime.fast_paths = fast_paths
    app.wsgi_app = fast_paths  # type: ignore[method-assign]
    return app


def _refuse_large_body() -> None:
    # Werkzeug enforces MAX_CONTENT_LENGTH only when a view reads the body;
    # a declared length over the limit is refused whatever the view.
    if request.content_length is not None and request.content_length > MAX_REQUEST_BODY:
        raise RequestEntityTooLarge()


def _add_response_headers(response: Response) -> Response:
    # Error responses pass here too (Flask finalises them like any other).
    # Registered before the limiter's hook, so it runs after it (Flask runs
    # them in reverse): an error's own headers (a 429's Retry-After) win.
    for name, value in RESPONSE_HEADERS.items():
        response.headers.setdefault(name, value)
    for name, value in getattr(response, "error_headers", {}).items():
        response.headers[name] = value
    return response


def _register_db_hooks(app: Flask) -> None:
    # Connections open on first use (peewee autoconnect), so a view that
    # handles an unreachable database itself (/healthz) gets the chance to.
    @app.teardown_request
    def _close_db(exc: BaseException | None) -> None:
        if not db.database.is_closed():
            db.database.close()


def _api_guard() -> None:
    view = _view(request.endpoint) if request.endpoint else None
    bearer = bearer_token(request)
    if is_agent_only(view):
        _agent_guard(bearer)
        return
    if agent_tokens.is_agent_token(bearer):
        raise errors.ApiError(
            "FORBIDDEN", "An agent token can call only the agent API (/api/v1/agent/...)"
        )
    if is_session_only(view) and bearer is not None:
        raise errors.ApiError(
            "FORBIDDEN",
            "API tokens cannot sign in or manage tokens or agents: use a signed-in session "
            "(uptime login)",
        )
    if is_public(view):
        return
    from uptime_server.wsgi.context import settings

    check_csrf(settings().base_url)
    if not current_user.is_authenticated:
        raise unauthenticated_error()
    token = current_token()
    refusal = scope_refusal(token.scope, request.method) if token is not None else None
    if refusal:
        raise errors.ApiError("FORBIDDEN", refusal)
    if token is not None and token.team_role is None:
        raise teams.token_orphaned()
    if is_team_free(view):
        return
    acting = g.uptime_acting = teams.for_request(request)
    needed = role_needed(view, request.method)
    if acting.allows(needed):
        return
    if token is not None and not teams.at_least(teams.SCOPE_ROLE[token.scope], needed):
        scope = _scope_for(needed)
        article = "an" if scope == "admin" else "a"
        raise teams.forbidden(needed, acting.role, f"do this: create {article} {scope} token")
    raise teams.forbidden(needed, acting.role)


def _scope_for(role: str) -> str:
    return {"viewer": "read", "member": "write"}.get(role, "admin")


def _agent_guard(bearer: str | None) -> None:
    """The agent API: an agent token, nothing else (sessions and API tokens get 403)."""
    from uptime_server.wsgi.context import now

    if not agent_tokens.is_agent_token(bearer):
        if bearer is not None or current_user.is_authenticated:
            raise errors.ApiError(
                "FORBIDDEN", "The agent API takes an agent token (upa_...), not a user's"
            )
        raise errors.ApiError("UNAUTHORIZED", "The agent API takes an agent token (upa_...)")
    assert bearer is not None
    if g.get("uptime_agent") is not None:
        return  # the rate limiter found it already (_live_agent)
    try:
        g.uptime_agent = agent_tokens.authenticate(bearer, now=now())
    except agent_tokens.AgentRefused as exc:
        raise errors.ApiError("UNAUTHORIZED", str(exc)) from None


def _view(endpoint: str) -> Callable[..., Any] | None:
    from flask import current_app

    return current_app.view_functions.get(endpoint)


def _rate_key() -> str:
    # One budget per valid session or API token; anything else is counted per
    # address, so made-up cookies and tokens do not buy fresh budgets. (A
    # ping is counted per ping token instead: fast_paths.pings.PingLimit.)
    if current_user.is_authenticated:
        token = current_token()
        return f"t:{token.id}" if token is not None else f"s:{current_session().id}"
    return "ip:" + (get_remote_address() or "unknown")


def _live_agent() -> AgentToken | None:
    """The live agent token of this request, if it carries one (looked up once).

    The limiter asks before the API's guard runs, and the guard takes it from here.
    """
    from flask import g

    from uptime_server.wsgi.context import now

    if "uptime_agent_seen" not in g:
        g.uptime_agent_seen = True
        bearer = bearer_token(request)
        if agent_tokens.is_agent_token(bearer):
            assert bearer is not None
            with contextlib.suppress(agent_tokens.AgentRefused):  # the guard says why
                g.uptime_agent = agent_tokens.authenticate(bearer, now=now())
    return g.get("uptime_agent")


def _agent_budget() -> bool:
    # A live agent token on the agent API spends its own budget
    # (_agent_rate_key), not the per-session one. Anything else there (a
    # made-up, revoked or expired token) is counted per address, as in
    # _rate_key, so it buys no fresh budget.
    return (
        request.endpoint is not None
        and is_agent_only(_view(request.endpoint))
        and _live_agent() is not None
    )


def _agent_rate_key() -> str:
    agent = _live_agent()
    return f"a:{agent.id}" if agent is not None else "ip:" + (get_remote_address() or "unknown")


def _init_limiter(app: Flask, settings: Settings) -> Limiter:
    limiter = Limiter(
        _rate_key,
        app=app,
        # One budget per session across every route (default_limits would
        # give each route its own counter).
        application_limits=[settings.rate_limit] if settings.rate_limit else [],
        application_limits_exempt_when=_agent_budget,
        headers_enabled=True,
        storage_uri=rate_storage.storage_uri(settings.ratelimit_storage_url),
        strategy="fixed-window",
        enabled=True,
    )
    for endpoint, view in list(app.view_functions.items()):
        # Public pages and badges are cached and cost one index lookup at most.
        exempt = ("health", "metrics", "home", "static", "public")
        if endpoint.split(".")[0] in exempt:
            app.view_functions[endpoint] = limiter.exempt(view)
        elif is_agent_only(view):
            # One budget per agent token across the agent API, at
            # UPTIME_AGENT_RATE_LIMIT, instead of the per-session one.
            if settings.agent_rate_limit:
                limited = limiter.shared_limit(
                    settings.agent_rate_limit, scope="agent", key_func=_agent_rate_key
                )
                app.view_functions[endpoint] = limited(view)
            else:
                app.view_functions[endpoint] = limiter.exempt(view)
        elif is_login_limited(view):
            if settings.login_rate_limit:
                limited = limiter.limit(settings.login_rate_limit, key_func=get_remote_address)
                app.view_functions[endpoint] = limited(view)
            else:
                app.view_functions[endpoint] = limiter.exempt(view)
    return limiter


class _SessionInterface(SecureCookieSessionInterface):
    """Flask's signed cookie session, without making its signing serializer for a
    request that has no such cookie (every API request: nothing here puts
    anything in it; bench/README.md#figures-moved-from-the-code-issue-30)."""

    def open_session(self, app: Flask, request: Request) -> SecureCookieSession | None:
        if app.secret_key and not request.cookies.get(self.get_cookie_name(app)):
            return self.session_class()
        return super().open_session(app, request)


def _database_error(exc: Exception) -> Response:
    """A request that met a lost database (a restart, a failover, SQLite's lock held too
    long) answers 503 with Retry-After, and its connection is dropped so the next
    request opens a new one; the log gets a line a minute, not a traceback each."""
    if not outages.unavailable(exc):
        return error_writer.unexpected(exc)
    outages.drop_connection()
    outages.REQUESTS.failed(exc)
    message = "The database is unavailable; try again in a few seconds"
    return error_writer.render(
        errors.ApiError("SERVICE_UNAVAILABLE", message, headers={"Retry-After": "5"})
    )
