"""WebSocket echo benchmark: ``mockd engine`` (``echoMode``) against a bare ``websockets`` server.

Starts two servers on 127.0.0.1, both alive for the whole run:

* ``mockd``: ``mockd engine`` with one ``websocket`` mock at ``/echo``, ``echoMode: true``
  (uvicorn, uvloop, the ``websockets`` sans-I/O protocol, request log on: all defaults);
* ``bare``: an echo server written with the ``websockets`` library's asyncio server (``async
  for message in ws: await ws.send(message)``) on uvloop, the same event loop mockd runs on.

Then, in each round, the same client loads one server and then the other (the order alternates
between rounds): a separate client process (``--client-procs`` of them) runs ``--clients``
asyncio ``websockets`` clients in total; each sends a ``--size``-byte text message, waits for its
echo and repeats as fast as it can, for ``--warmup`` seconds (not counted) and then
``--duration`` seconds (counted). Both servers and the client keep the libraries' default
permessage-deflate settings (the client offers it, both servers accept it the same way).

Reports per server: messages/s (echoes received per second of the counted window, all
clients), round trip p50 / p99 in ms (send call to echo received, per message), server and
client CPU in % of one core over the window, server CPU µs per echoed message; and the ratio mockd / bare of messages/s (per
round and the median over rounds). ``--pin`` puts the servers on core 0 and the client
process(es) on core 1 (``taskset``): on a 2-core machine the client would otherwise compete
with the server it measures.

Usage: python bench/websocket_echo.py [--clients 50] [--duration 10] [--warmup 2] [--rounds 3]
                                      [--size 32] [--client-procs 1] [--pin]
                                      [--tree DIR] [--out bench/out/websocket_echo.json]
``--tree DIR`` runs mockd from another checkout (``PYTHONPATH=DIR``) for before/after figures.
Linux only (/proc, taskset). Every loop is bounded by the run's deadline.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from run_bench import free_port
from sse_bench import percentile, process_cpu_seconds

HERE = Path(__file__).resolve().parent
PYTHON = sys.executable
MOCKD = str(Path(sys.executable).parent / "mockd")


def new_loop() -> asyncio.AbstractEventLoop:
    """A uvloop event loop when uvloop is installed (as mockd uses), else asyncio's."""
    try:
        import uvloop
        return uvloop.new_event_loop()
    except ImportError:  # pragma: no cover
        return asyncio.new_event_loop()


def stop_process(process: subprocess.Popen) -> None:
    """Terminate ``process``; kill it when it is still there after 10 s."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


def add_tree_option(parser: argparse.ArgumentParser) -> None:
    """``--tree DIR``: run mockd from another checkout (``PYTHONPATH=DIR``)."""
    parser.add_argument("--tree", type=Path,
                        help="run mockd from another checkout (PYTHONPATH=DIR), e.g. a "
                             "worktree of an older commit, with this virtualenv")


# ---------------------------------------------------------------------- the bare peer

def serve_bare(port: int) -> None:
    """Run the bare ``websockets`` echo server on 127.0.0.1:``port`` until SIGTERM."""
    import signal

    from websockets.asyncio.server import serve

    async def echo(connection) -> None:
        async for message in connection:
            await connection.send(message)

    async def main() -> None:
        stop = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set_result, None)
        async with serve(echo, "127.0.0.1", port, ping_interval=None):
            print("ready", flush=True)
            await stop

    loop = new_loop()
    try:
        loop.run_until_complete(main())
    finally:
        loop.close()


# ---------------------------------------------------------------------- the client

async def _client(url: str, payload: str, start: float, counted_from: float, end: float,
                  rtts_us: list[int], errors: dict[str, int]) -> None:
    """One client: send, await the echo, repeat until ``end`` (perf_counter seconds); round
    trips that start at or after ``counted_from`` are recorded in µs."""
    from websockets.asyncio.client import connect

    try:
        async with connect(url, ping_interval=None, open_timeout=10,
                           close_timeout=2, max_queue=4) as ws:
            await asyncio.sleep(max(0.0, start - time.perf_counter()))
            clock = time.perf_counter
            while True:
                sent = clock()
                if sent >= end:
                    break
                await ws.send(payload)
                reply = await ws.recv()
                received = clock()
                if reply != payload:
                    errors["wrong echo"] = errors.get("wrong echo", 0) + 1
                if sent >= counted_from:
                    rtts_us.append(int((received - sent) * 1e6))
    except Exception as error:  # noqa: BLE001 - every failure is counted and reported
        kind = type(error).__name__
        errors[kind] = errors.get(kind, 0) + 1


def run_clients(url: str, clients: int, size: int, start: float, warmup: float,
                duration: float) -> dict:
    """Run ``clients`` echo clients in this process; returns ``{rtts_us, errors, cpu}``.

    ``start`` is a wall-clock (time.time) moment shared by every client process, so that
    processes started one after the other begin sending together."""
    payload = ("x" * size)
    rtts: list[int] = []
    errors: dict[str, int] = {}

    async def main() -> None:
        offset = start - time.time()
        begin = time.perf_counter() + offset
        tasks = [asyncio.ensure_future(_client(url, payload, begin, begin + warmup,
                                               begin + warmup + duration, rtts, errors))
                 for _ in range(clients)]
        await asyncio.wait_for(asyncio.gather(*tasks), offset + warmup + duration + 30)

    before = os.times()
    loop = new_loop()
    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    after = os.times()
    cpu = (after.user + after.system) - (before.user + before.system)
    return {"rtts_us": rtts, "errors": errors, "cpu_seconds": cpu}


# ---------------------------------------------------------------------- orchestration

class Server:
    """One server under test (a subprocess alive for the whole run)."""

    def __init__(self, name: str, argv: list[str], ready_line: str, url_of: Any, pin: bool,
                 workdir: Path, extra_env: dict[str, str] | None = None):
        self.name = name
        if pin:
            argv = ["taskset", "-c", "0", *argv]
        env = {**os.environ, "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1",
               **(extra_env or {})}
        self.process = subprocess.Popen(argv, stdout=subprocess.PIPE,
                                        stderr=open(workdir / f"{name}.log", "wb"),
                                        text=True, env=env, cwd=workdir)
        line = self.process.stdout.readline().strip()
        if not line.startswith(ready_line):
            self.stop()
            raise RuntimeError(f"{name} did not start: {line!r} (see {workdir}/{name}.log)")
        self.url = url_of(line)
        self.rounds: list[dict] = []

    def stop(self) -> None:
        """Terminate the server (kill after 10 s)."""
        stop_process(self.process)


def load(server: Server, options: argparse.Namespace, workdir: Path) -> dict:
    """One round against ``server``: start the client process(es), wait for them, and return
    messages/s, p50/p99 (ms), errors and CPU figures of the counted window."""
    procs = max(1, options.client_procs)
    start = time.time() + 0.5 + 0.15 * procs  # time for the client processes to import
    children = []
    for index in range(procs):
        share = options.clients // procs + (1 if index < options.clients % procs else 0)
        out = workdir / f"client-{server.name}-{index}.json"
        argv = [PYTHON, __file__, "--client-run", server.url, "--clients", str(share),
                "--size", str(options.size), "--start", repr(start),
                "--warmup", str(options.warmup), "--duration", str(options.duration),
                "--out", str(out)]
        if options.pin:
            argv = ["taskset", "-c", "1", *argv]
        children.append((subprocess.Popen(argv), out))
    # Server CPU over the counted window only.
    time.sleep(max(0.0, start + options.warmup - time.time()))
    cpu_before, wall_before = process_cpu_seconds(server.process.pid), time.monotonic()
    time.sleep(options.duration)
    server_cpu = process_cpu_seconds(server.process.pid) - cpu_before
    server_wall = time.monotonic() - wall_before
    rtts: list[int] = []
    errors: dict[str, int] = {}
    client_cpu = 0.0
    for child, out in children:
        child.wait(timeout=options.warmup + options.duration + 60)
        result = json.loads(out.read_text())
        rtts.extend(result["rtts_us"])
        for kind, count in result["errors"].items():
            errors[kind] = errors.get(kind, 0) + count
        client_cpu += result["cpu_seconds"]
    return {"messages_per_s": len(rtts) / options.duration,
            "server_cpu_us_per_message": 1e6 * server_cpu / max(len(rtts), 1)
            * options.duration / server_wall,
            "p50_ms": percentile(rtts, 0.50) / 1000, "p99_ms": percentile(rtts, 0.99) / 1000,
            "errors": errors,
            "server_cpu_pct": 100 * server_cpu / server_wall,
            # the client's CPU covers connecting and warm-up as well (whole process)
            "client_cpu_pct": 100 * client_cpu / (options.warmup + options.duration)}


def mockd_config() -> dict:
    """One ``websocket`` mock at ``/echo`` with ``echoMode: true``."""
    return {"version": "1.0", "mocks": [{"id": "echo", "type": "websocket",
                                         "websocket": {"path": "/echo", "echoMode": True}}]}


def main() -> int:
    """Parse the options, run the rounds, print and write the JSON report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[2:]))
    parser.add_argument("--clients", type=int, default=50, help="concurrent clients in total")
    parser.add_argument("--duration", type=float, default=10.0, help="counted seconds per run")
    parser.add_argument("--warmup", type=float, default=2.0, help="uncounted seconds first")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (mockd and bare each)")
    parser.add_argument("--size", type=int, default=32, help="message size in bytes (text)")
    parser.add_argument("--client-procs", type=int, default=1,
                        help="client processes the clients are spread over")
    parser.add_argument("--pin", action="store_true",
                        help="servers on core 0, clients on core 1 (taskset)")
    parser.add_argument("--only", choices=("mockd", "bare"), help="load one server only")
    add_tree_option(parser)
    parser.add_argument("--out", default=str(HERE / "out" / "websocket_echo.json"))
    # internal modes
    parser.add_argument("--serve-bare", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--client-run", metavar="URL", help=argparse.SUPPRESS)
    parser.add_argument("--start", type=float, help=argparse.SUPPRESS)
    options = parser.parse_args()

    if options.serve_bare is not None:
        serve_bare(options.serve_bare)
        return 0
    if options.client_run is not None:
        result = run_clients(options.client_run, options.clients, options.size,
                             options.start, options.warmup, options.duration)
        Path(options.out).write_text(json.dumps(result))
        return 0
    if options.pin and not shutil.which("taskset"):
        parser.error("--pin needs taskset")

    workdir = Path(tempfile.mkdtemp(prefix="mockd-ws-echo-"))
    (workdir / "echo.yaml").write_text(yaml.safe_dump(mockd_config()))
    servers: list[Server] = []
    try:
        if options.only in (None, "mockd"):
            servers.append(Server(
                "mockd", [MOCKD, "engine", "-c", str(workdir / "echo.yaml"), "--host",
                          "127.0.0.1", "--port", "0", "--engine-port", str(free_port()),
                          "--engine-token", "bench-token", "--print-url"],
                "http://", lambda line: "ws://" + line.removeprefix("http://") + "/echo",
                options.pin, workdir,
                {"PYTHONPATH": str(options.tree.resolve())} if options.tree else None))
        if options.only in (None, "bare"):
            port = free_port()
            servers.append(Server("bare", [PYTHON, __file__, "--serve-bare", str(port)],
                                  "ready", lambda line: f"ws://127.0.0.1:{port}/",
                                  options.pin, workdir))
        time.sleep(0.5)
        for round_index in range(options.rounds):
            order = servers if round_index % 2 == 0 else servers[::-1]
            for server in order:
                figures = load(server, options, workdir)
                server.rounds.append(figures)
                print(f"round {round_index + 1} {server.name}: "
                      f"{figures['messages_per_s']:,.0f} msg/s, p50 {figures['p50_ms']:.2f} ms, "
                      f"p99 {figures['p99_ms']:.2f} ms, server CPU "
                      f"{figures['server_cpu_pct']:.0f} %, client CPU "
                      f"{figures['client_cpu_pct']:.0f} %"
                      + (f", errors {figures['errors']}" if figures["errors"] else ""),
                      flush=True)
    finally:
        for server in servers:
            server.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    median = statistics.median
    report: dict = {"tree": str(options.tree) if options.tree else None,
                    "clients": options.clients, "durationSeconds": options.duration,
                    "warmupSeconds": options.warmup, "rounds": options.rounds,
                    "sizeBytes": options.size, "clientProcesses": options.client_procs,
                    "pinned": options.pin, "servers": {}}
    for server in servers:
        rounds = server.rounds
        report["servers"][server.name] = {
            "messagesPerSecond": round(median(r["messages_per_s"] for r in rounds)),
            "roundsMessagesPerSecond": [round(r["messages_per_s"]) for r in rounds],
            "p50Ms": round(median(r["p50_ms"] for r in rounds), 3),
            "p99Ms": round(median(r["p99_ms"] for r in rounds), 3),
            "serverCpuPercent": round(median(r["server_cpu_pct"] for r in rounds)),
            "serverCpuMicrosecondsPerMessage": round(
                median(r["server_cpu_us_per_message"] for r in rounds), 1),
            "clientCpuPercent": round(median(r["client_cpu_pct"] for r in rounds)),
            "errors": [r["errors"] for r in rounds if r["errors"]]}
    if len(servers) == 2:
        mockd, bare = servers
        ratios = [m["messages_per_s"] / b["messages_per_s"]
                  for m, b in zip(mockd.rounds, bare.rounds) if b["messages_per_s"]]
        report["ratioMockdToBare"] = {"perRound": [round(r, 3) for r in ratios],
                                      "median": round(median(ratios), 3) if ratios else None}
    Path(options.out).parent.mkdir(parents=True, exist_ok=True)
    Path(options.out).write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    failed = any(server_report["errors"] for server_report in report["servers"].values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
