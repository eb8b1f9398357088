"""Wall time of client commands: ``mockd list``, ``status``, ``add``, ``admin key``,
``import --dry-run`` of a small file, against ``mockd --version`` (the floor: Python, click
and the ``mockd`` group).

Each command runs N times as a new process, round-robin (one run of every command per
round, so a load change on the machine hits all commands alike), and the median wall time
from launch to exit is reported in milliseconds, with the median CPU time (user + system)
of the process, which a busy machine inflates less than wall time. The commands talk to a fake admin API
served by this script on a loopback port (JSON answers of the shapes the CLI reads), so
the figure is the CLI's own cost, not the server's. Every run has an isolated ``HOME`` and
data directory under a temporary folder (``admin key`` reads the key file written there).

Byte code: as in ``bench/engine_start.py``, runs write and reuse byte code under a temporary
``PYTHONPYCACHEPREFIX`` after one uncounted warm-up round; ``--no-bytecode`` compiles from
source each time. ``--tree DIR`` runs another checkout (``PYTHONPATH=DIR``, e.g. a ``git
worktree`` of an older commit) with this virtualenv; ``--alternate DIR`` runs a second
checkout command for command with the first (each round runs every command of both trees),
for before/after figures taken under the same load. ``--importtime`` also prints, per
command, the ten slowest imports (cumulative microseconds of ``python -X importtime``).

Usage: python bench/cli_start.py [--runs 10] [--tree DIR] [--alternate DIR] [--importtime]
                                 [--no-bytecode]
Exit status 1 when a command fails (its stderr is printed).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from benchenv import ROOT, child_env

MOCKD = str(Path(sys.executable).parent / "mockd")
#: A small native config for ``import --dry-run`` (two mocks).
SMALL_CONFIG = """version: "1.0"
mocks:
  - id: hello
    type: http
    http:
      matcher: {method: GET, path: /hello}
      response: {body: {hello: world}}
  - id: create
    type: http
    http:
      matcher: {method: POST, path: /items}
      response: {statusCode: 201, body: {id: "1"}}
"""


class FakeAdmin(BaseHTTPRequestHandler):
    """The admin API answers the measured commands read: ``GET /mocks``, ``GET /status``,
    ``GET /state/operations``, ``POST /mocks``; 404 otherwise."""

    def _send(self, status: int, document: object) -> None:
        body = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        path = self.path.split("?")[0]
        if path == "/mocks":
            self._send(200, {"mocks": [], "count": 0})
        elif path == "/state/operations":
            self._send(200, {"operations": [], "count": 0})
        elif path == "/status":
            self._send(200, {"status": "running", "version": "bench", "httpPort": 4280,
                             "adminPort": 4290, "mockCount": 0, "activeMocks": 0,
                             "requestCount": 0, "uptime": 1})
        else:
            self._send(404, {"error": "not_found", "message": "Resource not found"})

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        mock = json.loads(self.rfile.read(length) or b"{}")
        if self.path.split("?")[0] == "/mocks":
            self._send(201, {**mock, "id": mock.get("id") or "bench-mock"})
        else:
            self._send(404, {"error": "not_found", "message": "Resource not found"})

    def log_message(self, *args: object) -> None:
        pass


def commands(admin_url: str, config: Path) -> dict[str, list[str]]:
    """``{label: argv after 'mockd'}`` of the measured commands."""
    client = ["--admin-url", admin_url, "--api-key", "bench-key"]
    return {
        "--version": ["--version"],
        "list": [*client, "list"],
        "status": [*client, "status"],
        "add": [*client, "add", "--path", "/bench", "--body", "{}"],
        "admin key": ["admin", "key"],
        "stateful custom list": [*client, "stateful", "custom", "list"],
        "import --dry-run": ["import", "--dry-run", str(config)],
    }


def one_run(argv: list[str], env: dict[str, str], tree: Path,
            importtime: bool = False) -> tuple[float, float, str]:
    """``(wall ms from launch to exit, CPU ms (user + system) of the process, stderr)``;
    raises RuntimeError when the command exits with a status other than 0."""
    prefix = [sys.executable, "-X", "importtime", MOCKD] if importtime else [MOCKD]
    started = time.perf_counter()
    process = subprocess.Popen([*prefix, *argv], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env,
                               cwd=tree, text=True)
    stderr = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = (time.perf_counter() - started) * 1000
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"mockd {' '.join(argv)} exited {process.returncode}: "
                           f"{stderr.strip()[-2000:]}")
    return elapsed, (usage.ru_utime + usage.ru_stime) * 1000, stderr


def slowest_imports(stderr: str, count: int = 10) -> list[tuple[int, str]]:
    """The ``count`` largest ``(cumulative µs, module)`` rows of ``-X importtime`` output."""
    rows = []
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line and "cumulative" not in line:
            _, cumulative, name = line[len("import time:"):].split("|")
            rows.append((int(cumulative), name.rstrip()))
    return sorted(rows, reverse=True)[:count]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--tree", type=Path, default=ROOT,
                        help="project checkout to run (default: this one)")
    parser.add_argument("--alternate", type=Path, default=None, metavar="DIR",
                        help="another checkout run alternately with --tree, command for command")
    parser.add_argument("--importtime", action="store_true",
                        help="print the slowest imports of each command")
    parser.add_argument("--no-bytecode", action="store_true",
                        help="compile every module from source on each run")
    arguments = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeAdmin)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    admin_url = f"http://127.0.0.1:{server.server_address[1]}"
    trees = [arguments.tree.resolve()]
    if arguments.alternate is not None:
        trees.append(arguments.alternate.resolve())
    with tempfile.TemporaryDirectory(prefix="mockd-bench-") as folder:
        data_dir = Path(folder) / "data"
        data_dir.mkdir(mode=0o700)
        (data_dir / "admin-api-key").write_text("bench-key\n")
        config = Path(folder) / "small.yaml"
        config.write_text(SMALL_CONFIG)
        envs = {}
        for number, tree in enumerate(trees):
            # MOCKD_DATA_DIR=<folder>/data (the key above); byte code kept per tree
            envs[tree] = child_env(Path(folder), tree, arguments.no_bytecode)
            if not arguments.no_bytecode:
                envs[tree]["PYTHONPYCACHEPREFIX"] = str(Path(folder) / f"pycache{number}")
            envs[tree]["HOME"] = folder  # no PID file of a real server is found
        table = commands(admin_url, config)
        times = {tree: {label: [] for label in table} for tree in trees}
        cpu = {tree: {label: [] for label in table} for tree in trees}
        rounds = arguments.runs + (0 if arguments.no_bytecode else 1)
        try:
            for index in range(rounds):
                for label, argv in table.items():
                    for tree in trees:  # alternating: a load change hits both alike
                        elapsed, used, _ = one_run(argv, envs[tree], tree)
                        if index or arguments.no_bytecode:
                            times[tree][label].append(elapsed)
                            cpu[tree][label].append(used)
            if arguments.importtime:
                for tree in trees:
                    for label, argv in table.items():
                        _, _, stderr = one_run(argv, envs[tree], tree, importtime=True)
                        print(f"slowest imports of mockd {label} (cumulative ms; {tree}):")
                        for micros, name in slowest_imports(stderr):
                            print(f"  {micros / 1000:8.1f}  {name}")
        except RuntimeError as error:
            print(error, file=sys.stderr)
            return 1
        finally:
            server.shutdown()
    for tree in trees:
        floor = statistics.median(times[tree]["--version"])
        print(f"{'command':<24} {'median ms':>10} {'min':>7} {'max':>7} {'- version':>10} "
              f"{'CPU ms':>7}")
        for label, values in times[tree].items():
            median = statistics.median(values)
            print(f"{'mockd ' + label:<24} {median:10.0f} {min(values):7.0f} "
                  f"{max(values):7.0f} {median - floor:10.0f} "
                  f"{statistics.median(cpu[tree][label]):7.0f}")
        print(f"({len(times[tree]['--version'])} runs each, round-robin; tree {tree})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
