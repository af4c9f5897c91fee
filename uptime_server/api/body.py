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
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError("INVALID_JSON", f"Request body is not valid JSON: {exc}") from None
    except RecursionError:
        raise ApiError("INVALID_JSON", "Request body is nested too deeply") from None
    _require_encodable(data)
    return data


def _require_encodable(data: Any) -> None:
    """Refuse lone surrogates (``"\\ud800"``): valid JSON, but no database can store them."""
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except RecursionError:
        raise ApiError("INVALID_JSON", "Request body is nested too deeply") from None
    except UnicodeEncodeError:
        raise ApiError(
            "INVALID_JSON", "Request body contains invalid Unicode (a lone surrogate)"
        ) from None
