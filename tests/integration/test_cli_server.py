"""The server commands as a user runs them: ``mockd start``/``serve``/``engine``, config
errors, signals, ``--version``/``--help`` (SPEC "Command-line surface"; behavior notes §14–15).
"""
from __future__ import annotations

import signal
import stat
import subprocess
import time

import httpx
import pytest

from tests.helpers import (MOCKD, MockdProcess, free_port, http_mock, isolated_env, make_config,
                           run_mockd, start_engine, start_server, write_config)

pytestmark = pytest.mark.integration

HELLO = make_config(http_mock("hello", "GET", "/hello", body="hi"))


@pytest.mark.parametrize("server_kind, config_name", [("uvicorn", "mocks.yaml"),
                                                     ("daphne", "mocks.json")])
def test_engine_prints_url_and_serves_under_each_server(tmp_path, server_kind, config_name):
    """Each server kind serves the file's mocks; the daphne engine reads a JSON config file;
    the uvicorn (default) engine is healthy within seconds of its launch."""
    started = time.monotonic()
    with start_engine(tmp_path, HELLO, config_name=config_name,
                      extra_args=["--server", server_kind]) as engine:
        elapsed = time.monotonic() - started
        assert engine.base.startswith("http://127.0.0.1:")
        with engine.client() as client:
            assert client.get("/hello").text == "hi"
            assert client.get("/health").json()["status"] == "ok"
    if server_kind == "uvicorn":
        # A guard against a start that regresses by whole seconds (an eager import of every
        # protocol, a blocking call); the figure itself is bench/engine_start.py's. The bound
        # leaves room for a 2-core machine running two test workers and browsers.
        assert elapsed < 5.0, f"engine took {elapsed:.2f}s to become healthy"


def test_engine_writes_no_files_that_outlive_it(tmp_path):
    runtime_dir = tmp_path / "run"
    runtime_dir.mkdir(mode=0o700)
    home = tmp_path / "home"
    home.mkdir()
    engine = start_engine(home, HELLO, extra_env={"XDG_RUNTIME_DIR": str(runtime_dir)})
    with engine:
        with engine.client() as client:
            client.get("/hello")
        # The generated token lives in the runtime directory while the engine runs.
        [token_file] = (runtime_dir / "mockd").glob("engine-*.token")
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert f"stored in {token_file}" in engine.log()
    assert engine.stop() == 0
    files = sorted(str(path.relative_to(home)) for path in home.rglob("*") if path.is_file())
    assert files == ["engine.log", "mocks.yaml"]
    assert list((runtime_dir / "mockd").iterdir()) == []
    given = tmp_path / "given"
    given.mkdir()
    with start_engine(given, HELLO, extra_args=["--engine-token", "t"]) as engine:
        with engine.client() as client:
            client.get("/hello")
    assert sorted(path.name for path in given.rglob("*") if path.is_file()) == [
        "engine.log", "mocks.yaml"]


@pytest.mark.parametrize("command, sig", [("start", signal.SIGTERM), ("serve", signal.SIGINT)],
                         ids=["start SIGTERM", "serve SIGINT"])
def test_start_and_serve_answer_then_stop_on_a_signal_within_two_seconds(tmp_path, command,
                                                                        sig):
    """``start`` and its alias ``serve`` serve the file's mocks and the admin health and
    readiness; SIGTERM (start) and SIGINT (serve) stop them within 2 s and cleanly although a
    keep-alive data-plane connection and an admin request stream are open."""
    import threading

    server = start_server(tmp_path, HELLO, command=command)
    lines: list[str] = []

    def read_stream() -> None:
        with httpx.stream("GET", server.admin + "/requests/stream", timeout=20,
                          trust_env=False) as response:
            for line in response.iter_lines():
                lines.append(line)

    reader = threading.Thread(target=read_stream, daemon=True)
    try:
        with server.admin_client() as admin:
            health = admin.get("/health").json()
            assert health["status"] == "ok" and isinstance(health["uptime"], int)
            assert admin.get("/ready").json()["status"] == "ready"
        # an open keep-alive connection must not hold the shutdown up
        keep_alive = httpx.Client(base_url=server.base, trust_env=False)
        assert keep_alive.get("/hello").text == "hi"
        # nor an open admin request stream
        reader.start()
        deadline = time.monotonic() + 10
        while not lines and time.monotonic() < deadline:
            time.sleep(0.05)
        started = time.monotonic()
        server.proc.send_signal(sig)
        server.proc.wait(timeout=10)
        elapsed = time.monotonic() - started
        keep_alive.close()
        reader.join(timeout=5)
        log = server.log()
    finally:
        server.stop()
    assert server.proc.returncode == 0
    assert lines and lines[0] == "event: connected"
    assert elapsed < 2.0, f"stopped after {elapsed:.2f}s"
    assert not reader.is_alive(), "the stream did not end when the server stopped"
    assert "timeout graceful shutdown exceeded" not in log and "Traceback" not in log


@pytest.mark.parametrize("config,expected", [
    pytest.param({"version": "1.0", "mocks": [{"http": {"matcher": {"pathPattern": "(ab"}}}]},
                 "config error: mocks[0].http.matcher.pathPattern: missing ), unterminated "
                 "subpattern at position 0", id="bad regex"),
    pytest.param({"version": "1.0", "mocks": [{"http": {"matcher": {"path": "api"}}}]},
                 "config error: mocks[0].http.matcher.path: path must start with '/', got 'api'",
                 id="relative path"),
    pytest.param({"version": "1.0", "mocks": [{"id": "a", "colour": "red",
                                                "http": {"matcher": {"path": "/a"}}}]},
                 "config error: mocks[0].colour: unknown key", id="unknown key"),
    pytest.param({"version": "1.0", "mocks": [{"http": {"matcher": {
        "bodyJsonPath": {"$.a[": 1}}}}]},
                 "config error: mocks[0].http.matcher.bodyJsonPath['$.a[']: invalid JSONPath",
                 id="bad JSONPath"),
    pytest.param("mocks: [\n  - {http: {matcher: {path: /a}}\n", "not valid YAML or JSON at line",
                 id="bad YAML"),
    pytest.param({"version": "1.0", "mocks": [{"http": {"matcher": {"path": "/a"},
                                                         "response": {"body": "{{nope.nope}}"}}}]},
                 "config error: mocks[0].http.response.body: ", id="bad template"),
])
@pytest.mark.parametrize("command", ["engine", "start"])
def test_bad_config_exits_2_with_one_line(tmp_path, config, expected, command):
    config_path = write_config(tmp_path / "bad.yaml", config)
    args = [command, "-c", str(config_path), "--port", "0"]
    if command == "start":
        args += ["--admin-port", str(free_port()), "--data-dir", str(tmp_path / "data")]
    result = run_mockd(args, tmp_path, timeout=30)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert lines[0].startswith(expected) or expected in lines[0], lines[0]


def test_missing_config_file_is_a_config_error(tmp_path):
    result = run_mockd(["engine", "-c", str(tmp_path / "nope.yaml"), "--port", "0"], tmp_path)
    assert result.returncode == 2
    assert "cannot read config file" in result.stderr and "Traceback" not in result.stderr


def test_port_in_use_is_one_clear_line(tmp_path):
    with start_engine(tmp_path, HELLO) as engine:
        port = engine.base.rsplit(":", 1)[1]
        config = write_config(tmp_path / "again.yaml", HELLO)
        result = run_mockd(["engine", "-c", str(config), "--port", port], tmp_path)
    assert result.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "Traceback" not in result.stderr


def test_environment_variables_expand_in_config(tmp_path):
    config = ("version: '1.0'\nmocks:\n  - http:\n      matcher: {method: GET, path: /env}\n"
              "      response: {body: 'region=${MOCKD_TEST_REGION} keep=$.not.a.var'}\n")
    config_path = write_config(tmp_path / "env.yaml", config)
    env = isolated_env(tmp_path, MOCKD_TEST_REGION="eu-west")
    process = MockdProcess([MOCKD, "engine", "-c", str(config_path), "--port", "0",
                            "--print-url"], env, tmp_path, tmp_path / "engine.log")
    with process:
        process.base = process.wait_url_line()
        with process.client() as client:
            assert client.get("/env").text == "region=eu-west keep=$.not.a.var"


def test_version_help_and_unknown_command(tmp_path):
    version = run_mockd(["--version"], tmp_path)
    assert version.returncode == 0 and version.stdout.startswith("mockd ")
    help_text = run_mockd(["--help"], tmp_path)
    assert help_text.returncode == 0
    for command in ("start", "serve", "engine"):
        assert command in help_text.stdout
    unknown = run_mockd(["strat"], tmp_path)
    assert unknown.returncode == 2
    assert "unknown command 'strat'" in unknown.stderr and "start" in unknown.stderr


def test_manage_py_runengine(tmp_path):
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    config = write_config(tmp_path / "mocks.yaml", HELLO)
    process = MockdProcess([sys.executable, str(root / "manage.py"), "runengine", "-c",
                            str(config), "--port", "0", "--print-url"],
                           isolated_env(tmp_path), tmp_path, tmp_path / "engine.log")
    with process:
        process.base = process.wait_url_line()
        with process.client() as client:
            assert client.get("/hello").text == "hi"
