"""Admin writes against a large config: cost of one ``POST /mocks`` and the data plane's p99
while admin writes are coming in.

Starts ``mockd start`` (persisted, API key off) on free loopback ports, stores ``--mocks``
mocks with ``POST /mocks/bulk``, then:

1. times ``--writes`` sequential ``POST /mocks`` calls (each adds one mock; the time is the
   client's round trip on loopback, an upper bound of the server-side time), reporting the
   median and p95 in ms, and the server's own ``X-Response-Time``-free view through the same
   figures;
2. measures ``GET`` latencies of a static mock on the data plane, one request at a time, while
   a second thread sends a burst of ``--burst`` admin writes, and reports their p50/p99 in ms
   beside a baseline measured without writes.

Only 127.0.0.1 is contacted; every loop is bounded in count and time.

Usage: ``.venv/bin/python bench/admin_writes.py [--mocks 10000] [--writes 50] [--burst 100]``
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
MOCKD = str(Path(sys.executable).parent / "mockd")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def wait_healthy(url: str, deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=1.0, trust_env=False).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"server did not become healthy at {url}")


def mock(number: int) -> dict:
    path = f"/bench/{number}" if number % 2 else f"/bench/{number}/{{id}}"
    return {"id": f"bench-{number}", "type": "http",
            "http": {"matcher": {"method": "GET", "path": path},
                     "response": {"statusCode": 200, "body": {"n": number}}}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mocks", type=int, default=10_000)
    parser.add_argument("--writes", type=int, default=50)
    parser.add_argument("--burst", type=int, default=100)
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="mockd-bench-"))
    port, admin_port = free_port(), free_port()
    env = {**os.environ, "HOME": str(workdir), "NO_PROXY": "127.0.0.1"}
    server = subprocess.Popen([MOCKD, "start", "--port", str(port), "--admin-port",
                               str(admin_port), "--data-dir", str(workdir / "data"),
                               "--no-auth", "--log-level", "error"],
                              env=env, cwd=workdir, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    admin_url, data_url = f"http://127.0.0.1:{admin_port}", f"http://127.0.0.1:{port}"
    try:
        wait_healthy(admin_url + "/health", time.monotonic() + 60)
        admin = httpx.Client(base_url=admin_url, timeout=120.0, trust_env=False)
        data = httpx.Client(base_url=data_url, timeout=10.0, trust_env=False)
        started = time.perf_counter()
        for first in range(0, args.mocks, 2_000):
            batch = [mock(number) for number in range(first, min(args.mocks, first + 2_000))]
            answer = admin.post("/mocks/bulk", json=batch)
            answer.raise_for_status()
        print(f"stored {args.mocks} mocks in {time.perf_counter() - started:.1f} s")
        admin.post("/mocks", json={"id": "probe", "type": "http", "http": {
            "matcher": {"method": "GET", "path": "/probe"},
            "response": {"statusCode": 200, "body": "ok"}}}).raise_for_status()

        write_ms: list[float] = []
        for number in range(args.writes):
            began = time.perf_counter()
            admin.post("/mocks", json=mock(args.mocks + number)).raise_for_status()
            write_ms.append((time.perf_counter() - began) * 1000)
        print(f"POST /mocks with {args.mocks}+ stored mocks, {args.writes} writes: "
              f"median {statistics.median(write_ms):.1f} ms, "
              f"p95 {percentile(write_ms, 0.95):.1f} ms")

        def read_latencies(seconds: float, stop: threading.Event | None) -> list[float]:
            values: list[float] = []
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline and len(values) < 200_000:
                if stop is not None and stop.is_set():
                    break
                began = time.perf_counter()
                data.get("/probe")
                values.append((time.perf_counter() - began) * 1000)
            return values

        baseline = read_latencies(3.0, None)
        done = threading.Event()
        burst_ms: list[float] = []

        def burst() -> None:
            with httpx.Client(base_url=admin_url, timeout=120.0, trust_env=False) as writer:
                for number in range(args.burst):
                    began = time.perf_counter()
                    writer.post("/mocks", json=mock(args.mocks + args.writes + number))
                    burst_ms.append((time.perf_counter() - began) * 1000)
            done.set()

        writer_thread = threading.Thread(target=burst)
        writer_thread.start()
        during = read_latencies(300.0, done)
        writer_thread.join(timeout=300)
        print(f"data plane GET /probe without writes: p50 {percentile(baseline, 0.5):.2f} ms, "
              f"p99 {percentile(baseline, 0.99):.2f} ms ({len(baseline)} requests)")
        print(f"data plane GET /probe during {args.burst} admin writes: "
              f"p50 {percentile(during, 0.5):.2f} ms, p99 {percentile(during, 0.99):.2f} ms, "
              f"max {max(during):.1f} ms ({len(during)} requests; writes took median "
              f"{statistics.median(burst_ms):.1f} ms)")
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
