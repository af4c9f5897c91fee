"""Certificate-expiry alerts through the whole engine: real TLS targets, real SMTP.

The targets are https and tcp (tls) monitors of one TLS port on 127.0.0.1,
whose certificate (made with trustme, its not-after relative to the injected
clock) the test swaps to "renew" it. The scheduler checks them for real, the
recorder decides the alerts, the delivery loop mails them to aiosmtpd.
Runs on SQLite and PostgreSQL.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import trustme

from tests.engine.conftest import ServerThread, step
from tests.notify.conftest import EphemeralPortController, RecordingHandler
from tests.notify.world import messages, subjects, with_smtp
from tests.threads import run_at_once
from uptime_server.checks.outcomes import CheckOutcome
from uptime_server.engine.recorder import Recorder
from uptime_server.engine.scheduler import CheckScheduler
from uptime_server.engine.worker import InProcess
from uptime_server.models import AlertSettings, CheckRun, Monitor, Notification, Outbox
from uptime_server.notify.delivery import DeliveryLoop
from uptime_server.schemas.monitor_config import MonitorConfig
from uptime_server.services import monitors as monitor_service

DAY = timedelta(days=1)
INTERVAL = 60


class CertTarget:
    """A TLS port on 127.0.0.1 whose certificate the test replaces at will."""

    def __init__(self, server: ServerThread, ca: trustme.CA, not_after: datetime) -> None:
        self.ca = ca
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.issue(not_after)
        self.port = server.listen(self.context)

    def issue(self, not_after: datetime) -> None:
        """A new certificate (new serial) for new handshakes."""
        self.ca.issue_cert("127.0.0.1", not_after=not_after).configure_cert(self.context)
        self.not_after = not_after


@pytest.fixture(scope="module")
def target_ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture
def settings_env(settings_env, target_ca, tmp_path):
    ca_file = Path(tmp_path) / "ca.pem"
    target_ca.cert_pem.write_to_path(str(ca_file))
    return {**settings_env, "UPTIME_CA_BUNDLE": str(ca_file)}


@pytest.fixture
def cert_target(server: ServerThread, target_ca: trustme.CA, clock) -> CertTarget:
    return CertTarget(server, target_ca, clock.now() + 20 * DAY)


@pytest.fixture
def inbox() -> Iterator[tuple[RecordingHandler, int]]:
    handler = RecordingHandler()
    controller = EphemeralPortController(
        handler, hostname="127.0.0.1", port=0, server_hostname="mx.test"
    )
    controller.start()
    yield handler, controller.port
    controller.stop()


@pytest.fixture
def delivery(settings, clock, inbox) -> DeliveryLoop:
    return DeliveryLoop(with_smtp(settings, inbox[1]), clock=clock)


@pytest.fixture(params=["https", "tcp"])
def monitor(request, alice, settings, clock, cert_target) -> Monitor:
    port = cert_target.port
    if request.param == "https":
        body = {"name": "shop", "type": "https", "url": f"https://127.0.0.1:{port}/ok"}
    else:
        body = {"name": "shop", "type": "tcp", "url": f"tcp://127.0.0.1:{port}", "tls": True}
    cfg = MonitorConfig.model_validate(
        {**body, "timeout": 5, "check_interval": INTERVAL}, context={"settings": settings}
    )
    return monitor_service.create_monitor(alice.acting, cfg, now=clock.now(), settings=settings)


def check_at(clock, scheduler, cert_target: CertTarget, days_left: float) -> None:
    """Move the clock to *days_left* before the certificate's expiry and run one check."""
    at = cert_target.not_after - timedelta(days=days_left)
    assert at >= clock.now()
    clock.advance((at - clock.now()).total_seconds())
    step(clock, scheduler, INTERVAL)


def check_once(clock, scheduler, monitor: Monitor) -> None:
    """Step the scheduler until it has checked *monitor* once more (the first run is jittered)."""
    runs = CheckRun.select().where(CheckRun.monitor == monitor.id)
    before = runs.count()
    for _ in range(10):
        step(clock, scheduler, INTERVAL / 4)
        if runs.count() > before:
            return
    raise AssertionError("the monitor was not checked again")


def body_fields(body: str) -> dict[str, str]:
    """The ``Label: value`` lines of an alert's text."""
    pairs = (line.partition(":") for line in body.splitlines() if ": " in line)
    return {label: value.strip() for label, _, value in pairs}


def cert_notes(monitor: Monitor) -> list[Notification]:
    query = Notification.select().where(
        (Notification.monitor == monitor.id) & (Notification.type == "cert_expiry")
    )
    return list(query.order_by(Notification.id))


def test_each_threshold_is_mailed_once(monitor, cert_target, clock, scheduler, delivery, inbox):
    handler = inbox[0]
    for days_left in (20, 15, 14, 13.5, 8, 7, 6.9, 3, 2.5, 1, 0.5):
        check_at(clock, scheduler, cert_target, days_left)
        check_once(clock, scheduler, monitor)  # a second run at the same threshold
        delivery.loop(clock.now())
    expected = [f"[Uptime] Certificate for shop expires in {n} day" for n in (14, 7, 3, 1)]
    assert [s.removesuffix("s") for s in subjects(handler)] == expected
    fields = body_fields(messages(handler)[0].get_content())
    assert fields["Not after"] == f"{cert_target.not_after:%Y-%m-%dT%H:%M:%SZ}"
    assert fields["Threshold"] == "14 days"
    assert (fields["Host"], fields["Days left"]) == ("127.0.0.1", "14")
    serial = Monitor.get_by_id(monitor.id).cert_serial
    assert serial and fields["Serial"] == serial
    notes = cert_notes(monitor)
    assert [n.status for n in notes] == ["resolved", "resolved", "resolved", "active"]
    assert all(n.email_sent_at is not None for n in notes)
    # Certificate alerts leave the downtime logic alone.
    assert Monitor.get_by_id(monitor.id).status == "warning"
    assert not Notification.select().where(Notification.type == "downtime").exists()


def test_a_restart_between_thresholds_sends_nothing_twice(
    monitor, cert_target, clock, scheduler, settings, inbox
):
    handler, port = inbox
    check_at(clock, scheduler, cert_target, 10)
    DeliveryLoop(with_smtp(settings, port), clock=clock).loop(clock.now())
    scheduler.close()

    here = InProcess(settings)
    restarted = CheckScheduler(settings, claims=here, records=here, clock=clock, sleep=_no_sleep)
    try:
        check_once(clock, restarted, monitor)
        check_at(clock, restarted, cert_target, 5)
    finally:
        restarted.close()
    DeliveryLoop(with_smtp(settings, port), clock=clock).loop(clock.now())
    assert subjects(handler) == [
        "[Uptime] Certificate for shop expires in 14 days",
        "[Uptime] Certificate for shop expires in 7 days",
    ]
    assert Outbox.select().count() == 2


def test_a_renewed_certificate_starts_the_thresholds_again(
    monitor, cert_target, clock, scheduler, delivery, inbox
):
    check_at(clock, scheduler, cert_target, 6.5)
    [old] = cert_notes(monitor)
    cert_target.issue(clock.now() + 15 * DAY)
    check_once(clock, scheduler, monitor)
    old = Notification.get_by_id(old.id)
    assert old.status == "resolved" and len(cert_notes(monitor)) == 1  # renewed: no alert yet
    check_at(clock, scheduler, cert_target, 13.9)
    delivery.loop(clock.now())
    assert subjects(inbox[0]) == [
        "[Uptime] Certificate for shop expires in 7 days",
        "[Uptime] Certificate for shop expires in 14 days",
    ]


def test_several_thresholds_at_once_send_one_alert(
    monitor, cert_target, clock, scheduler, delivery, inbox
):
    check_at(clock, scheduler, cert_target, 2.5)
    check_at(clock, scheduler, cert_target, 2)
    delivery.loop(clock.now())
    assert subjects(inbox[0]) == ["[Uptime] Certificate for shop expires in 3 days"]
    assert Monitor.get_by_id(monitor.id).cert_alerted_days == 3


def test_no_thresholds_no_alerts(alice, monitor, cert_target, clock, scheduler):
    r = alice.put(f"/api/v1/monitors/{monitor.id}/alerts", json={"cert_expiry_days": []})
    assert r.status_code == 200, r.json
    check_at(clock, scheduler, cert_target, 1)
    assert cert_notes(monitor) == []


async def _no_sleep(seconds: float) -> None:
    pass


# -- the recorder alone: two writers, and the unique key behind the row lock ----


def seen_cert(monitor: Monitor, at: datetime, expires: datetime, serial: str) -> CheckOutcome:
    return CheckOutcome(
        monitor_id=monitor.id,
        monitor_created_at=monitor.created_at,
        location="local",
        checked_at=at,
        passed=True,
        response_time=10,
        status_code=200,
        error=None,
        cert_expires_at=expires,
        cert_serial=serial,
    )


@pytest.mark.parametrize("monitor", ["https"], indirect=True)
def test_recorders_racing_alert_once(monitor, settings, clock, delivery, inbox):
    """Four writers (as of four daemons) record runs that saw the certificate, all at once."""
    expires = clock.now() + 5 * DAY
    recorders = [Recorder(settings) for _ in range(4)]
    run_at_once(
        *(
            lambda r=r: r.record([seen_cert(monitor, clock.now(), expires, "AB")], now=clock.now())
            for r in recorders
        )
    )
    [note] = cert_notes(monitor)
    assert Outbox.select().where(Outbox.notification == note.id).count() == 1
    delivery.loop(clock.now())
    assert subjects(inbox[0]) == ["[Uptime] Certificate for shop expires in 7 days"]


@pytest.mark.parametrize("monitor", ["https"], indirect=True)
def test_the_unique_key_stops_a_second_alert_of_one_threshold(monitor, settings, clock):
    expires = clock.now() + 5 * DAY
    recorder = Recorder(settings)
    recorder.record([seen_cert(monitor, clock.now(), expires, "AB")], now=clock.now())
    # A row that lost its memory of the alert (as if written by a stale writer).
    Monitor.update(cert_alerted_days=None).where(Monitor.id == monitor.id).execute()
    clock.advance(INTERVAL)
    [done] = recorder.record([seen_cert(monitor, clock.now(), expires, "AB")], now=clock.now())
    assert done.run_id is not None and done.opened == []
    assert len(cert_notes(monitor)) == 1 and Outbox.select().count() == 1


@pytest.mark.parametrize("monitor", ["tcp"], indirect=True)
def test_slack_gets_the_alert_too_where_configured(monitor, settings, clock):
    hook = "https://hooks.slack.example/T/B/x"
    AlertSettings.update(slack_enabled=True, slack_webhook_url=hook).where(
        AlertSettings.monitor == monitor.id
    ).execute()
    expires = clock.now() + 2 * DAY
    Recorder(settings).record([seen_cert(monitor, clock.now(), expires, "AB")], now=clock.now())
    rows = {row.channel: row for row in Outbox.select()}
    assert set(rows) == {"email", "slack"} and rows["slack"].target == hook
    assert rows["slack"].subject == "[Uptime] Certificate for shop expires in 3 days"


@pytest.mark.parametrize("monitor", ["https"], indirect=True)
def test_two_certificates_taking_turns_alert_once_each(monitor, settings, clock):
    """Servers behind one name with different certificates: no alert on every flip."""
    recorder = Recorder(settings)
    certs = [("AB", clock.now() + 5 * DAY), ("CD", clock.now() + 6 * DAY)]
    for _ in range(3):
        for serial, expires in certs:
            outcome = seen_cert(monitor, clock.now(), expires, serial)
            recorder.record([outcome], now=clock.now())
            clock.advance(INTERVAL)
    assert len(cert_notes(monitor)) == 2 and Outbox.select().count() == 2
