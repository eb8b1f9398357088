"""Security of a real server as a user (or a hostile web page) meets it: the engine-control port
(token, JSON only, no ``Origin``; not bound at all in full mode), admin key exemptions by exact
route, ``bodyFile`` confinement, and the files a detached server writes.

Source: behavior notes §2 ("Exempt"), §15 (engine-control port, ``start -d``, data dir) and
§16 (internal engine link). Every server runs on free loopback ports; every wait is bounded.
"""
from __future__ import annotations

import os
import socket
import stat
import subprocess
import time
from pathlib import Path

import httpx
import pytest
import yaml

from tests.helpers import (MOCKD, free_port, http_mock, isolated_env, make_config, run_mockd,
                           start_engine, start_server, write_config)

pytestmark = pytest.mark.integration

TOKEN = "engine-test-token"
HELLO = make_config(http_mock("hello", "GET", "/hello", body="hi"))
NEW_CONFIG = make_config(http_mock("pushed", "GET", "/pushed", body="pushed"))


def _control(port: int, **headers: str) -> httpx.Client:
    return httpx.Client(base_url=f"http://127.0.0.1:{port}", trust_env=False, timeout=10,
                        headers=headers)


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    directory = tmp_path_factory.mktemp("engine")
    port = free_port()
    with start_engine(directory, HELLO,
                      extra_args=["--engine-port", str(port), "--engine-token", TOKEN]) as proc:
        proc.control_port = port
        yield proc


def test_engine_control_refuses_a_cross_origin_text_plain_post(engine):
    """What a web page can send without a preflight: a text/plain POST with its Origin."""
    with _control(engine.control_port) as control:
        answer = control.post("/config", content=b'{"version":"1.0","mocks":[]}',
                              headers={"Origin": "http://evil.example",
                                       "Content-Type": "text/plain",
                                       "X-Engine-Token": TOKEN})
    assert answer.status_code == 403 and answer.json()["error"] == "origin_refused"
    with engine.client() as data:
        assert data.get("/hello").text == "hi"  # the config was not replaced


def test_engine_control_refuses_a_body_that_is_not_json(engine):
    with _control(engine.control_port, **{"X-Engine-Token": TOKEN}) as control:
        answer = control.post("/config", content=b'{"version":"1.0","mocks":[]}',
                              headers={"Content-Type": "text/plain"})
        form = control.post("/config", data={"version": "1.0"})
    assert answer.status_code == form.status_code == 415
    assert answer.json()["error"] == "unsupported_media_type"


def test_engine_control_needs_the_engine_token(engine):
    with _control(engine.control_port) as control:
        missing = control.post("/config", json=NEW_CONFIG)
        wrong = control.get("/health", headers={"X-Engine-Token": "nope"})
    assert (missing.status_code, missing.json()["error"]) == (401, "missing_engine_token")
    assert (wrong.status_code, wrong.json()["error"]) == (401, "invalid_engine_token")
    assert set(missing.json()) == {"error", "message"}


def test_engine_control_with_the_token_and_json_loads_a_config(engine):
    with _control(engine.control_port, **{"X-Engine-Token": TOKEN}) as control:
        assert control.get("/health").json()["status"] == "healthy"
        loaded = control.post("/config", json=NEW_CONFIG)
        try:
            assert loaded.status_code == 200 and loaded.json()["mocks"] == 1
            with engine.client() as data:
                assert data.get("/pushed").text == "pushed"
        finally:
            assert control.post("/config", json=HELLO).status_code == 200


def test_engine_generates_its_token_0600_and_prints_only_where_it_is(tmp_path):
    data_dir = tmp_path / "state"
    port = free_port()
    with start_engine(tmp_path, HELLO, extra_args=["--engine-port", str(port),
                                                    "--data-dir", str(data_dir)]) as proc:
        token_file = data_dir / "engine-token"
        token = token_file.read_text().strip()
        with _control(port, **{"X-Engine-Token": token}) as control:
            assert control.get("/health").status_code == 200
        log = proc.log()
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
    assert len(token) >= 32 and token not in log
    assert f"stored in {token_file}" in log


def test_engine_takes_its_token_from_the_environment(tmp_path):
    port = free_port()
    config = write_config(tmp_path / "mocks.yaml", HELLO)
    env = isolated_env(tmp_path, MOCKD_ENGINE_TOKEN="from-env")
    process = subprocess.Popen([MOCKD, "engine", "-c", str(config), "--port", "0",
                                "--engine-port", str(port), "--print-url"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               stdin=subprocess.DEVNULL, env=env, cwd=tmp_path)
    try:
        assert process.stdout.readline().startswith(b"http")
        with _control(port, **{"X-Engine-Token": "from-env"}) as control:
            assert control.get("/health").status_code == 200
            assert control.get("/health", headers={"X-Engine-Token": "x"}).status_code == 401
        assert not (tmp_path / ".local").exists()  # nothing generated, nothing written
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_full_mode_does_not_listen_on_the_engine_port(open_admin):
    # start_server passes --engine-port to every full start: full mode never binds it.
    argv = open_admin.proc.args
    engine_port = int(argv[argv.index("--engine-port") + 1])
    with open_admin.client() as data:
        assert data.get("/hello").text == "hi"
    with open_admin.admin_client() as admin:
        ids = [mock["id"] for mock in admin.get("/mocks").json()["mocks"]]
        assert {"hello", "leak"} <= set(ids)  # admin reaches the engine
        ports = admin.get("/ports").json()["ports"]
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", engine_port), timeout=5).close()
    assert {row["component"] for row in ports} == {"Admin API", "Mock Engine"}


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    directory = tmp_path_factory.mktemp("secured")
    with start_server(directory, HELLO, no_auth=False) as server:
        server.key = (directory / "data" / "admin-api-key").read_text().strip()
        yield server


@pytest.mark.parametrize("method, path", [
    pytest.param("DELETE", "/mocks/app.js", id="delete a mock named like a script"),
    pytest.param("GET", "/mocks/x.css", id="read a mock named like a stylesheet"),
    pytest.param("GET", "/requests/page.html", id="html suffix"),
    pytest.param("POST", "/health", id="unsafe method on an open path"),
    pytest.param("DELETE", "/static/app.js", id="unsafe method under the static prefix"),
])
def test_admin_key_is_needed_whatever_the_suffix(secured, method, path):
    with secured.admin_client() as admin:
        answer = admin.request(method, path)
    assert answer.status_code == 401 and answer.json()["error"] == "missing_api_key"


def test_admin_open_routes_stay_open(secured):
    with secured.admin_client() as admin:
        assert admin.get("/health").status_code == 200
        assert admin.head("/docs").status_code != 401
        assert admin.get("/static/does-not-exist.js").status_code != 401
        assert admin.options("/mocks/app.js").status_code != 401
        with_key = admin.delete("/mocks/app.js", headers={"X-API-Key": secured.key})
    assert with_key.status_code == 404  # past the gateway: no such mock


def _body_file_config(tmp_path: Path, body_file: str) -> Path:
    (tmp_path / "secret.txt").write_text("top secret")
    folder = tmp_path / "config"
    folder.mkdir(exist_ok=True)
    (folder / "inside.txt").write_text("inside")
    return write_config(folder / "mocks.yaml", make_config(
        http_mock("leak", "GET", "/leak", response={"bodyFile": body_file})))


@pytest.mark.parametrize("body_file", ["../secret.txt", "/etc/hostname"])
@pytest.mark.parametrize("command", ["engine", "start"])
def test_body_file_outside_the_config_folder_is_a_startup_error(tmp_path, command, body_file):
    config = _body_file_config(tmp_path, body_file)
    args = [command, "-c", str(config), "--port", "0"]
    if command == "start":
        args += ["--admin-port", str(free_port()), "--data-dir", str(tmp_path / "data")]
    result = run_mockd(args, tmp_path, timeout=30)
    assert result.returncode == 2, result.stderr
    assert "mocks[0].http.response.bodyFile: " in result.stderr
    assert "outside" in result.stderr and "--allow-body-files-anywhere" in result.stderr
    assert "Traceback" not in result.stderr


def test_body_file_symlink_leading_out_is_a_startup_error(tmp_path):
    config = _body_file_config(tmp_path, "link.txt")
    os.symlink(tmp_path / "secret.txt", config.parent / "link.txt")
    result = run_mockd(["engine", "-c", str(config), "--port", "0"], tmp_path, timeout=30)
    assert result.returncode == 2 and "mocks[0].http.response.bodyFile: " in result.stderr


def test_allow_body_files_anywhere_lifts_the_confinement(tmp_path):
    config = _body_file_config(tmp_path, "../secret.txt")
    with start_engine(config.parent, config.read_text(),
                      extra_args=["--allow-body-files-anywhere"]) as engine:
        with engine.client() as data:
            assert data.get("/leak").text == "top secret"


def test_admin_refuses_a_body_file_outside_with_400(open_admin):
    with open_admin.admin_client() as admin, open_admin.client() as data:
        assert data.get("/leak").text == "inside"
        refused = admin.post("/mocks", json=http_mock(
            "escape", "GET", "/escape", response={"bodyFile": "/etc/hostname"}))
        dotted = admin.post("/mocks", json=http_mock(
            "dotted", "GET", "/dotted", response={"bodyFile": "../secret.txt"}))
        allowed = admin.post("/mocks", json=http_mock(
            "again", "GET", "/again", response={"bodyFile": "inside.txt"}))
        assert data.get("/escape").status_code == 404
        assert data.get("/again").text == "inside"
        assert admin.delete("/mocks/again").status_code in (200, 204)
    assert refused.status_code == dotted.status_code == 400
    assert refused.json()["error"] == "validation_error"
    assert "bodyFile" in refused.json()["message"]
    assert "--allow-body-files-anywhere" in dotted.json()["message"]
    assert allowed.status_code == 201


def test_detached_server_log_is_0600_and_holds_no_secret(tmp_path):
    port, admin_port = free_port(), free_port()
    data_dir = tmp_path / "data"
    config = write_config(tmp_path / "mocks.yaml", HELLO)
    started = run_mockd(["start", "-d", "-c", str(config), "--port", str(port),
                         "--admin-port", str(admin_port), "--data-dir", str(data_dir)],
                        tmp_path, timeout=60)
    try:
        assert started.returncode == 0, started.stderr
        home = tmp_path / ".mockd"
        log_path = home / "daemon.log"
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and "one-time password" not in log_path.read_text():
            time.sleep(0.1)
        log = log_path.read_text()
        key = (data_dir / "admin-api-key").read_text().strip()
        password = (data_dir / "django-admin-password").read_text().strip()
    finally:
        stopped = run_mockd(["stop"], tmp_path, timeout=30)
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert stat.S_IMODE(log_path.stat().st_mode) == 0o600
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
    assert "mk_" not in log and key not in log and password not in log
    assert f"Admin API key: stored in {data_dir / 'admin-api-key'}" in log
    assert f"one-time password stored in {data_dir / 'django-admin-password'}" in log


@pytest.fixture(scope="module")
def open_admin(tmp_path_factory):
    """One ``mockd start --no-auth`` (engine port given, as for every full start) whose config
    sits in ``config/`` beside a ``secret.txt``: ``hello`` and ``leak`` (``bodyFile:
    inside.txt``, a file of the config's folder)."""
    folder = tmp_path_factory.mktemp("open-admin")
    config = _body_file_config(folder, "inside.txt")
    both = make_config(HELLO["mocks"][0], *yaml.safe_load(config.read_text())["mocks"])
    with start_server(config.parent, both, no_auth=True) as server:
        yield server


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
def test_admin_without_key_refuses_cross_origin_writes(open_admin, method):
    page_write = {"type": "http", "http": {"matcher": {"path": "/planted"},
                                           "response": {"body": "from a web page"}}}
    with open_admin.admin_client() as admin:
        before = [mock["id"] for mock in admin.get("/mocks").json()["mocks"]]
        assert "hello" in before
        answer = admin.request(method, "/mocks/hello" if method != "POST" else "/mocks",
                               content=str(page_write).replace("'", '"'),
                               headers={"Origin": "https://evil.example",
                                        "Content-Type": "text/plain"})
        assert answer.status_code == 403 and answer.json()["error"] == "cors_forbidden"
        assert [mock["id"] for mock in admin.get("/mocks").json()["mocks"]] == before
        assert admin.get("/mocks/hello").json()["http"]["response"]["body"] == "hi"


def test_admin_without_key_takes_writes_from_loopback_pages_and_plain_clients(open_admin):
    mock = {"type": "http", "http": {"matcher": {"path": "/from-dev-app"},
                                     "response": {"body": "ok"}}}
    with open_admin.admin_client() as admin:
        from_dev_app = admin.post("/mocks", json={**mock, "id": "dev"},
                                  headers={"Origin": "http://localhost:5173"})
        from_cli = admin.post("/mocks", json={**mock, "id": "cli",
                                              "http": {**mock["http"],
                                                       "matcher": {"path": "/cli"}}})
        assert (from_dev_app.status_code, from_cli.status_code) == (201, 201)
        assert admin.get("/mocks", headers={"Origin": "https://evil.example"}).status_code == 200
