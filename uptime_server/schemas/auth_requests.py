"""The body of the CLI hand-off exchange (docs/api.md#cli-sign-in)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from uptime_server.schemas.requests import Rule, parse_body


class CliExchangeRequest(BaseModel):
    # Other fields are ignored, as they always were: the CLI may send more.
    model_config = ConfigDict(extra="ignore", strict=True)

    ticket: Annotated[
        str,
        Field(min_length=1, max_length=200),
        Rule("required: the ticket from the sign-in redirect"),
    ]
    verifier: Annotated[
        str,
        Field(pattern=r"^[A-Za-z0-9._~-]{43,128}$"),
        Rule("required: the PKCE verifier (43 to 128 characters)"),
    ]


def parse_cli_exchange(body: Any) -> CliExchangeRequest:
    return parse_body(CliExchangeRequest, body, "must be a JSON object with ticket and verifier")
