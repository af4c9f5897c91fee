"""Response models of the session and sign-in endpoints (docs/api.md#cli-sign-in)."""

from __future__ import annotations

from typing import Annotated, Any, Self

from pydantic import Field

from uptime_server.schemas.base import ResponseModel, UtcTime


class User(ResponseModel):
    id: int
    email: str
    name: str
    provider: Annotated[str | None, Field(description="Provider of this session")]
    avatar_url: str | None
    created_at: UtcTime
    last_login: UtcTime | None

    @classmethod
    def of(cls, row: Any, provider: str | None) -> Self:
        return cls.from_row(row, provider=provider)


class CliSession(ResponseModel):
    session: str
    expires_at: UtcTime
    user: User


class Refreshed(ResponseModel):
    message: str
    expires_at: UtcTime
