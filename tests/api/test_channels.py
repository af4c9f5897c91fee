"""/api/v1/channels: CRUD, secrets as hints, edits that keep secrets, test, isolation."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from tests.api.shapes import assert_error, sqlite_only
from tests.cli.conftest import closed_port as free_closed_port
from tests.notify.receivers import Receiver, serve

SLACK = "https://hooks.slack.com/services/T000/B000/XXXXsecretZZ9f"
HOOK_SECRET = "whsec-abcdefghijklmnop"


def create(user: Any, kind: str, config: dict[str, Any], name: str | None = None) -> Any:
    return user.post(
        "/api/v1/channels", json={"name": name or kind, "type": kind, "config": config}
    )


def created(user: Any, kind: str, config: dict[str, Any], name: str | None = None) -> dict:
    r = create(user, kind, config, name)
    assert r.status_code == 201, r.json
    return r.json["data"]


def test_it_creates_each_type_and_shows_secrets_only_as_hints(alice: Any) -> None:
    secrets = {
        "slack": ({"webhook_url": SLACK}, "webhook_url"),
        "webhook": (
            {"url": "https://hooks.example.com/in/tok3n-value", "secret": HOOK_SECRET},
            "url",
        ),
        "pagerduty": ({"routing_key": "R0UTING0KEY0123456789wxyz"}, "routing_key"),
        "apprise": ({"url": "tgram://123456789:AAHsecretbottoken/987654321"}, "url"),
    }
    for kind, (config, field) in secrets.items():
        data = created(alice, kind, config)
        assert data["config"][field] == "****" + config[field][-4:]
        for raw in config.values():
            assert raw not in json.dumps(data)
    listed = alice.get("/api/v1/channels").json["data"]
    assert [c["type"] for c in listed] == list(secrets)
    dumped = json.dumps(listed)
    for config, _ in secrets.values():
        for raw in config.values():
            assert raw not in dumped
    webhook = listed[1]
    assert webhook["config"] == {
        "url": "****alue",
        "method": "POST",
        "headers": {},
        "secret": "****mnop",
    }
    pd = alice.get(f"/api/v1/channels/{listed[2]['id']}").json["data"]
    assert pd["config"]["events_url"] == "https://events.pagerduty.com/v2/enqueue"


def test_email_channel_and_its_shape(alice: Any, clock: Any) -> None:
    data = created(alice, "email", {"recipients": ["ops@example.com", "ops@example.com"]}, "ops")
    assert data == {
        "id": data["id"],
        "team_id": alice.user.personal_team_id,
        "name": "ops",
        "type": "email",
        "config": {"recipients": ["ops@example.com"]},
        "monitor_ids": [],
        "created_at": "2026-11-22T12:00:00Z",
        "updated_at": "2026-11-22T12:00:00Z",
    }


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "x", "type": "sms", "config": {}}, "type"),
        ({"name": "", "type": "email", "config": {"recipients": ["a@b.c"]}}, "name"),
        ({"name": "x", "type": "email", "config": {"recipients": []}}, "config.recipients"),
        (
            {"name": "x", "type": "slack", "config": {"webhook_url": "http://x.example/"}},
            "config.webhook_url",
        ),
        ({"name": "x", "type": "webhook", "config": {}}, "config.url"),
        ({"name": "x", "type": "webhook", "config": {"url": "ftp://x.example/"}}, "config.url"),
        (
            {"name": "x", "type": "webhook", "config": {"url": "http://169.254.169.254/"}},
            "config.url",
        ),
        (
            {
                "name": "x",
                "type": "webhook",
                "config": {"url": "http://x.example/", "method": "GET"},
            },
            "config.method",
        ),
        (
            {
                "name": "x",
                "type": "webhook",
                "config": {"url": "http://x.example/", "headers": {"Idempotency-Key": "1"}},
            },
            "config.headers",
        ),
        (
            {
                "name": "x",
                "type": "webhook",
                "config": {"url": "http://x.example/", "colour": "red"},
            },
            "config.colour",
        ),
        (
            {"name": "x", "type": "pagerduty", "config": {"routing_key": "has space"}},
            "config.routing_key",
        ),
        ({"name": "x", "type": "apprise", "config": {"url": "bogus://nothing"}}, "config.url"),
        (
            {"name": "x", "type": "apprise", "config": {"url": "json://169.254.169.254/"}},
            "config.url",
        ),
        (
            {"name": "x", "type": "apprise", "config": {"url": "hassio://169.254.169.254/tok"}},
            "config.url",
        ),
        (
            {"name": "x", "type": "apprise", "config": {"url": "hassio://[::ffff:a9fe:a9fe]/t"}},
            "config.url",
        ),
        (
            {"name": "x", "type": "apprise", "config": {"url": "mailto://u:p@example.com"}},
            "config.url",
        ),
        (
            {"name": "x", "type": "apprise", "config": {"url": "rsyslog://10.0.0.5"}},
            "config.url",
        ),
        (
            {"name": "x", "type": "apprise", "config": {"url": "irc://10.0.0.5/#ops"}},
            "config.url",
        ),
        (
            {
                "name": "x",
                "type": "apprise",
                "config": {"url": "discord://4174216298/JHMHI8qBe7bk2Zw?template=/etc/passwd"},
            },
            "config.url",
        ),
        ({"name": "x", "type": "email"}, "config"),
    ],
)
def test_invalid_bodies_name_the_field(alice: Any, body: dict, field: str) -> None:
    r = alice.post("/api/v1/channels", json=body)
    assert r.status_code == 400, r.json
    assert r.json["error"]["code"] == "VALIDATION_ERROR"
    assert field in r.json["error"]["details"], r.json


@pytest.mark.parametrize(
    "url",
    [
        "discord://4174216298/JHMHI8qBe7bk2ZwO5U711o3dV_js",
        "tgram://123456789:abcdefg_hijklmnop/-1001234567",
        "workflows://prod-01.westus.logic.azure.com:443/abcd1234/signature",
        "rockets://user:pass@rocket.example.com/#ops",
        "pover://u1234567890abcdefghijklmnopq@a1234567890abcdefghijklmnopq",
        "ntfys://ops-alerts",
        "ntfy://12345",  # a topic at ntfy.sh, though inet_aton would read an address
        "gotify://gotify.example.com/AbCdEfGhIjKlMnO",
        "matrixs://bot:password@matrix.example.com/#ops:example.com",
        "mmosts://mattermost.example.com/abcdefghijklmnopqrstuvwxyz",
        "slack://TokenA/TokenB/TokenC/#ops",
    ],
)
def test_apprise_schemes_are_accepted_as_configuration(alice: Any, url: str) -> None:
    # Parsed by Apprise only: nothing is resolved or sent on create.
    data = created(alice, "apprise", {"url": url})
    assert url not in json.dumps(data)


class TestSocketLevelAppriseAllowed:
    @pytest.fixture
    def settings_env(self, settings_env: dict[str, str]) -> dict[str, str]:
        return {
            **settings_env,
            "UPTIME_APPRISE_ALLOW": "mailto,rsyslog",
            "UPTIME_BLOCK_PRIVATE_TARGETS": "true",
        }

    def test_an_allowed_scheme_is_accepted_and_its_hosts_judged(self, alice: Any) -> None:
        created(alice, "apprise", {"url": "mailto://user:pass@example.com"}, "mail")
        created(alice, "apprise", {"url": "rsyslog://logs.example.com"}, "syslog")
        for url in (
            "mailto://user:pass@example.com?smtp=10.0.0.5",
            "rsyslog://10.0.0.5",
            "irc://irc.example.com/#ops",  # not in the list
        ):
            r = create(alice, "apprise", {"url": url}, "refused")
            assert r.status_code == 400 and "config.url" in r.json["error"]["details"], url


class TestPrivateTargetsBlocked:
    @pytest.fixture
    def settings_env(self, settings_env: dict[str, str]) -> dict[str, str]:
        return {**settings_env, "UPTIME_BLOCK_PRIVATE_TARGETS": "true"}

    @pytest.mark.parametrize(
        "url",
        [
            "hassio://{host}:{port}/accesstoken",
            "enigma2://{host}:{port}",
            "bark://{host}:{port}/device",
            "toot://token@{host}:{port}",
        ],
    )
    def test_a_user_host_scheme_cannot_reach_loopback(self, alice: Any, url: str) -> None:
        with serve() as server:
            literal = create(alice, "apprise", {"url": url.format(host="127.0.0.1", port=1)})
            assert literal.status_code == 400
            assert "config.url" in literal.json["error"]["details"]
            # A name is judged when the message is sent: the test refuses it.
            channel = created(
                alice, "apprise", {"url": url.format(host="localhost", port=server.port)}
            )
            r = alice.post(f"/api/v1/channels/{channel['id']}/test")
        assert r.json["data"]["ok"] is False
        assert r.json["data"]["error"] == "apprise host localhost: target address not allowed"
        assert server.requests == []


def test_a_user_host_scheme_reaches_a_loopback_server_by_default(alice: Any) -> None:
    with serve() as home_assistant:
        url = f"hassio://localhost:{home_assistant.port}/accesstoken"
        channel = created(alice, "apprise", {"url": url})
        r = alice.post(f"/api/v1/channels/{channel['id']}/test")
    assert r.json["data"] == r.json["data"] | {"ok": True, "error": None}
    assert [q.path for q in home_assistant.requests] == [
        "/api/services/persistent_notification/create"
    ]


def test_names_are_unique_per_user(alice: Any, bob: Any) -> None:
    created(alice, "email", {"recipients": ["a@example.com"]}, "ops")
    r = create(alice, "email", {"recipients": ["a@example.com"]}, "ops")
    assert r.status_code == 400 and "name" in r.json["error"]["details"]
    created(bob, "email", {"recipients": ["b@example.com"]}, "ops")


def test_an_edit_keeps_omitted_secrets_and_hints_sent_back(alice: Any, db: Any) -> None:
    from uptime_server.models import Channel

    data = created(
        alice, "webhook", {"url": "https://hooks.example.com/in/tok3n-value", "secret": HOOK_SECRET}
    )
    path = f"/api/v1/channels/{data['id']}"
    # Omitted secrets stay; the hint sent back (a GET, edited, PUT back) stays too.
    r = alice.put(path, json={"name": "renamed", "config": {"method": "PATCH"}})
    assert r.status_code == 200, r.json
    r = alice.put(path, json={"config": r.json["data"]["config"] | {"body_down": "{status}"}})
    assert r.status_code == 200, r.json
    stored = Channel.get_by_id(data["id"])
    assert stored.name == "renamed"
    assert stored.config == {
        "url": "https://hooks.example.com/in/tok3n-value",
        "method": "PATCH",
        "headers": {},
        "body_down": "{status}",
        "secret": HOOK_SECRET,
    }
    # A new value replaces it; null removes an optional field.
    r = alice.put(path, json={"config": {"secret": None, "url": "https://other.example.com/x1234"}})
    assert r.json["data"]["config"]["url"] == "****1234"
    assert "secret" not in Channel.get_by_id(data["id"]).config
    # The type is fixed; a required field cannot be removed.
    r = alice.put(path, json={"type": "slack"})
    assert r.status_code == 400 and "type" in r.json["error"]["details"]
    r = alice.put(path, json={"config": {"url": None}})
    assert r.status_code == 400 and "config.url" in r.json["error"]["details"]


def test_a_webhook_s_header_values_are_secrets_shown_as_hints(alice: Any, db: Any) -> None:
    from uptime_server.models import Channel

    headers = {"Authorization": "Bearer hdr-t0ken-7f3a9c1e", "X-Team": "ops"}
    data = created(alice, "webhook", {"url": "https://hooks.example.com/in", "headers": headers})
    shown = {"Authorization": "****9c1e", "X-Team": "****"}
    path = f"/api/v1/channels/{data['id']}"
    assert data["config"]["headers"] == shown
    assert alice.get(path).json["data"]["config"]["headers"] == shown
    assert alice.get("/api/v1/channels").json["data"][0]["config"]["headers"] == shown
    # Sent back as read (hints), the values stay; a new value replaces its header only.
    r = alice.put(path, json={"config": {"headers": shown | {"X-Team": "sre"}}})
    assert r.status_code == 200, r.json
    assert r.json["data"]["config"]["headers"] == shown
    assert Channel.get_by_id(data["id"]).config["headers"] == headers | {"X-Team": "sre"}
    assert "hdr-t0ken" not in json.dumps(r.json)


def test_repointing_pagerduty_needs_its_routing_key_again(alice: Any, db: Any) -> None:
    from uptime_server.models import Channel

    key = "R0UTING0KEY0123456789wxyz"
    with serve() as pagerduty, serve() as elsewhere:
        data = created(alice, "pagerduty", {"routing_key": key, "events_url": pagerduty.url})
        path = f"/api/v1/channels/{data['id']}"
        for config in (
            {"events_url": elsewhere.url},
            {"events_url": elsewhere.url, "routing_key": data["config"]["routing_key"]},
        ):
            r = alice.put(path, json={"config": config})
            assert r.status_code == 400 and r.json["error"]["code"] == "VALIDATION_ERROR"
            assert list(r.json["error"]["details"]) == ["config.routing_key"]
        assert Channel.get_by_id(data["id"]).config["events_url"] == pagerduty.url
        assert alice.post(f"{path}/test").json["data"]["ok"] is True
        assert elsewhere.requests == []  # the key never went to the new address
        assert [r.json()["routing_key"] for r in pagerduty.requests] == [key, key]

        r = alice.put(path, json={"config": {"events_url": elsewhere.url, "routing_key": key}})
        assert r.status_code == 200, r.json
        # The same address again (or another field) needs nothing sent again.
        r = alice.put(path, json={"name": "pd", "config": {"events_url": elsewhere.url}})
        assert r.status_code == 200, r.json


def test_repointing_a_webhook_needs_its_secret_and_headers_again(alice: Any, db: Any) -> None:
    from uptime_server.models import Channel

    headers = {"Authorization": "Bearer hdr-t0ken-7f3a9c1e"}
    config = {"url": "https://hooks.example.com/in/abc", "secret": HOOK_SECRET, "headers": headers}
    data = created(alice, "webhook", config)
    path = f"/api/v1/channels/{data['id']}"
    new_url = "https://other.example.com/in/xyz"
    r = alice.put(path, json={"config": {"url": new_url}})
    assert r.status_code == 400 and r.json["error"]["code"] == "VALIDATION_ERROR"
    assert sorted(r.json["error"]["details"]) == ["config.headers", "config.secret"]
    # Hints are not the secrets: the same answer.
    r = alice.put(path, json={"config": data["config"] | {"url": new_url}})
    assert sorted(r.json["error"]["details"]) == ["config.headers", "config.secret"]
    assert Channel.get_by_id(data["id"]).config == config | {"method": "POST"}
    # Sent again, or removed: the channel moves.
    r = alice.put(path, json={"config": {"url": new_url, "secret": None, "headers": headers}})
    assert r.status_code == 200, r.json
    assert Channel.get_by_id(data["id"]).config == {
        "url": new_url,
        "method": "POST",
        "headers": headers,
    }


def test_monitors_list_channels_by_id_and_a_delete_takes_it_out(
    alice: Any, make_monitor: Any
) -> None:
    monitor = make_monitor("api")
    channel = created(alice, "email", {"recipients": ["ops@example.com"]})
    alerts = f"/api/v1/monitors/{monitor.id}/alerts"
    r = alice.put(alerts, json={"channel_ids": [channel["id"], channel["id"]]})
    assert r.status_code == 200 and r.json["data"]["channel_ids"] == [channel["id"]]
    assert alice.get(f"/api/v1/channels/{channel['id']}").json["data"]["monitor_ids"] == [
        monitor.id
    ]
    r = alice.put(alerts, json={"channel_ids": [channel["id"] + 100]})
    assert r.status_code == 400 and "channel_ids" in r.json["error"]["details"]

    r = alice.delete(f"/api/v1/channels/{channel['id']}")
    assert r.status_code == 200 and r.json == {"message": "Channel deleted"}
    assert alice.get(alerts).json["data"]["channel_ids"] == []
    assert alice.get(f"/api/v1/channels/{channel['id']}").status_code == 404


def test_another_users_channels_are_not_found_and_not_usable(
    alice: Any, bob: Any, make_monitor: Any
) -> None:
    theirs = created(alice, "webhook", {"url": "https://hooks.example.com/alice-only"})
    path = f"/api/v1/channels/{theirs['id']}"
    for r in (
        bob.get(path),
        bob.put(path, json={"name": "mine"}),
        bob.delete(path),
        bob.post(f"{path}/test"),
    ):
        assert r.status_code == 404 and r.json["error"]["code"] == "CHANNEL_NOT_FOUND"
    assert bob.get("/api/v1/channels").json["data"] == []
    assert alice.get(path).json["data"]["name"] == "webhook"

    bobs = make_monitor("bob-api", owner=bob)
    alerts = f"/api/v1/monitors/{bobs.id}/alerts"
    used = bob.put(alerts, json={"channel_ids": [theirs["id"]]})
    unknown = bob.put(alerts, json={"channel_ids": [theirs["id"] + 1000]})
    assert used.status_code == unknown.status_code == 400
    # The same words as for an id that does not exist: nothing leaks.
    assert used.json["error"]["details"]["channel_ids"] == [
        f"no channel of yours has id {theirs['id']}"
    ]
    assert bob.get(alerts).json["data"]["channel_ids"] == []


def test_test_sends_a_signed_test_message_and_answers_with_the_result(alice: Any) -> None:
    with serve(Receiver(secret=HOOK_SECRET)) as hook:
        data = created(alice, "webhook", {"url": f"{hook.url}/in", "secret": HOOK_SECRET})
        r = alice.post(f"/api/v1/channels/{data['id']}/test")
    assert r.status_code == 200
    assert r.json["data"] == {
        "channel_id": data["id"],
        "type": "webhook",
        "ok": True,
        "error": None,
        "sent_at": "2026-11-22T12:00:00Z",
    }
    [got] = hook.accepted
    assert got.json()["status"] == "TEST" and got.json()["test"] is True
    assert got.headers["Idempotency-Key"].startswith(f"<uptime-n0-c{data['id']}-test-")


def test_a_failed_test_is_ok_false_with_the_reason(alice: Any) -> None:
    closed_port = free_closed_port()
    data = created(
        alice, "pagerduty", {"routing_key": "abc", "events_url": f"http://127.0.0.1:{closed_port}/"}
    )
    r = alice.post(f"/api/v1/channels/{data['id']}/test")
    assert r.status_code == 200
    assert r.json["data"]["ok"] is False
    assert r.json["data"]["error"] == "PagerDuty 127.0.0.1: connection refused"


@pytest.mark.parametrize("status", [500, 404])
def test_a_failed_test_says_the_status_and_never_the_body(alice: Any, status: int) -> None:
    leaky = Receiver(status=status, body=b"db_password=hunter2&api_key=k-123")
    with serve(leaky) as internal:
        hook = created(alice, "webhook", {"url": f"{internal.url}/hook"}, "hook")
        pd = created(alice, "pagerduty", {"routing_key": "K" * 32, "events_url": internal.url})
        results = [alice.post(f"/api/v1/channels/{c['id']}/test").json["data"] for c in (hook, pd)]
    assert [(r["ok"], r["error"]) for r in results] == [
        (False, f"webhook 127.0.0.1 answered {status}"),
        (False, f"PagerDuty 127.0.0.1 answered {status}"),
    ]


@sqlite_only
def test_email_tests_are_limited_to_five_per_user_a_minute(alice: Any, bob: Any) -> None:
    ops = created(alice, "email", {"recipients": ["ops@example.com"]}, "ops")
    dev = created(alice, "email", {"recipients": ["dev@example.com"]}, "dev")
    hook = created(alice, "webhook", {"url": "http://127.0.0.1:9/in"}, "hook")
    tests = [alice.post(f"/api/v1/channels/{c['id']}/test") for c in (ops, dev, ops, dev, ops)]
    assert [r.json["data"]["ok"] for r in tests] == [True] * 5  # .eml files: no SMTP host
    # The sixth, of either email channel: refused before anything is sent.
    r = alice.post(f"/api/v1/channels/{dev['id']}/test")
    assert_error(r, 429, "RATE_LIMIT_EXCEEDED")
    assert 0 < int(r.headers["Retry-After"]) <= 60
    assert r.headers["X-RateLimit-Limit"] == "5"
    # Other channel types, and other users, are not held by it.
    assert alice.post(f"/api/v1/channels/{hook['id']}/test").status_code == 200
    theirs = created(bob, "email", {"recipients": ["bob@example.com"]}, "bobs")
    assert bob.post(f"/api/v1/channels/{theirs['id']}/test").json["data"]["ok"] is True


class TestEmailTestLimitOff:
    @pytest.fixture
    def settings_env(self, settings_env: dict[str, str]) -> dict[str, str]:
        return {**settings_env, "UPTIME_EMAIL_TEST_RATE_LIMIT": "off"}

    @sqlite_only
    def test_it_can_be_turned_off(self, alice: Any) -> None:
        ops = created(alice, "email", {"recipients": ["ops@example.com"]}, "ops")
        statuses = {alice.post(f"/api/v1/channels/{ops['id']}/test").status_code for _ in range(7)}
        assert statuses == {200}


def test_a_pagerduty_test_opens_and_closes_an_incident(alice: Any) -> None:
    with serve() as pagerduty:
        data = created(alice, "pagerduty", {"routing_key": "K" * 32, "events_url": pagerduty.url})
        assert alice.post(f"/api/v1/channels/{data['id']}/test").json["data"]["ok"] is True
    trigger, resolve = (r.json() for r in pagerduty.accepted)
    assert (trigger["event_action"], resolve["event_action"]) == ("trigger", "resolve")
    assert trigger["dedup_key"] == resolve["dedup_key"]
    assert trigger["payload"]["severity"] == "info"


def test_secrets_are_not_logged_by_the_api(alice: Any, caplog: Any) -> None:
    closed_port = free_closed_port()
    caplog.set_level(logging.DEBUG)
    raw = "https://hooks.example.com/in/very-secret-token-1"
    data = created(alice, "webhook", {"url": raw, "secret": HOOK_SECRET})
    alice.get(f"/api/v1/channels/{data['id']}")
    moved = alice.put(
        f"/api/v1/channels/{data['id']}",
        json={"config": {"url": f"http://127.0.0.1:{closed_port}/tok-zz", "secret": HOOK_SECRET}},
    )
    assert moved.status_code == 200, moved.json
    alice.post(f"/api/v1/channels/{data['id']}/test")
    assert caplog.records  # the requests were logged...
    for secret in ("very-secret-token-1", HOOK_SECRET, "tok-zz"):
        assert secret not in caplog.text  # ...without their secrets
