"""Loading GitHub's published GraphQL schema, and introspecting it, in a real server.

Targets (issue "Protocol files from the wild", GraphQL part): GitHub's schema loads in under
3 s and 150 MB; a repeated introspection answers in under 100 ms.

The schema files come from npm at run time (``@octokit/graphql-schema``, through
``tests/thirdparty.py``: an installed copy, the cache under the temp directory, or
``npm pack``), never from the repository.

Measured:

* **load**: ``mocks.protocols.graphql.schema.load_schema`` of ``schema.graphql`` (SDL) and of
  ``schema.json`` (introspection JSON), each in a fresh Python process (imports done before
  the clock starts), ``--repeat`` times: wall and CPU seconds, the process's RSS after the
  load and the growth the load caused (MB);
* **server**: ``mockd engine`` with one ``graphql`` mock of the SDL (``introspection: true``,
  default limits): seconds from spawn to ready (startup and load), RSS once ready; the first
  standard introspection query (graphql-core's ``get_introspection_query()``, descriptions
  included) and ``--repeat-queries`` repeats (min and median), RSS afterwards. The client is
  one httpx client on a kept-alive connection, timed from sending to the whole 2.7 MB answer
  received (most of a repeat's time is httpx reading it).

Usage: python bench/graphql_schemas.py [--repeat 3] [--repeat-queries 20]
Writes bench/out/graphql_schemas.json. Prints the 1-minute load average with each figure (the
machine is shared; CPU seconds are the steadier figure under load).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from run_bench import HERE, MOCKD, free_port, rss_mb, wait_ready  # noqa: E402

OCTOKIT = "@octokit/graphql-schema@" + os.environ.get("MOCKD_TEST_OCTOKIT_SCHEMA", "15.26.1")

#: Run in a fresh interpreter: load one schema file, print the figures as JSON.
LOAD_ONE = """
import json, logging, resource, sys, time
from pathlib import Path
logging.disable(logging.WARNING)
from mocks.protocols.graphql.schema import load_schema

def rss():
    status = Path("/proc/self/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0]) / 1024

text = Path(sys.argv[1]).read_text(encoding="utf-8")
before = rss()
wall, cpu = time.perf_counter(), time.process_time()
loaded = load_schema(text, "bench")
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
print(json.dumps({"form": loaded.form, "types": len(loaded.schema.type_map),
                  "wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "rss_mb": round(rss(), 1),
                  "growth_mb": round(rss() - before, 1),
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                                       / 1024, 1)}))
"""


def load_average() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


def measure_load(path: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", LOAD_ONE, str(path)], capture_output=True,
                          text=True, check=True)
    figures = json.loads(done.stdout)
    figures["load_average"] = load_average()
    return figures


def introspect(client: httpx.Client, url: str, query: str) -> tuple[float, int, int]:
    started = time.perf_counter()
    answer = client.post(url, json={"query": query})
    elapsed = time.perf_counter() - started
    return elapsed, answer.status_code, len(answer.content)


def measure_server(sdl: Path, queries: int) -> dict:
    from graphql import get_introspection_query

    workdir = Path(tempfile.mkdtemp(prefix="mockd-graphql-schemas-"))
    (workdir / "github.graphql").write_bytes(sdl.read_bytes())
    config = {"version": "1.0", "mocks": [{"id": "github", "type": "graphql", "graphql": {
        "path": "/graphql", "schemaFile": "github.graphql", "introspection": True}}]}
    (workdir / "mocks.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    port = free_port()
    started = time.perf_counter()
    server = subprocess.Popen([MOCKD, "engine", "-c", str(workdir / "mocks.yaml"), "--port",
                               str(port)], cwd=workdir, stdout=subprocess.DEVNULL,
                              stderr=open(workdir / "engine.log", "wb"))
    try:
        wait_ready(f"http://127.0.0.1:{port}/health", server, timeout=120)
        ready = time.perf_counter() - started
        figures = {"ready_s": round(ready, 2), "rss_ready_mb": round(rss_mb(server.pid), 1),
                   "load_average": load_average()}
        url = f"http://127.0.0.1:{port}/graphql"
        query = get_introspection_query(descriptions=True)
        with httpx.Client(timeout=120, trust_env=False) as client:  # one kept-alive connection
            first, status, size = introspect(client, url, query)
            assert status == 200, status
            repeats = []
            for _ in range(queries):
                elapsed, status, _ = introspect(client, url, query)
                assert status == 200, status
                repeats.append(elapsed)
        figures.update(first_introspection_s=round(first, 3), answer_bytes=size,
                       repeated_min_ms=round(min(repeats) * 1000, 1),
                       repeated_median_ms=round(statistics.median(repeats) * 1000, 1),
                       rss_after_mb=round(rss_mb(server.pid), 1))
        return figures
    finally:
        server.terminate()
        server.wait(timeout=10)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="loads of each file")
    parser.add_argument("--repeat-queries", type=int, default=20,
                        help="introspection queries after the first")
    arguments = parser.parse_args()
    from tests.thirdparty import npm_file

    try:
        sdl, introspection = npm_file(OCTOKIT, "schema.graphql"), npm_file(OCTOKIT,
                                                                          "schema.json")
    except BaseException as error:  # pytest's skip outcome when npm cannot fetch it
        print(f"cannot fetch {OCTOKIT}: {error}")
        return 1
    results: dict = {"package": OCTOKIT, "load": {}, "server": None}
    for path in (sdl, introspection):
        runs = [measure_load(path) for _ in range(arguments.repeat)]
        results["load"][path.name] = runs
        for run in runs:
            print(f"load {path.name:15} {run['form']:18} {run['types']} types: "
                  f"{run['wall_s']:.2f} s wall, {run['cpu_s']:.2f} s CPU, RSS {run['rss_mb']} MB "
                  f"(+{run['growth_mb']} MB, peak {run['peak_rss_mb']} MB), "
                  f"load average {run['load_average']}")
    server = results["server"] = measure_server(sdl, arguments.repeat_queries)
    print(f"server: ready in {server['ready_s']} s, RSS {server['rss_ready_mb']} MB; first "
          f"introspection {server['first_introspection_s']} s ({server['answer_bytes']} bytes); "
          f"repeated min {server['repeated_min_ms']} ms, median "
          f"{server['repeated_median_ms']} ms; RSS after {server['rss_after_mb']} MB; "
          f"load average {server['load_average']}")
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    (out / "graphql_schemas.json").write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
