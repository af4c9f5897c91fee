"""The recorder and dependencies: a warning parent does not block (docs/alerts.md#dependencies).

Runs come in as the scheduler hands them over, one location at a time, on
both databases; the injected clock moves between rounds.
"""

from __future__ import annotations

import pytest

from tests.outcomes import outcome
from uptime_server.engine.recorder import Recorder
from uptime_server.models import Monitor, Notification, Outbox


@pytest.fixture
def settings_env(settings_env):
    return {**settings_env, "UPTIME_LOCATIONS": "eu,us"}


def test_a_warning_parent_does_not_block(db, make_monitor, settings, clock):
    router = make_monitor("router", locations=["eu", "us"])
    app = make_monitor("app", locations=["eu"], depends_on=[router.id])
    rec = Recorder(settings)
    for ok in (True, False):
        # One of two locations failing: the router is warning, with no downtime.
        rec.record(
            [
                outcome(router, clock, True, location="eu"),
                outcome(router, clock, ok, location="us"),
                outcome(app, clock, ok, location="eu"),
            ],
            now=clock.now(),
        )
        clock.advance(60)
    assert Monitor.get_by_id(router.id).status == "warning"
    [note] = Notification.select()
    assert (note.monitor_id, note.type, note.suppressed_by) == (app.id, "downtime", None)
    assert [o.subject for o in Outbox.select()] == ["[Uptime] DOWN: app"]


def test_an_offline_parent_blocks_a_child_in_the_same_batch(db, make_monitor, settings, clock):
    router = make_monitor("router", locations=["eu", "us"])
    app = make_monitor("app", locations=["eu"], depends_on=[router.id])
    rec = Recorder(settings)
    done = rec.record(
        [
            outcome(app, clock, False, location="eu"),
            outcome(router, clock, False, location="eu"),
            outcome(router, clock, False, location="us"),
        ],
        now=clock.now(),
    )
    cause = Notification.get(Notification.monitor == router.id)
    blocked = Notification.get(Notification.monitor == app.id)
    assert blocked.suppressed_by == cause.id
    assert [o.subject for o in Outbox.select()] == ["[Uptime] DOWN: router"]
    assert [d.opened for d in done] == [[blocked.id], [], [cause.id]]
