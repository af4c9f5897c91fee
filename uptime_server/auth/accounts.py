"""Who a request acts for: the account, read with its session or token as one tuple.

Every API request looks up its session (or bearer token) and the account
behind it. Both come from one prepared query (``db.Prepared``) as a tuple,
into the frozen dataclasses here, not into peewee models: a request reads
them and never saves them. ``Account`` is also flask-login's user
(``current_user``): the protocol's four members are on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import ClassVar

from uptime_server.models import ApiToken, Membership, Session, Team, User


@dataclass(frozen=True, slots=True)
class Account:
    """A user as a request sees it (the columns of ``users``)."""

    id: int
    email: str
    name: str
    avatar_url: str | None
    created_at: datetime
    last_login: datetime | None
    is_admin: bool
    personal_team_id: int | None

    # flask-login's user protocol: an account is always a signed-in, active user.
    is_authenticated: ClassVar[bool] = True
    is_active: ClassVar[bool] = True
    is_anonymous: ClassVar[bool] = False

    def get_id(self) -> str:
        return str(self.id)


@dataclass(frozen=True, slots=True)
class LiveSession:
    """A session found by its cookie, not expired, with its account."""

    id: int
    user_id: int
    provider: str
    created_at: datetime
    expires_at: datetime
    account: Account
    # The user's role in their personal team (None: no longer a member), and
    # its slug: a request naming that team by slug needs no other query.
    team_role: str | None = None
    team_slug: str | None = None


@dataclass(frozen=True, slots=True)
class LiveToken:
    """An API token found by its bearer, with its account (expiry not yet judged)."""

    id: int
    user_id: int
    team_id: int
    name: str
    scope: str
    prefix: str
    created_at: datetime
    expires_at: datetime | None
    last_used_at: datetime | None
    account: Account
    # The user's current role in the token's team (None: no longer a member),
    # and the team's slug.
    team_role: str | None = None
    team_slug: str | None = None


# The columns each query selects, in the dataclasses' field order.
ACCOUNT_COLUMNS = (
    User.id,
    User.email,
    User.name,
    User.avatar_url,
    User.created_at,
    User.last_login,
    User.is_admin,
    User.personal_team,
)
SESSION_COLUMNS = (
    Session.id,
    Session.user,
    Session.provider,
    Session.created_at,
    Session.expires_at,
)
TOKEN_COLUMNS = (
    ApiToken.id,
    ApiToken.user,
    ApiToken.team,
    ApiToken.name,
    ApiToken.scope,
    ApiToken.prefix,
    ApiToken.created_at,
    ApiToken.expires_at,
    ApiToken.last_used_at,
)


# The caller's role in the default team (a LEFT JOIN of memberships: null when
# no longer a member) and that team's slug.
TEAM_COLUMNS = (Membership.role, Team.slug)


def live_session(row: tuple[object, ...]) -> LiveSession:
    """A row of ``SESSION_COLUMNS``, ``ACCOUNT_COLUMNS``, then ``TEAM_COLUMNS``."""
    split = len(SESSION_COLUMNS)
    account = Account(*row[split:-2])  # type: ignore[arg-type]
    return LiveSession(*row[:split], account, *row[-2:])  # type: ignore[arg-type]


def live_token(row: tuple[object, ...]) -> LiveToken:
    """A row of ``TOKEN_COLUMNS``, ``ACCOUNT_COLUMNS``, then ``TEAM_COLUMNS``."""
    split = len(TOKEN_COLUMNS)
    account = Account(*row[split:-2])  # type: ignore[arg-type]
    return LiveToken(*row[:split], account, *row[-2:])  # type: ignore[arg-type]
