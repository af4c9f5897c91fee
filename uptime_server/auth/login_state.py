"""What a sign-in remembers between the login redirect and the callback.

The ``state`` sent to the provider is random and single-use; the database
keeps only its SHA-256, with the OIDC nonce and where to go afterwards. The
PKCE verifier is an HMAC of the state under the secret key, recomputed at the
callback, so it is neither stored nor logged with the SQL. The state is bound
to the browser that started the sign-in by a signed, ten-minute cookie
holding a random browser id (also stored only as a hash), so a callback link
planted in someone else's browser matches nothing (login CSRF). Times come
from the injected clock.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import unquote, urlsplit

from itsdangerous import BadSignature, URLSafeSerializer

from uptime_server.errors import ApiError
from uptime_server.models import CliTicket, OAuthState

STATE_TTL = 600
COOKIE_NAME = "uptime_oauth"
COOKIE_PATH = "/api/v1/auth"
# Over https the cookie is ``__Host-`` prefixed: browsers then take it only
# from this very host, with Secure, Path=/ and no Domain, so a sibling
# subdomain cannot plant its own browser id (cookie tossing) and pass the check.
HOST_COOKIE_NAME = "__Host-" + COOKIE_NAME
_SALT = "uptime.oauth.browser"
_UNSAFE_NEXT = re.compile(r"[\x00-\x20\x7f\\]")
# Once decoded, an escaped space (%20) is fine; control characters are not.
_UNSAFE_DECODED = re.compile(r"[\x00-\x1f\x7f\\]")


@dataclass(frozen=True)
class PendingLogin:
    """The secrets of one sign-in; only hashes of state and browser are stored."""

    state: str
    verifier: str
    nonce: str | None
    browser_id: str
    browser_cookie: str


@dataclass(frozen=True)
class BrowserCookie:
    """Name and path of the cookie that binds a sign-in to its browser."""

    name: str
    path: str


def browser_cookie(base_url: str) -> BrowserCookie:
    if urlsplit(base_url).scheme == "https":
        return BrowserCookie(HOST_COOKIE_NAME, "/")
    return BrowserCookie(COOKIE_NAME, COOKIE_PATH)


def sha256(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def pkce_verifier(state: str, secret_key: str) -> str:
    """The PKCE verifier of the sign-in *state* (43 characters, 256 bits)."""
    mac = hmac.new(secret_key.encode(), b"pkce-verifier:" + state.encode(), hashlib.sha256)
    return base64.urlsafe_b64encode(mac.digest()).rstrip(b"=").decode()


def new_login(
    *, oidc: bool, browser_cookie: str | None, secret_key: str, now: datetime
) -> PendingLogin:
    """Fresh state, PKCE verifier and nonce; reuse this browser's id if it has one."""
    browser = _browser_id(browser_cookie, secret_key, now) or secrets.token_urlsafe(32)
    state = secrets.token_urlsafe(32)
    return PendingLogin(
        state=state,
        verifier=pkce_verifier(state, secret_key),
        nonce=secrets.token_urlsafe(24) if oidc else None,
        browser_id=browser,
        browser_cookie=_sign_browser(browser, secret_key, now),
    )


def save_login(
    pending: PendingLogin,
    *,
    provider: str,
    now: datetime,
    next_url: str,
    cli_redirect: str | None,
    cli_challenge: str | None,
    link_user: int | None,
) -> OAuthState:
    # Sign-ins that were never finished are of no use to anyone.
    OAuthState.delete().where(OAuthState.expires_at < now).execute()
    CliTicket.delete().where(CliTicket.expires_at < now).execute()
    return OAuthState.create(
        state_hash=sha256(pending.state),
        provider=provider,
        browser_hash=sha256(pending.browser_id),
        nonce=pending.nonce,
        next_url=next_url,
        cli_redirect=cli_redirect,
        cli_challenge=cli_challenge,
        link_user=link_user,
        created_at=now,
        expires_at=now + timedelta(seconds=STATE_TTL),
    )


def claim_state(
    *, provider: str, state: str | None, browser_cookie: str | None, secret_key: str, now: datetime
) -> OAuthState:
    """Use up the sign-in *state* names, or fail with OAUTH_STATE_MISMATCH.

    One conditional update both checks (same provider, same browser, not
    expired, not used) and marks it used, so a replayed callback, even a
    concurrent one, finds nothing.
    """
    browser = _browser_id(browser_cookie, secret_key, now)
    if not state or len(state) > 200 or browser is None:
        raise _mismatch()
    claimed = (
        OAuthState.update(used_at=now)
        .where(
            OAuthState.state_hash == sha256(state),
            OAuthState.provider == provider,
            OAuthState.browser_hash == sha256(browser),
            OAuthState.used_at.is_null(),
            OAuthState.expires_at > now,
        )
        .execute()
    )
    if claimed != 1:
        raise _mismatch()
    return OAuthState.get(OAuthState.state_hash == sha256(state))


def _mismatch() -> ApiError:
    return ApiError(
        "OAUTH_STATE_MISMATCH",
        "This sign-in link is invalid, expired or already used; start the sign-in again",
    )


def _sign_browser(browser: str, secret_key: str, now: datetime) -> str:
    return URLSafeSerializer(secret_key, salt=_SALT).dumps([browser, int(now.timestamp())])


def _browser_id(cookie: str | None, secret_key: str, now: datetime) -> str | None:
    if not cookie or len(cookie) > 500:
        return None
    try:
        browser, issued = URLSafeSerializer(secret_key, salt=_SALT).loads(cookie)
    except (BadSignature, ValueError, TypeError):
        return None
    age = now.timestamp() - float(issued)
    if not isinstance(browser, str) or not -60 <= age <= STATE_TTL:
        return None
    return browser


def safe_next(value: str | None) -> str:
    """*value* if it is a path on this site, else ``/`` (no open redirect).

    Refused: anything with a scheme or host (``https://x``, ``//x``),
    backslashes and control characters or spaces (browsers turn ``/\\x`` and
    ``/<tab>/x`` into ``//x``), and values that decode into one of those.
    """
    if not value or len(value) > 2048:
        return "/"
    for candidate, unsafe in ((value, _UNSAFE_NEXT), (unquote(value), _UNSAFE_DECODED)):
        if not candidate.startswith("/") or candidate.startswith("//"):
            return "/"
        if unsafe.search(candidate):
            return "/"
        parts = urlsplit(candidate)
        if parts.scheme or parts.netloc:
            return "/"
    return value
