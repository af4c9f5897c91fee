"""``scheme://host:port`` targets (tcp, udp), ``scheme://host`` (ping, dns) and
``host[:port]`` resolvers, parsed.

Shared by validation (schemas) and the probes, so what is accepted is what
is dialled. Raises ValueError with the reason, worded for a field error.
"""

from __future__ import annotations

import ipaddress
import re

from yarl import URL


def parse_host_port_url(url: str, scheme: str) -> tuple[str, int]:
    """(host, port) of ``<scheme>://host:port``; IPv6 hosts in brackets."""
    shape = f"must be {scheme}://host:port"
    try:
        u = URL(url)
        port = u.explicit_port
        host = u.raw_host
    except (ValueError, TypeError):
        raise ValueError(shape) from None
    if u.scheme != scheme or not host or port is None:
        raise ValueError(shape)
    if u.raw_user is not None or u.raw_path not in ("", "/") or u.raw_query_string or u.fragment:
        raise ValueError(f"{shape}, with no user, path or query")
    if not 1 <= port <= 65535:
        raise ValueError("port must be between 1 and 65535")
    return host.removeprefix("[").removesuffix("]"), port


def host_port_url(value: str, scheme: str) -> str:
    """``<scheme>://host:port`` of *value* given as ``host:port`` (``[v6]:port``); a value
    with a scheme is returned as it is, for ``parse_host_port_url`` to judge.

    What a person types for a tcp or udp target (``db.internal:5432``) is stored in
    the one form the probes read.
    """
    if "://" in value:
        return value
    shape = f"must be {scheme}://host:port or host:port"
    if value.startswith("["):
        host, closed, rest = value[1:].partition("]")
        if not closed or ":" not in host or not _is_ip(host):
            raise ValueError(f"{shape}; only an IPv6 address goes in brackets: [2001:db8::1]:22")
        if not rest.startswith(":"):
            raise ValueError(f"{shape}: the port is missing")
        shown, port_text = f"[{host}]", rest[1:]
    else:
        if value.count(":") > 1:
            raise ValueError(f"{shape}, with an IPv6 address in brackets: [2001:db8::1]:22")
        shown, colon, port_text = value.partition(":")
        if not colon:
            raise ValueError(f"{shape}: the port is missing")
        if not _HOST_NAME.fullmatch(shown) and not _is_ip(shown):
            raise ValueError(shape)
    if not port_text:
        raise ValueError(f"{shape}: the port is missing")
    if not port_text.isascii() or not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise ValueError("port must be between 1 and 65535")
    return f"{scheme}://{shown}:{int(port_text)}"


def parse_host_url(url: str, scheme: str) -> str:
    """The host of ``<scheme>://host`` (ping's target, dns's query name).

    The host is a name (letters, digits, ``-``, ``_``, dots, a final dot
    allowed) or an IP address (IPv6 bare or in brackets); one trailing ``/``
    is tolerated, nothing else: no port, user, path or query.
    """
    shape = f"must be {scheme}://host"
    prefix = f"{scheme}://"
    if not url[: len(prefix)].lower() == prefix:
        raise ValueError(shape)
    host = url[len(prefix) :]
    host = host[:-1] if host.endswith("/") else host
    if host.startswith("[") and host.endswith("]"):
        inner = host[1:-1]
        if ":" in inner and _is_ip(inner):
            return inner
        raise ValueError(shape)
    if _HOST_NAME.fullmatch(host) or _is_ip(host):
        return host
    raise ValueError(shape)


def parse_host_port(value: str, default_port: int) -> tuple[str, int]:
    """(host, port) of ``host``, ``host:port``, ``v6``, ``[v6]`` or ``[v6]:port``."""
    shape = "must be host or host:port"
    port_text: str | None = None
    if value.startswith("["):
        host, _, rest = value[1:].partition("]")
        if rest:
            if not rest.startswith(":"):
                raise ValueError(shape)
            port_text = rest[1:]
    elif value.count(":") > 1:
        host = value
    else:
        host, colon, port_text_ = value.partition(":")
        port_text = port_text_ if colon else None
    if not _HOST_NAME.fullmatch(host) and not _is_ip(host):
        raise ValueError(shape)
    if port_text is None:
        return host, default_port
    if not port_text.isascii() or not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise ValueError("port must be between 1 and 65535")
    return host, int(port_text)


_HOST_NAME = re.compile(
    r"(?=.{1,253}$)[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?(\.[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?)*\.?"
)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True
