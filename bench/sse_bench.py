"""SSE benchmark: many concurrent SSE connections, each receiving one event per interval.

Starts ``mockd engine`` with one SSE mock (``generator: sequence``, ``timing.fixedDelay`` =
the interval, ``lifecycle.maxEvents`` = duration / interval) and opens N connections from a
lean asyncio client (raw sockets, no HTTP library, so the client costs little of the shared
CPU). Reports:

* connections opened and events received (expected: N × events), errors;
* lateness of events against their schedule: event k of a connection is due k × interval
  after the client sent its request; lateness = arrival − due (ms; p50, p99, max; it includes
  connecting and the client's own scheduling); jitter = lateness minus the connection's
  smallest lateness (p50, p99: drift and spread without the constant offset);
* server process RSS (before the connections, peak, per connection) and CPU (% of one core
  over the streaming window), read from /proc.

Issue 7 target: ``--connections 1000 --duration 30`` (the default). The SSE connection limit
(100, behavior notes §9) is lifted for the run with ``MOCKD_SSE_MAX_CONNECTIONS``.

Usage: python bench/sse_bench.py [--connections 1000] [--duration 30] [--interval-ms 1000]
                                 [--pin] [--out bench/out/sse_results.json]
``--pin`` puts the server on core 0 and this client on core 1 (needs taskset). Linux only
(/proc).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
MOCKD = str(Path(sys.executable).parent / "mockd")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


def bench_config(events: int, interval_ms: int) -> dict:
    return {"version": "1.0", "mocks": [{"id": "ticks", "http": {
        "matcher": {"method": "GET", "path": "/ticks"},
        "sse": {"generator": {"type": "sequence", "count": max(events, 1)},
                "timing": {"fixedDelay": interval_ms},
                "lifecycle": {"maxEvents": events}}}}]}


def process_rss_bytes(pid: int) -> int:
    """Resident set size of ``pid`` in bytes (/proc/<pid>/statm)."""
    with open(f"/proc/{pid}/statm") as statm:
        return int(statm.read().split()[1]) * PAGE_SIZE


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds used by ``pid`` so far (/proc/<pid>/stat)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def percentile(values: list[float], fraction: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, int(round(fraction * (len(ordered) - 1)))))
    return ordered[index]


class Results:
    def __init__(self) -> None:
        self.lateness_ms: list[float] = []
        self.jitter_ms: list[float] = []
        self.events = 0
        self.opened = 0
        self.completed = 0
        self.errors: dict[str, int] = {}

    def error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1


async def one_connection(host: str, port: int, interval: float, events: int,
                         results: Results, deadline: float) -> None:
    """Open one SSE stream and time every ``data:`` line against its schedule."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 10)
    except (OSError, asyncio.TimeoutError) as error:
        results.error(f"connect: {type(error).__name__}")
        return
    try:
        writer.write(f"GET /ticks HTTP/1.1\r\nHost: {host}:{port}\r\n"
                     f"Accept: text/event-stream\r\n\r\n".encode())
        # The schedule starts when the request leaves: event k is due k intervals later.
        started = time.perf_counter()  # uvloop's loop.time() has only ms resolution
        status = await asyncio.wait_for(reader.readline(), 10)
        if b" 200 " not in status:
            results.error(f"status: {status.strip().decode(errors='replace')}")
            return
        while (await asyncio.wait_for(reader.readline(), 10)).strip():
            pass  # headers
        results.opened += 1
        received = 0
        offsets: list[float] = []
        while received < events:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                results.error("timeout")
                return
            line = await asyncio.wait_for(reader.readline(), remaining)
            if not line:
                results.error("closed early")
                return
            if line.startswith(b"data: "):
                received += 1
                results.events += 1
                offset = time.perf_counter() - started - received * interval
                offsets.append(offset)
                results.lateness_ms.append(offset * 1000)
        results.completed += 1
        best = min(offsets)
        results.jitter_ms.extend((offset - best) * 1000 for offset in offsets)
    except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError) as error:
        results.error(f"read: {type(error).__name__}")
    finally:
        writer.close()


async def run_clients(host: str, port: int, connections: int, interval: float, events: int,
                      ramp_per_second: int) -> Results:
    results = Results()
    deadline = time.perf_counter() + events * interval + connections / ramp_per_second + 30
    tasks = []
    batch = max(1, ramp_per_second // 20)
    for start in range(0, connections, batch):
        for _ in range(min(batch, connections - start)):
            tasks.append(asyncio.create_task(one_connection(host, port, interval, events,
                                                            results, deadline)))
        await asyncio.sleep(0.05)
    await asyncio.gather(*tasks)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=1000)
    parser.add_argument("--duration", type=int, default=30, help="seconds of events per stream")
    parser.add_argument("--interval-ms", type=int, default=1000, help="ms between events")
    parser.add_argument("--ramp", type=int, default=500, help="new connections per second")
    parser.add_argument("--pin", action="store_true", help="server on core 0, client core 1")
    parser.add_argument("--out", default=str(HERE / "out" / "sse_results.json"))
    options = parser.parse_args()
    interval = options.interval_ms / 1000.0
    events = max(1, round(options.duration / interval))

    # Both processes hold one socket per connection: lift the soft file limit to the hard one
    # (the server inherits it).
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = options.connections + 256
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted if hard == resource.RLIM_INFINITY
                                                    else min(wanted, hard), hard))
    workdir = Path(tempfile.mkdtemp(prefix="mockd-sse-bench-"))
    config_path = workdir / "sse.yaml"
    config_path.write_text(yaml.safe_dump(bench_config(events, options.interval_ms)))
    env = {**os.environ, "MOCKD_SSE_MAX_CONNECTIONS": str(options.connections + 10),
           "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
    command = [MOCKD, "engine", "-c", str(config_path), "--host", "127.0.0.1", "--port", "0",
               "--print-url"]
    if options.pin and shutil.which("taskset"):
        command = ["taskset", "-c", "0", *command]
        os.sched_setaffinity(0, {1})
    server = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              env=env, text=True)
    try:
        url = server.stdout.readline().strip()
        if not url.startswith("http://"):
            print(f"the engine did not start (exit {server.poll()})", file=sys.stderr)
            return 1
        host, port = url.removeprefix("http://").rsplit(":", 1)
        time.sleep(0.5)
        rss_before = process_rss_bytes(server.pid)
        rss_peak = rss_before
        cpu_before = process_cpu_seconds(server.pid)
        wall_before = time.monotonic()
        client_before = resource.getrusage(resource.RUSAGE_SELF)

        async def measured() -> Results:
            nonlocal rss_peak
            clients = asyncio.create_task(run_clients(host, int(port), options.connections,
                                                      interval, events, options.ramp))
            while not clients.done():
                rss_peak = max(rss_peak, process_rss_bytes(server.pid))
                await asyncio.wait({clients}, timeout=1.0)
            return clients.result()

        try:
            import uvloop
            results = uvloop.run(measured())
        except ImportError:
            results = asyncio.run(measured())
        wall = time.monotonic() - wall_before
        cpu = process_cpu_seconds(server.pid) - cpu_before
        client_after = resource.getrusage(resource.RUSAGE_SELF)
        client_cpu = (client_after.ru_utime + client_after.ru_stime
                      - client_before.ru_utime - client_before.ru_stime)
    finally:
        server.terminate()
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(workdir, ignore_errors=True)

    lateness = results.lateness_ms
    report = {
        "connections": options.connections, "durationSeconds": options.duration,
        "intervalMs": options.interval_ms, "eventsPerConnection": events,
        "opened": results.opened, "completed": results.completed,
        "eventsReceived": results.events, "eventsExpected": options.connections * events,
        "errors": results.errors,
        "latenessMs": {"p50": round(percentile(lateness, 0.50), 2),
                       "p99": round(percentile(lateness, 0.99), 2),
                       "max": round(max(lateness), 2) if lateness else None,
                       "mean": round(statistics.fmean(lateness), 2) if lateness else None},
        "jitterMs": {"p50": round(percentile(results.jitter_ms, 0.50), 2),
                     "p99": round(percentile(results.jitter_ms, 0.99), 2)},
        "serverRssMiB": {"before": round(rss_before / 2**20, 1),
                         "peak": round(rss_peak / 2**20, 1),
                         "perConnectionKiB": round((rss_peak - rss_before) / 1024
                                                   / max(options.connections, 1), 1)},
        "serverCpuPercentOfOneCore": round(100 * cpu / wall, 1),
        "clientCpuPercentOfOneCore": round(100 * client_cpu / wall, 1),
        "wallSeconds": round(wall, 1), "pinned": bool(options.pin and shutil.which("taskset")),
    }
    Path(options.out).parent.mkdir(parents=True, exist_ok=True)
    Path(options.out).write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    ok = not results.errors and results.events == options.connections * events
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
