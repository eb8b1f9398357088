"""Templated vs static throughput, measured in one server with short alternating runs.

The target of issue "response templating" is a ratio: the templated case (five expressions:
path param, query param, body field, ``uuid``, ``faker.name``) at ≥ 70 % of the static
``GET /api/hello`` figure. On a shared VM the machine's speed drifts by ±20 % within seconds,
so two 10-second runs taken a minute apart can disagree by more than the effect measured.
This script serves both mocks from ONE ``mockd engine`` (pinned to core 0) and alternates
1-second wrk runs (core 1) between them, ``--rounds`` times in each order (static first, then
templated first), so both cases meet the same state of the machine. It prints the median of
the per-pair ratios for each order and overall.

Usage: python bench/templated_ratio.py [--rounds 30] [--seconds 1] [--connections 50]
Needs wrk (Debian package) and taskset. Writes bench/out/templated_ratio.json.
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
from run_bench import (HERE, MOCKD, POST_USER, free_port, hello_mock,  # noqa: E402
                       templated_config, wait_ready)

STATIC = ("GET", "/api/hello", None)
TEMPLATED = ("POST", "/api/users/42?q=search", POST_USER)


def requests_per_second(port: int, case: tuple[str, str, str | None], seconds: int,
                        connections: int, script: Path) -> float:
    method, path, _ = case
    argv = ["taskset", "-c", "1", "wrk", "-t1", f"-c{connections}", f"-d{seconds}s"]
    if method != "GET":
        argv += ["-s", str(script)]
    output = subprocess.run(argv + [f"http://127.0.0.1:{port}{path}"], capture_output=True,
                            text=True, check=True).stdout
    return float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30, help="pairs per order")
    parser.add_argument("--seconds", type=int, default=1, help="length of one wrk run")
    parser.add_argument("--connections", type=int, default=50)
    arguments = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="mockd-ratio-"))
    config = templated_config()
    config["mocks"].append(hello_mock())
    config_path = workdir / "both.yaml"
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    script = workdir / "post.lua"
    script.write_text(f'wrk.method = "POST"\nwrk.body = {json.dumps(POST_USER)}\n'
                      'wrk.headers["Content-Type"] = "application/json"\n')
    port = free_port()
    server = subprocess.Popen(["taskset", "-c", "0", MOCKD, "engine", "-c", str(config_path),
                               "--port", str(port)], stdout=subprocess.DEVNULL,
                              stderr=open(workdir / "engine.log", "wb"))
    try:
        wait_ready(f"http://127.0.0.1:{port}/health", server)
        for case in (STATIC, TEMPLATED):  # warm-up
            requests_per_second(port, case, 2, arguments.connections, script)
        orders = {"static first": (STATIC, TEMPLATED), "templated first": (TEMPLATED, STATIC)}
        results: dict[str, dict] = {}
        for label, order in orders.items():
            static_runs, templated_runs = [], []
            for _ in range(arguments.rounds):
                for case in order:
                    rate = requests_per_second(port, case, arguments.seconds,
                                               arguments.connections, script)
                    (static_runs if case is STATIC else templated_runs).append(rate)
            ratios = [t / s for t, s in zip(templated_runs, static_runs)]
            results[label] = {"median_ratio": round(statistics.median(ratios), 3),
                              "static_median_rps": round(statistics.median(static_runs)),
                              "templated_median_rps": round(statistics.median(templated_runs)),
                              "ratios": [round(r, 3) for r in ratios]}
            print(f"{label:16} templated/static median {statistics.median(ratios):.3f} "
                  f"(static {statistics.median(static_runs):.0f} req/s, templated "
                  f"{statistics.median(templated_runs):.0f} req/s, {len(ratios)} pairs)")
        every = [r for result in results.values() for r in result["ratios"]]
        results["overall_median_ratio"] = round(statistics.median(every), 3)
        print(f"{'overall':16} templated/static median {statistics.median(every):.3f}")
    finally:
        server.terminate()
        server.wait(timeout=10)
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    (out / "templated_ratio.json").write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
