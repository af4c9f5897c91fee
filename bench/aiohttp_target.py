"""The fallback bench target: 200 "ok" over HTTP and HTTPS (argv: ports, cert, key).

``/nested`` answers ``NESTED_JSON`` (see ``bench.target``) for JSONPath benchmarks.
"""

from __future__ import annotations

import asyncio
import ssl
import sys

from aiohttp import web

from bench.target import NESTED_JSON


async def _ok(request: web.Request) -> web.Response:
    return web.Response(text="ok")


async def _nested(request: web.Request) -> web.Response:
    return web.Response(text=NESTED_JSON, content_type="application/json")


async def _serve(http_port: int, https_port: int, context: ssl.SSLContext) -> None:
    app = web.Application()
    app.router.add_get("/nested", _nested)
    app.router.add_route("*", "/{tail:.*}", _ok)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", http_port, backlog=4096).start()
    await web.TCPSite(runner, "127.0.0.1", https_port, ssl_context=context, backlog=4096).start()
    await asyncio.Event().wait()


def main() -> None:
    http_port, https_port, cert, key = sys.argv[1:5]
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    asyncio.run(_serve(int(http_port), int(https_port), context))


if __name__ == "__main__":
    main()
