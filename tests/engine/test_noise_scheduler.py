"""Noise control through the scheduler: real checks of a flippable local target,
dispatched and recorded by ``CheckScheduler`` under the manual clock, on SQLite
and PostgreSQL (docs/alerts.md)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.engine.conftest import step
from tests.notify.world import Target
from uptime_server.models import Notification


@pytest.fixture
def flippable() -> Iterator[Target]:
    target = Target().start()
    yield target
    target.stop()


def monitor(alice, url: str, **alerts) -> int:
    body = {"name": "api", "type": "http", "url": url, "timeout": 5, "check_interval": 10}
    mid = alice.post("/api/v1/monitors", json=body).json["data"]["id"]
    assert alice.put(f"/api/v1/monitors/{mid}/alerts", json=alerts).status_code == 200
    return mid


def run(clock, scheduler, target: Target, statuses: list[int]) -> None:
    """One check per status: steps longer than the interval (10 s) run each once."""
    for status in statuses:
        target.status = status
        hits = target.hits
        step(clock, scheduler, 15)
        assert target.hits == hits + 1


def kinds(mid: int) -> list[str]:
    notes = Notification.select().where(Notification.monitor == mid).order_by(Notification.id)
    return [n.type for n in notes]


def test_recovery_threshold_through_the_scheduler(alice, scheduler, clock, flippable):
    mid = monitor(alice, flippable.url, recovery_threshold=2, flap_threshold=None)
    run(clock, scheduler, flippable, [503, 200])
    shown = alice.get(f"/api/v1/monitors/{mid}").json["data"]
    assert (shown["status"], shown["last_error"]) == ("offline", None)  # held
    assert kinds(mid) == ["downtime"]
    run(clock, scheduler, flippable, [200])
    assert alice.get(f"/api/v1/monitors/{mid}").json["data"]["status"] == "online"
    assert kinds(mid) == ["downtime", "recovery"]


def test_flapping_through_the_scheduler(alice, scheduler, clock, flippable):
    mid = monitor(alice, flippable.url, flap_threshold=2, flap_window=60)
    run(clock, scheduler, flippable, [200, 503, 200, 503, 200, 503])
    shown = alice.get(f"/api/v1/monitors/{mid}").json["data"]
    assert (shown["status"], shown["flapping"]) == ("offline", True)
    assert kinds(mid) == ["downtime", "recovery", "flapping"]
    run(clock, scheduler, flippable, [200] * 5)  # a minute and more up
    assert alice.get(f"/api/v1/monitors/{mid}").json["data"]["flapping"] is False
    assert kinds(mid) == ["downtime", "recovery", "flapping", "flapping_settled"]
