"""Handing a browser sign-in over to the command line (RFC 8252 loopback).

``uptime login`` listens on a loopback port and opens
``/auth/<name>/login?cli_redirect=http://127.0.0.1:<port>/…&cli_challenge=<S256(verifier)>``.
After the provider callback the browser is sent to that loopback address with
a one-time ticket valid for two minutes. The CLI then posts the ticket with
its verifier to ``/auth/cli/exchange`` and receives the session token in the
response body, so the token never appears in a URL, and a ticket caught on
its way (another local process, the browser history) is useless without the
verifier that only the CLI holds.
"""

from __future__ import annotations

import hmac
import re
import secrets
from collections.abc import Mapping
from datetime import datetime, timedelta
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from authlib.oauth2.rfc7636 import create_s256_code_challenge

from uptime_server.auth.login_state import sha256
from uptime_server.errors import ApiError, validation_error
from uptime_server.models import CliTicket, User

TICKET_TTL = 120
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})
# BASE64URL(SHA256(verifier)) without padding is always 43 characters.
_CHALLENGE = re.compile(r"^[A-Za-z0-9_-]{43}$")
_UNSAFE_URL = re.compile(r"[\x00-\x20\x7f\\]")


def cli_request(args: Mapping[str, str]) -> tuple[str, str] | None:
    """(cli_redirect, cli_challenge) of a login request, None for a browser sign-in."""
    redirect = args.get("cli_redirect")
    challenge = args.get("cli_challenge")
    if redirect is None and challenge is None:
        return None
    errors: dict[str, list[str]] = {}
    if not redirect or not is_loopback_redirect(redirect):
        errors["cli_redirect"] = [
            "must be http://127.0.0.1:<port>/…, http://[::1]:<port>/… or http://localhost:<port>/…"
        ]
    if not challenge or not _CHALLENGE.match(challenge):
        errors["cli_challenge"] = ["must be the base64url SHA-256 of a PKCE verifier (S256)"]
    if errors:
        raise validation_error(errors)
    return str(redirect), str(challenge)


def is_loopback_redirect(url: str) -> bool:
    """Whether *url* is a plain-http loopback address with an explicit port.

    The network location must be exactly ``host:port``: no user info (which
    would make ``http://127.0.0.1:1@evil.example/`` look local), no other host.
    """
    if len(url) > 2048 or _UNSAFE_URL.search(url):
        return False
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        return False
    host = parts.hostname
    if parts.scheme != "http" or host not in LOOPBACK_HOSTS or not port or parts.fragment:
        return False
    netloc = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return parts.netloc.lower() == netloc and parts.path.startswith("/")


def issue_ticket(user: User, provider: str, challenge: str, *, now: datetime) -> str:
    ticket = secrets.token_urlsafe(32)
    CliTicket.create(
        ticket_hash=sha256(ticket),
        user=user.id,
        provider=provider,
        challenge=challenge,
        expires_at=now + timedelta(seconds=TICKET_TTL),
    )
    return ticket


def ticket_url(cli_redirect: str, ticket: str) -> str:
    return _with_params(cli_redirect, [("ticket", ticket)])


def error_url(cli_redirect: str, error: ApiError) -> str:
    """Tell the waiting CLI why the sign-in failed (it would wait in vain otherwise)."""
    return _with_params(cli_redirect, [("error", error.code), ("error_description", error.message)])


def _with_params(url: str, params: list[tuple[str, str]]) -> str:
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True) + params
    return urlunsplit(parts._replace(query=urlencode(query)))


def redeem_ticket(ticket: str, verifier: str, *, now: datetime) -> CliTicket:
    """Use up *ticket*; it must be unused, unexpired and match *verifier*.

    The ticket is spent before the verifier is compared, so a wrong verifier
    burns it: whoever intercepted it gets one guess, not many.
    """
    ticket_hash = sha256(ticket)
    claimed = (
        CliTicket.update(used_at=now)
        .where(
            CliTicket.ticket_hash == ticket_hash,
            CliTicket.used_at.is_null(),
            CliTicket.expires_at > now,
        )
        .execute()
    )
    if claimed != 1:
        raise _bad_ticket()
    row = (
        CliTicket.select(CliTicket, User)
        .join(User)
        .where(CliTicket.ticket_hash == ticket_hash)
        .get()
    )
    if not hmac.compare_digest(create_s256_code_challenge(verifier), row.challenge):
        raise _bad_ticket()
    return row


def _bad_ticket() -> ApiError:
    return ApiError(
        "OAUTH_ERROR",
        "The sign-in ticket is invalid, expired or already used, or the verifier does not "
        "match; run the login again",
    )
