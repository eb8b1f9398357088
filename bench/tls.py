"""Static GET over HTTP vs HTTPS (keep-alive), in one server.

Target (issue "Chaos injection and TLS"): the HTTPS port at ≥ 0.7× the requests/s of the
plain port for the same static ``GET /api/hello`` mock. ONE ``mockd engine`` pinned to core 0
serves both ports (``serverConfig.httpsPort`` and ``tls.autoGenerateCert``: the self-signed
ECDSA P-256 ``localhost`` certificate, generated into a temporary data directory); wrk runs on core 1 with keep-alive
connections (wrk's default: each connection does its TLS handshake once) and alternates short
runs between the two cases, ``--rounds`` times in each order, so both meet the same state of
the machine. Prints the median requests/s of each case and the median of per-pair ratios.

Usage: python bench/tls.py [--rounds 8] [--seconds 2] [--connections 50]
Needs wrk (Debian package, built with OpenSSL) and taskset. Writes bench/out/tls.json.
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
from soap import requests_per_second  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=8, help="pairs per order")
    parser.add_argument("--seconds", type=int, default=2, help="length of one wrk run")
    parser.add_argument("--connections", type=int, default=50)
    arguments = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="mockd-tls-bench-"))
    port, https_port = free_port(), free_port()
    config_path = workdir / "tls.yaml"
    config_path.write_text(yaml.safe_dump({
        "version": "1.0", "mocks": [hello_mock()],
        "serverConfig": {"httpsPort": https_port,
                         "tls": {"enabled": True, "autoGenerateCert": True}}},
        sort_keys=False))
    cases = {"http": f"http://127.0.0.1:{port}/api/hello",
             "https": f"https://127.0.0.1:{https_port}/api/hello"}
    server = subprocess.Popen(["taskset", "-c", "0", MOCKD, "engine", "-c", str(config_path),
                               "--port", str(port), "--data-dir", str(workdir / "data")], stdout=subprocess.DEVNULL,
                              stderr=open(workdir / "engine.log", "wb"))
    try:
        wait_ready(f"http://127.0.0.1:{port}/health", server)
        for url in cases.values():  # warm-up
            requests_per_second(url, 2, arguments.connections, None)
        rates: dict[str, list[float]] = {"http": [], "https": []}
        ratios: list[float] = []
        failures = 0
        for order in (("http", "https"), ("https", "http")):
            for _ in range(arguments.rounds):
                pair = {}
                for name in order:
                    rate, bad = requests_per_second(cases[name], arguments.seconds,
                                                    arguments.connections, None)
                    pair[name] = rate
                    rates[name].append(rate)
                    failures += bad
                ratios.append(pair["https"] / pair["http"])
    finally:
        server.terminate()
        server.wait(timeout=10)
    median = statistics.median
    results = {"http_median_rps": round(median(rates["http"])),
               "https_median_rps": round(median(rates["https"])),
               "median_ratio": round(median(ratios), 3), "pairs": len(ratios),
               "non2xx": failures, "ratios": [round(ratio, 3) for ratio in ratios]}
    print(f"static GET over HTTP  {results['http_median_rps']:>7} req/s (median)")
    print(f"static GET over HTTPS {results['https_median_rps']:>7} req/s (median)")
    print(f"https/http ratio      {results['median_ratio']:.3f} (median of {len(ratios)} pairs; "
          f"target >= 0.7); non-2xx answers: {failures}")
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    (out / "tls.json").write_text(json.dumps(results, indent=2))
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
