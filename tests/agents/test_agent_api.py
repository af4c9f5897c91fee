"""The agent API on the Flask app: claims, renewals, results through the recorder."""

from __future__ import annotations

import uuid
from typing import Any

from tests.api.shapes import assert_error
from tests.api.tokens import mint
from uptime_server import db
from uptime_server.clock import isoformat
from uptime_server.models import CheckRun, Monitor, MonitorLocation, Notification
from uptime_server.wsgi.context import app_state


def _monitor(make_monitor: Any, **fields: Any) -> Monitor:
    return make_monitor(locations=["eu-west"], check_interval=60, **fields)


def _claim(agent: Any, **body: Any) -> list[dict[str, Any]]:
    response = agent.post("/claims", json=body)
    assert response.status_code == 200, response.get_json()
    return response.get_json()["data"]


def _result(claim: dict[str, Any], at: Any, *, passed: bool, **more: Any) -> dict[str, Any]:
    return {
        "monitor_id": claim["monitor_id"],
        "lease_owner": claim["lease_owner"],
        "checked_at": isoformat(at),
        "passed": passed,
        "response_time": 12,
        "status_code": 200 if passed else 503,
        "error": None if passed else "HTTP 503",
        **more,
    }


def _post(agent: Any, results: list[dict[str, Any]], batch_id: str | None = None) -> Any:
    body = {"batch_id": batch_id or uuid.uuid4().hex, "results": results}
    response = agent.post("/results", json=body)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def test_it_claims_due_checks_of_its_location_only(agent, make_monitor, clock):
    far = _monitor(make_monitor, name="far")
    make_monitor(name="near", locations=["local"])
    clock.advance(61)

    claims = _claim(agent)

    assert [c["monitor_id"] for c in claims] == [far.id]
    claim = claims[0]
    assert claim["location"] == "eu-west"
    assert claim["lease_owner"].startswith(f"agent{agent.id}-")
    assert claim["spec"]["url"] == "http://127.0.0.1:9/"
    assert claim["spec"]["type"] == "http"
    assert _claim(agent) == []  # leased: not handed out twice


def test_a_result_goes_through_the_recorder_state_and_notification(agent, make_monitor, clock):
    monitor = _monitor(make_monitor)
    clock.advance(61)
    [claim] = _claim(agent)

    answer = _post(agent, [_result(claim, clock.now(), passed=False)])

    assert answer["recorded"] == 1 and answer["refused"] == 0
    assert answer["results"][0]["status"] == "recorded"
    with db.database.connection_context():
        row = Monitor.get_by_id(monitor.id)
        assert row.status == "offline"
        assert Notification.select().where(Notification.monitor == monitor.id).count() == 1
        slot = MonitorLocation.get(
            (MonitorLocation.monitor == monitor.id) & (MonitorLocation.location == "eu-west")
        )
        assert slot.lease_owner is None and slot.last_status == "offline"
        assert slot.next_check_at > clock.now()


def test_a_batch_posted_twice_records_once_and_answers_the_same(agent, make_monitor, clock):
    monitor = _monitor(make_monitor)
    clock.advance(61)
    [claim] = _claim(agent)
    results = [_result(claim, clock.now(), passed=True)]

    first = _post(agent, results, "batch-1")
    second = _post(agent, results, "batch-1")

    assert first["duplicate"] is False and second["duplicate"] is True
    assert {**second, "duplicate": False} == first
    with db.database.connection_context():
        assert CheckRun.select().where(CheckRun.monitor == monitor.id).count() == 1


def test_a_result_whose_lease_was_taken_over_is_refused(agent, make_agent, make_monitor, clock):
    monitor = _monitor(make_monitor)
    clock.advance(61)
    [old] = _claim(agent)
    clock.advance(16)  # past the 15 s lease, never renewed
    other = make_agent()
    [new] = _claim(other)
    assert new["lease_owner"] != old["lease_owner"]

    answer = _post(agent, [_result(old, clock.now(), passed=False)])

    assert answer["results"][0] == {
        "monitor_id": monitor.id,
        "lease_owner": old["lease_owner"],
        "status": "refused",
        "reason": "lease_lost",
        "counted": True,
    }
    assert answer["refused"] == 1
    with db.database.connection_context():
        assert CheckRun.select().count() == 0
        assert Monitor.get_by_id(monitor.id).status == "pending"


def test_another_agents_lease_is_never_renewed_nor_recorded(agent, make_agent, make_monitor, clock):
    _monitor(make_monitor)
    clock.advance(61)
    [claim] = _claim(agent)
    thief = make_agent()

    ref = {"monitor_id": claim["monitor_id"], "lease_owner": claim["lease_owner"]}
    renewed = thief.post("/leases", json={"leases": [ref]}).get_json()
    answer = _post(thief, [_result(claim, clock.now(), passed=False)])

    assert renewed["renewed"] == [] and len(renewed["lost"]) == 1
    assert answer["results"][0]["reason"] == "not_yours"


def test_renewal_keeps_a_lease_past_its_first_expiry(agent, make_agent, make_monitor, clock):
    _monitor(make_monitor)
    clock.advance(61)
    [claim] = _claim(agent)
    ref = {"monitor_id": claim["monitor_id"], "lease_owner": claim["lease_owner"]}
    for _ in range(4):  # 40 s: well past one 15 s lease
        clock.advance(10)
        body = agent.post("/leases", json={"leases": [ref]}).get_json()
        assert body["renewed"] == [ref] and body["lost"] == []

    assert _claim(make_agent()) == []  # still held
    answer = _post(agent, [_result(claim, clock.now(), passed=True)])
    assert answer["recorded"] == 1


def test_an_uncounted_failure_is_history_only(agent, make_monitor, clock, alice):
    monitor = _monitor(make_monitor)
    clock.advance(61)
    [claim] = _claim(agent)

    answer = _post(agent, [_result(claim, clock.now(), passed=False, counted=False)])

    assert answer["results"][0]["status"] == "recorded"
    assert answer["results"][0]["counted"] is False
    with db.database.connection_context():
        assert Monitor.get_by_id(monitor.id).status == "pending"
        assert Notification.select().count() == 0
        [run] = CheckRun.select()
        assert run.counted is False and run.status == "offline"
        slot = MonitorLocation.get(MonitorLocation.monitor == monitor.id)
        assert slot.lease_owner is None and slot.last_status is None
        assert slot.next_check_at > clock.now()
    history = alice.get(f"/api/v1/monitors/{monitor.id}/history").get_json()["data"]
    assert history[0]["counted"] is False


def test_a_pass_always_counts(agent, make_monitor, clock):
    monitor = _monitor(make_monitor)
    clock.advance(61)
    [claim] = _claim(agent)

    _post(agent, [_result(claim, clock.now(), passed=True, counted=False)])

    with db.database.connection_context():
        assert Monitor.get_by_id(monitor.id).status == "online"


def test_the_agent_report_is_kept_and_healthz_counts_degraded_agents_without_naming_them(
    agent, alice, anon, clock
):
    report = {"version": "9.9", "degraded": True, "checks_per_second": 2.5, "lag_seconds": 0.2}
    agent.post("/claims", json={"agent": report})

    [listed] = alice.get("/api/v1/agents").get_json()["data"]
    health = anon.get("/healthz")
    again = anon.get("/healthz")  # the remembered answer, sent without Flask

    assert listed["version"] == "9.9" and listed["degraded"] is True
    assert listed["checks_per_second"] == 2.5 and listed["lag_seconds"] == 0.2
    assert listed["last_seen_at"] == isoformat(clock.now())
    # /healthz is public: a count, never which agent (id, name, location).
    assert health.get_json() == {
        "status": "ok",
        "database": "ok",
        "scheduler_lag_seconds": 0.0,
        "agents": {"degraded": 1},
    }
    assert again.get_data() == health.get_data()
    for answer in (health, again):
        text = answer.get_data(as_text=True)
        assert "eu-west" not in text and "agent" not in text.replace('"agents"', "")
        assert f'"id":{agent.id}' not in text.replace(" ", "")
    clock.advance(600)
    agent.post("/claims", json={"agent": {**report, "degraded": False}})
    app_state(anon.application).health_memo.clear()  # its remembered answer
    assert "agents" not in anon.get("/healthz").get_json()


# -- who may call what -------------------------------------------------------------


def test_an_agent_token_cannot_call_the_user_api(agent):
    for path in ("/api/v1/monitors", "/api/v1/agents", "/api/v1/tokens", "/api/v1/auth/user"):
        assert_error(agent.get(path), 403, "FORBIDDEN")


def test_users_cannot_call_the_agent_api(alice, anon):
    assert_error(alice.post("/api/v1/agent/claims", json={}), 403, "FORBIDDEN")
    token = mint(alice, "write")
    assert_error(token.post("/api/v1/agent/claims", json={}), 403, "FORBIDDEN")
    assert_error(anon.post("/api/v1/agent/claims", json={}), 401, "UNAUTHORIZED")
    fake = {"Authorization": "Bearer upa_not-a-real-token"}
    assert_error(anon.post("/api/v1/agent/results", json={}, headers=fake), 401, "UNAUTHORIZED")


def test_admins_manage_agents_and_others_cannot(alice, bob, anon):
    created = alice.post("/api/v1/agents", json={"location": "eu-west", "name": "paris"})
    assert created.status_code == 201
    body = created.get_json()["data"]
    assert body["token"].startswith("upa_") and body["location"] == "eu-west"

    assert_error(bob.post("/api/v1/agents", json={"location": "eu-west"}), 403, "FORBIDDEN")
    assert_error(bob.get("/api/v1/agents"), 403, "FORBIDDEN")
    assert_error(bob.delete(f"/api/v1/agents/{body['id']}"), 403, "FORBIDDEN")
    bad = alice.post("/api/v1/agents", json={"location": "mars"})
    assert_error(bad, 400, "VALIDATION_ERROR")
    assert "location" in bad.get_json()["error"]["details"]

    headers = {"Authorization": f"Bearer {body['token']}"}
    assert anon.post("/api/v1/agent/claims", json={}, headers=headers).status_code == 200
    assert alice.delete(f"/api/v1/agents/{body['id']}").status_code == 200
    revoked = anon.post("/api/v1/agent/claims", json={}, headers=headers)
    assert_error(revoked, 401, "UNAUTHORIZED")
    assert_error(alice.delete(f"/api/v1/agents/{body['id']}"), 404, "NOT_FOUND")
