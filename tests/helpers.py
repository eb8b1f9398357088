"""Shared test builders: requests, mocks, configs, and real mockd processes on loopback.

Integration tests start ``mockd engine`` / ``mockd start`` as subprocesses on free loopback
ports and talk to them with httpx (never any other address). Every wait is bounded in time.
"""
from __future__ import annotations

import json
import os
import queue
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import yaml

from mocks.config import ConfigFile
from mocks.engine.core import Engine
from mocks.loader import validate_config
from mocks.core.request import MockRequest
from tests import fork_launcher
from tests.client_tls import CLIENT_TLS

MOCKD = str(Path(sys.executable).parent / "mockd")
#: ``mockd`` commands that :class:`MockdProcess` forks from the worker's launcher
#: (:mod:`tests.fork_launcher`) instead of exec'ing: the long-running servers.
SERVER_COMMANDS = ("start", "serve", "engine")
STARTUP_TIMEOUT = 30.0


def make_request(method: str = "GET", path: str = "/", query: str = "",
                 headers: dict[str, str] | None = None, body: bytes | str = b"") -> MockRequest:
    """A :class:`MockRequest` as the data plane would build it."""
    raw = body.encode() if isinstance(body, str) else body
    return MockRequest(method, path, query, header_pairs=list((headers or {}).items()), body=raw)


def http_mock(mock_id: str, method: str | None = "GET", path: str | None = None, *,
              body: Any = None, status: int = 200, headers: dict | None = None,
              matcher: dict | None = None, response: dict | None = None,
              **http_extra: Any) -> dict[str, Any]:
    """One ``type: http`` mock definition as a dict (the config-file shape)."""
    match: dict[str, Any] = {}
    if method:
        match["method"] = method
    if path is not None:
        match["path"] = path
    match.update(matcher or {})
    answer: dict[str, Any] = {"statusCode": status}
    if headers:
        answer["headers"] = headers
    if body is not None:
        answer["body"] = body
    answer.update(response or {})
    return {"id": mock_id, "type": "http", "http": {"matcher": match, "response": answer,
                                                     **http_extra}}


def make_config(*mocks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A config-file dict with ``version: "1.0"`` and the given mocks."""
    return {"version": "1.0", "mocks": list(mocks), **extra}


def engine_with(*mocks: dict[str, Any], base_dir: Path | str = ".") -> Engine:
    """An in-process :class:`Engine` loaded with ``mocks``."""
    engine = Engine()
    engine.load(validate_config(make_config(*mocks)), base_dir=base_dir)
    return engine


async def asgi_upgrade(app: Any, path: str,
                       headers: list[tuple[bytes, bytes]] | None = None) -> list[dict[str, Any]]:
    """Drive one WebSocket upgrade at ``path`` through the ASGI ``app`` (connect, then
    disconnect) and return the messages it sent: ``websocket.accept`` or ``websocket.close``
    first."""
    sent: list[dict[str, Any]] = []
    inbox = [{"type": "websocket.connect"}]

    async def receive() -> dict[str, Any]:
        return inbox.pop(0) if inbox else {"type": "websocket.disconnect", "code": 1000}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app({"type": "websocket", "path": path, "headers": headers or []}, receive, send)
    return sent


#: Ports :func:`free_port` hands out: below Linux's default ephemeral range (32768-60999), so
#: a port the kernel gives a ``--port 0`` listener or an outgoing connection never lands on
#: one a test has picked but not bound yet.
PORT_RANGE = range(20000, 32000)


def _worker_ports() -> range:
    """This process's share of :data:`PORT_RANGE`: one slice per pytest-xdist worker
    (``$PYTEST_XDIST_WORKER`` ``gw<n>`` of ``$PYTEST_XDIST_WORKER_COUNT``), so two workers
    never pick the same port; the whole range without xdist."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    if not worker.startswith("gw") or count <= 1:
        return PORT_RANGE
    size = len(PORT_RANGE) // count
    start = PORT_RANGE.start + (int(worker[2:]) % count) * size
    return range(start, start + size)


_ports = _worker_ports()
# A random starting point, so two test runs side by side (two checkouts) rarely walk the same
# ports at the same moment; the probe bind below skips any port that is taken.
_next_port = [random.randrange(len(_ports))]
_port_lock = threading.Lock()


def free_port() -> int:
    """A loopback TCP port that is free now and that no other test of this run was given.

    Ports come in turn from this worker's slice of :data:`PORT_RANGE` (never one handed out
    a moment ago, unlike the kernel's bind-to-0), each checked by a bind without
    ``SO_REUSEADDR`` (so a port left in TIME_WAIT is skipped too)."""
    with _port_lock:
        for _ in range(len(_ports)):
            port = _ports[_next_port[0] % len(_ports)]
            _next_port[0] += 1
            with socket.socket() as sock:
                try:
                    sock.bind(("127.0.0.1", port))
                except OSError:
                    continue
            return port
    raise RuntimeError(f"no free loopback port in {_ports}")


def write_config(path: Path, config: Any) -> Path:
    if isinstance(config, str):
        path.write_text(config)
    elif path.suffix == ".json":
        path.write_text(json.dumps(config))
    else:
        path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


#: The schema-template folder shared by the servers of one test run (per user).
SCHEMA_CACHE = os.path.join(tempfile.gettempdir(), f"mockd-test-schema-{os.getuid()}")


def isolated_env(home: Path, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("XDG_", "MOCKD_"))}
    env["HOME"] = str(home)
    # One admin-schema template for every server the tests start (each test has its own
    # HOME, so the default cache folder would be per test).
    env["MOCKD_SCHEMA_CACHE"] = SCHEMA_CACHE
    # The first start's Django-admin superuser gets an MD5 password hash instead of PBKDF2's
    # half second of CPU (mockd_project.daemon.use_cheap_password_hasher_in_tests).
    env["MOCKD_TESTS_CHEAP_PASSWORD_HASH"] = "insecure-md5-for-tests"
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost,::1"
    env.update(extra)
    return env


class MockdProcess:
    """A running ``mockd`` subprocess; use as a context manager (always stopped)."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path, log_path: Path):
        self.argv = argv
        self.log_path = log_path
        self._log = open(log_path, "wb")
        if argv[0] == MOCKD and len(argv) > 1 and argv[1] in SERVER_COMMANDS:
            self.proc = fork_launcher.launch(argv, env, cwd, subprocess.PIPE, self._log)
        else:
            self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self._log,
                                         stdin=subprocess.DEVNULL, cwd=cwd, env=env,
                                         start_new_session=True)
        self.base = ""
        self.admin = ""

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")

    def wait_url_line(self, timeout: float = STARTUP_TIMEOUT) -> str:
        lines: queue.Queue[str | None] = queue.Queue()

        def reader() -> None:
            for raw in iter(self.proc.stdout.readline, b""):
                lines.put(raw.decode(errors="replace"))
            lines.put(None)

        threading.Thread(target=reader, daemon=True).start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=0.2)
            except queue.Empty:
                if self.proc.poll() is not None:
                    break
                continue
            if line is None:
                break
            if line.startswith("http"):
                return line.strip()
        raise AssertionError(f"no URL printed; exit={self.proc.poll()} log:\n{self.log()}")

    def wait_healthy(self, url: str, timeout: float = STARTUP_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        with httpx.Client(timeout=1.0, trust_env=False,
                          verify=CLIENT_TLS) as client:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise AssertionError(f"exited {self.proc.returncode}; log:\n{self.log()}")
                try:
                    if client.get(url).status_code == 200:
                        return
                except httpx.HTTPError:
                    pass
                time.sleep(0.05)
        raise AssertionError(f"{url} never answered 200; log:\n{self.log()}")

    def client(self, **kwargs: Any) -> httpx.Client:
        kwargs.setdefault("timeout", 10.0)
        kwargs.setdefault("verify", CLIENT_TLS)
        return httpx.Client(base_url=self.base, trust_env=False, **kwargs)

    def admin_client(self, **kwargs: Any) -> httpx.Client:
        kwargs.setdefault("timeout", 10.0)
        kwargs.setdefault("verify", CLIENT_TLS)
        return httpx.Client(base_url=self.admin, trust_env=False, **kwargs)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 10.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self._log.close()
        return self.proc.returncode

    def __enter__(self) -> "MockdProcess":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def start_engine(tmp_path: Path, config: Any, *, extra_args: list[str] = (),
                 config_name: str = "mocks.yaml",
                 extra_env: dict[str, str] | None = None) -> MockdProcess:
    """``mockd engine -c FILE --port 0 --print-url``; returns once ``/health`` answers."""
    config_path = write_config(tmp_path / config_name, config)
    process = MockdProcess([MOCKD, "engine", "-c", str(config_path), "--port", "0",
                            "--print-url", *extra_args],
                           isolated_env(tmp_path, **(extra_env or {})), tmp_path,
                           tmp_path / "engine.log")
    try:
        process.base = process.wait_url_line()
        process.wait_healthy(process.base + "/health")
    except BaseException:
        process.stop()
        raise
    return process


def start_server(tmp_path: Path, config: Any = None, *, extra_args: list[str] = (),
                 no_auth: bool = True, data_dir: Path | None = None,
                 command: str = "start") -> MockdProcess:
    """``mockd start`` on free loopback ports; returns once both ``/health`` answer."""
    port, admin_port, engine_port = free_port(), free_port(), free_port()
    argv = [MOCKD, command, "--port", str(port), "--admin-port", str(admin_port),
            "--engine-port", str(engine_port),
            "--data-dir", str(data_dir or tmp_path / "data")]
    if config is not None:
        argv += ["-c", str(write_config(tmp_path / "mocks.yaml", config))]
    if no_auth:
        argv.append("--no-auth")
    process = MockdProcess(argv + list(extra_args), isolated_env(tmp_path), tmp_path,
                           tmp_path / "server.log")
    process.base = f"http://127.0.0.1:{port}"
    process.admin = f"http://127.0.0.1:{admin_port}"
    try:
        process.wait_healthy(process.admin + "/health")
        process.wait_healthy(process.base + "/health")
    except BaseException:
        process.stop()
        raise
    return process


def run_mockd(args: list[str], tmp_path: Path, timeout: float = 60,
              **env: str) -> subprocess.CompletedProcess:
    """Run one ``mockd`` command to completion and capture its output (forked from the
    worker's launcher, :func:`tests.fork_launcher.run`)."""
    return fork_launcher.run([MOCKD, *args], isolated_env(tmp_path, **env), tmp_path, timeout)
