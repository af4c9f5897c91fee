"""ApiClient: one method per endpoint of the uptime API; never prints.

Every call goes through ``_call``, which turns what came back into either the
decoded JSON body or a typed exception, so commands only call and render:

- ``ApiRefused``  the API answered 4xx with its error body (exit code 4);
- ``ServerError`` the server answered 5xx, or something that is not the API;
- ``Unreachable`` no answer: connection refused, DNS failure, timeout.

The session travels in an explicit ``Cookie`` header: the server marks the
cookie Secure, and requests' cookie jar would not send it over plain http to
a daemon on 127.0.0.1. An API token (``token``) travels as
``Authorization: Bearer`` instead, and then no cookie is sent. The team the
request acts in, when one is chosen, travels as ``X-Uptime-Team``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import quote, urlencode

import requests

from uptime_cli import __version__

API_PREFIX = "/api/v1"
TEAM_HEADER = "X-Uptime-Team"
USER_AGENT = f"uptime-cli/{__version__}"
# The server ends a test run at UPTIME_TEST_RUN_TIMEOUT (default 60 s) with
# 504 TEST_RUN_TIMEOUT (docs/api.md#test-a-monitor); wait that long plus a
# margin for a busy server, so its answer arrives before we give up. A server
# configured with a longer bound needs --timeout.
TEST_READ_TIMEOUT = 120.0

Json = dict[str, Any]


class ApiClientError(Exception):
    """Base of everything the client raises."""


class ApiRefused(ApiClientError):
    """The API refused the request (HTTP 4xx) with ``{error: {code, message, details}}``."""

    def __init__(self, code: str, message: str, details: dict[str, Any], status: int) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.details = details
        self.status = status


class ServerError(ApiClientError):
    """The server failed (HTTP 5xx) or answered with something that is not the API."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"HTTP {status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


class Unreachable(ApiClientError):
    """No answer from the server: refused, unresolvable, or timed out."""


@dataclass
class ApiClient:
    server: str
    session: str | None = field(default=None, repr=False)
    token: str | None = field(default=None, repr=False)  # an API token, sent as a bearer
    team: str | None = None  # id or slug sent as X-Uptime-Team (None: the server's default)
    timeout: float = 30.0
    connect_timeout: float = 5.0
    # read timeout of the synchronous check (``monitors test``)
    check_timeout: float = TEST_READ_TIMEOUT
    trace: Callable[[str], None] | None = None
    http: requests.Session = field(default_factory=requests.Session, repr=False)

    def __post_init__(self) -> None:
        self.server = self.server.rstrip("/")
        self.http.headers.update(
            {
                "X-Requested-With": "uptime",
                "Accept": "application/json",
                "User-Agent": USER_AGENT,
            }
        )

    # -- sign-in and session -------------------------------------------------

    def login_url(self, provider: str, *, cli_redirect: str, cli_challenge: str) -> str:
        """GET /auth/{provider}/login: opened in the browser, not fetched here."""
        query = urlencode({"cli_redirect": cli_redirect, "cli_challenge": cli_challenge})
        return f"{self.server}{API_PREFIX}/auth/{quote(provider, safe='')}/login?{query}"

    def check_login_provider(self, provider: str) -> None:
        """Raise ``ApiRefused`` (PROVIDER_NOT_FOUND) if the server has no *provider*.

        The request is a CLI sign-in without its PKCE challenge, on purpose:
        the server answers an unknown provider with 404 before it reads the
        CLI parameters, and refuses the incomplete request (400) before it
        writes any sign-in state, which a complete request would leave behind.
        Other refusals (a rate limit) and an unreachable server are raised too.
        """
        try:
            self._call(
                "GET", f"/auth/{quote(provider, safe='')}/login", params={"cli_challenge": ""}
            )
        except ApiRefused as exc:
            if exc.code != "VALIDATION_ERROR":
                raise
        except ServerError as exc:
            if exc.code != "REDIRECT":  # a server that took the request anyway
                raise

    def cli_exchange(self, ticket: str, verifier: str) -> Json:
        return self._call(
            "POST", "/auth/cli/exchange", json={"ticket": ticket, "verifier": verifier}
        )

    def get_user(self) -> Json:
        return self._call("GET", "/auth/user")

    def without_team(self) -> ApiClient:
        """The same client, letting the server choose the team (no X-Uptime-Team)."""
        return replace(self, team=None)

    def refresh_session(self) -> Json:
        return self._call("POST", "/auth/refresh")

    def logout(self) -> Json:
        return self._call("POST", "/auth/logout")

    # -- monitors --------------------------------------------------------------

    def list_monitors(
        self,
        *,
        page: int | None = None,
        limit: int | None = None,
        status: str | None = None,
        search: str | None = None,
        type: str | None = None,
        tag: list[str] | None = None,
    ) -> Json:
        params = {
            "page": page,
            "limit": limit,
            "status": status,
            "search": search,
            "type": type,
            "tag": tag or None,  # repeated: ?tag=a&tag=b
        }
        return self._call("GET", "/monitors", params=params)

    def create_monitor(self, fields: Json) -> Json:
        return self._call("POST", "/monitors", json=fields)

    def get_monitor(self, monitor_id: int) -> Json:
        return self._call("GET", f"/monitors/{monitor_id}")

    def update_monitor(self, monitor_id: int, fields: Json) -> Json:
        return self._call("PUT", f"/monitors/{monitor_id}", json=fields)

    def delete_monitor(self, monitor_id: int) -> Json:
        return self._call("DELETE", f"/monitors/{monitor_id}")

    def pause_monitor(self, monitor_id: int, reason: str | None = None) -> Json:
        body = {"reason": reason} if reason else {}
        return self._call("POST", f"/monitors/{monitor_id}/pause", json=body)

    def resume_monitor(self, monitor_id: int) -> Json:
        return self._call("POST", f"/monitors/{monitor_id}/resume")

    def rotate_ping_token(self, monitor_id: int) -> Json:
        return self._call("POST", f"/monitors/{monitor_id}/ping-token")

    def test_monitor(self, monitor_id: int) -> Json:
        return self._call("POST", f"/monitors/{monitor_id}/test", read_timeout=self.check_timeout)

    def monitor_stats(
        self, monitor_id: int, *, period: str | None = None, granularity: str | None = None
    ) -> Json:
        params = {"period": period, "granularity": granularity}
        return self._call("GET", f"/monitors/{monitor_id}/stats", params=params)

    def monitor_history(
        self,
        monitor_id: int,
        *,
        start: str | None = None,
        end: str | None = None,
        limit: int | None = None,
    ) -> Json:
        params = {"from": start, "to": end, "limit": limit}
        return self._call("GET", f"/monitors/{monitor_id}/history", params=params)

    def monitor_dependencies(self, monitor_id: int) -> Json:
        return self._call("GET", f"/monitors/{monitor_id}/dependencies")

    def get_alerts(self, monitor_id: int) -> Json:
        return self._call("GET", f"/monitors/{monitor_id}/alerts")

    def update_alerts(self, monitor_id: int, fields: Json) -> Json:
        return self._call("PUT", f"/monitors/{monitor_id}/alerts", json=fields)

    # -- channels --------------------------------------------------------------

    def list_channels(self) -> Json:
        return self._call("GET", "/channels")

    def create_channel(self, body: Json) -> Json:
        return self._call("POST", "/channels", json=body)

    def get_channel(self, channel_id: int) -> Json:
        return self._call("GET", f"/channels/{channel_id}")

    def update_channel(self, channel_id: int, body: Json) -> Json:
        return self._call("PUT", f"/channels/{channel_id}", json=body)

    def delete_channel(self, channel_id: int) -> Json:
        return self._call("DELETE", f"/channels/{channel_id}")

    def test_channel(self, channel_id: int) -> Json:
        return self._call("POST", f"/channels/{channel_id}/test")

    def list_maintenance(self) -> Json:
        return self._call("GET", "/maintenance")

    def create_maintenance(self, body: Json) -> Json:
        return self._call("POST", "/maintenance", json=body)

    def get_maintenance(self, window_id: int) -> Json:
        return self._call("GET", f"/maintenance/{window_id}")

    def update_maintenance(self, window_id: int, body: Json) -> Json:
        return self._call("PUT", f"/maintenance/{window_id}", json=body)

    def delete_maintenance(self, window_id: int) -> Json:
        return self._call("DELETE", f"/maintenance/{window_id}")

    def start_maintenance(self, window_id: int, duration: int | None = None) -> Json:
        body = {"duration": duration} if duration is not None else {}
        return self._call("POST", f"/maintenance/{window_id}/start", json=body)

    def end_maintenance(self, window_id: int) -> Json:
        return self._call("POST", f"/maintenance/{window_id}/end")

    def bulk(
        self,
        action: str,
        monitor_ids: list[int] | None,
        *,
        tag: list[str] | None = None,
        reason: str | None = None,
        settings: Json | None = None,
    ) -> Json:
        """Act on *monitor_ids*, or else on the monitors carrying every one of *tag*."""
        body: Json = {"action": action}
        if monitor_ids:
            body["monitor_ids"] = monitor_ids
        else:
            body["tag"] = tag
        if reason is not None:
            body["reason"] = reason
        if settings is not None:
            body["settings"] = settings
        return self._call("POST", "/monitors/bulk", json=body)

    def apply_monitors(self, entries: list[Json], *, prune: bool, dry_run: bool) -> Json:
        body = {"monitors": entries, "prune": prune, "dry_run": dry_run}
        return self._call("POST", "/monitors/apply", json=body)

    def export_monitors(self, *, tag: list[str] | None = None) -> Json:
        return self._call("GET", "/monitors/export", params={"tag": tag or None})

    # -- notifications ---------------------------------------------------------

    def list_notifications(
        self,
        *,
        page: int | None = None,
        limit: int | None = None,
        monitor_id: int | None = None,
        type: str | None = None,
        status: str | None = None,
        since: str | None = None,
        suppressed: bool | None = None,
    ) -> Json:
        params = {
            "page": page,
            "limit": limit,
            "monitor_id": monitor_id,
            "type": type,
            "status": status,
            "since": since,
            "suppressed": None if suppressed is None else str(suppressed).lower(),
        }
        return self._call("GET", "/notifications", params=params)

    def active_notifications(self) -> Json:
        return self._call("GET", "/notifications/active")

    def recent_notifications(self, *, page: int | None = None, limit: int | None = None) -> Json:
        return self._call("GET", "/notifications/recent", params={"page": page, "limit": limit})

    def get_notification(self, notification_id: int) -> Json:
        return self._call("GET", f"/notifications/{notification_id}")

    def acknowledge_notification(self, notification_id: int) -> Json:
        return self._call("POST", f"/notifications/{notification_id}/acknowledge")

    def resolve_notification(self, notification_id: int) -> Json:
        return self._call("POST", f"/notifications/{notification_id}/resolve")

    # -- API tokens --------------------------------------------------------------

    def create_token(self, name: str, scope: str, expires_in: int | None = None) -> Json:
        body: Json = {"name": name, "scope": scope}
        if expires_in is not None:
            body["expires_in"] = expires_in
        return self._call("POST", "/tokens", json=body)

    def list_tokens(self) -> Json:
        return self._call("GET", "/tokens")

    def revoke_token(self, token_id: int) -> Json:
        return self._call("DELETE", f"/tokens/{token_id}")

    # -- probe agents (admins) -------------------------------------------------

    def create_agent(
        self, location: str, name: str | None = None, expires_in: int | None = None
    ) -> Json:
        body: Json = {"location": location}
        if name is not None:
            body["name"] = name
        if expires_in is not None:
            body["expires_in"] = expires_in
        return self._call("POST", "/agents", json=body)

    def list_agents(self) -> Json:
        return self._call("GET", "/agents")

    def revoke_agent(self, agent_id: int) -> Json:
        return self._call("DELETE", f"/agents/{agent_id}")

    def rotate_badge_token(self, monitor_id: int) -> Json:
        return self._call("POST", f"/monitors/{monitor_id}/badge-token")

    # -- status pages ----------------------------------------------------------

    def list_status_pages(self) -> Json:
        return self._call("GET", "/status-pages")

    def create_status_page(self, fields: Json) -> Json:
        return self._call("POST", "/status-pages", json=fields)

    def get_status_page(self, page: str) -> Json:
        return self._call("GET", f"/status-pages/{quote(page, safe='')}")

    def update_status_page(self, page: str, fields: Json) -> Json:
        return self._call("PUT", f"/status-pages/{quote(page, safe='')}", json=fields)

    def delete_status_page(self, page: str) -> Json:
        return self._call("DELETE", f"/status-pages/{quote(page, safe='')}")

    # -- teams -------------------------------------------------------------------

    def list_teams(self) -> Json:
        return self._call("GET", "/teams")

    def create_team(self, name: str, slug: str | None = None) -> Json:
        body: Json = {"name": name}
        if slug is not None:
            body["slug"] = slug
        return self._call("POST", "/teams", json=body)

    def get_team(self, team: str) -> Json:
        return self._call("GET", f"/teams/{_seg(team)}")

    def update_team(self, team: str, fields: Json) -> Json:
        return self._call("PUT", f"/teams/{_seg(team)}", json=fields)

    def delete_team(self, team: str) -> Json:
        return self._call("DELETE", f"/teams/{_seg(team)}")

    def list_members(self, team: str) -> Json:
        return self._call("GET", f"/teams/{_seg(team)}/members")

    def set_member_role(self, team: str, user_id: int, role: str) -> Json:
        return self._call("PUT", f"/teams/{_seg(team)}/members/{user_id}", json={"role": role})

    def remove_member(self, team: str, user_id: int) -> Json:
        return self._call("DELETE", f"/teams/{_seg(team)}/members/{user_id}")

    def create_invitation(self, team: str, email: str, role: str) -> Json:
        body = {"email": email, "role": role}
        return self._call("POST", f"/teams/{_seg(team)}/invitations", json=body)

    def list_invitations(self, team: str) -> Json:
        return self._call("GET", f"/teams/{_seg(team)}/invitations")

    def revoke_invitation(self, team: str, invitation_id: int) -> Json:
        return self._call("DELETE", f"/teams/{_seg(team)}/invitations/{invitation_id}")

    def accept_invitation(self, token: str) -> Json:
        return self._call("POST", "/invitations/accept", json={"token": token})

    def audit(
        self,
        team: str,
        *,
        since: str | None = None,
        actor: int | None = None,
        action: str | None = None,
        limit: int | None = None,
    ) -> Json:
        params = {"since": since, "actor": actor, "action": action, "limit": limit}
        return self._call("GET", f"/teams/{_seg(team)}/audit", params=params)

    # -- transport -------------------------------------------------------------

    def _call(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        json: Json | None = None,
        read_timeout: float | None = None,
    ) -> Json:
        url = f"{self.server}{API_PREFIX}{path}"
        headers = self._credential_headers()
        if self.team:
            headers[TEAM_HEADER] = self.team
        query = {k: v for k, v in (params or {}).items() if v is not None}
        started = time.monotonic()
        self._trace(f"> {method} {url}{'?' + urlencode(query) if query else ''}")
        try:
            response = self.http.request(
                method,
                url,
                params=query,
                json=json,
                headers=headers,
                timeout=(self.connect_timeout, read_timeout or self.timeout),
                allow_redirects=False,  # a redirect would drop the Cookie header
            )
        except requests.Timeout:
            waited = read_timeout or self.timeout
            raise Unreachable(f"{self.server} did not answer within {waited:g}s") from None
        except requests.ConnectionError as exc:
            raise Unreachable(f"cannot reach {self.server}: {connection_reason(exc)}") from None
        elapsed = (time.monotonic() - started) * 1000
        self._trace(f"< {response.status_code} {response.reason} ({elapsed:.0f} ms)")
        return _decode(response)

    def _credential_headers(self) -> dict[str, str]:
        if self.token:
            return {"Authorization": f"Bearer {self.token}"}
        return {"Cookie": f"session_cookie={self.session}"} if self.session else {}

    def _trace(self, line: str) -> None:
        # Traces name method, URL and status only: bodies may carry session tokens.
        if self.trace is not None:
            self.trace(line)


def _seg(value: str) -> str:
    """*value* as one path segment."""
    return quote(str(value), safe="")


def _decode(response: requests.Response) -> Json:
    status = response.status_code
    body = _json_or_none(response)
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        error = None
    if status >= 500:
        if error:
            raise ServerError(status, str(error.get("code")), str(error.get("message")))
        raise ServerError(status, f"HTTP_{status}", response.reason or "server error")
    if status >= 400:
        if error:
            details = error.get("details") if isinstance(error.get("details"), dict) else {}
            raise ApiRefused(str(error.get("code")), str(error.get("message")), details, status)
        raise ApiRefused(f"HTTP_{status}", response.reason or "refused", {}, status)
    if 300 <= status < 400:
        where = response.headers.get("Location", "elsewhere")
        raise ServerError(status, "REDIRECT", f"the server redirects to {where}; check --server")
    if body is None and response.content:
        raise ServerError(status, "NOT_JSON", "the server did not answer with JSON; check --server")
    return body if isinstance(body, dict) else {}


def _json_or_none(response: requests.Response) -> Any:
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError:
        return None


def connection_reason(exc: requests.ConnectionError) -> str:
    """Why a connection failed, in a few words."""
    text = str(exc)
    for marker, reason in (
        ("Connection refused", "connection refused"),
        ("Name or service not known", "unknown host"),
        ("nodename nor servname", "unknown host"),
        ("Temporary failure in name resolution", "unknown host"),
        ("Connection reset", "connection reset"),
        ("Read timed out", "timed out"),
    ):
        if marker in text:
            return reason
    return text.splitlines()[0][:200] if text else exc.__class__.__name__
