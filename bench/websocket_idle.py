"""WebSocket idle-connection benchmark: server memory with N open connections, broadcast latency.

Starts one ``mockd engine`` (one ``websocket`` mock at ``/idle`` that answers nothing, every
other setting at its default) with its file limit raised (``RLIMIT_NOFILE`` set before exec),
then opens ``--connections`` WebSocket connections from ``--client-procs`` client processes
(each raises its own limit too). The clients are a lean raw-socket WebSocket client (an asyncio
``Protocol`` on uvloop: handshake, frame parsing, pong answers, inflate; no WebSocket library),
so that the clients' own cost of reading thousands of frames at once stays small next to the
server's. By default they offer ``permessage-deflate`` like browsers and the ``websockets``
client do (``--no-deflate``: they offer no extension).

Reported:

* server RSS (VmRSS of /proc/<pid>/status) before any connection, with all N open and
  settled, and after the broadcasts; MiB, and KiB per connection;
* for each of ``--broadcasts`` broadcasts (``--interval`` s apart): the delivery time of every
  connection = the moment its client process received the broadcast frame minus the moment
  just before this process sent the broadcast request (both CLOCK_MONOTONIC, one machine);
  p50 / p99 / max in ms over the N connections, how many connections got it, and the
  broadcast request's own HTTP round trip. The broadcast is the engine-control port's
  ``POST /websocket/broadcast`` (``{"type": "text", "data": "b<k> ..."}``), the engine's
  mirror of the admin API route.

Usage: python bench/websocket_idle.py [--connections 5000] [--client-procs 2]
                                      [--broadcasts 5] [--interval 2] [--size 64]
                                      [--ramp 1000] [--no-deflate] [--pin]
                                      [--tree DIR] [--out bench/out/websocket_idle.json]
``--pin``: server on core 0, client processes on core 1. ``--tree DIR`` runs mockd from another
checkout (``PYTHONPATH=DIR``) for before/after figures. Linux only (/proc). Every wait is
bounded (``--timeout`` for the whole run).
"""
from __future__ import annotations

import argparse
import asyncio
import base64
import http.client
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import yaml

from run_bench import free_port, rss_mb as rss_mib
from sse_bench import percentile
from websocket_echo import add_tree_option, stop_process

HERE = Path(__file__).resolve().parent
PYTHON = sys.executable
MOCKD = str(Path(sys.executable).parent / "mockd")
TOKEN = "bench-idle-token"


def raise_nofile(wanted: int) -> None:
    """Raise this process's soft RLIMIT_NOFILE to ``wanted`` (at most the hard limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE,
                           (wanted if hard == resource.RLIM_INFINITY else min(wanted, hard),
                            hard))


# ---------------------------------------------------------------------- client process

class IdleClient(asyncio.Protocol):
    """One raw WebSocket client connection.

    Upgrades, then keeps every text/binary frame it receives as ``(first header byte, payload,
    CLOCK_MONOTONIC seconds at data_received)``; answers pings with pongs. Inflating and
    decoding wait for :meth:`messages` (after the run), so that the time spent per frame while
    thousands arrive at once is only reading the socket and the frame header."""

    __slots__ = ("request", "frames", "opened", "transport", "buffer", "upgraded",
                 "deflate", "closed_code")

    def __init__(self, request: bytes, opened: asyncio.Future):
        self.request = request
        self.frames: list[tuple[int, bytes, float]] = []
        self.opened = opened
        self.transport: asyncio.Transport | None = None
        self.buffer = b""
        self.upgraded = False
        self.deflate = False
        self.closed_code: int | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        transport.write(self.request)  # type: ignore[attr-defined]

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.opened.done():
            self.opened.set_exception(ConnectionError("closed during the handshake"))
        elif self.closed_code is None:
            self.closed_code = -1

    def data_received(self, data: bytes) -> None:
        now = time.monotonic()
        buffer = self.buffer + data if self.buffer else data
        if not self.upgraded:
            end = buffer.find(b"\r\n\r\n")
            if end < 0:
                self.buffer = buffer
                return
            head = buffer[:end].decode("latin-1")
            buffer = buffer[end + 4:]
            if not head.startswith("HTTP/1.1 101"):
                if not self.opened.done():
                    self.opened.set_exception(ConnectionError(head.split("\r\n", 1)[0]))
                self.transport.close()
                return
            self.upgraded = True
            self.deflate = "permessage-deflate" in head.lower()
            if not self.opened.done():
                self.opened.set_result(None)
        while len(buffer) >= 2:
            first, second = buffer[0], buffer[1]
            length, position = second & 0x7F, 2
            if length == 126:
                if len(buffer) < 4:
                    break
                length, position = int.from_bytes(buffer[2:4], "big"), 4
            elif length == 127:
                if len(buffer) < 10:
                    break
                length, position = int.from_bytes(buffer[2:10], "big"), 10
            if len(buffer) < position + length:
                break
            payload = buffer[position:position + length]
            buffer = buffer[position + length:]
            opcode = first & 0x0F
            if opcode in (1, 2):
                self.frames.append((first, payload, now))
            elif opcode == 9:  # ping -> masked pong with the same payload
                mask = os.urandom(4)
                masked = bytes(byte ^ mask[index % 4] for index, byte in enumerate(payload))
                self.transport.write(bytes((0x8A, 0x80 | len(payload))) + mask + masked)
            elif opcode == 8:
                self.closed_code = int.from_bytes(payload[:2], "big") if payload else 1005
        self.buffer = buffer

    def messages(self) -> list[tuple[str, float]]:
        """The received messages in order: ``(text, CLOCK_MONOTONIC seconds)``, inflated
        when they were compressed (one inflate context per connection, as the server keeps
        its deflate context between messages)."""
        inflate = zlib.decompressobj(-15) if self.deflate else None
        out = []
        for first, payload, at in self.frames:
            if first & 0x40 and inflate is not None:
                payload = inflate.decompress(payload + b"\x00\x00\xff\xff")
            out.append((payload.decode("utf-8", "replace"), at))
        return out

    def close(self) -> None:
        """Send a masked close frame (1000) and close the socket."""
        if self.transport is not None and not self.transport.is_closing():
            mask = os.urandom(4)
            code = (1000).to_bytes(2, "big")
            self.transport.write(b"\x88\x82" + mask + bytes(b ^ mask[i] for i, b in
                                                             enumerate(code)))
            self.transport.close()


def client_process(host: str, port: int, path: str, count: int, ramp: float, deflate: bool,
                   broadcasts: int, deadline_s: float, out: Path) -> int:
    """Open ``count`` connections (``ramp`` per second), print ``open <n> <failed>`` on
    stdout, then collect frames until every connection has ``broadcasts`` of them, a line
    arrives on stdin, or ``deadline_s`` seconds pass; write ``{received: [[payload, t], ...],
    opened, failed, closed}`` to ``out``."""
    raise_nofile(count + 256)
    try:
        import uvloop
        loop = uvloop.new_event_loop()
    except ImportError:  # pragma: no cover
        loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    extensions = ("Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n"
                  if deflate else "")
    clients: list[IdleClient] = []
    failures: dict[str, int] = {}
    closed_by_server: list[IdleClient] = []

    async def open_one() -> None:
        key = base64.b64encode(os.urandom(16)).decode()
        request = (f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                   f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                   f"Sec-WebSocket-Version: 13\r\n{extensions}\r\n").encode()
        opened = loop.create_future()
        try:
            _, protocol = await asyncio.wait_for(loop.create_connection(
                lambda: IdleClient(request, opened), host, port), 20)
            await asyncio.wait_for(opened, 20)
            clients.append(protocol)
        except (OSError, asyncio.TimeoutError, ConnectionError) as error:
            kind = type(error).__name__
            failures[kind] = failures.get(kind, 0) + 1

    async def main() -> None:
        end = time.monotonic() + deadline_s
        batch = max(1, int(ramp / 20))
        tasks = []
        for start in range(0, count, batch):
            tasks += [asyncio.ensure_future(open_one())
                      for _ in range(min(batch, count - start))]
            await asyncio.sleep(0.05)
        await asyncio.gather(*tasks)
        print(f"open {len(clients)} {sum(failures.values())}", flush=True)
        stop = asyncio.Event()  # the parent writes a line on stdin when it is done
        loop.add_reader(sys.stdin.fileno(), stop.set)
        while (time.monotonic() < end and not stop.is_set()
               and any(len(client.frames) < broadcasts for client in clients)):
            await asyncio.sleep(0.05)
        loop.remove_reader(sys.stdin.fileno())
        closed_by_server.extend(client for client in clients if client.closed_code is not None)
        for client in clients:
            client.close()
        await asyncio.sleep(0.2)

    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    received = [message for client in clients for message in client.messages()]
    out.write_text(json.dumps({
        "received": received, "opened": len(clients), "failed": failures,
        "closed": len(closed_by_server)}))
    return 0


# ---------------------------------------------------------------------- orchestration

def broadcast(port: int, data: str) -> tuple[int, float, str]:
    """``POST /websocket/broadcast`` on the engine-control port; returns (status, round trip
    in ms, body)."""
    body = json.dumps({"type": "text", "data": data})
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    started = time.monotonic()
    try:
        connection.request("POST", "/websocket/broadcast", body=body,
                           headers={"Content-Type": "application/json",
                                    "X-Engine-Token": TOKEN})
        response = connection.getresponse()
        text = response.read().decode()
        return response.status, (time.monotonic() - started) * 1000, text
    finally:
        connection.close()


def mock_config() -> dict:
    """One ``websocket`` mock at ``/idle``: no matcher, no default, no echo (silent)."""
    return {"version": "1.0", "mocks": [{"id": "idle", "type": "websocket",
                                         "websocket": {"path": "/idle"}}]}


def main() -> int:
    """Parse the options, run the benchmark, print and write the JSON report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.splitlines()[2:]))
    parser.add_argument("--connections", type=int, default=5000)
    parser.add_argument("--client-procs", type=int, default=2)
    parser.add_argument("--broadcasts", type=int, default=5)
    parser.add_argument("--interval", type=float, default=2.0, help="s between broadcasts")
    parser.add_argument("--size", type=int, default=64, help="broadcast message size, bytes")
    parser.add_argument("--ramp", type=float, default=1000.0,
                        help="new connections per second, all client processes together")
    parser.add_argument("--no-deflate", action="store_true",
                        help="clients offer no permessage-deflate")
    parser.add_argument("--pin", action="store_true",
                        help="server on core 0, client processes on core 1 (taskset)")
    parser.add_argument("--timeout", type=float, default=180.0, help="bound of the whole run")
    add_tree_option(parser)
    parser.add_argument("--out", default=str(HERE / "out" / "websocket_idle.json"))
    # internal: one client process
    parser.add_argument("--client", nargs=3, metavar=("HOST", "PORT", "COUNT"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--client-out", help=argparse.SUPPRESS)
    options = parser.parse_args()
    deflate = not options.no_deflate

    if options.client:
        host, port, count = options.client
        return client_process(host, int(port), "/idle", int(count), options.ramp, deflate,
                              options.broadcasts, options.timeout, Path(options.client_out))
    if options.pin and not shutil.which("taskset"):
        parser.error("--pin needs taskset")

    workdir = Path(tempfile.mkdtemp(prefix="mockd-ws-idle-"))
    (workdir / "idle.yaml").write_text(yaml.safe_dump(mock_config()))
    control_port = free_port()
    nofile = options.connections + 1024

    def server_limits() -> None:  # runs in the child before exec
        resource.setrlimit(resource.RLIMIT_NOFILE,
                           (nofile, max(nofile, resource.getrlimit(resource.RLIMIT_NOFILE)[1])))

    command = [MOCKD, "engine", "-c", str(workdir / "idle.yaml"), "--host", "127.0.0.1",
               "--port", "0", "--engine-port", str(control_port), "--engine-token", TOKEN,
               "--print-url"]
    if options.pin:
        command = ["taskset", "-c", "0", *command]
    env = {**os.environ, "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
    if options.tree:
        env["PYTHONPATH"] = str(options.tree.resolve())
    server = subprocess.Popen(command, stdout=subprocess.PIPE,
                              stderr=open(workdir / "engine.log", "wb"), text=True, env=env,
                              preexec_fn=server_limits)
    children: list[tuple[subprocess.Popen, Path]] = []
    report: dict = {}
    try:
        url = server.stdout.readline().strip()
        if not url.startswith("http://"):
            raise RuntimeError(f"the engine did not start: {(workdir / 'engine.log').read_text()}")
        host, port = url.removeprefix("http://").rsplit(":", 1)
        time.sleep(1.0)
        rss_before = rss_mib(server.pid)
        run_deadline = time.monotonic() + options.timeout
        procs = max(1, options.client_procs)
        opening_started = time.monotonic()
        for index in range(procs):
            share = options.connections // procs + (1 if index < options.connections % procs
                                                    else 0)
            out = workdir / f"client-{index}.json"
            argv = [PYTHON, __file__, "--client", host, port, str(share),
                    "--ramp", str(options.ramp / procs), "--broadcasts", str(options.broadcasts),
                    "--timeout", str(options.timeout), "--client-out", str(out)]
            if options.no_deflate:
                argv.append("--no-deflate")
            if options.pin:
                argv = ["taskset", "-c", "1", *argv]
            children.append((subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                              text=True), out))
        opened = failed = 0
        for child, _ in children:
            line = child.stdout.readline().split()  # "open <n> <failed>", bounded by --timeout
            if len(line) == 3 and line[0] == "open":
                opened += int(line[1])
                failed += int(line[2])
        opening_seconds = time.monotonic() - opening_started
        time.sleep(2.0)  # let the server settle (allocator, GC)
        rss_open = rss_mib(server.pid)
        print(f"{opened} open ({failed} failed) in {opening_seconds:.1f} s; server RSS "
              f"{rss_before:.1f} MiB before, {rss_open:.1f} MiB with them open", flush=True)

        sent_at: list[float] = []
        requests: list[dict] = []
        for index in range(options.broadcasts):
            tag = f"b{index} "
            data = tag + "x" * max(0, options.size - len(tag))
            sent_at.append(time.monotonic())
            status, round_trip_ms, body = broadcast(control_port, data)
            requests.append({"status": status, "roundTripMs": round(round_trip_ms, 1),
                             "body": body[:200]})
            print(f"broadcast {index}: HTTP {status} in {round_trip_ms:.1f} ms {body[:120]}",
                  flush=True)
            time.sleep(options.interval)
        rss_after = rss_mib(server.pid)

        for child, _ in children:
            try:
                child.stdin.write("stop\n")
                child.stdin.close()
            except BrokenPipeError:
                pass  # it had every broadcast and is gone
        received: list[tuple[str, float]] = []
        closed = 0
        for child, out in children:
            child.wait(timeout=max(1.0, run_deadline - time.monotonic()) + 10)
            result = json.loads(out.read_text())
            received.extend(result["received"])
            closed += result["closed"]
        per_broadcast = []
        for index, started in enumerate(sent_at):
            prefix = f"b{index} "
            times = [(at - started) * 1000 for payload, at in received
                     if payload.startswith(prefix)]
            per_broadcast.append({
                "delivered": len(times),
                "p50Ms": round(percentile(times, 0.50), 1),
                "p99Ms": round(percentile(times, 0.99), 1),
                "maxMs": round(max(times), 1) if times else None,
                "request": requests[index]})
        p99s = [entry["p99Ms"] for entry in per_broadcast if entry["delivered"]]
        report = {
            "tree": str(options.tree) if options.tree else None,
            "connections": options.connections, "clientProcesses": procs,
            "deflateOffered": deflate, "pinned": options.pin, "messageBytes": options.size,
            "opened": opened, "failedToOpen": failed,
            "openingSeconds": round(opening_seconds, 1),
            "serverRssMiB": {"before": round(rss_before, 1), "open": round(rss_open, 1),
                             "afterBroadcasts": round(rss_after, 1),
                             "perConnectionKiB": round((rss_open - rss_before) * 1024
                                                       / max(opened, 1), 1)},
            "broadcasts": per_broadcast,
            "deliveryP99MsMedian": round(statistics.median(p99s), 1) if p99s else None,
            "closedByServerDuringRun": closed}
    finally:
        for child, _ in children:
            if child.poll() is None:
                child.terminate()
        stop_process(server)
        for child, _ in children:
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
        shutil.rmtree(workdir, ignore_errors=True)
    Path(options.out).parent.mkdir(parents=True, exist_ok=True)
    Path(options.out).write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    complete = report.get("opened") == options.connections and all(
        entry["delivered"] == options.connections for entry in report.get("broadcasts", []))
    return 0 if complete else 1


if __name__ == "__main__":
    sys.exit(main())
