"""Real loopback servers for the transport tests (aiosmtpd, http.server), and the
life-cycle ``world``: a flippable target, the recorder, delivery, aiosmtpd."""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import trustme
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from tests.notify.world import Target, make_monitor, probe, with_smtp
from uptime_server.engine.recorder import Recorder
from uptime_server.notify.delivery import DeliveryLoop
from uptime_server.notify.message import AlertContent

LOOPBACK = "127.0.0.1"
SMTP_USER = "alice"
SMTP_PASSWORD = "correct-horse-battery-staple"


# --- alert content -------------------------------------------------------------------


@pytest.fixture
def make_content() -> Callable[..., AlertContent]:
    def make(**overrides: Any) -> AlertContent:
        values: dict[str, Any] = {
            "kind": "downtime",
            "monitor_name": "api-prod",
            "monitor_url": "https://api.example.com/health",
            "error": "expected status in [200], got 503",
            "status_code": 503,
            "response_time": 1234,
            "started_at": datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC),
            "resolved_at": None,
            "duration_seconds": None,
            "notification_id": 42,
        }
        values.update(overrides)
        return AlertContent(**values)

    return make


# --- TLS -----------------------------------------------------------------------------


@pytest.fixture(scope="session")
def ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture(scope="session")
def server_tls_context(ca: trustme.CA) -> ssl.SSLContext:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(LOOPBACK, "localhost").configure_cert(ctx)
    return ctx


@pytest.fixture(scope="session")
def client_tls_context(ca: trustme.CA) -> ssl.SSLContext:
    ctx = ssl.create_default_context()
    ca.configure_trust(ctx)
    return ctx


# --- SMTP ----------------------------------------------------------------------------


@dataclass
class Received:
    mail_from: str
    rcpt_tos: list[str]
    content: bytes
    tls: bool
    login: bytes | None


@dataclass
class RecordingHandler:
    """Records accepted envelopes; set a reply to make RCPT or DATA fail."""

    received: list[Received] = field(default_factory=list)
    rcpt_reply: str | None = None  # e.g. "451 4.3.0 try again later"
    data_reply: str | None = None  # e.g. "550 5.7.1 message rejected"
    refuse: dict[str, str] = field(default_factory=dict)  # address -> reply
    quit_reply: str | None = None

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if self.rcpt_reply or address in self.refuse:
            return self.rcpt_reply or self.refuse[address]
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_QUIT(self, server, session, envelope):
        return self.quit_reply or "221 Bye"

    async def handle_DATA(self, server, session, envelope):
        if self.data_reply:
            return self.data_reply
        self.received.append(
            Received(
                mail_from=envelope.mail_from,
                rcpt_tos=list(envelope.rcpt_tos),
                content=envelope.original_content or envelope.content,
                tls=server.transport.get_extra_info("ssl_object") is not None,
                login=session.login_data,
            )
        )
        return "250 Message accepted for delivery"


class EphemeralPortController(Controller):
    """aiosmtpd Controller bound to port 0; learns the real port before use."""

    def _trigger_server(self) -> None:
        assert self.server is not None
        self.port = self.server.sockets[0].getsockname()[1]
        super()._trigger_server()


def _authenticator(server, session, envelope, mechanism, auth_data) -> AuthResult:
    ok = isinstance(auth_data, LoginPassword) and auth_data == (
        SMTP_USER.encode(),
        SMTP_PASSWORD.encode(),
    )
    if not ok:
        return AuthResult(success=False, handled=False)  # aiosmtpd answers 535
    return AuthResult(success=True, auth_data=auth_data)


@dataclass
class SmtpServer:
    host: str
    port: int
    handler: RecordingHandler


@pytest.fixture
def start_smtp(server_tls_context: ssl.SSLContext) -> Iterator[Callable[..., SmtpServer]]:
    """Factory: start_smtp(tls="none"|"starttls"|"ssl", auth=False)."""
    controllers: list[Controller] = []

    def start(tls: str = "none", auth: bool = False) -> SmtpServer:
        handler = RecordingHandler()
        kwargs: dict[str, Any] = {"server_hostname": "mx.test"}  # skip getfqdn()
        if tls == "starttls":
            kwargs.update(tls_context=server_tls_context, require_starttls=True)
        elif tls == "ssl":
            kwargs.update(ssl_context=server_tls_context)
        if auth:
            kwargs.update(
                authenticator=_authenticator,
                # Plain-text AUTH is only allowed here because it is loopback.
                auth_require_tls=tls == "starttls",
            )
        controller = EphemeralPortController(handler, hostname=LOOPBACK, port=0, **kwargs)
        controller.start()
        controllers.append(controller)
        return SmtpServer(LOOPBACK, controller.port, handler)

    yield start
    for controller in controllers:
        controller.stop()


@pytest.fixture
def smtp_server(start_smtp: Callable[..., SmtpServer]) -> SmtpServer:
    return start_smtp()


@pytest.fixture
def closed_port() -> int:
    """A loopback port with nothing listening (connections are refused)."""
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A loopback port that accepts TCP connections but never says anything."""
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        sock.listen(8)  # the kernel completes handshakes; nobody ever reads
        yield sock.getsockname()[1]


# --- Slack (plain HTTP) ----------------------------------------------------------------


@dataclass
class WebhookServer:
    base_url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    status: int = 200
    reply: str = "ok"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    port: int = 0


def _clear_proxy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # A proxy from the environment must not swallow loopback test traffic.
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@contextlib.contextmanager
def _serve_webhook(tls: ssl.SSLContext | None = None) -> Iterator[WebhookServer]:
    """An HTTP(S) webhook receiver bound to 127.0.0.1 only, recording each POST."""
    state = WebhookServer(base_url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            state.requests.append(
                {
                    "path": self.path,
                    "content_type": self.headers.get("Content-Type"),
                    "json": json.loads(body),
                    "host": self.headers.get("Host"),
                    "authorization": self.headers.get("Authorization"),
                }
            )
            time.sleep(state.delay)
            reply = state.reply.encode()
            self.send_response(state.status)
            for name, value in state.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            with contextlib.suppress(BrokenPipeError):  # the client timed out and left
                self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
            pass

    server = ThreadingHTTPServer((LOOPBACK, 0), Handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    state.port = server.server_address[1]
    state.base_url = f"{'https' if tls else 'http'}://{LOOPBACK}:{state.port}"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def webhook_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[WebhookServer]:
    _clear_proxy_env(monkeypatch)
    with _serve_webhook() as state:
        yield state


WEBHOOK_NAME = "hooks.test"


@pytest.fixture
def tls_webhook_server(monkeypatch: pytest.MonkeyPatch, ca: trustme.CA) -> Iterator[WebhookServer]:
    """HTTPS on 127.0.0.1 with a certificate for hooks.test only (no IP in it)."""
    _clear_proxy_env(monkeypatch)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(WEBHOOK_NAME).configure_cert(context)
    with _serve_webhook(context) as state:
        yield state


@dataclass
class FakeDns:
    """Names ending in .test answer from ``answers``: one list per lookup, the last repeating."""

    answers: dict[str, list[list[str]]] = field(default_factory=dict)
    lookups: list[str] = field(default_factory=list)

    def answer(self, host: str) -> list[str]:
        self.lookups.append(host)
        queue = self.answers.get(host)
        if not queue:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return queue.pop(0) if len(queue) > 1 else queue[0]


@pytest.fixture
def fake_dns(monkeypatch: pytest.MonkeyPatch) -> FakeDns:
    """A resolver for the whole process (every client asks getaddrinfo); no DNS traffic."""
    dns = FakeDns()
    real = socket.getaddrinfo

    def getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):  # type: ignore[no-untyped-def]
        name = host.decode() if isinstance(host, bytes) else host
        if not isinstance(name, str) or not name.endswith(".test"):
            return real(host, port, family, type, proto, flags)
        port = int(port or 0)
        return [
            (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (ip, port))
            for ip in dns.answer(name)
        ]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return dns


# --- the alert life cycle: a flippable target, the recorder, delivery, aiosmtpd ----------


@pytest.fixture
def target():
    t = Target().start()
    yield t
    t.stop()


@pytest.fixture
def world(db, alice, settings, clock, smtp_server, target):
    """Everything one life-cycle test drives, behind three verbs."""

    class World:
        recorder = Recorder(settings)
        delivery = DeliveryLoop(with_smtp(settings, smtp_server.port), clock=clock)
        inbox = smtp_server.handler

        def monitor(self, name="api-prod", **alerts):
            return make_monitor(alice.user, settings, clock, name=name, url=target.url, **alerts)

        def check(self, *monitors, status):
            target.status = status
            for m in monitors:
                probe(self.recorder, m, clock)
            clock.advance(60)

        def deliver(self):
            self.delivery.loop(clock.now())

    return World()
