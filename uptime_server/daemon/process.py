"""The daemon: API through waitress plus the engine's loops, one process.

Signal handlers only set a flag; the main thread notices, stops taking new
work, lets in-flight work finish within the grace period, and exits 0.

The whole shutdown fits in ``UPTIME_SHUTDOWN_GRACE``, whatever state the
daemon is in (a lost database included): the API's requests under way finish
first, then every component stops at once, each in a thread of its own with
the grace that is left; at the deadline the daemon stops waiting, kills its
child processes still running (the database workers ignore SIGTERM so that
a signal to the whole process group cannot cut their last write short) and
exits. Whatever was not written by then is logged; its checks run again once
their leases expire.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from uptime_server import db, gc_policy, migrations
from uptime_server.config import Settings, ensure_secret_key
from uptime_server.engine import reminders
from uptime_server.notify import delivery

log = logging.getLogger("uptime.daemon")


class Component(Protocol):
    """A long-running part of the daemon (scheduler, delivery loop, ...)."""

    name: str

    def start(self) -> None: ...

    def stop(self, grace: float) -> None: ...


@dataclass
class DaemonOptions:
    api: bool = True
    scheduler: bool = True
    location: str | None = None
    host: str | None = None
    port: int | None = None


def default_components(settings: Settings, options: DaemonOptions) -> list[Component]:
    """The loops of this process: the engine's (scheduler, delivery, reminders, housekeeping)
    unless ``--no-scheduler``, and the API's (the /metrics snapshot) unless ``--no-api``.

    Each part of the engine adds its own line here.
    """
    from uptime_server.clock import Clock
    from uptime_server.daemon.loops import LoopRunner
    from uptime_server.engine.housekeeping import default_housekeeping
    from uptime_server.engine.scheduler import CheckScheduler
    from uptime_server.engine.worker import DatabaseWorker
    from uptime_server.services.metrics import MetricsRefresher

    clock = Clock()
    components: list[Component] = []
    if options.scheduler:
        # The engine's claims and writes run in a child process, on the other core.
        worker = DatabaseWorker(settings)
        scheduler = CheckScheduler(
            settings, claims=worker, records=worker, clock=clock, location=options.location
        )
        components.append(LoopRunner(scheduler, clock))
        components.append(_delivery_runner(settings))  # outbox -> SMTP/.eml/Slack
        components.append(LoopRunner(reminders.ReminderSweep(settings), clock))
        components.append(LoopRunner(default_housekeeping(settings, clock), clock))
    if options.api:
        # Its snapshot lives in this process's memory: the process serving /metrics.
        components.append(LoopRunner(MetricsRefresher(settings), clock))
    return components


def _delivery_runner(settings: Settings) -> Component:
    """The delivery loop on its runner, which it asks between messages whether to stop."""
    from uptime_server.daemon.loops import LoopRunner

    component = delivery.DeliveryLoop(settings)
    runner = LoopRunner(component, component.clock)
    component.stop_requested = runner.stop_event.is_set
    return runner


def run_due_checks(settings: Settings, options: DaemonOptions) -> None:
    """Cron mode's first step: every due check of the location, once, written."""
    from uptime_server.engine.scheduler import CheckScheduler
    from uptime_server.engine.worker import InProcess

    here = InProcess(settings)
    scheduler = CheckScheduler(settings, claims=here, records=here, location=options.location)
    try:
        count = scheduler.run_due()
    finally:
        scheduler.close()
    log.info("cron: ran %d due checks (location %s)", count, scheduler.location)


def send_reminders(settings: Settings, options: DaemonOptions) -> None:
    """Cron mode: reminders of downtimes due by now, into the outbox."""
    from uptime_server.clock import Clock

    sent = reminders.send_due_reminders(settings, Clock().now())
    log.info("cron: queued %d reminders", sent)


def deliver_pending(settings: Settings, options: DaemonOptions) -> None:
    """Cron mode's second step: send what the checks (or earlier runs) queued."""
    sent = delivery.deliver_due(settings)
    log.info("cron: delivered %d notifications", sent)


# ``uptime server check --once`` runs these in order.
ONCE_STEPS: list[Callable[[Settings, DaemonOptions], None]] = [
    run_due_checks,
    send_reminders,
    deliver_pending,
]


def run_once(settings: Settings, options: DaemonOptions) -> int:
    """Cron mode: migrate, run every once-step, exit status 0 (1 if a step failed)."""
    settings = prepare(settings)
    status = 0
    for step in ONCE_STEPS:
        try:
            step(settings, options)
        except Exception:  # later steps still run; the exit code tells
            log.exception("cron step %s failed", getattr(step, "__name__", step))
            status = 1
    if not db.database.is_closed():
        db.database.close()
    return status


def configure_logging(level: str) -> None:
    logging.basicConfig(
        level=level,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)


def prepare(settings: Settings) -> Settings:
    """Bind the database and apply migrations; return settings with a secret."""
    settings = ensure_secret_key(settings)
    db.bind(settings.database_url)
    with db.database.connection_context():
        applied = migrations.migrate(db.database.obj)
    if applied:
        log.info("migrations applied: %s", ", ".join(applied))
    return settings


@dataclass
class Daemon:
    settings: Settings
    options: DaemonOptions
    stop_event: threading.Event = field(default_factory=threading.Event)
    components: list[Any] = field(default_factory=list)
    server: Any = None
    api_thread: threading.Thread | None = None
    api_sockets: dict[int, Any] = field(default_factory=dict)  # waitress's socket map
    ping_sink: Any = None  # group commit of heartbeat pings (ping_service.PingSink)

    def run(self) -> int:
        self.settings = prepare(self.settings)
        log.info("settings: %s", json.dumps(self.settings.redacted(), default=str))
        self._install_signals()
        try:
            self._start_components()
            if self.options.api:
                self._start_api()
        except BaseException:
            # Stop what did start, so a failed start-up leaves no thread behind.
            self._shutdown()
            raise
        gc_policy.apply(self.settings.gc_threshold)  # start-up done: freeze what it made
        log.info(
            "uptime daemon running (api=%s, scheduler=%s)", self.options.api, self.options.scheduler
        )
        while not self.stop_event.wait(1.0):
            pass
        log.info("shutting down")
        self._shutdown()
        return 0

    def _install_signals(self) -> None:
        def _flag(signum: int, _frame: Any) -> None:
            self.stop_event.set()

        signal.signal(signal.SIGTERM, _flag)
        signal.signal(signal.SIGINT, _flag)

    def _start_components(self) -> None:
        for component in default_components(self.settings, self.options):
            component.start()
            self.components.append(component)

    def _start_api(self) -> None:
        from uptime_server.app import create_app
        from uptime_server.clock import Clock
        from uptime_server.engine.ping_sink import PingSink
        from uptime_server.engine.worker import DatabaseWorker
        from uptime_server.wsgi.server import create_api_server, shared_port_sockets

        # Pings are recorded by a database worker of their own, which makes no claims.
        self.ping_sink = PingSink(DatabaseWorker(self.settings, claims=False), Clock())
        self.ping_sink.start()
        services = {**self._services(), "ping_sink": self.ping_sink}
        app = create_app(self.settings, bind_database=False, services=services)
        host = self.options.host or self.settings.host
        port = self.options.port if self.options.port is not None else self.settings.port
        try:
            where: dict[str, Any] = {"host": host, "port": port}
            if self.settings.reuse_port:
                where = {"sockets": shared_port_sockets(host, port)}
            self.server = create_api_server(
                app, self.settings, socket_map=self.api_sockets, **where
            )
        except OSError as exc:
            raise OSError(exc.errno, f"cannot listen on {host}:{port}: {exc.strerror}") from None
        self._follow_listen_address(app, host, self.server.effective_port)
        self.api_thread = threading.Thread(target=self._serve_api, name="api", daemon=True)
        self.api_thread.start()
        log.info("API listening on http://%s:%s", host, self.server.effective_port)

    def _follow_listen_address(self, app: Any, host: str, port: int) -> None:
        """Without UPTIME_BASE_URL, links (ping URLs, status pages, sign-in callbacks)
        name where the API really listens: --host and --port, or the port that 0 got."""
        from uptime_server.config import WILDCARD_HOSTS, listen_url
        from uptime_server.wsgi.context import app_state

        if self.settings.base_url_set:
            return
        self.settings = self.settings.with_overrides(base_url=listen_url(host, port))
        app_state(app).settings = self.settings
        if host in WILDCARD_HOSTS:
            log.warning(
                "UPTIME_BASE_URL is not set and the API listens on every address: links "
                "(ping URLs, status pages, sign-in callbacks) say %s; set UPTIME_BASE_URL "
                "to the address people reach",
                self.settings.base_url,
            )

    def _stop_api(self, timeout: float) -> None:
        from waitress import wasyncore
        from waitress.trigger import trigger

        # Let requests under way finish (their threads exit after the current
        # task), then close the listener and the connections.
        self.server.task_dispatcher.shutdown(timeout=min(timeout, 10))
        waker = next((d for d in self.api_sockets.values() if isinstance(d, trigger)), None)
        if waker is not None and self.api_thread is not None and self.api_thread.is_alive():
            # From waitress's own loop thread: closing sockets from here races
            # its select() (EBADF in the api thread). An empty map ends the loop.
            waker.pull_trigger(lambda: wasyncore.close_all(self.api_sockets))
            self.api_thread.join(min(timeout, 5))
        if self.api_sockets:
            wasyncore.close_all(self.api_sockets)

    def _serve_api(self) -> None:
        try:
            self.server.run()
        except OSError:
            # A last wall: should a socket still close under the loop's
            # select() during shutdown (EBADF), that is how the loop ends;
            # any other time it is a bug.
            if not self.stop_event.is_set():
                raise

    def _services(self) -> dict[str, Any]:
        services: dict[str, Any] = {}
        for component in self.components:
            services.update(getattr(component, "services", {}))
        return services

    def _shutdown(self) -> None:
        from uptime_server.engine.probe_loop import close_shared_probe_loops

        deadline = time.monotonic() + self.settings.shutdown_grace

        def left() -> float:
            return max(0.0, deadline - time.monotonic())

        self.stop_event.set()
        if self.server is not None:
            # A third of the grace at most: the checks under way need the rest.
            self._stop_api(min(left(), self.settings.shutdown_grace / 3))
        stops = [
            threading.Thread(target=_stop_one, args=(stop, name, left()), name=name, daemon=True)
            for stop, name in self._stoppable()
        ]
        for thread in stops:
            thread.start()
        for thread in stops:
            thread.join(left())
        stuck = [thread.name for thread in stops if thread.is_alive()]
        if stuck:
            log.error(
                "still stopping at the end of the grace (%ss): %s; exiting anyway",
                self.settings.shutdown_grace,
                ", ".join(stuck),
            )
        # The API's "test now" loop, once its requests are over.
        close_shared_probe_loops(timeout=max(0.05, min(1.0, left())))
        # A database worker still writing (its database gone) would hold up
        # the interpreter's exit, which joins child processes without a timeout.
        for child in multiprocessing.active_children():
            log.warning("killing %s (pid %s), still running at shutdown", child.name, child.pid)
            child.kill()
            child.join(1)
        if not db.database.is_closed():
            db.database.close()

    def _stoppable(self) -> list[tuple[Callable[[float], None], str]]:
        """What stops, side by side: the ping writer (after the last request: every
        ping answered is written) and every component; each with its name."""
        parts: list[tuple[Callable[[float], None], str]] = []
        if self.ping_sink is not None:
            parts.append((self.ping_sink.close, "stop-ping-writer"))
        parts.extend((c.stop, f"stop-{getattr(c, 'name', c)}") for c in reversed(self.components))
        return parts


def _stop_one(stop: Callable[[float], None], name: str, grace: float) -> None:
    try:
        stop(grace)
    except Exception:  # the others stop anyway
        log.exception("error while stopping %s", name)
