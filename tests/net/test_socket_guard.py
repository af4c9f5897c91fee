"""net/socket_guard: the guard for code that dials by itself, unit by unit.

Verdicts on refused addresses are taken with the resolver and the dial
stubbed at the module's edges (``system_getaddrinfo``, ``_connect``,
``_sendto``): nothing here connects anywhere but 127.0.0.1.
"""

from __future__ import annotations

import errno
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
import requests

from tests.net.edges import Edges, stub_edges
from tests.notify.receivers import serve
from uptime_server.net import socket_guard
from uptime_server.net.guard import TARGET_NOT_ALLOWED

REFUSED_LITERALS = [
    "169.254.169.254",
    "2852039166",  # 169.254.169.254 as one number
    "0xa9fea9fe",
    "0251.0376.0251.0376",
    "169.254.169.254.",
    "[::ffff:169.254.169.254]",  # IPv4-mapped
    "::ffff:a9fe:a9fe",
    "64:ff9b::a9fe:a9fe",  # NAT64
    "[2002:a9fe:a9fe::]",  # 6to4
    "fe80::1",
    "0.0.0.0",
]
PRIVATE_LITERALS = ["10.0.0.5", "127.0.0.1", "127.1", "::1", "[::ffff:10.0.0.5]", "192.168.1.1"]


@pytest.fixture
def edges(monkeypatch: pytest.MonkeyPatch) -> Edges:
    return stub_edges(monkeypatch)


def refused(call: Any) -> OSError:
    with pytest.raises(OSError) as excinfo:
        call()
    assert excinfo.value.errno == errno.EACCES
    assert TARGET_NOT_ALLOWED in str(excinfo.value)
    return excinfo.value


@pytest.mark.parametrize("host", REFUSED_LITERALS)
def test_an_address_refused_on_every_server_is_refused_in_any_spelling(edges, host) -> None:
    with socket_guard.guarded(block_private=False) as scope:
        refused(lambda: socket.getaddrinfo(host, 80))
        refused(lambda: socket.create_connection((host.strip("[]"), 80)))
    assert host in scope.refused
    assert edges.dialled == [] and edges.lookups == []


@pytest.mark.parametrize("host", PRIVATE_LITERALS)
def test_private_addresses_are_refused_only_when_private_targets_are_blocked(edges, host) -> None:
    with socket_guard.guarded(block_private=True):
        refused(lambda: socket.getaddrinfo(host, 80))
    with socket_guard.guarded(block_private=False) as scope:
        [info, *_] = socket.getaddrinfo(host, 80, type=socket.SOCK_STREAM)
    assert scope.allowed == [host] and scope.refused == []
    assert info[4][1] == 80


def test_a_name_is_judged_on_every_address_of_its_answer(edges) -> None:
    edges.answers["mixed.test"] = [["93.184.216.34", "169.254.169.254"]]
    edges.answers["inside.test"] = [["10.0.0.5"]]
    with socket_guard.guarded(block_private=True) as scope:
        refused(lambda: socket.getaddrinfo("mixed.test", 443))
        refused(lambda: socket.create_connection(("inside.test", 25)))
    assert scope.refused == ["mixed.test", "inside.test"]
    assert edges.dialled == []


def test_a_name_is_resolved_once_per_scope_and_its_answer_kept(edges) -> None:
    # The second answer would rebind the name to an address that is always refused.
    edges.answers["rebind.test"] = [["127.0.0.1"], ["0.0.0.0"]]
    with socket_guard.guarded(block_private=False):
        first = socket.getaddrinfo("rebind.test", 80, type=socket.SOCK_STREAM)
        second = socket.getaddrinfo("REBIND.test.", 8080, type=socket.SOCK_STREAM)
        for _ in range(2):
            with pytest.raises(ConnectionRefusedError):
                socket.create_connection(("rebind.test", 80))
    assert edges.lookups == ["rebind.test"]
    assert [i[4] for i in first] == [("127.0.0.1", 80)]
    assert [i[4] for i in second] == [("127.0.0.1", 8080)]
    assert edges.dialled == [("127.0.0.1", 80), ("127.0.0.1", 80)]
    # A new scope asks again.
    with socket_guard.guarded(block_private=False):
        refused(lambda: socket.getaddrinfo("rebind.test", 80))


def test_a_name_handed_to_connect_or_sendto_is_dialled_as_the_judged_address(edges) -> None:
    # The C library would resolve such a name itself, behind the guard's back.
    edges.answers["irc.test"] = [["127.0.0.1"]]
    edges.answers["syslog.test"] = [["127.0.0.2"]]
    edges.answers["evil.test"] = [["10.0.0.5"]]
    with socket_guard.guarded(block_private=False):
        with socket.socket() as tcp, pytest.raises(ConnectionRefusedError):
            tcp.connect(("irc.test", 6667))
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            udp.sendto(b"<14>hello", ("syslog.test", 514))
            udp.sendto(b"<14>hello", 0, ("syslog.test", 514))
    with socket_guard.guarded(block_private=True):
        with socket.socket() as tcp:
            refused(lambda: tcp.connect(("evil.test", 6667)))
            refused(lambda: tcp.connect_ex(("10.0.0.5", 6667)))
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
            refused(lambda: udp.sendto(b"x", ("evil.test", 514)))
    assert edges.dialled == [("127.0.0.1", 6667), ("127.0.0.2", 514), ("127.0.0.2", 514)]


def test_a_unix_socket_is_refused_in_a_scope(edges, tmp_path) -> None:
    with socket_guard.guarded(block_private=False), socket.socket(socket.AF_UNIX) as sock:
        refused(lambda: sock.connect(str(tmp_path / "bus")))


def test_outside_a_scope_nothing_is_judged() -> None:
    # Loopback, refused by a strict scope, is dialled as usual without one.
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        port = server.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
    assert socket_guard.current() is None


def test_a_scope_belongs_to_its_thread(edges) -> None:
    entered, checked = threading.Event(), threading.Event()
    seen: list[Any] = []

    def other_thread() -> None:
        entered.wait(5)
        seen.append(socket_guard.current())
        # Not judged here: the strict scope is the other thread's.
        seen.append(socket.getaddrinfo("127.0.0.1", 80, type=socket.SOCK_STREAM)[0][4])
        checked.set()

    thread = threading.Thread(target=other_thread)
    thread.start()
    with socket_guard.guarded(block_private=True):
        entered.set()
        checked.wait(5)
        refused(lambda: socket.getaddrinfo("127.0.0.1", 80))
    thread.join(5)
    assert seen == [None, ("127.0.0.1", 80)]


def test_scopes_do_not_nest() -> None:
    with (
        socket_guard.guarded(block_private=False),
        pytest.raises(RuntimeError),
        socket_guard.guarded(block_private=True),
    ):
        pass


@pytest.fixture
def proxy_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    with serve() as proxy:
        for var in ("NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy"):
            monkeypatch.delenv(var, raising=False)
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.setenv("http_proxy", proxy.url)
        yield proxy


def test_requests_in_a_scope_take_no_proxy_from_the_environment(proxy_env) -> None:
    # A proxy would resolve the target itself, where the guard cannot see.
    with serve() as target:
        requests.post(f"{target.url}/outside", timeout=5)
        assert [r.path for r in proxy_env.requests] == [f"{target.url}/outside"]
        with socket_guard.guarded(block_private=False) as scope:
            reply = requests.post(f"{target.url}/inside", timeout=5)
    assert reply.status_code == 200 and scope.statuses == [200]
    assert [r.path for r in target.requests] == ["/inside"]
    assert len(proxy_env.requests) == 1
