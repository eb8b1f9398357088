"""gRPC unary benchmark: ``mockd engine`` (a ``grpc`` mock) against a hand-written ``grpc.aio``
server with generated stubs answering the same message (the ceiling).

Both servers run on 127.0.0.1 for the whole run, each in its own process:

* ``mockd``: ``mockd engine -c`` with one ``grpc`` mock (``helloworld.Greeter/SayHello``
  answering the static ``{"message": "Hi"}``; request log on; all defaults);
* ``ceiling``: a ``grpc.aio`` server on uvloop with stubs generated now by grpcio-tools,
  whose servicer returns ``HelloReply(message="Hi")``.

A separate client process (``grpc.aio``, one channel, ``--concurrency`` calls in flight)
sends ``HelloRequest(name="bench")`` for ``--warmup`` seconds (not counted), then
``--duration`` seconds (counted), first against one server, then the other (the order
alternates over ``--rounds``). ``--pin`` puts the servers on core 0 and the client on core 1.

Reports per server: calls/s, p50 and p99 latency in ms; and the ratio mockd / ceiling (per
round and the median). Target (issue "gRPC mocks"): ratio >= 0.7, mockd p99 < 10 ms.

Usage: python bench/grpc_unary.py [--concurrency 50] [--duration 10] [--warmup 2]
                                  [--rounds 1] [--pin] [--out bench/out/grpc_unary.json]
Every loop and wait is bounded.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROTO = """syntax = "proto3";
package helloworld;
service Greeter { rpc SayHello (HelloRequest) returns (HelloReply); }
message HelloRequest { string name = 1; }
message HelloReply { string message = 1; }
"""

CEILING = """
import asyncio, sys
sys.path.insert(0, sys.argv[2])
import grpc, uvloop
import greeter_pb2, greeter_pb2_grpc

class Greeter(greeter_pb2_grpc.GreeterServicer):
    async def SayHello(self, request, context):
        return greeter_pb2.HelloReply(message="Hi")

async def main():
    server = grpc.aio.server()
    greeter_pb2_grpc.add_GreeterServicer_to_server(Greeter(), server)
    server.add_insecure_port("127.0.0.1:" + sys.argv[1])
    await server.start()
    print("ready", flush=True)
    await server.wait_for_termination()

uvloop.run(main())
"""

CLIENT = """
import asyncio, json, sys, time
sys.path.insert(0, sys.argv[1])
import grpc, uvloop
import greeter_pb2, greeter_pb2_grpc

async def main(port, concurrency, warmup, duration):
    async with grpc.aio.insecure_channel("127.0.0.1:" + str(port)) as channel:
        await asyncio.wait_for(channel.channel_ready(), 10)
        stub = greeter_pb2_grpc.GreeterStub(channel)
        request = greeter_pb2.HelloRequest(name="bench")
        latencies = []
        start = time.perf_counter()
        counted_from = start + warmup
        end = counted_from + duration
        async def worker():
            while True:
                sent = time.perf_counter()
                if sent >= end:
                    return
                await stub.SayHello(request, timeout=10)
                done = time.perf_counter()
                if sent >= counted_from:
                    latencies.append(done - sent)
        await asyncio.gather(*(worker() for _ in range(concurrency)))
    latencies.sort()
    count = len(latencies)
    print(json.dumps({"calls": count, "rate": count / duration,
                      "p50": latencies[count // 2] * 1000 if count else None,
                      "p99": latencies[min(count - 1, int(count * 0.99))] * 1000 if count else None}))

uvloop.run(main(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])))
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_port(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on {port} after {timeout}s")


def pinned(argv: list[str], core: int | None) -> list[str]:
    return ["taskset", "-c", str(core), *argv] if core is not None else argv


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--pin", action="store_true")
    parser.add_argument("--out", default=str(ROOT / "bench" / "out" / "grpc_unary.json"))
    args = parser.parse_args()
    python = sys.executable
    mockd = str(Path(python).parent / "mockd")
    with tempfile.TemporaryDirectory(prefix="grpc-bench-") as folder:
        Path(folder, "greeter.proto").write_text(PROTO)
        from grpc_tools import protoc

        assert protoc.main(["protoc", f"-I{folder}", f"--python_out={folder}",
                            f"--grpc_python_out={folder}", f"{folder}/greeter.proto"]) == 0
        mock_port, ceiling_port, http_port = free_port(), free_port(), free_port()
        Path(folder, "mocks.json").write_text(json.dumps({"version": "1.0", "mocks": [{
            "id": "greeter", "type": "grpc", "grpc": {
                "port": mock_port, "protoFile": "greeter.proto",
                "services": {"helloworld.Greeter": {"methods": {"SayHello": {
                    "response": {"message": "Hi"}}}}}}}]}))
        server_core = 0 if args.pin else None
        client_core = 1 if args.pin else None
        processes = [
            subprocess.Popen(pinned([mockd, "engine", "-c", f"{folder}/mocks.json", "--port",
                                     str(http_port), "--log-level", "warning"], server_core),
                             cwd=folder, stdout=subprocess.DEVNULL),
            subprocess.Popen(pinned([python, "-c", CEILING, str(ceiling_port), folder],
                                    server_core), stdout=subprocess.DEVNULL)]
        results: dict[str, list[dict]] = {"mockd": [], "ceiling": []}
        try:
            wait_port(mock_port)
            wait_port(ceiling_port)
            for round_number in range(args.rounds):
                order = [("mockd", mock_port), ("ceiling", ceiling_port)]
                if round_number % 2:
                    order.reverse()
                for name, port in order:
                    answer = subprocess.run(
                        pinned([python, "-c", CLIENT, folder, str(port), str(args.concurrency),
                                str(args.warmup), str(args.duration)], client_core),
                        capture_output=True, text=True,
                        timeout=args.warmup + args.duration + 60)
                    if answer.returncode != 0:
                        raise RuntimeError(answer.stderr[-2000:])
                    results[name].append(json.loads(answer.stdout.strip().splitlines()[-1]))
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
    ratios = [mock["rate"] / ceiling["rate"]
              for mock, ceiling in zip(results["mockd"], results["ceiling"])]
    summary = {name: {"rate": statistics.median(row["rate"] for row in rows),
                      "p50": statistics.median(row["p50"] for row in rows),
                      "p99": statistics.median(row["p99"] for row in rows)}
               for name, rows in results.items()}
    summary["ratio"] = statistics.median(ratios)
    summary["ratios"] = ratios
    summary["settings"] = vars(args)
    for name in ("ceiling", "mockd"):
        row = summary[name]
        print(f"{name:8} {row['rate']:9.0f} calls/s  p50 {row['p50']:6.2f} ms  "
              f"p99 {row['p99']:6.2f} ms")
    print(f"ratio mockd/ceiling {summary['ratio']:.2f} (rounds: "
          + ", ".join(f"{ratio:.2f}" for ratio in ratios) + ")")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    Path(args.out).write_text(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
