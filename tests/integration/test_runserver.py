"""``python manage.py runserver`` (the first thing a Django user types) never serves the admin
API without its gateway: it refuses, names ``runmocks``, and never opens its port.

Source: SPEC "Authentication"; docs/security.md "The admin port: API key, origins and Host".
"""
from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.helpers import free_port, isolated_env

pytestmark = pytest.mark.integration

MANAGE_PY = Path(__file__).resolve().parents[2] / "manage.py"


def _port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.parametrize("args", [
    pytest.param([], id="address given"),
    pytest.param(["--noreload", "--insecure"], id="with Django's own options"),
])
def test_runserver_refuses_and_names_runmocks(tmp_path, args):
    port = free_port()
    data_dir = tmp_path / "data"
    process = subprocess.Popen(
        [sys.executable, str(MANAGE_PY), "runserver", f"127.0.0.1:{port}", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
        cwd=tmp_path, env=isolated_env(tmp_path, MOCKD_DATA_DIR=str(data_dir)))
    try:
        deadline = time.monotonic() + 30
        while process.poll() is None and time.monotonic() < deadline:
            assert not _port_open(port), "runserver opened its port"
            time.sleep(0.1)
        if process.poll() is None:
            # It kept running: then it must at least refuse a write without a key.
            answer = httpx.post(f"http://127.0.0.1:{port}/mocks", json={}, trust_env=False,
                                timeout=10)
            pytest.fail(f"runserver kept running (POST /mocks -> {answer.status_code})")
        _, stderr = process.communicate(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
    assert process.returncode == 2
    message = stderr.decode()
    assert "manage.py runmocks" in message and "mockd start" in message
    assert "API key" in message
    assert not _port_open(port)
    assert not (data_dir / "mockd.sqlite3").exists()  # nothing was served or migrated


def test_runserver_through_call_command_refuses_too():
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match="manage.py runmocks") as caught:
        call_command("runserver", "127.0.0.1:0")
    assert caught.value.returncode == 2


def test_no_module_exposes_the_bare_django_application():
    """No ``wsgi.py`` and no ASGI attribute hand out Django without the gateway."""
    import importlib.util

    from django.conf import settings

    import mockd_project.asgi as asgi

    assert importlib.util.find_spec("mockd_project.wsgi") is None
    assert getattr(settings, "WSGI_APPLICATION", None) is None
    assert getattr(settings, "ASGI_APPLICATION", None) is None
    assert not hasattr(asgi, "application")
