"""Recording-proxy benchmark: requests/s through the proxy in ``record`` mode against a local
origin, beside the same load sent to the origin directly, and the server's RSS after many
recorded requests under a small recording store cap.

Starts an origin (uvicorn + httptools serving one small JSON answer, its own process) and
``mockd start`` with ``recording.maxBytes`` set small (``--max-bytes``), starts the proxy with
``POST /proxy/start`` (record mode), then drives both with a lean asyncio client (raw keep-alive
sockets, no HTTP library, ``--concurrency`` connections):

* ``direct``: GET to the origin, ``--requests`` requests;
* ``proxy``: the same requests in absolute form through the proxy (each one recorded);
* ``soak``: ``--soak`` more recorded requests; the server's RSS (from /proc) before and after,
  and the store's stats (count, bytes, dropped) to show the cap holds.

Reports requests/s of each, the overhead ratio (direct / proxy), p50/p99 latency, the
server's CPU time per proxied request (user + system from /proc, in µs: a figure that does
not move with the machine's other load the way requests/s do), RSS and the store stats, as
JSON (``--out``) and on stdout. ``--mode passthrough`` measures forwarding alone (the proxied
run's key is then ``proxy_passthrough``).

Usage: python bench/proxy.py [--requests 20000] [--soak 100000] [--concurrency 16]
                             [--max-bytes 2097152] [--out bench/out/proxy.json]
Linux only (/proc).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import yaml

ROOT = Path(__file__).resolve().parents[1]
MOCKD = str(ROOT / ".venv" / "bin" / "mockd")
PYTHON = str(ROOT / ".venv" / "bin" / "python")

ORIGIN = """
import sys, uvicorn
BODY = b'{"id": 42, "name": "widget", "tags": ["a", "b"]}'
async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(BODY)).encode())]})
    await send({"type": "http.response.body", "body": BODY})
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), http="httptools",
            lifespan="off", log_level="warning", access_log=False)
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_port(port: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"port {port} never opened")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def _worker(host_port: int, request: bytes, count: int, latencies: list[float]) -> int:
    reader, writer = await asyncio.open_connection("127.0.0.1", host_port)
    errors = 0
    try:
        for _ in range(count):
            started = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            await reader.readexactly(length)
            if not head.startswith(b"HTTP/1.1 200"):
                errors += 1
            latencies.append((time.perf_counter() - started) * 1000)
    finally:
        writer.close()
    return errors


async def load(port: int, request: bytes, total: int, concurrency: int) -> dict[str, float]:
    latencies: list[float] = []
    share = [total // concurrency + (1 if i < total % concurrency else 0)
             for i in range(concurrency)]
    started = time.perf_counter()
    errors = await asyncio.gather(*(_worker(port, request, n, latencies) for n in share))
    elapsed = time.perf_counter() - started
    latencies.sort()
    return {"requests": total, "seconds": round(elapsed, 2),
            "rps": round(total / elapsed), "errors": sum(errors),
            "p50_ms": round(statistics.median(latencies), 2),
            "p99_ms": round(latencies[int(len(latencies) * 0.99) - 1], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--soak", type=int, default=100000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--max-bytes", type=int, default=2 * 1024 * 1024)
    parser.add_argument("--mode", default="record", choices=["record", "passthrough"],
                        help="Proxy mode of the measured run (passthrough: no recording).")
    parser.add_argument("--out", default=str(ROOT / "bench" / "out" / "proxy.json"))
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="mockd-proxy-bench-"))
    origin_port, port, admin_port, proxy_port = (free_port() for _ in range(4))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MOCKD_")}
    env["HOME"] = str(folder)
    config = folder / "mockd.yaml"
    config.write_text(yaml.safe_dump({"version": "1.0", "mocks": [],
                                      "recording": {"maxBytes": args.max_bytes}}))
    origin = subprocess.Popen([PYTHON, "-c", ORIGIN, str(origin_port)], env=env)
    server = subprocess.Popen([MOCKD, "start", "--port", str(port), "--admin-port",
                               str(admin_port), "--data-dir", str(folder / "data"),
                               "--no-auth", "-c", str(config), "--log-level", "warning"],
                              env=env, stdout=subprocess.DEVNULL)
    try:
        wait_port(origin_port)
        wait_port(admin_port)
        admin = httpx.Client(base_url=f"http://127.0.0.1:{admin_port}", trust_env=False,
                             timeout=30)
        for _ in range(100):
            if admin.get("/health").status_code == 200:
                break
            time.sleep(0.1)
        started = admin.post("/proxy/start", json={"port": proxy_port, "mode": args.mode,
                                                   "sessionName": "bench"})
        started.raise_for_status()
        direct_request = (f"GET /item?id=42 HTTP/1.1\r\nHost: 127.0.0.1:{origin_port}\r\n"
                          f"Accept: application/json\r\n\r\n").encode()
        proxy_request = (f"GET http://127.0.0.1:{origin_port}/item?id=42 HTTP/1.1\r\n"
                         f"Host: 127.0.0.1:{origin_port}\r\n"
                         f"Accept: application/json\r\n\r\n").encode()
        asyncio.run(load(origin_port, direct_request, 500, args.concurrency))  # warm-up
        direct = asyncio.run(load(origin_port, direct_request, args.requests,
                                  args.concurrency))
        asyncio.run(load(proxy_port, proxy_request, 500, args.concurrency))  # warm-up
        cpu_before = cpu_seconds(server.pid)
        proxied = asyncio.run(load(proxy_port, proxy_request, args.requests,
                                   args.concurrency))
        proxied["server_cpu_us_per_request"] = round(
            (cpu_seconds(server.pid) - cpu_before) / args.requests * 1e6)
        rss_before = rss_mib(server.pid)
        soak = asyncio.run(load(proxy_port, proxy_request, args.soak, args.concurrency))
        rss_after = rss_mib(server.pid)
        status = admin.get("/proxy/status").json()
        from recordings.store import open_store

        store = open_store(folder / "data")
        stats = store.stats("http")
        store.close()
        result = {
            "concurrency": args.concurrency, "mode": args.mode, "direct": direct,
            f"proxy_{args.mode}": proxied,
            "overhead_ratio": round(direct["rps"] / proxied["rps"], 2),
            "soak": soak, "rss_mib_before_soak": round(rss_before, 1),
            "rss_mib_after_soak": round(rss_after, 1),
            "recorded_requests": (args.requests + args.soak + 500) if args.mode == "record"
            else 0,
            "session_recording_count": status.get("recordingCount"),
            "store": stats, "max_bytes": args.max_bytes,
        }
        admin.post("/proxy/stop")
    finally:
        server.terminate()
        origin.terminate()
        server.wait(timeout=20)
        origin.wait(timeout=20)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
