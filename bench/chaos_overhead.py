"""Static GET with chaos off vs chaos enabled with no rule matching, in one run.

Target (issue "chaos injection and TLS"): the chaos-enabled server at ≥ 0.95× the requests/s
of the same static ``GET /api/hello`` with chaos off. Two ``mockd engine`` processes serve the
same mock, both pinned to core 0 (only one is loaded at a time); the second starts with
``serverConfig.chaos`` enabled and three rules whose path regexes never match ``/api/hello``
(so every request is counted, tested against every rule and then passed on untouched: the
whole cost of chaos being on). wrk runs on core 1 and alternates short runs between the two,
``--rounds`` times in each order, so both meet the same state of the machine (a shared VM
drifts by ±20 % within seconds). Prints the median requests/s of each case and the median of
per-pair ratios.

Usage: python bench/chaos_overhead.py [--rounds 10] [--seconds 2] [--connections 50]
Needs wrk (Debian package) and taskset. Writes bench/out/chaos.json.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_bench import HERE, MOCKD, free_port, hello_mock, wait_ready  # noqa: E402
from soap import requests_per_second  # noqa: E402  (one wrk run on core 1)

#: Chaos on, with rules that never match the benchmarked path.
CHAOS_NO_MATCH = {"enabled": True, "rules": [
    {"pathPattern": "^/payments/", "faults": [{"type": "error", "statusCodes": [503]}]},
    {"pathPattern": "^/orders/\\d+$", "methods": ["POST"],
     "faults": [{"type": "latency", "min": "100ms", "max": "200ms"}]},
    {"pathPattern": "^/flaky", "faults": [{"type": "circuit_breaker",
                                          "closedErrorRate": 0.5}]}]}


def start(config: dict, workdir: Path, name: str) -> tuple[subprocess.Popen, str]:
    path = workdir / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    port = free_port()
    process = subprocess.Popen(["taskset", "-c", "0", MOCKD, "engine", "-c", str(path),
                                "--port", str(port)], stdout=subprocess.DEVNULL,
                               stderr=open(workdir / f"{name}.log", "wb"))
    base = f"http://127.0.0.1:{port}"
    wait_ready(f"{base}/health", process)
    return process, f"{base}/api/hello"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10, help="pairs per order")
    parser.add_argument("--seconds", type=int, default=2, help="length of one wrk run")
    parser.add_argument("--connections", type=int, default=50)
    arguments = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="mockd-chaos-bench-"))
    servers = []
    try:
        plain, plain_url = start({"version": "1.0", "mocks": [hello_mock()]}, workdir, "off")
        servers.append(plain)
        chaotic, chaos_url = start({"version": "1.0", "serverConfig": {"chaos": CHAOS_NO_MATCH},
                                    "mocks": [hello_mock()]}, workdir, "chaos")
        servers.append(chaotic)
        cases = {"off": plain_url, "chaos": chaos_url}
        for url in cases.values():  # warm-up
            requests_per_second(url, 2, arguments.connections, None)
        rates: dict[str, list[float]] = {"off": [], "chaos": []}
        ratios: list[float] = []
        failures = 0
        for order in (("off", "chaos"), ("chaos", "off")):
            for _ in range(arguments.rounds):
                pair = {}
                for name in order:
                    rate, bad = requests_per_second(cases[name], arguments.seconds,
                                                    arguments.connections, None)
                    pair[name] = rate
                    rates[name].append(rate)
                    failures += bad
                ratios.append(pair["chaos"] / pair["off"])
    finally:
        for process in servers:
            process.terminate()
            process.wait(timeout=10)
    median = statistics.median
    results = {"off_median_rps": round(median(rates["off"])),
               "chaos_median_rps": round(median(rates["chaos"])),
               "median_ratio": round(median(ratios), 3), "pairs": len(ratios),
               "non2xx": failures, "ratios": [round(ratio, 3) for ratio in ratios]}
    print(f"static GET, chaos off              {results['off_median_rps']:>7} req/s (median)")
    print(f"static GET, chaos on, no rule hit  {results['chaos_median_rps']:>7} req/s (median)")
    print(f"chaos/off ratio                    {results['median_ratio']:.3f} (median of "
          f"{len(ratios)} pairs; target >= 0.95); non-2xx answers: {failures}")
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    (out / "chaos.json").write_text(json.dumps(results, indent=2))
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
