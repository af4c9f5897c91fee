"""Shared fixtures: settings, database (SQLite and PostgreSQL), app, users, monitors.

Every test that takes ``app`` or ``db`` runs once on SQLite and once on
PostgreSQL (``backend`` parameter), unless it says it is SQLite-only (README,
Development). PostgreSQL is the server on 127.0.0.1:5432
(``UPTIME_TEST_PG_URL``); each test session works in a database of its own
(``tests.pg``), created here and dropped at the end.

An unreachable PostgreSQL stops the run before any test, with one message,
never a quiet skip: the PostgreSQL variants are skipped only when asked,
with ``UPTIME_SKIP_PG=1``, and the summary then says how many were. Under CI
(``CI`` or ``UPTIME_REQUIRE_PG`` set) that opt-out is refused.
"""

from __future__ import annotations

import os
import socket
import socketserver
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import peewee
import pytest

from tests import pg
from tests.engine.targets import CountingServer
from uptime_server import db as dbmod
from uptime_server import migrations
from uptime_server.auth.local_users import mint_local_session
from uptime_server.auth.teams import Acting
from uptime_server.clock import ManualClock
from uptime_server.config import Settings, load_settings
from uptime_server.maintenance import windows as maintenance_windows
from uptime_server.models import MODELS, Monitor, User
from uptime_server.schemas.monitor_config import MonitorConfig
from uptime_server.services import monitors as monitor_service
from uptime_server.stats import rollups

START = datetime(2026, 11, 22, 12, 0, 0, tzinfo=UTC)


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no")


SKIP_PG = _env_flag("UPTIME_SKIP_PG")
REQUIRE_PG = _env_flag("CI") or _env_flag("UPTIME_REQUIRE_PG")
SKIPPED_PG = "PostgreSQL variant skipped: UPTIME_SKIP_PG=1"
PG_FIXTURES = frozenset({"pg_url", "fresh_pg_url"})


def _needs_pg(item: pytest.Item) -> bool:
    """A PostgreSQL variant (a "postgres" parameter), or a test of PostgreSQL's own."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    return (
        "postgres" in params.values()
        or bool(PG_FIXTURES & set(getattr(item, "fixturenames", ())))
        or item.get_closest_marker("postgres") is not None
    )


def _require_postgres() -> None:
    """Stop the run, once and before any test, when PostgreSQL cannot be reached."""
    reason = pg.unreachable()
    if reason is None:
        return
    raise pytest.UsageError(
        f"PostgreSQL at {pg.where()} (UPTIME_TEST_PG_URL) is unreachable: {reason}\n"
        "Every database test runs on SQLite and on PostgreSQL. Start PostgreSQL "
        "(README, Quick start), or set UPTIME_SKIP_PG=1 to skip the PostgreSQL "
        "variants and test on SQLite only."
    )


def pytest_configure(config: pytest.Config) -> None:
    if SKIP_PG and REQUIRE_PG:
        raise pytest.UsageError(
            "UPTIME_SKIP_PG=1 is refused here: CI or UPTIME_REQUIRE_PG requires PostgreSQL."
        )


def pytest_report_header(config: pytest.Config) -> str:
    if SKIP_PG:
        return "postgresql: skipped (UPTIME_SKIP_PG=1): SQLite only"
    return f"postgresql: {pg.where()}"


def pytest_sessionstart(session: pytest.Session) -> None:
    # Under xdist the controller collects nothing and its workers must not
    # stop the run (xdist reports that as a crash): it checks here, first.
    if not SKIP_PG and session.config.pluginmanager.has_plugin("dsession"):
        _require_postgres()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    needing = [item for item in items if _needs_pg(item)]
    if SKIP_PG:
        for item in needing:
            item.add_marker(pytest.mark.skip(reason=SKIPPED_PG))
    elif needing and not hasattr(config, "workerinput"):
        _require_postgres()  # one process: only a run with PostgreSQL tests needs it


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not SKIP_PG:
        return
    skipped = sum(
        1
        for report in terminalreporter.stats.get("skipped", [])
        if SKIPPED_PG in str(report.longrepr)
    )
    terminalreporter.write_sep("=", "UPTIME_SKIP_PG=1", yellow=True, bold=True)
    terminalreporter.write_line(
        f"{skipped} PostgreSQL variants were skipped: this run tested the database on SQLite only."
    )


def _scratch_pg(prefix: str) -> Iterator[str]:
    """A scratch database's URL; fails the test when PostgreSQL is down (skips it if asked)."""
    with ExitStack() as stack:
        try:
            url = stack.enter_context(pg.scratch_database(prefix))
        except pg.Unreachable as exc:
            if SKIP_PG:
                pytest.skip(SKIPPED_PG)
            pytest.fail(
                f"PostgreSQL is unreachable: {exc} (UPTIME_SKIP_PG=1 skips the PostgreSQL variants)"
            )
        yield url


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """A fresh PostgreSQL database for this test session (or worker)."""
    yield from _scratch_pg("uptime_t")


@pytest.fixture
def fresh_pg_url() -> Iterator[str]:
    """A PostgreSQL database of one test's own: daemons must not see other tests' rows."""
    yield from _scratch_pg("uptime_e2e")


_pg_migrated: set[str] = set()


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def db_url(backend: str, tmp_path: Any, request: pytest.FixtureRequest) -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'uptime.db'}"
    return request.getfixturevalue("pg_url")


def _reset(database: peewee.Database, url: str) -> None:
    """Bring the database to an empty, migrated state."""
    with database.connection_context():
        if isinstance(database, peewee.PostgresqlDatabase) and url in _pg_migrated:
            tables = ", ".join(m._meta.table_name for m in MODELS)
            database.execute_sql(f"TRUNCATE {tables} RESTART IDENTITY CASCADE")
            return
        migrations.migrate(database)
        _pg_migrated.add(url)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(START)


@pytest.fixture
def target() -> Iterator[CountingServer]:
    """A monitored HTTP server on 127.0.0.1 that counts its hits (tests.engine.targets).

    Modules that need another kind of target define their own ``target``.
    """
    server = CountingServer()
    yield server
    server.stop()


Reply = Callable[[socket.socket], None]


def recv_until(sock: socket.socket, marker: bytes, size: int = 65536) -> bytes:
    """What *sock* receives up to and past *marker*, or until the peer closes."""
    data = b""
    while marker not in data:
        chunk = sock.recv(size)
        if not chunk:
            break
        data += chunk
    return data


@pytest.fixture
def tcp_server() -> Iterator[Callable[[Reply], int]]:
    """Starts a TCP server on 127.0.0.1 whose handler is the given function; its port.

    The connection closes when the function returns.
    """
    servers: list[socketserver.ThreadingTCPServer] = []

    def start(reply: Reply) -> int:
        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                reply(self.request)

        server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return server.server_address[1]

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def settings_env(db_url: str, tmp_path: Any) -> dict[str, str]:
    """The environment a test daemon would have; tests may add to it."""
    return {
        "UPTIME_DATA_DIR": str(tmp_path / "data"),
        "UPTIME_DATABASE_URL": db_url,
        "UPTIME_MIN_CHECK_INTERVAL": "1",
        "UPTIME_SECRET_KEY": "test-secret-key",
        "UPTIME_BASE_URL": "http://127.0.0.1:8080",
    }


@pytest.fixture
def settings(settings_env: dict[str, str]) -> Settings:
    return load_settings(settings_env)


@pytest.fixture
def db(settings: Settings) -> Iterator[peewee.Database]:
    database = dbmod.bind(settings.database_url)
    _reset(database, settings.database_url)
    rollups.KNOWN.forget()  # the roll-up cells an earlier test committed are gone
    maintenance_windows.OPEN.forget()  # and the windows an earlier test's users had
    try:
        yield database
    finally:
        if not database.is_closed():
            database.close()
        close_all = getattr(database, "close_all", None)
        if close_all:
            close_all()


@pytest.fixture
def app(settings: Settings, clock: ManualClock, db: peewee.Database) -> Any:
    from uptime_server.app import create_app

    return create_app(settings, clock=clock, bind_database=False)


def acting_of(user: Any) -> Acting:
    """*user* acting in their personal team, as its owner."""
    team_id = user.personal_team_id
    return Acting(team_id, "owner", user.id, user.name or user.email, "session", None)


@dataclass
class ApiUser:
    """A signed-in user driving the Flask test client with their cookie."""

    client: Any
    token: str
    user: User

    @property
    def acting(self) -> Acting:
        """The user as a service sees them: owner of their personal team, by session."""
        return acting_of(self.user)

    def __post_init__(self) -> None:
        # Werkzeug's test client sends cookies from its jar only (a Cookie
        # header passed by hand is replaced), so the token goes in the jar.
        self.client.set_cookie("session_cookie", self.token)

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        return self.client.open(path, method=method, **kwargs)

    def get(self, path: str, **kwargs: Any) -> Any:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> Any:
        return self.request("POST", path, **kwargs)

    def put(self, path: str, **kwargs: Any) -> Any:
        return self.request("PUT", path, **kwargs)

    def delete(self, path: str, **kwargs: Any) -> Any:
        return self.request("DELETE", path, **kwargs)


@pytest.fixture
def make_user(app: Any, settings: Settings, clock: ManualClock) -> Any:
    def make(email: str, name: str | None = None) -> ApiUser:
        token = mint_local_session(settings, email=email, name=name, clock=clock)
        with dbmod.database.connection_context():
            user = User.get(User.email == email)
        return ApiUser(app.test_client(), token, user)

    return make


@pytest.fixture
def alice(make_user: Any) -> ApiUser:
    return make_user("alice@example.com", "Alice")


@pytest.fixture
def bob(make_user: Any) -> ApiUser:
    return make_user("bob@example.com", "Bob")


@pytest.fixture
def anon(app: Any) -> Any:
    return app.test_client()


@pytest.fixture
def make_monitor(alice: ApiUser, settings: Settings, clock: ManualClock) -> Any:
    """Create a monitor through the service (no HTTP): alice's unless *owner* is given."""

    def make(name: str = "m", *, owner: ApiUser | None = None, **fields: Any) -> Monitor:
        body = {"name": name, "url": "http://127.0.0.1:9/", "type": "http", **fields}
        cfg = MonitorConfig.model_validate(body, context={"settings": settings})
        acting = (owner or alice).acting
        return monitor_service.create_monitor(acting, cfg, now=clock.now(), settings=settings)

    return make
