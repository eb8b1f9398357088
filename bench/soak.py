"""Soak: ``--minutes`` (default 10) of mixed traffic against one ``mockd start``, watching the
server's memory, errors and tail latency (issue #33 item 1).

The script writes a config (static and templated HTTP mocks, a table with CRUD bindings, an SSE
stream, a WebSocket mock, a GraphQL mock, a gRPC mock with a unary and a server-streaming
method, an MQTT broker mock that answers publishes), starts ``mockd start`` on free loopback
ports with a throwaway data dir and a known admin key (``MOCKD_API_KEY``), and drives, at fixed
rates, from this one process (asyncio; paho-mqtt in its own thread):

================  ====================================================================
protocol          traffic (per second, paced; a call's latency is the whole call, in ms)
================  ====================================================================
http_static       30 ``GET /soak/static``
http_template     20 ``GET /soak/users/{id}?q=`` (path, query, faker and uuid templates)
table             4 CRUD cycles of 5 requests: create, get, patch, list (limit 5), delete
                  (the table ends each cycle as it began: its size is bounded)
sse               1 stream opened, 3 events read, then dropped (the mock waits 100 ms
                  between events: 200 ms of each call are the mock's own delay)
websocket         2 conversations: connect, ping/pong, a JSON join, close
graphql           10 queries
grpc_unary        10 unary calls (raw protobuf bytes: no generated code)
grpc_stream       1 server-streaming call, 5 messages read to the end (10 ms apart)
mqtt              10 QoS 1 publishes answered by the mock on an ack topic (round trip);
                  every 5 s one more client connects, publishes and disconnects
admin_write       1 admin write: a new HTTP mock created, the previous one deleted
request_log       the admin's request-log SSE stream (``GET /requests/stream``) read for
                  the whole run; an error is a stream that ends or goes quiet for 15 s
================  ====================================================================

Every 10 s it samples the server's RSS (the process and its children, from /proc), its open
file descriptors and threads, and counts through the admin API (request-log entries, mocks,
table items, open SSE, WebSocket, gRPC and MQTT connections), and computes the p99 of each
protocol over the last 10 s. At the end it prints a summary and writes a JSON result
(``--out``, default ``bench/soak_<minutes>min.json``) and a PNG (``--png``, default
``bench/soak.png``: RSS and p99 per protocol over time, matplotlib).

Targets: RSS growth under 10 % between minute 2 and the end (for runs shorter than 5 minutes:
between 20 % of the run and its end), zero errors. The exit status is 0 when both hold, 1
otherwise, 2 when the server did not start.

``--trace-memory`` (a diagnosis, not a measurement: tracemalloc slows the server and adds to its
RSS) runs the server with a SIGUSR1 handler: the first signal, halfway through the warm-up,
starts tracemalloc (4 frames; tracing from the start makes the start minutes long), the
next ones write a snapshot. The script takes one at the end of the warm-up (by then the
request log holds only entries allocated under tracing), one halfway through the rest and one
at the end, and adds the 15 allocation sites that grew most from the first to the last
(``tracemalloc_growth``: KiB and blocks, and the KiB of each half: a leak grows in both
halves alike, a cache that fills up or a ring whose mix changes does not). A snapshot stalls
the server's event loop for seconds: calls in flight then may time out (counted as errors).

Usage: python bench/soak.py [--minutes 10] [--out FILE] [--png FILE] [--keep] [--trace-memory]
Traffic goes to 127.0.0.1 only; every loop is bounded by the run's deadline, every call by a
timeout; the server is stopped at the end (SIGTERM, then SIGKILL after 10 s).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Awaitable, Callable

ROOT = Path(__file__).resolve().parents[1]
MOCKD = str(Path(sys.executable).with_name("mockd"))
SAMPLE_SECONDS = 10.0
CALL_TIMEOUT = 10.0
#: Request-log stream silence (s) counted as an error while traffic flows.
LOG_STREAM_SILENCE = 15.0

PROTO = """syntax = "proto3";
package soak;
service Echo {
  rpc Say (Req) returns (Rep);
  rpc Count (Req) returns (stream Rep);
}
message Req { string name = 1; }
message Rep { string message = 1; }
"""

#: ``{protocol: calls per second}`` (see the module docstring).
RATES = {"http_static": 30, "http_template": 20, "table": 4, "sse": 1, "websocket": 2,
         "graphql": 10, "grpc_unary": 10, "grpc_stream": 1, "mqtt": 10, "admin_write": 1}


#: Series drawn on the p99 plot: the protocols, and the load client's own event-loop lag
#: (how late a 50 ms sleep wakes: latency the client adds, not the server).
PLOTTED = (*RATES, "client_loop_lag")


#: The server's entry point under ``--trace-memory``: ``mockd`` with a SIGUSR1 handler that
#: starts tracemalloc, then dumps a snapshot into ``$SOAK_TRACE_DIR`` (``snapNN.bin``).
TRACE_BOOT = """
import os, signal, sys, tracemalloc
folder = os.environ["SOAK_TRACE_DIR"]
def dump(signum, frame):
    if not tracemalloc.is_tracing():
        tracemalloc.start(4)
        return
    path = os.path.join(folder, "snap%02d.bin" % len(os.listdir(folder)))
    tracemalloc.take_snapshot().dump(path + ".part")
    os.replace(path + ".part", path)
signal.signal(signal.SIGUSR1, dump)
sys.argv[0] = "mockd"
from mockd_project.cli import main
main()
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def soak_config(grpc_port: int, mqtt_port: int) -> dict[str, Any]:
    """The config the server starts from (``folder/soak.json``; the proto beside it)."""
    return {"version": "1.0",
            "tables": [{"name": "items", "idStrategy": "short", "maxItems": 5000,
                        "seedData": [{"id": "seed", "name": "seed item", "n": 0}]}],
            "mocks": [
                {"id": "static", "type": "http", "http": {
                    "matcher": {"method": "GET", "path": "/soak/static"},
                    "response": {"body": {"ok": True, "items": list(range(20))}}}},
                {"id": "template", "type": "http", "http": {
                    "matcher": {"method": "GET", "path": "/soak/users/{id}"},
                    "response": {"headers": {"X-Request": "{{uuid}}"}, "body": {
                        "id": "{{request.pathParam.id}}", "q": "{{request.query.q}}",
                        "name": "{{faker.name}}", "at": "{{now}}"}}}},
                *({"id": f"items-{action}", "type": "http", "http": {
                    "matcher": {"method": method, "path": path}}}
                  for action, method, path in (
                      ("list", "GET", "/soak/items"), ("create", "POST", "/soak/items"),
                      ("get", "GET", "/soak/items/{id}"), ("patch", "PATCH", "/soak/items/{id}"),
                      ("delete", "DELETE", "/soak/items/{id}"))),
                {"id": "events", "type": "http", "http": {
                    "matcher": {"method": "GET", "path": "/soak/events"},
                    "sse": {"events": [{"type": "tick", "id": str(n), "data": {"n": n}}
                                       for n in range(20)],
                            "timing": {"fixedDelay": 100}}}},
                {"id": "ws", "type": "websocket", "websocket": {
                    "path": "/soak/ws",
                    "matchers": [
                        {"match": {"type": "exact", "value": "ping"},
                         "response": {"type": "text", "value": "pong"}},
                        {"match": {"type": "json", "path": "$.type", "value": "join"},
                         "response": {"type": "json", "value": {
                             "event": "joined", "user": "{{message.user.name}}"}}}],
                    "defaultResponse": {"type": "text", "value": "unknown"}}},
                {"id": "gql", "type": "graphql", "graphql": {
                    "path": "/soak/graphql",
                    "schema": "type User { id: ID!, name: String!, email: String! }\n"
                              "type Query { user(id: ID!): User }",
                    "resolvers": {"Query.user": {"response": {
                        "id": "{{args.id}}", "name": "Ann", "email": "{{faker.email}}"}}}}},
                {"id": "grpc", "type": "grpc", "grpc": {
                    "port": grpc_port, "protoFile": "soak.proto",
                    "services": {"soak.Echo": {"methods": {
                        "Say": {"response": {"message": "hi {{request.name}}"}},
                        "Count": {"responses": [{"message": str(n)} for n in range(5)],
                                  "streamDelay": "10ms"}}}}}},
                {"id": "mqtt", "type": "mqtt", "mqtt": {
                    "port": mqtt_port,
                    "topics": [{"topic": "soak/+/in", "onPublish": {"response": {
                        "topic": "soak/{{wildcard.0}}/ack", "payload": "{{payload.n}}"}}}]}},
            ],
            "extend": [{"mock": f"items-{action}", "table": "items", "action": action}
                       for action in ("list", "create", "get", "patch", "delete")]}


# ---------------------------------------------------------------------------- recording
class Recorder:
    """Latencies (ms) and errors per protocol, stamped with seconds since the start."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.latencies: dict[str, list[tuple[float, float]]] = defaultdict(list)
        self.errors: dict[str, Counter] = defaultdict(Counter)
        self.calls: Counter = Counter()
        self.lock = threading.Lock()  # the MQTT thread records too

    def now(self) -> float:
        return time.monotonic() - self.start

    def ok(self, protocol: str, started: float) -> None:
        with self.lock:
            self.calls[protocol] += 1
            self.latencies[protocol].append((self.now(), (time.monotonic() - started) * 1000))

    def error(self, protocol: str, kind: str) -> None:
        with self.lock:
            self.calls[protocol] += 1
            self.errors[protocol][kind[:160]] += 1

    def p99(self, protocol: str, since: float = 0.0, until: float = float("inf")) -> float | None:
        with self.lock:
            values = sorted(ms for at, ms in self.latencies[protocol] if since <= at < until)
        if not values:
            return None
        return round(values[min(len(values) - 1, int(len(values) * 0.99))], 2)


def expect(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)


async def paced(recorder: Recorder, protocol: str, rate: float, deadline: float,
                call: Callable[[], Awaitable[None]]) -> None:
    """Run ``call`` ``rate`` times a second until ``deadline`` (monotonic), recording each
    call's latency or its error under ``protocol``."""
    interval = 1.0 / rate
    next_at = time.monotonic()
    while time.monotonic() < deadline:
        started = time.monotonic()
        try:
            await asyncio.wait_for(call(), CALL_TIMEOUT)
        except asyncio.CancelledError:
            raise
        except AssertionError as error:
            recorder.error(protocol, f"unexpected answer: {error}")
        except Exception as error:  # every failure is a finding: count it by kind
            recorder.error(protocol, f"{type(error).__name__}: {error}")
        else:
            recorder.ok(protocol, started)
        next_at += interval
        delay = next_at - time.monotonic()
        if delay < -1.0:  # more than a second behind: do not burst to catch up
            next_at = time.monotonic()
        await asyncio.sleep(max(0.0, delay))


# ---------------------------------------------------------------------------- traffic
def grpc_message(name: str) -> bytes:
    """``soak.Req{name}`` encoded by hand (field 1, length-delimited)."""
    raw = name.encode()
    return b"\x0a" + bytes([len(raw)]) + raw


class Traffic:
    """The protocol clients and one call of each kind."""

    def __init__(self, base: str, admin: str, key: str, grpc_port: int, recorder: Recorder):
        import grpc
        import httpx

        self.base, self.admin, self.key, self.recorder = base, admin, key, recorder
        limits = httpx.Limits(max_connections=40, max_keepalive_connections=20)
        self.http = httpx.AsyncClient(base_url=base, timeout=CALL_TIMEOUT, limits=limits)
        self.admin_http = httpx.AsyncClient(base_url=admin, timeout=CALL_TIMEOUT,
                                            headers={"X-API-Key": key})
        self.channel = grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}")
        self.say = self.channel.unary_unary("/soak.Echo/Say")
        self.count = self.channel.unary_stream("/soak.Echo/Count")
        self.counter = 0
        self.admin_mock: str | None = None

    async def close(self) -> None:
        await self.http.aclose()
        await self.admin_http.aclose()
        await self.channel.close()

    def next_id(self) -> int:
        self.counter += 1
        return self.counter

    async def http_static(self) -> None:
        answer = await self.http.get("/soak/static")
        expect(answer.status_code == 200 and answer.json()["ok"] is True,
               f"static {answer.status_code}")

    async def http_template(self) -> None:
        n = self.next_id()
        answer = await self.http.get(f"/soak/users/{n}", params={"q": "x"})
        expect(answer.status_code == 200 and answer.json()["id"] == str(n),
               f"template {answer.status_code}")

    async def table(self) -> None:
        created = await self.http.post("/soak/items", json={"name": "soak", "n": self.next_id()})
        expect(created.status_code == 201, f"create {created.status_code} {created.text[:80]}")
        item = created.json()["id"]
        try:
            got = await self.http.get(f"/soak/items/{item}")
            expect(got.status_code == 200, f"get {got.status_code}")
            patched = await self.http.patch(f"/soak/items/{item}", json={"n": -1})
            expect(patched.status_code == 200 and patched.json()["n"] == -1,
                   f"patch {patched.status_code}")
            listed = await self.http.get("/soak/items", params={"limit": 5})
            expect(listed.status_code == 200, f"list {listed.status_code}")
        finally:
            deleted = await self.http.delete(f"/soak/items/{item}")
        expect(deleted.status_code == 204, f"delete {deleted.status_code}")

    async def sse(self) -> None:
        events = 0
        async with self.http.stream("GET", "/soak/events",
                                    headers={"Accept": "text/event-stream"}) as answer:
            expect(answer.status_code == 200, f"sse {answer.status_code}")
            async for line in answer.aiter_lines():
                if line.startswith("data:"):
                    events += 1
                    if events == 3:
                        break  # drop the stream mid-way
        expect(events == 3, f"sse ended after {events} events")

    async def websocket(self) -> None:
        from websockets.asyncio.client import connect

        url = self.base.replace("http://", "ws://") + "/soak/ws"
        async with connect(url, open_timeout=CALL_TIMEOUT, close_timeout=2) as socket_:
            await socket_.send("ping")
            reply = await socket_.recv()
            expect(reply == "pong", f"ws ping -> {reply!r}")
            await socket_.send(json.dumps({"type": "join", "user": {"name": "ann"}}))
            joined = json.loads(await socket_.recv())
            expect(joined == {"event": "joined", "user": "ann"}, f"ws join -> {joined}")

    async def graphql(self) -> None:
        n = self.next_id()
        answer = await self.http.post("/soak/graphql", json={
            "query": "query($id: ID!) { user(id: $id) { id name email } }",
            "variables": {"id": str(n)}})
        body = answer.json()
        expect(answer.status_code == 200 and body.get("data", {}).get("user", {}).get("id")
               == str(n), f"graphql {answer.status_code} {str(body)[:80]}")

    async def grpc_unary(self) -> None:
        reply = await self.say(grpc_message(f"n{self.next_id()}"), timeout=CALL_TIMEOUT)
        expect(b"hi n" in reply, f"grpc reply {reply!r}")

    async def grpc_stream(self) -> None:
        replies = [reply async for reply in self.count(grpc_message("s"), timeout=CALL_TIMEOUT)]
        expect(len(replies) == 5, f"grpc stream gave {len(replies)} messages")

    async def admin_write(self) -> None:
        mock_id = f"soak-admin-{self.next_id()}"
        created = await self.admin_http.post("/mocks", json={
            "id": mock_id, "type": "http", "http": {
                "matcher": {"method": "GET", "path": f"/soak/admin/{mock_id}"},
                "response": {"body": {"id": mock_id}}}})
        expect(created.status_code == 201, f"create mock {created.status_code}")
        previous, self.admin_mock = self.admin_mock, mock_id
        if previous:  # one failed delete is one error, not one every second after it
            deleted = await self.admin_http.delete(f"/mocks/{previous}")
            expect(deleted.status_code == 204, f"delete mock {deleted.status_code}")

    async def request_log(self, deadline: float) -> int:
        """Read the admin's request-log stream until ``deadline``; returns the events read.
        A stream that ends or stays silent for :data:`LOG_STREAM_SILENCE` is an error (and is
        opened again)."""
        import httpx

        events = 0
        while time.monotonic() < deadline:
            try:
                timeout = httpx.Timeout(CALL_TIMEOUT, read=LOG_STREAM_SILENCE)
                async with self.admin_http.stream("GET", "/requests/stream",
                                                  timeout=timeout) as answer:
                    expect(answer.status_code == 200, f"stream {answer.status_code}")
                    async for line in answer.aiter_lines():
                        if line.startswith("event: request"):
                            events += 1
                            self.recorder.calls["request_log"] += 1
                        if time.monotonic() >= deadline:
                            return events
                self.recorder.error("request_log", "stream ended")
            except (AssertionError, httpx.HTTPError) as error:
                if time.monotonic() < deadline:
                    self.recorder.error("request_log", f"{type(error).__name__}: {error}")
                    await asyncio.sleep(1)
        return events


class MqttLoad:
    """QoS 1 publishes on ``soak/<client>/in`` answered by the mock on ``soak/<client>/ack``
    (round trip timed), from a paho-mqtt client in its own network thread."""

    def __init__(self, port: int, recorder: Recorder):
        import paho.mqtt.client as mqtt

        self.mqtt, self.port, self.recorder = mqtt, port, recorder
        self.pending: dict[str, tuple[float, threading.Event]] = {}
        self.lock = threading.Lock()
        self.client = self._client("soak-main")
        self.client.on_message = self._on_message
        deadline = time.monotonic() + 30
        while True:  # the broker of the mock may still be starting
            try:
                self.client.connect("127.0.0.1", port, keepalive=30)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        self.client.subscribe("soak/soak-main/ack", qos=1)
        self.client.loop_start()
        self.n = 0

    def _client(self, client_id: str):
        return self.mqtt.Client(self.mqtt.CallbackAPIVersion.VERSION2, client_id=client_id)

    def _on_message(self, client, userdata, message) -> None:
        with self.lock:
            entry = self.pending.pop(message.payload.decode(errors="replace"), None)
        if entry:
            entry[1].set()

    def publish(self) -> None:
        """One timed round trip (blocking, run in a worker thread); raises on a timeout."""
        self.n += 1
        token = str(self.n)
        done = threading.Event()
        with self.lock:
            self.pending[token] = (time.monotonic(), done)
        self.client.publish("soak/soak-main/in", json.dumps({"n": token}), qos=1)
        if not done.wait(CALL_TIMEOUT):
            with self.lock:
                self.pending.pop(token, None)
            raise TimeoutError(f"no ack for publish {token} in {CALL_TIMEOUT}s")

    def connect_once(self, index: int) -> None:
        """A short-lived client: connect, publish once (QoS 1), disconnect."""
        client = self._client(f"soak-short-{index}")
        client.connect("127.0.0.1", self.port, keepalive=10)
        client.loop_start()
        try:
            info = client.publish(f"soak/short-{index}/in", json.dumps({"n": index}), qos=1)
            info.wait_for_publish(CALL_TIMEOUT)
            expect(info.is_published(), "short-lived client's publish not acknowledged")
        finally:
            client.disconnect()
            client.loop_stop()

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


# ---------------------------------------------------------------------------- sampling
def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and its children (live ones)."""
    total = 0
    for member in process_tree(pid):
        try:
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            continue
    return total / os.sysconf("SC_CLK_TCK")


def process_tree(pid: int) -> list[int]:
    pids, index = [pid], 0
    while index < len(pids):
        for task in Path(f"/proc/{pids[index]}/task").glob("*"):
            try:
                pids += [int(child) for child in (task / "children").read_text().split()]
            except OSError:
                pass
        index += 1
    return pids


def proc_status(pid: int) -> dict[str, int]:
    """RSS (KiB), threads and open file descriptors of ``pid`` and its children."""
    totals = {"rss_kib": 0, "threads": 0, "fds": 0}
    for member in process_tree(pid):
        try:
            for line in Path(f"/proc/{member}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    totals["rss_kib"] += int(line.split()[1])
                elif line.startswith("Threads:"):
                    totals["threads"] += int(line.split()[1])
            totals["fds"] += len(os.listdir(f"/proc/{member}/fd"))
        except OSError:
            continue
    return totals


def count_of(body: Any) -> int | None:
    """A count from an admin answer: ``total``, ``count``, ``totalItems``, a list's length, or
    the length of the first list value."""
    if isinstance(body, list):
        return len(body)
    if isinstance(body, dict):
        for key in ("totalItems", "total", "count"):
            if isinstance(body.get(key), int):
                return body[key]
        for value in body.values():
            if isinstance(value, list):
                return len(value)
    return None


ADMIN_COUNTS = {"request_log": "/requests?limit=1", "mocks": "/mocks?limit=1",
                "table_items": "/state", "sse_connections": "/sse/connections",
                "ws_connections": "/websocket/connections",
                "grpc_connections": "/grpc/connections", "mqtt_connections": "/mqtt-connections"}


async def sample(traffic: Traffic, pid: int, recorder: Recorder, since: float) -> dict:
    row: dict[str, Any] = {"t": round(recorder.now(), 1), **proc_status(pid)}
    for name, path in ADMIN_COUNTS.items():
        try:
            answer = await traffic.admin_http.get(path)
            row[name] = count_of(answer.json()) if answer.status_code == 200 else None
        except Exception:  # a sample that fails is shown as missing, not counted as traffic
            row[name] = None
    row["p99_ms"] = {protocol: recorder.p99(protocol, since) for protocol in PLOTTED}
    row["server_cpu_s"] = round(cpu_seconds(pid), 2)
    row["client_cpu_s"] = round(sum(os.times()[:2]), 2)
    row["load1"] = os.getloadavg()[0]
    return row


# ---------------------------------------------------------------------------- the run
def start_server(folder: Path, key: str,
                 trace: bool = False) -> tuple[subprocess.Popen, dict[str, Any]]:
    port, admin_port, grpc_port, mqtt_port = (free_port() for _ in range(4))
    (folder / "soak.proto").write_text(PROTO)
    (folder / "soak.json").write_text(json.dumps(soak_config(grpc_port, mqtt_port), indent=1))
    env = {name: value for name, value in os.environ.items() if not name.startswith("MOCKD_")}
    env.update(MOCKD_API_KEY=key, HOME=str(folder), NO_PROXY="127.0.0.1,localhost",
               no_proxy="127.0.0.1,localhost")
    if trace:
        (folder / "trace").mkdir()
        env["SOAK_TRACE_DIR"] = str(folder / "trace")
    command = [sys.executable, "-c", TRACE_BOOT] if trace else [MOCKD]
    argv = [*command, "start", "-c", str(folder / "soak.json"), "--port", str(port),
            "--admin-port", str(admin_port), "--data-dir", str(folder / "data"),
            "--pid-file", str(folder / "mockd.pid"), "--log-level", "warning"]
    log = open(folder / "server.log", "wb")
    process = subprocess.Popen(argv, cwd=folder, env=env, stdin=subprocess.DEVNULL,
                               stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    ports = {"port": port, "admin_port": admin_port, "grpc_port": grpc_port,
             "mqtt_port": mqtt_port}
    return process, ports


def wait_ready(process: subprocess.Popen, ports: dict[str, int], timeout: float = 60) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    for port in (ports["admin_port"], ports["port"]):
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"mockd exited with {process.returncode}")
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"mockd not healthy on {port} after {timeout}s")
            time.sleep(0.2)
    for port in (ports["grpc_port"],):  # the MQTT client retries its own connect
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"nothing listens on {port} after {timeout}s") from None
                time.sleep(0.2)


def stop_server(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def take_snapshot(process: subprocess.Popen, folder: Path, timeout: float = 120) -> Path:
    """Signal the traced server to dump a tracemalloc snapshot; returns its path."""
    trace = folder / "trace"
    path = trace / f"snap{len(list(trace.glob('snap*.bin'))):02d}.bin"
    process.send_signal(signal.SIGUSR1)
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise RuntimeError(f"no tracemalloc snapshot after {timeout}s")
        time.sleep(0.5)
    return path


def memory_growth(first: Path, middle: Path, last: Path,
                  top: int = 15) -> list[dict[str, Any]]:
    """The ``top`` allocation sites (their 4 innermost frames) whose traced memory grew most
    from the ``first`` snapshot to the ``last``, with the growth of each half."""
    import tracemalloc

    before, mid, after = (tracemalloc.Snapshot.load(str(path)) for path in (first, middle, last))
    first_half = {stat.traceback: stat.size_diff
                  for stat in mid.compare_to(before, "traceback")}
    rows = []
    for stat in after.compare_to(before, "traceback")[:top]:
        frames = [f"{Path(frame.filename).name}:{frame.lineno}" for frame in stat.traceback]
        half = first_half.get(stat.traceback, 0)
        rows.append({"kib": round(stat.size_diff / 1024, 1), "blocks": stat.count_diff,
                     "kib_halves": [round(half / 1024, 1),
                                    round((stat.size_diff - half) / 1024, 1)],
                     "total_kib": round(stat.size / 1024, 1), "where": frames[-6:]})
    return rows


async def drive(minutes: float, process: subprocess.Popen, ports: dict[str, int],
                key: str, folder: Path | None = None) -> dict[str, Any]:
    recorder = Recorder()
    deadline = time.monotonic() + minutes * 60
    traffic = Traffic(f"http://127.0.0.1:{ports['port']}",
                      f"http://127.0.0.1:{ports['admin_port']}", key, ports["grpc_port"],
                      recorder)
    mqtt_load = MqttLoad(ports["mqtt_port"], recorder)
    short_clients = iter(range(10**6))

    async def mqtt_publish() -> None:
        await asyncio.to_thread(mqtt_load.publish)

    async def mqtt_short() -> None:
        await asyncio.to_thread(mqtt_load.connect_once, next(short_clients))

    workers = [
        paced(recorder, "http_static", RATES["http_static"] / 2, deadline, traffic.http_static),
        paced(recorder, "http_static", RATES["http_static"] / 2, deadline, traffic.http_static),
        paced(recorder, "http_template", RATES["http_template"], deadline,
              traffic.http_template),
        paced(recorder, "table", RATES["table"], deadline, traffic.table),
        paced(recorder, "sse", RATES["sse"], deadline, traffic.sse),
        paced(recorder, "websocket", RATES["websocket"], deadline, traffic.websocket),
        paced(recorder, "graphql", RATES["graphql"], deadline, traffic.graphql),
        paced(recorder, "grpc_unary", RATES["grpc_unary"], deadline, traffic.grpc_unary),
        paced(recorder, "grpc_stream", RATES["grpc_stream"], deadline, traffic.grpc_stream),
        paced(recorder, "mqtt", RATES["mqtt"], deadline, mqtt_publish),
        paced(recorder, "mqtt", 0.2, deadline, mqtt_short),
        paced(recorder, "admin_write", RATES["admin_write"], deadline, traffic.admin_write),
        traffic.request_log(deadline),
    ]
    samples: list[dict] = []

    async def loop_lag() -> None:
        while time.monotonic() < deadline:
            started = time.monotonic()
            await asyncio.sleep(0.05)
            with recorder.lock:
                recorder.latencies["client_loop_lag"].append(
                    (recorder.now(), (time.monotonic() - started - 0.05) * 1000))

    snapshots: list[Path] = []
    warm_at = 120.0 if minutes >= 5 else minutes * 60 * 0.2
    tracing = False

    async def sampler() -> None:
        nonlocal tracing
        since = 0.0
        while time.monotonic() < deadline:
            if folder is not None and not tracing and recorder.now() >= warm_at / 2:
                process.send_signal(signal.SIGUSR1)  # starts tracemalloc in the server
                tracing = True
            if folder is not None and not snapshots and recorder.now() >= warm_at:
                snapshots.append(await asyncio.to_thread(take_snapshot, process, folder))
            if (folder is not None and len(snapshots) == 1
                    and recorder.now() >= (warm_at + minutes * 60) / 2):
                snapshots.append(await asyncio.to_thread(take_snapshot, process, folder))
            await asyncio.sleep(min(SAMPLE_SECONDS, max(0.0, deadline - time.monotonic())))
            if process.poll() is not None:
                recorder.error("server", f"mockd exited with {process.returncode}")
                return
            row = await sample(traffic, process.pid, recorder, since)
            since = row["t"]
            samples.append(row)
            print(f"[{row['t']:6.0f}s] rss {row['rss_kib'] / 1024:7.1f} MiB  fds {row['fds']:4d}"
                  f"  log {row['request_log']}  items {row['table_items']}  "
                  f"errors {sum(sum(c.values()) for c in recorder.errors.values())}",
                  flush=True)

    first = await sample(traffic, process.pid, recorder, 0.0)
    samples.append(first)
    try:
        await asyncio.gather(sampler(), loop_lag(), *workers)
        if folder is not None and snapshots:
            snapshots.append(await asyncio.to_thread(take_snapshot, process, folder))
    finally:
        await traffic.close()
        mqtt_load.close()
    return {"samples": samples, "recorder": recorder, "snapshots": snapshots}


def rss_growth(samples: list[dict], minutes: float) -> dict[str, Any]:
    """RSS growth from the sample nearest minute 2 (runs under 5 minutes: 20 % of the run)
    to the last sample, in percent."""
    warm = 120.0 if minutes >= 5 else minutes * 60 * 0.2
    after = [row for row in samples if row["t"] >= warm] or samples[-1:]
    start, end = after[0], samples[-1]
    growth = (end["rss_kib"] - start["rss_kib"]) / start["rss_kib"] * 100
    return {"from_t": start["t"], "to_t": end["t"], "from_mib": round(start["rss_kib"] / 1024, 1),
            "to_mib": round(end["rss_kib"] / 1024, 1), "growth_percent": round(growth, 2),
            "max_mib": round(max(row["rss_kib"] for row in after) / 1024, 1)}


def counts_drift(samples: list[dict], warm: float) -> dict[str, list]:
    """``{count: [value at warm-up end, value at the end]}`` of the sampled counts: a count
    that only grows is the object that leaks."""
    start = next(row for row in samples if row["t"] >= warm)
    return {name: [start.get(name), samples[-1].get(name)]
            for name in ("threads", "fds", *ADMIN_COUNTS)}


def cpu_percent(samples: list[dict]) -> dict[str, float]:
    """Average CPU use of the server and of this load client over the run (100 = one core)."""
    span = samples[-1]["t"] - samples[0]["t"] or 1.0
    return {who: round((samples[-1][key] - samples[0][key]) / span * 100, 1)
            for who, key in (("server", "server_cpu_s"), ("client", "client_cpu_s"))}


def plot(samples: list[dict], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    minutes = [row["t"] / 60 for row in samples]
    figure, (rss_axis, p99_axis) = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
    rss_axis.plot(minutes, [row["rss_kib"] / 1024 for row in samples], color="tab:blue",
                  marker=".")
    rss_axis.set_ylabel("server RSS (MiB)")
    rss_axis.set_ylim(bottom=0)
    rss_axis.grid(alpha=0.3)
    rss_axis.set_title(title)
    for protocol in PLOTTED:
        points = [(row["t"] / 60, row["p99_ms"].get(protocol)) for row in samples[1:]]
        points = [(x, y) for x, y in points if y is not None and y > 0]
        if points:
            style = ":" if protocol == "client_loop_lag" else "-"
            p99_axis.plot(*zip(*points), style, label=protocol, linewidth=1)
    p99_axis.set_yscale("log")
    p99_axis.set_ylabel("p99 per 10 s (ms, log)")
    p99_axis.set_xlabel("minutes")
    p99_axis.grid(alpha=0.3, which="both")
    p99_axis.legend(fontsize=7, ncol=4, loc="upper left")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--out", default=None,
                        help="JSON result (default bench/soak_<minutes>min.json)")
    parser.add_argument("--png", default=str(ROOT / "bench" / "soak.png"))
    parser.add_argument("--trace-memory", action="store_true",
                        help="run the server under tracemalloc and report what grew")
    parser.add_argument("--keep", action="store_true",
                        help="keep the server's folder (config, data, server.log)")
    args = parser.parse_args()
    out = Path(args.out or ROOT / "bench" / f"soak_{args.minutes:g}min.json")
    folder = Path(tempfile.mkdtemp(prefix="mockd-soak-"))
    key = "mk_" + secrets.token_hex(32)
    process, ports = start_server(folder, key, args.trace_memory)
    try:
        try:
            wait_ready(process, ports)
        except RuntimeError as error:
            print(f"server did not start: {error}\n{(folder / 'server.log').read_text()}",
                  file=sys.stderr)
            stop_server(process)
            shutil.rmtree(folder, ignore_errors=True)
            return 2
        result = asyncio.run(drive(args.minutes, process, ports, key,
                                   folder if args.trace_memory else None))
    finally:
        stop_server(process)
    snapshots = result["snapshots"]
    growth_sites = memory_growth(*snapshots) if len(snapshots) == 3 else None
    recorder: Recorder = result["recorder"]
    samples = result["samples"]
    server_log = (folder / "server.log").read_text(errors="replace")
    if args.keep:
        print(f"server folder kept: {folder}")
    else:
        shutil.rmtree(folder, ignore_errors=True)
    growth = rss_growth(samples, args.minutes)
    errors = {protocol: dict(kinds) for protocol, kinds in recorder.errors.items() if kinds}
    summary = {
        "minutes": args.minutes, "rates_per_second": RATES,
        "load": os.getloadavg(), "cpus": os.cpu_count(),
        "calls": dict(recorder.calls),
        "errors": errors, "error_total": sum(sum(kinds.values()) for kinds in errors.values()),
        "p99_ms": {protocol: recorder.p99(protocol) for protocol in PLOTTED},
        "p99_ms_after_warmup": {protocol: recorder.p99(protocol, growth["from_t"])
                                for protocol in PLOTTED},
        "counts_after_warmup_vs_end": counts_drift(samples, growth["from_t"]),
        "cpu_percent": cpu_percent(samples),
        "rss": growth,
        "tracemalloc_growth": growth_sites,
        "server_log_tail": server_log[-3000:],
        "samples": samples,
    }
    out.write_text(json.dumps(summary, indent=1) + "\n")
    plot(samples, Path(args.png),
         f"mockd soak: {args.minutes:g} min mixed traffic, RSS {growth['from_mib']} -> "
         f"{growth['to_mib']} MiB ({growth['growth_percent']:+.1f} %), "
         f"{summary['error_total']} errors")
    print(json.dumps({key: summary[key] for key in
                      ("calls", "errors", "error_total", "p99_ms", "rss",
                       "counts_after_warmup_vs_end", "cpu_percent", "load")}, indent=1))
    if growth_sites:
        print("tracemalloc, what grew after the warm-up:")
        for row in growth_sites:
            halves = "/".join(f"{kib:+.1f}" for kib in row["kib_halves"])
            print(f"  {row['kib']:+9.1f} KiB ({halves}) {row['blocks']:+7d} blocks  "
                  f"{' < '.join(row['where'][::-1][:3])}")
    print(f"wrote {out} and {args.png}")
    return 0 if growth["growth_percent"] < 10 and not errors else 1


if __name__ == "__main__":
    sys.exit(main())
