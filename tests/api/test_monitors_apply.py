"""POST /api/v1/monitors/apply and GET /api/v1/monitors/export: monitors as code."""

from __future__ import annotations

from typing import Any

from tests.api.shapes import assert_error, create
from uptime_server.models import AlertSettings, Monitor

APPLY = "/api/v1/monitors/apply"
EXPORT = "/api/v1/monitors/export"


def entry(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "type": "http", "url": f"http://127.0.0.1:9/{name}", **fields}


def apply(user: Any, *entries: dict[str, Any], **flags: Any) -> dict[str, Any]:
    response = user.post(APPLY, json={"monitors": list(entries), **flags})
    assert response.status_code == 200, response.get_json()
    return response.get_json()["data"]


def actions(result: dict[str, Any]) -> list[tuple[str, str]]:
    return [(step["action"], step["name"]) for step in result["plan"]]


def names(user: Any) -> list[str]:
    return [m.name for m in Monitor.select().where(Monitor.user == user.user).order_by(Monitor.id)]


def test_it_creates_what_is_missing_with_alerts_and_tags(alice: Any) -> None:
    result = apply(
        alice,
        entry("api", key="api", tags=["Prod"], timeout=10, alerts={"alert_threshold": 3}),
        entry("web"),
    )
    assert result["applied"] is True
    assert actions(result) == [("create", "api"), ("create", "web")]
    assert result["summary"] == {"create": 2, "update": 0, "delete": 0, "unchanged": 0, "extra": 0}
    created = {c["field"]: c["new"] for c in result["plan"][0]["changes"]}
    assert created["timeout"] == 10 and created["alerts.alert_threshold"] == 3
    api = Monitor.get(Monitor.key == "api")
    assert (api.timeout, AlertSettings.get_by_id(api.id).alert_threshold) == (10, 3)
    assert alice.get(f"/api/v1/monitors/{api.id}").get_json()["data"]["tags"] == ["prod"]


def test_a_second_apply_of_the_same_set_changes_nothing(alice: Any) -> None:
    body = [entry("api", method="post", tags=["b", "a"], headers={"X": "1"})]
    apply(alice, *body)
    before = Monitor.get(Monitor.name == "api").updated_at
    again = apply(alice, *body)
    assert actions(again) == [("unchanged", "api")]
    assert again["applied"] is False
    assert Monitor.get(Monitor.name == "api").updated_at == before


def test_it_updates_field_by_field_matching_by_name(alice: Any, clock: Any) -> None:
    mid = create(alice, name="api", url="http://127.0.0.1:9/api")
    result = apply(alice, entry("api", timeout=15, alerts={"alert_on_recovery": False}))
    assert actions(result) == [("update", "api")]
    assert result["plan"][0]["id"] == mid
    assert result["plan"][0]["changes"] == [
        {"field": "timeout", "old": 30, "new": 15},
        {"field": "alerts.alert_on_recovery", "old": True, "new": False},
    ]
    assert Monitor.get_by_id(mid).timeout == 15
    assert AlertSettings.get_by_id(mid).alert_on_recovery is False


def test_a_key_matches_across_a_rename_and_is_adopted_by_name(alice: Any) -> None:
    mid = create(alice, name="old name", url="http://127.0.0.1:9/x")
    adopted = apply(alice, entry("old name", key="svc", url="http://127.0.0.1:9/x"))
    assert adopted["plan"][0]["changes"] == [{"field": "key", "old": None, "new": "svc"}]
    renamed = apply(alice, entry("new name", key="svc", url="http://127.0.0.1:9/x"))
    assert (renamed["plan"][0]["action"], renamed["plan"][0]["id"]) == ("update", mid)
    assert Monitor.get_by_id(mid).name == "new name"


def test_extras_are_reported_and_deleted_only_with_prune(alice: Any) -> None:
    keep, extra = create(alice, name="keep"), create(alice, name="extra")
    Monitor.update(url="http://127.0.0.1:9/keep").where(Monitor.id == keep).execute()
    reported = apply(alice, entry("keep"))
    assert actions(reported) == [("unchanged", "keep"), ("extra", "extra")]
    assert names(alice) == ["keep", "extra"]
    pruned = apply(alice, entry("keep"), prune=True)
    assert actions(pruned) == [("unchanged", "keep"), ("delete", "extra")]
    assert pruned["plan"][1]["id"] == extra
    assert names(alice) == ["keep"]


def test_a_dry_run_plans_and_writes_nothing(alice: Any) -> None:
    create(alice, name="gone")
    result = apply(alice, entry("new"), prune=True, dry_run=True)
    assert actions(result) == [("create", "new"), ("delete", "gone")]
    assert (result["dry_run"], result["applied"]) == (True, False)
    assert names(alice) == ["gone"]


def test_an_invalid_entry_names_every_bad_field_and_nothing_is_applied(alice: Any) -> None:
    create(alice, name="gone")
    response = alice.post(
        APPLY,
        json={
            "monitors": [
                entry("fine"),
                entry("bad", timeout=1, alerts={"alert_threshold": 0}),
                {"type": "http", "url": "http://127.0.0.1:9/", "bogus": 1},
            ],
            "prune": True,
        },
    )
    body = assert_error(response, 400, "VALIDATION_ERROR")
    assert set(body["details"]) == {
        "monitors[1].timeout",
        "monitors[1].alerts.alert_threshold",
        "monitors[2].name",
        "monitors[2].bogus",
    }
    assert names(alice) == ["gone"]


def test_two_entries_with_one_identity_are_refused(alice: Any) -> None:
    response = alice.post(APPLY, json={"monitors": [entry("a", key="k"), entry("b", key="k")]})
    body = assert_error(response, 400, "VALIDATION_ERROR")
    assert list(body["details"]) == ["monitors[1].key"]
    same_name = alice.post(APPLY, json={"monitors": [entry("a"), entry("a")]})
    assert list(assert_error(same_name, 400, "VALIDATION_ERROR")["details"]) == ["monitors[1].name"]


def test_a_name_shared_by_two_monitors_is_ambiguous(alice: Any) -> None:
    create(alice, name="twin")
    create(alice, name="twin")
    response = alice.post(APPLY, json={"monitors": [entry("twin")]})
    assert "monitors[0].name" in assert_error(response, 400, "VALIDATION_ERROR")["details"]


def test_apply_never_touches_another_users_monitors(alice: Any, bob: Any) -> None:
    theirs = create(bob, name="api", url="http://127.0.0.1:9/api")
    result = apply(alice, entry("api", timeout=12), prune=True)
    assert actions(result) == [("create", "api")]
    assert Monitor.get_by_id(theirs).timeout == 30
    assert names(bob) == ["api"]
    assert apply(alice, prune=True)["summary"]["delete"] == 1
    assert names(bob) == ["api"]


def test_export_holds_only_non_default_fields_and_round_trips(alice: Any, bob: Any) -> None:
    apply(
        alice,
        entry("api", key="api", tags=["prod"], method="POST", alerts={"alert_threshold": 2}),
        entry("dns", type="dns", url="dns://example.test", record_type="MX"),
    )
    exported = alice.get(EXPORT).get_json()["data"]["monitors"]
    assert exported == [
        {
            "key": "api",
            "name": "api",
            "type": "http",
            "url": "http://127.0.0.1:9/api",
            "method": "POST",
            "tags": ["prod"],
            "alerts": {"alert_threshold": 2},
        },
        {"name": "dns", "type": "dns", "url": "dns://example.test", "record_type": "MX"},
    ]
    assert bob.get(EXPORT).get_json()["data"]["monitors"] == []
    assert actions(apply(bob, *exported)) == [("create", "api"), ("create", "dns")]
    assert bob.get(EXPORT).get_json()["data"]["monitors"] == exported
    assert {s["action"] for s in apply(bob, *exported)["plan"]} == {"unchanged"}


def test_export_by_tag(alice: Any) -> None:
    apply(alice, entry("a", tags=["x"]), entry("b", tags=["x", "y"]), entry("c"))
    tagged = alice.get(f"{EXPORT}?tag=y").get_json()["data"]["monitors"]
    assert [e["name"] for e in tagged] == ["b"]
