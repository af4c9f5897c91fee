"""The apprise channel under the SSRF guard.

Verdicts on addresses off this machine (169.254.169.254, 10.0.0.5, IPv6
forms of them) are unit tests: the guard's resolver and dial are stubbed
(tests/net/edges.py) and nothing is dialled. Deliveries go to real servers
on 127.0.0.1.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from tests.net.edges import Edges, stub_edges
from tests.notify.receivers import Receiver, serve
from uptime_server.net import socket_guard
from uptime_server.notify.channels.apprise_channel import AppriseChannel
from uptime_server.notify.channels.message import ChannelMessage
from uptime_server.notify.transports import (
    DeliveryError,
    PermanentDeliveryError,
    TemporaryDeliveryError,
)

REFUSED = "target address not allowed"


@pytest.fixture
def message(make_content: Any) -> ChannelMessage:
    return ChannelMessage(make_content(), message_id="<uptime-n42-test@example.com>")


def send(
    url: str,
    message: ChannelMessage,
    *,
    strict: bool = False,
    allowed: tuple[str, ...] = (),
    timeout: float = 5,
) -> DeliveryError | None:
    channel = AppriseChannel(timeout, block_private=strict, allowed=allowed)
    try:
        channel.send({"url": url}, message)
    except DeliveryError as exc:
        return exc
    return None


@pytest.fixture
def edges(monkeypatch: pytest.MonkeyPatch) -> Edges:
    stub = stub_edges(monkeypatch)
    stub.answers.update(
        {
            "metadata.test": [["169.254.169.254"]],
            "inside.test": [["10.0.0.5"]],
        }
    )
    return stub


# --- verdicts (nothing dialled) ------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "hassio://169.254.169.254/accesstoken",
        "hassio://[::ffff:a9fe:a9fe]/accesstoken",  # IPv4-mapped
        "bark://[2002:a9fe:a9fe::]:8080/device",  # 6to4
        "json://[64:ff9b::a9fe:a9fe]/",  # NAT64 (Apprise keeps "[64:ff9b::]": refused too)
        "json://2852039166/",
        "enigma2://0xa9fea9fe",
        "hassio://metadata.test/accesstoken",
        "enigma2://metadata.test",
        "bark://metadata.test/device",
        "toot://token@metadata.test",
    ],
)
def test_link_local_is_refused_on_every_server(edges: Edges, message, url: str) -> None:
    error = send(url, message)
    assert isinstance(error, PermanentDeliveryError) and error.args[0].endswith(REFUSED)
    assert edges.dialled == []


@pytest.mark.parametrize(
    "url",
    [
        "hassio://10.0.0.5/accesstoken",
        "enigma2://10.0.0.5",
        "bark://10.0.0.5/device",
        "toot://token@10.0.0.5",
        "json://[::ffff:10.0.0.5]/",
        "hassio://inside.test/accesstoken",
        "enigma2://inside.test",
        "bark://inside.test/device",
        "toot://token@inside.test",
        "ntfys://inside.test/ops",
        "zulip://bot@ops.inside.test/" + "t0ken" * 6 + "ab",
    ],
)
def test_private_targets_are_refused_when_blocked(edges: Edges, message, url: str) -> None:
    edges.answers["ops.inside.test"] = [["10.0.0.5"]]
    error = send(url, message, strict=True)
    assert isinstance(error, PermanentDeliveryError) and error.args[0].endswith(REFUSED)
    assert edges.dialled == []


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("mailto://user:pass@example.com?smtp=10.0.0.5", "10.0.0.5"),
        ("mailto://user:pass@example.com?smtp=inside.test", "inside.test"),
        ("rsyslog://10.0.0.5", "10.0.0.5"),
        ("rsyslog://inside.test", "inside.test"),
        ("irc://10.0.0.5/#ops", "10.0.0.5"),
        ("irc://inside.test/#ops", "inside.test"),
    ],
)
def test_an_allowed_socket_level_scheme_is_still_judged(
    edges: Edges, message, url: str, shown: str
) -> None:
    allowed = ("mailto", "rsyslog", "irc")
    error = send(url, message, strict=True, allowed=allowed)
    assert isinstance(error, PermanentDeliveryError)
    assert str(error) == f"apprise host {shown}: {REFUSED}"
    assert edges.dialled == []


@pytest.mark.parametrize(
    "url",
    [
        "mailto://user:pass@example.com?smtp=127.0.0.1",
        "rsyslog://127.0.0.1",
        "irc://127.0.0.1/#ops",
        "syslog://",
    ],
)
def test_socket_level_schemes_are_refused_unless_the_operator_allows_them(
    edges: Edges, message, url: str
) -> None:
    error = send(url, message, allowed=("json",))
    assert isinstance(error, PermanentDeliveryError)
    assert "UPTIME_APPRISE_ALLOW" in str(error)
    assert edges.dialled == [] and edges.lookups == []


def test_a_file_parameter_is_refused_before_anything_is_read(edges: Edges, message) -> None:
    error = send("discord://4174216298/JHMHI8qBe7bk2ZwO5U711o3dV_js?template=/etc/passwd", message)
    assert isinstance(error, PermanentDeliveryError) and "template" in str(error)
    assert edges.dialled == []


# --- deliveries to 127.0.0.1 -----------------------------------------------------------


@pytest.fixture
def resolver(monkeypatch: pytest.MonkeyPatch) -> Edges:
    """Only the guard's resolver is stubbed; connections are real (to 127.0.0.1)."""
    stub = Edges()
    monkeypatch.setattr(socket_guard, "system_getaddrinfo", stub.getaddrinfo)
    return stub


def test_a_judged_host_is_reached_at_the_address_that_was_judged(resolver: Edges, message):
    # A second lookup would rebind the name to 0.0.0.0 (refused everywhere).
    resolver.answers["ha.test"] = [["127.0.0.1"], ["0.0.0.0"]]
    with serve() as home_assistant:
        error = send(f"hassio://ha.test:{home_assistant.port}/accesstoken", message)
    assert error is None
    [got] = home_assistant.requests
    assert got.path == "/api/services/persistent_notification/create"
    assert got.headers["Authorization"] == "Bearer accesstoken"
    assert resolver.lookups == ["ha.test"]


@pytest.mark.parametrize(
    "url",
    [
        "hassio://localhost:{port}/accesstoken",
        "enigma2://localhost:{port}",
        "bark://localhost:{port}/device",
        "toot://token@localhost:{port}",
        "json://localhost:{port}/hook",
    ],
)
def test_with_private_targets_blocked_a_loopback_server_hears_nothing(message, url: str):
    with serve() as server:
        error = send(url.format(port=server.port), message, strict=True)
    assert isinstance(error, PermanentDeliveryError)
    assert str(error) == f"apprise host localhost: {REFUSED}"
    assert server.requests == []


@pytest.fixture
def syslog_server() -> Iterator[tuple[int, list[bytes]]]:
    received: list[bytes] = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.settimeout(0.1)
        stop = threading.Event()

        def read() -> None:
            while not stop.is_set():
                try:
                    received.append(sock.recv(65536))
                except TimeoutError:
                    continue

        thread = threading.Thread(target=read, daemon=True)
        thread.start()
        yield sock.getsockname()[1], received
        stop.set()
        thread.join(5)


def test_an_allowed_syslog_gets_its_datagram_at_the_judged_address(
    resolver: Edges, message, syslog_server
) -> None:
    # rsyslog hands the name to sendto(), which would resolve it in C.
    port, received = syslog_server
    resolver.answers["logs.test"] = [["127.0.0.1"], ["0.0.0.0"]]
    assert send(f"rsyslog://logs.test:{port}", message, allowed=("rsyslog",)) is None
    assert send(f"rsyslog://logs.test:{port}", message, strict=True, allowed=("rsyslog",))
    for _ in range(50):
        if received:
            break
        threading.Event().wait(0.02)
    assert len(received) == 1 and b"api-prod is DOWN" in received[0]
    assert resolver.lookups == ["logs.test", "logs.test"]  # one per send, none more


@pytest.fixture
def garbage_port() -> Iterator[int]:
    """Something that is not HTTP: a banner, then the connection closes."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        server.settimeout(0.1)
        stop = threading.Event()

        def serve_banners() -> None:
            while not stop.is_set():
                try:
                    conn, _ = server.accept()
                except TimeoutError:
                    continue
                with conn:
                    conn.sendall(b"SSH-2.0-OpenSSH_9.2\r\n")

        thread = threading.Thread(target=serve_banners, daemon=True)
        thread.start()
        yield server.getsockname()[1]
        stop.set()
        thread.join(5)


def test_an_error_does_not_tell_a_closed_port_from_an_open_one(
    message, closed_port: int, silent_port: int, garbage_port: int
) -> None:
    # /channels/{id}/test must not be a port scanner's oracle.
    errors = {
        port: send(f"json://127.0.0.1:{port}/", message, timeout=0.5)
        for port in (closed_port, silent_port, garbage_port)
    }
    assert {type(e) for e in errors.values()} == {TemporaryDeliveryError}
    assert {str(e) for e in errors.values()} == {"apprise json 127.0.0.1: no answer"}


def test_an_answer_is_told_by_its_status_and_never_its_body(message) -> None:
    leaky = Receiver(status=403, body=b'{"error": "db_password=hunter2"}')
    with serve(leaky) as internal:
        error = send(f"json://127.0.0.1:{internal.port}/hook", message)
    assert isinstance(error, PermanentDeliveryError)
    assert str(error) == "apprise json 127.0.0.1 answered 403"


def test_control_characters_never_reach_the_service(make_content: Any) -> None:
    content = make_content(
        monitor_name="api\x1b[2J-prod\x07",
        monitor_url="https://api.example.com/\x1b]8;;evil\x07",
        error="expected status in [200], got 503\r\n\x1b[31mFAKE: all good\x9b",
    )
    message = ChannelMessage(content, message_id="<uptime-n42-test@example.com>")
    with serve() as hook:
        assert send(f"json://127.0.0.1:{hook.port}/hook", message) is None
    [got] = hook.requests
    sent = got.json()
    controls = [c for c in sent["title"] + sent["message"] if c != "\n" and not c.isprintable()]
    assert controls == []
    assert sent["title"] == "[Uptime] DOWN: api[2J-prod"
    assert "Error: expected status in [200], got 503  [31mFAKE: all good" in sent["message"]
    assert sent["message"].count("\n") == 4  # the body's own five lines, and no more
