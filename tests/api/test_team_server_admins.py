"""Server admins (UPTIME_ADMINS) see the list of teams, never a team's data.

GET /teams lists every team for an admin, with ``role`` null where he is not
a member; any team-scoped request in such a team is 404 TEAM_NOT_FOUND, as
for anyone else.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.shapes import assert_error, create


@pytest.fixture
def settings_env(settings_env: dict[str, str]) -> dict[str, str]:
    return {**settings_env, "UPTIME_ADMINS": "alice@example.com"}


def test_an_admin_lists_every_team_but_reads_none_of_their_data(
    alice: Any, bob: Any, make_user: Any
) -> None:
    assert alice.get("/api/v1/auth/user").get_json()["data"]["is_admin"] is True
    ops = bob.post("/api/v1/teams", json={"name": "Ops", "slug": "ops"}).get_json()["data"]
    mid = create(bob, name="bob's")
    carol = make_user("carol@example.com", "Carol")

    listed = {t["slug"]: t for t in alice.get("/api/v1/teams").get_json()["data"]}
    assert set(listed) == {"alice", "bob", "ops", "carol"}
    assert listed["alice"]["role"] == "owner" and listed["alice"]["personal"] is True
    for slug in ("bob", "ops", "carol"):
        assert listed[slug]["role"] is None, slug
        assert listed[slug]["personal"] is False, slug
    assert listed["ops"] == {**ops, "role": None}
    # Others see their own teams only.
    assert [t["slug"] for t in carol.get("/api/v1/teams").get_json()["data"]] == ["carol"]
    assert [t["slug"] for t in bob.get("/api/v1/teams").get_json()["data"]] == ["bob", "ops"]

    for team in ("bob", "ops", str(ops["id"])):
        header = {"X-Uptime-Team": team}
        for path in ("/api/v1/monitors", f"/api/v1/monitors/{mid}", "/api/v1/channels"):
            assert_error(alice.get(path, headers=header), 404, "TEAM_NOT_FOUND")
        assert_error(alice.get(f"/api/v1/teams/{team}"), 404, "TEAM_NOT_FOUND")
        assert_error(alice.get(f"/api/v1/teams/{team}/members"), 404, "TEAM_NOT_FOUND")
        assert_error(alice.put(f"/api/v1/teams/{team}", json={"name": "x"}), 404, "TEAM_NOT_FOUND")
        assert_error(alice.delete(f"/api/v1/teams/{team}"), 404, "TEAM_NOT_FOUND")
    # In her own team, her monitors only.
    assert alice.get("/api/v1/monitors").get_json()["data"] == []
    assert_error(alice.get(f"/api/v1/monitors/{mid}"), 404, "MONITOR_NOT_FOUND")
