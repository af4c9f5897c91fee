"""Request and response models of team invitations (docs/teams.md#invitations)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator

from uptime_server.email_syntax import MAX_ADDRESS, normalize_email
from uptime_server.schemas.base import ResponseModel, UtcTime
from uptime_server.schemas.requests import Rule, parse_body
from uptime_server.schemas.teams import ROLE_RULE, Role

MAX_TOKEN_TEXT = 2048  # a token (43 characters) or the whole link


class InvitationCreate(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    email: Annotated[
        str,
        Field(
            min_length=3,
            max_length=MAX_ADDRESS,
            description="Where the link is sent; whoever opens it joins.",
            json_schema_extra={"format": "email"},
        ),
        Rule("must be an email address", on=("string_too_short", "string_too_long", "string_type")),
    ]
    role: Annotated[Role, ROLE_RULE, Field(description="At most the inviter's own role.")]

    @field_validator("email")
    @classmethod
    def _email(cls, v: str) -> str:
        return normalize_email(v.strip())


class InvitationAccept(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    token: Annotated[
        str,
        Field(
            min_length=1,
            max_length=MAX_TOKEN_TEXT,
            description="The invitation's token, or the whole link `{base_url}/invite/{token}`.",
        ),
        Rule("must be the invitation's token or link"),
    ]


def parse_invitation_create(body: Any) -> InvitationCreate:
    return parse_body(InvitationCreate, body, "must be a JSON object with email and role")


def parse_invitation_accept(body: Any) -> InvitationAccept:
    return parse_body(InvitationAccept, body, "must be a JSON object with a token")


class Person(ResponseModel):
    id: int
    name: str


InvitationStatus = Literal["pending", "accepted", "expired"]


class Invitation(ResponseModel):
    """An invitation as the API shows it: never its token."""

    id: int
    team_id: int
    email: str
    role: Role
    created_at: UtcTime
    expires_at: UtcTime
    invited_by: Annotated[
        Person | None, Field(description="Who sent it; null once that account is deleted")
    ]
    status: Annotated[
        InvitationStatus,
        Field(description="pending: can be accepted; accepted: used once; expired: too late"),
    ]

    @classmethod
    def of(cls, view: Any) -> Self:
        row = view.invitation
        inviter = (
            None
            if view.inviter_id is None
            else Person(id=view.inviter_id, name=view.inviter_name or "")
        )
        return cls(
            id=row.id,
            team_id=row.team_id,
            email=row.email,
            role=row.role,
            created_at=row.created_at,
            expires_at=row.expires_at,
            invited_by=inviter,
            status=view.status,
        )


class InvitationList(ResponseModel):
    data: list[Invitation]
