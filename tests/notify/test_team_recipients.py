"""A monitor's alert emails go to its team's members with role member or above
when its alert settings list no one, else to those listed (docs/teams.md).

Real checks of a local target through the recorder, the outbox and the
delivery loop to aiosmtpd (the ``world`` of tests/notify/conftest.py).
"""

from __future__ import annotations

from typing import Any

from uptime_server.models import Membership


def join(alice: Any, make_user: Any, clock: Any) -> None:
    """Alice's personal team gains bob (member), carol (viewer) and dave (admin)."""
    team = alice.user.personal_team_id
    for email, role in (
        ("bob@example.com", "member"),
        ("carol@example.com", "viewer"),
        ("dave@example.com", "admin"),
    ):
        user = make_user(email)
        Membership.create(team=team, user=user.user.id, role=role, created_at=clock.now())


def test_with_no_recipients_every_member_but_viewers_is_alerted(
    world: Any, alice: Any, make_user: Any, clock: Any
) -> None:
    join(alice, make_user, clock)
    m = world.monitor()
    world.check(m, status=503)
    world.deliver()
    [down] = world.inbox.received
    assert down.rcpt_tos == ["alice@example.com", "bob@example.com", "dave@example.com"]
    # Roles are read at each alert: carol promoted, dave demoted.
    team = alice.user.personal_team_id
    for email, role in (("carol@example.com", "member"), ("dave@example.com", "viewer")):
        user = make_user(email).user
        Membership.update(role=role).where(
            (Membership.team == team) & (Membership.user == user.id)
        ).execute()
    world.check(m, status=200)
    world.deliver()
    up = world.inbox.received[1]
    assert up.rcpt_tos == ["alice@example.com", "bob@example.com", "carol@example.com"]


def test_listed_recipients_replace_the_team(
    world: Any, alice: Any, make_user: Any, clock: Any
) -> None:
    join(alice, make_user, clock)
    m = world.monitor(email_recipients=["oncall@example.com"])
    world.check(m, status=503)
    world.deliver()
    [down] = world.inbox.received
    assert down.rcpt_tos == ["oncall@example.com"]
