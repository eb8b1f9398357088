"""Client commands end to end: ``list``, ``http add`` / ``add http``, ``status``, and
``start -d`` / ``stop`` with an isolated HOME (SPEC "Command-line surface"; notes §15)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import httpx
import pytest

from tests.helpers import (MOCKD, free_port, http_mock, isolated_env, make_config, run_mockd,
                           start_server, write_config)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    directory = tmp_path_factory.mktemp("cli-client")
    with start_server(directory, make_config(http_mock(
            "a-very-long-mock-identifier-1", "GET", "/a/really/long/path/that/goes/on",
            body="x"))) as process:
        process.directory = directory
        yield process


def cli(server, *args: str, **env: str) -> subprocess.CompletedProcess:
    return run_mockd([*args, "--admin-url", server.admin], server.directory, **env)


def test_http_add_creates_a_mock_the_data_plane_serves(server):
    done = cli(server, "http", "add", "--path", "/cli/hello", "-m", "POST", "-s", "202",
               "-b", "body!", "-H", "X-Made-By: cli", "--match-header", "X-Team: a")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("Created mock: http_")
    assert lines[1:] == ["  Type: http", "  Method: POST", "  Path: /cli/hello",
                         "  Status: 202"]
    with server.client() as client:
        answer = client.post("/cli/hello", headers={"X-Team": "a"})
    assert answer.status_code == 202 and answer.text == "body!"
    assert answer.headers["x-made-by"] == "cli"
    with server.admin_client() as admin:
        entry = admin.get("/requests", params={"path": "/cli/hello"}).json()["requests"][0]
    assert entry["matchedMockID"] == lines[0].split(": ")[1]


def test_add_http_with_the_same_method_and_path_updates(server):
    first = cli(server, "add", "http", "--path", "/cli/same", "-b", "one")
    second = cli(server, "add", "http", "--path", "/cli/same", "-b", "two", "-n", "named")
    assert first.returncode == second.returncode == 0, second.stderr
    created_id = first.stdout.splitlines()[0].split(": ")[1]
    assert second.stdout.splitlines()[0] == f"Updated mock: {created_id}"
    with server.client() as client:
        assert client.get("/cli/same").text == "two"


def test_options_before_the_command_and_errors_in_one_line(server):
    done = run_mockd(["--admin-url", server.admin, "http", "add", "--path", "relative"],
                     server.directory)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "Error: http.matcher.path: path must start with '/', got 'relative' (HTTP 400)"]
    unreachable = run_mockd(["list", "--admin-url", f"http://127.0.0.1:{free_port()}"],
                            server.directory)
    assert unreachable.returncode == 1 and unreachable.stderr.startswith("Error: cannot reach")


def test_list_table_and_json(server):
    table = cli(server, "list")
    assert table.returncode == 0, table.stderr
    header, *rows = table.stdout.splitlines()
    assert header.split() == ["ID", "TYPE", "PATH", "METHOD", "STATUS", "ENABLED"]
    long_row = next(row for row in rows if row.startswith("a-very-long"))
    assert long_row.split()[:6] == ["a-very-long-mock-...", "http", "/a/really/long/path/th...",
                                    "GET", "200", "true"]
    wide = cli(server, "list", "-w")
    assert "a-very-long-mock-identifier-1" in wide.stdout
    listed = json.loads(cli(server, "list", "--json").stdout)
    assert {"id": "a-very-long-mock-identifier-1", "type": "http",
            "path": "/a/really/long/path/that/goes/on", "method": "GET", "status": 200,
            "enabled": True} in listed
    assert json.loads(cli(server, "list", "--json", "-t", "grpc").stdout) == []


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    """A second server, with no mocks and the admin key on (``no_auth=False``): the empty
    listing and the key look-up both read it; ``key`` is the key it wrote at start."""
    directory = tmp_path_factory.mktemp("cli-secured")
    with start_server(directory, make_config(), no_auth=False) as process:
        process.directory = directory
        process.key = (directory / "data" / "admin-api-key").read_text().strip()
        yield process


def test_list_of_an_empty_server(secured):
    done = run_mockd(["list", "--admin-url", secured.admin, "--api-key", secured.key],
                     secured.directory)
    assert done.returncode == 0 and done.stdout.strip() == "No mocks configured"


def test_status(server):
    done = cli(server, "status", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "running"
    assert "is running" in cli(server, "status").stdout


def test_client_reads_the_key_from_the_environment(secured, tmp_path):
    # Another HOME: no PID file and no default key file lead to this server's key.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    key = secured.key
    denied = run_mockd(["list", "--admin-url", secured.admin], tmp_path, HOME=str(elsewhere))
    allowed = run_mockd(["list", "--admin-url", secured.admin], tmp_path,
                        MOCKD_API_KEY=key, HOME=str(elsewhere))
    flagged = run_mockd(["list", "--admin-url", secured.admin, "--api-key", key], tmp_path,
                        HOME=str(elsewhere))
    assert denied.returncode == 1 and "API key required" in denied.stderr
    assert allowed.returncode == flagged.returncode == 0


def _listening(port: int) -> bool:
    try:
        with httpx.Client(trust_env=False, timeout=1) as client:
            client.get(f"http://127.0.0.1:{port}/health")
        return True
    except httpx.HTTPError:
        return False


def test_start_detached_then_stop(tmp_path):
    port, admin_port, engine_port = free_port(), free_port(), free_port()
    config = write_config(tmp_path / "d.yaml", make_config(http_mock("det", "GET", "/det",
                                                                     body="detached")))
    env = isolated_env(tmp_path)
    pid_file = tmp_path / ".mockd" / "mockd.pid"
    try:
        with open(tmp_path / "start.out", "wb") as out:
            started = subprocess.run([MOCKD, "start", "-c", str(config), "-d", "--no-auth",
                                      "--port", str(port), "--admin-port", str(admin_port),
                                      "--engine-port", str(engine_port)], env=env, cwd=tmp_path,
                                     stdout=out, stderr=out, stdin=subprocess.DEVNULL,
                                     timeout=40)
        output = (tmp_path / "start.out").read_text()
        assert started.returncode == 0, output
        document = json.loads(pid_file.read_text())
        assert output.splitlines() == [
            f"mockd started in background (PID {document['pid']})",
            f"Admin API:   http://localhost:{admin_port}",
            f"Mock server: http://localhost:{port}", "Loaded 1 mocks",
            f"Django admin:  http://localhost:{admin_port}/admin/ (user and password: "
            f"'mockd admin password')"]
        assert document["components"]["admin"]["port"] == admin_port
        assert document["components"]["engine"]["port"] == port
        assert document["config"]["mocksLoaded"] == 1
        with httpx.Client(trust_env=False, timeout=5) as client:
            assert client.get(f"http://127.0.0.1:{port}/det").text == "detached"
        assert (tmp_path / ".mockd" / "daemon.log").exists()

        stopped = run_mockd(["stop"], tmp_path)
        assert stopped.returncode == 0, stopped.stderr
        assert stopped.stdout.strip() == (f"Stopping mockd (PID {document['pid']}) with "
                                          f"SIGTERM... done")
        assert not pid_file.exists()
        assert not _listening(port) and not _listening(admin_port)
        again = run_mockd(["stop"], tmp_path)
        assert again.returncode == 1
        assert again.stdout.strip() == f"mockd is not running (no PID file found at {pid_file})"
    finally:
        if pid_file.exists():
            try:
                os.kill(json.loads(pid_file.read_text())["pid"], signal.SIGKILL)
            except (ProcessLookupError, ValueError):
                pass
            time.sleep(0.2)


def test_http_add_refuses_to_drop_the_conditions_of_a_mock_on_the_same_route(server):
    with server.admin_client() as admin:
        created = admin.post("/mocks", json=http_mock(
            "guarded", "POST", "/cli/guarded", status=201, body="admin",
            matcher={"headers": {"Authorization": "Bearer admin-*"},
                     "bodyJsonPath": {"$.role": "admin"}}))
    assert created.status_code == 201, created.text
    refused = cli(server, "http", "add", "-m", "POST", "--path", "/cli/guarded", "-b", "plain")
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        "Error: POST /cli/guarded already has a mock with other conditions: 'guarded' matching "
        "on bodyJsonPath, headers; this add would replace 'guarded' and drop its conditions. "
        "Pass --replace to replace it, or --allow-duplicate to add a new mock beside it")
    with server.client() as client:
        kept = client.post("/cli/guarded", headers={"Authorization": "Bearer admin-1"},
                           json={"role": "admin"})
    assert kept.status_code == 201 and kept.text == "admin"

    replaced = cli(server, "http", "add", "-m", "POST", "--path", "/cli/guarded", "-b", "plain",
                   "--replace")
    assert replaced.returncode == 0, replaced.stderr
    assert replaced.stdout.splitlines()[0] == "Updated mock: guarded"
    with server.client() as client:
        assert client.post("/cli/guarded").text == "plain"
    # The same conditions again: an update, as for a mock without conditions.
    same = cli(server, "http", "add", "-m", "POST", "--path", "/cli/guarded", "-b", "again")
    assert same.returncode == 0 and same.stdout.startswith("Updated mock: guarded")


def test_http_add_stateful_refuses_before_writing_anything(server):
    with server.admin_client() as admin:
        admin.post("/mocks", json=http_mock("vip-only", "POST", "/cli/members", body="vip",
                                            matcher={"queryParams": {"tier": "vip"}}))
    refused = cli(server, "http", "add", "--stateful", "members", "--path", "/cli/members")
    assert refused.returncode == 1
    assert "'vip-only' matching on queryParams" in refused.stderr
    with server.admin_client() as admin:
        assert "members" not in admin.get("/state").json()["resourceList"]
        paths = [mock["http"]["matcher"].get("path")
                 for mock in admin.get("/mocks").json()["mocks"]]
    assert paths.count("/cli/members") == 1 and "/cli/members/{id}" not in paths
    created = cli(server, "http", "add", "--stateful", "teams", "--path", "/cli/teams")
    assert created.returncode == 0, created.stderr


@pytest.mark.parametrize("slug, content_type, content, served", [
    pytest.param("json", "application/json", '{"ok": true}', {"ok": True},
                 id="JSON content type"),
    pytest.param("text", None, '{"ok": true}', '{"ok": true}', id="no content type: text"),
    pytest.param("bad", "application/json", "not json", "not json",
                 id="JSON type, text content"),
    pytest.param("tpl", "text/plain", "hello {{request.path}}", "hello /cli/file-tpl",
                 id="template"),
])
def test_http_add_body_file_sends_the_file_content(server, tmp_path, slug, content_type,
                                                   content, served):
    body_file = tmp_path / "outside" / "body.txt"  # in none of the server's folders
    body_file.parent.mkdir()
    body_file.write_text(content)
    headers = ["-H", f"Content-Type: {content_type}"] if content_type else []
    added = cli(server, "http", "add", "--path", f"/cli/file-{slug}", "--body-file",
                str(body_file), *headers, "--json")
    assert added.returncode == 0, added.stderr
    response = json.loads(added.stdout)["http"]["response"]
    assert "bodyFile" not in response and response["body"] == (
        served if isinstance(served, dict) else content)
    with server.client() as client:
        answer = client.get(f"/cli/file-{slug}")
    assert answer.status_code == 200
    if isinstance(served, dict):
        assert answer.json() == served
    else:
        assert answer.text == served


def test_http_add_body_file_that_cannot_be_read_is_one_line(server, tmp_path):
    missing = cli(server, "http", "add", "--path", "/cli/nofile", "--body-file",
                  str(tmp_path / "nope.json"))
    assert missing.returncode == 1
    assert missing.stderr.startswith(f"Error: --body-file {tmp_path / 'nope.json'}: cannot read")
