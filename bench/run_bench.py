"""Data-plane benchmark: mockd engine vs a raw ASGI ceiling, loaded with wrk on loopback.

Server pinned to core 0, wrk to core 1: ``wrk -t1 -c50 -d5s --latency`` per round. Every
server is started first; then each round loads them one after another (ceiling, static, ...,
ceiling, static, ...), so a slow spell of the machine hits every scenario alike. Reports the
median req/s, p50 and p99 over the rounds, server RSS at the end, the ratio to the raw-ASGI
ceiling, and for the templated case the median of its per-round ratios to static and
static-post.

Scenarios (issue "runnable mock server", item 8):
  ceiling   raw ASGI hello-world under uvicorn (same settings)
  static    GET /api/hello -> {"message":"hello"}, the only mock
  crowded   the same among 1,000 other mocks, half with {param} paths
  jsonpath  POST /api/orders with a bodyJsonPath matcher
  daphne    static, served by daphne (--server daphne)
  static-post POST /api/users/{id}?q= with a JSON body, static answer (the templated twin)
  templated   the same with five template expressions (path param, query param, body field,
              uuid, faker.name)
  list      GET /api/items: a table of 100 seeded items through an extend binding
  create    POST /api/items with a small JSON body (the table grows during the run)

  list      GET /api/items over 100 seeded table items
  create    POST /api/items with a small JSON body
  --peers adds json-server 0.17 (npm) serving the same 100 items, for list and create

Usage: python bench/run_bench.py [--duration 5] [--rounds 3] [--connections 50]
                                 [--only static,crowded] [--peers]
Needs wrk (Debian package) and taskset; --peers needs node and npm. Writes
bench/out/results.json.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import yaml

HERE = Path(__file__).resolve().parent
PYTHON = sys.executable
MOCKD = str(Path(sys.executable).parent / "mockd")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def hello_mock() -> dict:
    return {"id": "hello", "http": {"matcher": {"method": "GET", "path": "/api/hello"},
                                    "response": {"statusCode": 200,
                                                 "body": {"message": "hello"}}}}


def crowded_config() -> dict:
    mocks = []
    for index in range(1000):
        if index % 2:
            path = f"/api/resource{index}/{{id}}/items/{{item}}"
        else:
            path = f"/api/static{index}/list"
        mocks.append({"id": f"m{index}", "http": {
            "matcher": {"method": ["GET", "POST", "PUT"][index % 3], "path": path},
            "response": {"body": {"index": index}}}})
    mocks.insert(500, hello_mock())
    return {"version": "1.0", "mocks": mocks}


def jsonpath_config() -> dict:
    return {"version": "1.0", "mocks": [
        {"id": "order-gold", "http": {
            "matcher": {"method": "POST", "path": "/api/orders",
                        "bodyJsonPath": {"$.customer.tier": "gold", "$.items[0].sku": "A-1"}},
            "response": {"statusCode": 201, "body": {"accepted": True, "tier": "gold"}}}},
        {"id": "order-any", "http": {
            "matcher": {"method": "POST", "path": "/api/orders"},
            "response": {"statusCode": 201, "body": {"accepted": True}}}},
    ]}


def static_post_config() -> dict:
    """The templated case's twin without templates: same method, path shape and body."""
    return {"version": "1.0", "mocks": [
        {"id": "static-post", "http": {
            "matcher": {"method": "POST", "path": "/api/users/{id}"},
            "response": {"body": {"id": "42", "q": "search", "name": "Ada",
                                  "requestId": "5f0c3b4e-1111-4222-8333-444455556666",
                                  "fake": "Grace Hopper"}}}}]}


def templated_config() -> dict:
    return {"version": "1.0", "mocks": [
        {"id": "templated", "http": {
            "matcher": {"method": "POST", "path": "/api/users/{id}"},
            "response": {"body": {"id": "{{request.pathParam.id}}",
                                  "q": "{{request.query.q}}",
                                  "name": "{{request.body.name}}",
                                  "requestId": "{{uuid}}",
                                  "fake": "{{faker.name}}"}}}}]}


def items_config() -> dict:
    """The peers' stateful cases: one ``items`` table (100 seeded items) bound to
    ``GET /api/items`` (list) and ``POST /api/items`` (create)."""
    seed = [{"id": str(index), "name": f"item {index}", "price": index * 1.5,
             "inStock": index % 2 == 0} for index in range(1, 101)]
    return {"version": "1.0",
            "mocks": [{"id": "items-list", "http": {"matcher": {"method": "GET",
                                                                "path": "/api/items"}}},
                      {"id": "items-create", "http": {"matcher": {"method": "POST",
                                                                  "path": "/api/items"}}}],
            "tables": [{"name": "items", "seedData": seed}],
            "extend": [{"mock": "items-list", "table": "items", "action": "list"},
                       {"mock": "items-create", "table": "items", "action": "create"}]}


POST_ORDER = json.dumps({"customer": {"tier": "gold"}, "items": [{"sku": "A-1", "qty": 2}]})
POST_USER = json.dumps({"name": "Ada"})
POST_ITEM = json.dumps({"name": "new item", "price": 9.99})

# Loaded in this order every round: the cases compared with each other sit side by side, so
# they meet the same state of the machine.
SCENARIOS = {
    "static": ({"version": "1.0", "mocks": [hello_mock()]}, "GET", "/api/hello", None, []),
    "static-post": (static_post_config(), "POST", "/api/users/42?q=search", POST_USER, []),
    "templated": (templated_config(), "POST", "/api/users/42?q=search", POST_USER, []),
    "crowded": (crowded_config(), "GET", "/api/hello", None, []),
    "jsonpath": (jsonpath_config(), "POST", "/api/orders", POST_ORDER, []),
    "daphne": ({"version": "1.0", "mocks": [hello_mock()]}, "GET", "/api/hello", None,
               ["--server", "daphne"]),
    "list": (items_config(), "GET", "/api/items", None, []),
    "create": (items_config(), "POST", "/api/items", POST_ITEM, []),
}


def wait_ready(url: str, process: subprocess.Popen, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        try:
            if httpx.get(url, timeout=1, trust_env=False).status_code < 500:
                return
        except httpx.HTTPError:
            time.sleep(0.05)
    raise RuntimeError(f"{url} not ready in {timeout}s")


def rss_mb(pid: int) -> float:
    text = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+)", text).group(1)) / 1024


def parse_latency(text: str, label: str) -> float:
    match = re.search(rf"^\s+{label}%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)
    if not match:
        return float("nan")
    value, unit = float(match.group(1)), match.group(2)
    return value / 1000 if unit == "us" else value * 1000 if unit == "s" else value


def run_wrk(url: str, method: str, body: str | None, duration: int, connections: int) -> dict:
    argv = ["taskset", "-c", "1", "wrk", "-t1", f"-c{connections}", f"-d{duration}s",
            "--latency"]
    script = None
    if method != "GET":
        script = tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False)
        script.write(f'wrk.method = "{method}"\nwrk.body = {json.dumps(body)}\n'
                     'wrk.headers["Content-Type"] = "application/json"\n')
        script.close()
        argv += ["-s", script.name]
    output = subprocess.run(argv + [url], capture_output=True, text=True, check=True).stdout
    if script:
        os.unlink(script.name)
    requests = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    errors = re.search(r"Socket errors: (.*)", output)
    return {"rps": requests, "p50_ms": parse_latency(output, "50"),
            "p99_ms": parse_latency(output, "99"), "non2xx": int(non2xx.group(1)) if non2xx else 0,
            "socket_errors": errors.group(1) if errors else ""}


class Server:
    """One server under test, pinned to core 0, alive for the whole run."""

    def __init__(self, name: str, argv: list[str], url: str, method: str, body: str | None,
                 workdir: Path, health_url: str | None = None):
        self.name, self.url, self.method, self.body = name, url, method, body
        self.process = subprocess.Popen(["taskset", "-c", "0", *argv],
                                        stdout=subprocess.DEVNULL,
                                        stderr=open(workdir / f"{name}.log", "wb"), cwd=workdir)
        self.rounds: list[dict] = []
        try:
            wait_ready(health_url or url, self.process)
        except BaseException:
            self.stop()
            raise

    def load(self, duration: int, connections: int, warm_up: bool = False) -> None:
        if warm_up:  # fills caches, lets the allocator settle
            run_wrk(self.url, self.method, self.body, 2, connections)
            return
        self.rounds.append(run_wrk(self.url, self.method, self.body, duration, connections))

    def summary(self) -> dict:
        median = statistics.median
        return {"rps": median(r["rps"] for r in self.rounds),
                "rounds_rps": [round(r["rps"]) for r in self.rounds],
                "p50_ms": median(r["p50_ms"] for r in self.rounds),
                "p99_ms": median(r["p99_ms"] for r in self.rounds),
                "non2xx": sum(r["non2xx"] for r in self.rounds),
                "socket_errors": "; ".join(r["socket_errors"] for r in self.rounds
                                           if r["socket_errors"]),
                "rss_mb": round(rss_mb(self.process.pid), 1)}

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


JSON_SERVER_VERSION = "0.17.4"


def json_server_command(workdir: Path, port: int) -> list[str]:
    """Install json-server under bench/out/peers once, write its db.json, return its argv."""
    prefix = HERE / "out" / "peers"
    binary = prefix / "node_modules" / ".bin" / "json-server"
    if not binary.exists():
        prefix.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix",
                        str(prefix), f"json-server@{JSON_SERVER_VERSION}"], check=True)
    items = items_config()["tables"][0]["seedData"]
    database = workdir / "db.json"
    database.write_text(json.dumps({"items": items}))
    return [str(binary), "--port", str(port), "--host", "127.0.0.1", "--quiet", str(database)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=5, help="seconds per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--only", default="", help="comma-separated scenario names")
    parser.add_argument("--peers", action="store_true",
                        help="also measure json-server on the list and create cases")
    arguments = parser.parse_args()
    if not shutil.which("wrk"):
        print("wrk is not installed (apt-get install wrk)", file=sys.stderr)
        return 2
    selected = [name for name in SCENARIOS
                if not arguments.only or name in arguments.only.split(",")]
    workdir = Path(tempfile.mkdtemp(prefix="mockd-bench-"))
    servers: list[Server] = []
    try:
        port = free_port()
        servers.append(Server("ceiling", [PYTHON, str(HERE / "raw_asgi.py"), str(port)],
                              f"http://127.0.0.1:{port}/api/hello", "GET", None, workdir))
        for name in selected:
            config, method, path, body, extra = SCENARIOS[name]
            config_path = workdir / f"{name}.yaml"
            config_path.write_text(yaml.safe_dump(config, sort_keys=False))
            port = free_port()
            argv = [MOCKD, "engine", "-c", str(config_path), "--port", str(port), *extra]
            servers.append(Server(name, argv, f"http://127.0.0.1:{port}{path}", method, body,
                                  workdir, health_url=f"http://127.0.0.1:{port}/health"))
        if arguments.peers:
            for name, method, body in (("json-server-list", "GET", None),
                                       ("json-server-create", "POST", POST_ITEM)):
                port = free_port()
                servers.append(Server(name, json_server_command(workdir, port),
                                      f"http://127.0.0.1:{port}/items", method, body, workdir))
        for server in servers:
            server.load(arguments.duration, arguments.connections, warm_up=True)
        for _ in range(arguments.rounds):
            for server in servers:
                server.load(arguments.duration, arguments.connections)
        results = {server.name: server.summary() for server in servers}
        by_name = {server.name: server for server in servers}
    finally:
        for server in servers:
            server.stop()
    ceiling = results["ceiling"]["rps"]
    print(f"{'scenario':<18} {'req/s':>9} {'ratio':>7} {'p50 ms':>8} {'p99 ms':>8} "
          f"{'RSS MB':>7} {'non-2xx':>8}")
    for name, result in results.items():
        result["ratio_to_ceiling"] = round(result["rps"] / ceiling, 3)
        print(f"{name:<18} {result['rps']:>9.0f} {result['ratio_to_ceiling']:>7.2f} "
              f"{result['p50_ms']:>8.2f} {result['p99_ms']:>8.2f} {result['rss_mb']:>7.1f} "
              f"{result['non2xx']:>8}")
    for ours, peer in (("list", "json-server-list"), ("create", "json-server-create")):
        if ours in results and peer in results:
            ratio = results[ours]["rps"] / results[peer]["rps"]
            results[ours]["ratio_to_json_server"] = round(ratio, 2)
            print(f"{ours}: {ratio:.1f}x json-server")
    for reference in ("static", "static-post"):
        if reference in results and "templated" in results:
            ratios = [ours["rps"] / theirs["rps"] for ours, theirs
                      in zip(by_name["templated"].rounds, by_name[reference].rounds)]
            ratio = statistics.median(ratios)
            results["templated"][f"ratio_to_{reference}"] = round(ratio, 3)
            results["templated"][f"round_ratios_to_{reference}"] = [round(r, 3) for r in ratios]
            print(f"templated: {ratio:.2f} of {reference} (median of rounds: "
                  f"{', '.join(f'{r:.2f}' for r in ratios)})")
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    (out / "results.json").write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
