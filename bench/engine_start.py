"""Start time of ``mockd engine``: from process launch until the URL line is printed.

Runs ``mockd engine -c examples/quickstart.yaml --port 0 --print-url`` (plus ``--engine-port 0``
so runs never compete for the engine-control port) N times, one after another, each with a
bounded timeout, and reports every run and the median in seconds. Each engine is stopped with
SIGTERM (then SIGKILL) as soon as its URL line arrives. The engine runs with an isolated data
directory under a temporary folder, so nothing is written to the user's home.

Byte code: an installed mockd has its ``.pyc`` files, so by default the runs write and reuse
byte code under a temporary ``PYTHONPYCACHEPREFIX`` (one uncounted warm-up run first), even
when ``PYTHONDONTWRITEBYTECODE`` is set; ``--no-bytecode`` measures compiling from source.
``--tree DIR`` runs another checkout of the project (``PYTHONPATH=DIR``, e.g. a ``git
worktree`` of an older commit) with this virtualenv; ``--alternate DIR`` runs a second
checkout run for run with the first, for before/after figures taken under the same load.
Each run also reports the CPU time (user + system) the engine used until its URL line,
which a busy machine inflates less than wall time.

Usage: python bench/engine_start.py [--runs 5] [--timeout 20] [--config FILE] [--tree DIR]
                                    [--alternate DIR] [--no-bytecode]
Exit status 1 when a run does not print its URL within the timeout.
"""
from __future__ import annotations

import argparse
import os
import selectors
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchenv import add_tree_arguments, child_env, trees_of

MOCKD = str(Path(sys.executable).parent / "mockd")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds the process ``pid`` has used so far (``/proc/<pid>/stat``;
    0.0 where there is no ``/proc``)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")



def stop(process: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL after 10 s; waits for the exit."""
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=5)

def one_run(config: Path, timeout: float, env: dict[str, str],
            tree: Path) -> tuple[float, float]:
    """``(seconds from launch to the URL line, CPU seconds the engine used until then)``;
    raises RuntimeError after ``timeout`` seconds."""
    started = time.perf_counter()
    process = subprocess.Popen([MOCKD, "engine", "-c", str(config), "--port", "0",
                                "--engine-port", "0", "--print-url"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               stdin=subprocess.DEVNULL, env=env, cwd=tree,
                               start_new_session=True)
    try:
        selector = selectors.DefaultSelector()
        selector.register(process.stdout, selectors.EVENT_READ)
        buffer = b""
        deadline = started + timeout
        while b"\n" not in buffer:
            remaining = deadline - time.perf_counter()
            if remaining <= 0 or not selector.select(remaining):
                raise RuntimeError(f"no URL line within {timeout:g} s")
            chunk = os.read(process.stdout.fileno(), 4096)
            if not chunk:
                raise RuntimeError(f"engine exited ({process.wait(timeout=5)}) before its URL")
            buffer += chunk
        elapsed = time.perf_counter() - started
        used = cpu_seconds(process.pid)
        if not buffer.startswith(b"http"):
            raise RuntimeError(f"unexpected first line: {buffer!r}")
        return elapsed, used
    finally:
        stop(process)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=20.0)
    add_tree_arguments(parser)
    parser.add_argument("--no-bytecode", action="store_true",
                        help="compile every module from source on each run")
    arguments = parser.parse_args()
    trees = trees_of(arguments)
    times: dict[Path, list[tuple[float, float]]] = {tree: [] for tree in trees}
    config = arguments.config.resolve()
    with tempfile.TemporaryDirectory(prefix="mockd-bench-") as folder:
        envs = {}
        for number, tree in enumerate(trees):
            (Path(folder) / str(number)).mkdir()
            envs[tree] = child_env(Path(folder) / str(number), tree, arguments.no_bytecode)
        for index in range(arguments.runs + (0 if arguments.no_bytecode else 1)):
            for tree in trees:  # alternating: a load change on the machine hits both
                try:
                    seconds, cpu = one_run(config, arguments.timeout, envs[tree], tree)
                except RuntimeError as error:
                    print(f"{tree}: run {index + 1}: {error}", file=sys.stderr)
                    return 1
                if index == 0 and not arguments.no_bytecode:
                    print(f"{tree}: warm-up (writes byte code): {seconds:.3f} s")
                    continue
                times[tree].append((seconds, cpu))
                print(f"{tree}: run {len(times[tree])}: {seconds:.3f} s (CPU {cpu:.2f} s)")
    for tree in trees:
        walls = [wall for wall, _ in times[tree]]
        cpus = [cpu for _, cpu in times[tree]]
        print(f"{tree}: median of {len(walls)}: {statistics.median(walls):.3f} s "
              f"(min {min(walls):.3f}, max {max(walls):.3f}); "
              f"CPU median {statistics.median(cpus):.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
