"""/status/{slug} and /status/{slug}.json: contents of a seeded history, privacy, caching."""

from __future__ import annotations

import gzip
import re
from typing import Any

import pytest

from tests.api.shapes import assert_error
from tests.outcomes import FAILED_503
from tests.web.conftest import DAYS
from uptime_server.models import Monitor
from uptime_server.schemas.status_pages import PublicPage

PAGES = "/api/v1/status-pages"
SECRET_URL = "http://127.0.0.1:9/internal/secret-path"


@pytest.fixture
def site(alice: Any, make_monitor: Any, history: Any) -> dict[str, Any]:
    """Two monitors: "db-primary-7" down three days ago, "api-internal" down now."""
    db = history(make_monitor("db-primary-7", url=SECRET_URL), down=(3,))
    api = history(make_monitor("api-internal", url=SECRET_URL), down=(0,))
    groups = [
        {"heading": "Database", "monitor_ids": [db.id]},
        {"heading": "API", "monitor_ids": [api.id]},
    ]
    body = {"slug": "acme", "title": "Acme", "description": "Our services", "groups": groups}
    assert alice.post(PAGES, json=body).status_code == 201
    return {"db": db, "api": api}


def test_the_json_tells_the_seeded_history(anon: Any, alice: Any, site: dict[str, Any]) -> None:
    response = anon.get("/status/acme.json")
    assert response.status_code == 200
    page = response.get_json()
    PublicPage.model_validate(page)  # the documented shape, nothing more (extra="forbid")
    assert (page["slug"], page["title"], page["description"]) == ("acme", "Acme", "Our services")
    assert (page["status"], page["status_text"]) == ("partial_outage", "Partial outage")
    db, api = (group["monitors"][0] for group in page["groups"])
    assert [g["heading"] for g in page["groups"]] == ["Database", "API"]
    assert (db["status"], db["status_text"]) == ("online", "Operational")
    assert (api["status"], api["status_text"]) == ("offline", "Down")
    assert len(db["days"]) == DAYS
    assert db["days"][-1]["date"] == "2026-11-22" and db["days"][0]["date"] == "2026-08-25"
    assert db["days"][-4] == {"date": "2026-11-19", "uptime": 0.0}
    assert {d["uptime"] for i, d in enumerate(db["days"]) if i != DAYS - 4} == {100.0}
    assert api["days"][-1] == {"date": "2026-11-22", "uptime": 0.0}
    # The 30-day figure is the API's own.
    shown = alice.get(f"/api/v1/monitors/{site['db'].id}").get_json()["data"]["uptime_30d"]
    assert db["uptime_30d"] == shown and 96 < shown < 97
    assert page["incidents"]["open"] == [
        {
            "monitor": "API",
            "started_at": "2026-11-22T03:00:00Z",
            "resolved_at": None,
            "duration": None,
        }
    ]
    assert page["incidents"]["past"] == [
        {
            "monitor": "Database",
            "started_at": "2026-11-19T03:00:00Z",
            "resolved_at": "2026-11-20T03:00:00Z",
            "duration": 86400,
        }
    ]


def test_the_html_shows_the_same(anon: Any, site: dict[str, Any]) -> None:
    response = anon.get("/status/acme")
    assert response.status_code == 200 and response.mimetype == "text/html"
    html = response.get_data(as_text=True)
    assert re.search(r'class="banner partial_outage"[^>]*>Partial outage<', html)
    cells = re.findall(r'<li class="(u-[a-z0-9]+)" title="([^"]+)"></li>', html)
    assert len(cells) == 2 * DAYS
    assert cells[DAYS - 4] == ("u-low", "2026-11-19: 0.00% uptime")
    assert cells[DAYS - 5] == ("u-100", "2026-11-18: 100% uptime")
    assert "Database</strong> down <time" in html and "for 24h 0m" in html
    assert "API</strong> down since" in html


def test_the_banner_follows_the_statuses(anon: Any, alice: Any, site: dict[str, Any]) -> None:
    assert anon.get("/status/acme.json").get_json()["status"] == "partial_outage"
    Monitor.update(status="offline").execute()
    assert anon.get("/status/acme.json").get_json()["status"] == "partial_outage"  # cached
    alice.put(f"{PAGES}/acme", json={"title": "Acme"})  # an edit forgets the cached page
    assert anon.get("/status/acme.json").get_json()["status_text"] == "Major outage"
    Monitor.update(status="online").execute()
    alice.put(f"{PAGES}/acme", json={})
    assert anon.get("/status/acme.json").get_json()["status_text"] == "All systems operational"
    # A status this version does not know (maintenance comes later) still renders.
    Monitor.update(status="maintenance").execute()
    alice.put(f"{PAGES}/acme", json={})
    page = anon.get("/status/acme.json").get_json()
    assert page["status_text"] == "Under maintenance"
    Monitor.update(status="rebooting").execute()
    alice.put(f"{PAGES}/acme", json={})
    card = anon.get("/status/acme.json").get_json()["groups"][0]["monitors"][0]
    assert (card["status"], card["status_text"]) == ("rebooting", "Rebooting")
    assert "Rebooting" in anon.get("/status/acme").get_data(as_text=True)


def test_nothing_private_shows_by_default(anon: Any, site: dict[str, Any]) -> None:
    for path in ("/status/acme", "/status/acme.json"):
        text = anon.get(path).get_data(as_text=True)
        for secret in (
            "db-primary-7",
            "api-internal",
            "secret-path",
            "127.0.0.1",
            FAILED_503,
            "503",
        ):
            assert secret not in text, (path, secret)
        assert f'"{site["db"].id}"' not in text


def test_the_page_shows_urls_names_and_labels_when_told(
    alice: Any, anon: Any, site: dict[str, Any]
) -> None:
    db, api = site["db"], site["api"]
    groups = [
        {
            "heading": "Everything",
            "monitor_ids": [db.id, api.id],
            "labels": {str(db.id): "Postgres"},
        }
    ]
    alice.put(f"{PAGES}/acme", json={"groups": groups})
    names = [m["name"] for m in anon.get("/status/acme.json").get_json()["groups"][0]["monitors"]]
    assert names == ["Postgres", "Everything 2"]
    alice.put(f"{PAGES}/acme", json={"show_names": True, "show_urls": True})
    cards = anon.get("/status/acme.json").get_json()["groups"][0]["monitors"]
    assert [(c["name"], c["url"]) for c in cards] == [
        ("Postgres", SECRET_URL),
        ("api-internal", SECRET_URL),
    ]
    html = anon.get("/status/acme").get_data(as_text=True)
    assert "api-internal" in html and "secret-path" in html
    assert FAILED_503 not in html


def test_an_unknown_slug_is_404(anon: Any, site: dict[str, Any]) -> None:
    for path in ("/status/nope", "/status/nope.json", "/status/" + "a" * 300):
        assert_error(anon.get(path), 404, "NOT_FOUND")


def test_etag_and_304(anon: Any, site: dict[str, Any]) -> None:
    for path in ("/status/acme", "/status/acme.json"):
        first = anon.get(path)
        etag = first.headers["ETag"]
        assert first.headers["Cache-Control"] == "public, max-age=30"
        again = anon.get(path, headers={"If-None-Match": etag})
        assert again.status_code == 304 and again.data == b""
        assert again.headers["ETag"] == etag
        assert anon.get(path, headers={"If-None-Match": '"other"'}).status_code == 200


def test_a_burst_costs_one_render_until_the_ttl(
    anon: Any, clock: Any, site: dict[str, Any]
) -> None:
    first = anon.get("/status/acme.json")
    Monitor.update(status="online").execute()
    assert anon.get("/status/acme.json").data == first.data
    clock.advance(29)
    assert anon.get("/status/acme.json").data == first.data
    clock.advance(2)
    fresh = anon.get("/status/acme.json")
    assert fresh.get_json()["status"] == "operational"
    assert fresh.headers["ETag"] != first.headers["ETag"]


def test_the_html_policy_allows_only_its_own_style(anon: Any, site: dict[str, Any]) -> None:
    response = anon.get("/status/acme")
    policy = response.headers["Content-Security-Policy"]
    assert policy.startswith("default-src 'none'; style-src 'sha256-")
    assert "unsafe-inline" not in policy and "script-src" not in policy
    html = response.get_data(as_text=True)
    assert "<script" not in html and " style=" not in html
    assert not re.search(r'(src|href)="(https?:)?//', html)  # nothing third-party


def test_a_deleted_page_is_gone(alice: Any, anon: Any, site: dict[str, Any]) -> None:
    assert anon.get("/status/acme").status_code == 200
    alice.delete(f"{PAGES}/acme")
    assert anon.get("/status/acme").status_code == 404


def test_big_pages_go_gzipped_to_clients_that_take_it(anon: Any, site: dict[str, Any]) -> None:
    plain = anon.get("/status/acme")
    packed = anon.get("/status/acme", headers={"Accept-Encoding": "gzip, br"})
    assert packed.headers["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in packed.headers["Vary"]
    assert gzip.decompress(packed.data) == plain.data
    assert len(packed.data) < len(plain.data) / 4
    assert packed.headers["ETag"] != plain.headers["ETag"]
    again = anon.get(
        "/status/acme",
        headers={"Accept-Encoding": "gzip", "If-None-Match": packed.headers["ETag"]},
    )
    assert again.status_code == 304


def test_a_group_shows_its_ids_then_the_monitors_carrying_any_of_its_tags(
    anon: Any, alice: Any, bob: Any, make_monitor: Any, clock: Any
) -> None:
    def tag(monitor: Monitor, *tags: str) -> None:
        response = alice.put(f"/api/v1/monitors/{monitor.id}", json={"tags": list(tags)})
        assert response.status_code == 200, response.get_json()

    first, web, api, other = (make_monitor(n) for n in ("first", "web", "api", "other"))
    tag(web, "web")
    tag(api, "api", "prod")
    tag(other, "internal")
    # Bob's monitor carries the tag too, and must never show on Alice's page.
    make_monitor("bobs", owner=bob, tags=["web"])
    group = {"heading": "Site", "monitor_ids": [api.id, first.id], "tags": ["web", "api"]}
    body = {"slug": "tagged", "title": "T", "groups": [group], "show_names": True}
    assert alice.post(PAGES, json=body).status_code == 201

    def shown() -> list[str]:
        page = anon.get("/status/tagged.json").get_json()
        return [m["name"] for m in page["groups"][0]["monitors"]]

    # The ids in their order, then tagged monitors in id order, each once.
    assert shown() == ["api", "first", "web"]
    # A monitor tagged later joins without an edit of the page (after the
    # render cache's lifetime), one untagged leaves.
    tag(other, "web")
    tag(web)
    clock.advance(3600)
    assert shown() == ["api", "first", "other"]


def test_a_monitor_in_a_maintenance_window_shows_maintenance(
    anon: Any, alice: Any, site: dict[str, Any]
) -> None:
    body = {"title": "deploy", "monitor_ids": [site["db"].id]}
    window = alice.post("/api/v1/maintenance", json=body).get_json()["data"]
    assert alice.post(f"/api/v1/maintenance/{window['id']}/start").status_code == 200
    page = anon.get("/status/acme.json").get_json()
    db, api = (group["monitors"][0] for group in page["groups"])
    assert (db["status"], db["status_text"]) == ("maintenance", "Under maintenance")
    assert api["status"] == "offline"  # not covered by the window


def test_a_shown_url_keeps_scheme_host_and_path_only(
    alice: Any, anon: Any, make_monitor: Any
) -> None:
    secret = "http://ops:pa55word@127.0.0.1:9/internal/health?token=t0ps3cret&x=1#frag"
    shown = make_monitor("with-secrets", url=secret)
    dns = make_monitor("resolver", type="dns", url="dns://example.test")
    group = {"heading": "API", "monitor_ids": [shown.id, dns.id]}
    body = {"slug": "open", "title": "Open", "groups": [group], "show_urls": True}
    assert alice.post(PAGES, json=body).status_code == 201
    for path in ("/status/open.json", "/status/open"):
        rendered, cached = anon.get(path), anon.get(path)  # a render, then the cached answer
        assert cached.data == rendered.data
        text = rendered.get_data(as_text=True)
        for leak in ("ops:", "pa55word", "token=", "t0ps3cret", "x=1", "#frag", "health?"):
            assert leak not in text, (path, leak)
        assert "http://127.0.0.1:9/internal/health" in text
        assert "dns://example.test" in text
    cards = anon.get("/status/open.json").get_json()["groups"][0]["monitors"]
    assert [c["url"] for c in cards] == ["http://127.0.0.1:9/internal/health", "dns://example.test"]


def test_a_monitor_changed_or_deleted_through_the_api_shows_at_once(
    alice: Any, anon: Any, site: dict[str, Any]
) -> None:
    db, api = site["db"], site["api"]
    alice.put(f"{PAGES}/acme", json={"show_names": True})

    def names() -> list[str]:
        page = anon.get("/status/acme.json").get_json()
        return [m["name"] for g in page["groups"] for m in g["monitors"]]

    assert names() == ["db-primary-7", "api-internal"]  # now cached
    assert alice.put(f"/api/v1/monitors/{db.id}", json={"name": "db-main"}).status_code == 200
    assert names() == ["db-main", "api-internal"]
    assert alice.post(f"/api/v1/monitors/{api.id}/pause").status_code == 200
    cards = anon.get("/status/acme.json").get_json()["groups"][1]["monitors"]
    assert cards[0]["status"] == "paused"
    assert alice.delete(f"/api/v1/monitors/{api.id}").status_code == 200
    assert names() == ["db-main"]
    pruned = alice.post("/api/v1/monitors/apply", json={"monitors": [], "prune": True})
    assert pruned.get_json()["data"]["summary"]["delete"] == 1
    assert names() == []
