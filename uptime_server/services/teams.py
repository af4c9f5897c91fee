"""Teams: create, list, rename, delete; members and their roles (docs/teams.md).

Every view of a team names it in its path (id or slug) and acts there with
the caller's role (``auth.teams.resolve``); a team the caller is not in is
``TEAM_NOT_FOUND``. The rules on roles: an admin sets roles up to admin of
members who are not owners; only an owner makes, demotes or removes an
owner; a team always keeps one owner (``LAST_OWNER``); anyone may leave.
Removing a member ends their access at once: the role is what every request
reads, their tokens of the team are deleted, and the invitations they sent
and nobody accepted are revoked.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from peewee import IntegrityError, fn

from uptime_server.auth import teams
from uptime_server.auth.teams import Acting
from uptime_server.config import Settings
from uptime_server.db import write_tx
from uptime_server.errors import ApiError
from uptime_server.models import (
    ApiToken,
    Invitation,
    Membership,
    Monitor,
    StatusPage,
    Team,
    User,
)
from uptime_server.services import audit, render_purges


@dataclass(frozen=True)
class TeamView:
    """A team as its JSON shows it to one caller."""

    team: Team
    role: str | None
    members: int
    personal: bool


def last_owner() -> ApiError:
    return ApiError(
        "LAST_OWNER",
        "A team keeps at least one owner: make another member owner first",
    )


def _view(team: Team, role: str | None, user_id: int) -> TeamView:
    members = Membership.select().where(Membership.team == team.id).count()
    personal = User.select().where((User.id == user_id) & (User.personal_team == team.id)).exists()
    return TeamView(team, role, members, personal)


def list_teams(user: Any) -> list[TeamView]:
    """The caller's teams, in order of joining; a server admin sees every team."""
    mine = {
        team_id: role
        for team_id, role in Membership.select(Membership.team, Membership.role)
        .where(Membership.user == user.id)
        .tuples()
    }
    if user.is_admin:
        rows = list(Team.select().order_by(Team.id))
    else:
        rows = list(Team.select().where(Team.id.in_(list(mine) or [0])).order_by(Team.id))
    counts = dict(
        Membership.select(Membership.team, fn.COUNT(Membership.id))
        .where(Membership.team.in_([t.id for t in rows] or [0]))
        .group_by(Membership.team)
        .tuples()
    )
    personal = user.personal_team_id
    return [TeamView(t, mine.get(t.id), counts.get(t.id, 0), t.id == personal) for t in rows]


def show(acting: Acting) -> TeamView:
    return _view(Team.get_by_id(acting.team_id), acting.role, acting.user_id)


def check_quota(user_id: int, settings: Settings) -> None:
    held = Membership.select().where(Membership.user == user_id).count()
    if held >= settings.max_teams_per_user:
        raise ApiError(
            "QUOTA_EXCEEDED",
            f"Team limit reached ({settings.max_teams_per_user} per user)",
            {"limit": [str(settings.max_teams_per_user)]},
        )


def _slug_taken(slug: str) -> ApiError:
    return ApiError("SLUG_TAKEN", f"The slug {slug!r} is taken", {"slug": ["is taken"]})


def create(
    user: Any,
    name: str,
    slug: str | None,
    *,
    via: tuple[str, int | None],
    now: datetime,
    settings: Settings,
) -> TeamView:
    """A new team with *user* as its owner."""
    with write_tx():
        check_quota(user.id, settings)
        wanted = slug or teams.free_slug(teams.slug_of(name))
        if Team.select().where(Team.slug == wanted).exists():
            raise _slug_taken(wanted)
        try:
            team = teams.create_team(name, wanted, user.id, now=now)
        except IntegrityError:
            raise _slug_taken(wanted) from None
        acting = Acting(team.id, "owner", user.id, user.name or user.email, *via)
        audit.record(acting, "team.create", "team", team.id, {"name": name, "slug": wanted}, at=now)
    return TeamView(team, "owner", 1, False)


def update(acting: Acting, name: str | None, slug: str | None, *, now: datetime) -> TeamView:
    teams.require(acting, "owner", "rename the team")
    team = Team.get_by_id(acting.team_id)
    changes: dict[str, Any] = {}
    if name is not None and name != team.name:
        changes["name"] = name
    if slug is not None and slug != team.slug:
        changes["slug"] = slug
    if changes:
        with write_tx():
            if "slug" in changes and Team.select().where(Team.slug == slug).exists():
                raise _slug_taken(slug or "")
            try:
                Team.update(changes).where(Team.id == team.id).execute()
            except IntegrityError:
                raise _slug_taken(slug or "") from None
            audit.record(
                acting, "team.update", "team", team.id, {"fields": sorted(changes)}, at=now
            )
    return show(acting)


def delete(acting: Acting) -> None:
    """Delete the team and all it owns; its monitors stop being checked with their rows."""
    teams.require(acting, "owner", "delete the team")
    pages = StatusPage.select(StatusPage.slug).where(StatusPage.team == acting.team_id)
    slugs = [slug for (slug,) in pages.tuples()]
    badges = Monitor.select(Monitor.badge_token).where(Monitor.team == acting.team_id)
    tokens = [token for (token,) in badges.tuples()]
    with write_tx():
        # The cascade takes monitors (with their schedule rows, runs, roll-ups,
        # notifications and outbox), channels, pages, windows, tokens,
        # memberships, invitations and the audit log.
        Team.delete().where(Team.id == acting.team_id).execute()
    render_purges.forget_pages(slugs)
    render_purges.forget_badges(tokens)


# -- members -------------------------------------------------------------------


@dataclass(frozen=True)
class Member:
    user_id: int
    name: str
    email: str
    role: str
    joined_at: datetime


def list_members(acting: Acting) -> list[Member]:
    return list_members_of(acting.team_id)


def _member(team_id: int, user_id: int) -> Membership:
    row = Membership.get_or_none((Membership.team == team_id) & (Membership.user == user_id))
    if row is None:
        raise ApiError("NOT_FOUND", "No such member in this team")
    return row


def _owners(team_id: int) -> int:
    return (
        Membership.select()
        .where((Membership.team == team_id) & (Membership.role == "owner"))
        .count()
    )


def member_of(team_id: int, user_id: int) -> Member:
    for m in list_members_of(team_id):
        if m.user_id == user_id:
            return m
    raise ApiError("NOT_FOUND", "No such member in this team")


def list_members_of(team_id: int) -> list[Member]:
    rows = (
        Membership.select(
            Membership.user, User.name, User.email, Membership.role, Membership.created_at
        )
        .join(User, on=(Membership.user == User.id))
        .where(Membership.team == team_id)
        .order_by(Membership.id)
        .tuples()
    )
    return [Member(*row) for row in rows]


def set_role(acting: Acting, user_id: int, role: str, *, now: datetime) -> Member:
    teams.require(acting, "admin", "change members' roles")
    with write_tx():
        teams.lock_team(acting.team_id)
        row = _member(acting.team_id, user_id)
        if "owner" in (role, row.role) and role != row.role:
            teams.require(acting, "owner", "make or unmake an owner")
        if row.role == "owner" and role != "owner" and _owners(acting.team_id) <= 1:
            raise last_owner()
        if role != row.role:
            Membership.update(role=role).where(Membership.id == row.id).execute()
            audit.record(
                acting, "member.role", "user", user_id, {"from": row.role, "to": role}, at=now
            )
    return member_of(acting.team_id, user_id)


def remove(acting: Acting, user_id: int, *, now: datetime) -> str:
    """Remove *user_id* (the caller: leave); the message to show."""
    leaving = user_id == acting.user_id
    if not leaving:
        teams.require(acting, "admin", "remove members")
    with write_tx():
        teams.lock_team(acting.team_id)
        row = _member(acting.team_id, user_id)
        if row.role == "owner" and not leaving:
            teams.require(acting, "owner", "remove an owner")
        if row.role == "owner" and _owners(acting.team_id) <= 1:
            raise last_owner()
        end_membership(acting.team_id, user_id)
        audit.record(
            acting,
            "member.leave" if leaving else "member.remove",
            "user",
            user_id,
            {"role": row.role},
            at=now,
        )
    return "You left the team" if leaving else f"User {user_id} removed from the team"


def end_membership(team_id: int, user_id: int) -> None:
    """Drop the membership, the user's tokens of the team and their pending invitations."""
    Membership.delete().where((Membership.team == team_id) & (Membership.user == user_id)).execute()
    ApiToken.delete().where((ApiToken.team == team_id) & (ApiToken.user == user_id)).execute()
    Invitation.delete().where(
        (Invitation.team == team_id)
        & (Invitation.invited_by == user_id)
        & Invitation.accepted_at.is_null()
    ).execute()
