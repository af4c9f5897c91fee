"""apply and export work per team: matching, pruning and listing never cross teams.

Alice is in her personal team and in "ops"; bob, in "ops" too, has his own
personal team. The same names live in several teams on purpose.
"""

from __future__ import annotations

from typing import Any

from tests.api.shapes import create
from uptime_server.models import Membership, Monitor

APPLY = "/api/v1/monitors/apply"
EXPORT = "/api/v1/monitors/export"
OPS = {"X-Uptime-Team": "ops"}


def entry(name: str, **fields: Any) -> dict[str, Any]:
    return {"name": name, "type": "http", "url": f"http://127.0.0.1:9/{name}", **fields}


def rows(team_id: int) -> list[tuple[int, str, int]]:
    query = Monitor.select(Monitor.id, Monitor.name, Monitor.timeout).where(Monitor.team == team_id)
    return list(query.order_by(Monitor.id).tuples())


def test_apply_with_prune_touches_only_the_teams_monitors(alice: Any, bob: Any, clock: Any) -> None:
    ops = alice.post("/api/v1/teams", json={"name": "Ops", "slug": "ops"}).get_json()["data"]["id"]
    Membership.create(team=ops, user=bob.user.id, role="member", created_at=clock.now())
    for name in ("api", "old"):
        create(alice, name=name, url=f"http://127.0.0.1:9/{name}")
        create(bob, name=name, url=f"http://127.0.0.1:9/{name}")
        made = bob.post("/api/v1/monitors", json=entry(name), headers=OPS)
        assert made.status_code == 201, made.get_json()
    mine, bobs = alice.user.personal_team_id, bob.user.personal_team_id
    before = {team: rows(team) for team in (mine, bobs)}
    ops_api = rows(ops)[0][0]

    body = {"monitors": [entry("api", timeout=7), entry("new")], "prune": True}
    response = alice.post(APPLY, json=body, headers=OPS)
    assert response.status_code == 200, response.get_json()
    plan = [(s["action"], s["name"]) for s in response.get_json()["data"]["plan"]]
    assert sorted(plan) == [("create", "new"), ("delete", "old"), ("update", "api")]

    after = rows(ops)
    assert [(name, timeout) for _, name, timeout in after] == [("api", 7), ("new", 30)]
    assert after[0][0] == ops_api
    assert {team: rows(team) for team in (mine, bobs)} == before

    # Export lists the team's monitors only, in each team.
    exported = alice.get(EXPORT, headers=OPS).get_json()["data"]["monitors"]
    assert sorted(m["name"] for m in exported) == ["api", "new"]
    assert [m["timeout"] for m in exported if m["name"] == "api"] == [7]
    personal = alice.get(EXPORT).get_json()["data"]["monitors"]
    assert sorted(m["name"] for m in personal) == ["api", "old"]
    assert all(m.get("timeout", 30) == 30 for m in personal)
    # A viewer may export but not apply.
    Membership.update(role="viewer").where(Membership.user == bob.user.id).execute()
    assert bob.get(EXPORT, headers=OPS).status_code == 200
    assert bob.post(APPLY, json=body, headers=OPS).status_code == 403


def test_an_apply_under_a_token_stays_in_the_tokens_team(alice: Any, bob: Any) -> None:
    create(bob, name="bobs")
    made = alice.post("/api/v1/tokens", json={"name": "ci", "scope": "write"}).get_json()
    bearer = {"Authorization": f"Bearer {made['data']['token']}"}
    client = alice.client.application.test_client()
    response = client.post(APPLY, json={"monitors": [entry("ci")], "prune": True}, headers=bearer)
    assert response.status_code == 200, response.get_json()
    assert [n for _, n, _ in rows(alice.user.personal_team_id)] == ["ci"]
    assert [n for _, n, _ in rows(bob.user.personal_team_id)] == ["bobs"]
