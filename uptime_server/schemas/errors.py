"""The error response (docs/api.md#error-codes): ``{"error": {code, message, details}}``.

The document narrows ``code`` to the codes of each HTTP status; the codes
themselves live in ``uptime_server.errors``; ``wsgi/errors.py``, the one error
writer, serialises through these.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from uptime_server.schemas.base import ResponseModel


class ErrorBody(ResponseModel):
    code: str
    message: str
    details: Annotated[
        dict[str, list[str]],
        Field(description="Field or parameter name → messages (validation errors); {} otherwise."),
    ]


class Error(ResponseModel):
    error: ErrorBody
