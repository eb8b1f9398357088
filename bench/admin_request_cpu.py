"""CPU of one admin API request: what the admin port spends per ``GET /health`` and
``GET /mocks`` (the calls a dashboard poll, a client command and a test setup make).

Each round starts ``mockd start -c examples/quickstart.yaml --no-auth`` on free loopback ports
with a fresh data directory and the admin rate limit off (``MOCKD_ADMIN_RATE_LIMIT=0``: the
loop sends more than 100 requests a second), waits until ready (as ``bench/full_start.py``), sends 20 warm-up
requests, then ``--requests`` ``GET /health`` and as many ``GET /mocks`` on one kept-alive
connection, reading the server's user + system CPU (``/proc/<pid>/stat``) before and after.
Figures are milliseconds of server CPU per request (both kinds together), and the client's
wall time per request. ``--alternate DIR`` runs a second checkout round for round with this
one, so both see the same load.

Usage: python bench/admin_request_cpu.py [--rounds 3] [--requests 300] [--tree DIR]
                                         [--alternate DIR]
Exit status 1 when a server is not ready within 30 s.
"""
from __future__ import annotations

import argparse
import http.client
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

from benchenv import add_tree_arguments, tree_envs, trees_of
from engine_start import cpu_seconds, stop
from full_start import launch, wait_ready


def one_round(config: Path, requests: int, env: dict[str, str], tree: Path,
              data_dir: Path) -> tuple[float, float]:
    """``(server CPU ms per request, client wall ms per request)`` of one server."""
    process, _, admin_port = launch(config, env, tree, data_dir)
    try:
        with httpx.Client(timeout=2.0, trust_env=False) as client:
            wait_ready(process, client, [f"http://127.0.0.1:{admin_port}/health"],
                       time.perf_counter() + 30)
        connection = http.client.HTTPConnection("127.0.0.1", admin_port, timeout=10)
        paths = ["/health", "/mocks"]
        for index in range(20):
            connection.request("GET", paths[index % 2])
            connection.getresponse().read()
        before = cpu_seconds(process.pid)
        started = time.perf_counter()
        for path in ["/health"] * requests + ["/mocks"] * requests:
            connection.request("GET", path)
            response = connection.getresponse()
            response.read()
            if response.status != 200:
                raise RuntimeError(f"GET {path} answered {response.status}")
        wall = time.perf_counter() - started
        cpu = cpu_seconds(process.pid) - before
        connection.close()
    finally:
        stop(process)
    return 1000 * cpu / (2 * requests), 1000 * wall / (2 * requests)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests", type=int, default=300)
    add_tree_arguments(parser)
    arguments = parser.parse_args()
    trees = trees_of(arguments)
    figures: dict[Path, list[tuple[float, float]]] = {tree: [] for tree in trees}
    config = arguments.config.resolve()
    with tempfile.TemporaryDirectory(prefix="mockd-bench-") as folder:
        # The admin rate limit (100 requests/s) would refuse the loop's requests.
        envs = tree_envs(Path(folder), trees, MOCKD_ADMIN_RATE_LIMIT="0",
                         MOCKD_TESTS_CHEAP_PASSWORD_HASH="insecure-md5-for-tests")
        for index in range(arguments.rounds):
            for number, tree in enumerate(trees):  # alternating: load changes hit both
                data_dir = Path(folder) / str(number) / f"data-{index}"
                try:
                    cpu, wall = one_round(config, arguments.requests, envs[tree], tree,
                                          data_dir)
                except RuntimeError as error:
                    print(f"{tree}: round {index + 1}: {error}", file=sys.stderr)
                    return 1
                figures[tree].append((cpu, wall))
                print(f"{tree}: round {index + 1}: server CPU {cpu:.2f} ms a request, "
                      f"client wall {wall:.2f} ms")
    for tree in trees:
        cpus, walls = (list(column) for column in zip(*figures[tree]))
        print(f"{tree}: median of {len(cpus)}: server CPU {statistics.median(cpus):.2f} ms a "
              f"request; client wall {statistics.median(walls):.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
