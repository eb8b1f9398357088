"""Which data directory a server uses and how client commands find its admin key.

``python manage.py runmocks``/``runengine`` are ``mockd start``/``engine`` (same options, and
``--data-dir`` is honoured); after ``mockd start -d --data-dir D`` plain client commands reach
the server and its key through the PID file; a 401 names every place the key was looked for.
Every server runs on free loopback ports with an isolated HOME.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import (MockdProcess, free_port, http_mock, isolated_env, make_config,
                           run_mockd, start_server, write_config)

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
HELLO = make_config(http_mock("hello", "GET", "/hello", body="hi"))


def manage(args: list[str], home: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "manage.py"), *args], capture_output=True,
                          text=True, timeout=timeout, cwd=home, env=isolated_env(home),
                          stdin=subprocess.DEVNULL)


def _options_of(help_text: str) -> str:
    """The options part of a --help text (the usage line names the program)."""
    return help_text.split("Options:", 1)[1]


@pytest.mark.parametrize("alias, command", [("runmocks", "start"), ("runengine", "engine")])
def test_management_command_has_the_options_and_help_of_the_cli_command(tmp_path, alias,
                                                                         command):
    managed = manage([alias, "--help"], tmp_path)
    direct = run_mockd([command, "--help"], tmp_path)
    assert managed.returncode == direct.returncode == 0, managed.stderr
    assert managed.stdout.startswith(f"Usage: manage.py {alias} [OPTIONS]")
    assert _options_of(managed.stdout) == _options_of(direct.stdout)
    for option in ("--data-dir", "--cors-origins", "--allow-body-files-anywhere"):
        assert option in managed.stdout
    if alias == "runmocks":
        for option in ("--detach", "--no-persist", "--max-log-entries", "--pid-file"):
            assert option in managed.stdout


def test_runmocks_serves_the_data_dir_it_is_given(tmp_path):
    data_dir = tmp_path / "chosen"
    port, admin_port = free_port(), free_port()
    config = write_config(tmp_path / "mocks.yaml", HELLO)
    process = MockdProcess([sys.executable, str(ROOT / "manage.py"), "runmocks", "-c",
                            str(config), "--port", str(port), "--admin-port", str(admin_port),
                            "--data-dir", str(data_dir), "--no-auth"],
                           isolated_env(tmp_path), tmp_path, tmp_path / "server.log")
    process.base, process.admin = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{admin_port}"
    with process:
        process.wait_healthy(process.admin + "/health")
        with process.admin_client() as admin:
            created = admin.post("/mocks", json=http_mock("runtime", "GET", "/runtime",
                                                          body="kept"))
        assert created.status_code == 201, created.text
        pid_document = json.loads((tmp_path / ".mockd" / "mockd.pid").read_text())
    assert (data_dir / "mockd.sqlite3").is_file()
    assert pid_document["dataDir"] == str(data_dir)
    assert not (tmp_path / ".local" / "share" / "mockd").exists()
    # The same folder is read on the next start: the mock added at run time is there.
    with start_server(tmp_path, data_dir=data_dir) as again:
        with again.client() as client:
            assert client.get("/runtime").text == "kept"


def test_start_detached_with_a_data_dir_then_plain_client_commands_work(tmp_path):
    data_dir = tmp_path / "d"
    config = write_config(tmp_path / "mocks.yaml", HELLO)
    started = run_mockd(["start", "-d", "-c", str(config), "--data-dir", str(data_dir),
                         "--port", str(free_port()), "--admin-port", str(free_port())],
                        tmp_path)
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        document = json.loads((tmp_path / ".mockd" / "mockd.pid").read_text())
        admin_port = document["components"]["admin"]["port"]
        assert document["components"]["admin"]["url"] == f"http://127.0.0.1:{admin_port}"
        assert document["dataDir"] == str(data_dir)
        assert document["apiKey"] == {"source": "file",
                                      "file": str(data_dir / "admin-api-key")}
        listed = run_mockd(["list", "--json"], tmp_path)
        assert listed.returncode == 0, listed.stderr
        assert [row["id"] for row in json.loads(listed.stdout)] == ["hello"]
        added = run_mockd(["http", "add", "--path", "/added", "-b", "yes"], tmp_path)
        assert added.returncode == 0, added.stderr

        # A key that no longer matches: the 401 says where the key was looked for.
        (data_dir / "admin-api-key").write_text("mk_" + "0" * 64 + "\n")
        denied = run_mockd(["list"], tmp_path)
    finally:
        stopped = run_mockd(["stop"], tmp_path)
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert denied.returncode == 1
    assert denied.stderr.strip() == (
        "Error: Invalid API key (HTTP 401); looked in: PID file ~/.mockd/mockd.pid -> "
        "data dir ~/d -> ~/d/admin-api-key; MOCKD_API_KEY not set; pass --api-key or run "
        "'mockd admin key'")


@pytest.fixture(scope="module")
def two_servers(tmp_path_factory):
    """Two ``mockd start`` with the admin key on, in one HOME, each with its own data dir:
    the first writes the PID file ``~/.mockd/mockd.pid``, the second starts while it runs."""
    home = tmp_path_factory.mktemp("two-servers")
    first_dir, second_dir = home / "first", home / "second"
    with start_server(home, HELLO, no_auth=False, data_dir=first_dir) as first, \
            start_server(home, HELLO, no_auth=False, data_dir=second_dir) as second:
        first.data_dir, second.data_dir, first.home = first_dir, second_dir, home
        yield first, second


def test_without_a_pid_file_the_key_comes_from_data_dir_then_the_environment(two_servers,
                                                                              tmp_path):
    _, server = two_servers
    data_dir = server.data_dir
    # tmp_path is the client's HOME: it holds no PID file and no default data dir.
    key = (data_dir / "admin-api-key").read_text().strip()
    denied = run_mockd(["list", "--admin-url", server.admin], tmp_path)
    by_data_dir = run_mockd(["list", "--admin-url", server.admin, "--data-dir",
                             str(data_dir)], tmp_path)
    before_command = run_mockd(["--data-dir", str(data_dir), "list", "--admin-url",
                                server.admin], tmp_path)
    by_environment = run_mockd(["list", "--admin-url", server.admin], tmp_path,
                               MOCKD_API_KEY=key)
    assert denied.returncode == 1
    assert denied.stderr.strip() == (
        "Error: API key required. Provide via X-API-Key header or Authorization: Bearer "
        "<key>. (HTTP 401); looked in: PID file ~/.mockd/mockd.pid (none); MOCKD_API_KEY not "
        "set; default data dir -> ~/.local/share/mockd/admin-api-key (missing); pass "
        "--api-key or run 'mockd admin key'")
    assert by_data_dir.returncode == before_command.returncode == 0, by_data_dir.stderr
    assert by_environment.returncode == 0, by_environment.stderr


def test_pid_file_of_another_server_is_not_used_for_its_key(two_servers):
    first, second = two_servers
    home, first_dir, second_dir = first.home, first.data_dir, second.data_dir
    # The PID file names the first server; the second is reached through --admin-url.
    assert json.loads((home / ".mockd" / "mockd.pid").read_text())["dataDir"] == \
        str(first_dir)
    to_first = run_mockd(["list", "--admin-url", first.admin], home)
    to_second = run_mockd(["list", "--admin-url", second.admin], home)
    second_with_dir = run_mockd(["list", "--admin-url", second.admin, "--data-dir",
                                 str(second_dir)], home)
    assert to_first.returncode == 0, to_first.stderr
    assert to_second.returncode == 1
    assert f"its server's admin API is {first.admin}, not {second.admin}" in to_second.stderr
    assert second_with_dir.returncode == 0, second_with_dir.stderr
