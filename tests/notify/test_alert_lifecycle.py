"""Acceptance: real checks of a local target, the recorder, the delivery loop, aiosmtpd.

The target is an HTTP server on 127.0.0.1 whose status the test flips
between 200 and 503; each check is a real probe recorded by the Recorder;
then the delivery loop's ``loop(now)`` sends what the outbox holds to a real
SMTP server. Runs on SQLite and PostgreSQL.
"""

from __future__ import annotations

import socket
from datetime import timedelta

from aiosmtpd.controller import Controller

from tests.conftest import acting_of
from tests.notify.conftest import RecordingHandler
from tests.notify.world import (
    LOOPBACK,
    make_monitor,
    messages,
    probe,
    subjects,
    with_smtp,
)
from uptime_server.engine.recorder import Recorder
from uptime_server.models import Monitor, Notification, Outbox
from uptime_server.notify.delivery import DeliveryLoop


def test_the_whole_life_cycle(world, alice, clock):
    m = world.monitor(email_recipients=["ops@example.com", "dev@example.com"])
    world.check(m, status=200)
    world.deliver()
    assert world.inbox.received == []

    down_at = clock.now()
    world.check(m, status=503)
    world.deliver()
    [down] = world.inbox.received
    assert down.rcpt_tos == ["ops@example.com", "dev@example.com"]
    assert down.mail_from == "uptime@example.com"
    [msg] = messages(world.inbox)
    assert msg["Subject"] == "[Uptime] DOWN: api-prod"
    assert msg["To"] == "ops@example.com, dev@example.com"
    assert "expected status in [200], got 503" in msg.get_content()
    note = Notification.get()
    assert (note.type, note.status, note.started_at) == ("downtime", "active", down_at)
    assert note.email_sent_at == clock.now()
    r = alice.get(f"/api/v1/notifications/{note.id}")
    assert r.json["data"]["email_sent_at"] == "2026-11-22T12:02:00Z"
    assert r.json["data"]["error_details"]["status_code"] == 503

    world.check(m, status=503)
    world.deliver()
    assert len(world.inbox.received) == 1

    up_at = clock.now()
    world.check(m, status=200)
    world.deliver()
    assert subjects(world.inbox) == ["[Uptime] DOWN: api-prod", "[Uptime] UP: api-prod"]
    up_msg = messages(world.inbox)[1]
    assert up_msg["To"] == "ops@example.com, dev@example.com"
    assert "Downtime:" in up_msg.get_content() and "2m (120 s)" in up_msg.get_content()
    down, up = Notification.select().order_by(Notification.id)
    assert (down.status, down.resolved_at, down.duration) == ("resolved", up_at, 120)
    assert (up.type, up.status, up.email_sent_at) == ("recovery", "resolved", clock.now())
    assert len({m["Message-ID"] for m in messages(world.inbox)}) == 2
    assert [o.status for o in Outbox.select()] == ["sent", "sent"]


def test_failing_for_many_runs_sends_exactly_one_email(world):
    m = world.monitor()
    for _ in range(12):
        world.check(m, status=503)
        world.deliver()
    assert subjects(world.inbox) == ["[Uptime] DOWN: api-prod"]
    assert Notification.select().count() == 1


def test_alert_threshold_3(world, clock):
    m = world.monitor(alert_threshold=3)
    first_failure = clock.now()
    for _ in range(2):
        world.check(m, status=503)
        world.deliver()
    assert Notification.select().count() == 0 and world.inbox.received == []
    world.check(m, status=503)
    world.deliver()
    assert subjects(world.inbox) == ["[Uptime] DOWN: api-prod"]
    assert Notification.get().started_at == first_failure
    # A single blip below the threshold never alerts.
    world.check(m, status=200)
    world.check(m, status=503)
    world.check(m, status=200)
    world.deliver()
    assert subjects(world.inbox) == ["[Uptime] DOWN: api-prod", "[Uptime] UP: api-prod"]


def test_email_disabled_still_creates_the_notification(world):
    m = world.monitor(email_enabled=False)
    world.check(m, status=503)
    world.check(m, status=200)
    world.deliver()
    assert world.inbox.received == []
    assert [(n.type, n.email_sent_at) for n in Notification.select()] == [
        ("downtime", None),
        ("recovery", None),
    ]
    assert Outbox.select().count() == 0


def test_no_recovery_email_when_alert_on_recovery_is_off(world):
    m = world.monitor(alert_on_recovery=False)
    world.check(m, status=503)
    world.check(m, status=200)
    world.deliver()
    assert subjects(world.inbox) == ["[Uptime] DOWN: api-prod"]
    assert [n.type for n in Notification.select().order_by(Notification.id)] == [
        "downtime",
        "recovery",
    ]


def test_recipients_fall_back_to_the_owner(world):
    m = world.monitor()
    world.check(m, status=503)
    world.deliver()
    assert [r.rcpt_tos for r in world.inbox.received] == [["alice@example.com"]]


def test_crlf_in_a_monitor_name_cannot_inject_headers(world):
    m = world.monitor()
    # The API refuses control characters in names; rows written before that
    # rule (or by hand) must still not turn into extra headers or recipients.
    evil = "evil\r\nBcc: attacker@example.net\r\nX-Injected: yes"
    Monitor.update(name=evil).where(Monitor.id == m.id).execute()
    world.check(m, status=503)
    world.deliver()
    [received] = world.inbox.received
    assert received.rcpt_tos == ["alice@example.com"]
    [msg] = messages(world.inbox)
    assert msg["Subject"] == "[Uptime] DOWN: evil Bcc: attacker@example.net X-Injected: yes"
    assert "\n" not in msg["Subject"] and "\r" not in msg["Subject"]
    assert [k.lower() for k in msg] == [
        "from",
        "to",
        "subject",
        "date",
        "message-id",
        "auto-submitted",
        "content-type",
        "content-transfer-encoding",
        "mime-version",
    ]
    assert b"attacker" not in received.content.split(b"\r\n\r\n", 1)[0].replace(
        msg["Subject"].encode(), b""
    ).replace(b"\r\n ", b" ")


def test_pausing_resolves_without_an_email(world, clock):
    from uptime_server.services import monitors as monitor_service

    m = world.monitor()
    world.check(m, status=503)
    world.deliver()
    row = Monitor.get_by_id(m.id)
    monitor_service.pause_monitor(acting_of(row.user), row, "maintenance", now=clock.now())
    world.check(m, status=200)
    world.deliver()
    assert subjects(world.inbox) == ["[Uptime] DOWN: api-prod"]
    [note] = Notification.select()
    assert note.status == "resolved"


def test_smtp_down_while_three_monitors_fail_then_back(db, alice, settings, clock, target):
    """Each email arrives exactly once when the mail server comes back."""
    with socket.socket() as sock:  # a port nobody listens on (yet)
        sock.bind((LOOPBACK, 0))
        port = sock.getsockname()[1]
    recorder = Recorder(settings)
    delivery = DeliveryLoop(with_smtp(settings, port), clock=clock, rng=lambda: 0.5)
    monitors = [
        make_monitor(alice.user, settings, clock, name=f"svc-{i}", url=target.url) for i in range(3)
    ]
    target.status = 503
    for m in monitors:
        probe(recorder, m, clock)
    delivery.loop(clock.now())
    rows = list(Outbox.select())
    assert [(r.status, r.attempts) for r in rows] == [("pending", 1)] * 3
    assert all("ConnectionRefusedError" in r.last_error for r in rows)
    assert {r.next_attempt_at for r in rows} == {clock.now() + timedelta(seconds=30)}

    handler = RecordingHandler()
    controller = Controller(handler, hostname=LOOPBACK, port=port, server_hostname="mx.test")
    controller.start()
    try:
        delivery.loop(clock.now())  # nothing is due before its backoff ends
        assert handler.received == []
        for _ in range(3):
            clock.advance(31)
            delivery.loop(clock.now())
        clock.advance(hours=30)
        delivery.loop(clock.now())
    finally:
        controller.stop()
    ids = [m["Message-ID"] for m in messages(handler)]
    assert len(ids) == 3 and len(set(ids)) == 3
    assert sorted(subjects(handler)) == [f"[Uptime] DOWN: svc-{i}" for i in range(3)]
    assert all(n.email_sent_at is not None for n in Notification.select())
    assert [r.status for r in Outbox.select()] == ["sent"] * 3


def test_credentials_in_the_monitor_url_never_reach_the_email(world, target):
    m = world.monitor()
    secret_url = target.url.replace("http://", "http://deploy:s3cret@")
    Monitor.update(url=secret_url).where(Monitor.id == m.id).execute()
    world.check(m, status=503)
    world.deliver()
    [received] = world.inbox.received
    assert b"s3cret" not in received.content
    body = messages(world.inbox)[0].get_content()
    assert target.url.replace("http://", "http://***:***@") in body
