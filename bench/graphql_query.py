"""A GraphQL query vs a static HTTP mock, in one server.

Target (issue "GraphQL mocks"): a GraphQL query selecting 5 fields at ≥ 0.5× the requests/s
of the static ``GET /api/hello`` mock. Both are served by ONE ``mockd engine`` pinned to
core 0; wrk runs on core 1 and alternates short runs between the two cases, ``--rounds``
times in each order, so both meet the same state of the machine (a shared VM drifts by ±20 %
within seconds). The GraphQL case POSTs the same query text every time (so its parsed and
validated document comes from the cache): ``query User($id: ID!) { user(id: $id) { id name
email role active } }`` with ``variables {"id": "42"}``; ``Query.user`` answers a resolver
``response`` whose ``id`` is the template ``{{args.id}}``. That answer depends on the query
and its variables alone, so after the first request it comes from the mock's result memo.
A third case, ``executed``, asks the same 5 fields of ``Query.viewer``, whose ``name`` reads
a request header (``{{request.header.x-user}}``): it is executed on every
request (documents still cached): it is answered by the lean query executor
(``mocks.protocols.graphql.fastpath``), graphql-core running only what it does not cover. Prints the median requests/s of each case and the median
of per-pair ratios against static.

Usage: python bench/graphql_query.py [--rounds 10] [--seconds 2] [--connections 50]
Needs wrk (Debian package) and taskset. Writes bench/out/graphql.json.
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_bench import HERE, MOCKD, free_port, hello_mock, wait_ready  # noqa: E402

SDL = """
enum Role { ADMIN EDITOR VIEWER }
type User { id: ID! name: String! email: String! role: Role! active: Boolean! age: Int }
type Query { user(id: ID!): User, viewer(id: ID!): User, users: [User!]! }
"""
GRAPHQL_MOCK = {"id": "gql", "type": "graphql", "graphql": {
    "path": "/graphql", "schema": SDL,
    "resolvers": {"Query.user": {"response": {"id": "{{args.id}}", "name": "Ada Lovelace",
                                              "email": "ada@example.com", "role": "ADMIN",
                                              "active": True}},
                  "Query.viewer": {"response": {"id": "{{args.id}}",
                                                "name": "{{request.header.x-user}}",
                                                "email": "ada@example.com", "role": "ADMIN",
                                                "active": True}}}}}
QUERY = {"query": "query User($id: ID!) { user(id: $id) { id name email role active } }",
         "variables": {"id": "42"}, "operationName": "User"}
EXECUTED = {"query": "query Viewer($id: ID!) { viewer(id: $id) { id name email role active } }",
            "variables": {"id": "42"}, "operationName": "Viewer"}
CASES = ("static", "graphql", "executed")


def requests_per_second(port: int, case: str, seconds: int, connections: int,
                        scripts: dict[str, Path]) -> float:
    argv = ["taskset", "-c", "1", "wrk", "-t1", f"-c{connections}", f"-d{seconds}s"]
    if case in scripts:
        argv += ["-s", str(scripts[case])]
        url = f"http://127.0.0.1:{port}/graphql"
    else:
        url = f"http://127.0.0.1:{port}/api/hello"
    output = subprocess.run(argv + [url], capture_output=True, text=True, check=True).stdout
    return float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))


def check_answer(port: int) -> None:
    """The GraphQL case answers what it should (a benchmark of errors proves nothing)."""
    import httpx

    answer = httpx.post(f"http://127.0.0.1:{port}/graphql", json=QUERY, trust_env=False)
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"data": {"user": {"id": "42", "name": "Ada Lovelace",
                                               "email": "ada@example.com", "role": "ADMIN",
                                               "active": True}}}, answer.text
    answer = httpx.post(f"http://127.0.0.1:{port}/graphql", json=EXECUTED,
                        headers={"x-user": "Ada"}, trust_env=False)
    assert answer.json()["data"]["viewer"]["name"] == "Ada", answer.text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10, help="pairs per order")
    parser.add_argument("--seconds", type=int, default=2, help="length of one wrk run")
    parser.add_argument("--connections", type=int, default=50)
    arguments = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="mockd-graphql-"))
    config = {"version": "1.0", "mocks": [hello_mock(), GRAPHQL_MOCK]}
    config_path = workdir / "both.yaml"
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    scripts = {}
    for case, body in (("graphql", QUERY), ("executed", EXECUTED)):
        scripts[case] = workdir / f"{case}.lua"
        scripts[case].write_text(f'wrk.method = "POST"\nwrk.body = {json.dumps(json.dumps(body))}\n'
                                 'wrk.headers["Content-Type"] = "application/json"\n'
                                 'wrk.headers["X-User"] = "Ada"\n')
    port = free_port()
    server = subprocess.Popen(["taskset", "-c", "0", MOCKD, "engine", "-c", str(config_path),
                               "--port", str(port)], stdout=subprocess.DEVNULL,
                              stderr=open(workdir / "engine.log", "wb"))
    try:
        wait_ready(f"http://127.0.0.1:{port}/health", server)
        check_answer(port)
        for case in CASES:  # warm-up
            requests_per_second(port, case, 2, arguments.connections, scripts)
        orders = {"static first": CASES, "graphql first": CASES[::-1]}
        results: dict[str, dict] = {}
        every: dict[str, list[float]] = {"graphql": [], "executed": []}
        for label, order in orders.items():
            runs: dict[str, list[float]] = {case: [] for case in CASES}
            for _ in range(arguments.rounds):
                for case in order:
                    runs[case].append(requests_per_second(port, case, arguments.seconds,
                                                          arguments.connections, scripts))
            results[label] = {f"{case}_median_rps": round(statistics.median(runs[case]))
                              for case in CASES}
            for case in ("graphql", "executed"):
                ratios = [g / s for g, s in zip(runs[case], runs["static"])]
                every[case] += ratios
                results[label][f"{case}_median_ratio"] = round(statistics.median(ratios), 3)
                results[label][f"{case}_ratios"] = [round(ratio, 3) for ratio in ratios]
            print(f"{label:14} static {statistics.median(runs['static']):.0f} req/s, graphql "
                  f"{statistics.median(runs['graphql']):.0f} req/s (ratio "
                  f"{results[label]['graphql_median_ratio']:.3f}), executed "
                  f"{statistics.median(runs['executed']):.0f} req/s (ratio "
                  f"{results[label]['executed_median_ratio']:.3f}), {arguments.rounds} rounds")
        for case in ("graphql", "executed"):
            results[f"overall_{case}_median_ratio"] = round(statistics.median(every[case]), 3)
            print(f"{'overall':14} {case}/static median {statistics.median(every[case]):.3f}")
    finally:
        server.terminate()
        server.wait(timeout=10)
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    (out / "graphql.json").write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
