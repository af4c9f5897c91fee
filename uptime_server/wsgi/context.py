"""The running app's state, kept once on the app (``app_state``), and what a request
handler reads from it: settings and the clock.

``create_app`` makes one ``AppState`` per app and fills its fields as it wires the
app; nothing else of ours is kept in ``app.extensions``. The fast paths in front of
Flask are typed here by what their readers use of them (``FrontApp``), not by
their class, which reads this state itself.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from flask import Flask, current_app

from uptime_server.clock import Clock
from uptime_server.config import Settings
from uptime_server.wsgi.types import Environ, StartResponse, WsgiApp

if TYPE_CHECKING:
    from flask_limiter import Limiter

    from uptime_server.wsgi.check_slots import RunSlots

EXTENSION = "uptime"  # the one key of ours in app.extensions


class FrontApp(Protocol):
    """The WSGI application in front of Flask (``fast_paths.dispatch.FastPaths``): it
    answers what it can and hands the rest to ``app``."""

    app: WsgiApp

    def __call__(self, environ: Environ, start_response: StartResponse) -> Iterable[bytes]: ...


@dataclass
class AppState:
    settings: Settings  # the daemon replaces it once it knows the address it listens on
    clock: Clock
    # Optional services plugged in by the daemon (e.g. the prober for "test").
    services: dict[str, Any]
    test_slots: RunSlots  # "test now" runs under way (api.check_slots)
    # /healthz's last healthy answer ("last"), shared by the view and fast_paths/health.
    health_memo: dict[str, Any] = field(default_factory=dict)
    # Set by create_app once the blueprints are registered (the rest is wired around them).
    limiter: Limiter | None = None
    fast_paths: FrontApp | None = None  # the outermost layer: app.wsgi_app (fast_paths/)
    openapi: dict[str, Any] | None = None  # the document, built at its first request


def app_state(app: Flask) -> AppState:
    found: AppState = app.extensions[EXTENSION]
    return found


def state() -> AppState:
    return app_state(current_app)


def settings() -> Settings:
    return state().settings


def now() -> datetime:
    return state().clock.now()
