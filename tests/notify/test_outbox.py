"""Outbox payloads: stored as JSON, read back for delivery, or refused for good."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from uptime_server.notify.outbox import MalformedPayload, content_from_json, content_to_json


def test_it_reads_back_what_it_stored(make_content: Any) -> None:
    resolved = datetime(2024, 5, 1, 12, 4, 12, tzinfo=UTC)
    for content in (make_content(), make_content(kind="recovery", resolved_at=resolved)):
        assert content_from_json(content_to_json(content)) == content


def test_it_takes_times_as_utc(make_content: Any) -> None:
    stored = {**content_to_json(make_content()), "started_at": "2024-05-01T14:00:00+02:00"}
    assert content_from_json(stored).started_at == datetime(2024, 5, 1, 12, tzinfo=UTC)
    stored["started_at"] = "2024-05-01T12:00:00"  # naive: UTC, as everywhere
    assert content_from_json(stored).started_at == datetime(2024, 5, 1, 12, tzinfo=UTC)


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"started_at": "yesterday"}, "started_at is not an ISO 8601 time: 'yesterday'"),
        ({"started_at": "2024-13-45T00:00:00Z"}, "started_at is not an ISO 8601 time"),
        ({"started_at": ""}, "started_at is not an ISO 8601 time"),
        ({"started_at": 1714564800}, "started_at is not an ISO 8601 time: '1714564800'"),
        ({"resolved_at": ["2024-05-01"]}, "resolved_at is not an ISO 8601 time"),
        ({"colour": "red"}, "payload fields do not match"),
        ({"kind": "sideways"}, "unknown alert kind"),
    ],
)
def test_a_malformed_payload_is_a_plain_error(
    make_content: Any, change: dict[str, Any], problem: str
) -> None:
    # A ValueError, which delivery counts as permanent; never an ApiError,
    # which it would retry for days.
    stored = {**content_to_json(make_content()), **change}
    with pytest.raises(ValueError) as info:
        content_from_json(stored)
    assert problem in str(info.value)


@pytest.mark.parametrize("payload", [None, [], "text"])
def test_a_payload_that_is_not_an_object_is_a_plain_error(payload: Any) -> None:
    with pytest.raises(MalformedPayload, match="not an object"):
        content_from_json(payload)
