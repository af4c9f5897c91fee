"""RenderCache: one render per key until the TTL, forget at once, never keep a stale render."""

from __future__ import annotations

from typing import Any

from uptime_server.clock import ManualClock
from uptime_server.web.render_cache import RenderCache, rendered


def test_an_entry_lives_its_ttl_and_peek_never_renders() -> None:
    clock = ManualClock()
    cache = RenderCache(clock, ttl=60)
    renders: list[str] = []

    def render() -> Any:
        renders.append("x")
        return rendered(b"<svg/>", "image/svg+xml")

    assert cache.peek(("t", "status")) is None
    first = cache.get(("t", "status"), render)
    assert cache.get(("t", "status"), render) is first and cache.peek(("t", "status")) is first
    assert len(renders) == 1
    clock.advance(60)
    assert cache.peek(("t", "status")) is None and len(renders) == 1
    assert cache.get(("t", "status"), render) is not first and len(renders) == 2


def test_a_render_under_way_when_its_key_is_forgotten_is_answered_but_not_kept() -> None:
    # The badge request read the monitor just before its token was rotated
    # (and its entries forgotten): that render must not be served for a TTL.
    cache = RenderCache(ManualClock(), ttl=60)

    def render_then_rotate() -> Any:
        value = rendered(b"<svg>up</svg>", "image/svg+xml")
        cache.forget(lambda key: key[0] == "old-token")
        return value

    assert cache.get(("old-token", "status"), render_then_rotate) is not None
    assert cache.peek(("old-token", "status")) is None
    # Without a forget meanwhile, the next render is kept.
    kept = cache.get(("old-token", "status"), lambda: rendered(b"<svg/>", "image/svg+xml"))
    assert cache.peek(("old-token", "status")) is kept
