"""Static GET on ``mockd engine --workers 2`` against ``--workers 1``, in one run.

Target (issue 32): ≥ 1.4× the requests/s of one worker on this 2-core machine, where wrk
takes part of a core. Both servers serve the same static ``GET /api/hello`` and run at once
(only one is loaded at a time); nothing is pinned, so the kernel places wrk and the workers
as it would for a user. wrk (``-t1 -c100``) alternates short runs between the two,
``--rounds`` times in each order, so both meet the same state of a shared machine. Prints
the median requests/s of each, the median of per-pair ratios, the RSS of every worker
process after the runs, and the load average before and after.

Usage: python bench/workers.py [--rounds 5] [--seconds 3] [--connections 100]
Needs wrk (Debian package). Writes bench/out/workers.json.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_bench import HERE, MOCKD, free_port, hello_mock, rss_mb, wait_ready  # noqa: E402


def start(workers: int, config: Path, workdir: Path) -> tuple[subprocess.Popen, str]:
    """``mockd engine --workers N`` on a free port; returns the process and the URL."""
    port = free_port()
    process = subprocess.Popen([MOCKD, "engine", "-c", str(config), "--port", str(port),
                                "--workers", str(workers)],
                               stdout=subprocess.DEVNULL,
                               stderr=open(workdir / f"workers-{workers}.log", "wb"))
    base = f"http://127.0.0.1:{port}"
    wait_ready(f"{base}/health", process)
    return process, f"{base}/api/hello"


def worker_pids(pid: int) -> list[int]:
    """The process and its children (the workers 1..N-1)."""
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [pid, *map(int, children)]


def requests_per_second(url: str, seconds: int, connections: int) -> tuple[float, int]:
    """``(requests/s, non-2xx answers)`` of one unpinned ``wrk -t1`` run."""
    output = subprocess.run(["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", url],
                            capture_output=True, text=True, check=True,
                            timeout=seconds + 30).stdout
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    return (float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1)),
            int(bad.group(1)) if bad else 0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="pairs per order")
    parser.add_argument("--seconds", type=int, default=3, help="length of one wrk run")
    parser.add_argument("--connections", type=int, default=100)
    arguments = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="mockd-workers-bench-"))
    config = workdir / "hello.yaml"
    config.write_text(yaml.safe_dump({"version": "1.0", "mocks": [hello_mock()]}))
    load_before = os.getloadavg()
    servers = {}
    try:
        for workers in (1, 2):
            servers[workers] = start(workers, config, workdir)
        for _, url in servers.values():  # warm-up
            requests_per_second(url, 1, arguments.connections)
        results: dict[int, list[float]] = {1: [], 2: []}
        ratios = []
        for round_number in range(arguments.rounds * 2):
            order = (1, 2) if round_number % 2 == 0 else (2, 1)
            pair = {}
            for workers in order:
                rate, bad = requests_per_second(servers[workers][1], arguments.seconds,
                                                arguments.connections)
                if bad:
                    raise RuntimeError(f"{bad} non-2xx answers with --workers {workers}")
                pair[workers] = rate
                results[workers].append(rate)
            ratios.append(pair[2] / pair[1])
        rss = {workers: [round(rss_mb(pid), 1) for pid in worker_pids(process.pid)]
               for workers, (process, _) in servers.items()}
    finally:
        for process, _ in servers.values():
            process.terminate()
        for process, _ in servers.values():
            process.wait(timeout=15)
    load_after = os.getloadavg()
    summary = {
        "rounds": arguments.rounds * 2, "seconds": arguments.seconds,
        "connections": arguments.connections, "cpus": os.cpu_count(),
        "workers1_rps": round(statistics.median(results[1])),
        "workers2_rps": round(statistics.median(results[2])),
        "ratio_median": round(statistics.median(ratios), 2),
        "ratio_min": round(min(ratios), 2), "ratio_max": round(max(ratios), 2),
        "rss_mb_per_worker": {f"workers{key}": value for key, value in rss.items()},
        "load_before": [round(value, 1) for value in load_before],
        "load_after": [round(value, 1) for value in load_after],
        "runs": {f"workers{key}": [round(value) for value in values]
                 for key, values in results.items()},
    }
    print(json.dumps(summary, indent=2))
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    (out / "workers.json").write_text(json.dumps(summary, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
