"""``uptime notifications ...`` against a live daemon.

Notifications are written straight into the database (what the engine does
when a monitor goes down).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from tests.cli.conftest import Cli, describe
from tests.notification_rows import add_notification
from uptime_server import db
from uptime_server.models import Notification


@pytest.fixture
def incidents(cli: Cli, alice: Any, clock: Any) -> dict[str, int]:
    """An active downtime (1 h old), and an older resolved one with its recovery."""
    api = cli.json("monitors", "add", "api", "http://127.0.0.1:9/api")["id"]
    web = cli.json("monitors", "add", "web", "http://127.0.0.1:9/web")["id"]
    now = clock.now()
    start, end = now - timedelta(days=2), now - timedelta(days=1)
    with db.database.connection_context():
        active = _note("api", api, alice.user.id, "downtime", now - timedelta(hours=1))
        old = _note("web", web, alice.user.id, "downtime", start, end)
        recovery = _note("web", web, alice.user.id, "recovery", start, end)
    return {"api": api, "web": web, "active": active, "old": old, "recovery": recovery}


def _note(name: str, monitor: int, user: int, kind: str, started: Any, resolved: Any = None) -> int:
    message = f"{name} is DOWN: expected status in [200], got 503"
    if kind == "recovery":
        message = f"{name} is UP again after 1d"
    row = add_notification(
        monitor,
        user,
        started,
        message,
        type=kind,
        status="resolved" if resolved else "active",
        resolved_at=resolved,
        duration=int((resolved - started).total_seconds()) if resolved else None,
        error_status_code=503 if kind == "downtime" else 200,
        error_response_time=120,
        error_message="expected status in [200], got 503" if kind == "downtime" else "",
        email_sent_at=started,
    )
    return row.id


def test_list_shows_every_notification_newest_first(cli: Cli, incidents: dict[str, int]) -> None:
    body = cli.json("notifications", "list")
    assert [n["id"] for n in body["data"]][0] == incidents["active"]
    assert {n["id"] for n in body["data"]} == {
        incidents["active"],
        incidents["old"],
        incidents["recovery"],
    }
    assert body["pagination"]["total"] == 3
    out = cli.ok("notifications", "list").stdout
    assert "is DOWN" in out and "active" in out and "resolved" in out


def test_list_filters(cli: Cli, incidents: dict[str, int]) -> None:
    def ids(*args: str) -> set[int]:
        return {n["id"] for n in cli.json("notifications", "list", *args)["data"]}

    assert ids("--monitor", str(incidents["api"])) == {incidents["active"]}
    assert ids("--type", "recovery") == {incidents["recovery"]}
    assert ids("--status", "active") == {incidents["active"]}
    assert ids("--since", "2026-11-22T00:00:00Z") == {incidents["active"]}
    page = cli.json("notifications", "list", "--limit", "1", "--page", "2")
    assert len(page["data"]) == 1 and page["pagination"]["has_prev"] is True


def test_list_suppressed(cli: Cli, incidents: dict[str, int]) -> None:
    # The web downtime was held while its parent (the api one) was down.
    with db.database.connection_context():
        Notification.update(suppressed_by=incidents["active"]).where(
            Notification.id.in_([incidents["old"], incidents["recovery"]])
        ).execute()

    def ids(*args: str) -> set[int]:
        return {n["id"] for n in cli.json("notifications", "list", *args)["data"]}

    assert ids("--suppressed") == {incidents["old"], incidents["recovery"]}
    assert ids("--not-suppressed") == {incidents["active"]}
    assert len(ids()) == 3
    body = cli.json("notifications", "list", "--suppressed")
    assert {n["suppressed_by"] for n in body["data"]} == {incidents["active"]}
    out = cli.ok("notifications", "list", "--suppressed").stdout
    assert f"[suppressed by #{incidents['active']}]" in out


def test_active_and_recent(cli: Cli, incidents: dict[str, int]) -> None:
    body = cli.json("notifications", "active")
    assert [n["id"] for n in body["data"]] == [incidents["active"]]
    assert body["meta"]["count"] == 1
    body = cli.json("notifications", "recent")
    assert [n["id"] for n in body["data"]] == [incidents["active"]]  # last 24 h only
    assert "has_next" in body["pagination"]
    assert "is DOWN" in cli.ok("notifications", "active").stdout


def test_show_prints_the_detail(cli: Cli, incidents: dict[str, int]) -> None:
    data = cli.json("notifications", "show", str(incidents["active"]))
    assert data["monitor_name"] == "api"
    assert data["error_details"]["status_code"] == 503
    out = cli.ok("notifications", "show", str(incidents["active"])).stdout
    assert "http://127.0.0.1:9/api" in out and "503" in out


def test_ack_then_resolve(cli: Cli, incidents: dict[str, int]) -> None:
    nid = str(incidents["active"])
    data = cli.json("notifications", "ack", nid)
    assert data["id"] == incidents["active"] and data["acknowledged"] is True
    first = data["acknowledged_at"]
    assert cli.json("notifications", "ack", nid)["acknowledged_at"] == first  # idempotent
    result = cli.ok("notifications", "resolve", nid)
    assert "Resolved notification" in result.stderr
    again = cli("notifications", "resolve", nid)
    assert again.exit_code == 4, describe(again)
    assert "NOTIFICATION_NOT_ACTIVE" in again.stderr
    assert cli("notifications", "ack", nid).exit_code == 4


def test_unknown_or_foreign_notifications_are_not_found(
    cli: Cli, bob_cli: Cli, incidents: dict[str, int]
) -> None:
    for args in (["show", "999999"], ["ack", str(incidents["active"])]):
        result = bob_cli("notifications", *args)
        assert result.exit_code == 4
        assert "NOTIFICATION_NOT_FOUND" in result.stderr


def test_list_filters_certificate_alerts(cli: Cli, alice: Any, clock: Any) -> None:
    shop = cli.json("monitors", "add", "shop", "https://127.0.0.1:9/")["id"]
    message = "Certificate for shop expires in 7 days (not after 2026-11-29T12:00:00Z)"
    with db.database.connection_context():
        note = add_notification(shop, alice.user.id, clock.now(), message, type="cert_expiry")
    body = cli.json("notifications", "list", "--type", "cert_expiry")
    assert [(n["id"], n["type"], n["message"]) for n in body["data"]] == [
        (note.id, "cert_expiry", message)
    ]
    assert "Certificate for shop expires in 7 days" in cli.ok("notifications", "list").stdout
    acked = cli.json("notifications", "ack", str(note.id))
    assert acked["acknowledged"] is True
