"""What a request handler needs from the running app: settings and the clock."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from flask import current_app

from uptime_server.clock import Clock
from uptime_server.config import Settings


@dataclass
class UptimeState:
    settings: Settings
    clock: Clock
    # Optional services plugged in by the daemon (e.g. the prober for "test").
    services: dict[str, Any]


def state() -> UptimeState:
    return current_app.extensions["uptime"]


def settings() -> Settings:
    return state().settings


def now() -> datetime:
    return state().clock.now()
