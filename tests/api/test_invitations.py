"""Team invitations: POST/GET/DELETE /api/v1/teams/{team}/invitations, POST /invitations/accept."""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from typing import Any

import pytest

from tests.api.invites import deliver, invite, link_in, mails, new_team
from tests.api.shapes import assert_error, sqlite_only
from tests.api.tokens import mint
from uptime_server.db import database
from uptime_server.models import AuditEvent, Invitation, Membership, Outbox

NOT_FOUND_OR_EXPIRED = "Invitation not found or expired"


def accept(user: Any, token: str) -> Any:
    return user.post("/api/v1/invitations/accept", json={"token": token})


def role_of(user: Any, team: str) -> str | None:
    response = user.get(f"/api/v1/teams/{team}")
    return response.get_json()["data"]["role"] if response.status_code == 200 else None


def join(owner: Any, member: Any, team: str, role: str, settings: Any, clock: Any) -> None:
    _, token = invite(owner, team, settings, clock, email=member.user.email, role=role)
    assert accept(member, token).status_code == 200


def test_it_mails_a_link_that_another_account_accepts(alice, bob, settings, clock):
    team = new_team(alice)
    response = alice.post(
        f"/api/v1/teams/{team}/invitations",
        json={"email": "Carol@Elsewhere.Example", "role": "member"},
    )
    assert response.status_code == 201, response.get_json()
    body = response.get_json()["data"]
    assert set(body) == {
        "id", "team_id", "email", "role", "created_at", "expires_at", "invited_by", "status"
    }  # fmt: skip
    assert body["email"] == "Carol@elsewhere.example"  # the domain lower-cased
    assert body["role"] == "member" and body["status"] == "pending"
    assert body["invited_by"] == {"id": alice.user.id, "name": "Alice"}
    assert body["created_at"] == "2026-11-22T12:00:00Z"
    assert body["expires_at"] == "2026-11-29T12:00:00Z"

    deliver(settings, clock)
    [mail] = mails(settings)
    assert mail["Subject"] == "Alice invited you to Ops on uptime"
    assert mail["To"] == "Carol@elsewhere.example"
    assert mail["From"] == settings.mail_from
    link, token = link_in(mail)
    assert link == f"{settings.base_url}/invite/{token}"
    assert len(token) == 43
    text = mail.get_body(("plain",)).get_content()
    assert "as member" in text and "2026-11-29T12:00:00Z" in text
    assert f"uptime teams join {link}" in text

    # bob is neither the address invited nor signed in with it: he joins.
    joined = accept(bob, token)
    assert joined.status_code == 200, joined.get_json()
    team_json = joined.get_json()["data"]
    assert team_json["slug"] == "ops" and team_json["role"] == "member"
    assert team_json["members"] == 2 and team_json["personal"] is False
    members = {
        m["user_id"]: m["role"] for m in bob.get(f"/api/v1/teams/{team}/members").get_json()["data"]
    }
    assert members == {alice.user.id: "owner", bob.user.id: "member"}

    # Single use, whoever tries again.
    assert assert_error(accept(bob, token), 404, "NOT_FOUND")["message"] == NOT_FOUND_OR_EXPIRED
    error = assert_error(accept(alice, token), 404, "NOT_FOUND")
    assert error["message"] == NOT_FOUND_OR_EXPIRED

    listed = alice.get(f"/api/v1/teams/{team}/invitations").get_json()["data"]
    assert [(i["id"], i["status"]) for i in listed] == [(body["id"], "accepted")]


def test_the_whole_link_is_accepted_too(alice, bob, settings, clock):
    team = new_team(alice)
    invite(alice, team, settings, clock)
    link, _ = link_in(mails(settings)[-1])

    response = accept(bob, link)

    assert response.status_code == 200, response.get_json()
    assert role_of(bob, team) == "member"


def test_an_unknown_or_malformed_token_is_not_found(alice):
    for token in ("x" * 43, "http://127.0.0.1:8080/invite/", "/invite/abc?x=1"):
        error = assert_error(accept(alice, token), 404, "NOT_FOUND")
        assert error["message"] == NOT_FOUND_OR_EXPIRED


def test_an_invitation_expires_after_seven_days(alice, bob, settings, clock):
    team = new_team(alice)
    created, token = invite(alice, team, settings, clock)

    clock.advance(timedelta(days=7).total_seconds())

    error = assert_error(accept(bob, token), 404, "NOT_FOUND")
    assert error["message"] == NOT_FOUND_OR_EXPIRED
    assert role_of(bob, team) is None
    listed = alice.get(f"/api/v1/teams/{team}/invitations").get_json()["data"]
    assert [(i["id"], i["status"]) for i in listed] == [(created["id"], "expired")]


def test_one_second_before_expiry_it_still_works(alice, bob, settings, clock):
    team = new_team(alice)
    _, token = invite(alice, team, settings, clock)

    clock.advance(timedelta(days=7).total_seconds() - 1)

    assert accept(bob, token).status_code == 200


def test_a_revoked_invitation_cannot_be_accepted(alice, bob, settings, clock):
    team = new_team(alice)
    created, token = invite(alice, team, settings, clock)

    response = alice.delete(f"/api/v1/teams/{team}/invitations/{created['id']}")

    assert response.status_code == 200
    assert response.get_json() == {"message": "Invitation revoked"}  # as the other deletes
    assert_error(accept(bob, token), 404, "NOT_FOUND")
    assert alice.get(f"/api/v1/teams/{team}/invitations").get_json()["data"] == []
    again = alice.delete(f"/api/v1/teams/{team}/invitations/{created['id']}")
    assert assert_error(again, 404, "NOT_FOUND")["message"] == "Invitation not found"


def test_another_teams_invitation_is_not_found(alice, bob, settings, clock):
    ops = new_team(alice)
    created, token = invite(alice, ops, settings, clock)
    dev = new_team(bob, "Dev", "dev")

    # bob is owner of dev, which does not hold that invitation.
    response = bob.delete(f"/api/v1/teams/{dev}/invitations/{created['id']}")
    assert assert_error(response, 404, "NOT_FOUND")["message"] == "Invitation not found"
    # ops is not bob's team at all: the team is not found.
    assert_error(bob.get(f"/api/v1/teams/{ops}/invitations"), 404, "TEAM_NOT_FOUND")
    assert_error(
        bob.post(f"/api/v1/teams/{ops}/invitations", json={"email": "x@y.z", "role": "viewer"}),
        404,
        "TEAM_NOT_FOUND",
    )
    assert bob.get(f"/api/v1/teams/{dev}/invitations").get_json()["data"] == []
    assert accept(bob, token).status_code == 200  # still pending after all that


@pytest.mark.parametrize("role", ["viewer", "member"])
def test_viewers_and_members_cannot_invite_list_or_revoke(alice, bob, settings, clock, role):
    team = new_team(alice)
    created, _ = invite(alice, team, settings, clock, email="dave@example.com")
    join(alice, bob, team, role, settings, clock)

    for response in (
        bob.post(f"/api/v1/teams/{team}/invitations", json={"email": "x@y.z", "role": "viewer"}),
        bob.get(f"/api/v1/teams/{team}/invitations"),
        bob.delete(f"/api/v1/teams/{team}/invitations/{created['id']}"),
    ):
        error = assert_error(response, 403, "FORBIDDEN")
        assert error["details"] == {"required_role": ["admin"], "current_role": [role]}


def test_an_admin_invites_up_to_admin_and_only_an_owner_invites_an_owner(
    alice, bob, settings, clock
):
    team = new_team(alice)
    join(alice, bob, team, "admin", settings, clock)

    refused = bob.post(
        f"/api/v1/teams/{team}/invitations", json={"email": "x@y.z", "role": "owner"}
    )
    error = assert_error(refused, 403, "FORBIDDEN")
    assert error["details"] == {"required_role": ["owner"], "current_role": ["admin"]}
    for role in ("viewer", "member", "admin"):
        response = bob.post(
            f"/api/v1/teams/{team}/invitations", json={"email": "x@y.z", "role": role}
        )
        assert response.status_code == 201, response.get_json()
    owner = alice.post(
        f"/api/v1/teams/{team}/invitations", json={"email": "x@y.z", "role": "owner"}
    )
    assert owner.status_code == 201


def test_an_existing_member_keeps_the_higher_role_and_uses_the_token(alice, bob, settings, clock):
    team = new_team(alice)
    join(alice, bob, team, "admin", settings, clock)
    _, lower = invite(alice, team, settings, clock, role="viewer")
    _, higher = invite(alice, team, settings, clock, role="owner")

    kept = accept(bob, lower)
    assert kept.status_code == 200 and kept.get_json()["data"]["role"] == "admin"
    assert_error(accept(bob, lower), 404, "NOT_FOUND")  # consumed all the same
    raised = accept(bob, higher)
    assert raised.status_code == 200 and raised.get_json()["data"]["role"] == "owner"
    assert raised.get_json()["data"]["members"] == 2


def test_accepting_past_the_team_limit_is_refused_and_keeps_the_invitation(
    alice, bob, settings, clock, app
):
    team = new_team(alice)
    _, token = invite(alice, team, settings, clock)
    from uptime_server.wsgi.context import app_state

    app_state(app).settings = settings.with_overrides(max_teams_per_user=1)
    try:
        error = assert_error(accept(bob, token), 403, "QUOTA_EXCEEDED")
    finally:
        app_state(app).settings = settings
    assert "1" in error["message"]
    assert role_of(bob, team) is None
    assert accept(bob, token).status_code == 200  # the refused accept used nothing


def test_validation_names_the_bad_fields(alice):
    team = new_team(alice)
    path = f"/api/v1/teams/{team}/invitations"
    for body, fields in (
        ({"email": "not-an-address", "role": "member"}, ("email",)),
        ({"email": "a b@example.com", "role": "member"}, ("email",)),
        ({"email": "x@y.z", "role": "superuser"}, ("role",)),
        ({"role": "member"}, ("email",)),
        ({"email": "x@y.z", "role": "member", "token": "mine"}, ("token",)),
    ):
        assert_error(alice.post(path, json=body), 400, "VALIDATION_ERROR", *fields)
    assert_error(
        alice.post("/api/v1/invitations/accept", json={}), 400, "VALIDATION_ERROR", "token"
    )
    assert_error(
        alice.post("/api/v1/invitations/accept", json={"token": 5}),
        400,
        "VALIDATION_ERROR",
        "token",
    )


def test_a_token_cannot_accept_an_invitation(alice, bob, settings, clock):
    team = new_team(alice)
    _, token = invite(alice, team, settings, clock)

    response = mint(bob, "admin").post("/api/v1/invitations/accept", json={"token": token})

    assert_error(response, 403, "FORBIDDEN")
    assert accept(bob, token).status_code == 200


def test_the_token_is_in_no_answer_and_no_audit_line(alice, bob, settings, clock):
    team = new_team(alice)
    answers = []
    created = alice.post(
        f"/api/v1/teams/{team}/invitations", json={"email": "c@d.example", "role": "admin"}
    )
    answers.append(created.get_data(as_text=True))
    deliver(settings, clock)
    link, token = link_in(mails(settings)[-1])
    answers.append(alice.get(f"/api/v1/teams/{team}/invitations").get_data(as_text=True))
    answers.append(accept(bob, link).get_data(as_text=True))
    answers.append(accept(bob, link).get_data(as_text=True))
    answers.append(alice.get(f"/api/v1/teams/{team}/invitations").get_data(as_text=True))

    for text in answers:
        assert token not in text
    with database.connection_context():
        lines = list(AuditEvent.select().order_by(AuditEvent.id))
        row = Invitation.get()
        [sent] = list(Outbox.select().where(Outbox.event == "invitation"))
    audit = [(e.action, e.actor_id, e.details) for e in lines if e.action != "team.create"]
    assert audit == [
        ("invitation.create", alice.user.id, {"email": "c@d.example", "role": "admin"}),
        ("member.join", bob.user.id, {"role": "admin", "invitation_id": row.id}),
    ]
    assert all(token not in json.dumps(e.details) for e in lines)
    assert lines[-1].team_id == row.team_id and lines[-1].via_type == "session"
    assert lines[-1].target_type == "user" and lines[-1].target_id == bob.user.id
    # Only the hash is kept, and the sent email's row no longer holds the link.
    assert row.token_hash != token and len(row.token_hash) == 64
    assert sent.status == "sent" and token not in json.dumps(sent.payload)


def test_revoking_is_audited(alice, settings, clock):
    team = new_team(alice)
    created, _ = invite(alice, team, settings, clock, email="e@f.example", role="viewer")
    alice.delete(f"/api/v1/teams/{team}/invitations/{created['id']}")

    with database.connection_context():
        last = AuditEvent.select().order_by(AuditEvent.id.desc()).get()
    assert (last.action, last.target_type, last.target_id) == (
        "invitation.revoke",
        "invitation",
        created["id"],
    )
    assert last.details == {"email": "e@f.example", "role": "viewer"}


def test_the_list_is_newest_first_with_each_status(alice, bob, settings, clock):
    team = new_team(alice)
    first, _ = invite(alice, team, settings, clock, email="one@example.com")
    clock.advance(60)
    second, token = invite(alice, team, settings, clock, email="two@example.com")
    clock.advance(60)
    third, _ = invite(alice, team, settings, clock, email="three@example.com", role="viewer")
    accept(bob, token)
    clock.set(clock.now() + timedelta(days=7) - timedelta(seconds=30))  # first expired only

    listed = alice.get(f"/api/v1/teams/{team}/invitations").get_json()["data"]

    assert [(i["id"], i["status"]) for i in listed] == [
        (third["id"], "pending"),
        (second["id"], "accepted"),
        (first["id"], "expired"),
    ]


def test_only_one_of_two_concurrent_accepts_wins(alice, bob, make_user, settings, clock):
    team = new_team(alice)
    _, token = invite(alice, team, settings, clock)
    carol = make_user("carol@example.com", "Carol")
    barrier = threading.Barrier(2)
    statuses: list[int] = []

    def go(user: Any) -> None:
        barrier.wait()
        statuses.append(accept(user, token).status_code)

    threads = [threading.Thread(target=go, args=(u,)) for u in (bob, carol)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert sorted(statuses) == [200, 404]
    with database.connection_context():
        joined = Membership.select().where(Membership.team == Invitation.get().team_id).count()
    assert joined == 2  # alice and the winner


def test_removing_an_admin_revokes_the_invitations_they_sent(alice, bob, settings, clock):
    team = new_team(alice)
    join(alice, bob, team, "admin", settings, clock)
    _, token = invite(bob, team, settings, clock, email="friend@example.com")

    alice.delete(f"/api/v1/teams/{team}/members/{bob.user.id}")

    carol_error = assert_error(accept(alice, token), 404, "NOT_FOUND")
    assert carol_error["message"] == NOT_FOUND_OR_EXPIRED


@sqlite_only
def test_the_email_is_not_sent_once_revoked(alice, settings, clock):
    team = new_team(alice)
    created = alice.post(
        f"/api/v1/teams/{team}/invitations", json={"email": "late@example.com", "role": "member"}
    ).get_json()["data"]
    alice.delete(f"/api/v1/teams/{team}/invitations/{created['id']}")

    deliver(settings, clock)

    assert mails(settings) == []
    with database.connection_context():
        [row] = list(Outbox.select().where(Outbox.event == "invitation"))
    assert row.status == "failed" and "revoked" in row.last_error
    assert "/invite/" not in json.dumps(row.payload)
