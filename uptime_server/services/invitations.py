"""Invitations to a team: send, list, revoke, accept (docs/teams.md#invitations).

An admin (or owner) invites an address with a role no higher than their own
(an owner only by an owner). The link ``{base_url}/invite/{token}`` goes out
by email through the outbox (``notify.invitation``), in the transaction that
makes the invitation. The token is ``secrets.token_urlsafe(32)``; only its
SHA-256 is stored, looked up by its unique index and compared in constant
time. It is valid for ``INVITATION_TTL`` and works once: accepting is a
conditional UPDATE (still unused, not expired), so of two accepts only one
wins. Whoever accepts joins: the address is only where the link went, never
matched against the account. An existing member keeps the higher of their
role and the invited one.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from uptime_server.auth import teams
from uptime_server.auth.teams import RANK, Acting
from uptime_server.config import Settings
from uptime_server.db import write_tx
from uptime_server.errors import ApiError
from uptime_server.models import Invitation, Membership, Team, User
from uptime_server.notify import invitation as invitation_mail
from uptime_server.notify.outbox import mail_domain
from uptime_server.services import audit
from uptime_server.services import teams as team_service

INVITATION_TTL = timedelta(days=7)
INVITE_PATH = "/invite/"


@dataclass(frozen=True)
class InvitationView:
    """An invitation as its JSON shows it: the row, who sent it, and its status."""

    invitation: Invitation
    inviter_id: int | None
    inviter_name: str | None
    status: str  # pending | accepted | expired


@dataclass(frozen=True)
class Pending:
    """A pending invitation as the invite page shows it (never its token)."""

    team_name: str
    role: str
    inviter_name: str
    expires_at: datetime


def not_found() -> ApiError:
    return ApiError("NOT_FOUND", "Invitation not found")


def not_found_or_expired() -> ApiError:
    return ApiError("NOT_FOUND", "Invitation not found or expired")


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def token_of(text: str) -> str:
    """The token in *text*: the token itself or the whole link ``.../invite/<token>``."""
    token = text.strip()
    if INVITE_PATH in token:
        token = token.rsplit(INVITE_PATH, 1)[1]
    for mark in ("?", "#"):
        token = token.partition(mark)[0]
    return token.strip("/ ")


def link_of(base_url: str, token: str) -> str:
    return f"{base_url.rstrip('/')}{INVITE_PATH}{token}"


def status_of(row: Invitation, now: datetime) -> str:
    if row.accepted_at is not None:
        return "accepted"
    return "expired" if row.expires_at <= now else "pending"


def _view(row: Invitation, now: datetime) -> InvitationView:
    inviter = User.get_or_none(User.id == row.invited_by_id) if row.invited_by_id else None
    return InvitationView(
        row,
        inviter.id if inviter else None,
        (inviter.name or inviter.email) if inviter else None,
        status_of(row, now),
    )


def create(
    acting: Acting, email: str, role: str, *, now: datetime, settings: Settings
) -> InvitationView:
    """Invite *email* as *role*; the email is queued in the same transaction."""
    teams.require(acting, "admin", "invite members")
    if RANK[role] > RANK[acting.role]:
        raise teams.forbidden(role, acting.role, f"invite someone as {role}")
    token = secrets.token_urlsafe(32)
    with write_tx():
        team = Team.get_by_id(acting.team_id)
        row = Invitation.create(
            team=acting.team_id,
            email=email,
            role=role,
            token_hash=token_hash(token),
            invited_by=acting.user_id,
            created_at=now,
            expires_at=now + INVITATION_TTL,
        )
        content = invitation_mail.InvitationContent(
            invitation_id=row.id,
            team_name=team.name,
            inviter_name=acting.user_name,
            role=role,
            link=link_of(settings.base_url, token),
            created_at=now,
            expires_at=row.expires_at,
        )
        invitation_mail.enqueue(
            content, email, mail_domain=mail_domain(settings.mail_from), now=now
        )
        audit.record(
            acting,
            "invitation.create",
            "invitation",
            row.id,
            {"email": email, "role": role},
            at=now,
        )
    return InvitationView(row, acting.user_id, acting.user_name, "pending")


def list_for(acting: Acting, *, now: datetime) -> list[InvitationView]:
    """Every invitation of the team, newest first."""
    teams.require(acting, "admin", "see the team's invitations")
    rows = list(
        Invitation.select()
        .where(Invitation.team == acting.team_id)
        .order_by(Invitation.created_at.desc(), Invitation.id.desc())
    )
    ids = {r.invited_by_id for r in rows if r.invited_by_id is not None}
    names = {
        user_id: name or email
        for user_id, name, email in User.select(User.id, User.name, User.email)
        .where(User.id.in_(list(ids) or [0]))
        .tuples()
    }
    return [
        InvitationView(r, r.invited_by_id, names.get(r.invited_by_id), status_of(r, now))
        for r in rows
    ]


def revoke(acting: Acting, invitation_id: int, *, now: datetime) -> None:
    """Delete one of the team's invitations; its link stops working at once."""
    teams.require(acting, "admin", "revoke invitations")
    with write_tx():
        row = Invitation.get_or_none(
            (Invitation.id == invitation_id) & (Invitation.team == acting.team_id)
        )
        if row is None:
            raise not_found()
        Invitation.delete().where(Invitation.id == row.id).execute()
        audit.record(
            acting,
            "invitation.revoke",
            "invitation",
            row.id,
            {"email": row.email, "role": row.role},
            at=now,
        )


def _find(text: str) -> Invitation | None:
    token = token_of(text)
    if not token:
        return None
    wanted = token_hash(token)
    row = Invitation.get_or_none(Invitation.token_hash == wanted)
    if row is None or not hmac.compare_digest(row.token_hash, wanted):
        return None
    return row


def pending(text: str, *, now: datetime) -> Pending | None:
    """What the invite page shows of the invitation whose token is *text*, if still pending."""
    row = _find(text)
    if row is None or status_of(row, now) != "pending":
        return None
    team = Team.get_by_id(row.team_id)
    view = _view(row, now)
    return Pending(team.name, row.role, view.inviter_name or "Someone", row.expires_at)


def accept(
    user: Any,
    text: str,
    *,
    via: tuple[str, int | None],
    now: datetime,
    settings: Settings,
) -> team_service.TeamView:
    """*user* joins the team of the invitation *text* names (its token or link)."""
    found = _find(text)
    if found is None or status_of(found, now) != "pending":
        raise not_found_or_expired()
    with write_tx():
        taken = (
            Invitation.update(accepted_at=now, accepted_by=user.id)
            .where(
                (Invitation.id == found.id)
                & Invitation.accepted_at.is_null()
                & (Invitation.expires_at > now)
            )
            .execute()
        )
        if taken != 1:
            raise not_found_or_expired()  # revoked, or another accept came first
        held = Membership.get_or_none(
            (Membership.team == found.team_id) & (Membership.user == user.id)
        )
        role = found.role
        if held is None:
            team_service.check_quota(user.id, settings)  # rolls the accept back too
            Membership.create(team=found.team_id, user=user.id, role=role, created_at=now)
        elif RANK[held.role] >= RANK[role]:
            role = held.role
        else:
            Membership.update(role=role).where(Membership.id == held.id).execute()
        joined = Acting(found.team_id, role, user.id, user.name or user.email, *via)
        details: dict[str, Any] = {"role": role, "invitation_id": found.id}
        if held is not None:
            details["previous_role"] = held.role
        audit.record(joined, "member.join", "user", user.id, details, at=now)
    return team_service.show(joined)
