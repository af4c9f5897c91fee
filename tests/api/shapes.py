"""Monitor request bodies and the error-shape assertion shared by the API tests."""

from __future__ import annotations

from typing import Any

import pytest

HTTP_MONITOR = {"name": "api", "url": "http://127.0.0.1:9/health", "type": "http"}

# For tests about something other than the database.
# For tests of what never reaches a table (validation, headers, routing): the
# README (Development) lists the SQLite-only tests and why.
sqlite_only = pytest.mark.parametrize("backend", ["sqlite"], indirect=True)


def monitor_body(**changes: Any) -> dict[str, Any]:
    return {**HTTP_MONITOR, **changes}


def assert_error(
    response: Any, status: int, code: str, *fields: str, only: bool = False
) -> dict[str, Any]:
    """The response is the spec's error shape with *code*; *fields* are named in details.

    With *only*, details name those fields and no others.
    """
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == "application/json"
    body = response.get_json()
    assert set(body) == {"error"}
    error = body["error"]
    assert set(error) == {"code", "message", "details"}
    assert error["code"] == code
    assert isinstance(error["message"], str) and error["message"]
    assert isinstance(error["details"], dict)
    for field in fields:
        assert field in error["details"], error
        messages = error["details"][field]
        assert messages and all(isinstance(m, str) and m for m in messages)
    if only:
        assert set(error["details"]) == set(fields), error
    return error


def create(user: Any, **changes: Any) -> int:
    response = user.post("/api/v1/monitors", json=monitor_body(**changes))
    assert response.status_code == 201, response.get_json()
    return response.get_json()["data"]["id"]
