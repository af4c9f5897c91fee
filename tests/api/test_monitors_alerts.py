"""GET/PUT /api/v1/monitors/{id}/alerts."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.shapes import assert_error, create, sqlite_only
from uptime_server.models import AlertSettings

URL = "/api/v1/monitors"
DEFAULTS = {
    "email_enabled": True,
    "email_recipients": ["alice@example.com"],
    "slack_enabled": False,
    "slack_webhook_url": None,
    "alert_on_recovery": True,
    "alert_threshold": 1,
    "cert_expiry_days": [14, 7, 3, 1],
    "recovery_threshold": 1,
    "reminder_interval": None,
    "flap_threshold": 6,
    "flap_window": 3600,
    "channel_ids": [],
    "min_failed_locations": None,
    "effective_min_failed_locations": 1,
}


def _alerts(user: Any, mid: int) -> dict[str, Any]:
    response = user.get(f"{URL}/{mid}/alerts")
    assert response.status_code == 200
    return response.get_json()["data"]


def test_it_starts_with_the_defaults(alice: Any) -> None:
    assert _alerts(alice, create(alice)) == DEFAULTS


def test_it_changes_a_subset(alice: Any) -> None:
    mid = create(alice)
    response = alice.put(f"{URL}/{mid}/alerts", json={"alert_threshold": 3})
    assert response.status_code == 200
    assert response.get_json()["data"] == {**DEFAULTS, "alert_threshold": 3}
    alice.put(f"{URL}/{mid}/alerts", json={"alert_on_recovery": False, "email_enabled": False})
    assert _alerts(alice, mid) == {
        **DEFAULTS,
        "alert_threshold": 3,
        "alert_on_recovery": False,
        "email_enabled": False,
    }


def test_it_keeps_recipients_and_falls_back_to_the_owner(alice: Any) -> None:
    mid = create(alice)
    recipients = ["ops@example.com", "oncall@example.org"]
    alice.put(f"{URL}/{mid}/alerts", json={"email_recipients": recipients})
    assert _alerts(alice, mid)["email_recipients"] == recipients
    # Stored empty: the owner's address is shown and used.
    alice.put(f"{URL}/{mid}/alerts", json={"email_recipients": []})
    assert _alerts(alice, mid)["email_recipients"] == ["alice@example.com"]
    assert AlertSettings.get_by_id(mid).email_recipients == []


def test_it_falls_back_to_each_owner(alice: Any, bob: Any) -> None:
    assert _alerts(bob, create(bob))["email_recipients"] == ["bob@example.com"]


def test_it_enables_slack_with_an_https_webhook(alice: Any) -> None:
    mid = create(alice)
    hook = "https://hooks.slack.com/services/T000/B000/XXXX"
    response = alice.put(
        f"{URL}/{mid}/alerts", json={"slack_enabled": True, "slack_webhook_url": hook}
    )
    assert response.status_code == 200
    assert response.get_json()["data"]["slack_webhook_url"] == hook
    # Turning it off again keeps the URL for later.
    alice.put(f"{URL}/{mid}/alerts", json={"slack_enabled": False})
    assert _alerts(alice, mid)["slack_webhook_url"] == hook


INVALID = [
    ({"alert_threshold": 0}, "alert_threshold"),
    ({"alert_threshold": 101}, "alert_threshold"),
    ({"alert_threshold": "3"}, "alert_threshold"),
    ({"email_enabled": "yes"}, "email_enabled"),
    ({"email_recipients": ["not-an-address"]}, "email_recipients"),
    ({"email_recipients": "ops@example.com"}, "email_recipients"),
    ({"email_recipients": [f"u{i}@example.com" for i in range(21)]}, "email_recipients"),
    ({"email_recipients": [""]}, "email_recipients"),
    ({"email_recipients": ["ops @example.com"]}, "email_recipients"),
    ({"email_recipients": ["ops@exa mple.com"]}, "email_recipients"),
    ({"email_recipients": ["ops@example.com\r\nBcc: all@example.com"]}, "email_recipients"),
    ({"email_recipients": ["ops@"]}, "email_recipients"),
    ({"email_recipients": ["@example.com"]}, "email_recipients"),
    ({"email_recipients": ["a@b@example.com"]}, "email_recipients"),
    ({"email_recipients": ["a..b@example.com"]}, "email_recipients"),
    ({"email_recipients": ["ops@-example.com"]}, "email_recipients"),
    ({"email_recipients": ["ops@example.com."]}, "email_recipients"),
    ({"email_recipients": ["ops@[10.0.0.1]"]}, "email_recipients"),
    ({"slack_enabled": True}, "slack_webhook_url"),
    ({"slack_enabled": True, "slack_webhook_url": "http://hooks.example/x"}, "slack_webhook_url"),
    ({"slack_webhook_url": "hooks.example/x"}, "slack_webhook_url"),
    ({"pagerduty": True}, "pagerduty"),
    ({"cert_expiry_days": [7, 7]}, "cert_expiry_days"),
    ({"cert_expiry_days": [0]}, "cert_expiry_days"),
    ({"cert_expiry_days": [366]}, "cert_expiry_days"),
    ({"cert_expiry_days": list(range(1, 12))}, "cert_expiry_days"),
    ({"cert_expiry_days": ["7"]}, "cert_expiry_days"),
    ({"cert_expiry_days": 7}, "cert_expiry_days"),
    ({"cert_expiry_days": None}, "cert_expiry_days"),
    ({"recovery_threshold": 0}, "recovery_threshold"),
    ({"recovery_threshold": 101}, "recovery_threshold"),
    ({"reminder_interval": 59}, "reminder_interval"),
    ({"reminder_interval": 7 * 86400 + 1}, "reminder_interval"),
    ({"reminder_interval": "30m"}, "reminder_interval"),
    ({"flap_threshold": 0}, "flap_threshold"),
    ({"flap_threshold": 101}, "flap_threshold"),
    ({"flap_window": 59}, "flap_window"),
    ({"flap_window": None}, "flap_window"),
    ({"flap_window": 86401}, "flap_window"),
]


@pytest.mark.parametrize(("change", "field"), INVALID)
@sqlite_only
def test_it_refuses_invalid_settings(alice: Any, change: dict[str, Any], field: str) -> None:
    mid = create(alice)
    response = alice.put(f"{URL}/{mid}/alerts", json=change)
    assert_error(response, 400, "VALIDATION_ERROR", field)
    assert _alerts(alice, mid) == DEFAULTS


def test_it_accepts_the_bounds(alice: Any) -> None:
    mid = create(alice)
    for threshold in (1, 100):
        response = alice.put(f"{URL}/{mid}/alerts", json={"alert_threshold": threshold})
        assert response.get_json()["data"]["alert_threshold"] == threshold
    twenty = [f"u{i}@example.com" for i in range(20)]
    response = alice.put(f"{URL}/{mid}/alerts", json={"email_recipients": twenty})
    assert response.get_json()["data"]["email_recipients"] == twenty


def test_it_stores_cert_expiry_thresholds_largest_first(alice: Any, bob: Any) -> None:
    mid = create(alice)
    response = alice.put(f"{URL}/{mid}/alerts", json={"cert_expiry_days": [1, 30, 365]})
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["data"]["cert_expiry_days"] == [365, 30, 1]
    assert AlertSettings.get_by_id(mid).cert_expiry_days == [365, 30, 1]
    ten = list(range(1, 11))
    response = alice.put(f"{URL}/{mid}/alerts", json={"cert_expiry_days": ten})
    assert response.get_json()["data"]["cert_expiry_days"] == ten[::-1]
    # Off, and bob's monitor keeps its defaults.
    bobs = create(bob)
    assert alice.put(f"{URL}/{bobs}/alerts", json={"cert_expiry_days": []}).status_code == 404
    alice.put(f"{URL}/{mid}/alerts", json={"cert_expiry_days": []})
    assert _alerts(alice, mid)["cert_expiry_days"] == []
    assert _alerts(bob, bobs)["cert_expiry_days"] == [14, 7, 3, 1]


def test_it_sets_and_turns_off_noise_control(alice: Any) -> None:
    mid = create(alice)
    noise = {
        "recovery_threshold": 3,
        "reminder_interval": 1800,
        "flap_threshold": 4,
        "flap_window": 600,
    }
    response = alice.put(f"{URL}/{mid}/alerts", json=noise)
    assert response.get_json()["data"] == {**DEFAULTS, **noise}
    off = {"reminder_interval": None, "flap_threshold": None}
    alice.put(f"{URL}/{mid}/alerts", json=off)
    assert _alerts(alice, mid) == {**DEFAULTS, **noise, **off}


def test_it_reads_defaults_when_the_row_is_missing(alice: Any) -> None:
    mid = create(alice)
    AlertSettings.delete().where(AlertSettings.monitor == mid).execute()
    assert _alerts(alice, mid) == DEFAULTS
    response = alice.put(f"{URL}/{mid}/alerts", json={"alert_threshold": 2})
    assert response.get_json()["data"] == {**DEFAULTS, "alert_threshold": 2}
    assert AlertSettings.get_by_id(mid).alert_threshold == 2


@sqlite_only
def test_it_wants_a_json_object(alice: Any) -> None:
    mid = create(alice)
    assert_error(alice.put(f"{URL}/{mid}/alerts", json=[1]), 400, "VALIDATION_ERROR", "body")
    assert_error(alice.put(f"{URL}/{mid}/alerts"), 400, "INVALID_JSON")


def test_it_answers_404_for_an_unknown_monitor(alice: Any) -> None:
    assert_error(alice.get(f"{URL}/77/alerts"), 404, "MONITOR_NOT_FOUND")
    assert_error(alice.put(f"{URL}/77/alerts", json={}), 404, "MONITOR_NOT_FOUND")


# Addresses of a self-hosted network: no public TLD, special-use names.
SELF_HOSTED = [
    "root@localhost",
    "ops@host.local",
    "admin@corp.internal",
    "uptime@localhost",
    "oncall+db@mail.corp.internal",
    "o'brien@intranet",
    "josé@bücher.example",
]


def test_it_accepts_the_addresses_of_a_self_hosted_network(alice: Any) -> None:
    mid = create(alice)
    response = alice.put(f"{URL}/{mid}/alerts", json={"email_recipients": SELF_HOSTED})
    assert response.status_code == 200, response.get_json()
    assert _alerts(alice, mid)["email_recipients"] == SELF_HOSTED


@sqlite_only
def test_it_lowercases_the_domain_and_keeps_one_of_each(alice: Any) -> None:
    mid = create(alice)
    given = ["Root@LocalHost", "Root@localhost", "root@localhost"]
    response = alice.put(f"{URL}/{mid}/alerts", json={"email_recipients": given})
    assert response.get_json()["data"]["email_recipients"] == ["Root@localhost", "root@localhost"]


@sqlite_only
def test_it_names_every_bad_field_at_once(alice: Any) -> None:
    mid = create(alice)
    change = {
        "slack_enabled": True,
        "alert_threshold": 0,
        "email_recipients": ["no-at", "ok@example.com", "two words@example.com"],
    }
    response = alice.put(f"{URL}/{mid}/alerts", json=change)
    fields = {"slack_webhook_url", "alert_threshold", "email_recipients"}
    error = assert_error(response, 400, "VALIDATION_ERROR", *fields)
    assert set(error["details"]) == fields
    [message] = error["details"]["email_recipients"]
    assert "'no-at'" in message and "'two words@example.com'" in message
    assert "'ok@example.com'" not in message
    assert _alerts(alice, mid) == DEFAULTS
