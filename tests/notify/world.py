"""Building blocks for delivery tests: monitors, a flippable target, check runs.

Plain functions and classes (the fixtures wrapping them live in the test
modules), shared by the delivery and life-cycle tests.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from http.server import ThreadingHTTPServer
from typing import Any

from tests.conftest import acting_of
from tests.stub_http import StubHandler
from uptime_server.checks.outcomes import CheckOutcome
from uptime_server.checks.types import CheckSpec
from uptime_server.clock import ManualClock
from uptime_server.config import Settings
from uptime_server.engine.probe import ProbeConfig, run_check_sync
from uptime_server.engine.recorder import Recorder
from uptime_server.models import AlertSettings, Monitor, User
from uptime_server.schemas.monitor_config import MonitorConfig
from uptime_server.services import monitors as monitor_service

LOOPBACK = "127.0.0.1"


def make_monitor(
    user: User,
    settings: Settings,
    clock: ManualClock,
    *,
    name: str = "api-prod",
    url: str = "http://127.0.0.1:9/health",
    **alerts: Any,
) -> Monitor:
    cfg = MonitorConfig.model_validate(
        {"name": name, "url": url, "type": "http", "expected_status": [200], "timeout": 5},
        context={"settings": settings},
    )
    monitor = monitor_service.create_monitor(
        acting_of(user), cfg, now=clock.now(), settings=settings
    )
    if alerts:
        AlertSettings.update(**alerts).where(AlertSettings.monitor == monitor.id).execute()
    return monitor


def probe(recorder: Recorder, monitor: Monitor, clock: ManualClock) -> CheckOutcome:
    """One real check of the monitor's URL, recorded like the scheduler would."""
    m = Monitor.get_by_id(monitor.id)
    spec = CheckSpec(url=m.url, timeout=5, expected_status=tuple(m.expected_status))
    result = run_check_sync(spec, ProbeConfig())
    run = CheckOutcome.from_run(
        result,
        monitor_id=m.id,
        monitor_created_at=m.created_at,
        location="local",
        checked_at=clock.now(),
    )
    recorder.record([run], now=clock.now())
    return run


@dataclass
class Target:
    """An HTTP service on 127.0.0.1 whose answer the test flips (200 / 503)."""

    status: int = 200
    hits: int = 0
    url: str = ""
    _server: Any = field(default=None, repr=False)

    def start(self) -> Target:
        state = self

        class Handler(StubHandler):
            def do_GET(self) -> None:
                state.hits += 1
                self.reply(state.status, b"ok" if state.status == 200 else b"unavailable")

        self._server = ThreadingHTTPServer((LOOPBACK, 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        self.url = f"http://{LOOPBACK}:{self._server.server_address[1]}/health"
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def with_smtp(settings: Settings, port: int, host: str = LOOPBACK) -> Settings:
    return settings.with_overrides(
        smtp_host=host, smtp_port=port, smtp_tls="none", mail_from="uptime@example.com"
    )


def parse(raw: bytes) -> EmailMessage:
    return BytesParser(policy=policy.default).parsebytes(raw)  # type: ignore[return-value]


def messages(handler: Any) -> list[EmailMessage]:
    return [parse(r.content) for r in handler.received]


def subjects(handler: Any) -> list[str]:
    return [m["Subject"] for m in messages(handler)]
