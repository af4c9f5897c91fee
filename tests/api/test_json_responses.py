"""Answers written by pydantic (``schemas.base.json_response``, ``data_of``): the
same JSON as the models' ``to_json()``, a JSON content type, UTC times with Z,
and text other than ASCII sent as UTF-8."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from tests.api.shapes import create, sqlite_only
from uptime_server.schemas.base import Message, ResponseModel, UtcTime, data_of, json_response

pytestmark = sqlite_only  # about the encoding of answers, not the database


class _Sample(ResponseModel):
    name: str
    at: UtcTime
    uptime: float | None
    tags: list[str]


SAMPLE = _Sample(
    name='Café "ünïcode" \\ </script> \u2028 😀',
    at=datetime(2026, 11, 25, 3, 4, 5, 678901, tzinfo=UTC),
    uptime=99.95,
    tags=["a", "ß"],
)


def test_the_body_is_the_models_json(app: Any) -> None:
    with app.test_request_context():
        response = json_response(SAMPLE)
    assert response.mimetype == "application/json"
    raw = response.get_data()
    assert raw.endswith(b"}\n")
    assert json.loads(raw) == SAMPLE.to_json()
    assert json.loads(raw)["at"] == "2026-11-25T03:04:05Z"
    assert "Café".encode() in raw  # UTF-8, not \u escapes
    assert b", " not in raw.replace(b'", "', b"")  # compact, as jsonify's was


def test_data_of_wraps_in_data(app: Any) -> None:
    with app.test_request_context():
        response = data_of(Message(message="ok"))
    assert json.loads(response.get_data()) == {"data": {"message": "ok"}}


def test_a_monitor_round_trips_through_the_api(alice: Any) -> None:
    name = "Zürich 東京 \u2028 monitor"
    mid = create(alice, name=name)
    for response in (alice.get(f"/api/v1/monitors/{mid}"), alice.get("/api/v1/monitors")):
        assert response.status_code == 200
        assert response.headers["Content-Type"] == "application/json"
        body = json.loads(response.get_data())
        monitor = body["data"] if isinstance(body["data"], dict) else body["data"][0]
        assert monitor["name"] == name
    paused = alice.post(f"/api/v1/monitors/{mid}/pause")
    assert paused.status_code == 200
    assert paused.get_json()["data"]["name"] == name
    assert paused.get_json()["message"] == "Monitor paused"
