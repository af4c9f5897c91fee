"""An invitation's email through the outbox to a real SMTP server (aiosmtpd on loopback)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.api.invites import new_team
from tests.notify.world import make_monitor, messages, with_smtp
from tests.outcomes import outcome
from uptime_server.engine.recorder import Recorder
from uptime_server.models import Outbox
from uptime_server.notify import invitation
from uptime_server.notify.delivery import DeliveryLoop


@pytest.fixture
def smtp_loop(settings, clock, smtp_server):
    return DeliveryLoop(with_smtp(settings, smtp_server.port), clock=clock, rng=lambda: 0.5)


def invite(alice, email="carol@elsewhere.example", role="member"):
    team = new_team(alice)
    response = alice.post(f"/api/v1/teams/{team}/invitations", json={"email": email, "role": role})
    assert response.status_code == 201, response.get_json()
    return response.get_json()["data"]


def test_the_invitation_arrives_by_smtp_with_its_link(
    alice, smtp_loop, smtp_server, settings, clock
):
    created = invite(alice)

    smtp_loop.loop(clock.now())

    [received] = smtp_server.handler.received
    assert received.rcpt_tos == ["carol@elsewhere.example"]
    [msg] = messages(smtp_server.handler)
    assert msg["Subject"] == "Alice invited you to Ops on uptime"
    assert msg["Auto-Submitted"] == "auto-generated"
    assert msg["Message-ID"].startswith(f"<uptime-i{created['id']}-")
    body = msg.get_body(("plain",)).get_content()
    assert f"{settings.base_url}/invite/" in body
    [row] = Outbox.select()
    assert row.notification_id is None and row.event == "invitation"
    assert row.status == "sent" and row.payload["link"] == invitation.SCRUBBED


def test_a_retry_sends_what_was_frozen_then_forgets_the_link(alice, smtp_loop, smtp_server, clock):
    invite(alice)
    smtp_server.handler.rcpt_reply = "451 4.3.0 try again later"
    smtp_loop.loop(clock.now())
    held = Outbox.get()
    assert held.status == "pending" and held.attempts == 1
    smtp_server.handler.rcpt_reply = None
    clock.advance(hours=2)

    smtp_loop.loop(clock.now())

    [msg] = messages(smtp_server.handler)
    assert msg["Message-ID"] == held.message_id
    assert msg["Date"] == "Sun, 22 Nov 2026 12:00:00 +0000"  # when it was made, not sent
    assert held.payload["link"] in msg.get_body(("plain",)).get_content()
    assert Outbox.get().payload["link"] == invitation.SCRUBBED


def test_alerts_and_invitations_go_out_together(alice, smtp_loop, smtp_server, settings, clock):
    monitor = make_monitor(alice.user, settings, clock)
    invite(alice)
    Recorder(settings).record([outcome(monitor, clock, False)], now=clock.now())

    smtp_loop.loop(clock.now())

    subjects = sorted(m["Subject"] for m in messages(smtp_server.handler))
    assert subjects == ["Alice invited you to Ops on uptime", f"[Uptime] DOWN: {monitor.name}"]
    assert {r.status for r in Outbox.select()} == {"sent"}


def test_the_email_text_is_one_line_per_field():
    content = invitation.InvitationContent(
        invitation_id=4,
        team_name="Ops\nBcc: x@evil.example",
        inviter_name="Al\rice",
        role="viewer",
        link="http://h/invite/t",
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        expires_at=datetime(2026, 1, 8, tzinfo=UTC),
    )

    msg = invitation.build_invitation_email(
        content, sender="u@h.example", recipients=["a@b.example"], message_id="<i4@h.example>"
    )

    assert msg["Subject"] == "Al ice invited you to Ops Bcc: x@evil.example on uptime"
    assert msg["Bcc"] is None
    assert msg["Date"] == "Thu, 01 Jan 2026 00:00:00 +0000"
    assert "until 2026-01-08T00:00:00Z" in msg.get_content()
    with pytest.raises(ValueError):
        invitation.build_invitation_email(
            content, sender="u@h.example", recipients=["a@b, c@d"], message_id="<i4@h.example>"
        )
