"""Monitor tags: stored with the monitor, the list filter, bulk by tag, isolation."""

from __future__ import annotations

from typing import Any

from tests.api.shapes import assert_error, create
from uptime_server.models import Monitor, MonitorTag

LIST = "/api/v1/monitors"
BULK = "/api/v1/monitors/bulk"


def _get(user: Any, mid: int) -> dict[str, Any]:
    return user.get(f"{LIST}/{mid}").get_json()["data"]


def _listed(user: Any, *tags: str) -> list[int]:
    query = "&".join(f"tag={t}" for t in tags)
    response = user.get(f"{LIST}?{query}")
    assert response.status_code == 200, response.get_json()
    return [item["id"] for item in response.get_json()["data"]]


def test_it_folds_collapses_and_sorts_tags_on_create(alice: Any) -> None:
    mid = create(alice, tags=["Prod", " web ", "prod", "eu-west.1"])
    assert _get(alice, mid)["tags"] == ["eu-west.1", "prod", "web"]
    stored = MonitorTag.select(MonitorTag.tag).where(MonitorTag.monitor == mid)
    assert sorted(row.tag for row in stored) == ["eu-west.1", "prod", "web"]


def test_it_refuses_bad_tags_by_field(alice: Any) -> None:
    for tags in (["-x"], ["a" * 33], ["with space"], [f"t{i}" for i in range(21)], "prod"):
        response = alice.post(
            LIST, json={"name": "m", "type": "http", "url": "http://127.0.0.1:9/", "tags": tags}
        )
        assert_error(response, 400, "VALIDATION_ERROR", "tags", only=True)
    assert Monitor.select().count() == 0


def test_an_update_replaces_the_tags_and_keeps_them_when_not_sent(alice: Any) -> None:
    mid = create(alice, tags=["a", "b"])
    assert alice.put(f"{LIST}/{mid}", json={"name": "renamed"}).status_code == 200
    assert _get(alice, mid)["tags"] == ["a", "b"]
    assert alice.put(f"{LIST}/{mid}", json={"tags": ["c"]}).get_json()["data"]["tags"] == ["c"]
    assert alice.put(f"{LIST}/{mid}", json={"tags": []}).get_json()["data"]["tags"] == []


def test_the_list_matches_monitors_having_all_the_tags(alice: Any) -> None:
    both = create(alice, tags=["prod", "web"])
    prod = create(alice, tags=["prod"])
    create(alice, tags=["web"])
    create(alice)
    assert _listed(alice, "prod") == [both, prod]
    assert _listed(alice, "prod", "web") == [both]
    assert _listed(alice, "PROD", "prod", "web") == [both]  # folded, repeats once
    assert _listed(alice, "prod", "nope") == []
    summary = alice.get(f"{LIST}?tag=web&tag=prod").get_json()["data"][0]
    assert summary["tags"] == ["prod", "web"]


def test_a_bad_tag_filter_is_a_validation_error(alice: Any) -> None:
    assert_error(alice.get(f"{LIST}?tag=no%20way"), 400, "VALIDATION_ERROR", "tag", only=True)


def test_the_tag_filter_sees_only_the_callers_monitors(alice: Any, bob: Any) -> None:
    mine = create(alice, tags=["shared"])
    create(bob, tags=["shared"])
    assert _listed(alice, "shared") == [mine]


def test_bulk_by_tag_acts_on_the_callers_tagged_monitors_only(alice: Any, bob: Any) -> None:
    a1, a2 = create(alice, tags=["batch"]), create(alice, tags=["batch", "x"])
    untagged = create(alice)
    theirs = create(bob, tags=["batch"])
    response = alice.post(BULK, json={"action": "pause", "tag": "batch", "reason": "maint"})
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["data"] == {"action": "pause", "succeeded": [a1, a2], "failed": []}
    assert [Monitor.get_by_id(m).paused for m in (a1, a2, untagged, theirs)] == [
        True,
        True,
        False,
        False,
    ]
    both = alice.post(BULK, json={"action": "resume", "tag": ["batch", "x"]})
    assert both.get_json()["data"]["succeeded"] == [a2]


def test_bulk_update_by_tag_changes_the_tagged_monitors(alice: Any) -> None:
    a1, other = create(alice, tags=["slow"]), create(alice)
    body = {"action": "update", "tag": "slow", "settings": {"timeout": 20}}
    assert alice.post(BULK, json=body).get_json()["data"]["succeeded"] == [a1]
    assert (Monitor.get_by_id(a1).timeout, Monitor.get_by_id(other).timeout) == (20, 30)


def test_bulk_takes_exactly_one_selector(alice: Any) -> None:
    mid = create(alice, tags=["t"])
    both = alice.post(BULK, json={"action": "pause", "tag": "t", "monitor_ids": [mid]})
    assert_error(both, 400, "VALIDATION_ERROR", "monitor_ids", only=True)
    neither = alice.post(BULK, json={"action": "pause"})
    assert_error(neither, 400, "VALIDATION_ERROR", "monitor_ids", only=True)
    bad = alice.post(BULK, json={"action": "pause", "tag": "Not A Tag"})
    assert_error(bad, 400, "VALIDATION_ERROR", "tag", only=True)
    assert Monitor.get_by_id(mid).paused is False


def test_tags_go_with_their_monitor(alice: Any) -> None:
    mid = create(alice, tags=["gone"])
    assert alice.delete(f"{LIST}/{mid}").status_code == 200
    assert MonitorTag.select().count() == 0


def test_a_key_is_unique_per_user_only(alice: Any, bob: Any) -> None:
    mine = create(alice, key="api")
    assert _get(alice, mine)["key"] == "api"
    taken = alice.post(
        LIST, json={"name": "m", "type": "http", "url": "http://127.0.0.1:9/", "key": "api"}
    )
    assert_error(taken, 400, "VALIDATION_ERROR", "key", only=True)
    other = create(alice)
    assert_error(
        alice.put(f"{LIST}/{other}", json={"key": "api"}), 400, "VALIDATION_ERROR", "key", only=True
    )
    assert _get(bob, create(bob, key="api"))["key"] == "api"  # another user's key is no clash
    assert alice.put(f"{LIST}/{mine}", json={"key": ""}).get_json()["data"]["key"] is None
    bad = alice.put(f"{LIST}/{other}", json={"key": "no spaces"})
    assert_error(bad, 400, "VALIDATION_ERROR", "key", only=True)
