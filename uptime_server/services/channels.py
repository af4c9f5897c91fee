"""Channels of one team: create, list, edit, delete, test; and monitors' channel lists.

Another team's channel is ``CHANNEL_NOT_FOUND``, as if it did not exist, and
an id of one in a monitor's ``channel_ids`` is a VALIDATION_ERROR that says no
more than an unknown id would. Deleting a channel takes it out of every
monitor's list and gives up its undelivered messages in the same
transaction.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from peewee import IntegrityError

from uptime_server.auth.teams import Acting
from uptime_server.config import Settings
from uptime_server.db import INT64_MAX, write_tx
from uptime_server.errors import ApiError, validation_error
from uptime_server.models import AlertSettings, Channel, Monitor, Outbox
from uptime_server.notify.channels import ChannelSender
from uptime_server.notify.channels.message import ChannelMessage
from uptime_server.notify.message import AlertContent
from uptime_server.notify.outbox import mail_domain, message_id
from uptime_server.notify.transports import DeliveryError
from uptime_server.schemas.channels import ChannelCreate
from uptime_server.services import audit

MAX_CHANNELS_PER_TEAM = 100


def not_found() -> ApiError:
    return ApiError("CHANNEL_NOT_FOUND", "Channel not found")


def get_owned(acting: Acting, channel_id: int) -> Channel:
    if not 0 < channel_id <= INT64_MAX:
        raise not_found()
    row = Channel.get_or_none((Channel.id == channel_id) & (Channel.team == acting.team_id))
    if row is None:
        raise not_found()
    return row


def list_channels(acting: Acting) -> list[Channel]:
    return list(Channel.select().where(Channel.team == acting.team_id).order_by(Channel.id))


def monitors_using(acting: Acting) -> dict[int, list[int]]:
    """Channel id → ids of the team's monitors whose alert settings list it."""
    used: dict[int, list[int]] = {}
    rows = (
        AlertSettings.select(AlertSettings.monitor, AlertSettings.channel_ids)
        .join(Monitor, on=(AlertSettings.monitor == Monitor.id))
        .where(Monitor.team == acting.team_id)
        .order_by(AlertSettings.monitor)
    )
    for row in rows:
        for channel_id in row.channel_ids or []:
            used.setdefault(channel_id, []).append(row.monitor_id)
    return used


def _name_taken(name: str) -> ApiError:
    return validation_error({"name": [f"another of your channels is named {name[:200]!r}"]})


def create_channel(acting: Acting, body: ChannelCreate, *, now: datetime) -> Channel:
    with write_tx():
        if Channel.select().where(Channel.team == acting.team_id).count() >= MAX_CHANNELS_PER_TEAM:
            raise ApiError(
                "QUOTA_EXCEEDED",
                f"Channel limit reached ({MAX_CHANNELS_PER_TEAM} per team)",
                {"limit": [str(MAX_CHANNELS_PER_TEAM)]},
            )
        if (
            Channel.select()
            .where((Channel.team == acting.team_id) & (Channel.name == body.name))
            .exists()
        ):
            raise _name_taken(body.name)
        try:
            channel = Channel.create(
                user=acting.user_id,
                team=acting.team_id,
                name=body.name,
                type=body.type,
                config=body.config,
                created_at=now,
                updated_at=now,
            )
        except IntegrityError:  # a concurrent create took the name
            raise _name_taken(body.name) from None
        audit.record(acting, "channel.create", "channel", channel.id, _named(channel), at=now)
        return channel


def _named(channel: Channel, **details: Any) -> dict[str, Any]:
    """An audit line's details: the channel's name and type; its config never
    (it holds secrets: webhook secrets, headers, keys)."""
    return {"name": channel.name, "type": channel.type, **details}


def _fields(name: str, config: dict[str, Any]) -> dict[str, Any]:
    """The fields an update compares: the name and each config key (``config.url``)."""
    return {"name": name, **{f"config.{key}": value for key, value in config.items()}}


def update_channel(
    acting: Acting, channel: Channel, name: str | None, config: dict[str, Any], *, now: datetime
) -> Channel:
    """Store a new name and config; the audit line names the changed fields, never values."""
    before = _fields(channel.name, channel.config or {})
    with write_tx():
        if name is not None and name != channel.name:
            taken = Channel.select().where(
                (Channel.team == channel.team_id)
                & (Channel.name == name)
                & (Channel.id != channel.id)
            )
            if taken.exists():
                raise _name_taken(name)
            channel.name = name
        channel.config = config
        channel.updated_at = now
        try:
            channel.save()
        except IntegrityError:
            raise _name_taken(channel.name) from None
        fields = audit.changed_fields(before, _fields(channel.name, config))
        if fields:
            details = _named(channel, fields=fields)
            audit.record(acting, "channel.update", "channel", channel.id, details, at=now)
    return Channel.get_by_id(channel.id)


def delete_channel(acting: Acting, channel: Channel, *, now: datetime) -> None:
    with write_tx():
        for row in (
            AlertSettings.select()
            .join(Monitor, on=(AlertSettings.monitor == Monitor.id))
            .where(Monitor.team == channel.team_id)
        ):
            if channel.id in (row.channel_ids or []):
                AlertSettings.update(
                    channel_ids=[i for i in row.channel_ids if i != channel.id]
                ).where(AlertSettings.monitor == row.monitor_id).execute()
        Outbox.update(
            status="failed", last_error="the channel was deleted", lease_owner=None
        ).where((Outbox.channel_id == channel.id) & (Outbox.status == "pending")).execute()
        channel.delete_instance()
        audit.record(acting, "channel.delete", "channel", channel.id, _named(channel), at=now)


def check_channel_ids(team_id: int, channel_ids: list[int]) -> None:
    """Every id must be one of the team's channels; others read as unknown."""
    if not channel_ids:
        return
    owned = {
        c.id
        for c in Channel.select(Channel.id).where(
            Channel.id.in_(channel_ids) & (Channel.team == team_id)
        )
    }
    unknown = [i for i in channel_ids if i not in owned]
    if unknown:
        shown = ", ".join(str(i) for i in unknown[:10])
        raise validation_error({"channel_ids": [f"no channel of yours has id {shown}"]})


def test_message(channel: Channel, *, now: datetime, domain: str) -> ChannelMessage:
    content = AlertContent(
        kind="downtime",
        monitor_name="Uptime test message",
        monitor_url="",
        error="This is a test of the channel; no monitor is down.",
        status_code=None,
        response_time=None,
        started_at=now,
        resolved_at=None,
        duration_seconds=None,
        notification_id=0,
    )
    return ChannelMessage(
        content, message_id=message_id(0, f"c{channel.id}-test", domain), test=True
    )


def send_test(
    channel: Channel, sender: ChannelSender, settings: Settings, *, now: datetime
) -> str | None:
    """Send a test message now; None when the service accepted it, else why not."""
    message = test_message(channel, now=now, domain=mail_domain(settings.mail_from))
    try:
        sender.send(channel.type, channel.config, message)
    except DeliveryError as exc:
        return str(exc)
    except (KeyError, ValueError, TypeError) as exc:
        return f"cannot build the message: {type(exc).__name__}"
    return None
