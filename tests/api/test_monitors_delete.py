"""DELETE /api/v1/monitors/{id}: the monitor goes with everything it owns."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tests.api.shapes import assert_error, create
from tests.notification_rows import add_notification
from uptime_server.models import (
    AlertSettings,
    CheckRun,
    Monitor,
    MonitorLocation,
    Notification,
    Outbox,
    Rollup,
)

URL = "/api/v1/monitors"
OWNED = (CheckRun, Rollup, Notification, AlertSettings, MonitorLocation)


def add_history(monitor_id: int, now: datetime) -> None:
    """What the engine writes for a monitor: runs, roll-ups, an incident and its emails."""
    monitor = Monitor.get_by_id(monitor_id)
    CheckRun.create(monitor=monitor, checked_at=now, status="offline", error="boom")
    CheckRun.create(monitor=monitor, checked_at=now, status="online", response_time=12)
    for resolution in (300, 3600, 86400):
        Rollup.create(monitor=monitor, resolution=resolution, bucket=0, checks=2, failed=1)
    for kind, status in (("downtime", "active"), ("recovery", "resolved")):
        notification = add_notification(
            monitor, monitor.user_id, now, f"{monitor.name} {kind}", type=kind, status=status
        )
        for channel in ("email", "slack"):
            Outbox.create(
                notification=notification,
                channel=channel,
                message_id=f"<n{notification.id}-{channel}@test>",
                next_attempt_at=now,
                created_at=now,
            )


def counts(monitor_id: int) -> dict[str, int]:
    out = {
        model.__name__: model.select().where(model.monitor == monitor_id).count() for model in OWNED
    }
    out["Outbox"] = (
        Outbox.select().join(Notification).where(Notification.monitor == monitor_id).count()
    )
    return out


def test_it_deletes_the_monitor(alice: Any) -> None:
    mid = create(alice)
    response = alice.delete(f"{URL}/{mid}")
    assert response.status_code == 200
    assert response.get_json() == {"message": "Monitor deleted"}
    assert_error(alice.get(f"{URL}/{mid}"), 404, "MONITOR_NOT_FOUND")
    assert_error(alice.delete(f"{URL}/{mid}"), 404, "MONITOR_NOT_FOUND")
    assert alice.get(URL).get_json()["pagination"]["total"] == 0


def test_it_deletes_history_stats_alerts_notifications_and_outbox(alice: Any, clock: Any) -> None:
    doomed, kept = create(alice, name="doomed"), create(alice, name="kept")
    add_history(doomed, clock.now())
    add_history(kept, clock.now())
    full = {"CheckRun": 2, "Rollup": 3, "Notification": 2, "AlertSettings": 1,
            "MonitorLocation": 1, "Outbox": 4}  # fmt: skip
    assert counts(doomed) == full
    assert alice.delete(f"{URL}/{doomed}").status_code == 200
    assert counts(doomed) == dict.fromkeys(full, 0)
    assert Outbox.select().count() == 4
    assert counts(kept) == full
