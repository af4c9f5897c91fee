"""(a) The raw ceiling: plain aiohttp, a fresh connection per request, requests/s."""

from __future__ import annotations

import asyncio
import ssl
import time

import aiohttp


async def _measure(url: str, ca_file: str, concurrency: int, seconds: float) -> tuple[float, float]:
    context = ssl.create_default_context(cafile=ca_file)
    connector = aiohttp.TCPConnector(force_close=True, limit=0, use_dns_cache=False)
    done = 0
    failed = 0
    async with aiohttp.ClientSession(connector=connector) as session:
        deadline = time.perf_counter() + seconds

        async def worker() -> None:
            nonlocal done, failed
            while time.perf_counter() < deadline:
                try:
                    async with session.get(url, ssl=context) as resp:
                        await resp.read()
                        done += 1
                except aiohttp.ClientError:
                    failed += 1

        started, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    if failed:
        print(f"    ({failed} requests failed)")
    return done / elapsed, cpu / max(done, 1)


def raw_ceiling(url: str, ca_file: str, *, concurrency: int, seconds: float) -> tuple[float, float]:
    """(requests/s, CPU seconds of this process per request)."""
    return asyncio.run(_measure(url, ca_file, concurrency, seconds))
