"""Start cost of a full ``mockd start`` (admin and engine in one process), as the tests pay it.

Each run launches ``mockd start -c examples/quickstart.yaml`` on free loopback ports with a
fresh data directory and ``--no-auth``, then waits as ``tests/helpers.start_server`` does:
``GET /health`` on the admin port and on the mock port until both answer 200 (a poll every
10 ms), then one ``GET /mocks`` on the admin port (the first admin API request, which loads
the admin URLconf). The server is then stopped with SIGTERM (SIGKILL after 10 s).

Figures per run, in seconds:

* ``wall``: from launch until ``GET /mocks`` answered;
* ``cpu``: user + system CPU the server used until then (``/proc/<pid>/stat``);
* ``tree``: user + system CPU of the whole process tree from launch to exit, shutdown
  included (``resource.getrusage(RUSAGE_CHILDREN)`` before and after the run).

The environment is the tests' (``tests/helpers.isolated_env``): one shared admin-schema
template (``MOCKD_SCHEMA_CACHE``, written by an uncounted warm-up run) and the cheap
password hash of the first start's superuser; ``--plain`` drops both, as a user's first
start in a new data directory has them (PBKDF2 hashing in the background; the schema
template under ``$HOME/.cache/mockd``, ``HOME`` being one folder per tree for all runs).
Byte code is written under a temporary ``PYTHONPYCACHEPREFIX`` by the warm-up run and
reused. ``--alternate DIR`` runs a second checkout (``PYTHONPATH=DIR``, e.g. a ``git
worktree`` of an older commit) run for run with this one, so both see the same load.

Usage: python bench/full_start.py [--runs 7] [--timeout 30] [--config FILE] [--tree DIR]
                                  [--alternate DIR] [--plain]
Exit status 1 when a run is not ready within the timeout.
"""
from __future__ import annotations

import argparse
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from benchenv import add_tree_arguments, child_env, trees_of
from engine_start import MOCKD, cpu_seconds, stop


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def children_cpu() -> float:
    """User + system CPU seconds of every reaped child process so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def wait_ready(process: subprocess.Popen, client: httpx.Client, urls: list[str],
               deadline: float) -> None:
    """Poll each URL in turn until it answers 200; RuntimeError on exit or timeout."""
    for url in urls:
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"server exited ({process.returncode}) before ready")
            if time.perf_counter() > deadline:
                raise RuntimeError(f"{url} not ready in time")
            try:
                if client.get(url).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.01)


def launch(config: Path, env: dict[str, str], tree: Path,
           data_dir: Path) -> tuple[subprocess.Popen, int, int]:
    """``(process, mock port, admin port)`` of ``mockd start -c config --no-auth`` launched on
    free loopback ports with ``data_dir`` (not waited for)."""
    port, admin_port, engine_port = free_port(), free_port(), free_port()
    process = subprocess.Popen([MOCKD, "start", "-c", str(config), "--port", str(port),
                                "--admin-port", str(admin_port), "--engine-port",
                                str(engine_port), "--data-dir", str(data_dir), "--no-auth"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               stdin=subprocess.DEVNULL, env=env, cwd=tree,
                               start_new_session=True)
    return process, port, admin_port


def one_run(config: Path, timeout: float, env: dict[str, str], tree: Path,
            data_dir: Path) -> tuple[float, float, float]:
    """``(wall, cpu until ready, cpu of the process tree until exit)`` in seconds."""
    before = children_cpu()
    started = time.perf_counter()
    process, port, admin_port = launch(config, env, tree, data_dir)
    try:
        admin = f"http://127.0.0.1:{admin_port}"
        with httpx.Client(timeout=2.0, trust_env=False) as client:
            wait_ready(process, client, [admin + "/health", f"http://127.0.0.1:{port}/health"],
                       started + timeout)
            if client.get(admin + "/mocks", timeout=timeout).status_code != 200:
                raise RuntimeError("GET /mocks did not answer 200")
        wall = time.perf_counter() - started
        cpu = cpu_seconds(process.pid)
    finally:
        stop(process)
    return wall, cpu, children_cpu() - before


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--timeout", type=float, default=30.0)
    add_tree_arguments(parser)
    parser.add_argument("--plain", action="store_true",
                        help="no shared schema template, real password hashing")
    arguments = parser.parse_args()
    trees = trees_of(arguments)
    figures: dict[Path, list[tuple[float, float, float]]] = {tree: [] for tree in trees}
    config = arguments.config.resolve()
    with tempfile.TemporaryDirectory(prefix="mockd-bench-") as folder:
        envs = {}
        for number, tree in enumerate(trees):
            (Path(folder) / str(number)).mkdir()
            envs[tree] = child_env(Path(folder) / str(number), tree, False)
            envs[tree]["HOME"] = str(Path(folder) / str(number))
            if not arguments.plain:
                envs[tree]["MOCKD_SCHEMA_CACHE"] = str(Path(folder) / str(number) / "schema")
                envs[tree]["MOCKD_TESTS_CHEAP_PASSWORD_HASH"] = "insecure-md5-for-tests"
        for index in range(arguments.runs + 1):
            for number, tree in enumerate(trees):  # alternating: load changes hit both
                data_dir = Path(folder) / str(number) / f"data-{index}"
                try:
                    wall, cpu, total = one_run(config, arguments.timeout, envs[tree], tree,
                                               data_dir)
                except RuntimeError as error:
                    print(f"{tree}: run {index + 1}: {error}", file=sys.stderr)
                    return 1
                if index == 0:
                    print(f"{tree}: warm-up (byte code, schema template): {wall:.3f} s")
                    continue
                figures[tree].append((wall, cpu, total))
                print(f"{tree}: run {index}: wall {wall:.3f} s, CPU to ready {cpu:.2f} s, "
                      f"tree CPU {total:.2f} s")
    for tree in trees:
        walls, cpus, totals = (list(column) for column in zip(*figures[tree]))
        print(f"{tree}: median of {len(walls)}: wall {statistics.median(walls):.3f} s "
              f"(min {min(walls):.3f}, max {max(walls):.3f}); CPU to ready "
              f"{statistics.median(cpus):.2f} s; tree CPU {statistics.median(totals):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
