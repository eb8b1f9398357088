"""A real server against a DNS-rebound page and path traversal: with ``--no-auth`` the admin
port and the engine-control port answer loopback names and addresses and ``--allowed-host``
names only (400 ``host_not_allowed`` otherwise), the data plane answers every ``Host``, and
``GET /static/../x`` is a 404, never a 500.

Source: docs/security.md "The admin port: API key, origins and Host" and "The engine-control
port and its token". Every server runs on free loopback ports; every wait is bounded.
"""
from __future__ import annotations

import socket

import httpx
import pytest

from tests.helpers import free_port, http_mock, make_config, start_engine, start_server

pytestmark = pytest.mark.integration

TOKEN = "engine-host-token"
HELLO = make_config(http_mock("hello", "GET", "/hello", body="hi"))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with start_server(tmp_path_factory.mktemp("hosts"), HELLO,
                      extra_args=["--allowed-host", "mock.test"]) as proc:  # --no-auth
        yield proc


def _status(base: str, path: str, host: str, **headers: str) -> httpx.Response:
    with httpx.Client(base_url=base, trust_env=False, timeout=10) as client:
        return client.get(path, headers={"Host": host, **headers})


def _raw_get(port: int, target: str) -> tuple[int, bytes]:
    """One request with the target sent as written ('..' and '%2e' are not normalised)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
                     .encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), body


@pytest.mark.parametrize("path", ["/config", "/requests", "/mocks", "/health"])
def test_admin_refuses_a_rebound_host_even_with_no_auth(server, path):
    answer = _status(server.admin, path, "attacker.example")
    assert answer.status_code == 400
    assert answer.json()["error"] == "host_not_allowed"
    assert set(answer.json()) == {"error", "message"}


def test_admin_refuses_a_rebound_write(server):
    with httpx.Client(base_url=server.admin, trust_env=False, timeout=10) as client:
        answer = client.post("/mocks", json=http_mock("evil", "GET", "/evil", body="x"),
                             headers={"Host": "attacker.example:4290"})
        assert answer.status_code == 400
        assert all(mock["id"] != "evil" for mock in client.get("/mocks").json()["mocks"])


@pytest.mark.parametrize("host", ["localhost:{port}", "[::1]:{port}", "127.0.0.1:{port}",
                                  "mock.test:{port}"])
def test_admin_answers_loopback_and_allowed_hosts(server, host):
    port = server.admin.rsplit(":", 1)[1]
    assert _status(server.admin, "/config", host.format(port=port)).status_code == 200


def test_data_plane_answers_every_host(server):
    answer = _status(server.base, "/hello", "attacker.example")
    assert (answer.status_code, answer.text) == (200, "hi")


@pytest.mark.parametrize("target", ["/static/../x", "/static/%2e%2e/x",
                                    "/static/%2e%2e/%2e%2e/manage.py",
                                    "/static/%252e%252e/x", "/static/..%2fsettings.py"])
def test_admin_static_traversal_is_404_never_500(server, target):
    status, body = _raw_get(int(server.admin.rsplit(":", 1)[1]), target)
    assert status == 404, body
    assert b"not_found" in body
    assert "Traceback" not in server.log()


def test_admin_static_files_still_served(server):
    status, body = _raw_get(int(server.admin.rsplit(":", 1)[1]), "/static/admin/css/base.css")
    assert status == 200 and body


def test_engine_control_refuses_a_rebound_host_and_lets_allowed_ones_in(tmp_path):
    port = free_port()
    with start_engine(tmp_path, HELLO,
                      extra_args=["--engine-port", str(port), "--engine-token", TOKEN],
                      extra_env={"MOCKD_ALLOWED_HOSTS": "mock.test, other.test"}) as engine:
        base = f"http://127.0.0.1:{port}"
        refused = _status(base, "/health", "attacker.example", **{"X-Engine-Token": TOKEN})
        assert (refused.status_code, refused.json()["error"]) == (400, "host_not_allowed")
        for host in (f"localhost:{port}", f"[::1]:{port}", "mock.test", "other.test"):
            assert _status(base, "/health", host,
                           **{"X-Engine-Token": TOKEN}).status_code == 200, host
        assert _status(engine.base, "/hello", "attacker.example").text == "hi"
