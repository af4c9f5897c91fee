"""Status pages of one team: create, list, change, delete, and which monitors a group shows.

A page names monitors by id (and by tag); only the owner's monitors may be
named, and an id that is not the owner's is refused exactly like one that
does not exist, so a page cannot probe for other users' ids. The slug is
unique across the server, since it is the page's public URL
(docs/status-pages.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import peewee

from uptime_server.auth.teams import Acting
from uptime_server.db import write_tx
from uptime_server.errors import ApiError, validation_error
from uptime_server.models import Monitor, StatusPage
from uptime_server.models.tags import having_any
from uptime_server.schemas.requests import parse_body, require_object
from uptime_server.schemas.status_pages import StatusPageIn
from uptime_server.services import audit, render_purges

MAX_PAGES_PER_TEAM = 100


def not_found() -> ApiError:
    return ApiError("STATUS_PAGE_NOT_FOUND", "Status page not found")


def list_pages(acting: Acting) -> list[StatusPage]:
    return list(
        StatusPage.select().where(StatusPage.team == acting.team_id).order_by(StatusPage.id)
    )


def get_owned(acting: Acting, key: str) -> StatusPage:
    """The caller's page by id (all digits) or slug; another team's is not found."""
    # ASCII digits only: "²" is a digit to str.isdigit, not to int().
    by_id = key.isascii() and key.isdigit() and len(key) < 19
    where = StatusPage.id == int(key) if by_id else StatusPage.slug == key
    page = StatusPage.get_or_none(where & (StatusPage.team == acting.team_id))
    if page is None:
        raise not_found()
    return page


def create_page(acting: Acting, body: Any, *, now: datetime) -> StatusPage:
    config = _parse(acting.team_id, require_object(body))
    if StatusPage.select().where(StatusPage.team == acting.team_id).count() >= MAX_PAGES_PER_TEAM:
        raise ApiError(
            "QUOTA_EXCEEDED",
            f"Status page limit reached ({MAX_PAGES_PER_TEAM} per team)",
            {"limit": [str(MAX_PAGES_PER_TEAM)]},
        )
    with _slug_guard(config.slug), write_tx():
        page = StatusPage.create(
            user=acting.user_id, team=acting.team_id, created_at=now, updated_at=now, **_row(config)
        )
        audit.record(acting, "status_page.create", "status_page", page.id, _named(page), at=now)
    render_purges.forget_pages([page.slug])
    return page


def _named(page: StatusPage, **details: Any) -> dict[str, Any]:
    return {"slug": page.slug, "title": page.title, **details}


def update_page(acting: Acting, page: StatusPage, patch: Any, *, now: datetime) -> StatusPage:
    """Merge *patch* into the stored page and store it, if the whole is valid.

    The audit line names the fields that changed (``fields``), if any.
    """
    stored = {name: getattr(page, name) for name in StatusPageIn.model_fields}
    patch = require_object(patch)
    if "groups" not in patch:
        # Monitors deleted since the last edit leave the stored groups here,
        # so that they do not make an edit of something else invalid.
        stored["groups"] = _without_missing(page.team_id, stored["groups"])
    config = _parse(page.team_id, {**stored, **patch})
    before = {name: getattr(page, name) for name in StatusPageIn.model_fields}
    row = _row(config)
    with _slug_guard(config.slug), write_tx():
        StatusPage.update(updated_at=now, **row).where(StatusPage.id == page.id).execute()
        if fields := audit.changed_fields(before, row):
            details = {"slug": config.slug, "title": config.title, "fields": fields}
            audit.record(acting, "status_page.update", "status_page", page.id, details, at=now)
    render_purges.forget_pages([page.slug, config.slug])  # the old address and the new
    return StatusPage.get_by_id(page.id)


def delete_page(acting: Acting, page: StatusPage, *, now: datetime) -> None:
    with write_tx():
        if StatusPage.delete().where(StatusPage.id == page.id).execute():
            details = _named(page)
            audit.record(acting, "status_page.delete", "status_page", page.id, details, at=now)
    render_purges.forget_pages([page.slug])


def monitors_for_group(team_id: int, group: Mapping[str, Any]) -> list[int]:
    """The ids of the monitors one group shows, in order, each once.

    The group's ``monitor_ids`` as given, then the owner's monitors carrying
    any of the group's ``tags``, in id order (a monitor added later with
    such a tag joins the group without editing the page).
    """
    ids = list(group.get("monitor_ids") or [])
    tags = list(group.get("tags") or [])
    if tags:
        tagged = (
            Monitor.select(Monitor.id)
            .where((Monitor.team == team_id) & having_any(Monitor.id, tags))
            .order_by(Monitor.id)
            .tuples()
        )
        ids += [mid for (mid,) in tagged]
    return list(dict.fromkeys(ids))


def _parse(owner: int, body: dict[str, Any]) -> StatusPageIn:
    config = parse_body(StatusPageIn, body)
    named = {mid for group in config.groups for mid in group.monitor_ids}
    named |= {int(k) for group in config.groups for k in group.labels}
    missing = sorted(named - _owned_ids(owner, named))
    if missing:
        # The same words for another team's monitor and for none at all.
        ids = ", ".join(map(str, missing))
        raise validation_error({"groups": [f"no monitor of yours has the id {ids}"]})
    return config


def _without_missing(team_id: int, groups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    named = {mid for g in groups for mid in g.get("monitor_ids") or []}
    named |= {int(k) for g in groups for k in g.get("labels") or {}}
    owned = _owned_ids(team_id, named)
    return [
        {
            **g,
            "monitor_ids": [mid for mid in g.get("monitor_ids") or [] if mid in owned],
            "labels": {k: v for k, v in (g.get("labels") or {}).items() if int(k) in owned},
        }
        for g in groups
    ]


def _owned_ids(owner: int, ids: Iterable[int]) -> set[int]:
    wanted = list(ids)
    if not wanted:
        return set()
    rows = Monitor.select(Monitor.id).where((Monitor.team == owner) & Monitor.id.in_(wanted))
    return {m.id for m in rows}


def _row(config: StatusPageIn) -> dict[str, Any]:
    row = config.model_dump()
    row["groups"] = [g.model_dump() for g in config.groups]
    return row


@contextmanager
def _slug_guard(slug: str) -> Iterator[None]:
    """A write that hits another page's slug is 409 SLUG_TAKEN, not a 500."""
    try:
        yield
    except peewee.IntegrityError:
        raise ApiError(
            "SLUG_TAKEN",
            f"The slug {slug!r} is already used by another status page",
            {"slug": ["is already taken"]},
        ) from None
