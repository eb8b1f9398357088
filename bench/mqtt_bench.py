"""MQTT benchmark: an ``mqtt`` mock of ``mockd engine`` against Debian's ``mosquitto`` broker
in the same run, plus 1,000 simulated devices of a mock.

Relay runs (``--qos 0`` and ``--qos 1``, each against mosquitto, mockd and a plain amqtt
broker without mockd's plugin, to tell the library's cost from mockd's own): ``--pairs`` publishers
(default 100) and as many subscribers, each on its own connection; subscriber *i* subscribes
to ``bench/<i>`` and publisher *i* publishes 64-byte messages there carrying its send time.
The load is closed-loop: a publisher keeps at most ``--window`` messages (default 10) sent
and not yet delivered to its subscriber, so neither broker is driven into unbounded queues.
After ``--warmup`` seconds (not counted), ``--duration`` seconds (default 10) are counted:
messages delivered per second and the p50/p99 latency (send to delivery, ms). The ratio
mockd / mosquitto is reported per QoS (target: >= 0.3 at QoS 0).

Device run: ``mockd engine`` with one mock whose topic ``devices/{deviceId}/data`` has
``deviceSimulation`` of ``--devices`` devices (default 1,000), each publishing
``{{timestamp.unix_ms}}`` every second; one subscriber on ``devices/+/data`` counts messages/s
and the p99 of arrival time minus the payload's time, ms (target: p99 < 50 ms).

Everything runs on 127.0.0.1. The load client is this script in a separate process (asyncio
on uvloop, a minimal MQTT 3.1.1 client); ``--pin`` puts the brokers on core 0 and the client on
core 1. mosquitto runs with a minimal config (one loopback listener, anonymous, no
persistence); it is looked up on PATH and in /usr/sbin (``apt-get install mosquitto``).

Usage: python bench/mqtt_bench.py [--pairs 100] [--duration 10] [--warmup 2] [--window 10]
                                  [--devices 1000] [--qos 0 1] [--pin]
                                  [--out bench/out/mqtt.json]
Every loop and wait is bounded.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent))
from grpc_unary import free_port, pinned, wait_port  # noqa: E402  (bench helpers)

ROOT = Path(__file__).resolve().parents[1]
PAYLOAD_SIZE = 64


# ---- the load client (runs in its own process) ----------------------------------------------

def _text(value: str) -> bytes:
    raw = value.encode()
    return struct.pack("!H", len(raw)) + raw


def _packet(header: int, body: bytes) -> bytes:
    size, length = len(body), bytearray()
    while True:
        size, digit = divmod(size, 128)
        length.append(digit | (0x80 if size else 0))
        if not size:
            return bytes([header]) + bytes(length) + body


async def _read(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    first = (await reader.readexactly(1))[0]
    size, shift = 0, 0
    while True:
        digit = (await reader.readexactly(1))[0]
        size |= (digit & 0x7F) << shift
        shift += 7
        if not digit & 0x80:
            break
    return first, await reader.readexactly(size)


async def _connect(port: int, client_id: str):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(_packet(0x10, _text("MQTT") + bytes([4, 0x02]) + struct.pack("!H", 120)
                         + _text(client_id)))
    first, body = await asyncio.wait_for(_read(reader), 10)
    if first >> 4 != 2 or body[1] != 0:
        raise RuntimeError(f"CONNACK refused: {body!r}")
    return reader, writer


def _percentile(values: list[float], share: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def relay(port: int, pairs: int, qos: int, window: int, warmup: float,
                duration: float) -> dict:
    """One relay run; returns ``{rate, p50, p99, delivered}`` (msg/s, ms, count)."""
    start = time.monotonic() + 1.0
    begin, end = start + warmup, start + warmup + duration
    latencies: list[float] = []
    sent = [0] * pairs
    received = [0] * pairs
    wake = [asyncio.Event() for _ in range(pairs)]
    stop = asyncio.Event()

    async def subscriber(index: int) -> None:
        reader, writer = await _connect(port, f"sub-{index}")
        writer.write(_packet(0x82, struct.pack("!H", 1) + _text(f"bench/{index}")
                             + bytes([qos])))
        ready.append(index)
        while not stop.is_set():
            try:
                first, body = await asyncio.wait_for(_read(reader), 1.0)
            except asyncio.TimeoutError:
                continue
            if first >> 4 != 3:
                continue
            now = time.monotonic_ns()
            at = 2 + struct.unpack("!H", body[:2])[0]
            if (first >> 1) & 3:
                writer.write(_packet(0x40, body[at:at + 2]))
                at += 2
            sent_at = struct.unpack("!q", body[at:at + 8])[0]
            received[index] += 1
            wake[index].set()
            if begin * 1e9 <= now < end * 1e9:
                latencies.append((now - sent_at) / 1e6)
        writer.close()

    async def drain_acks(reader: asyncio.StreamReader) -> None:
        while not stop.is_set():
            try:
                await asyncio.wait_for(_read(reader), 1.0)
            except asyncio.TimeoutError:
                continue
            except (asyncio.IncompleteReadError, ConnectionError):
                return

    async def publisher(index: int) -> None:
        reader, writer = await _connect(port, f"pub-{index}")
        acks = asyncio.ensure_future(drain_acks(reader))
        topic = _text(f"bench/{index}")
        header = 0x30 | (qos << 1)
        packet_id = 0
        while time.monotonic() < start:
            await asyncio.sleep(0.05)
        while time.monotonic() < end:
            if sent[index] - received[index] >= window:
                wake[index].clear()
                try:
                    await asyncio.wait_for(wake[index].wait(), 2.0)
                except asyncio.TimeoutError:
                    received[index] = sent[index]  # a lost QoS 0 message frees its slot
                continue
            body = topic
            if qos:
                packet_id = packet_id % 65535 + 1
                body += struct.pack("!H", packet_id)
            stamp = struct.pack("!q", time.monotonic_ns())
            writer.write(_packet(header, body + stamp + b"x" * (PAYLOAD_SIZE - 8)))
            sent[index] += 1
            if writer.transport.get_write_buffer_size() > 65536:
                await writer.drain()
        acks.cancel()
        writer.close()

    ready: list[int] = []
    subscribers = [asyncio.ensure_future(subscriber(index)) for index in range(pairs)]
    deadline = time.monotonic() + 30
    while len(ready) < pairs and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)  # SUBACKs
    start = max(start, time.monotonic() + 0.2)
    begin, end = start + warmup, start + warmup + duration
    await asyncio.wait_for(asyncio.gather(*(publisher(index) for index in range(pairs))),
                           warmup + duration + 60)
    await asyncio.sleep(0.5)
    stop.set()
    await asyncio.wait_for(asyncio.gather(*subscribers, return_exceptions=True), 10)
    return {"rate": len(latencies) / duration, "delivered": len(latencies),
            "p50": _percentile(latencies, 0.50), "p99": _percentile(latencies, 0.99)}


async def devices(port: int, warmup: float, duration: float) -> dict:
    """Subscribe to ``devices/+/data``; ``{rate, p50, p99, devicesSeen}`` over the window."""
    reader, writer = await _connect(port, "device-watch")
    writer.write(_packet(0x82, struct.pack("!H", 1) + _text("devices/+/data") + bytes([0])))
    begin = time.monotonic() + warmup
    end = begin + duration
    latencies: list[float] = []
    seen: set[str] = set()
    while time.monotonic() < end:
        try:
            first, body = await asyncio.wait_for(_read(reader), max(0.01, end - time.monotonic()))
        except asyncio.TimeoutError:
            break
        if first >> 4 != 3:
            continue
        now_ms = time.time() * 1000
        size = struct.unpack("!H", body[:2])[0]
        if time.monotonic() >= begin:
            seen.add(body[2:2 + size].decode())
            latencies.append(now_ms - float(body[2 + size:]))
    writer.close()
    return {"rate": len(latencies) / duration, "devicesSeen": len(seen),
            "p50": _percentile(latencies, 0.50), "p99": _percentile(latencies, 0.99)}


def client_main(argv: list[str]) -> None:
    """``--client relay PORT PAIRS QOS WINDOW WARMUP DURATION`` or ``--client devices PORT
    WARMUP DURATION``: prints one JSON line."""
    try:
        import uvloop
        uvloop.install()
    except ImportError:
        pass
    if argv[0] == "relay":
        port, pairs, qos, window = (int(value) for value in argv[1:5])
        result = asyncio.run(relay(port, pairs, qos, window, float(argv[5]), float(argv[6])))
    else:
        result = asyncio.run(devices(int(argv[1]), float(argv[2]), float(argv[3])))
    print(json.dumps(result), flush=True)


#: A plain amqtt broker (no mockd plugin), to tell amqtt's own cost from mockd's.
AMQTT = """
import asyncio, sys
import uvloop
from amqtt.broker import Broker

async def main():
    broker = Broker({"listeners": {"default": {"type": "tcp", "bind": "127.0.0.1:" + sys.argv[1],
                                               "max_connections": 10000}},
                     "plugins": {"amqtt.plugins.authentication.AnonymousAuthPlugin":
                                 {"allow_anonymous": True}}})
    await broker.start()
    await asyncio.Event().wait()

uvloop.run(main())
"""


# ---- the driver -------------------------------------------------------------------------------

@contextmanager
def running(argv: list[str], port: int, cwd: str) -> Iterator[subprocess.Popen]:
    process = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    try:
        wait_port(port)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def run_client(args_list: list[str], core: int | None, timeout: float) -> dict:
    answer = subprocess.run(pinned([sys.executable, __file__, "--client", *args_list], core),
                            capture_output=True, text=True, timeout=timeout)
    if answer.returncode != 0:
        raise RuntimeError(answer.stderr[-2000:])
    return json.loads(answer.stdout.strip().splitlines()[-1])


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--client":
        client_main(sys.argv[2:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=100)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--window", type=int, default=10)
    parser.add_argument("--devices", type=int, default=1000)
    parser.add_argument("--qos", type=int, nargs="+", default=[0, 1], choices=[0, 1])
    parser.add_argument("--pin", action="store_true")
    parser.add_argument("--out", default=str(ROOT / "bench" / "out" / "mqtt.json"))
    args = parser.parse_args()
    mosquitto = shutil.which("mosquitto") or shutil.which("mosquitto", path="/usr/sbin")
    if not mosquitto:
        print("mosquitto not found: apt-get install -y mosquitto", file=sys.stderr)
        return 2
    mockd = str(Path(sys.executable).parent / "mockd")
    server_core, client_core = (0, 1) if args.pin else (None, None)
    timeout = args.warmup + args.duration + 120
    results: dict = {"settings": vars(args)}
    with tempfile.TemporaryDirectory(prefix="mqtt-bench-") as folder:
        mock_port, mosq_port, http_port = free_port(), free_port(), free_port()
        amqtt_port = free_port()
        Path(folder, "mocks.json").write_text(json.dumps({"version": "1.0", "mocks": [
            {"id": "relay", "type": "mqtt", "mqtt": {"port": mock_port}}]}))
        Path(folder, "mosquitto.conf").write_text(
            f"listener {mosq_port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
            "log_dest none\n")
        engine = pinned([mockd, "engine", "-c", f"{folder}/mocks.json", "--port",
                         str(http_port), "--log-level", "warning"], server_core)
        broker = pinned([mosquitto, "-c", f"{folder}/mosquitto.conf"], server_core)
        plain = pinned([sys.executable, "-c", AMQTT, str(amqtt_port)], server_core)
        for qos in args.qos:
            for name, argv, port in (("mosquitto", broker, mosq_port),
                                     ("mockd", engine, mock_port),
                                     ("amqtt", plain, amqtt_port)):
                with running(argv, port, folder):
                    row = run_client(["relay", str(port), str(args.pairs), str(qos),
                                      str(args.window), str(args.warmup),
                                      str(args.duration)], client_core, timeout)
                results[f"qos{qos}_{name}"] = row
                print(f"QoS {qos} {name:9}: {row['rate']:9.0f} msg/s delivered, "
                      f"p50 {row['p50']:.2f} ms, p99 {row['p99']:.2f} ms", flush=True)
            rates = {name: results[f"qos{qos}_{name}"]["rate"]
                     for name in ("mosquitto", "mockd", "amqtt")}
            results[f"qos{qos}_ratio"] = ratio = rates["mockd"] / rates["mosquitto"]
            print(f"QoS {qos} ratio mockd / mosquitto: {ratio:.2f}; mockd / plain amqtt: "
                  f"{rates['mockd'] / rates['amqtt']:.2f}", flush=True)
        if args.devices:
            device_port = free_port()
            Path(folder, "devices.json").write_text(json.dumps({"version": "1.0", "mocks": [
                {"id": "fleet", "type": "mqtt", "mqtt": {"port": device_port, "topics": [
                    {"topic": "devices/{deviceId}/data",
                     "deviceSimulation": {"enabled": True, "deviceCount": args.devices,
                                          "deviceIdPattern": "dev-{n}"},
                     "messages": [{"payload": "{{timestamp.unix_ms}}", "repeat": True,
                                   "interval": "1s"}]}]}}]}))
            with running(pinned([mockd, "engine", "-c", f"{folder}/devices.json", "--port",
                                 str(http_port), "--log-level", "warning"], server_core),
                         device_port, folder):
                row = run_client(["devices", str(device_port), str(args.warmup),
                                  str(args.duration)], client_core, timeout)
            results["devices"] = row
            print(f"{args.devices} devices at 1 msg/s: {row['rate']:.0f} msg/s, "
                  f"{row['devicesSeen']} devices seen, p50 {row['p50']:.1f} ms, "
                  f"p99 {row['p99']:.1f} ms", flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("NO_PROXY", "127.0.0.1")
    sys.exit(main())
