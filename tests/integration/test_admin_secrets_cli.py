"""The admin secrets of a background server: ``mockd start -d`` says where they are, never
what they are; ``mockd admin key`` and ``mockd admin password [--reset]`` print them on demand.

Each test starts its own server (one for a running server's secrets, one for a reset made
before the first start) on free loopback ports with an isolated HOME and stops it with
``mockd stop``; every wait is bounded.
"""
from __future__ import annotations

import re
import time
from pathlib import Path

import httpx
import pytest

from tests.helpers import free_port, http_mock, make_config, run_mockd, write_config

pytestmark = pytest.mark.integration

HELLO = make_config(http_mock("hello", "GET", "/hello", body="hi"))


def _wait_for_file(path: Path, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        time.sleep(0.1)
    raise AssertionError(f"{path} was not written within {timeout} s")


def _django_admin_login(admin_url: str, user: str, password: str) -> bool:
    """Log in to the Django admin with a form post; True when it lets us in."""
    with httpx.Client(base_url=admin_url, trust_env=False, timeout=10) as client:
        form = client.get("/admin/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text).group(1)
        answer = client.post("/admin/login/?next=/admin/", data={
            "csrfmiddlewaretoken": token, "username": user, "password": password,
            "next": "/admin/"})
        return answer.status_code == 302 and answer.headers["location"] == "/admin/"


def _start_detached(tmp_path: Path, data_dir: Path) -> tuple[str, int]:
    admin_port = free_port()
    config = write_config(tmp_path / "mocks.yaml", HELLO)
    started = run_mockd(["start", "-d", "-c", str(config), "--data-dir", str(data_dir),
                         "--port", str(free_port()), "--admin-port", str(admin_port)], tmp_path)
    assert started.returncode == 0, started.stdout + started.stderr
    return started.stdout, admin_port


def test_start_detached_names_the_secret_files_and_admin_key_and_password_print_them(tmp_path):
    """One background server: the start output names where the key and the Django admin
    password are; ``mockd admin key`` prints the key the admin API takes; ``mockd admin
    password`` prints the login and ``--reset`` changes it on the running server; neither
    secret reaches the output or the daemon log; once stopped, ``--data-dir`` still leads to
    the key."""
    data_dir = tmp_path / "data"
    try:
        output, admin_port = _start_detached(tmp_path, data_dir)
        admin_url = f"http://127.0.0.1:{admin_port}"
        key = (data_dir / "admin-api-key").read_text().strip()
        printed = run_mockd(["admin", "key"], tmp_path)
        with httpx.Client(trust_env=False, timeout=10) as client:
            listed = client.get(f"{admin_url}/mocks",
                                headers={"X-API-Key": printed.stdout.strip()})
        first = _wait_for_file(data_dir / "django-admin-password")
        shown = run_mockd(["admin", "password"], tmp_path)
        reset = run_mockd(["admin", "password", "--reset"], tmp_path)
        assert reset.returncode == 0, reset.stderr
        new = re.search(r"^Password: (\S+)$", reset.stdout, re.M).group(1)
        old_works = _django_admin_login(admin_url, "admin", first)
        new_works = _django_admin_login(admin_url, "admin", new)
    finally:
        stopped = run_mockd(["stop"], tmp_path)
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert key not in output and "mk_" not in output
    assert (f"Admin API key: stored in {data_dir / 'admin-api-key'} (print it with "
            f"'mockd admin key')") in output.splitlines()
    assert (f"Django admin:  http://localhost:{admin_port}/admin/ (user and password: "
            f"'mockd admin password')") in output.splitlines()
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout == key + "\n"
    assert listed.status_code == 200
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines()[:2] == ["User:     admin", f"Password: {first}"]
    assert reset.stdout.splitlines()[0] == "User:     admin"
    assert new != first and not old_works and new_works
    stored = data_dir / "django-admin-password"
    assert stored.read_text().strip() == new and (stored.stat().st_mode & 0o777) == 0o600
    log = (tmp_path / ".mockd" / "daemon.log").read_text()
    assert key not in log and first not in log and new not in log
    # With the server stopped, the data directory still leads to its key.
    by_dir = run_mockd(["admin", "key", "--data-dir", str(data_dir)], tmp_path)
    assert by_dir.returncode == 0 and by_dir.stdout == key + "\n"
    nowhere = run_mockd(["admin", "key"], tmp_path)
    assert nowhere.returncode == 1
    assert nowhere.stderr.startswith(
        "Error: no admin API key in ~/.local/share/mockd/admin-api-key")


def test_admin_password_reset_of_a_stopped_server_is_used_on_its_next_start(tmp_path):
    data_dir = tmp_path / "data"
    missing = run_mockd(["admin", "password", "--data-dir", str(data_dir)], tmp_path)
    assert missing.returncode == 1 and "mockd admin password --reset" in missing.stderr
    reset = run_mockd(["admin", "password", "--reset", "--data-dir", str(data_dir)], tmp_path)
    assert reset.returncode == 0, reset.stderr
    password = re.search(r"^Password: (\S+)$", reset.stdout, re.M).group(1)
    try:
        _, admin_port = _start_detached(tmp_path, data_dir)
        logged_in = _django_admin_login(f"http://127.0.0.1:{admin_port}", "admin", password)
    finally:
        stopped = run_mockd(["stop"], tmp_path)
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    assert logged_in
    assert (data_dir / "django-admin-password").read_text().strip() == password
