"""``serverConfig`` of the config file through real ``mockd`` processes: the body limit, the
ports (flags > environment > file), and the published JSON Schema from ``mockd schema`` and
``GET /config/schema`` (behavior notes §14, §15, §18). Loopback only; every wait is bounded."""
from __future__ import annotations

import json
import socket

import pytest

from tests.helpers import (MOCKD, MockdProcess, free_port, http_mock, isolated_env,
                           make_config, run_mockd, start_engine, write_config)

pytestmark = pytest.mark.integration


def _echo_config(**server_config):
    return make_config(http_mock("upload", "POST", "/upload", body="stored", status=201),
                       serverConfig=server_config)


def _port_is_listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(2.0)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_max_body_size_from_the_file_and_the_port_flag_winning_over_its_port(tmp_path):
    """``serverConfig.maxBodySize`` limits the mock port; ``--port 0`` beats its
    ``httpPort``."""
    file_port = free_port()
    with start_engine(tmp_path, _echo_config(maxBodySize=1024, httpPort=file_port)) as engine:
        assert not engine.base.endswith(f":{file_port}")
        with engine.client() as client:
            assert client.get("/health").status_code == 200
            small = client.post("/upload", content=b"x" * 512)
            large = client.post("/upload", content=b"x" * 2048)
    assert small.status_code == 201
    assert large.status_code == 413
    assert large.json()["error"] == "body_too_large"


def test_http_port_from_the_file_applies_without_a_port_flag(tmp_path):
    port, management_port = free_port(), free_port()
    config_path = write_config(tmp_path / "mocks.yaml",
                               _echo_config(httpPort=port, managementPort=management_port))
    with MockdProcess([MOCKD, "engine", "-c", str(config_path), "--print-url"],
                      isolated_env(tmp_path), tmp_path, tmp_path / "engine.log") as engine:
        assert engine.wait_url_line() == f"http://127.0.0.1:{port}"
        engine.wait_healthy(f"http://127.0.0.1:{port}/health")
        # Engine mode: managementPort pins the engine-control port.
        assert _port_is_listening(management_port)


@pytest.fixture(scope="module")
def file_port_server(tmp_path_factory):
    """``mockd start`` with the admin key on, no port flag but ``--engine-port``, the file's
    ``httpPort`` and ``adminPort``, and ``MOCKD_PORT`` in its environment."""
    tmp = tmp_path_factory.mktemp("file-ports")
    file_port, admin_port, env_port = free_port(), free_port(), free_port()
    config_path = write_config(tmp / "mocks.yaml",
                               _echo_config(httpPort=file_port, adminPort=admin_port))
    argv = [MOCKD, "start", "-c", str(config_path), "--engine-port", str(free_port()),
            "--data-dir", str(tmp / "data")]
    with MockdProcess(argv, isolated_env(tmp, MOCKD_PORT=str(env_port)), tmp,
                      tmp / "server.log") as server:
        server.file_port, server.admin_port, server.env_port = file_port, admin_port, env_port
        server.admin = f"http://127.0.0.1:{admin_port}"
        server.key_file = tmp / "data" / "admin-api-key"
        yield server


@pytest.fixture(scope="module")
def printed_schema(tmp_path_factory):
    """The JSON document ``mockd schema`` prints (the command exits 0)."""
    result = run_mockd(["schema"], tmp_path_factory.mktemp("schema"))
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_file_ports_apply_to_start_and_the_environment_wins_over_them(file_port_server):
    server = file_port_server
    server.wait_healthy(f"http://127.0.0.1:{server.admin_port}/health")  # adminPort from the file
    server.wait_healthy(f"http://127.0.0.1:{server.env_port}/health")  # MOCKD_PORT beats httpPort
    assert not _port_is_listening(server.file_port)


def test_mockd_schema_prints_the_config_json_schema(tmp_path, printed_schema):
    schema = printed_schema
    assert schema["$schema"].startswith("https://json-schema.org/")
    assert "title" in schema and "$id" not in schema
    assert {"mocks", "serverConfig"} <= set(schema["properties"])
    reference = json.dumps(schema["properties"]["serverConfig"])
    name = reference.split("#/$defs/")[1].split('"')[0]
    assert {"tls", "mtls", "cors"} <= set(schema["$defs"][name]["properties"])

    written = run_mockd(["schema", "--output", "schema.json"], tmp_path)
    assert written.returncode == 0, written.stderr
    assert written.stdout == ""
    assert json.loads((tmp_path / "schema.json").read_text()) == schema


def test_admin_config_schema_is_the_same_document_and_needs_the_key(file_port_server,
                                                                    printed_schema):
    server, printed = file_port_server, printed_schema
    server.wait_healthy(f"http://127.0.0.1:{server.admin_port}/health")
    key = server.key_file.read_text().strip()
    with server.admin_client() as admin:
        anonymous = admin.get("/config/schema")
        served = admin.get("/config/schema", headers={"X-API-Key": key})
    assert anonymous.status_code == 401
    assert served.status_code == 200
    assert served.headers["content-type"].startswith("application/json")
    assert served.json() == printed


def test_unknown_server_config_key_stops_the_start_with_its_path(tmp_path):
    config_path = write_config(tmp_path / "mocks.yaml", _echo_config(httpPrt=8080))
    result = run_mockd(["engine", "-c", str(config_path), "--port", "0"], tmp_path, timeout=30)
    assert result.returncode == 2
    assert "serverConfig.httpPrt: unknown key" in result.stderr

