"""The body of the CLI hand-off exchange (docs/api.md#cli-sign-in)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class CliExchangeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    ticket: Annotated[str, Field(min_length=1)]
    verifier: Annotated[str, Field(min_length=1)]
