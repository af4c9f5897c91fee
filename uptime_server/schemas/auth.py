"""Response models of the session and sign-in endpoints (docs/api.md#cli-sign-in)."""

from __future__ import annotations

from typing import Annotated, Any, Self

from pydantic import Field

from uptime_server.schemas.base import ResponseModel, UtcTime

IsAdmin = Annotated[
    bool,
    Field(
        description="May manage probe agents: set at sign-in from UPTIME_ADMINS (a verified "
        "address no other account holds) or by `uptime server admin grant`"
    ),
]


class TeamRef(ResponseModel):
    id: int
    name: str
    slug: str


class User(ResponseModel):
    id: int
    email: str
    name: str
    provider: Annotated[str | None, Field(description="Provider of this session")]
    avatar_url: str | None
    created_at: UtcTime
    last_login: UtcTime | None
    is_admin: IsAdmin
    team: Annotated[
        TeamRef | None,
        Field(description="The team this request acts in (X-Uptime-Team, else the default)"),
    ] = None
    role: Annotated[
        str | None, Field(description="The caller's role there (a token's: capped by its scope)")
    ] = None

    @classmethod
    def of(cls, row: Any, provider: str | None, team: Any = None, role: str | None = None) -> Self:
        ref = None if team is None else TeamRef(id=team.id, name=team.name, slug=team.slug)
        return cls.from_row(row, provider=provider, team=ref, role=role)


class Account(ResponseModel):
    """A user as ``uptime server admin`` shows it, on the server's machine."""

    id: int
    email: str
    name: str
    is_admin: IsAdmin
    providers: Annotated[list[str], Field(description="Linked sign-in providers")]
    created_at: UtcTime
    last_login: UtcTime | None

    @classmethod
    def of(cls, row: Any) -> Self:
        providers = sorted({identity.provider for identity in row.identities})
        return cls.from_row(row, providers=providers)


class CliSession(ResponseModel):
    session: str
    expires_at: UtcTime
    user: User


class Refreshed(ResponseModel):
    message: str
    expires_at: UtcTime
