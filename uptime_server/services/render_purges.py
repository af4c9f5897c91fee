"""Public renders kept in memory (badges, status pages), dropped when what they show changes.

The renders live in each app's caches (``web.render_cache``; ``web.public``
and its fast path answer from them) for up to a minute. The services that
change what a render shows call these functions once their transaction has
committed: a monitor created, edited, paused, resumed or deleted (its badges,
and its owner's status pages, which may show it), a badge token rotated, a
status page edited or deleted. Never the views: a view that forgot (as
``POST /monitors/apply`` did) left a pruned monitor's badge answering for a
minute. Purging after the commit matters: a render made between the purge
and the commit would read the old rows and be kept.

Each app registers its caches here (``keep``); a purge reaches every live app
of the process (tests build many; it costs them a render at most). Another
process serving the same database sees the change within the caches' TTL.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable, Iterable
from typing import Protocol

from uptime_server.models import Monitor, StatusPage


class Forgetting(Protocol):
    def forget(self, match: Callable[[Hashable], bool]) -> None: ...

    def count(self) -> int: ...


# Weak: an app gone (a test's) takes its caches with it.
_badge_caches: weakref.WeakSet[Forgetting] = weakref.WeakSet()
_page_caches: weakref.WeakSet[Forgetting] = weakref.WeakSet()


def keep(badges: Forgetting, pages: Forgetting) -> None:
    """Register an app's badge cache (keyed by ``(token, kind)``) and status page cache
    (keyed by ``(slug, format)``)."""
    _badge_caches.add(badges)
    _page_caches.add(pages)


def forget_badges(tokens: Iterable[str | None]) -> None:
    """Drop the badges of these tokens (rotated, turned off, or their monitor changed)."""
    gone = {t for t in tokens if t}
    if gone:
        for cache in list(_badge_caches):
            cache.forget(lambda key: key[0] in gone)


def forget_pages(slugs: Iterable[str]) -> None:
    """Drop the renders of these status pages (edited or deleted)."""
    gone = set(slugs)
    if gone:
        for cache in list(_page_caches):
            cache.forget(lambda key: key[0] in gone)


def forget_monitors(monitors: Iterable[Monitor]) -> None:
    """Drop what shows these monitors: their badges, and their owners' status pages."""
    rows = list(monitors)
    forget_badges(m.badge_token for m in rows)
    forget_pages_of({m.team_id for m in rows})


def forget_pages_of(team_ids: Iterable[int]) -> None:
    """Drop the status pages of these users (a monitor of theirs may be on any of them)."""
    owners = list(set(team_ids))
    if not owners or not any(cache.count() for cache in list(_page_caches)):
        return  # nothing kept: no need to look the slugs up
    slugs = StatusPage.select(StatusPage.slug).where(StatusPage.team.in_(owners)).tuples()
    forget_pages(slug for (slug,) in slugs)
