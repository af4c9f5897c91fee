"""Request and response models of teams, members, invitations and the audit log (docs/teams.md)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from uptime_server.auth.teams import SLUG_PATTERN, is_slug
from uptime_server.schemas.base import ResponseModel, UtcTime
from uptime_server.schemas.field_rules import no_control, strip
from uptime_server.schemas.requests import Rule, parse_body

Role = Literal["viewer", "member", "admin", "owner"]
ROLE_RULE = Rule("must be one of viewer, member, admin, owner")
Name = Annotated[
    str,
    Field(min_length=1, max_length=200),
    BeforeValidator(strip),
    Rule("must be 1 to 200 characters", on=("string_too_short", "string_too_long")),
]


def _has_letter(slug: str) -> str:
    if not is_slug(slug):
        raise ValueError("all digits: it would read as a team id")
    return slug


Slug = Annotated[
    str,
    Field(pattern=SLUG_PATTERN, max_length=64),
    AfterValidator(_has_letter),
    Rule(
        "must be 1 to 64 lower-case letters, digits and dashes, starting with a letter or "
        "digit, with at least one letter"
    ),
]


class TeamCreate(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: Name = Field(description="1 to 200 characters after stripping.")
    slug: Slug | None = Field(None, description="Defaults to one made from the name.")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return no_control(v, "name")


class TeamUpdate(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: Name | None = None
    slug: Slug | None = None

    @field_validator("name")
    @classmethod
    def _name(cls, v: str | None) -> str | None:
        return None if v is None else no_control(v, "name")


class RoleChange(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    role: Annotated[Role, ROLE_RULE]


def parse_team_create(body: Any) -> TeamCreate:
    return parse_body(TeamCreate, body, "must be a JSON object with a name")


def parse_team_update(body: Any) -> TeamUpdate:
    return parse_body(TeamUpdate, body, "must be a JSON object with name and/or slug")


def parse_role(body: Any) -> RoleChange:
    return parse_body(RoleChange, body, "must be a JSON object with a role")


class Team(ResponseModel):
    id: int
    name: str
    slug: str
    created_at: UtcTime
    personal: Annotated[bool, Field(description="The caller's personal team (made at sign-up)")]
    role: Annotated[
        Role | None, Field(description="The caller's role; null: a server admin who is not in it")
    ]
    members: Annotated[int, Field(description="How many members it has")]

    @classmethod
    def of(cls, view: Any) -> Self:
        t = view.team
        return cls(
            id=t.id,
            name=t.name,
            slug=t.slug,
            created_at=t.created_at,
            personal=view.personal,
            role=view.role,
            members=view.members,
        )


class TeamList(ResponseModel):
    data: list[Team]


class Member(ResponseModel):
    user_id: int
    name: str
    email: str
    role: Role
    joined_at: UtcTime

    @classmethod
    def of(cls, m: Any) -> Self:
        return cls(
            user_id=m.user_id, name=m.name, email=m.email, role=m.role, joined_at=m.joined_at
        )


class MemberList(ResponseModel):
    data: list[Member]
