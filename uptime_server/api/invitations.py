"""Team invitations: /api/v1/teams/{team}/invitations and /api/v1/invitations/accept.

Sending, listing and revoking take admin in the team of the path (as the
teams resource does, ``api.teams.acting_in``; ``X-Uptime-Team`` is not
read). Accepting takes a signed-in session, in no team yet: the token says
which (docs/teams.md#invitations). No answer ever carries a token.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint
from flask_login import current_user

from uptime_server.api.body import json_body
from uptime_server.api.teams import TEAM_PARAM, acting_in
from uptime_server.auth.sessions import current_session
from uptime_server.schemas.base import Message, data, data_of, json_response
from uptime_server.schemas.invitations import (
    Invitation,
    InvitationAccept,
    InvitationCreate,
    InvitationList,
    parse_invitation_accept,
    parse_invitation_create,
)
from uptime_server.schemas.teams import Team
from uptime_server.services import invitations as invitation_service
from uptime_server.wsgi.access import requires, session_only, team_free
from uptime_server.wsgi.context import now, settings
from uptime_server.wsgi.operations import documenter

bp = Blueprint("invitations", __name__)
doc = documenter("teams")


@bp.post("/teams/<team>/invitations")
@team_free
@requires("admin")
@doc(
    "createInvitation",
    ok={201: data(Invitation)},
    errors=(404,),
    params=(TEAM_PARAM,),
    body=InvitationCreate,
)
def create_invitation(team: str) -> Any:
    """Invite someone by email (admin; a role up to yours, owner only by an owner)."""
    acting = acting_in(team, "admin", "invite members")
    body = parse_invitation_create(json_body())
    view = invitation_service.create(acting, body.email, body.role, now=now(), settings=settings())
    return data_of(Invitation.of(view)), 201


@bp.get("/teams/<team>/invitations")
@team_free
@requires("admin")
@doc("listInvitations", ok=InvitationList, errors=(404,), params=(TEAM_PARAM,))
def list_invitations(team: str) -> Any:
    """The team's invitations with their status, newest first (admin)."""
    views = invitation_service.list_for(acting_in(team, "admin", "see invitations"), now=now())
    return json_response(InvitationList(data=[Invitation.of(v) for v in views]))


@bp.delete("/teams/<team>/invitations/<int:invitation_id>")
@team_free
@requires("admin")
@doc(
    "revokeInvitation",
    ok=Message,
    errors=(404,),
    params=(TEAM_PARAM,),
)
def revoke_invitation(team: str, invitation_id: int) -> Any:
    """Revoke an invitation: its link stops working (admin)."""
    acting = acting_in(team, "admin", "revoke invitations")
    invitation_service.revoke(acting, invitation_id, now=now())
    return json_response(Message(message="Invitation revoked"))


@bp.post("/invitations/accept")
@team_free
@session_only
@doc("acceptInvitation", ok=data(Team), errors=(403, 404), body=InvitationAccept)
def accept_invitation() -> Any:
    """Join the team of an invitation (its token, or the whole link); the token is used up."""
    body = parse_invitation_accept(json_body())
    session = current_session()
    view = invitation_service.accept(
        current_user,
        body.token,
        via=("session", session.id if session is not None else None),
        now=now(),
        settings=settings(),
    )
    return data_of(Team.of(view))
