"""Two teams: neither sees nor touches the other's data, on any endpoint.

Alice owns the team "red", bob the team "blue", and carol is a member of
both. Another team's object is 404 (its resource's NOT_FOUND, the same answer
as a missing id), never 403, so ids leak nothing; a team the caller is not in
is 404 TEAM_NOT_FOUND, the same as one that does not exist. The per-object
routes are read from the app's URL map (every route taking a monitor,
channel, window, notification or page), so routes added later are covered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pytest

from tests.api.shapes import assert_error, monitor_body
from tests.notification_rows import add_notification
from uptime_server.models import (
    AlertSettings,
    Channel,
    MaintenanceWindow,
    Membership,
    Monitor,
    Notification,
    StatusPage,
)

URL = "/api/v1/monitors"
# Bodies that pass validation, so a route answers for the object, not the body.
BODIES = {
    ("PUT", "/api/v1/monitors/<int:monitor_id>"): {"name": "taken over"},
    ("PUT", "/api/v1/monitors/<int:monitor_id>/alerts"): {"email_recipients": ["x@evil.test"]},
    ("POST", "/api/v1/monitors/<int:monitor_id>/pause"): {"reason": "mine now"},
    ("PUT", "/api/v1/channels/<int:channel_id>"): {"name": "taken over"},
    ("PUT", "/api/v1/maintenance/<int:window_id>"): {"title": "taken over"},
    ("PUT", "/api/v1/status-pages/<page>"): {"title": "taken over"},
}
# The path argument naming each kind of object.
ARGUMENTS = ("monitor_id", "channel_id", "window_id", "notification_id", "page")


@dataclass
class Team:
    """One team's objects, made through the API by its owner."""

    slug: str
    id: int
    monitor: int
    channel: int
    page: int
    window: int
    notification: int

    @property
    def header(self) -> dict[str, str]:
        return {"X-Uptime-Team": self.slug}

    def ids(self) -> dict[str, int]:
        return {
            "monitor_id": self.monitor,
            "channel_id": self.channel,
            "window_id": self.window,
            "notification_id": self.notification,
            "page": self.page,
        }


def make_team(owner: Any, slug: str, clock: Any) -> Team:
    made = owner.post("/api/v1/teams", json={"name": slug.title(), "slug": slug})
    assert made.status_code == 201, made.get_json()
    team_id = made.get_json()["data"]["id"]
    header = {"X-Uptime-Team": slug}

    def post(path: str, body: dict[str, Any]) -> int:
        response = owner.post(path, json=body, headers=header)
        assert response.status_code == 201, response.get_json()
        assert response.get_json()["data"]["team_id"] == team_id
        return response.get_json()["data"]["id"]

    monitor = post(URL, monitor_body(name=f"{slug}'s"))
    channel = post(
        "/api/v1/channels",
        {"name": f"{slug}'s", "type": "webhook", "config": {"url": "https://example.com/h"}},
    )
    page = post("/api/v1/status-pages", {"slug": f"{slug}-page", "title": slug})
    window = post("/api/v1/maintenance", {"title": f"{slug}'s", "monitor_ids": [monitor]})
    notification = add_notification(monitor, owner.user.id, clock.now(), f"{slug} down").id
    return Team(slug, team_id, monitor, channel, page, window, notification)


@pytest.fixture
def settings_env(settings_env: dict[str, str]) -> dict[str, str]:
    return {**settings_env, "UPTIME_RATE_LIMIT": "off"}


@pytest.fixture
def red(alice: Any, clock: Any) -> Team:
    return make_team(alice, "red", clock)


@pytest.fixture
def blue(bob: Any, clock: Any) -> Team:
    return make_team(bob, "blue", clock)


@pytest.fixture
def carol(make_user: Any, red: Team, blue: Team, clock: Any) -> Any:
    """An admin of both teams (so no route refuses her for her role)."""
    user = make_user("carol@example.com", "Carol")
    for team in (red, blue):
        Membership.create(team=team.id, user=user.user.id, role="admin", created_at=clock.now())
    return user


def object_routes(app: Any) -> list[tuple[str, str, str]]:
    """(method, rule, argument) of every API route about one object of a team."""
    routes = []
    for rule in app.url_map.iter_rules():
        if not rule.rule.startswith("/api/v1/") or "<team>" in rule.rule:
            continue
        for argument in ARGUMENTS:
            if argument in rule.arguments:
                for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
                    routes.append((method, rule.rule, argument))
    return routes


def monitor_routes(app: Any) -> list[tuple[str, str]]:
    """(method, rule) of every API route about one monitor."""
    return [(m, r) for m, r, argument in object_routes(app) if argument == "monitor_id"]


def path_of(rule: str, ids: dict[str, int]) -> str:
    return re.sub(r"<(?:\w+:)?(\w+)>", lambda m: str(ids[m[1]]), rule)


def snapshot(team: Team) -> dict[str, Any]:
    """The rows of *team*'s objects, to compare before and after."""
    return {
        "monitor": Monitor.select().where(Monitor.id == team.monitor).dicts().get(),
        "alerts": AlertSettings.select().where(AlertSettings.monitor == team.monitor).dicts().get(),
        "channel": Channel.select().where(Channel.id == team.channel).dicts().get(),
        "page": StatusPage.select().where(StatusPage.id == team.page).dicts().get(),
        "window": MaintenanceWindow.select()
        .where(MaintenanceWindow.id == team.window)
        .dicts()
        .get(),
        "notification": Notification.select()
        .where(Notification.id == team.notification)
        .dicts()
        .get(),
    }


def test_it_covers_the_known_object_routes(app: Any) -> None:
    routes = {(m, r) for m, r, _ in object_routes(app)}
    assert {
        ("GET", "/api/v1/monitors/<int:monitor_id>"),
        ("PUT", "/api/v1/monitors/<int:monitor_id>"),
        ("DELETE", "/api/v1/monitors/<int:monitor_id>"),
        ("POST", "/api/v1/monitors/<int:monitor_id>/pause"),
        ("POST", "/api/v1/monitors/<int:monitor_id>/resume"),
        ("GET", "/api/v1/monitors/<int:monitor_id>/alerts"),
        ("PUT", "/api/v1/monitors/<int:monitor_id>/alerts"),
        ("GET", "/api/v1/monitors/<int:monitor_id>/stats"),
        ("GET", "/api/v1/monitors/<int:monitor_id>/history"),
        ("GET", "/api/v1/channels/<int:channel_id>"),
        ("DELETE", "/api/v1/channels/<int:channel_id>"),
        ("GET", "/api/v1/maintenance/<int:window_id>"),
        ("POST", "/api/v1/maintenance/<int:window_id>/start"),
        ("GET", "/api/v1/notifications/<int:notification_id>"),
        ("POST", "/api/v1/notifications/<int:notification_id>/acknowledge"),
        ("GET", "/api/v1/status-pages/<page>"),
        ("DELETE", "/api/v1/status-pages/<page>"),
    } <= routes


@pytest.mark.parametrize("who", ["outsider", "member of both"])
def test_it_hides_the_other_teams_objects_on_every_route(
    app: Any, bob: Any, carol: Any, red: Team, blue: Team, who: str
) -> None:
    """Bob (blue only) and carol (in blue, in both) reach none of red's objects from blue."""
    caller = bob if who == "outsider" else carol
    before = snapshot(red)
    missing = {name: value + 100_000 for name, value in red.ids().items()}
    for method, rule, _ in object_routes(app):
        body = BODIES.get((method, rule), {})
        foreign = caller.request(method, path_of(rule, red.ids()), json=body, headers=blue.header)
        error = assert_error(foreign, 404, foreign.get_json()["error"]["code"])
        assert error["code"].endswith("_NOT_FOUND") and error["code"] != "TEAM_NOT_FOUND", rule
        absent = caller.request(method, path_of(rule, missing), json=body, headers=blue.header)
        assert (absent.status_code, absent.get_json()) == (404, foreign.get_json()), rule
    assert snapshot(red) == before


def test_a_member_of_two_teams_sees_each_teams_data_under_it(
    carol: Any, red: Team, blue: Team
) -> None:
    lists = {
        "/api/v1/monitors": "monitor",
        "/api/v1/channels": "channel",
        "/api/v1/status-pages": "page",
        "/api/v1/maintenance": "window",
        "/api/v1/notifications": "notification",
        "/api/v1/notifications/active": "notification",
    }
    for team, other in ((red, blue), (blue, red)):
        for path, kind in lists.items():
            listed = carol.get(path, headers=team.header).get_json()["data"]
            assert [row["id"] for row in listed] == [getattr(team, kind)], (team.slug, path)
            assert {row["team_id"] for row in listed} == {team.id}, (team.slug, path)
        for method, rule, _ in [("GET", r, a) for r, a in GETS]:
            mine = carol.request(method, path_of(rule, team.ids()), headers=team.header)
            assert mine.status_code == 200, (team.slug, rule, mine.get_json())
            theirs = carol.request(method, path_of(rule, other.ids()), headers=team.header)
            assert theirs.status_code == 404, (team.slug, rule)


GETS = [
    ("/api/v1/monitors/<int:monitor_id>", "monitor_id"),
    ("/api/v1/monitors/<int:monitor_id>/stats", "monitor_id"),
    ("/api/v1/monitors/<int:monitor_id>/history", "monitor_id"),
    ("/api/v1/monitors/<int:monitor_id>/alerts", "monitor_id"),
    ("/api/v1/channels/<int:channel_id>", "channel_id"),
    ("/api/v1/maintenance/<int:window_id>", "window_id"),
    ("/api/v1/notifications/<int:notification_id>", "notification_id"),
    ("/api/v1/status-pages/<page>", "page"),
]


def test_a_session_without_the_header_acts_in_its_personal_team(
    alice: Any, red: Team, blue: Team
) -> None:
    # Red is not alice's personal team: without the header she sees none of it.
    assert alice.get(URL).get_json()["data"] == []
    assert [m["id"] for m in alice.get(URL, headers=red.header).get_json()["data"]] == [red.monitor]


@pytest.mark.parametrize("key", ["slug", "id"])
def test_a_team_you_are_not_in_is_not_found_like_a_missing_one(
    bob: Any, red: Team, key: str
) -> None:
    named = {"X-Uptime-Team": red.slug if key == "slug" else str(red.id)}
    absent = {"X-Uptime-Team": "no-such-team" if key == "slug" else str(red.id + 1000)}
    for path in (URL, "/api/v1/channels", f"{URL}/{red.monitor}", "/api/v1/auth/user"):
        foreign = bob.get(path, headers=named)
        error = assert_error(foreign, 404, "TEAM_NOT_FOUND")
        assert error["message"] == "Team not found"
        missing = bob.get(path, headers=absent)
        assert missing.get_json() == foreign.get_json()
    for path in (f"/api/v1/teams/{named['X-Uptime-Team']}", "/api/v1/teams/red/members"):
        assert_error(bob.get(path), 404, "TEAM_NOT_FOUND")
    assert_error(bob.post(URL, json=monitor_body(), headers=named), 404, "TEAM_NOT_FOUND")
    assert Monitor.select().where(Monitor.team == red.id).count() == 1


def test_a_token_acts_in_its_own_team_only(carol: Any, red: Team, blue: Team) -> None:
    made = carol.post(
        "/api/v1/tokens", json={"name": "ci", "scope": "write"}, headers=red.header
    ).get_json()["data"]
    assert made["team_id"] == red.id
    bearer = {"Authorization": f"Bearer {made['token']}"}
    client = carol.client.application.test_client()
    listed = client.get(URL, headers=bearer).get_json()["data"]
    assert [m["id"] for m in listed] == [red.monitor]
    assert_error(client.get(f"{URL}/{blue.monitor}", headers=bearer), 404, "MONITOR_NOT_FOUND")
    # Naming another team, even one carol is in, is TEAM_NOT_FOUND for a token.
    for key in (blue.slug, str(blue.id), "no-such-team"):
        error = assert_error(
            client.get(URL, headers={**bearer, "X-Uptime-Team": key}), 404, "TEAM_NOT_FOUND"
        )
        assert error["message"] == "Team not found"
    assert_error(client.get(f"/api/v1/teams/{blue.slug}", headers=bearer), 404, "TEAM_NOT_FOUND")
    # Naming its own team is fine, by slug or id.
    for key in (red.slug, str(red.id)):
        assert client.get(URL, headers={**bearer, "X-Uptime-Team": key}).status_code == 200
    # What it creates is its team's.
    created = client.post(URL, json=monitor_body(name="by token"), headers=bearer)
    assert created.get_json()["data"]["team_id"] == red.id


def test_tokens_are_listed_per_team(carol: Any, red: Team, blue: Team) -> None:
    for team in (red, blue):
        response = carol.post(
            "/api/v1/tokens", json={"name": team.slug, "scope": "read"}, headers=team.header
        )
        assert response.status_code == 201
    for team in (red, blue):
        listed = carol.get("/api/v1/tokens", headers=team.header).get_json()["data"]
        assert [(t["name"], t["team_id"]) for t in listed] == [(team.slug, team.id)]
    blues = carol.get("/api/v1/tokens", headers=blue.header).get_json()["data"][0]["id"]
    assert_error(
        carol.delete(f"/api/v1/tokens/{blues}", headers=red.header), 404, "TOKEN_NOT_FOUND"
    )


def test_it_refuses_references_to_the_other_teams_objects(
    carol: Any, red: Team, blue: Team
) -> None:
    """Blue's page, window and alerts cannot name red's monitors or channels."""
    h = blue.header
    alerts = carol.put(
        f"{URL}/{blue.monitor}/alerts", json={"channel_ids": [red.channel]}, headers=h
    )
    assert alerts.status_code in (400, 404), alerts.get_json()
    window = carol.post(
        "/api/v1/maintenance", json={"title": "x", "monitor_ids": [red.monitor]}, headers=h
    )
    assert window.status_code in (400, 404), window.get_json()
    assert not MaintenanceWindow.select().where(MaintenanceWindow.title == "x").exists()
    body = {
        "slug": "mixed",
        "title": "x",
        "groups": [{"heading": "a", "monitor_ids": [red.monitor]}],
    }
    page = carol.post("/api/v1/status-pages", json=body, headers=h)
    if page.status_code == 201:
        groups = page.get_json()["data"]["groups"]
        assert all(red.monitor not in g.get("monitor_ids", []) for g in groups), groups
    else:
        assert page.status_code in (400, 404), page.get_json()


def test_it_lists_only_the_teams_monitors(bob: Any, alice: Any, red: Team, blue: Team) -> None:
    listed = bob.get(f"{URL}?search=s", headers=blue.header).get_json()
    assert [m["id"] for m in listed["data"]] == [blue.monitor]
    assert listed["pagination"]["total"] == 1
    assert [m["id"] for m in alice.get(URL, headers=red.header).get_json()["data"]] == [red.monitor]


@pytest.mark.parametrize("action", ["pause", "resume", "delete", "update"])
def test_it_fails_bulk_actions_on_the_other_teams_monitors(
    carol: Any, red: Team, blue: Team, action: str
) -> None:
    mid = red.monitor
    if action == "resume":
        Monitor.update(paused=True).where(Monitor.id == mid).execute()
    body: dict[str, Any] = {"action": action, "monitor_ids": [mid]}
    if action == "update":
        body["settings"] = {"name": "taken over"}
    result = carol.post(f"{URL}/bulk", json=body, headers=blue.header).get_json()["data"]
    assert result["succeeded"] == []
    assert result["failed"] == [
        {"id": mid, "error": {"code": "MONITOR_NOT_FOUND", "message": "Monitor not found"}}
    ]
    monitor = Monitor.get_by_id(mid)
    assert (monitor.name, monitor.paused) == ("red's", action == "resume")
