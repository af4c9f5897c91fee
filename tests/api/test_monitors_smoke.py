from __future__ import annotations


def test_it_creates_and_lists(alice):
    r = alice.post(
        "/api/v1/monitors", json={"name": "api", "url": "http://127.0.0.1:1/", "type": "http"}
    )
    assert r.status_code == 201, r.json
    assert r.json["data"]["status"] == "pending"
    r = alice.get("/api/v1/monitors")
    assert r.status_code == 200
    assert r.json["pagination"] == {"page": 1, "limit": 25, "total": 1, "pages": 1}
    mid = r.json["data"][0]["id"]
    r = alice.get(f"/api/v1/monitors/{mid}")
    assert r.status_code == 200, r.json
    assert r.json["data"]["next_check_at"] == "2026-11-22T12:00:00Z"
