"""Per-view access marks read by the app's guards and rate limiter."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def public(view: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a view as reachable without a session (sign-in, the API document)."""
    view.uptime_public = True  # type: ignore[attr-defined]
    return view


def login_limited(view: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a view as limited per client IP at UPTIME_LOGIN_RATE_LIMIT."""
    view.uptime_login_limited = True  # type: ignore[attr-defined]
    return view


def session_only(view: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a view as refused to API tokens (403): token management and sign-in."""
    view.uptime_session_only = True  # type: ignore[attr-defined]
    return view


def agent_only(view: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a view as the agent API: an agent token only, never a session or API token."""
    view.uptime_agent_only = True  # type: ignore[attr-defined]
    return view


def is_agent_only(view: Callable[..., Any] | None) -> bool:
    return bool(view is not None and getattr(view, "uptime_agent_only", False))


def is_public(view: Callable[..., Any] | None) -> bool:
    return bool(view is not None and getattr(view, "uptime_public", False))


def is_login_limited(view: Callable[..., Any]) -> bool:
    return bool(getattr(view, "uptime_login_limited", False))


def is_session_only(view: Callable[..., Any] | None) -> bool:
    return bool(view is not None and getattr(view, "uptime_session_only", False))


def requires(role: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark the least team role a view takes (default: viewer for GET, member otherwise).

    The app's guard resolves the request's team (auth/teams.py) and refuses a
    lower role with 403 FORBIDDEN, naming the role needed (docs/teams.md).
    """

    def mark(view: Callable[..., Any]) -> Callable[..., Any]:
        view.uptime_role = role  # type: ignore[attr-defined]
        return view

    return mark


def team_free(view: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a view that acts in no team of the header's (sign-in, teams by path, agents)."""
    view.uptime_team_free = True  # type: ignore[attr-defined]
    return view


def is_team_free(view: Callable[..., Any] | None) -> bool:
    return bool(view is not None and getattr(view, "uptime_team_free", False))


def role_needed(view: Callable[..., Any] | None, method: str) -> str:
    """The least role *view* takes for *method* (see ``requires``)."""
    declared = getattr(view, "uptime_role", None) if view is not None else None
    if declared is not None:
        return declared
    return "viewer" if method in ("GET", "HEAD", "OPTIONS") else "member"
