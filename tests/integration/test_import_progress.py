"""``mockd import`` progress as a user sees it: a piped run (CI, ``| tee``) prints one
summary line and no escape codes; a run on a terminal draws a rich progress bar on stderr
and erases it before the summary.

The terminal case runs ``mockd import`` on a pseudo-terminal against a stand-in admin API on
a loopback port that holds its answer to ``POST /config`` until the bar has been seen, so the
import lasts longer than the bar's one-second delay however fast the machine is.
"""
from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.helpers import MOCKD, isolated_env, run_mockd, start_server
from tests.large_openapi import write_openapi

pytestmark = pytest.mark.integration

#: Operations of the large document: enough for an import of well over a second.
OPERATIONS = 3000
ESCAPE = "\x1b"
SUMMARY = re.compile(r"Imported (\d+) mocks from (\S+) \(format: openapi\) in \d+(\.\d)? s; "
                     r"(\d+) mocks in total")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    directory = tmp_path_factory.mktemp("import-progress")
    with start_server(directory) as process:
        process.directory = directory
        yield process


@pytest.fixture(scope="module")
def large_spec(server) -> Path:
    return write_openapi(server.directory / "large.json", OPERATIONS)


def test_import_piped_prints_one_summary_line_and_no_escape_codes(server, large_spec):
    # FORCE_COLOR would make rich treat the pipe as a terminal: still no bar.
    done = run_mockd(["import", large_spec.name, "--as", "piped", "--admin-url", server.admin],
                     server.directory, timeout=120, FORCE_COLOR="1")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout
    match = SUMMARY.fullmatch(lines[0])
    assert match, lines[0]
    assert match.group(1) == str(OPERATIONS) and match.group(2) == large_spec.name
    assert ESCAPE not in done.stdout and ESCAPE not in done.stderr
    assert done.stderr == ""
    with server.admin_client() as admin:
        assert admin.get("/mocks/piped.getItems0").status_code == 200


def test_import_json_piped_stays_machine_readable(server, large_spec):
    done = run_mockd(["import", large_spec.name, "--as", "json", "--json", "--admin-url",
                      server.admin], server.directory, timeout=120)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["imported"] == OPERATIONS and answer["format"] == "openapi"
    assert ESCAPE not in done.stdout + done.stderr


def test_import_dry_run_piped_has_no_escape_codes(server, large_spec):
    done = run_mockd(["import", large_spec.name, "--dry-run"], server.directory, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"Dry run: {OPERATIONS} mocks from {large_spec.name}")
    assert ESCAPE not in done.stdout + done.stderr


class HeldAdmin:
    """A stand-in admin API on a loopback port whose ``POST /config`` answers only once
    :attr:`release` is set (or after ``hold_limit`` seconds)."""

    def __init__(self, hold_limit: float = 30.0):
        self.release = threading.Event()
        self.posted = threading.Event()
        self.hold_limit = hold_limit
        held = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length))
                held.posted.set()
                held.release.wait(held.hold_limit)
                count = len(body["config"]["mocks"])
                payload = json.dumps({"message": "ok", "imported": count,
                                      "total": count}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: object) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        self._thread = threading.Thread(target=self.http.serve_forever, daemon=True)

    def __enter__(self) -> "HeldAdmin":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.http.shutdown()
        self.http.server_close()


def read_until(master: int, output: bytearray, wanted: bytes, deadline: float) -> bool:
    """Read the terminal into ``output`` until ``wanted`` appears, EOF, or ``deadline``."""
    while time.monotonic() < deadline:
        if wanted and wanted in output:
            return True
        ready, _, _ = select.select([master], [], [], 0.1)
        if not ready:
            continue
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            return wanted in output if wanted else True
        if not chunk:
            return wanted in output if wanted else True
        output.extend(chunk)
    return False


def test_import_on_a_terminal_draws_a_progress_bar_then_the_summary(tmp_path):
    spec = write_openapi(tmp_path / "api.json", 40)
    master, slave = pty.openpty()
    env = isolated_env(tmp_path, TERM="xterm-256color", COLUMNS="120", LINES="40")
    for name in ("NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "CI"):
        env.pop(name, None)
    output = bytearray()
    with HeldAdmin() as admin:
        process = subprocess.Popen([MOCKD, "import", spec.name, "--admin-url", admin.url],
                                   stdin=slave, stdout=slave, stderr=slave, cwd=tmp_path,
                                   env=env, start_new_session=True)
        os.close(slave)
        try:
            deadline = time.monotonic() + 60
            saw_bar = read_until(master, output, b"Uploading to the server", deadline)
            admin.release.set()
            read_until(master, output, b"", deadline)
            code = process.wait(timeout=max(1.0, deadline - time.monotonic()))
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)
            os.close(master)
    text = output.decode(errors="replace")
    assert saw_bar, text
    assert code == 0, text
    assert ESCAPE in text  # drawn with terminal control sequences
    assert "━" in text  # the bar itself
    lines = [line for line in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text).replace(
        "\r", "\n").splitlines() if line.strip()]
    # The bar is erased before the summary, which is the last thing printed.
    assert SUMMARY.fullmatch(lines[-1].strip()), lines[-3:]
