"""Acceptance: dependencies suppress alerting (docs/alerts.md#dependencies).

A router and three children, each a real HTTP target on 127.0.0.1 whose
status the test flips; every run is a real probe, recorded by the Recorder
in batches as the writer would (several monitors' runs in one ``record``
call), then delivered by the delivery loop to a real SMTP server. The clock
is injected. Runs on SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from tests.notify.world import Target, make_monitor, messages, subjects, with_smtp
from uptime_server.checks.outcomes import CheckOutcome
from uptime_server.checks.types import CheckSpec
from uptime_server.db import database
from uptime_server.engine.probe import ProbeConfig, run_check_sync
from uptime_server.engine.recorder import Recorder
from uptime_server.engine.reminders import ReminderSweep
from uptime_server.models import Monitor, Notification, Outbox
from uptime_server.notify.delivery import DeliveryLoop
from uptime_server.services import dependencies as dependency_service


class Net:
    """Monitors with their own targets, checked in batches, and the inbox."""

    def __init__(self, alice: Any, settings: Any, clock: Any, smtp_server: Any) -> None:
        self.alice, self.settings, self.clock = alice, settings, clock
        self.recorder = Recorder(settings)
        self.delivery = DeliveryLoop(with_smtp(settings, smtp_server.port), clock=clock)
        self.inbox = smtp_server.handler
        self.targets: dict[int, Target] = {}

    def monitor(self, name: str, *, depends_on: tuple[Monitor, ...] = (), **alerts: Any) -> Monitor:
        target = Target().start()
        m = make_monitor(
            self.alice.user, self.settings, self.clock, name=name, url=target.url, **alerts
        )
        self.targets[m.id] = target
        if depends_on:
            with database.atomic():
                dependency_service.store(m.team_id, {m.id: [p.id for p in depends_on]})
        return m

    def batch(self, *runs: tuple[Monitor, int]) -> None:
        """One recorder batch: each monitor's target set, probed for real, recorded together."""
        outcomes = []
        for m, status in runs:
            self.targets[m.id].status = status
            row = Monitor.get_by_id(m.id)
            spec = CheckSpec(url=row.url, timeout=5, expected_status=tuple(row.expected_status))
            outcomes.append(
                CheckOutcome.from_run(
                    run_check_sync(spec, ProbeConfig()),
                    monitor_id=row.id,
                    monitor_created_at=row.created_at,
                    location="local",
                    checked_at=self.clock.now(),
                )
            )
        self.recorder.record(outcomes, now=self.clock.now())
        self.clock.advance(60)

    def deliver(self) -> None:
        self.delivery.loop(self.clock.now())

    def stop(self) -> None:
        for t in self.targets.values():
            t.stop()


@pytest.fixture
def net(db, alice, settings, clock, smtp_server) -> Iterator[Net]:
    n = Net(alice, settings, clock, smtp_server)
    yield n
    n.stop()


def downtime(m: Monitor) -> Notification:
    return (
        Notification.select()
        .where((Notification.monitor == m.id) & (Notification.type == "downtime"))
        .order_by(Notification.id.desc())
        .get()
    )


def outbox_of(note: Notification) -> int:
    return Outbox.select().where(Outbox.notification == note.id).count()


def body(msg: Any) -> str:
    return msg.get_content().replace("\r\n", "\n")


def test_the_router_fails_first_one_email_lists_the_children_down(net, alice):
    router = net.monitor("router")
    a, b, c = (net.monitor(name, depends_on=(router,)) for name in ("app-a", "app-b", "app-c"))
    net.batch((router, 200), (a, 200), (b, 200), (c, 200))
    # Two children's runs come before the router's in its first failing batch:
    # the router is still decided first, and they are blocked.
    net.batch((a, 503), (b, 503), (router, 503), (c, 200))
    net.batch((c, 503), (router, 503))
    net.deliver()

    assert subjects(net.inbox) == ["[Uptime] DOWN: router"]
    [msg] = messages(net.inbox)
    text = body(msg)
    assert "Blocking 2 monitor(s) that are down:\n- app-a\n- app-b\n" in text
    assert "app-c" not in text  # it failed after the message was written
    cause = downtime(router)
    assert cause.suppressed_by is None
    for child in (a, b, c):
        note = downtime(child)
        assert (note.status, note.suppressed_by, note.next_reminder_at) == (
            "active",
            cause.id,
            None,
        )
        assert outbox_of(note) == 0
        # Monitoring is not suppressed: the child is down, its runs recorded.
        assert Monitor.get_by_id(child.id).status == "offline"

    r = alice.get("/api/v1/notifications", query_string={"suppressed": "true"})
    assert r.status_code == 200
    assert sorted(n["monitor_name"] for n in r.json["data"]) == ["app-a", "app-b", "app-c"]
    assert {n["suppressed_by"] for n in r.json["data"]} == {cause.id}
    r = alice.get("/api/v1/notifications", query_string={"suppressed": "false"})
    assert [(n["monitor_name"], n["suppressed_by"]) for n in r.json["data"]] == [("router", None)]
    r = alice.get("/api/v1/notifications", query_string={"suppressed": "yes"})
    assert r.status_code == 400
    assert r.json["error"]["code"] == "VALIDATION_ERROR"
    assert "suppressed" in r.json["error"]["details"]

    # The router recovers; app-a stays down, app-b and app-c recover.
    # app-a's run is in the router's recovery batch, decided after it: its
    # failing run confirms it is still down, and its alert is released at once.
    net.batch((a, 503), (router, 200))
    net.deliver()
    assert subjects(net.inbox)[1:] == ["[Uptime] UP: router", "[Uptime] DOWN: app-a"]
    assert "Monitors it blocks still down: 3" in body(messages(net.inbox)[1])
    net.batch((b, 200), (c, 200), (a, 503))
    net.deliver()
    assert len(net.inbox.received) == 3
    released = downtime(a)
    assert (released.status, released.suppressed_by) == ("active", None)
    assert released.next_reminder_at is None  # no reminder interval set
    for silent in (b, c):
        note = downtime(silent)
        assert (note.status, note.suppressed_by) == ("resolved", cause.id)
        recovery = Notification.get(
            (Notification.monitor == silent.id) & (Notification.type == "recovery")
        )
        assert recovery.suppressed_by == cause.id
        assert outbox_of(recovery) == 0

    # app-a's alert went out, so its recovery does too.
    net.batch((a, 200))
    net.deliver()
    assert subjects(net.inbox)[3:] == ["[Uptime] UP: app-a"]

    # Statistics: a silent downtime is downtime, and blocked; a released one is not blocked.
    stats_b = alice.get(f"/api/v1/monitors/{b.id}/stats").json["data"]["incidents"]
    assert stats_b["total_downtime"] > 0
    assert stats_b["blocked_downtime"] == stats_b["total_downtime"]
    stats_r = alice.get(f"/api/v1/monitors/{router.id}/stats").json["data"]["incidents"]
    assert (stats_r["count"], stats_r["blocked_downtime"]) == (1, 0)
    stats_a = alice.get(f"/api/v1/monitors/{a.id}/stats").json["data"]["incidents"]
    assert stats_a["blocked_downtime"] == 0 and stats_a["total_downtime"] > 0


def test_a_child_still_down_is_released_at_its_next_failing_run(net):
    router = net.monitor("router")
    child = net.monitor("app", depends_on=(router,))
    net.batch((router, 503), (child, 503))
    net.batch((router, 200))  # the child is not checked in this batch
    net.deliver()
    assert subjects(net.inbox) == ["[Uptime] DOWN: router", "[Uptime] UP: router"]
    assert "Blocking 1 monitor(s) that are down:\n- app\n" in body(messages(net.inbox)[0])
    assert "Monitors it blocks still down: 1" in body(messages(net.inbox)[1])
    assert downtime(child).suppressed_by is not None
    net.batch((child, 503))
    net.deliver()
    assert subjects(net.inbox)[2:] == ["[Uptime] DOWN: app"]
    assert downtime(child).suppressed_by is None


def test_order_reversed_the_child_keeps_its_alert_and_recovery(net):
    router = net.monitor("router")
    child = net.monitor("app", depends_on=(router,))
    net.batch((child, 503))
    net.batch((router, 503), (child, 503))
    net.deliver()
    assert subjects(net.inbox) == ["[Uptime] DOWN: app", "[Uptime] DOWN: router"]
    # The router's message lists it (down and behind it), but it is not suppressed.
    assert "- app\n" in body(messages(net.inbox)[1])
    assert downtime(child).suppressed_by is None
    net.batch((child, 200))
    net.batch((router, 200))
    net.deliver()
    assert subjects(net.inbox)[2:] == ["[Uptime] UP: app", "[Uptime] UP: router"]
    assert "Monitors it blocks still down: 0" in body(messages(net.inbox)[3])


def test_chains_block_grandchildren_by_the_root_cause(net):
    root = net.monitor("router")
    middle = net.monitor("switch", depends_on=(root,))
    leaf = net.monitor("app", depends_on=(middle,))
    net.batch((leaf, 503), (middle, 503), (root, 503))
    net.deliver()
    assert subjects(net.inbox) == ["[Uptime] DOWN: router"]
    assert "Blocking 2 monitor(s) that are down:\n- app\n- switch\n" in body(messages(net.inbox)[0])
    cause = downtime(root)
    assert downtime(middle).suppressed_by == cause.id
    assert downtime(leaf).suppressed_by == cause.id


def test_reminders_of_a_suppressed_downtime_are_suppressed(net, settings):
    router = net.monitor("router")
    child = net.monitor("app", depends_on=(router,), reminder_interval=300)
    sweep = ReminderSweep(settings)
    net.batch((router, 503), (child, 503))
    net.clock.advance(900)
    sweep.loop(net.clock.now())
    net.deliver()
    assert subjects(net.inbox) == ["[Uptime] DOWN: router"]
    assert downtime(child).reminders_sent == 0

    net.batch((router, 200))
    net.batch((child, 503))  # released: its alert, and its reminders from now on
    net.deliver()
    assert subjects(net.inbox)[1:] == ["[Uptime] UP: router", "[Uptime] DOWN: app"]
    released_at = net.clock.now() - timedelta(seconds=60)
    assert downtime(child).next_reminder_at == released_at + timedelta(seconds=300)
    net.clock.advance(300)
    sweep.loop(net.clock.now())
    net.deliver()
    assert subjects(net.inbox)[3:] == ["[Uptime] STILL DOWN: app"]


def test_a_parent_down_but_below_its_alert_threshold_does_not_block(net):
    # Blocked means an ancestor with an open downtime notification: a parent
    # failing below its threshold (like a warning parent) has none.
    router = net.monitor("router", alert_threshold=3)
    child = net.monitor("app", depends_on=(router,))
    net.batch((router, 503), (child, 503))
    net.deliver()
    assert subjects(net.inbox) == ["[Uptime] DOWN: app"]
    assert downtime(child).suppressed_by is None


def test_the_dependency_query_runs_only_for_a_batch_with_an_event(net, caplog):
    # peewee logs every statement it runs (logger "peewee", DEBUG).
    router = net.monitor("router")
    child = net.monitor("app", depends_on=(router,))
    net.batch((router, 200), (child, 200))

    def dependency_reads() -> int:
        return sum("monitor_dependencies" in str(r.msg) for r in caplog.records)

    with caplog.at_level("DEBUG", logger="peewee"):
        for _ in range(3):
            net.batch((router, 200), (child, 200))  # the common path: nothing happens
        assert dependency_reads() == 0
        net.batch((child, 503), (router, 503))  # two downtimes open: one read
        assert dependency_reads() == 1
        net.batch((child, 503), (router, 503))  # still down, still blocked: one read
        assert dependency_reads() == 2
    assert downtime(child).suppressed_by == downtime(router).id
