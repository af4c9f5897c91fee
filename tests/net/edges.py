"""net/socket_guard's edges stubbed: a resolver that answers from a table, dials that are
only recorded. Refused addresses (169.254.169.254, 10.0.0.5) are never dialled for real."""

from __future__ import annotations

import errno
import socket
from dataclasses import dataclass, field
from typing import Any

import pytest

from uptime_server.net import socket_guard


@dataclass
class Edges:
    """The stubbed resolver and dial: what was looked up and what was dialled."""

    answers: dict[str, list[list[str]]] = field(default_factory=dict)
    lookups: list[str] = field(default_factory=list)
    dialled: list[Any] = field(default_factory=list)

    def getaddrinfo(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> list[Any]:
        self.lookups.append(host)
        queue = self.answers.get(host)
        if not queue:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        ips = queue.pop(0) if len(queue) > 1 else queue[0]
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, int(port or 0))) for ip in ips]

    def connect(self, sock: socket.socket, address: Any) -> None:
        self.dialled.append(address)
        raise ConnectionRefusedError(errno.ECONNREFUSED, "stubbed: nothing is dialled")

    def connect_ex(self, sock: socket.socket, address: Any) -> int:
        self.dialled.append(address)
        return errno.ECONNREFUSED

    def sendto(self, sock: socket.socket, data: Any, *args: Any) -> int:
        self.dialled.append(args[-1])
        return len(data)


def stub_edges(monkeypatch: pytest.MonkeyPatch) -> Edges:
    """The guard's resolver answers from ``Edges.answers``; its dials are only recorded."""
    stub = Edges()
    monkeypatch.setattr(socket_guard, "system_getaddrinfo", stub.getaddrinfo)
    monkeypatch.setattr(socket_guard, "_connect", stub.connect)
    monkeypatch.setattr(socket_guard, "_connect_ex", stub.connect_ex)
    monkeypatch.setattr(socket_guard, "_sendto", stub.sendto)
    return stub
