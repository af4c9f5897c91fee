"""One request to a webhook URL a user typed, through the SSRF guard.

A webhook URL is user input like a monitor URL, so its connection goes through
the probes' guard (docs/api.md#outbound-safety), all three walls of it:

- the URL passes `check_url` (http(s) only; IP-literal hosts judged);
- `GuardedResolver` resolves the name once, checks every address of the
  answer and hands exactly those to the connector. The address dialled is one
  that was checked: there is no second lookup for DNS rebinding to answer;
- `GuardedSocketFactory` checks the address once more at connect().

TLS and HTTP still speak to the name: SNI, certificate verification and the
Host header are the URL's host, not the address. Nothing comes from the
environment: no proxy (it would resolve the name itself, behind the guard's
back) and no .netrc credentials.

Synchronous, for the delivery loop's thread: each post runs on an event loop
of its own. Failures are the libraries' exceptions; the transport using this
turns them into delivery errors.

The reply's body is not kept: the status is all a delivery needs, and a body
nobody holds cannot be quoted back to the user who pointed the channel at an
internal service.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Mapping
from dataclasses import dataclass

import aiohttp
from multidict import CIMultiDict
from yarl import URL

from uptime_server.net.guard import GuardedResolver, GuardedSocketFactory, check_url


@dataclass(frozen=True)
class WebhookReply:
    status: int
    headers: CIMultiDict[str]


def send(
    url: str,
    method: str,
    headers: Mapping[str, str],
    body: bytes,
    *,
    timeout: float,
    block_private: bool,
    ssl_context: ssl.SSLContext | None = None,
) -> WebhookReply:
    """Send *body* with *method* and *headers*; redirects are not followed.

    Raises `TargetNotAllowed` for a refused target, `TimeoutError` when the
    whole exchange took longer than *timeout* seconds, `aiohttp.ClientError`
    or `OSError` for network and protocol trouble, `ValueError` for a URL
    that cannot be requested.
    """
    target = check_url(URL(url), block_private=block_private)
    request = _Request(method, dict(headers), body)
    return asyncio.run(_send(target, request, timeout, block_private, ssl_context))


@dataclass(frozen=True)
class _Request:
    method: str
    headers: dict[str, str]
    body: bytes


async def _send(
    url: URL,
    request: _Request,
    timeout: float,
    block_private: bool,
    ssl_context: ssl.SSLContext | None,
) -> WebhookReply:
    connector = aiohttp.TCPConnector(
        resolver=GuardedResolver(block_private=block_private),
        socket_factory=GuardedSocketFactory(block_private=block_private),
        use_dns_cache=False,
        force_close=True,
    )
    async with (
        aiohttp.ClientSession(
            connector=connector,
            cookie_jar=aiohttp.DummyCookieJar(),
            trust_env=False,
            timeout=aiohttp.ClientTimeout(total=timeout),
        ) as session,
        session.request(
            request.method,
            url,
            data=request.body,
            headers=request.headers,
            allow_redirects=False,
            ssl=ssl_context if ssl_context is not None else True,
        ) as response,
    ):
        return WebhookReply(response.status, CIMultiDict(response.headers))
