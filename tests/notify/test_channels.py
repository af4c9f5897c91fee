"""Named channels through the outbox: webhook, PagerDuty and Apprise to real receivers.

Outbox rows come from the Recorder (synthetic check runs); the delivery loop
sends them to receivers on 127.0.0.1 (tests/notify/receivers.py), which check
signatures and drop repeated Idempotency-Keys as a careful receiver would.
"""

from __future__ import annotations

import json
import logging
from datetime import timedelta
from typing import Any

import pytest

from tests.conftest import acting_of
from tests.notify.receivers import Receiver, serve
from tests.notify.world import make_monitor
from tests.outcomes import outcome
from uptime_server.engine.recorder import Recorder
from uptime_server.engine.reminders import ReminderSweep
from uptime_server.models import AlertSettings, Notification, Outbox
from uptime_server.notify.delivery import MAX_AGE, DeliveryLoop
from uptime_server.schemas.channels import parse_create
from uptime_server.services import channels as channel_service
from uptime_server.services import notifications

SECRET = "whsec-0123456789abcdef"
ROUTING_KEY = "R0UTINGKEY0123456789abcd"


def middle() -> float:
    return 0.5  # no jitter: backoff delays are exactly 30, 60, 120 s ...


@pytest.fixture
def receiver():
    with serve(Receiver(secret=SECRET)) as r:
        yield r


@pytest.fixture
def monitor(db, alice, settings, clock):
    # Only the named channels: the implicit email channel is off.
    return make_monitor(alice.user, settings, clock, email_enabled=False)


@pytest.fixture
def add_channel(alice, settings, clock, monitor):
    def add(kind: str, config: dict[str, Any], name: str | None = None, attach: bool = True):
        body = parse_create({"name": name or kind, "type": kind, "config": config}, settings)
        channel = channel_service.create_channel(alice.acting, body, now=clock.now())
        if attach:
            alerts = AlertSettings.get(AlertSettings.monitor == monitor.id)
            AlertSettings.update(channel_ids=[*alerts.channel_ids, channel.id]).where(
                AlertSettings.monitor == monitor.id
            ).execute()
        return channel

    return add


@pytest.fixture
def check(settings, clock, monitor):
    recorder = Recorder(settings)

    def run(passed: bool) -> None:
        recorder.record([outcome(monitor, clock, passed)], now=clock.now())

    return run


@pytest.fixture
def deliver(settings, clock):
    """One delivery iteration of a new loop each time: every call is a restarted daemon."""

    def run() -> None:
        DeliveryLoop(settings, clock=clock, rng=middle).loop(clock.now())

    return run


def test_webhook_down_and_up_are_signed_and_carry_the_outbox_message_id(
    receiver, add_channel, check, deliver, clock
):
    add_channel("webhook", {"url": f"{receiver.url}/hook?token=abc", "secret": SECRET})
    check(False)
    deliver()
    clock.advance(60)
    check(True)
    deliver()

    down, up = receiver.accepted
    assert receiver.bad_signatures == [] and receiver.duplicates == []
    rows = list(Outbox.select().order_by(Outbox.id))
    assert [r.status for r in rows] == ["sent", "sent"]
    assert [down.headers["Idempotency-Key"], up.headers["Idempotency-Key"]] == [
        r.message_id for r in rows
    ]
    assert (down.method, down.path) == ("POST", "/hook?token=abc")
    assert down.headers["Content-Type"] == "application/json"
    assert down.json()["status"] == "DOWN" and up.json()["status"] == "UP"
    assert down.json()["monitor"] == {"name": "api-prod", "url": "http://127.0.0.1:9/health"}
    assert down.json()["error"] == "expected status in [200], got 503"
    assert up.json()["duration"] == 60


def test_webhook_templates_fill_placeholders_and_their_json_forms(
    receiver, add_channel, check, deliver, clock, monitor
):
    add_channel(
        "webhook",
        {
            "url": receiver.url,
            "method": "PUT",
            "headers": {"Authorization": "Bearer t0ken", "Content-Type": "text/plain"},
            "body_down": "{monitor.name} is {status}: {error} since {started_at}",
            "body_up": '{"text": {monitor.name|json}, "after": {duration|json}, '
            '"error": {error|json}, "keep": {braces}}',
            "secret": SECRET,
        },
    )
    monitor.name = 'say "hi"\n'
    monitor.save()
    check(False)
    deliver()
    clock.advance(90)
    check(True)
    deliver()

    down, up = receiver.accepted
    assert down.method == "PUT" and down.headers["Authorization"] == "Bearer t0ken"
    assert down.headers["Content-Type"] == "text/plain"
    assert down.body.decode() == (
        'say "hi"\n is DOWN: expected status in [200], got 503 since 2026-11-22T12:00:00Z'
    )
    # The JSON forms keep a JSON template valid whatever the name holds.
    assert up.body.decode().endswith('"keep": {braces}}')
    assert json.loads(up.body.decode().replace("{braces}", "null")) == {
        "text": 'say "hi"\n',
        "after": 90,
        "error": "",
        "keep": None,
    }


def test_exactly_once_across_failures_restarts_and_a_dead_claimer(
    receiver, add_channel, check, deliver, clock, settings
):
    add_channel("webhook", {"url": receiver.url, "secret": SECRET})
    receiver.fail_first = 3
    check(False)
    deliver()  # 503
    [row] = Outbox.select()
    assert (row.status, row.attempts) == ("pending", 1)
    assert row.last_error == "webhook 127.0.0.1 answered 503"

    # A daemon claims the retry and dies mid-send: its lease holds the row.
    clock.advance(30)
    dead = DeliveryLoop(settings, clock=clock, rng=middle)
    assert dead._claim(clock.now()) is not None
    deliver()  # another daemon: leased, so nothing is sent
    assert len(receiver.requests) == 1

    clock.advance(settings.delivery_lease_seconds)
    deliver()  # lease expired: taken over, 503 again
    clock.advance(120)
    deliver()  # 503, the third
    clock.advance(240)
    deliver()  # accepted
    for _ in range(3):
        clock.advance(days=1)
        deliver()

    assert len(receiver.requests) == 4
    assert len(receiver.accepted) == 1 and receiver.duplicates == []
    row = Outbox.get()
    assert (row.status, row.attempts, row.last_error) == ("sent", 4, None)
    assert {r.headers["Idempotency-Key"] for r in receiver.requests} == {row.message_id}


def test_a_resend_after_a_crash_before_marking_is_dropped_by_the_idempotency_key(
    receiver, add_channel, check, settings, clock, monitor
):
    add_channel("webhook", {"url": receiver.url, "secret": SECRET})
    check(False)
    crashed = DeliveryLoop(settings, clock=clock, rng=middle)
    row = crashed._claim(clock.now())
    crashed._send(row)  # accepted by the receiver; the process dies before marking it
    clock.advance(settings.delivery_lease_seconds)
    DeliveryLoop(settings, clock=clock, rng=middle).loop(clock.now())

    assert len(receiver.requests) == 2
    assert len(receiver.accepted) == 1 and len(receiver.duplicates) == 1
    assert Outbox.get().status == "sent"


def test_a_failed_delivery_keeps_the_status_and_never_the_body(
    add_channel, check, deliver, settings
):
    # Channels pointed at an internal service that answers with its secrets.
    leaky = Receiver(status=500, body=b"db_password=hunter2")
    with serve(leaky) as internal:
        add_channel("webhook", {"url": f"{internal.url}/hook"}, name="hook")
        add_channel("pagerduty", {"routing_key": ROUTING_KEY, "events_url": f"{internal.url}/pd"})
        check(False)
        deliver()
        deliver()
    assert len(internal.requests) == 2
    errors = sorted(row.last_error for row in Outbox.select())
    assert errors == ["PagerDuty 127.0.0.1 answered 500", "webhook 127.0.0.1 answered 500"]


def test_up_never_overtakes_its_down_on_one_channel(receiver, add_channel, check, deliver, clock):
    add_channel("webhook", {"url": receiver.url, "secret": SECRET})
    receiver.fail_first = 1
    check(False)
    deliver()  # the DOWN fails once
    clock.advance(10)
    check(True)
    deliver()  # the UP is due, the DOWN is not yet: nothing goes
    assert [r.json()["status"] for r in receiver.requests] == ["DOWN"]
    clock.advance(30)
    deliver()
    deliver()
    assert [r.json()["status"] for r in receiver.accepted] == ["DOWN", "UP"]


def test_each_channel_gets_its_own_row_and_failures_stay_apart(
    receiver, add_channel, check, deliver, clock, closed_port, alice
):
    add_channel("webhook", {"url": receiver.url, "secret": SECRET}, name="good")
    broken = add_channel("webhook", {"url": f"http://127.0.0.1:{closed_port}/"}, name="broken")
    check(False)
    deliver()
    deliver()
    note = Notification.get()
    shown = {name: (row.status, row.attempts) for row, name in notifications.deliveries(note)}
    assert shown == {"good": ("sent", 1), "broken": ("pending", 1)}
    [failed] = [r for r, _ in notifications.deliveries(note) if r.channel_id == broken.id]
    assert "connection refused" in failed.last_error
    # Given up after the documented age, as email is.
    clock.advance(MAX_AGE.total_seconds())
    deliver()
    assert Outbox.get(Outbox.channel_id == broken.id).status == "failed"
    assert len(receiver.accepted) == 1


def test_a_deleted_channel_gives_up_its_pending_messages(
    receiver, add_channel, check, deliver, monitor, clock
):
    channel = add_channel("webhook", {"url": receiver.url, "secret": SECRET})
    check(False)
    channel_service.delete_channel(acting_of(channel.user), channel, now=clock.now())
    deliver()
    row = Outbox.get()
    assert (row.status, row.last_error) == ("failed", "the channel was deleted")
    assert AlertSettings.get(AlertSettings.monitor == monitor.id).channel_ids == []
    assert receiver.requests == []


def test_pagerduty_trigger_acknowledge_resolve_share_the_dedup_key(
    add_channel, check, deliver, clock, alice
):
    with serve() as pagerduty:
        add_channel(
            "pagerduty",
            {"routing_key": ROUTING_KEY, "events_url": f"{pagerduty.url}/v2/enqueue"},
        )
        check(False)
        deliver()
        [down] = Notification.select()
        notifications.acknowledge(alice.acting, down.id, now=clock.now())
        notifications.acknowledge(alice.acting, down.id, now=clock.now())  # idempotent
        deliver()
        clock.advance(60)
        check(True)
        deliver()

    events = [r.json() for r in pagerduty.accepted]
    assert [e["event_action"] for e in events] == ["trigger", "acknowledge", "resolve"]
    assert {e["dedup_key"] for e in events} == {str(down.id)}
    assert {e["routing_key"] for e in events} == {ROUTING_KEY}
    assert {r.path for r in pagerduty.accepted} == {"/v2/enqueue"}
    trigger = events[0]["payload"]
    assert trigger["summary"] == "api-prod is DOWN: expected status in [200], got 503"
    assert trigger["severity"] == "critical" and trigger["source"] == "http://127.0.0.1:9/health"


def test_pagerduty_folds_reminders_and_flapping_into_their_incidents(
    add_channel, check, deliver, clock, settings, monitor
):
    AlertSettings.update(reminder_interval=600, flap_threshold=2, flap_window=3600).where(
        AlertSettings.monitor == monitor.id
    ).execute()

    def deliver_all() -> None:
        while Outbox.select().where(Outbox.status == "pending").exists():
            deliver()

    with serve() as pagerduty:
        add_channel(
            "pagerduty",
            {"routing_key": ROUTING_KEY, "events_url": f"{pagerduty.url}/v2/enqueue"},
        )
        check(False)
        clock.advance(600)
        ReminderSweep(settings).loop(clock.now())
        deliver_all()
        # UP, DOWN, UP: the third change (> 2) starts flapping; the second
        # downtime stays open, held.
        for passed in (True, False, True):
            clock.advance(60)
            check(passed)
        deliver_all()
        # Up for longer than the window: it settles UP.
        clock.advance(3600)
        check(True)
        deliver_all()

    ids = {
        kind: [n.id for n in Notification.select().where(Notification.type == kind)]
        for kind in ("downtime", "flapping")
    }
    [first, second], [flap] = ids["downtime"], ids["flapping"]
    events = [(e["event_action"], e["dedup_key"]) for e in (r.json() for r in pagerduty.accepted)]
    assert events[:3] == [
        ("trigger", str(first)),  # DOWN
        ("trigger", str(first)),  # the reminder, folded into the same incident
        ("resolve", str(first)),  # UP
    ]
    assert events[3:5] == [("trigger", str(second)), ("trigger", str(flap))]
    # Settled UP: the flapping incident and the held downtime both close.
    assert sorted(events[5:]) == sorted([("resolve", str(flap)), ("resolve", str(second))])


def test_apprise_json_and_ntfy_reach_local_receivers(add_channel, check, deliver, clock):
    with serve() as json_hook, serve() as ntfy:
        add_channel("apprise", {"url": f"json://127.0.0.1:{json_hook.port}/notify"}, name="j")
        add_channel("apprise", {"url": f"ntfy://127.0.0.1:{ntfy.port}/ops-alerts"}, name="n")
        check(False)
        deliver()
        deliver()
        clock.advance(60)
        check(True)
        deliver()
        deliver()

    assert [r.path for r in json_hook.accepted] == ["/notify", "/notify"]
    down, up = (r.json() for r in json_hook.accepted)
    assert down["title"] == "[Uptime] DOWN: api-prod" and down["type"] == "failure"
    assert "expected status in [200], got 503" in down["message"]
    assert up["title"] == "[Uptime] UP: api-prod" and up["type"] == "success"
    topics = [r.json()["topic"] for r in ntfy.accepted]
    assert topics == ["ops-alerts", "ops-alerts"]
    assert ntfy.accepted[0].json()["title"] == "[Uptime] DOWN: api-prod"
    assert {r.status for r in Outbox.select()} == {"sent"}


@pytest.mark.parametrize("scheme", ["json", "ntfy"])
def test_apprise_hosts_are_judged_by_the_guard(
    scheme, add_channel, check, settings_env, clock, monitor
):
    from uptime_server.config import load_settings

    strict = load_settings({**settings_env, "UPTIME_BLOCK_PRIVATE_TARGETS": "true"})
    with serve() as hook:
        # "localhost": a name, so only the answer of the resolver can be judged.
        add_channel("apprise", {"url": f"{scheme}://localhost:{hook.port}/topic"})
        check(False)
        DeliveryLoop(strict, clock=clock, rng=middle).loop(clock.now())
    assert hook.requests == []
    row = Outbox.get()
    assert row.status == "failed"
    assert row.last_error == "apprise host localhost: target address not allowed"


def test_secrets_never_reach_the_log(
    add_channel, check, deliver, clock, caplog, closed_port, settings
):
    caplog.set_level(logging.DEBUG)
    secrets = ["s3cr3t-path-token", "hmac-secret-value", "pd-routing-key-value", "tgtoken123"]
    with serve() as hook:
        add_channel(
            "webhook",
            {"url": f"{hook.url}/{secrets[0]}", "secret": secrets[1]},
            name="ok-hook",
        )
        add_channel("webhook", {"url": f"http://127.0.0.1:{closed_port}/{secrets[0]}"}, name="x")
        add_channel(
            "pagerduty",
            {"routing_key": secrets[2], "events_url": f"http://127.0.0.1:{closed_port}/"},
        )
        add_channel("apprise", {"url": f"json://u:{secrets[3]}@127.0.0.1:{closed_port}/"})
        hook.status = 500
        check(False)
        for _ in range(5):
            deliver()
            clock.advance(hours=1)
    assert Outbox.select().where(Outbox.status == "sent").count() == 0
    text = caplog.text + " ".join(r.last_error or "" for r in Outbox.select())
    assert "failed, attempt" in caplog.text
    for secret in secrets:
        assert secret not in text


def test_a_recovery_with_alert_on_recovery_off_sends_no_channel_message(
    receiver, add_channel, check, deliver, clock, monitor
):
    add_channel("webhook", {"url": receiver.url, "secret": SECRET})
    AlertSettings.update(alert_on_recovery=False).where(
        AlertSettings.monitor == monitor.id
    ).execute()
    check(False)
    clock.advance(timedelta(minutes=1).total_seconds())
    check(True)
    deliver()
    deliver()
    assert [r.json()["status"] for r in receiver.accepted] == ["DOWN"]


def test_a_channel_of_another_user_never_gets_a_message(
    receiver, add_channel, check, deliver, bob, settings, clock, monitor
):
    # Written past the API's check (which refuses it): delivery checks the owner too.
    body = parse_create(
        {"name": "bobs", "type": "webhook", "config": {"url": receiver.url}}, settings
    )
    theirs = channel_service.create_channel(bob.acting, body, now=clock.now())
    AlertSettings.update(channel_ids=[theirs.id]).where(
        AlertSettings.monitor == monitor.id
    ).execute()
    check(False)
    deliver()
    assert Outbox.select().count() == 0
    assert receiver.requests == []
