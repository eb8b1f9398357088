"""``mockd proxy ...`` against a real ``mockd start``: start, status, mode, stop, and the CA
commands (``ca generate`` locally, ``ca export`` from the server).

Source: SPEC "Command-line surface" (``proxy start/ca generate/ca export``); behavior notes §1.
"""
from __future__ import annotations

import json
import stat

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes

from tests.helpers import free_port, run_mockd, start_server

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    process = start_server(tmp_path_factory.mktemp("proxy-cli"))
    yield process
    process.stop()


def mockd(server, tmp_path, *args: str):
    return run_mockd(["proxy", *args, "--admin-url", server.admin], tmp_path)


def test_proxy_cli_start_status_mode_stop(server, tmp_path):
    port = free_port()
    ca_dir = tmp_path / "my-ca"
    generated = run_mockd(["proxy", "ca", "generate", "--ca-path", str(ca_dir)], tmp_path)
    assert generated.returncode == 0, generated.stderr
    started = mockd(server, tmp_path, "start", "--port", str(port), "--session", "cli",
                    "--ca-path", str(ca_dir))
    assert started.returncode == 0, started.stderr
    assert f"Proxy running on http://127.0.0.1:{port}" in started.stdout
    assert "intercepted" in started.stdout
    again = mockd(server, tmp_path, "start", "--port", str(free_port()))
    assert again.returncode == 1
    assert "already running" in again.stderr
    status = mockd(server, tmp_path, "status", "--json")
    assert json.loads(status.stdout)["port"] == port
    assert json.loads(status.stdout)["sessionName"] == "cli"
    mode = mockd(server, tmp_path, "mode", "playback")
    assert mode.stdout.strip() == "Proxy mode: playback"
    assert mockd(server, tmp_path, "mode", "sideways").returncode == 2
    stopped = mockd(server, tmp_path, "stop")
    assert stopped.returncode == 0, stopped.stderr
    assert "Proxy stopped" in stopped.stdout
    assert mockd(server, tmp_path, "status").stdout.strip() == "Proxy is not running"
    assert "not running" in mockd(server, tmp_path, "stop").stderr


def test_proxy_cli_ca_generate_writes_a_private_key_and_refuses_to_overwrite(tmp_path):
    ca_dir = tmp_path / "ca"
    done = run_mockd(["proxy", "ca", "generate", "--ca-path", str(ca_dir)], tmp_path)
    assert done.returncode == 0, done.stderr
    cert = x509.load_pem_x509_certificate((ca_dir / "ca.crt").read_bytes())
    assert cert.fingerprint(hashes.SHA256()).hex(":").upper() in done.stdout
    assert stat.S_IMODE((ca_dir / "ca.key").stat().st_mode) == 0o600
    again = run_mockd(["proxy", "ca", "generate", "--ca-path", str(ca_dir)], tmp_path)
    assert again.returncode == 1
    assert "already exists" in again.stderr


def test_proxy_cli_ca_export_writes_the_server_ca(server, tmp_path):
    with server.admin_client() as admin:
        status = admin.get("/proxy/ca").json()
        if not status["exists"]:
            assert admin.post("/proxy/ca", json={"caPath": "ca"}).status_code == 201
            status = admin.get("/proxy/ca").json()
    target = tmp_path / "exported.pem"
    done = mockd(server, tmp_path, "ca", "export", "-o", str(target))
    assert done.returncode == 0, done.stderr
    cert = x509.load_pem_x509_certificate(target.read_bytes())
    assert cert.fingerprint(hashes.SHA256()).hex(":").upper() == status["fingerprint"]
