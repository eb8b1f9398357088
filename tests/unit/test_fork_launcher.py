"""The tests' fork launcher (tests/fork_launcher.py) runs a ``mockd`` command as an exec'd one
would: same output, exit status, working directory and environment, a fresh import of mockd's
own modules, a session of its own, and the exit status of a signal."""
from __future__ import annotations

import os
import signal
import subprocess

import httpx
import pytest
import yaml

from tests import fork_launcher
from tests.helpers import MOCKD, http_mock, isolated_env, make_config

pytestmark = pytest.mark.skipif(os.environ.get("MOCKD_TESTS_FORK") == "0",
                                reason="MOCKD_TESTS_FORK=0 runs every command by exec")


def _both(args: list[str], tmp_path, **env: str) -> tuple[subprocess.CompletedProcess, ...]:
    environment = isolated_env(tmp_path, **env)
    forked = fork_launcher.run([MOCKD, *args], environment, tmp_path, timeout=60)
    execed = subprocess.run([MOCKD, *args], capture_output=True, text=True, timeout=60,
                            cwd=tmp_path, env=environment, stdin=subprocess.DEVNULL)
    return forked, execed


def test_a_client_command_prints_and_exits_as_when_execed(tmp_path):
    forked, execed = _both(["--version"], tmp_path)
    assert (forked.returncode, forked.stdout, forked.stderr) == \
        (execed.returncode, execed.stdout, execed.stderr)
    assert forked.returncode == 0 and forked.stdout.strip()


def test_an_error_names_the_data_dir_of_the_requested_environment(tmp_path):
    data_dir = tmp_path / "elsewhere"
    forked, execed = _both(["admin", "key"], tmp_path, MOCKD_DATA_DIR=str(data_dir))
    assert (forked.returncode, forked.stdout, forked.stderr) == \
        (execed.returncode, execed.stdout, execed.stderr)
    # The folder under the requested HOME, shown from there.
    assert forked.returncode == 1 and "~/elsewhere/admin-api-key" in forked.stderr


def test_a_server_reads_paths_from_its_folder_leads_its_own_session_and_reports_a_signal(
        tmp_path):
    (tmp_path / "mocks.yaml").write_text(yaml.safe_dump(make_config(
        http_mock("hello", "GET", "/hello", body="from the folder"))))
    process = fork_launcher.launch(
        [MOCKD, "engine", "-c", "mocks.yaml", "--port", "0", "--print-url"],
        isolated_env(tmp_path), tmp_path, subprocess.PIPE, subprocess.DEVNULL)
    try:
        line = process.stdout.readline().decode().strip()
        assert line.startswith("http://127.0.0.1:")
        assert httpx.get(line + "/hello", trust_env=False).text == "from the folder"
        assert os.getpgid(process.pid) == process.pid  # a session (and group) of its own
        assert process.poll() is None
        process.send_signal(signal.SIGKILL)
        assert process.wait(10) == -signal.SIGKILL
    finally:
        if process.poll() is None:
            process.kill()
