"""The delivery loop: claims, leases, retries, failures, channels, cron mode.

Outbox rows come from the Recorder (synthetic check runs: these tests are
about delivery, not probing); messages go to real loopback servers.
"""

from __future__ import annotations

import functools
import logging
import threading
from dataclasses import replace
from datetime import timedelta

import pytest
from typer.testing import CliRunner

from tests.notify.world import make_monitor, messages, parse, subjects, with_smtp
from tests.outcomes import outcome
from tests.threads import run_at_once
from uptime_server.daemon.process import DaemonOptions, default_components
from uptime_server.engine.recorder import Recorder
from uptime_server.models import Notification, Outbox
from uptime_server.notify import delivery as delivery_mod
from uptime_server.notify.delivery import MAX_AGE, DeliveryLoop, deliver_due


def middle() -> float:
    return 0.5  # no jitter: backoff delays are exactly 30, 60, 120 s ...


@pytest.fixture
def monitor(db, alice, settings, clock):
    return make_monitor(alice.user, settings, clock)


@pytest.fixture
def fail(settings, clock):
    recorder = Recorder(settings)

    def run(monitor, passed=False, **kw):
        recorder.record([outcome(monitor, clock, passed, **kw)], now=clock.now())

    return run


@pytest.fixture
def smtp_loop(settings, clock, smtp_server):
    return DeliveryLoop(with_smtp(settings, smtp_server.port), clock=clock, rng=middle)


def test_a_due_row_is_sent_once_and_marked(monitor, fail, smtp_loop, smtp_server, clock):
    fail(monitor)
    assert smtp_loop.loop(clock.now()) == delivery_mod.IDLE_POLL
    [row] = Outbox.select()
    assert (row.status, row.sent_at, row.attempts, row.lease_owner) == (
        "sent",
        clock.now(),
        1,
        None,
    )
    assert Notification.get().email_sent_at == clock.now()
    [msg] = messages(smtp_server.handler)
    assert msg["Message-ID"] == row.message_id
    assert msg["From"] == "uptime@example.com"
    clock.advance(hours=1)
    smtp_loop.loop(clock.now())
    assert len(smtp_server.handler.received) == 1


def test_451_is_retried_with_backoff_then_delivered(
    monitor, fail, smtp_loop, smtp_server, clock, caplog
):
    smtp_server.handler.rcpt_reply = "451 4.3.0 try again later"
    fail(monitor)
    start = clock.now()
    for delay in (30, 60, 120):
        smtp_loop.loop(clock.now())
        row = Outbox.get()
        assert row.status == "pending" and "451" in row.last_error
        assert row.next_attempt_at == clock.now() + timedelta(seconds=delay)
        clock.advance(delay - 1)
        smtp_loop.loop(clock.now())  # not due yet: no attempt
        assert Outbox.get().attempts == row.attempts
        clock.advance(1)
    assert Outbox.get().attempts == 3
    assert Notification.get().email_sent_at is None
    smtp_server.handler.rcpt_reply = None
    smtp_loop.loop(clock.now())
    assert subjects(smtp_server.handler) == ["[Uptime] DOWN: api-prod"]
    row = Outbox.get()
    assert (row.status, row.attempts, row.last_error) == ("sent", 4, None)
    assert Notification.get().email_sent_at == start + timedelta(seconds=210)
    assert any("retrying at" in r.getMessage() for r in caplog.records)


def test_550_is_recorded_as_failed_and_never_retried(
    monitor, fail, smtp_loop, smtp_server, clock, caplog
):
    smtp_server.handler.data_reply = "550 5.7.1 message rejected"
    fail(monitor)
    smtp_loop.loop(clock.now())
    row = Outbox.get()
    assert (row.status, row.attempts, row.lease_owner) == ("failed", 1, None)
    assert "550 5.7.1 message rejected" in row.last_error
    assert any(
        r.levelno == logging.ERROR and "failed permanently" in r.getMessage()
        for r in caplog.records
    )
    smtp_server.handler.data_reply = None
    for _ in range(3):
        clock.advance(days=2)
        smtp_loop.loop(clock.now())
    assert Outbox.get().attempts == 1
    assert smtp_server.handler.received == []
    assert Notification.get().email_sent_at is None


def test_retry_after_is_honoured(monitor, fail, settings, clock, webhook_server):
    webhook_server.status = 429
    webhook_server.headers = {"Retry-After": "600"}
    _slack_only(monitor, webhook_server)
    fail(monitor)
    DeliveryLoop(settings, clock=clock, rng=middle).loop(clock.now())
    row = Outbox.get()
    assert row.next_attempt_at == clock.now() + timedelta(seconds=600)
    assert "429" in row.last_error


def test_a_message_undeliverable_for_days_is_given_up(monitor, fail, settings, clock, closed_port):
    fail(monitor)
    loop = DeliveryLoop(with_smtp(settings, closed_port), clock=clock, rng=middle)
    loop.loop(clock.now())
    clock.advance(MAX_AGE.total_seconds())
    loop.loop(clock.now())
    row = Outbox.get()
    assert row.status == "failed" and row.last_error.startswith("gave up after 2 attempts")


def test_a_restart_picks_up_where_the_last_process_stopped(
    monitor, fail, settings, smtp_server, clock, closed_port
):
    fail(monitor)
    DeliveryLoop(with_smtp(settings, closed_port), clock=clock, rng=middle).loop(clock.now())
    clock.advance(30)
    fresh = DeliveryLoop(with_smtp(settings, smtp_server.port), clock=clock)
    fresh.loop(clock.now())
    assert subjects(smtp_server.handler) == ["[Uptime] DOWN: api-prod"]


def test_a_leased_row_waits_for_its_lease_to_expire(
    monitor, fail, smtp_loop, smtp_server, settings, clock
):
    fail(monitor)
    # Another (crashed) process claimed the row and never finished it.
    lease_end = clock.now() + timedelta(seconds=settings.delivery_lease_seconds)
    Outbox.update(lease_owner="dead:1:x", lease_expires_at=lease_end).execute()
    smtp_loop.loop(clock.now())
    assert smtp_server.handler.received == []
    clock.set(lease_end)
    smtp_loop.loop(clock.now())
    assert len(smtp_server.handler.received) == 1


def test_a_down_held_back_by_an_outage_is_sent_before_its_up(
    monitor, fail, settings, clock, smtp_server, closed_port
):
    fail(monitor)
    DeliveryLoop(with_smtp(settings, closed_port), clock=clock, rng=middle).loop(clock.now())
    clock.advance(10)
    fail(monitor, passed=True)  # the UP row is due now, the DOWN row in 20 s
    loop = DeliveryLoop(with_smtp(settings, smtp_server.port), clock=clock)
    loop.loop(clock.now())
    assert smtp_server.handler.received == []
    clock.advance(20)
    loop.loop(clock.now())
    assert subjects(smtp_server.handler) == ["[Uptime] DOWN: api-prod", "[Uptime] UP: api-prod"]


def test_two_delivery_loops_never_send_one_row_twice(db, alice, settings, clock, smtp_server, fail):
    for i in range(8):
        fail(make_monitor(alice.user, settings, clock, name=f"svc-{i}"))
    loops = [
        DeliveryLoop(with_smtp(settings, smtp_server.port), clock=clock, owner=f"p{i}", batch=1)
        for i in range(2)
    ]

    def drain(loop: DeliveryLoop) -> None:
        while loop.loop(clock.now()) == 0.0:
            pass

    run_at_once(*(functools.partial(drain, loop) for loop in loops), timeout=30)
    ids = [m["Message-ID"] for m in messages(smtp_server.handler)]
    assert len(ids) == 8 and len(set(ids)) == 8
    assert sum(loop.sent for loop in loops) == 8
    assert Outbox.select().where(Outbox.status == "sent").count() == 8


def test_a_send_that_cannot_be_recorded_is_recorded_later_not_resent(
    monitor, fail, smtp_loop, smtp_server, clock, monkeypatch
):
    fail(monitor)
    real = delivery_mod._write_sent
    calls = {"n": 0}

    def flaky(done):
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("database went away")
        return real(done)

    monkeypatch.setattr(delivery_mod, "_write_sent", flaky)
    smtp_loop.loop(clock.now())
    assert Outbox.get().status == "pending"  # still leased to this loop
    smtp_loop.loop(clock.now())
    assert Outbox.get().status == "sent"
    assert Notification.get().email_sent_at is not None
    assert len(smtp_server.handler.received) == 1


def test_a_stopping_loop_takes_no_new_work(monitor, fail, smtp_loop, smtp_server, clock):
    fail(monitor)
    smtp_loop.shutdown(1)
    smtp_loop.loop(clock.now())
    assert smtp_server.handler.received == []
    assert Outbox.get().lease_owner is None


def test_a_payload_that_cannot_become_an_email_fails_permanently(
    monitor, fail, smtp_loop, smtp_server, clock
):
    fail(monitor)
    Outbox.update(recipients=["a@example.com, b@example.com"]).execute()
    smtp_loop.loop(clock.now())
    row = Outbox.get()
    assert row.status == "failed" and "cannot build the message" in row.last_error
    assert smtp_server.handler.received == []


# --- file outbox ----------------------------------------------------------------------


def test_without_smtp_host_emails_become_eml_files(monitor, fail, settings, clock):
    assert settings.smtp_host is None
    fail(monitor)
    DeliveryLoop(settings, clock=clock).loop(clock.now())
    [row] = Outbox.select()
    [path] = settings.outbox_dir.iterdir()
    assert path.suffix == ".eml"
    msg = parse(path.read_bytes())
    assert msg["Subject"] == "[Uptime] DOWN: api-prod"
    assert msg["Message-ID"] == row.message_id
    assert msg["To"] == "alice@example.com"
    assert Notification.get().email_sent_at == clock.now()


# --- Slack ---------------------------------------------------------------------------


def _slack_only(monitor, webhook_server, path="/services/T000/B000/secret"):
    from uptime_server.models import AlertSettings

    # Written directly: the API insists on https, the test server speaks http.
    AlertSettings.update(
        email_enabled=False, slack_enabled=True, slack_webhook_url=webhook_server.base_url + path
    ).where(AlertSettings.monitor == monitor.id).execute()


def test_slack_gets_the_alert_text(monitor, fail, settings, clock, webhook_server):
    _slack_only(monitor, webhook_server)
    fail(monitor)
    clock.advance(90)
    fail(monitor, passed=True)
    loop = DeliveryLoop(settings, clock=clock)
    loop.loop(clock.now())
    down, up = webhook_server.requests
    assert down["path"] == "/services/T000/B000/secret"
    assert down["content_type"] == "application/json"
    assert set(down["json"]) == {"text"}
    assert down["json"]["text"].startswith("api-prod is DOWN: expected status in [200], got 503")
    assert up["json"]["text"].startswith("api-prod is UP again after 1m 30s")
    assert [r.status for r in Outbox.select()] == ["sent", "sent"]
    # Slack is not email: email_sent_at stays null.
    assert all(n.email_sent_at is None for n in Notification.select())


def test_slack_to_a_private_address_is_refused_when_private_targets_are_blocked(
    monitor, fail, settings, clock, webhook_server
):
    _slack_only(monitor, webhook_server)
    fail(monitor)
    guarded = settings.with_overrides(block_private_targets=True)
    DeliveryLoop(guarded, clock=clock).loop(clock.now())
    row = Outbox.get()
    assert row.status == "failed" and "target address not allowed" in row.last_error
    assert webhook_server.requests == []


def test_slack_goes_to_the_address_the_guard_checked(
    monitor, fail, settings, clock, webhook_server, fake_dns
):
    # Issue: the guard resolved the name, then the HTTP client resolved it
    # again, so a rebinding DNS answer (here 127.0.0.2, where nothing listens)
    # was dialled unchecked. One lookup, and the checked 127.0.0.1 gets it.
    fake_dns.answers["hooks.test"] = [["127.0.0.1"], ["127.0.0.2"]]
    from uptime_server.models import AlertSettings

    AlertSettings.update(
        email_enabled=False,
        slack_enabled=True,
        slack_webhook_url=f"http://hooks.test:{webhook_server.port}/services/T000/B000/secret",
    ).where(AlertSettings.monitor == monitor.id).execute()
    fail(monitor)
    DeliveryLoop(settings, clock=clock).loop(clock.now())

    [request] = webhook_server.requests
    assert request["host"] == f"hooks.test:{webhook_server.port}"
    assert Outbox.get().status == "sent"
    assert fake_dns.lookups == ["hooks.test"]


# --- wiring: daemon component and cron mode ---------------------------------------------


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_the_daemon_runs_the_loop_in_a_thread(monitor, fail, settings, smtp_server):
    from uptime_server.clock import Clock

    fail(monitor)  # due at the manual clock's time, which is not in the future
    Outbox.update(next_attempt_at=Clock().now()).execute()
    [runner] = [
        c
        for c in default_components(with_smtp(settings, smtp_server.port), DaemonOptions())
        if c.name == "delivery"
    ]
    runner.start()
    try:
        for _ in range(100):
            if smtp_server.handler.received:
                break
            threading.Event().wait(0.05)
    finally:
        runner.stop(1)
    assert not runner.thread.is_alive()
    assert subjects(smtp_server.handler) == ["[Uptime] DOWN: api-prod"]


def test_deliver_due_sends_everything_due_and_counts(db, alice, settings, clock, fail):
    for i in range(3):
        fail(make_monitor(alice.user, settings, clock, name=f"svc-{i}"))
    assert deliver_due(settings, clock, batch=2) == 3
    assert deliver_due(settings, clock) == 0
    assert len(list(settings.outbox_dir.iterdir())) == 3


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_cron_mode_delivers_pending_notifications(monitor, fail, settings_env, settings, clock):
    from uptime_cli.main import app

    fail(monitor)
    Outbox.update(next_attempt_at=clock.now() - timedelta(days=365)).execute()
    result = CliRunner().invoke(app, ["server", "check", "--once"], env=settings_env)
    assert result.exit_code == 0, result.output
    [path] = settings.outbox_dir.iterdir()
    assert parse(path.read_bytes())["Subject"] == "[Uptime] DOWN: api-prod"


# --- mail settings ----------------------------------------------------------------------


def test_a_from_with_a_display_name(db, alice, settings, clock, smtp_server):
    named = with_smtp(settings, smtp_server.port).with_overrides(
        mail_from="Uptime Monitor <alerts@example.com>"
    )
    monitor = make_monitor(alice.user, settings, clock)
    Recorder(named).record([outcome(monitor, clock, False)], now=clock.now())
    DeliveryLoop(named, clock=clock).loop(clock.now())
    [received] = smtp_server.handler.received
    assert received.mail_from == "alerts@example.com"
    [msg] = messages(smtp_server.handler)
    assert msg["From"] == "Uptime Monitor <alerts@example.com>"
    assert msg["Message-ID"].endswith("@example.com>")


@pytest.mark.parametrize(
    "env,message",
    [
        ({"UPTIME_MAIL_FROM": "not-an-address"}, "UPTIME_MAIL_FROM"),
        ({"UPTIME_MAIL_FROM": "a@example.com, b@example.com"}, "UPTIME_MAIL_FROM"),
        ({"UPTIME_MAIL_FROM": "a@example.com\r\nBcc: x@example.com"}, "UPTIME_MAIL_FROM"),
        ({"UPTIME_SMTP_PASSWORD": "secret"}, "UPTIME_SMTP_USERNAME"),
    ],
)
def test_bad_mail_settings_stop_the_start(env, message):
    from uptime_server.config import ConfigError, load_settings

    with pytest.raises(ConfigError, match=message):
        load_settings({"UPTIME_DATA_DIR": "/tmp/uptime-test", **env})


def test_message_ids_are_unique_across_installations_and_stable_per_row(
    monitor, fail, smtp_loop, smtp_server, clock
):
    from uptime_server.notify.outbox import message_id

    first, second = message_id(1, "email", "example.com"), message_id(1, "email", "example.com")
    assert first != second  # another database's notification #1 is another email
    assert first.startswith("<uptime-n1-email-") and first.endswith("@example.com>")
    smtp_server.handler.rcpt_reply = "451 4.3.0 later"
    fail(monitor)
    stored = Outbox.get().message_id
    smtp_loop.loop(clock.now())
    smtp_server.handler.rcpt_reply = None
    clock.advance(30)
    smtp_loop.loop(clock.now())
    assert [m["Message-ID"] for m in messages(smtp_server.handler)] == [stored]


@pytest.mark.parametrize("started_at", ["yesterday", "2024-13-45T00:00:00Z", 1714564800])
def test_a_stored_row_with_a_malformed_time_fails_at_once(
    monitor, fail, smtp_loop, smtp_server, clock, started_at
):
    fail(monitor)
    stored = Outbox.get()
    Outbox.update(payload={**stored.payload, "started_at": started_at}).execute()
    smtp_loop.loop(clock.now())
    row = Outbox.get()
    assert (row.status, row.attempts, row.lease_owner) == ("failed", 1, None)
    assert "cannot build the message: started_at is not an ISO 8601 time" in row.last_error
    clock.advance(days=1)
    smtp_loop.loop(clock.now())
    assert Outbox.get().attempts == 1
    assert smtp_server.handler.received == []


def test_a_send_gets_the_delivery_lease_and_its_socket_timeouts_a_quarter_of_it(settings):
    # Not the checks' short, renewed lease: an outbox row is not renewed while
    # it is sent, so its lease must outlast a slow relay.
    relayed = replace(settings, lease_seconds=15, delivery_lease_seconds=120, smtp_host="127.0.0.1")
    loop = DeliveryLoop(relayed)
    assert loop.lease == timedelta(seconds=120)
    assert loop.email.settings.timeout == 30
    quick = DeliveryLoop(replace(relayed, delivery_lease_seconds=8))
    assert quick.email.settings.timeout == 2
