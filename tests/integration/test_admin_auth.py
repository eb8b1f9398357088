"""Admin API keys against a real server: generation, the three ways to send a key, both
401s, the open routes and ``MOCKD_API_KEY`` (SPEC "Authentication"; behavior notes §2)."""
from __future__ import annotations

import re
import time
import stat

import httpx
import pytest

from tests.helpers import MOCKD, MockdProcess, free_port, http_mock, isolated_env, make_config
from tests.helpers import start_server, write_config

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    directory = tmp_path_factory.mktemp("auth")
    with start_server(directory, make_config(), no_auth=False) as process:
        process.data_dir = directory / "data"
        yield process


@pytest.fixture(scope="module")
def key(secured):
    path = secured.data_dir / "admin-api-key"
    return path.read_text().strip()


def test_key_is_generated_into_the_data_dir_0600_and_its_file_named(secured, key):
    assert re.fullmatch(r"mk_[0-9a-f]{64}", key)
    path = secured.data_dir / "admin-api-key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(secured.data_dir.stat().st_mode) == 0o700
    # stderr is a file here, not a terminal: the line names the file, never the key
    assert f"Admin API key: stored in {path}" in secured.log()
    assert key not in secured.log()


@pytest.mark.parametrize("how", ["header", "bearer", "query"])
def test_key_is_accepted_in_all_three_forms(secured, key, how):
    headers, params = {}, {}
    if how == "header":
        headers["X-API-Key"] = key
    elif how == "bearer":
        headers["Authorization"] = f"Bearer {key}"
    else:
        params["api_key"] = key
    with secured.admin_client() as admin:
        answer = admin.get("/mocks", headers=headers, params=params)
    assert answer.status_code == 200 and "mocks" in answer.json()


def test_missing_and_wrong_keys_are_401(secured):
    with secured.admin_client() as admin:
        missing = admin.get("/mocks")
        wrong = admin.get("/mocks", headers={"X-API-Key": "mk_wrong"})
        wrong_bearer = admin.post("/mocks", headers={"Authorization": "Bearer nope"},
                                  json=http_mock("x", "GET", "/x"))
    assert missing.status_code == 401
    assert missing.json() == {"error": "missing_api_key",
                              "message": "API key required. Provide via X-API-Key header or "
                                         "Authorization: Bearer <key>."}
    assert wrong.status_code == wrong_bearer.status_code == 401
    assert wrong.json() == {"error": "invalid_api_key", "message": "Invalid API key"}
    assert missing.headers["x-content-type-options"] == "nosniff"


@pytest.mark.parametrize("path", ["/health", "/ready", "/metrics"])
def test_health_ready_and_metrics_need_no_key(secured, path):
    with secured.admin_client() as admin:
        assert admin.get(path).status_code == 200


def test_key_routes(secured, key):
    with secured.admin_client(headers={"X-API-Key": key}) as admin:
        shown = admin.get("/admin/api-key").json()
        assert shown["keyPrefix"] == key[:11] + "..." and shown["enabled"] is True
        assert "key" not in shown
        assert admin.get("/admin/api-key", params={"show_key": "true"}).json()["key"] == key
    with secured.admin_client() as admin:
        assert admin.get("/admin/api-key").status_code == 401


def test_environment_key_overrides_the_file(tmp_path):
    admin_port, port = free_port(), free_port()
    argv = [MOCKD, "start", "--port", str(port), "--admin-port", str(admin_port),
            "--engine-port", str(free_port()), "--data-dir", str(tmp_path / "data"),
            "-c", str(write_config(tmp_path / "c.yaml", make_config()))]
    process = MockdProcess(argv, isolated_env(tmp_path, MOCKD_API_KEY="env-key-123"), tmp_path,
                           tmp_path / "server.log")
    with process:
        process.admin = f"http://127.0.0.1:{admin_port}"
        process.wait_healthy(process.admin + "/health")
        with httpx.Client(base_url=process.admin, trust_env=False, timeout=10) as admin:
            assert admin.get("/mocks", headers={"X-API-Key": "env-key-123"}).status_code == 200
            assert admin.get("/mocks", headers={"X-API-Key": "other"}).status_code == 401
    assert not (tmp_path / "data" / "admin-api-key").exists()


def test_no_auth_opens_every_route(tmp_path):
    with start_server(tmp_path, make_config(), no_auth=True) as server:
        with server.admin_client() as admin:
            assert admin.get("/mocks").status_code == 200
            assert admin.get("/admin/api-key").json()["enabled"] is False


def test_first_start_creates_a_django_admin_superuser(secured):
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and "one-time password" not in secured.log():
        time.sleep(0.1)
    line = next(line for line in secured.log().splitlines() if "one-time password" in line)
    # not a terminal: the password is in a 0600 file of the data dir, not in the log
    stored = secured.data_dir / "django-admin-password"
    assert f"one-time password stored in {stored}" in line
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    password = stored.read_text().strip()
    assert password not in secured.log()
    with httpx.Client(base_url=secured.admin, trust_env=False, timeout=10) as browser:
        login = browser.get("/admin/login/")
        token = browser.cookies["csrftoken"]
        answer = browser.post("/admin/login/", data={
            "username": "admin", "password": password, "csrfmiddlewaretoken": token,
            "next": "/admin/"}, headers={"Referer": secured.admin + "/admin/login/"})
        assert login.status_code == 200 and answer.status_code == 302
        assert browser.get("/admin/mocks/mock/").status_code == 200
