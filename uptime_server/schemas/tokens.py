"""Request and response models of the API tokens resource (docs/api.md#api-tokens)."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from uptime_server.schemas.base import ResponseModel, UtcTime
from uptime_server.schemas.field_rules import no_control, strip
from uptime_server.schemas.requests import Rule, parse_body

MIN_EXPIRES_IN = 60
MAX_EXPIRES_IN = 10 * 365 * 86400  # ten years

Scope = Literal["read", "write", "admin", "ping"]


class TokenCreate(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: Annotated[
        str,
        Field(min_length=1, max_length=100),
        BeforeValidator(strip),
        Rule("must be 1 to 100 characters", on=("string_too_short", "string_too_long")),
    ] = Field(description="1 to 100 characters after stripping; no control characters.")
    scope: Annotated[Scope, Rule("must be one of read, write, admin, ping")] = Field(
        description="In the request's team, at most as its creator's role there: read "
        "(viewer: every GET); write (member: monitors, windows, notifications); admin "
        "(admin: also channels, status pages, invitations); ping: heartbeat pings only."
    )
    expires_in: Annotated[
        Annotated[int, Field(ge=MIN_EXPIRES_IN, le=MAX_EXPIRES_IN)] | None,
        Rule(f"must be an integer number of seconds from {MIN_EXPIRES_IN} to {MAX_EXPIRES_IN}"),
    ] = Field(None, description="Seconds until the token expires; omitted or null: never.")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return no_control(v, "name")


def parse_token_create(body: Any) -> TokenCreate:
    return parse_body(TokenCreate, body, "must be a JSON object with name and scope")


class Token(ResponseModel):
    id: int
    team_id: int
    user_id: Annotated[int, Field(description="Whose token it is")]
    name: str
    scope: Scope
    prefix: Annotated[str, Field(description="The token's first characters, to recognise it")]
    created_at: UtcTime
    expires_at: Annotated[UtcTime | None, Field(description="null: never expires")]
    last_used_at: Annotated[
        UtcTime | None, Field(description="Updated at most once a minute; null: never used")
    ]

    @classmethod
    def of(cls, row: Any) -> Self:
        return cls.from_row(row)


class TokenCreated(Token):
    token: Annotated[str, Field(description="The secret, shown this once: upt_...")]


class TokenList(ResponseModel):
    data: list[Token]
