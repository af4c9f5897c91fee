"""At DEBUG, secrets stay out of every log record (issue: peewee logged SQL parameters).

One user journey with the root logger at DEBUG, as UPTIME_LOG_LEVEL=DEBUG
sets it: a monitor created with a password in its URL and an API key header,
a Slack webhook set, a failing check run, and the Slack delivery.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tests.notify.receivers import serve
from tests.notify.world import Target
from uptime_server.models import Outbox
from uptime_server.notify.delivery import DeliveryLoop

URL_PASSWORD = "url-pw-5up3rs3cret"
HEADER_SECRET = "hdr-key-7f3a9c1e"
WEBHOOK_TOKEN = "hooktoken0c2b44d1"


@pytest.fixture
def failing_target():
    target = Target(status=503).start()
    yield target
    target.stop()


def test_debug_logs_carry_no_secrets(
    alice, settings, clock, failing_target, tls_webhook_server, fake_dns, ca, tmp_path, caplog
):
    caplog.set_level(logging.DEBUG)
    fake_dns.answers["hooks.test"] = [["127.0.0.1"]]
    ca_file = Path(tmp_path / "ca.pem")
    ca.cert_pem.write_to_path(str(ca_file))
    delivering = settings.with_overrides(ca_bundle=str(ca_file))
    monitor_url = failing_target.url.replace("http://", f"http://watcher:{URL_PASSWORD}@")
    webhook = f"https://hooks.test:{tls_webhook_server.port}/services/T000/B000/{WEBHOOK_TOKEN}"

    created = alice.post(
        "/api/v1/monitors",
        json={
            "name": "api-prod",
            "url": monitor_url,
            "type": "http",
            "headers": {"X-Api-Key": HEADER_SECRET},
        },
    )
    assert created.status_code == 201, created.get_json()
    monitor_id = created.get_json()["data"]["id"]
    alerts = alice.put(
        f"/api/v1/monitors/{monitor_id}/alerts",
        json={"email_enabled": False, "slack_enabled": True, "slack_webhook_url": webhook},
    )
    assert alerts.status_code == 200, alerts.get_json()
    tested = alice.post(f"/api/v1/monitors/{monitor_id}/test")
    assert tested.get_json()["data"]["status"] == "offline"
    assert failing_target.hits == 1
    DeliveryLoop(delivering, clock=clock).loop(clock.now())

    assert [row.status for row in Outbox.select()] == ["sent"]
    assert len(tls_webhook_server.requests) == 1
    assert logging.getLogger().getEffectiveLevel() == logging.DEBUG
    secrets = (URL_PASSWORD, HEADER_SECRET, WEBHOOK_TOKEN, alice.token)
    for record in caplog.records:
        text = record.getMessage() + (record.exc_text or "")
        leaked = [s for s in secrets if s in text]
        assert not leaked, f"{record.name} logged a secret at {record.levelname}: {text[:300]}"
    assert not [s for s in secrets if s in caplog.text]


def test_debug_logs_carry_no_token_of_a_url_path(alice, caplog):
    # Discord, Slack and Telegram keep their tokens in the path; so does this json:// hook.
    caplog.set_level(logging.DEBUG)
    token = "pathtoken-3c9e11aa"
    with serve() as hook:
        created = alice.post(
            "/api/v1/channels",
            json={
                "name": "chat",
                "type": "apprise",
                "config": {"url": f"json://127.0.0.1:{hook.port}/hooks/{token}"},
            },
        )
        assert created.status_code == 201, created.get_json()
        tested = alice.post(f"/api/v1/channels/{created.get_json()['data']['id']}/test")
    assert tested.get_json()["data"]["ok"] is True
    assert [r.path for r in hook.requests] == [f"/hooks/{token}"]
    assert logging.getLogger().getEffectiveLevel() == logging.DEBUG
    assert caplog.records
    for record in caplog.records:
        text = record.getMessage() + (record.exc_text or "")
        assert token not in text, f"{record.name} logged the path at {record.levelname}: {text}"
