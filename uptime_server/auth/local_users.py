"""Local sign-in: mint a session straight in the database (no network path).

Used by ``uptime server session`` and ``uptime login --local``; it needs file
access to the database, which is the authorisation. For the same reason the
address counts as verified: UPTIME_ADMINS makes the user an admin, unless
another account holds the address too (``auth/admins``), or the account
signs in with a provider: then whoever holds that provider account could
have chosen the address, and only the provider's verified assertion counts
(at that sign-in).
"""

from __future__ import annotations

from typing import Any

from uptime_server.auth.admins import grant_if_listed, holders
from uptime_server.auth.sessions import create_session
from uptime_server.auth.teams import create_personal_team
from uptime_server.clock import Clock
from uptime_server.config import Settings
from uptime_server.db import database, write_tx
from uptime_server.email_syntax import normalize_email
from uptime_server.models import Identity, User

LOCAL_PROVIDER = "local"


def mint_local_session(
    settings: Settings, *, email: str, name: str | None = None, clock: Clock | None = None
) -> str:
    try:
        email = normalize_email(email)
    except ValueError as exc:
        raise ValueError(f"invalid email address {email[:100]!r}: it {exc}") from None
    now = (clock or Clock()).now()
    with database.connection_context(), write_tx():
        user = _account_of(email)
        if user is None:
            user = User.create(email=email, name=name or email.split("@")[0], created_at=now)
            create_personal_team(user, now=now)
        # Only these columns: a whole-row save could put back an admin flag
        # `uptime server admin revoke` took away meanwhile.
        changes: dict[Any, Any] = {User.last_login: now}
        if name:
            changes[User.name] = name
        User.update(changes).where(User.id == user.id).execute()
        if not Identity.select().where(Identity.user == user.id).exists():
            grant_if_listed(user, email, settings.admins)
        token, _ = create_session(
            user,
            LOCAL_PROVIDER,
            now=now,
            ttl=settings.session_ttl,
            max_age=settings.session_max_age,
        )
    return token


def _account_of(email: str) -> User | None:
    """The account holding *email* (compared case-insensitively, as sign-up does:
    one account per address), None for none; the exact spelling when several
    accounts hold it (made before sign-up refused that), else ValueError."""
    found = holders(email)
    exact = [user for user in found if user.email == email]
    if exact or len(found) <= 1:
        return exact[0] if exact else (found[0] if found else None)
    ids = ", ".join(str(user.id) for user in found)
    raise ValueError(f"{len(found)} accounts hold {email!r} (ids {ids}): give one's exact address")
