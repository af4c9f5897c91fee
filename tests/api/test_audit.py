"""GET /teams/{team}/audit and the lines each change writes (docs/teams.md#the-audit-log)."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from tests.api.shapes import assert_error, create, sqlite_only
from tests.api.tokens import mint
from tests.notify.world import make_monitor
from tests.outcomes import outcome
from uptime_server.engine.housekeeping import default_housekeeping, prune_audit_log
from uptime_server.engine.recorder import Recorder
from uptime_server.models import AuditEvent, Membership, Notification, Session

HOOK_SECRET = "whsec-audit-0123456789abcdefghijklmnop"
HEADER_VALUE = "Bearer hdr-audit-t0ken-7f3a9c1e"
URL_TOKEN = "url-path-s3cret-token"


def audit_of(user: Any, team: Any = None, **params: Any) -> list[dict[str, Any]]:
    team = team if team is not None else user.user.personal_team_id
    r = user.get(f"/api/v1/teams/{team}/audit", query_string=params)
    assert r.status_code == 200, r.get_json()
    return r.get_json()["data"]


def session_of(user: Any) -> int:
    return Session.get(Session.user == user.user.id).id


def line(user: Any, action: str) -> dict[str, Any]:
    """The one line of *action* in *user*'s personal team."""
    [found] = audit_of(user, action=action)
    return found


def join(team_id: int, user: Any, role: str, clock: Any) -> None:
    Membership.create(team=team_id, user=user.user.id, role=role, created_at=clock.now())


def test_a_monitor_s_life_leaves_one_line_per_change(alice, clock):
    team = alice.user.personal_team_id
    mid = create(alice, name="api")
    expected = {
        "id": line(alice, "monitor.create")["id"],
        "at": "2026-11-22T12:00:00Z",
        "team_id": team,
        "actor": {"id": alice.user.id, "name": "Alice"},
        "via": {"type": "session", "id": session_of(alice)},
        "action": "monitor.create",
        "target": {"type": "monitor", "id": mid},
        "details": {"name": "api", "type": "http"},
    }
    assert line(alice, "monitor.create") == expected

    clock.advance(60)
    path = f"/api/v1/monitors/{mid}"
    assert alice.put(path, json={"name": "api-2", "check_interval": 120}).status_code == 200
    assert alice.put(path, json={"name": "api-2"}).status_code == 200  # no change: no line
    update = line(alice, "monitor.update")
    assert update["details"] == {
        "name": "api-2",
        "type": "http",
        "fields": ["check_interval", "name"],
    }
    assert update["at"] == "2026-11-22T12:01:00Z"

    assert alice.post(f"{path}/pause", json={"reason": "deploy"}).status_code == 200
    assert alice.post(f"{path}/resume").status_code == 200
    assert line(alice, "monitor.pause")["details"] == {"name": "api-2", "type": "http"}
    assert line(alice, "monitor.resume")["target"] == {"type": "monitor", "id": mid}

    slack = "https://hooks.slack.com/services/T000/B000/sl4ck-s3cret"
    r = alice.put(f"{path}/alerts", json={"alert_threshold": 3, "slack_webhook_url": slack})
    assert r.status_code == 200, r.get_json()
    alerts = line(alice, "monitor.alerts")
    assert alerts["details"]["fields"] == ["alert_threshold", "slack_webhook_url"]
    assert "sl4ck-s3cret" not in json.dumps(alerts)
    alice.put(f"{path}/alerts", json={"alert_threshold": 3})  # unchanged: no second line
    assert len(audit_of(alice, action="monitor.alerts")) == 1

    assert alice.put(path, json={"badges": True}).status_code == 200
    token = alice.get(path).get_json()["data"]["badge_token"]
    assert alice.post(f"{path}/badge-token").status_code == 200
    badge = line(alice, "monitor.badge_token")
    assert badge["target"] == {"type": "monitor", "id": mid}
    assert token not in json.dumps(badge)
    new_token = alice.get(path).get_json()["data"]["badge_token"]
    assert new_token not in json.dumps(audit_of(alice))

    assert alice.delete(path).status_code == 200
    assert line(alice, "monitor.delete")["details"] == {"name": "api-2", "type": "http"}
    actions = [e["action"] for e in audit_of(alice)]
    assert actions == [
        "monitor.delete",
        "monitor.badge_token",
        "monitor.update",
        "monitor.alerts",
        "monitor.resume",
        "monitor.pause",
        "monitor.update",
        "monitor.create",
    ]


def test_a_ping_token_rotation_is_recorded_without_the_token(alice):
    r = alice.post(
        "/api/v1/monitors", json={"name": "cron", "type": "heartbeat", "period": 3600, "grace": 60}
    )
    assert r.status_code == 201, r.get_json()
    mid, ping_url = r.get_json()["data"]["id"], r.get_json()["data"]["ping_url"]
    r = alice.post(f"/api/v1/monitors/{mid}/ping-token")
    assert r.status_code == 200, r.get_json()
    rotated = line(alice, "monitor.ping_token")
    assert rotated["target"] == {"type": "monitor", "id": mid}
    assert rotated["details"] == {"name": "cron", "type": "heartbeat"}
    new_url = alice.get(f"/api/v1/monitors/{mid}").get_json()["data"]["ping_url"]
    dumped = json.dumps(audit_of(alice))
    for url in (ping_url, new_url):
        assert url.rsplit("/", 1)[-1] not in dumped


def test_a_token_s_changes_name_the_token(alice):
    writer = mint(alice, "write")
    token_id = line(alice, "token.create")["target"]["id"]
    mid = create(writer, name="ci")
    created = line(alice, "monitor.create")
    assert created["via"] == {"type": "token", "id": token_id}
    assert created["actor"] == {"id": alice.user.id, "name": "Alice"}
    assert created["target"] == {"type": "monitor", "id": mid}
    assert writer.token not in json.dumps(audit_of(alice))


def test_bulk_actions_leave_a_line_per_monitor_marked_bulk(alice):
    ids = [create(alice, name=f"m{i}") for i in range(3)]
    body = {"action": "pause", "monitor_ids": [*ids, 999999], "reason": "window"}
    r = alice.post("/api/v1/monitors/bulk", json=body)
    assert r.status_code == 200, r.get_json()
    paused = audit_of(alice, action="monitor.pause")
    assert sorted(e["target"]["id"] for e in paused) == ids  # not the unknown id
    assert all(e["details"]["bulk"] is True for e in paused)
    r = alice.post(
        "/api/v1/monitors/bulk",
        json={"action": "update", "monitor_ids": ids[:2], "settings": {"check_interval": 300}},
    )
    assert r.status_code == 200, r.get_json()
    updated = audit_of(alice, action="monitor.update")
    assert [e["details"]["fields"] for e in updated] == [["check_interval"]] * 2
    assert all(e["details"]["bulk"] for e in updated)
    alice.post("/api/v1/monitors/bulk", json={"action": "delete", "monitor_ids": ids})
    assert len(audit_of(alice, action="monitor.delete")) == 3
    # A single change is not marked.
    single = create(alice, name="single")
    alice.post(f"/api/v1/monitors/{single}/pause")
    assert "bulk" not in audit_of(alice, action="monitor.pause")[0]["details"]


def test_an_apply_run_leaves_one_line_with_its_counts(alice):
    keep = create(alice, name="keep", key="keep")
    create(alice, name="old", key="old")
    create(alice, name="edit", key="edit")
    before = len(audit_of(alice))
    entries = [
        {"key": "keep", "name": "keep", "type": "http", "url": "http://127.0.0.1:9/health"},
        {"key": "edit", "name": "edit", "type": "http", "url": "http://127.0.0.1:9/other"},
        {"key": "new", "name": "new", "type": "http", "url": "http://127.0.0.1:9/"},
    ]
    dry = alice.post(
        "/api/v1/monitors/apply", json={"monitors": entries, "prune": True, "dry_run": True}
    )
    assert dry.status_code == 200, dry.get_json()
    assert len(audit_of(alice)) == before  # a dry run records nothing
    r = alice.post("/api/v1/monitors/apply", json={"monitors": entries, "prune": True})
    assert r.status_code == 200, r.get_json()
    events = audit_of(alice)
    assert len(events) == before + 1  # one line, none per monitor
    assert events[0]["action"] == "monitors.apply"
    assert events[0]["details"] == {"created": 1, "updated": 1, "deleted": 1, "unchanged": 1}
    assert events[0]["target"] == {"type": "team", "id": alice.user.personal_team_id}
    assert keep in [m["id"] for m in alice.get("/api/v1/monitors").get_json()["data"]]


def test_channel_lines_name_fields_never_secrets(alice):
    config = {
        "url": f"https://hooks.example.com/in/{URL_TOKEN}",
        "secret": HOOK_SECRET,
        "headers": {"Authorization": HEADER_VALUE},
    }
    r = alice.post("/api/v1/channels", json={"name": "hook", "type": "webhook", "config": config})
    assert r.status_code == 201, r.get_json()
    cid = r.get_json()["data"]["id"]
    assert line(alice, "channel.create")["details"] == {"name": "hook", "type": "webhook"}
    as_read = r.get_json()["data"]["config"]  # secrets as hints: sent back, they stay
    assert alice.put(f"/api/v1/channels/{cid}", json={"config": as_read}).status_code == 200
    assert audit_of(alice, action="channel.update") == []
    new_secret = "whsec-rotated-9876543210zyxwvutsrq"
    r = alice.put(
        f"/api/v1/channels/{cid}",
        json={"name": "hook-2", "config": {"secret": new_secret, "headers": {"X-New": "v4lue-x"}}},
    )
    assert r.status_code == 200, r.get_json()
    updated = line(alice, "channel.update")
    assert updated["details"] == {
        "name": "hook-2",
        "type": "webhook",
        "fields": ["config.headers", "config.secret", "name"],
    }
    assert alice.delete(f"/api/v1/channels/{cid}").status_code == 200
    assert line(alice, "channel.delete")["target"] == {"type": "channel", "id": cid}
    dumped = json.dumps(audit_of(alice))
    for secret in (HOOK_SECRET, HEADER_VALUE, URL_TOKEN, new_secret, "v4lue-x"):
        assert secret not in dumped
    stored = json.dumps([e.details for e in AuditEvent.select()])
    assert HOOK_SECRET not in stored and new_secret not in stored


def test_status_page_and_maintenance_lines(alice, clock):
    mid = create(alice)
    body = {"slug": "acme", "title": "Acme", "groups": [{"heading": "API", "monitor_ids": [mid]}]}
    r = alice.post("/api/v1/status-pages", json=body)
    assert r.status_code == 201, r.get_json()
    pid = r.get_json()["data"]["id"]
    assert alice.put("/api/v1/status-pages/acme", json={"title": "Acme Corp"}).status_code == 200
    same = alice.put("/api/v1/status-pages/acme", json={"title": "Acme Corp"})
    assert same.status_code == 200  # no change: no line
    assert alice.delete("/api/v1/status-pages/acme").status_code == 200
    assert line(alice, "status_page.create")["details"] == {"slug": "acme", "title": "Acme"}
    assert line(alice, "status_page.update")["details"] == {
        "slug": "acme",
        "title": "Acme Corp",
        "fields": ["title"],
    }
    assert line(alice, "status_page.delete")["target"] == {"type": "status_page", "id": pid}

    r = alice.post("/api/v1/maintenance", json={"title": "deploy", "monitor_ids": [mid]})
    assert r.status_code == 201, r.get_json()
    wid = r.get_json()["data"]["id"]
    path = f"/api/v1/maintenance/{wid}"
    assert alice.put(path, json={"title": "db upgrade"}).status_code == 200
    assert alice.put(path, json={"title": "db upgrade"}).status_code == 200  # no change: no line
    assert alice.post(f"{path}/start", json={"duration": 600}).status_code == 200
    assert alice.post(f"{path}/end").status_code == 200
    assert alice.delete(path).status_code == 200
    assert line(alice, "maintenance.create")["details"] == {"title": "deploy"}
    assert line(alice, "maintenance.update")["details"] == {
        "title": "db upgrade",
        "fields": ["title"],
    }
    assert line(alice, "maintenance.start")["details"] == {"title": "db upgrade", "duration": 600}
    assert line(alice, "maintenance.end")["target"] == {"type": "maintenance", "id": wid}
    assert line(alice, "maintenance.delete")["target"] == {"type": "maintenance", "id": wid}
    assert [e["action"] for e in audit_of(alice, action="maintenance.")] == [
        "maintenance.delete",
        "maintenance.end",
        "maintenance.start",
        "maintenance.update",
        "maintenance.create",
    ]


# -- notifications: who acknowledged, who resolved ---------------------------------------


@pytest.fixture
def down(alice, settings, clock):
    """Two active downtimes of alice's (two monitors, each failed past its threshold)."""
    recorder = Recorder(settings)
    monitors = [make_monitor(alice.user, settings, clock, name=f"m{i}") for i in range(2)]
    recorder.record([outcome(m, clock, False) for m in monitors], now=clock.now())
    clock.advance(60)
    return list(Notification.select().order_by(Notification.id))


def test_acknowledge_and_resolve_record_who_did_it(alice, bob, down, clock):
    first, second = down
    team = alice.user.personal_team_id
    join(team, bob, "member", clock)
    as_bob = {"X-Uptime-Team": str(team)}
    r = bob.post(f"/api/v1/notifications/{first.id}/acknowledge", headers=as_bob)
    assert r.status_code == 200, r.get_json()
    alice.post(f"/api/v1/notifications/{first.id}/acknowledge")  # a second: keeps the first
    r = alice.post(f"/api/v1/notifications/{first.id}/resolve")
    assert r.status_code == 200, r.get_json()

    shown = alice.get(f"/api/v1/notifications/{first.id}").get_json()["data"]
    assert shown["acknowledged_by"] == {"id": bob.user.id, "name": "Bob"}
    assert shown["resolved_by"] == {"id": alice.user.id, "name": "Alice"}
    listed = {n["id"]: n for n in alice.get("/api/v1/notifications").get_json()["data"]}
    assert listed[first.id]["acknowledged_by"] == {"id": bob.user.id, "name": "Bob"}
    assert listed[first.id]["resolved_by"] == {"id": alice.user.id, "name": "Alice"}
    assert (listed[second.id]["acknowledged_by"], listed[second.id]["resolved_by"]) == (None, None)
    active = alice.get("/api/v1/notifications/active").get_json()["data"]
    assert [(n["id"], n["acknowledged_by"]) for n in active] == [(second.id, None)]

    [ack] = audit_of(alice, action="notification.acknowledge")
    assert ack["actor"] == {"id": bob.user.id, "name": "Bob"}
    assert ack["target"] == {"type": "notification", "id": first.id}
    assert ack["details"] == {"monitor_id": first.monitor_id, "type": "downtime"}
    [resolved] = audit_of(alice, action="notification.resolve")
    assert resolved["actor"] == {"id": alice.user.id, "name": "Alice"}
    assert audit_of(alice, action="notification.") == [resolved, ack]


def test_the_engine_resolving_names_nobody(alice, down, settings, clock):
    first, _second = down
    Recorder(settings).record([outcome(first.monitor, clock, True)], now=clock.now())
    shown = alice.get(f"/api/v1/notifications/{first.id}").get_json()["data"]
    assert (shown["status"], shown["resolved_by"]) == ("resolved", None)
    assert audit_of(alice, action="notification.") == []


# -- the endpoint: filters, roles, teams --------------------------------------------------


def test_filters_since_actor_action_and_limit(alice, bob, clock):
    team = alice.user.personal_team_id
    join(team, bob, "admin", clock)
    as_bob = {"X-Uptime-Team": str(team)}
    create(alice, name="a1")  # 12:00
    clock.advance(3600)
    r = bob.post(
        "/api/v1/monitors",
        json={"name": "b1", "url": "http://127.0.0.1:9/", "type": "http"},
        headers=as_bob,
    )  # 13:00
    assert r.status_code == 201, r.get_json()
    clock.advance(3600)
    mid = create(alice, name="a2")  # 14:00
    alice.post(f"/api/v1/monitors/{mid}/pause")

    everything = audit_of(alice)
    assert [e["action"] for e in everything] == [
        "monitor.pause",
        "monitor.create",
        "monitor.create",
        "monitor.create",
    ]
    assert [e["details"].get("name") for e in everything] == ["a2", "a2", "b1", "a1"]
    assert [e["details"]["name"] for e in audit_of(alice, actor=bob.user.id)] == ["b1"]
    assert audit_of(bob, team, actor=alice.user.id) == [
        e for e in everything if e["details"]["name"] != "b1"
    ]
    assert len(audit_of(alice, action="monitor.create")) == 3
    assert len(audit_of(alice, action="monitor.")) == 4
    assert audit_of(alice, action="monitor") == []  # exact, not a prefix
    assert audit_of(alice, action="monitors.") == []
    assert [e["details"]["name"] for e in audit_of(alice, since="30m")] == ["a2", "a2"]
    assert len(audit_of(alice, since="90m")) == 3
    assert len(audit_of(alice, since="2h")) == 4  # 12:00 is the boundary: included
    assert len(audit_of(alice, since="119m")) == 3
    assert len(audit_of(alice, since="1d")) == 4
    assert len(audit_of(alice, since="2026-11-22T13:00:00Z")) == 3
    assert len(audit_of(alice, since="2026-11-22T14:30:00+01:00")) == 2  # 13:30Z
    assert audit_of(alice, limit=2) == everything[:2]
    assert audit_of(alice, limit=1000) == everything


@sqlite_only
@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"since": "yesterday"}, "since"),
        ({"since": "7w"}, "since"),
        ({"since": "-7d"}, "since"),
        ({"since": "9999999d"}, "since"),
        ({"actor": "bob"}, "actor"),
        ({"actor": "0"}, "actor"),
        ({"action": "monitor.*"}, "action"),
        ({"action": "Monitor.create"}, "action"),
        ({"limit": "0"}, "limit"),
        ({"limit": "1001"}, "limit"),
    ],
)
def test_bad_filters_are_validation_errors(alice, params, field):
    team = alice.user.personal_team_id
    r = alice.get(f"/api/v1/teams/{team}/audit", query_string=params)
    assert_error(r, 400, "VALIDATION_ERROR", field, only=True)


def test_viewers_and_members_are_refused_and_other_teams_are_not_found(
    alice, bob, make_user, clock
):
    team = alice.user.personal_team_id
    carol = make_user("carol@example.com", "Carol")
    join(team, bob, "viewer", clock)
    join(team, carol, "member", clock)
    for user, role in ((bob, "viewer"), (carol, "member")):
        r = user.get(f"/api/v1/teams/{team}/audit")
        error = assert_error(r, 403, "FORBIDDEN")
        assert error["details"] == {"required_role": ["admin"], "current_role": [role]}
    # A team you are not in does not exist for you, by id or by slug.
    dave = make_user("dave@example.com", "Dave")
    assert_error(dave.get(f"/api/v1/teams/{team}/audit"), 404, "TEAM_NOT_FOUND")
    slug = alice.get(f"/api/v1/teams/{team}").get_json()["data"]["slug"]
    assert_error(dave.get(f"/api/v1/teams/{slug}/audit"), 404, "TEAM_NOT_FOUND")
    assert_error(dave.get("/api/v1/teams/999999/audit"), 404, "TEAM_NOT_FOUND")
    # The owner reads it by slug too; an admin token reads it, a write token is refused.
    assert alice.get(f"/api/v1/teams/{slug}/audit").status_code == 200
    assert mint(alice, "admin").get(f"/api/v1/teams/{team}/audit").status_code == 200
    writer = mint(alice, "write")
    assert_error(writer.get(f"/api/v1/teams/{team}/audit"), 403, "FORBIDDEN")
    # A token of one team does not read another's.
    assert_error(mint(dave, "admin").get(f"/api/v1/teams/{team}/audit"), 404, "TEAM_NOT_FOUND")


def test_lines_of_one_team_never_show_under_another(alice, bob, clock):
    create(alice, name="alice's")
    create(bob, name="bob's")
    ops = alice.post("/api/v1/teams", json={"name": "Ops"}).get_json()["data"]
    join(ops["id"], bob, "admin", clock)
    as_ops = {"X-Uptime-Team": "ops"}
    r = bob.post(
        "/api/v1/monitors",
        json={"name": "shared", "url": "http://127.0.0.1:9/", "type": "http"},
        headers=as_ops,
    )
    assert r.status_code == 201, r.get_json()

    assert [e["details"].get("name") for e in audit_of(alice, action="monitor.")] == ["alice's"]
    assert [e["details"].get("name") for e in audit_of(bob, action="monitor.")] == ["bob's"]
    in_ops = audit_of(bob, "ops")
    assert [e["action"] for e in in_ops] == ["monitor.create", "team.create"]
    assert {e["team_id"] for e in in_ops} == {ops["id"]}
    assert audit_of(alice, ops["id"]) == in_ops
    assert_error(
        alice.get(f"/api/v1/teams/{bob.user.personal_team_id}/audit"), 404, "TEAM_NOT_FOUND"
    )


# -- retention ----------------------------------------------------------------------------


def test_housekeeping_prunes_lines_past_the_retention(make_monitor, settings, clock):
    assert settings.audit_retention_days == 365  # UPTIME_AUDIT_RETENTION_DAYS's default
    make_monitor("old")
    clock.advance(timedelta(days=364).total_seconds())
    make_monitor("recent")
    keeper = default_housekeeping(settings, clock)
    keeper.loop(clock.now())  # nothing due before the first period
    assert AuditEvent.select().count() == 2
    clock.advance(timedelta(days=1, hours=1).total_seconds())
    keeper.loop(clock.now())
    assert keeper.runs["prune-audit-log"] == 1
    assert [e.details["name"] for e in AuditEvent.select()] == ["recent"]


def test_prune_keeps_the_line_at_the_cutoff(alice, clock):
    create(alice)
    assert prune_audit_log(clock.now() + timedelta(days=30), 30) == 0
    assert prune_audit_log(clock.now() + timedelta(days=30, seconds=1), 30) == 1
    assert AuditEvent.select().count() == 0
