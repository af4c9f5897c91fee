"""/badge/{token}/...: valid SVG with the right figure and colour, tokens, 404s, caching."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

import pytest

from tests.api.shapes import assert_error
from uptime_server.models import Monitor

SVG = "{http://www.w3.org/2000/svg}"
MONITORS = "/api/v1/monitors"


def read_badge(response: Any) -> tuple[str, str, str]:
    """(label, message, message colour) of a badge, parsed as XML."""
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == "image/svg+xml"
    root = ET.fromstring(response.data)
    assert root.tag == f"{SVG}svg" and root.get("height") == "20"
    texts = [t.text for t in root.iter(f"{SVG}text") if t.get("aria-hidden") is None]
    colour = root.find(f"{SVG}g/{SVG}rect[2]").get("fill")
    assert root.find(f"{SVG}title").text == f"{texts[0]}: {texts[1]}"
    return texts[0], texts[1], colour


@pytest.fixture
def badged(alice: Any, make_monitor: Any, history: Any) -> dict[str, Any]:
    """A monitor with badges on and 90 days of history, down three days ago."""
    monitor = history(make_monitor("api"), down=(3,))
    data = alice.put(f"{MONITORS}/{monitor.id}", json={"badges": True}).get_json()["data"]
    return data


def test_a_monitor_shows_its_token_only_with_badges_on(alice: Any, make_monitor: Any) -> None:
    mid = make_monitor("api").id
    data = alice.get(f"{MONITORS}/{mid}").get_json()["data"]
    assert (data["badges"], data["badge_token"]) == (False, None)
    on = alice.put(f"{MONITORS}/{mid}", json={"badges": True}).get_json()["data"]
    token = on["badge_token"]
    assert on["badges"] and len(token) == 32
    off = alice.put(f"{MONITORS}/{mid}", json={"badges": False}).get_json()["data"]
    assert off["badge_token"] is None
    # Turned on again, the same URLs work again; rotating is what revokes them.
    again = alice.put(f"{MONITORS}/{mid}", json={"badges": True}).get_json()["data"]
    assert again["badge_token"] == token
    created = alice.post(
        MONITORS, json={"name": "b", "url": "http://127.0.0.1:9/", "type": "http", "badges": True}
    ).get_json()["data"]
    assert alice.get(f"{MONITORS}/{created['id']}").get_json()["data"]["badge_token"]


def test_the_badges_tell_status_uptime_and_response_time(anon: Any, badged: dict) -> None:
    base = f"/badge/{badged['badge_token']}"
    assert read_badge(anon.get(f"{base}/status.svg")) == ("status", "up", "#4c1")
    assert read_badge(anon.get(f"{base}/uptime-24h.svg")) == ("uptime 24h", "100%", "#4c1")
    # 4 runs a day, one day of 7 (plus the window's edge) failed.
    label, message, colour = read_badge(anon.get(f"{base}/uptime-7d.svg"))
    assert label == "uptime 7d" and message == f"{badged['uptime_7d'] // 0.01 / 100:.2f}%"
    assert 85 < badged["uptime_7d"] < 90 and colour == "#e05d44"
    assert read_badge(anon.get(f"{base}/uptime-30d.svg"))[1:] == (
        f"{badged['uptime_30d'] // 0.01 / 100:.2f}%",
        "#dfb317",  # 95 to 97 %
    )
    assert read_badge(anon.get(f"{base}/uptime-90d.svg"))[0] == "uptime 90d"
    # Today's runs at 03:00 and 09:00 took 103 and 109 ms; yesterday's 15:00 and 21:00, 115 and 121.
    assert read_badge(anon.get(f"{base}/response-time.svg")) == ("response time", "112 ms", "#4c1")


def test_a_down_monitor_is_red(anon: Any, badged: dict) -> None:
    Monitor.update(status="offline").execute()
    assert read_badge(anon.get(f"/badge/{badged['badge_token']}/status.svg"))[1:] == (
        "down",
        "#e05d44",
    )


def test_texts_are_escaped(anon: Any, alice: Any, badged: dict) -> None:
    Monitor.update(status="<b>&").execute()
    label, message, _ = read_badge(anon.get(f"/badge/{badged['badge_token']}/status.svg"))
    assert message == "<b>&"


def test_rotation_kills_the_old_token(alice: Any, anon: Any, badged: dict) -> None:
    old = badged["badge_token"]
    assert read_badge(anon.get(f"/badge/{old}/status.svg"))[1] == "up"  # now cached
    rotated = alice.post(f"{MONITORS}/{badged['id']}/badge-token").get_json()["data"]
    new = rotated["badge_token"]
    assert new != old and len(new) == 32
    assert_error(anon.get(f"/badge/{old}/status.svg"), 404, "NOT_FOUND")
    assert read_badge(anon.get(f"/badge/{new}/status.svg"))[1] == "up"


def test_another_user_can_neither_see_nor_rotate_a_badge_token(
    alice: Any, bob: Any, anon: Any, badged: dict
) -> None:
    token = badged["badge_token"]
    assert_error(bob.get(f"{MONITORS}/{badged['id']}"), 404, "MONITOR_NOT_FOUND")
    assert_error(bob.post(f"{MONITORS}/{badged['id']}/badge-token"), 404, "MONITOR_NOT_FOUND")
    assert alice.get(f"{MONITORS}/{badged['id']}").get_json()["data"]["badge_token"] == token
    assert read_badge(anon.get(f"/badge/{token}/status.svg"))[1] == "up"


def test_rotation_needs_badges_on(alice: Any, make_monitor: Any) -> None:
    mid = make_monitor("api").id
    assert_error(alice.post(f"{MONITORS}/{mid}/badge-token"), 400, "VALIDATION_ERROR", "badges")


def test_badges_off_or_unknown_are_404(alice: Any, anon: Any, badged: dict) -> None:
    token = badged["badge_token"]
    assert anon.get(f"/badge/{token}/status.svg").status_code == 200  # now cached
    alice.put(f"{MONITORS}/{badged['id']}", json={"badges": False})
    for path in (
        f"/badge/{token}/status.svg",
        f"/badge/{token}/uptime-30d.svg",
        f"/badge/{token}/response-time.svg",
        f"/badge/{'A' * 32}/status.svg",
        f"/badge/{badged['id']}/status.svg",
        "/badge/x/status.svg",
    ):
        assert_error(anon.get(path), 404, "NOT_FOUND")
    alice.put(f"{MONITORS}/{badged['id']}", json={"badges": True})
    assert_error(anon.get(f"/badge/{token}/uptime-1y.svg"), 404, "NOT_FOUND")


def test_badges_are_cacheable(anon: Any, badged: dict) -> None:
    path = f"/badge/{badged['badge_token']}/status.svg"
    first = anon.get(path)
    assert first.headers["Cache-Control"] == "public, max-age=60"
    again = anon.get(path, headers={"If-None-Match": first.headers["ETag"]})
    assert again.status_code == 304 and again.data == b""


def test_bulk_changes_and_deletes_drop_cached_badges(alice: Any, anon: Any, badged: dict) -> None:
    path = f"/badge/{badged['badge_token']}/status.svg"
    assert anon.get(path).status_code == 200
    body = {"action": "update", "monitor_ids": [badged["id"]], "settings": {"badges": False}}
    assert alice.post(f"{MONITORS}/bulk", json=body).status_code == 200
    assert anon.get(path).status_code == 404
    alice.put(f"{MONITORS}/{badged['id']}", json={"badges": True})
    assert anon.get(path).status_code == 200
    alice.delete(f"{MONITORS}/{badged['id']}")
    assert anon.get(path).status_code == 404


def test_another_process_stops_serving_within_the_ttl(
    alice: Any, anon: Any, badged: dict, clock: Any
) -> None:
    path = f"/badge/{badged['badge_token']}/status.svg"
    assert anon.get(path).status_code == 200
    # Turned off behind this process's back (another daemon on the same database).
    Monitor.update(badges=False).where(Monitor.id == badged["id"]).execute()
    assert anon.get(path).status_code == 200
    clock.advance(61)
    assert anon.get(path).status_code == 404


def test_a_monitor_in_a_maintenance_window_shows_maintenance(
    anon: Any, alice: Any, badged: dict
) -> None:
    window = alice.post(
        "/api/v1/maintenance", json={"title": "deploy", "monitor_ids": [badged["id"]]}
    ).get_json()["data"]
    assert alice.post(f"/api/v1/maintenance/{window['id']}/start").status_code == 200
    status = read_badge(anon.get(f"/badge/{badged['badge_token']}/status.svg"))
    assert status[:2] == ("status", "maintenance")


def test_apply_that_prunes_or_turns_badges_off_drops_them_at_once(
    alice: Any, anon: Any, badged: dict, make_monitor: Any
) -> None:
    path = f"/badge/{badged['badge_token']}/status.svg"
    assert anon.get(path).status_code == 200  # now cached (the fast path answers next)
    entry = {"name": "api", "type": "http", "url": "http://127.0.0.1:9/", "badges": True}
    applied = alice.post(f"{MONITORS}/apply", json={"monitors": [entry]})
    assert applied.get_json()["data"]["summary"]["unchanged"] == 1, applied.get_json()
    assert anon.get(path).status_code == 200
    # The entry without badges: the whole monitor, so badges go off.
    off = alice.post(f"{MONITORS}/apply", json={"monitors": [{**entry, "badges": False}]})
    assert off.get_json()["data"]["summary"]["update"] == 1
    assert_error(anon.get(path), 404, "NOT_FOUND")
    alice.put(f"{MONITORS}/{badged['id']}", json={"badges": True})
    assert anon.get(path).status_code == 200
    # Pruned: no entry names it.
    other = make_monitor("other")
    keep = {"name": "other", "type": "http", "url": "http://127.0.0.1:9/"}
    pruned = alice.post(f"{MONITORS}/apply", json={"monitors": [keep], "prune": True})
    assert pruned.get_json()["data"]["summary"]["delete"] == 1
    assert_error(anon.get(path), 404, "NOT_FOUND")
    assert Monitor.get_or_none(Monitor.id == other.id) is not None


def test_an_update_pause_or_resume_shows_at_once(alice: Any, anon: Any, badged: dict) -> None:
    path = f"/badge/{badged['badge_token']}/status.svg"
    assert read_badge(anon.get(path))[1] == "up"
    assert alice.post(f"{MONITORS}/{badged['id']}/pause").status_code == 200
    assert read_badge(anon.get(path))[1] == "paused"
    assert alice.post(f"{MONITORS}/{badged['id']}/resume").status_code == 200
    assert read_badge(anon.get(path))[1] == "pending"
    Monitor.update(status="online").where(Monitor.id == badged["id"]).execute()
    assert read_badge(anon.get(path))[1] == "pending"  # the engine's writes wait for the TTL
    # Any edit drops it: the next answer is rendered from the rows as they are.
    renamed = alice.put(f"{MONITORS}/{badged['id']}", json={"name": "api-2"})
    assert renamed.status_code == 200, renamed.get_json()
    assert read_badge(anon.get(path))[1] == "up"
