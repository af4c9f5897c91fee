"""Reading request bodies: JSON objects or a clear INVALID_JSON error.

Messages are ours: the parser's own text ("Expecting value: line 1 column 1
(char 0)", codec names, interpreter limits) says how Python failed, not what
is wrong with the request.
"""

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
        data = json.loads(raw, parse_constant=_refuse_constant)
    except json.JSONDecodeError as exc:
        raise _invalid(f"not valid JSON at line {exc.lineno}, column {exc.colno}") from None
    except _NotJsonNumber as exc:
        raise _invalid(f"not valid JSON: {exc} is not a JSON number") from None
    except UnicodeDecodeError:
        raise _invalid("not UTF-8 text") from None
    except ValueError:
        # e.g. an integer with more digits than the interpreter converts
        raise _invalid("not valid JSON") from None
    except RecursionError:
        raise _invalid("nested too deeply") from None
    _require_encodable(data)
    return data


class _NotJsonNumber(ValueError):
    """NaN and Infinity: Python's extension, not JSON (RFC 8259)."""


def _refuse_constant(name: str) -> Any:
    raise _NotJsonNumber(name)


def _invalid(problem: str) -> ApiError:
    return ApiError("INVALID_JSON", f"Request body is {problem}", {"body": [f"is {problem}"]})


def _require_encodable(data: Any) -> None:
    """Refuse lone surrogates (``"\\ud800"``): valid JSON, but no database can store them."""
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except RecursionError:
        raise _invalid("nested too deeply") from None
    except UnicodeEncodeError:
        raise _invalid("invalid Unicode (a lone surrogate)") from None
