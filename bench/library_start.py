"""The mockd library in process: time to the first ready ``MockServer`` and the cost of
``reset()``.

Each of ``--runs`` fresh Python processes times, from before ``import mockd``:

* ``first ready``: ``import mockd``, ``MockServer(mocks=[3 HTTP mocks])`` and ``start()``
  until the engine answers on its port (target: under 300 ms), and its three parts
  (``import mockd``; construct: the config validated, which loads the config models;
  ``start()``: the engine's modules, uvicorn, the thread, the first snapshot);
* the same three as CPU time of the process (``time.process_time``), which a loaded
  machine inflates less than wall time;
* ``start (warm)``: a second server's ``start()`` in the same process, modules loaded;
* ``stop``: ``stop()`` of a running server;
* ``reset``: ``reset()`` with the mocks unchanged and after ``add()`` of one mock (the
  per-test reset of the pytest plugin), median and p95 over ``--resets`` calls.

Before timing, the project's modules of each tree are compiled to bytecode (``compileall``),
as an installed package has them: with ``PYTHONDONTWRITEBYTECODE`` set (as on the project's
machines) a module edited since its last ``.pyc`` is otherwise compiled from source in every
process, which times the compiler, not mockd (``--stale-bytecode`` keeps the tree as it is).

Figures are medians over the processes, in milliseconds. Only 127.0.0.1 is contacted;
every loop is bounded. ``--alternate DIR`` runs another checkout of the project (a ``git
archive`` or worktree of an older commit, with this virtualenv) process for process with
this one, so a load change on the machine hits both columns alike.

Usage: ``.venv/bin/python bench/library_start.py [--runs 5] [--resets 200] [--alternate DIR]
[--stale-bytecode]``
"""
from __future__ import annotations

import argparse
import json
import compileall
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, statistics, sys, time
started, cpu_started = time.perf_counter(), time.process_time()
from mockd import MockServer, http
imported, cpu_imported = time.perf_counter(), time.process_time()
mocks = [http("GET", "/users/{id}", json={"id": "{{request.pathParam.id}}"}, id="get-user"),
         http("POST", "/orders", status=201, json={"ok": True}, id="order"),
         http("GET", "/ping", body="ok", id="ping")]
server = MockServer(mocks=mocks)
constructed, cpu_constructed = time.perf_counter(), time.process_time()
server.start()
first_ready = time.perf_counter() - started
first_ready_cpu = time.process_time() - cpu_started
parts = {"import": imported - started, "construct": constructed - imported,
         "first_start": started + first_ready - constructed, "first_ready_cpu": first_ready_cpu,
         "import_cpu": cpu_imported - cpu_started, "construct_cpu": cpu_constructed - cpu_imported}
import httpx
with httpx.Client(base_url=server.url) as client:
    assert client.get("/ping").text == "ok"
resets = int(sys.argv[1])
plain, changed = [], []
for _ in range(resets):
    t = time.perf_counter(); server.reset(); plain.append(time.perf_counter() - t)
for _ in range(resets):
    server.add(http("GET", "/extra", id="extra"))
    t = time.perf_counter(); server.reset(); changed.append(time.perf_counter() - t)
t = time.perf_counter(); server.stop(); stop = time.perf_counter() - t
second = MockServer(mocks=mocks)
t = time.perf_counter(); second.start(); warm = time.perf_counter() - t
second.stop()
def p95(values): return sorted(values)[int(len(values) * 0.95) - 1]
print(json.dumps({"first_ready": first_ready, **parts, "warm_start": warm, "stop": stop,
                  "reset_p50": statistics.median(plain), "reset_p95": p95(plain),
                  "reset_changed_p50": statistics.median(changed),
                  "reset_changed_p95": p95(changed)}))
"""


LABELS = (("first_ready", "first ready (import + construct + start)"),
          ("import", "  import mockd"), ("construct", "  construct (config models)"),
          ("first_start", "  first start() (engine, uvicorn, thread)"),
          ("first_ready_cpu", "first ready, CPU time of the process"),
          ("import_cpu", "  import mockd, CPU"), ("construct_cpu", "  construct, CPU"),
          ("warm_start", "start, modules loaded"), ("stop", "stop"),
          ("reset_p50", "reset, mocks unchanged, p50"),
          ("reset_p95", "reset, mocks unchanged, p95"),
          ("reset_changed_p50", "reset after add(), p50"),
          ("reset_changed_p95", "reset after add(), p95"))


def one_process(tree: Path, resets: int) -> dict[str, float]:
    """The figures (seconds) of one fresh process running the library of ``tree``."""
    env = dict(os.environ)
    if tree != ROOT:
        env["PYTHONPATH"] = str(tree)
    out = subprocess.run([sys.executable, "-c", CHILD, str(resets)], cwd=tree, env=env,
                         capture_output=True, text=True, timeout=120, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def compile_tree(tree: Path) -> None:
    """Write up-to-date bytecode for the project's packages of ``tree`` (its top-level
    folders holding an ``__init__.py``, tests left out), as installing the package does."""
    for child in sorted(tree.iterdir()):
        if child.name != "tests" and (child / "__init__.py").is_file():
            compileall.compile_dir(str(child), maxlevels=20, quiet=2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--resets", type=int, default=200)
    parser.add_argument("--alternate", type=Path, default=None, metavar="DIR",
                        help="another checkout run process for process with this one")
    parser.add_argument("--stale-bytecode", action="store_true",
                        help="do not compile the trees' modules first (see the docstring)")
    args = parser.parse_args()
    trees = [ROOT] + ([args.alternate.resolve()] if args.alternate is not None else [])
    if not args.stale_bytecode:
        for tree in trees:
            compile_tree(tree)
    runs: dict[Path, list[dict[str, float]]] = {tree: [] for tree in trees}
    resets = max(1, min(args.resets, 10000))
    for _ in range(max(1, min(args.runs, 50))):
        for tree in trees:  # alternating: a load change on the machine hits both
            runs[tree].append(one_process(tree, resets))
    count = len(runs[ROOT])
    bytecode = "as found" if args.stale_bytecode else "compiled first"
    print(f"mockd library, {count} processes per tree (medians; ms; bytecode {bytecode})")
    if len(trees) > 1:
        print(f"  {'':<45} {'this tree':>8}   {'alternate':>9}   ({trees[1]})")
    for key, label in LABELS:
        medians = [statistics.median(run[key] * 1000 for run in runs[tree]) for tree in trees]
        values = [run[key] * 1000 for run in runs[ROOT]]
        other = "".join(f"   {median:9.2f}" for median in medians[1:])
        print(f"  {label:<45} {medians[0]:8.2f}{other}"
              f"   (this tree: min {min(values):.2f}, max {max(values):.2f})")


if __name__ == "__main__":
    main()
