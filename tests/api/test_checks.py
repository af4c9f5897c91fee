"""POST /monitors/{id}/test and GET /monitors/{id}/history.

docs/api.md#test-a-monitor, docs/api.md#history.
"""

from __future__ import annotations

import socket
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest

from tests.api.shapes import assert_error
from tests.engine.test_udp_probe import UdpServer
from tests.engine.traces import traces
from uptime_server.engine.probes.udp import PORT_UNREACHABLE
from uptime_server.models import CheckRun, Monitor, MonitorLocation, Notification


def create(user, **fields):
    body = {"name": "api", "url": "http://127.0.0.1:9/", "type": "http", **fields}
    r = user.post("/api/v1/monitors", json=body)
    assert r.status_code == 201, r.json
    return r.json["data"]["id"]


def add_runs(mid, clock, count, *, every=60, status="online"):
    """*count* runs, the newest at the clock's time, *every* seconds apart."""
    return [
        CheckRun.create(
            monitor=mid,
            location="local",
            checked_at=clock.now() - timedelta(seconds=every * i),
            status=status,
            response_time=100 + i,
            status_code=200,
            attempts=1,
        ).id
        for i in range(count)
    ]


# -- test now -----------------------------------------------------------------


def test_a_passing_test_is_recorded_and_updates_the_monitor(alice, target, clock):
    mid = create(alice, url=target.url("ok", "pass"))
    due_before = MonitorLocation.get(MonitorLocation.monitor == mid).next_check_at

    r = alice.post(f"/api/v1/monitors/{mid}/test")

    assert r.status_code == 200, r.json
    data = r.json["data"]
    assert set(data) == {"status", "response_time", "status_code", "checked_at", "error"}
    assert (data["status"], data["status_code"], data["error"]) == ("online", 200, None)
    assert isinstance(data["response_time"], int)
    assert data["checked_at"] == "2026-11-22T12:00:00Z"
    assert target.hits["pass"] == 1
    monitor = alice.get(f"/api/v1/monitors/{mid}").json["data"]
    assert (monitor["status"], monitor["last_check"], monitor["last_success"]) == (
        "online",
        "2026-11-22T12:00:00Z",
        "2026-11-22T12:00:00Z",
    )
    [record] = alice.get(f"/api/v1/monitors/{mid}/history").json["data"]
    assert (record["status"], record["status_code"], record["attempts"]) == ("online", 200, 1)
    # An ad-hoc run leaves the schedule alone.
    assert MonitorLocation.get(MonitorLocation.monitor == mid).next_check_at == due_before


def test_a_failing_test_goes_offline_and_notifies(alice, target):
    mid = create(alice, url=target.url("status/503", "fail"))
    data = alice.post(f"/api/v1/monitors/{mid}/test").json["data"]
    assert (data["status"], data["status_code"]) == ("offline", 503)
    assert (
        data["error"]
        == "expected status in [200, 201, 202, 203, 204, 205, 206, 207, 208, 226], got 503"
    )
    assert alice.get(f"/api/v1/monitors/{mid}").json["data"]["status"] == "offline"
    assert Notification.select().where(Notification.monitor == mid).count() == 1


def test_a_paused_monitor_is_tested_and_recorded_but_keeps_its_status(alice, target):
    mid = create(alice, url=target.url("status/500", "paused"))
    assert alice.post(f"/api/v1/monitors/{mid}/pause", json={}).status_code == 200

    data = alice.post(f"/api/v1/monitors/{mid}/test").json["data"]

    assert data["status"] == "offline"
    monitor = alice.get(f"/api/v1/monitors/{mid}").json["data"]
    assert (monitor["status"], monitor["paused"]) == ("pending", True)
    assert len(alice.get(f"/api/v1/monitors/{mid}/history").json["data"]) == 1
    assert Notification.select().count() == 0


def test_a_tcp_monitor_is_tested_now(alice):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    port = listener.getsockname()[1]
    mid = create(alice, type="tcp", url=f"tcp://127.0.0.1:{port}")
    data = alice.post(f"/api/v1/monitors/{mid}/test").json["data"]
    assert (data["status"], data["status_code"], data["error"]) == ("online", None, None)
    listener.close()
    data = alice.post(f"/api/v1/monitors/{mid}/test").json["data"]
    assert (data["status"], data["error"]) == ("offline", "connection refused")


def test_a_udp_monitor_is_tested_now(alice):
    # ping (like udp and dns) was refused here as MONITOR_TYPE_NOT_SUPPORTED
    # before issue 12; every type is checked now, so that code has no trigger left.
    server = UdpServer()
    try:
        mid = create(
            alice, type="udp", url=f"udp://127.0.0.1:{server.port}", send="hi", expect="echo:hi"
        )
        data = alice.post(f"/api/v1/monitors/{mid}/test").json["data"]
        assert (data["status"], data["status_code"], data["error"]) == ("online", None, None)
        assert server.received == [b"hi"]
    finally:
        server.close()
    data = alice.post(f"/api/v1/monitors/{mid}/test").json["data"]
    assert (data["status"], data["error"]) == ("offline", PORT_UNREACHABLE)
    assert CheckRun.select().where(CheckRun.monitor == mid).count() == 2


def test_another_users_monitor_cannot_be_tested_or_read(alice, bob, target):
    mid = create(alice, url=target.url("ok", "private"))
    for r in (
        bob.post(f"/api/v1/monitors/{mid}/test"),
        bob.get(f"/api/v1/monitors/{mid}/history"),
        bob.post("/api/v1/monitors/999999/test"),
    ):
        assert r.status_code == 404
        assert r.json["error"]["code"] == "MONITOR_NOT_FOUND"
    assert target.hits["private"] == 0


def test_checks_need_a_session(anon):
    assert anon.post("/api/v1/monitors/1/test").status_code == 401
    assert anon.get("/api/v1/monitors/1/history").status_code == 401


# -- history --------------------------------------------------------------------


def test_history_is_newest_first_over_the_last_day_by_default(alice, clock):
    mid = create(alice)
    ids = add_runs(mid, clock, 3)
    CheckRun.create(
        monitor=mid, location="local", checked_at=clock.now() - timedelta(hours=25), status="online"
    )
    r = alice.get(f"/api/v1/monitors/{mid}/history")
    assert r.status_code == 200
    assert [rec["id"] for rec in r.json["data"]] == ids
    assert r.json["data"][1] == {
        "id": ids[1],
        "checked_at": "2026-11-22T11:59:00Z",
        "status": "online",
        "response_time": 101,
        "status_code": 200,
        "error": None,
        "location": "local",
        "attempts": 1,
    }
    assert r.json["meta"] == {
        "count": 3,
        "limit": 100,
        "from": "2026-11-21T12:00:00Z",
        "to": "2026-11-22T12:00:00Z",
        "has_more": False,
    }


def test_history_window_and_limit(alice, clock):
    mid = create(alice)
    ids = add_runs(mid, clock, 10)  # 12:00, 11:59, ... 11:51
    r = alice.get(
        f"/api/v1/monitors/{mid}/history",
        query_string={"from": "2026-11-22T11:52:00Z", "to": "2026-11-22T11:58:00Z", "limit": 3},
    )
    assert [rec["checked_at"] for rec in r.json["data"]] == [
        "2026-11-22T11:58:00Z",
        "2026-11-22T11:57:00Z",
        "2026-11-22T11:56:00Z",
    ]
    assert r.json["meta"] == {
        "count": 3,
        "limit": 3,
        "from": "2026-11-22T11:52:00Z",
        "to": "2026-11-22T11:58:00Z",
        "has_more": True,
    }
    r = alice.get(
        f"/api/v1/monitors/{mid}/history",
        query_string={"from": "2026-11-22T11:52:00Z", "to": "2026-11-22T11:58:00Z"},
    )
    assert [rec["id"] for rec in r.json["data"]] == ids[2:9]
    assert r.json["meta"]["has_more"] is False
    # `from` alone: up to now; `to` alone: the 24 hours before it.
    r = alice.get(f"/api/v1/monitors/{mid}/history?from=2026-11-22T11:59:00%2B00:00")
    assert [rec["id"] for rec in r.json["data"]] == ids[:2]
    r = alice.get(f"/api/v1/monitors/{mid}/history?to=2026-11-22T11:51:00Z")
    assert [rec["id"] for rec in r.json["data"]] == ids[9:]
    assert r.json["meta"]["from"] == "2026-11-21T11:51:00Z"


def test_history_of_another_monitor_is_not_mixed_in(alice, clock):
    mine, other = create(alice), create(alice, name="other")
    add_runs(other, clock, 2)
    assert alice.get(f"/api/v1/monitors/{mine}/history").json["data"] == []


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ({"from": "2026-11-22T12:00:00Z", "to": "2026-11-22T11:00:00Z"}, "from"),
        ({"from": "yesterday"}, "from"),
        ({"to": "2026-13-45T00:00:00Z"}, "to"),
        ({"to": "9999-12-31T23:59:59-01:00"}, "to"),  # in the year 10000 in UTC
        ({"from": "0001-01-01T00:00:00+01:00"}, "from"),  # in the year 0 in UTC
        ({"limit": "0"}, "limit"),
        ({"limit": "1001"}, "limit"),
        ({"limit": "ten"}, "limit"),
    ],
)
def test_history_rejects_bad_parameters(alice, query, param):
    mid = create(alice)
    r = alice.get(f"/api/v1/monitors/{mid}/history", query_string=query)
    assert_error(r, 400, "VALIDATION_ERROR", param, only=True)


def test_history_limit_bounds_are_accepted(alice, clock):
    mid = create(alice)
    add_runs(mid, clock, 2)
    assert alice.get(f"/api/v1/monitors/{mid}/history?limit=1").json["meta"]["has_more"] is True
    assert alice.get(f"/api/v1/monitors/{mid}/history?limit=1000").json["meta"]["count"] == 2


def test_history_takes_the_extreme_times_of_the_calendar(alice, clock):
    mid = create(alice)
    add_runs(mid, clock, 1)
    r = alice.get(f"/api/v1/monitors/{mid}/history?to=0001-01-01T06:00:00Z")
    assert r.status_code == 200, r.json
    # No day before the first day of year 1: the window starts at its beginning.
    assert (r.json["data"], r.json["meta"]["from"]) == ([], "0001-01-01T00:00:00Z")
    r = alice.get(
        f"/api/v1/monitors/{mid}/history?from=0001-01-01T00:00:00Z&to=9999-12-31T23:59:59Z"
    )
    assert r.status_code == 200 and len(r.json["data"]) == 1


def test_a_test_run_in_flight_when_its_monitor_is_deleted_lands_on_no_other_monitor(
    app, alice, bob, target, clock
):
    mid = create(alice, url=target.url("held", "doomed") + "?status=503")
    in_flight = app.test_client()  # a second client: alice's own one is used meanwhile
    in_flight.set_cookie("session_cookie", alice.token)
    with ThreadPoolExecutor(1) as pool:
        answer = pool.submit(in_flight.post, f"/api/v1/monitors/{mid}/test")
        assert target.arrived["doomed"].wait(10), "the check never started"

        assert alice.delete(f"/api/v1/monitors/{mid}").status_code == 200
        clock.advance(1)
        newcomer = create(bob, url=target.url("ok", "bobs"))
        before = traces(newcomer)
        target.released["doomed"].set()  # 503: an incident, were it recorded
        response = answer.result(timeout=30)

    assert response.status_code == 404
    assert response.json["error"]["code"] == "MONITOR_NOT_FOUND"
    assert traces(newcomer) == before
    assert (before["runs"], before["notifications"], before["outbox"]) == (0, 0, 0)
    assert CheckRun.select().count() == 0


def test_a_stored_target_this_version_refuses_is_an_offline_run(alice):
    # Before issue 12 a ping or dns monitor could be stored with no url (or any
    # text); such a row, never checked then, is now a failed run, not a 500.
    mid = create(alice, type="ping", url="ping://127.0.0.1")
    Monitor.update(url=None).where(Monitor.id == mid).execute()
    data = alice.post(f"/api/v1/monitors/{mid}/test").json["data"]
    assert (data["status"], data["error"]) == (
        "offline",
        "invalid monitor: url must be ping://host",
    )
