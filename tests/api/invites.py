"""Inviting through the API and reading the link from the email (the file outbox)."""

from __future__ import annotations

import re
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path
from typing import Any

from uptime_server.clock import ManualClock
from uptime_server.config import Settings
from uptime_server.notify.delivery import DeliveryLoop

LINK = re.compile(r"(\S+/invite/([A-Za-z0-9_-]+))")


def new_team(owner: Any, name: str = "Ops", slug: str = "ops") -> str:
    response = owner.post("/api/v1/teams", json={"name": name, "slug": slug})
    assert response.status_code == 201, response.get_json()
    return slug


def deliver(settings: Settings, clock: ManualClock) -> None:
    DeliveryLoop(settings, clock=clock).loop(clock.now())


def mails(settings: Settings) -> list[EmailMessage]:
    folder = Path(settings.outbox_dir)
    files = (
        sorted(folder.glob("*.eml"), key=lambda p: p.stat().st_mtime_ns) if folder.exists() else []
    )
    return [
        BytesParser(policy=policy.default).parsebytes(f.read_bytes())  # type: ignore[misc]
        for f in files
    ]


def link_in(message: EmailMessage) -> tuple[str, str]:
    """(the link, its token) in an invitation email."""
    body = message.get_body(("plain",))
    assert body is not None
    found = LINK.search(body.get_content())
    assert found, body.get_content()
    return found.group(1), found.group(2)


def invite(
    owner: Any,
    team: str,
    settings: Settings,
    clock: ManualClock,
    *,
    email: str = "carol@elsewhere.example",
    role: str = "member",
) -> tuple[dict[str, Any], str]:
    """Invite *email* into *team*; (the invitation's JSON, the token from its email)."""
    before = len(mails(settings))
    response = owner.post(f"/api/v1/teams/{team}/invitations", json={"email": email, "role": role})
    assert response.status_code == 201, response.get_json()
    deliver(settings, clock)
    sent = mails(settings)
    assert len(sent) == before + 1
    return response.get_json()["data"], link_in(sent[-1])[1]
