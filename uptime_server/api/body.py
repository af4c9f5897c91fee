"""Reading request bodies: JSON objects or a clear INVALID_JSON error."""

from __future__ import annotations

import json
from typing import Any

from flask import request

from uptime_server.errors import ApiError


def json_body(*, optional: bool = False) -> Any:
    """The request's JSON body. An empty body is ``{}`` when *optional*."""
    raw = request.get_data(cache=True)
    if not raw.strip():
        if optional:
            return {}
        raise ApiError("INVALID_JSON", "Request body must be JSON")
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError("INVALID_JSON", f"Request body is not valid JSON: {exc}") from None
