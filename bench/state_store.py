"""Table list and create through the Redis state store against the in-memory store.

Target (issue #32): create through Redis at ≥ 0.5× the in-memory figure. Two ``mockd
engine`` processes serve the same config (a 100-item seeded table bound to ``GET
/api/items`` and ``POST /api/items``), one with the default in-memory store and one with
``--state-store`` on a local ``redis-server`` (``--save "" --appendonly no``). wrk
(``-t1 -c<connections>``, 1-second runs) alternates between the two servers for each case,
``--rounds`` times in each order (memory first, then Redis first), so both meet the same
state of a shared machine; the script prints the median of the per-pair ratios
(Redis / memory). Nothing is pinned: the engine, Redis and wrk share the cores. The list
case runs first, over the 100 seeded items (a Redis list reads the whole table, so its cost
grows with the table); the create case then grows both tables (a Redis create reads
nothing first: the commit checks that the generated id is free).

Usage: python bench/state_store.py [--rounds 10] [--seconds 1] [--connections 20]
Needs wrk and redis-server (Debian packages). Writes bench/out/state_store.json.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from run_bench import MOCKD, free_port, wait_ready  # noqa: E402

from tests.redis_server import RedisServer, redis_server_path  # noqa: E402

ITEM = {"name": "widget", "price": 12, "tags": ["a", "b"]}


def config() -> dict:
    """A 100-item table with list and create bound over HTTP."""
    seed = [{"id": f"it_{index:03d}", "name": f"item {index}", "price": index,
             "category": "odd" if index % 2 else "even"} for index in range(100)]
    mocks = [{"id": name, "type": "http", "http": {"matcher": {"method": method,
                                                               "path": "/api/items"}}}
             for name, method in (("list", "GET"), ("create", "POST"))]
    return {"version": "1.0", "tables": [{"name": "items", "seedData": seed}],
            "mocks": mocks,
            "extend": [{"mock": "list", "table": "items", "action": "list"},
                       {"mock": "create", "table": "items", "action": "create"}]}


def requests_per_second(port: int, case: str, seconds: int, connections: int,
                        script: Path) -> float:
    argv = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s"]
    if case == "create":
        argv += ["-s", str(script)]
    output = subprocess.run(argv + [f"http://127.0.0.1:{port}/api/items"],
                            capture_output=True, text=True, check=True).stdout
    errors = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    if errors:
        raise RuntimeError(f"{case} on port {port}: {errors.group(1)} error answers")
    return float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10, help="pairs per order and case")
    parser.add_argument("--seconds", type=int, default=1, help="length of one wrk run")
    parser.add_argument("--connections", type=int, default=20)
    arguments = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="mockd-state-"))
    config_path = workdir / "items.yaml"
    config_path.write_text(yaml.safe_dump(config(), sort_keys=False))
    script = workdir / "create.lua"
    script.write_text(f'wrk.method = "POST"\nwrk.body = {json.dumps(json.dumps(ITEM))}\n'
                      'wrk.headers["Content-Type"] = "application/json"\n')
    redis = RedisServer(redis_server_path(), workdir).start()
    servers: dict[str, tuple[int, subprocess.Popen]] = {}
    try:
        for label, extra in (("memory", []), ("redis", ["--state-store", redis.url])):
            port = free_port()
            servers[label] = (port, subprocess.Popen(
                [MOCKD, "engine", "-c", str(config_path), "--port", str(port), *extra],
                stdout=subprocess.DEVNULL, stderr=open(workdir / f"{label}.log", "wb")))
            wait_ready(f"http://127.0.0.1:{port}/health", servers[label][1])
        results: dict[str, dict] = {"load_before": os.getloadavg()[0]}
        for case in ("list", "create"):  # list first: over the 100 seeded items
            for port, _ in servers.values():  # warm-up
                requests_per_second(port, case, 1, arguments.connections, script)
            memory_runs, redis_runs, ratios = [], [], []
            for order in (("memory", "redis"), ("redis", "memory")):
                for _ in range(arguments.rounds):
                    pair = {label: requests_per_second(servers[label][0], case,
                                                       arguments.seconds,
                                                       arguments.connections, script)
                            for label in order}
                    memory_runs.append(pair["memory"])
                    redis_runs.append(pair["redis"])
                    ratios.append(pair["redis"] / pair["memory"])
            results[case] = {"memory_median_rps": round(statistics.median(memory_runs)),
                             "redis_median_rps": round(statistics.median(redis_runs)),
                             "median_ratio": round(statistics.median(ratios), 3),
                             "ratio_spread": [round(min(ratios), 3), round(max(ratios), 3)]}
            print(f"{case}: memory {results[case]['memory_median_rps']} req/s, redis "
                  f"{results[case]['redis_median_rps']} req/s, ratio "
                  f"{results[case]['median_ratio']} (pairs {results[case]['ratio_spread']})",
                  flush=True)
        results["load_after"] = os.getloadavg()[0]
        results["command"] = " ".join(["python bench/state_store.py", *sys.argv[1:]])
        (HERE / "out").mkdir(exist_ok=True)
        (HERE / "out" / "state_store.json").write_text(json.dumps(results, indent=2))
        print(f"load average {results['load_before']:.1f} -> {results['load_after']:.1f}")
    finally:
        for _, process in servers.values():
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        redis.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
