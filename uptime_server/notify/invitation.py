"""The email inviting someone to a team (docs/teams.md#invitations), through the outbox.

An invitation's outbox row (event ``invitation``) belongs to no notification.
Its payload is ``InvitationContent`` as JSON: what the email says, the link
with the token included, frozen when the invitation is made, so every retry
sends the same bytes (Date and Message-ID included). The delivery loop sends
it while the invitation is still pending and then drops the link from the
payload (``scrubbed``): the token's only copy at rest is in the invitee's
mailbox, the database keeps its SHA-256.

The rendering is pure (no I/O, no clock); ``enqueue`` writes the row.
"""

from __future__ import annotations

import secrets
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime
from typing import Any

from uptime_server.clock import isoformat, utc
from uptime_server.models import Outbox
from uptime_server.notify.message import envelope, format_utc, single_line

EVENT = "invitation"
SCRUBBED = "(sent; the link is kept only by its recipient)"


@dataclass(frozen=True)
class InvitationContent:
    """What one invitation email says."""

    invitation_id: int
    team_name: str
    inviter_name: str
    role: str
    link: str
    created_at: datetime
    expires_at: datetime


def to_json(content: InvitationContent) -> dict[str, Any]:
    data = asdict(content)
    data["created_at"] = isoformat(content.created_at)
    data["expires_at"] = isoformat(content.expires_at)
    return data


def from_json(data: Any) -> InvitationContent:
    """The content ``to_json`` stored; ValueError/TypeError/KeyError when it is not."""
    if not isinstance(data, dict):
        raise TypeError(f"payload is a {type(data).__name__}, not an object")
    values = dict(data)
    for key in ("created_at", "expires_at"):
        values[key] = utc(datetime.fromisoformat(values[key]))
    return InvitationContent(**values)


def scrubbed(data: dict[str, Any]) -> dict[str, Any]:
    """The stored payload without the link (after the email went, or was given up)."""
    return {**data, "link": SCRUBBED}


def subject(content: InvitationContent) -> str:
    """``Alice invited you to Ops on uptime``, one line."""
    inviter = single_line(content.inviter_name) or "Someone"
    return f"{inviter} invited you to {single_line(content.team_name)} on uptime"


def text_body(content: InvitationContent) -> str:
    """The plain-text body: who invites, to which team, as what, the link and its expiry."""
    inviter = single_line(content.inviter_name) or "Someone"
    team = single_line(content.team_name)
    role = single_line(content.role)
    link = single_line(content.link)
    return (
        f"{inviter} invited you to the team {team} on uptime, as {role}.\n"
        "\n"
        "To join, sign in and open this link:\n"
        "\n"
        f"    {link}\n"
        "\n"
        "or, from a terminal signed in with `uptime login`:\n"
        "\n"
        f"    uptime teams join {link}\n"
        "\n"
        f"The link works once, for whichever account opens it, until "
        f"{format_utc(content.expires_at)}.\n"
        "If you did not expect this invitation, ignore this email.\n"
        "\n"
        "-- \n"
        "Sent by Uptime. Times are UTC.\n"
    )


def build_invitation_email(
    content: InvitationContent, *, sender: str, recipients: list[str], message_id: str
) -> EmailMessage:
    """The invitation email; a pure function of its inputs (Date: when it was made)."""
    msg = envelope(sender=sender, recipients=recipients, message_id=message_id)
    msg["Subject"] = subject(content)
    msg["Date"] = format_datetime((utc(content.created_at) or content.created_at).astimezone(UTC))
    msg["Message-ID"] = message_id
    msg["Auto-Submitted"] = "auto-generated"  # RFC 3834: no vacation auto-replies
    body = text_body(content)
    msg.set_content(body, cte="7bit" if body.isascii() else "quoted-printable")
    return msg


def enqueue(
    content: InvitationContent, recipient: str, *, mail_domain: str, now: datetime
) -> Outbox:
    """The outbox row that mails *content* to *recipient* (inside the caller's transaction)."""
    return Outbox.create(
        notification=None,
        channel="email",
        event=EVENT,
        recipients=[recipient],
        subject=subject(content),
        payload=to_json(content),
        message_id=f"<uptime-i{content.invitation_id}-{secrets.token_hex(6)}@{mail_domain}>",
        next_attempt_at=now,
        created_at=now,
    )
