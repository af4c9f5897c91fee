"""A real DNS server on 127.0.0.1 for the dns probe's tests: UDP and TCP on one port.

Built from dnspython's message and rrset pieces, so every answer is a real
DNS message on the wire. It serves the fixed records in `RECORDS` and:

- NXDOMAIN for names it does not know, an empty NOERROR answer for a known
  name asked for a type it lacks;
- SERVFAIL for `fail.example.test.`;
- a reply that is not a DNS message for `garbage.example.test.`;
- the answer for `slow.example.test.` after `slow_delay` seconds;
- `wrong.example.test.` A 10.9.9.9 where a check expects 192.0.2.1;
- over UDP, an answer longer than 512 bytes (`big.example.test.` TXT) truncated
  (TC set, no records), so a client has to ask again over TCP.

The addresses in the records are answer data only; nothing ever connects to
them. `queries` logs every question received, for tests that assert nothing
was sent.
"""

from __future__ import annotations

import socket
import socketserver
import struct
import threading
import time
from typing import Any

import dns.exception
import dns.flags
import dns.message
import dns.name
import dns.rcode
import dns.rdatatype
import dns.rrset

ZONE = "example.test."
SLOW_NAME = "slow.example.test."
FAIL_NAME = "fail.example.test."
GARBAGE_NAME = "garbage.example.test."
UDP_LIMIT = 512  # bytes: the classic DNS limit for a query without EDNS

_BIG_TXT = " ".join(f'"{"x" * 60}-{n}"' for n in range(12))  # ~750 bytes on the wire

RECORDS = (
    "example.test. 300 A 192.0.2.1",
    "example.test. 300 AAAA 2001:db8:0:0:0:0:0:1",
    "example.test. 300 MX 10 mail.example.test.",
    "example.test. 300 MX 20 Backup.Example.Test.",
    "example.test. 300 NS ns1.example.test.",
    "example.test. 300 NS ns2.example.test.",
    'example.test. 300 TXT "v=spf1 -all"',
    'example.test. 300 TXT "hello " "world"',
    "example.test. 300 SOA ns1.example.test. hostmaster.example.test."
    " 2026112401 3600 600 86400 300",
    'example.test. 300 CAA 0 issue "letsencrypt.org"',
    "www.example.test. 300 CNAME example.test.",
    "mail.example.test. 300 A 192.0.2.25",
    "_sip._tcp.example.test. 300 SRV 10 5 5060 sip.example.test.",
    "1.2.0.192.in-addr.arpa. 300 PTR example.test.",
    "wrong.example.test. 300 A 10.9.9.9",
    "slow.example.test. 300 A 192.0.2.1",
    f"big.example.test. 300 TXT {_BIG_TXT}",
)


def _load(records: tuple[str, ...]) -> dict[tuple[dns.name.Name, int], dns.rrset.RRset]:
    zone: dict[tuple[dns.name.Name, int], dns.rrset.RRset] = {}
    for line in records:
        name, ttl, rdtype, rdata = line.split(" ", 3)
        rrset = dns.rrset.from_text(name, int(ttl), "IN", rdtype, rdata)
        key = (rrset.name, rrset.rdtype)
        if key in zone:
            zone[key].union_update(rrset)
        else:
            zone[key] = rrset
    return zone


class DnsServer:
    """Serves `RECORDS` on 127.0.0.1, UDP and TCP on the same free port, in threads."""

    host = "127.0.0.1"

    def __init__(self, *, slow_delay: float = 1.0) -> None:
        self.slow_delay = slow_delay
        self.zone = _load(RECORDS)
        self.names = {name for name, _ in self.zone}
        self.queries: list[tuple[str, str, str]] = []  # (transport, name, type)
        self._lock = threading.Lock()
        self._udp, self._tcp = self._bind()
        self.port: int = self._udp.server_address[1]
        self._threads = [
            threading.Thread(target=server.serve_forever, daemon=True)
            for server in (self._udp, self._tcp)
        ]
        for thread in self._threads:
            thread.start()

    @property
    def address(self) -> str:
        """The `host:port` a dns monitor names as its resolver."""
        return f"{self.host}:{self.port}"

    def _bind(self) -> tuple[socketserver.UDPServer, socketserver.TCPServer]:
        # A free UDP port, then TCP on the same number; retried in the rare
        # case another process holds that TCP port.
        for _ in range(20):
            udp = _UDPServer((self.host, 0), _UDPHandler, self)
            try:
                tcp = _TCPServer((self.host, udp.server_address[1]), _TCPHandler, self)
            except OSError:
                udp.server_close()
                continue
            return udp, tcp
        raise RuntimeError("no port free for both UDP and TCP")

    def stop(self) -> None:
        for server in (self._udp, self._tcp):
            server.shutdown()
            server.server_close()
        for thread in self._threads:
            thread.join(timeout=5)

    def queries_for(self, name: str) -> list[tuple[str, str, str]]:
        with self._lock:
            return [query for query in self.queries if query[1] == name]

    def respond(self, wire: bytes, transport: str) -> bytes | None:
        """The response's wire form for a query's wire form; None for garbage (dropped)."""
        try:
            query = dns.message.from_wire(wire)
        except dns.exception.DNSException:
            return None
        if not query.question:
            return None
        question = query.question[0]
        with self._lock:
            self.queries.append(
                (transport, question.name.to_text(), dns.rdatatype.to_text(question.rdtype))
            )
        if question.name == dns.name.from_text(GARBAGE_NAME):
            # The query's id and a response flag, then bytes that are no DNS message.
            return wire[:2] + b"\x81\x80" + b"\x00\x01\x00\x09 not a DNS message \x1b[31m"
        if question.name == dns.name.from_text(SLOW_NAME):
            time.sleep(self.slow_delay)
        response = self._answer(query, question.name, question.rdtype)
        if transport == "udp":
            limit = max(UDP_LIMIT, query.payload) if query.edns >= 0 else UDP_LIMIT
            try:
                return response.to_wire(max_size=limit)
            except dns.exception.TooBig:
                truncated = dns.message.make_response(query)
                truncated.flags |= dns.flags.TC | dns.flags.RA
                return truncated.to_wire()
        return response.to_wire()

    def _answer(self, query: dns.message.Message, name: dns.name.Name, rdtype: int) -> Any:
        response = dns.message.make_response(query)
        response.flags |= dns.flags.RA | dns.flags.AA
        if name == dns.name.from_text(FAIL_NAME):
            response.set_rcode(dns.rcode.SERVFAIL)
            return response
        if name not in self.names:
            response.set_rcode(dns.rcode.NXDOMAIN)
            return response
        # Follow CNAMEs inside the zone, as a recursive resolver would.
        for _ in range(8):
            cname = self.zone.get((name, dns.rdatatype.CNAME))
            if cname is None or rdtype == dns.rdatatype.CNAME:
                break
            response.answer.append(cname)
            name = cname[0].target
        rrset = self.zone.get((name, rdtype))
        if rrset is not None:
            response.answer.append(rrset)
        return response


class _UDPServer(socketserver.ThreadingUDPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, address: tuple[str, int], handler: type, dns_server: DnsServer) -> None:
        self.dns_server = dns_server
        super().__init__(address, handler)


class _TCPServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], handler: type, dns_server: DnsServer) -> None:
        self.dns_server = dns_server
        super().__init__(address, handler)


class _UDPHandler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        wire, sock = self.request
        reply = self.server.dns_server.respond(wire, "udp")  # type: ignore[attr-defined]
        if reply is not None:
            sock.sendto(reply, self.client_address)


class _TCPHandler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        sock: socket.socket = self.request
        while True:  # one connection may carry several queries (RFC 7766)
            header = _read_exactly(sock, 2)
            if header is None:
                return
            wire = _read_exactly(sock, struct.unpack("!H", header)[0])
            if wire is None:
                return
            reply = self.server.dns_server.respond(wire, "tcp")  # type: ignore[attr-defined]
            if reply is None:
                return
            sock.sendall(struct.pack("!H", len(reply)) + reply)


def _read_exactly(sock: socket.socket, count: int) -> bytes | None:
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            return None
        data += chunk
    return data
