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
worktree`` of an older commit) with this virtualenv, for before/after figures.

Usage: python bench/engine_start.py [--runs 5] [--timeout 20] [--config FILE] [--tree DIR]
                                    [--no-bytecode]
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

from benchenv import ROOT, child_env

MOCKD = str(Path(sys.executable).parent / "mockd")


def one_run(config: Path, timeout: float, env: dict[str, str], tree: Path) -> float:
    """Seconds from launch to the URL line; raises RuntimeError after ``timeout`` seconds."""
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
        if not buffer.startswith(b"http"):
            raise RuntimeError(f"unexpected first line: {buffer!r}")
        return elapsed
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=20.0)
    parser.add_argument("--config", type=Path, default=ROOT / "examples" / "quickstart.yaml")
    parser.add_argument("--tree", type=Path, default=ROOT,
                        help="project checkout to run (default: this one)")
    parser.add_argument("--no-bytecode", action="store_true",
                        help="compile every module from source on each run")
    arguments = parser.parse_args()
    times = []
    with tempfile.TemporaryDirectory(prefix="mockd-bench-") as folder:
        tree = arguments.tree.resolve()
        env = child_env(Path(folder), tree, arguments.no_bytecode)
        config = arguments.config.resolve()
        for index in range(arguments.runs + (0 if arguments.no_bytecode else 1)):
            try:
                seconds = one_run(config, arguments.timeout, env, tree)
            except RuntimeError as error:
                print(f"run {index + 1}: {error}", file=sys.stderr)
                return 1
            if index == 0 and not arguments.no_bytecode:
                print(f"warm-up (writes byte code): {seconds:.3f} s")
                continue
            times.append(seconds)
            print(f"run {len(times)}: {seconds:.3f} s")
    print(f"median of {len(times)}: {statistics.median(times):.3f} s "
          f"(min {min(times):.3f}, max {max(times):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
