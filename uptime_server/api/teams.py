"""The teams resource: /api/v1/teams and their members (docs/teams.md).

A team is named in the path by id or slug and acted in with the caller's
role there (``auth.teams.resolve``: a token only in its own team, capped by
its scope); a team the caller is not in is 404 TEAM_NOT_FOUND. These views
ignore ``X-Uptime-Team``: the path says which team.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, request
from flask_login import current_user

from uptime_server.api.body import json_body
from uptime_server.auth import teams
from uptime_server.auth.api_tokens import current_token
from uptime_server.auth.sessions import current_session
from uptime_server.auth.teams import Acting
from uptime_server.schemas.base import Message, data, data_of, json_response
from uptime_server.schemas.teams import (
    Member,
    MemberList,
    RoleChange,
    Team,
    TeamCreate,
    TeamList,
    TeamUpdate,
    parse_role,
    parse_team_create,
    parse_team_update,
)
from uptime_server.services import teams as team_service
from uptime_server.wsgi.access import requires, session_only, team_free
from uptime_server.wsgi.context import now, settings
from uptime_server.wsgi.operations import ID_SCHEMA, documenter

bp = Blueprint("teams", __name__, url_prefix="/teams")
doc = documenter("teams")
TEAM_PARAM = {
    "name": "team",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "minLength": 1, "maxLength": 64},
    "description": "The team's id or slug.",
}
USER_PARAM = {"name": "user_id", "in": "path", "required": True, "schema": ID_SCHEMA}


def acting_in(team: str, needed: str = "viewer", what: str | None = None) -> Acting:
    """The caller in the team of the path, with at least *needed* (else 403 FORBIDDEN).

    The views here check their role themselves (the team is in the path, not
    the header); each also declares it with ``requires``, which the role
    tests and the token-scope tests read.
    """
    acting = teams.for_request(request, team)
    teams.require(acting, needed, what)
    return acting


def _via() -> tuple[str, int | None]:
    token = current_token()
    if token is not None:
        return ("token", token.id)
    session = current_session()
    return ("session", session.id if session is not None else None)


@bp.get("")
@team_free
@doc("listTeams", ok=TeamList)
def list_teams() -> Any:
    """List the caller's teams (a server admin: every team)."""
    views = team_service.list_teams(current_user)
    return json_response(TeamList(data=[Team.of(v) for v in views]))


@bp.post("")
@team_free
@session_only
@doc("createTeam", ok={201: data(Team)}, errors=(403, 409), body=TeamCreate)
def create_team() -> Any:
    """Create a team; the caller becomes its owner."""
    body = parse_team_create(json_body())
    view = team_service.create(
        current_user, body.name, body.slug, via=_via(), now=now(), settings=settings()
    )
    return data_of(Team.of(view)), 201


@bp.get("/<team>")
@team_free
@doc("getTeam", ok=data(Team), errors=(404,), params=(TEAM_PARAM,))
def show_team(team: str) -> Any:
    """One team."""
    return data_of(Team.of(team_service.show(acting_in(team))))


@bp.put("/<team>")
@team_free
@requires("owner")
@doc("updateTeam", ok=data(Team), errors=(404, 409), params=(TEAM_PARAM,), body=TeamUpdate)
def update_team(team: str) -> Any:
    """Rename a team, or change its slug (owner)."""
    acting = acting_in(team, "owner", "rename the team")
    body = parse_team_update(json_body())
    return data_of(Team.of(team_service.update(acting, body.name, body.slug, now=now())))


@bp.delete("/<team>")
@team_free
@requires("owner")
@doc("deleteTeam", ok=Message, errors=(404,), params=(TEAM_PARAM,))
def delete_team(team: str) -> Any:
    """Delete a team with everything it owns (owner)."""
    team_service.delete(acting_in(team, "owner", "delete the team"))
    return json_response(Message(message="Team deleted"))


@bp.get("/<team>/members")
@team_free
@doc("listMembers", ok=MemberList, errors=(404,), params=(TEAM_PARAM,))
def list_members(team: str) -> Any:
    """List a team's members and their roles."""
    members = team_service.list_members(acting_in(team))
    return json_response(MemberList(data=[Member.of(m) for m in members]))


@bp.put("/<team>/members/<int:user_id>")
@team_free
@requires("admin")
@doc(
    "setMemberRole",
    ok=data(Member),
    errors=(404, 409),
    params=(TEAM_PARAM, USER_PARAM),
    body=RoleChange,
)
def set_role(team: str, user_id: int) -> Any:
    """Change a member's role (admin; owner to make or unmake an owner)."""
    acting = acting_in(team, "admin", "change members' roles")
    body = parse_role(json_body())
    return data_of(Member.of(team_service.set_role(acting, user_id, body.role, now=now())))


@bp.delete("/<team>/members/<int:user_id>")
@team_free
@requires("viewer")  # leaving; removing another takes admin
@doc("removeMember", ok=Message, errors=(404, 409), params=(TEAM_PARAM, USER_PARAM))
def remove_member(team: str, user_id: int) -> Any:
    """Remove a member (admin), or leave (your own id)."""
    acting = acting_in(team)
    return json_response(Message(message=team_service.remove(acting, user_id, now=now())))
