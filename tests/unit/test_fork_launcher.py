"""The tests' fork launcher (tests/fork_launcher.py) runs a ``mockd`` command as an exec'd one
would: same output, exit status, working directory and environment, a fresh import of mockd's
own modules, a session of its own, and the exit status of a signal."""
from __future__ import annotations

import ast
import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import yaml

from tests import fork_launcher
from tests.helpers import MOCKD, http_mock, isolated_env, make_config, start_server

pytestmark = pytest.mark.skipif(os.environ.get("MOCKD_TESTS_FORK") == "0",
                                reason="MOCKD_TESTS_FORK=0 runs every command by exec")


def _both(args: list[str], tmp_path, **env: str) -> tuple[subprocess.CompletedProcess, ...]:
    environment = isolated_env(tmp_path, **env)
    forked = fork_launcher.run([MOCKD, *args], environment, tmp_path, timeout=60)
    execed = subprocess.run([MOCKD, *args], capture_output=True, text=True, timeout=60,
                            cwd=tmp_path, env=environment, stdin=subprocess.DEVNULL)
    return forked, execed


def test_a_client_command_prints_and_exits_as_when_execed(tmp_path):
    forked, execed = _both(["--version"], tmp_path)
    assert (forked.returncode, forked.stdout, forked.stderr) == \
        (execed.returncode, execed.stdout, execed.stderr)
    assert forked.returncode == 0 and forked.stdout.strip()


def test_an_error_names_the_data_dir_of_the_requested_environment(tmp_path):
    data_dir = tmp_path / "elsewhere"
    forked, execed = _both(["admin", "key"], tmp_path, MOCKD_DATA_DIR=str(data_dir))
    assert (forked.returncode, forked.stdout, forked.stderr) == \
        (execed.returncode, execed.stdout, execed.stderr)
    # The folder under the requested HOME, shown from there.
    assert forked.returncode == 1 and "~/elsewhere/admin-api-key" in forked.stderr


def test_a_server_reads_paths_from_its_folder_leads_its_own_session_and_reports_a_signal(
        tmp_path):
    (tmp_path / "mocks.yaml").write_text(yaml.safe_dump(make_config(
        http_mock("hello", "GET", "/hello", body="from the folder"))))
    process = fork_launcher.launch(
        [MOCKD, "engine", "-c", "mocks.yaml", "--port", "0", "--print-url"],
        isolated_env(tmp_path), tmp_path, subprocess.PIPE, subprocess.DEVNULL)
    try:
        line = process.stdout.readline().decode().strip()
        assert line.startswith("http://127.0.0.1:")
        assert httpx.get(line + "/hello", trust_env=False).text == "from the folder"
        assert os.getpgid(process.pid) == process.pid  # a session (and group) of its own
        assert process.poll() is None
        process.send_signal(signal.SIGKILL)
        assert process.wait(10) == -signal.SIGKILL
    finally:
        if process.poll() is None:
            process.kill()


def test_a_forked_servers_uptime_counts_from_its_own_start(tmp_path):
    """The launcher imported mockd's modules before this server was asked for: the admin's
    uptime must still count from the server's start (runner.serve)."""
    launcher = fork_launcher._launcher_for(isolated_env(tmp_path))
    assert launcher is not None
    deadline = time.monotonic() + 5
    while time.monotonic() - launcher.started < 2.5:  # the launcher is older than 2 s
        assert time.monotonic() < deadline
        time.sleep(0.1)
    before = time.monotonic()
    with start_server(tmp_path) as server:
        uptime = httpx.get(server.admin + "/health", trust_env=False).json()["uptime"]
        assert uptime <= time.monotonic() - before + 1


#: Calls whose result depends on the process that makes them: made at import by a module the
#: launcher keeps, they would hold the launcher's value in every forked command.
PROCESS_DEPENDENT_CALLS = frozenset({
    "getenv", "getcwd", "cwd", "home", "expanduser", "getpid", "getppid", "time", "monotonic",
    "perf_counter", "now", "utcnow", "today", "urandom", "token_hex", "token_urlsafe",
    "token_bytes", "uuid1", "uuid4", "random", "randint", "getrandbits", "gethostname"})


class _ImportTimeCalls(ast.NodeVisitor):
    """Collects the process-dependent calls and ``os.environ`` reads a module makes while it
    is imported: its top-level statements and class bodies, function defaults and decorators
    (not function bodies)."""

    def __init__(self) -> None:
        self.found: list[tuple[int, str]] = []

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        for expression in [*node.decorator_list, *node.args.defaults,
                           *(d for d in node.args.kw_defaults if d is not None)]:
            self.visit(expression)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        return None

    def visit_Call(self, node: ast.Call) -> None:
        function = node.func
        name = function.attr if isinstance(function, ast.Attribute) else \
            function.id if isinstance(function, ast.Name) else ""
        if name in PROCESS_DEPENDENT_CALLS:
            self.found.append((node.lineno, f"{name}()"))
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr == "environ":
            self.found.append((node.lineno, "environ"))
        self.generic_visit(node)


def test_mockd_modules_the_launcher_keeps_do_nothing_process_dependent_at_import():
    root = Path(__file__).resolve().parents[2]
    listed = subprocess.run(
        [sys.executable, "-c", "import json, sys; sys.path.insert(0, sys.argv[1]); "
                               "from tests.fork_launcher import _preload; "
                               "print(json.dumps(_preload()))", str(root)],
        capture_output=True, text=True, timeout=120, cwd=root,
        env={key: value for key, value in os.environ.items()
             if key != "DJANGO_SETTINGS_MODULE"})
    assert listed.returncode == 0, listed.stderr
    kept = json.loads(listed.stdout)
    # The launcher does keep mockd's Django-free start path (else it would save little).
    assert {"mocks.config", "mocks.engine.control", "mockd_project.cli"} <= set(kept)
    problems = []
    for name in kept:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            continue
        visitor = _ImportTimeCalls()
        visitor.visit(ast.parse(Path(spec.origin).read_text(encoding="utf-8")))
        problems += [f"{name}:{line}: {what}" for line, what in visitor.found]
    assert not problems, problems
