"""The channels resource: /api/v1/channels (docs/api.md#channels, docs/channels.md)."""

from __future__ import annotations

import math
import time
from typing import Any

from flask import Blueprint
from limits import parse_many

from uptime_server.api.body import json_body
from uptime_server.auth.teams import current_acting
from uptime_server.errors import ApiError
from uptime_server.notify.channels import ChannelSender
from uptime_server.schemas.base import Message, data, data_of, json_response
from uptime_server.schemas.channels import (
    Channel,
    ChannelCreate,
    ChannelList,
    ChannelTestResult,
    ChannelUpdate,
    parse_create,
    parse_update,
)
from uptime_server.services import channels as channel_service
from uptime_server.wsgi.access import requires
from uptime_server.wsgi.context import now, settings, state
from uptime_server.wsgi.operations import documenter

bp = Blueprint("channels", __name__, url_prefix="/channels")
doc = documenter("channels")


def _channel(row: Any) -> Channel:
    used = channel_service.monitors_using(current_acting())
    return Channel.of(row, used.get(row.id, []))


def _sender() -> ChannelSender:
    # Injected by tests that must not reach a real service (schemathesis).
    return state().services.get("channel_sender") or ChannelSender(settings())


@bp.get("")
@doc("listChannels", ok=ChannelList)
def list_channels() -> Any:
    """List the caller's channels."""
    used = channel_service.monitors_using(current_acting())
    rows = channel_service.list_channels(current_acting())
    return json_response(ChannelList(data=[Channel.of(r, used.get(r.id, [])) for r in rows]))


@bp.post("")
@requires("admin")
@doc("createChannel", ok={201: data(Channel)}, errors=(403,), body=ChannelCreate)
def create() -> Any:
    """Create a channel."""
    body = parse_create(json_body(), settings())
    row = channel_service.create_channel(current_acting(), body, now=now())
    return data_of(_channel(row)), 201


@bp.get("/<int:channel_id>")
@doc("getChannel", ok=data(Channel), errors=(404,))
def show(channel_id: int) -> Any:
    """One channel."""
    return data_of(_channel(channel_service.get_owned(current_acting(), channel_id)))


@bp.put("/<int:channel_id>")
@requires("admin")
@doc("updateChannel", ok=data(Channel), errors=(404,), body=ChannelUpdate)
def update(channel_id: int) -> Any:
    """Change a channel; omitted config fields, secrets included, keep their values."""
    acting = current_acting()
    row = channel_service.get_owned(acting, channel_id)
    name, config = parse_update(row.type, row.config, json_body(), settings())
    return data_of(_channel(channel_service.update_channel(acting, row, name, config, now=now())))


@bp.delete("/<int:channel_id>")
@requires("admin")
@doc("deleteChannel", ok=Message, errors=(404,))
def delete(channel_id: int) -> Any:
    """Delete a channel; monitors stop using it."""
    acting = current_acting()
    channel_service.delete_channel(acting, channel_service.get_owned(acting, channel_id), now=now())
    return json_response(Message(message="Channel deleted"))


@bp.post("/<int:channel_id>/test")
@requires("admin")
@doc("testChannel", ok=data(ChannelTestResult), errors=(404, 429))
def test(channel_id: int) -> Any:
    """Send a test message now and answer with the result."""
    row = channel_service.get_owned(current_acting(), channel_id)
    if row.type == "email":
        _count_email_test(current_acting().user_id)
    moment = now()
    error = channel_service.send_test(row, _sender(), settings(), now=moment)
    result = ChannelTestResult(
        channel_id=row.id, type=row.type, ok=error is None, error=error, sent_at=moment
    )
    return data_of(result)


def _count_email_test(user_id: int) -> None:
    """One more test email of *user_id*, or 429 RATE_LIMIT_EXCEEDED (UPTIME_EMAIL_TEST_RATE_LIMIT).

    A test email goes to whatever recipients the channel names, through the
    server's own mail relay: without a limit, the test button is a way to
    send mail in the server's name. Counted per user (all their email
    channels together) in the rate limiter's storage, so several daemons
    sharing UPTIME_RATELIMIT_STORAGE_URL share the count.
    """
    rate = settings().email_test_rate_limit
    if not rate:
        return
    strategy = state().limiter.limiter
    key = f"email-test:{user_id}"
    for item in parse_many(rate):
        if not strategy.hit(item, key):
            reset_at = strategy.get_window_stats(item, key).reset_time
            wait = max(1, math.ceil(reset_at - time.time()))
            raise ApiError(
                "RATE_LIMIT_EXCEEDED",
                f"Too many test emails: at most {item}; retry in {wait} s",
                headers={
                    "Retry-After": str(wait),
                    "X-RateLimit-Limit": str(item.amount),
                    "X-RateLimit-Remaining": "0",
                    "X-RateLimit-Reset": str(math.ceil(reset_at)),
                },
            )
