"""The fast paths' fixtures: a monitor's history for the public pages (tests.web's)."""

from __future__ import annotations

from tests.web.conftest import history

__all__ = ["history"]
