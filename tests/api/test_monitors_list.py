"""GET /api/v1/monitors: pagination, filters, summary items."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.shapes import assert_error, create, sqlite_only
from tests.notification_rows import add_notification
from uptime_server.models import Monitor

URL = "/api/v1/monitors"


def _list(user: Any, query: str = "") -> dict[str, Any]:
    response = user.get(f"{URL}{query}")
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def _ids(body: dict[str, Any]) -> list[int]:
    return [item["id"] for item in body["data"]]


def test_it_lists_nothing_with_zero_pages(alice: Any) -> None:
    assert _list(alice) == {
        "data": [],
        "pagination": {"page": 1, "limit": 25, "total": 0, "pages": 0},
    }


def test_it_lists_summaries_in_id_order(alice: Any) -> None:
    first, second = create(alice, name="b"), create(alice, name="a")
    Monitor.update(status="online", response_time=87).where(Monitor.id == second).execute()
    body = _list(alice)
    assert _ids(body) == [first, second]
    assert body["data"][1] == {
        "id": second,
        "team_id": alice.user.personal_team_id,
        "name": "a",
        "url": "http://127.0.0.1:9/health",
        "type": "http",
        "status": "online",
        "flapping": False,
        "blocked": False,
        "paused": False,
        "uptime_24h": None,
        "response_time": 87,
        "status_code": None,
        "last_check": None,
        "query_name": None,
        "record_type": None,
        "tags": [],
    }


def test_a_summary_has_the_http_status_and_the_dns_record_type(alice: Any, bob: Any) -> None:
    web = create(alice, name="web")
    Monitor.update(status_code=503).where(Monitor.id == web).execute()
    dns = alice.post(
        URL, json={"name": "mx", "type": "dns", "query_name": "example.test", "record_type": "MX"}
    ).get_json()["data"]["id"]
    items = {item["id"]: item for item in _list(alice)["data"]}
    assert (items[web]["status_code"], items[web]["record_type"]) == (503, None)
    assert (items[dns]["query_name"], items[dns]["record_type"]) == ("example.test", "MX")
    assert items[dns]["status_code"] is None
    assert _list(bob)["data"] == []


def test_it_paginates(alice: Any) -> None:
    ids = [create(alice, name=f"m{i}") for i in range(5)]
    pages = [_list(alice, f"?limit=2&page={page}") for page in (1, 2, 3)]
    assert [_ids(p) for p in pages] == [ids[0:2], ids[2:4], ids[4:5]]
    assert pages[2]["pagination"] == {"page": 3, "limit": 2, "total": 5, "pages": 3}


def test_it_answers_past_the_last_page_with_correct_totals(alice: Any) -> None:
    for i in range(3):
        create(alice, name=f"m{i}")
    body = _list(alice, "?page=4&limit=1")
    assert body == {"data": [], "pagination": {"page": 4, "limit": 1, "total": 3, "pages": 3}}
    huge = _list(alice, f"?page={10**17}&limit=100")
    assert (huge["data"], huge["pagination"]["total"]) == ([], 3)


def test_it_takes_up_to_100_per_page(alice: Any) -> None:
    for i in range(3):
        create(alice, name=f"m{i}")
    assert _list(alice, "?limit=100")["pagination"] == {
        "page": 1,
        "limit": 100,
        "total": 3,
        "pages": 1,
    }


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ("?page=0", "page"),
        ("?page=-1", "page"),
        ("?page=x", "page"),
        ("?page=1.5", "page"),
        ("?limit=0", "limit"),
        ("?limit=101", "limit"),
        ("?limit=ten", "limit"),
        ("?status=down", "status"),
        ("?status=ONLINE", "status"),
        ("?type=smtp", "type"),
        ("?type=HTTP", "type"),
        ("?search=%00", "search"),
        ("?search=" + "s" * 2049, "search"),
        ("?page=%D9%A3", "page"),  # ARABIC-INDIC DIGIT THREE
        ("?page=1_0", "page"),
        ("?page=" + "9" * 19, "page"),
    ],
)
@sqlite_only
def test_it_validates_query_parameters(alice: Any, query: str, param: str) -> None:
    assert_error(alice.get(f"{URL}{query}"), 400, "VALIDATION_ERROR", param)


def test_it_ignores_unknown_parameters(alice: Any) -> None:
    create(alice)
    assert _list(alice, "?colour=red&sort=desc")["pagination"]["total"] == 1


def test_it_filters_by_status(alice: Any) -> None:
    ids = {status: create(alice, name=status) for status in ("online", "offline", "warning")}
    pending = create(alice, name="pending")
    for status, mid in ids.items():
        Monitor.update(status=status).where(Monitor.id == mid).execute()
    for status, mid in ids.items():
        body = _list(alice, f"?status={status}")
        assert (_ids(body), body["pagination"]["total"]) == ([mid], 1)
    assert _ids(_list(alice, "?status=pending")) == [pending]


def test_it_filters_by_type(alice: Any) -> None:
    plain = create(alice, name="plain")
    secure = create(alice, name="secure", type="https", url="https://example.com/")
    ping = create(alice, name="ping", type="ping", url="ping://127.0.0.1")
    tcp = create(alice, name="tcp", type="tcp", url="tcp://127.0.0.1:5432")
    assert _ids(_list(alice, "?type=http")) == [plain]
    assert _ids(_list(alice, "?type=https")) == [secure]
    # Every type can be listed.
    assert _ids(_list(alice, "?type=ping")) == [ping]
    assert _ids(_list(alice, "?type=tcp")) == [tcp]
    assert _ids(_list(alice, "?type=dns")) == []
    assert _list(alice)["pagination"]["total"] == 4


def test_it_searches_name_and_url_case_insensitively(alice: Any) -> None:
    api = create(alice, name="Billing API", url="http://billing.internal/health")
    shop = create(alice, name="shop", url="https://SHOP.example.com/", type="https")
    create(alice, name="other", url="http://10.0.0.1/")
    assert _ids(_list(alice, "?search=billing")) == [api]
    assert _ids(_list(alice, "?search=API")) == [api]
    assert _ids(_list(alice, "?search=shop.EXAMPLE")) == [shop]
    assert _ids(_list(alice, "?search=health")) == [api]
    assert _list(alice, "?search=nothing-like-it")["pagination"] == {
        "page": 1,
        "limit": 25,
        "total": 0,
        "pages": 0,
    }


def test_it_takes_wildcards_in_search_literally(alice: Any) -> None:
    percent = create(alice, name="100% up")
    underscore = create(alice, name="a_b")
    create(alice, name="axb 100 up")
    backslash = create(alice, name="back\\slash")
    assert _ids(_list(alice, "?search=%25")) == [percent]
    assert _ids(_list(alice, "?search=_")) == [underscore]
    assert _ids(_list(alice, "?search=a_b")) == [underscore]
    assert _ids(_list(alice, "?search=%5C")) == [backslash]


def test_it_combines_filters_and_pagination(alice: Any) -> None:
    wanted = [create(alice, name=f"web-{i}") for i in range(3)]
    create(alice, name="db-0")
    Monitor.update(status="online").where(Monitor.id.in_(wanted[:2])).execute()
    body = _list(alice, "?search=web&status=online&limit=1&page=2")
    assert _ids(body) == [wanted[1]]
    assert body["pagination"] == {"page": 2, "limit": 1, "total": 2, "pages": 2}


def test_it_shows_paused_monitors_with_their_status(alice: Any) -> None:
    mid = create(alice)
    Monitor.update(status="offline").where(Monitor.id == mid).execute()
    alice.post(f"{URL}/{mid}/pause")
    item = _list(alice, "?status=offline")["data"][0]
    assert (item["status"], item["paused"]) == ("offline", True)


def test_each_summary_is_what_the_summary_model_writes(alice: Any, clock: Any) -> None:
    """The list writes its items without a model each (schemas.monitors.summary_json):
    field for field, in order, and in wire form, they are MonitorSummary's."""
    from datetime import timedelta

    from uptime_server.clock import isoformat
    from uptime_server.db import write_tx
    from uptime_server.schemas.monitors import MonitorSummary
    from uptime_server.services import monitors as monitor_service
    from uptime_server.stats import rollups

    web = create(alice, name="web", tags=["prod", "eu"])
    dns = alice.post(
        URL, json={"name": "mx", "type": "dns", "query_name": "example.test", "record_type": "MX"}
    ).get_json()["data"]["id"]
    beat = alice.post(URL, json={"name": "cron", "type": "heartbeat", "period": 3600}).get_json()
    paused = create(alice, name="paused")
    maintained = create(alice, name="maintained")
    child = create(alice, name="child", depends_on=[web])  # blocked: web is down
    now = clock.now()
    add_notification(web, alice.user.id, now, "web down")
    Monitor.update(
        status="offline",
        status_code=503,
        response_time=1234,
        last_check=now - timedelta(seconds=7, microseconds=5),
        flapping_since=now,
    ).where(Monitor.id == web).execute()
    assert alice.post(f"{URL}/{paused}/pause", json={}).status_code == 200
    soon = isoformat(now + timedelta(hours=1))
    w = alice.post(
        "/api/v1/maintenance",
        json={
            "title": "t",
            "monitor_ids": [maintained],
            "starts_at": isoformat(now),
            "ends_at": soon,
        },
    )
    assert w.status_code == 201, w.get_json()
    with write_tx():
        rollups.add_runs(
            [
                rollups.RunSample(web, int(now.timestamp()) - 60, ok, 80)
                for ok in (True, False, True)
            ]
        )
    items = _list(alice)["data"]
    assert [i["id"] for i in items] == [web, dns, beat["data"]["id"], paused, maintained, child]
    rows = {m.id: m for m in Monitor.select()}
    monitor_service.show_maintenance(rows.values(), {maintained})
    expected = [
        MonitorSummary.from_row(
            rows[i["id"]], uptime_24h=i["uptime_24h"], tags=i["tags"], blocked=i["blocked"]
        ).to_json()
        for i in items
    ]
    assert items == expected
    assert [list(i) for i in items] == [list(e) for e in expected]  # the same order of fields
    by_id = {i["id"]: i for i in items}
    assert by_id[web]["uptime_24h"] == 66.667 and by_id[web]["tags"] == ["eu", "prod"]
    assert by_id[web]["flapping"] is True and by_id[web]["last_check"].endswith("Z")
    assert (by_id[paused]["paused"], by_id[maintained]["status"]) == (True, "maintenance")
    assert [i["id"] for i in items if i["blocked"]] == [child]
