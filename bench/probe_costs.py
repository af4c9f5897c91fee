"""The probe's CPU per check beside the bare aiohttp client: ``python -m bench.probe_costs``.

Starts the bench target (``bench.target``) in its own process, then in this
process, alternating, for ``--rounds`` rounds of ``--seconds`` each:

- raw: the ``bench-checks`` (a) client (plain aiohttp, a fresh connection per
  request, ``--concurrency`` workers);
- probe: ``Prober.run`` of a ``CheckSpec`` of the same URL, by as many
  workers, with the engine's process-wide Prober (its connector, the SSRF
  guard, the certificate read, the pass rules);

and prints the CPU of this process per request and per check (best of the
rounds). No database, no scheduler, no recorder: the figure moves with the
probe's code, and the target's CPU is in another process. ``--profile``
prints the top of a cProfile of one probe round.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import tempfile
import time
from pathlib import Path

from bench.raw_ceiling import raw_ceiling
from bench.target import start_target
from uptime_server.checks.types import CheckSpec
from uptime_server.engine.probe import ProbeConfig, Prober


async def _probe_round(
    url: str, ca_file: str, concurrency: int, seconds: float
) -> tuple[float, float, int]:
    spec = CheckSpec(url=url, type="https" if url.startswith("https") else "http", timeout=10)
    failed = 0
    done = 0
    async with Prober(ProbeConfig(ca_bundle=ca_file)) as prober:
        await prober.attempt(spec)  # the session and the TLS contexts, built once
        deadline = time.perf_counter() + seconds

        async def worker() -> None:
            nonlocal done, failed
            while time.perf_counter() < deadline:
                result = await prober.run(spec)
                if result.passed:
                    done += 1
                else:
                    failed += 1

        started, cpu = time.perf_counter(), time.process_time()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    return done / elapsed, cpu / max(done, 1), failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scheme", choices=("http", "https", "both"), default="both")
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=4)
    parser.add_argument("--rounds", type=int, default=3, help="best of N")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="uptime-probe-costs-"))
    target = start_target(workdir, prefer_nginx=True)
    try:
        schemes = ("http", "https") if args.scheme == "both" else (args.scheme,)
        for scheme in schemes:
            url = target.http_url if scheme == "http" else target.https_url
            raws, probes = [], []
            for _ in range(args.rounds):
                raws.append(
                    raw_ceiling(
                        url, target.ca_file, concurrency=args.concurrency, seconds=args.seconds
                    )
                )
                probes.append(
                    asyncio.run(_probe_round(url, target.ca_file, args.concurrency, args.seconds))
                )
            raw_cpu = min(cpu for _, cpu in raws)
            probe_cpu = min(cpu for _, cpu, _ in probes)
            failed = sum(f for _, _, f in probes)
            print(
                f"{scheme.upper():5} raw   {max(r for r, _ in raws):6.0f} req/s     "
                f"{raw_cpu * 1e6:5.0f} µs CPU per request   rounds: "
                + " ".join(f"{cpu * 1e6:.0f}" for _, cpu in raws)
            )
            print(
                f"{scheme.upper():5} probe {max(r for r, _, _ in probes):6.0f} checks/s  "
                f"{probe_cpu * 1e6:5.0f} µs CPU per check     rounds: "
                + " ".join(f"{cpu * 1e6:.0f}" for _, cpu, _ in probes)
                + f"   probe/raw {probe_cpu / raw_cpu:.2f}"
                + (f"   ({failed} checks failed)" if failed else "")
            )
            if args.profile:
                profile = cProfile.Profile()
                profile.enable()
                asyncio.run(_probe_round(url, target.ca_file, args.concurrency, args.seconds))
                profile.disable()
                pstats.Stats(profile).sort_stats("tottime").print_stats(25)
    finally:
        target.stop()


if __name__ == "__main__":
    main()
