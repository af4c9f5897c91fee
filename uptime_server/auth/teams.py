"""Which team a request acts in, and with what role (docs/teams.md).

The roles, lowest first, are ``viewer < member < admin < owner``. A session
acts in the team named by ``X-Uptime-Team`` (id or slug), else in its user's
personal team (else the user's oldest membership); a token acts in its own
team, as the lower of its scope's role (``SCOPE_ROLE``) and its user's
current role there, so a demotion caps a token at once. A team the caller is
not a member of is ``404 TEAM_NOT_FOUND``, never 403: existence does not leak.

The role in the default team comes with the session or token itself (one
query, ``accounts``); naming another team costs one prepared lookup.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from flask import Request, g
from flask_login import current_user

from uptime_server.db import INT64_MAX, Prepared, is_sqlite
from uptime_server.errors import ApiError
from uptime_server.models import ROLES, Membership, Team, User

RANK = {role: n for n, role in enumerate(ROLES)}
# What a token of each scope may do at most (ping: no API at all).
SCOPE_ROLE = {"read": "viewer", "write": "member", "admin": "admin"}
HEADER = "X-Uptime-Team"


@dataclass(frozen=True, slots=True)
class Acting:
    """Who acts, in which team, with which role, through which credential."""

    team_id: int
    role: str
    user_id: int
    user_name: str
    via_type: str  # session | token
    via_id: int | None

    def allows(self, needed: str) -> bool:
        return RANK[self.role] >= RANK[needed]


def at_least(role: str, needed: str) -> bool:
    return RANK[role] >= RANK[needed]


def lower(a: str, b: str) -> str:
    return a if RANK[a] <= RANK[b] else b


def team_not_found() -> ApiError:
    return ApiError("TEAM_NOT_FOUND", "Team not found")


def token_orphaned() -> ApiError:
    return ApiError("UNAUTHORIZED", "This API token's user is no longer a member of its team")


def forbidden(needed: str, current: str, what: str | None = None) -> ApiError:
    doing = what or "do this"
    return ApiError(
        "FORBIDDEN",
        f"Your role in this team is {current}: it takes {needed} or above to {doing}",
        {"required_role": [needed], "current_role": [current]},
    )


def require(acting: Acting, needed: str, what: str | None = None) -> None:
    if not acting.allows(needed):
        raise forbidden(needed, acting.role, what)


_BY_ID = Prepared(
    lambda team_id, user_id: (
        Membership.select(Membership.team, Membership.role)
        .where((Membership.team == team_id) & (Membership.user == user_id))
        .limit(1)
        .tuples()
    )
)
_BY_SLUG = Prepared(
    lambda slug, user_id: (
        Membership.select(Membership.team, Membership.role)
        .join(Team)
        .where((Team.slug == slug) & (Membership.user == user_id))
        .limit(1)
        .tuples()
    )
)
_OLDEST = Prepared(
    lambda user_id: (
        Membership.select(Membership.team, Membership.role)
        .where(Membership.user == user_id)
        .order_by(Membership.id)
        .limit(1)
        .tuples()
    )
)


def membership(user_id: int, key: str | int) -> tuple[int, str] | None:
    """(team id, role) of *user_id* in the team named by *key* (id or slug), if a member."""
    text = str(key).strip()
    if text.isdigit():
        number = int(text)
        if not 0 < number <= INT64_MAX:
            return None
        found = _BY_ID.first(number, user_id)
    elif 0 < len(text) <= 64:
        found = _BY_SLUG.first(text.lower(), user_id)
    else:
        return None
    return None if found is None else (found[0], found[1])  # type: ignore[index]


def resolve(
    *,
    user_id: int,
    user_name: str,
    default: tuple[int | None, str | None, str | None],
    header: str | None,
    token: Any | None,
    session_id: int | None,
) -> Acting:
    """The team and role of a request (see the module doc); TEAM_NOT_FOUND otherwise.

    *default* is (team id, role, slug) read with the credential: the token's
    team, or the user's personal team (role None when no longer a member).
    """
    team_id, role, slug = default
    asked = (header or "").strip()
    # The default team named by its id or slug needs no lookup, unless the
    # caller is no longer in it: then it is looked up, and not found, like any other.
    named_default = team_id is not None and asked.lower() in (str(team_id), slug)
    if asked and not (named_default and role is not None):
        found = membership(user_id, asked)
        if found is None:
            raise team_not_found()
        if token is not None and found[0] != team_id:
            raise team_not_found()  # a token acts in its own team only (named by id or slug)
        team_id, role = found
    elif team_id is None or role is None:
        if token is not None:
            raise token_orphaned()
        found = _OLDEST.first(user_id)
        if found is None:
            raise ApiError(
                "TEAM_NOT_FOUND", "You belong to no team: create one (POST /api/v1/teams)"
            )
        team_id, role = found  # type: ignore[misc]
    assert team_id is not None and role is not None
    if token is not None:
        return Acting(
            team_id, lower(role, SCOPE_ROLE[token.scope]), user_id, user_name, "token", token.id
        )
    return Acting(team_id, role, user_id, user_name, "session", session_id)


def for_request(req: Request, team: str | None = None) -> Acting:
    """The team and role of a signed-in API request *req* (see ``resolve``): in
    *team* (id or slug) if given, else in the one its header names."""
    from uptime_server.auth.api_tokens import current_token
    from uptime_server.auth.sessions import current_session

    token = current_token()
    session = current_session()
    account: Any = current_user
    if token is not None:
        default = (token.team_id, token.team_role, token.team_slug)
    elif session is not None:
        default = (account.personal_team_id, session.team_role, session.team_slug)
    else:
        default = (account.personal_team_id, None, None)
    return resolve(
        user_id=account.id,
        user_name=account.name or account.email,
        default=default,
        header=req.headers.get(HEADER) if team is None else team,
        token=token,
        session_id=session.id if session is not None else None,
    )


SLUG_PATTERN = r"^[a-z0-9](?:[a-z0-9-]{0,62})$"


def slug_of(text: str) -> str:
    """A URL-safe slug of *text* (a-z, 0-9 and dashes) with a letter in it: all
    digits would read as an id."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:56].strip("-")
    if not slug:
        return "team"
    return slug if is_slug(slug) else f"team-{slug}"[:56]


def is_slug(text: str) -> bool:
    """A team slug: SLUG_PATTERN, and not all digits and dashes (those read as an id)."""
    return re.fullmatch(SLUG_PATTERN, text) is not None and re.search("[a-z]", text) is not None


def free_slug(base: str) -> str:
    """*base*, else *base*-2, -3, ...: the first free one (the unique index decides races)."""
    taken = {
        slug
        for (slug,) in Team.select(Team.slug)
        .where((Team.slug == base) | Team.slug.startswith(base + "-"))
        .tuples()
    }
    slug, n = base, 1
    while slug in taken:
        n += 1
        slug = f"{base}-{n}"
    return slug


def lock_team(team_id: int) -> None:
    """Queue writes that must see one team's state unchanged until commit.

    Monitor creates (the team's count and keys), role changes (the last
    owner) and dependency edits (no cycle made by two edits at once) take it.
    PostgreSQL: a row lock on the team (NO KEY UPDATE: it does not hold up
    rows that merely reference the team, such as the engine's notifications).
    SQLite's write transaction already admits one writer at a time.
    """
    if not is_sqlite():
        Team.select(Team.id).where(Team.id == team_id).for_update("FOR NO KEY UPDATE").execute()


def create_team(name: str, slug: str, owner_id: int, *, now: datetime) -> Team:
    """A new team with *owner_id* as its owner (inside the caller's transaction)."""
    team = Team.create(name=name[:200], slug=slug, created_at=now)
    Membership.create(team=team.id, user=owner_id, role="owner", created_at=now)
    return team


def create_personal_team(user: Any, *, now: datetime) -> Team:
    """The team every user gets at sign-up, named after them, with them as owner."""
    local = (user.email or "").partition("@")[0]
    team = create_team(
        user.name or local or "Personal", free_slug(slug_of(local or user.name)), user.id, now=now
    )
    User.update(personal_team=team.id).where(User.id == user.id).execute()
    user.personal_team = team.id
    return team


def current_acting() -> Acting:
    """The team and role this API request acts with (set by the app's guard)."""
    acting = g.get("uptime_acting")
    if acting is None:
        raise RuntimeError("no team was resolved for this request")
    return acting
