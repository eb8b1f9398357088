"""A throwaway ``redis-server`` for tests of the Redis state store.

:func:`start_redis` starts Debian's ``redis-server`` on a free loopback port with no
persistence (``--save "" --appendonly no``) in a temporary directory and returns a
:class:`RedisServer` handle: ``url`` (``redis://127.0.0.1:PORT/0``), ``flush()``,
``stop()``, ``kill()`` (SIGKILL, to simulate a lost Redis) and ``restart()`` (same port, so
clients reconnect to the same URL). The start waits for a ``PING`` answer for at most
:data:`START_TIMEOUT_SECONDS`.

When ``redis-server`` is not installed the calling test stops through
:func:`tests.thirdparty.tool_missing`: it FAILS under CI (``CI=true``; ``.ci/run`` installs
the Debian package) and skips with the reason otherwise.

Typical use, one server per module::

    @pytest.fixture(scope="module")
    def redis_server(tmp_path_factory):
        with start_redis(tmp_path_factory.mktemp("redis")) as server:
            yield server
"""
from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from tests.helpers import free_port
from tests.thirdparty import tool_missing

#: Seconds a start (or restart) may take before the test fails.
START_TIMEOUT_SECONDS = 10.0
#: Seconds a stop waits for the process to exit before killing it.
STOP_TIMEOUT_SECONDS = 5.0


def redis_server_path() -> str:
    """The path of ``redis-server``; stops the test (skip, or fail under CI) when missing."""
    path = shutil.which("redis-server")
    if path is None:
        tool_missing("Redis state-store test",
                     "redis-server is not installed (apt-get install redis-server)")
    return path


def _ping(port: int, timeout: float = 0.5) -> bool:
    """Whether a Redis server on loopback ``port`` answers ``PING`` with ``+PONG``."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One ``redis-server`` process on ``127.0.0.1:port``; use as a context manager."""

    def __init__(self, executable: str, directory: Path, port: int | None = None):
        self.executable = executable
        self.directory = Path(directory)
        self.port = port or free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen | None = None
        self._log_path = self.directory / "redis.log"

    def log(self) -> str:
        """The server's log so far (empty when none was written)."""
        try:
            return self._log_path.read_text(errors="replace")
        except OSError:
            return ""

    def start(self) -> "RedisServer":
        """Start the server and wait (bounded) until it answers ``PING``.

        Raises:
            AssertionError: the process exited or did not answer within
                :data:`START_TIMEOUT_SECONDS`; the message carries its log.
        """
        argv = [self.executable, "--port", str(self.port), "--bind", "127.0.0.1",
                "--save", "", "--appendonly", "no", "--dir", str(self.directory),
                "--logfile", str(self._log_path), "--protected-mode", "yes",
                "--daemonize", "no"]
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, cwd=self.directory,
                                     start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            if _ping(self.port):
                return self
            time.sleep(0.02)
        code = self.proc.poll()
        self.stop()
        raise AssertionError(f"redis-server on port {self.port} did not answer PING "
                             f"(exit={code}); log:\n{self.log()}")

    def flush(self) -> None:
        """Remove every key of every database (between tests of one module)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as sock:
            sock.sendall(b"FLUSHALL\r\n")
            answer = sock.recv(64)
        assert answer.startswith(b"+OK"), answer

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after :data:`STOP_TIMEOUT_SECONDS`)."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=STOP_TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=STOP_TIMEOUT_SECONDS)
        self.proc = None

    def kill(self) -> None:
        """Kill the server at once (SIGKILL), as a crashed Redis; the port becomes free."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=STOP_TIMEOUT_SECONDS)
        self.proc = None

    def restart(self) -> None:
        """Start again on the same port (empty: nothing is persisted)."""
        self.stop()
        self.start()

    def __enter__(self) -> "RedisServer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def start_redis(directory: Path) -> RedisServer:
    """Start a ``redis-server`` in ``directory`` on a free loopback port; returns once it
    answers ``PING``. Skips (fails under CI) when ``redis-server`` is missing."""
    return RedisServer(redis_server_path(), directory).start()


def sync_redis_table_store(url: str, loop: Any, namespace: str = "test") -> Any:
    """A :class:`tables.redis_store.RedisTableStore` with the sync interface of the in-memory
    store (``execute``, ``reset``, ``clear``, ``overview``) and ``items(table)``, each call
    run to completion on ``loop`` (an event loop not running): lets the store-level table
    tests run unchanged against Redis."""
    from tables.redis_store import RedisTableStore
    from tables.store import OperationRequest

    class SyncRedisTableStore(RedisTableStore):
        def execute(self, request: Any) -> Any:
            return loop.run_until_complete(self.execute_async(request))

        def reset(self, name: str | None = None, include: Any = None) -> int:
            return loop.run_until_complete(self.reset_async(name, include))

        def clear(self, name: str) -> int:
            return loop.run_until_complete(self.clear_async(name))

        def overview(self, include: Any = None) -> dict[str, Any]:
            return loop.run_until_complete(self.overview_async(include))

        def items(self, table: str) -> dict[str, dict[str, Any]]:
            """Every stored item of ``table`` as ``{id key: item}`` in insertion order."""
            async def read() -> Any:
                await self._ensure(self.tables[table])
                loaded = await self._read(OperationRequest("list", table), {table: "full"})
                return dict(loaded[table].items)
            return loop.run_until_complete(read())

        def close_now(self) -> None:
            loop.run_until_complete(self.close())

    return SyncRedisTableStore(url, namespace)


def items_of(store: Any, table: str) -> dict[str, dict[str, Any]]:
    """The stored items of ``table`` (``{id key: item}``) of either store kind."""
    if getattr(store, "remote", False):
        return store.items(table)
    return store.tables[table].items


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: Any) -> Iterator[RedisServer]:
    """One ``redis-server`` for the test module (flush between tests yourself)."""
    with start_redis(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture(scope="module")
def redis_loop() -> Iterator[Any]:
    """An event loop for :func:`sync_redis_table_store` stores of the module."""
    import asyncio

    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


@pytest.fixture(params=["memory", "redis"])
def new_store(request: Any) -> Iterator[Callable[[], Any]]:
    """A factory of empty table stores, once in memory and once on Redis (an emptied
    module-wide ``redis-server``, one namespace per store made): the table suite runs
    against both implementations."""
    from tables.store import TableStore

    if request.param == "memory":
        yield TableStore
        return
    server = request.getfixturevalue("redis_server")
    loop = request.getfixturevalue("redis_loop")
    server.flush()
    made: list[Any] = []

    def factory() -> Any:  # each store its own namespace: a fresh start, as in memory
        made.append(sync_redis_table_store(server.url, loop, f"test{len(made)}"))
        return made[-1]

    yield factory
    for store in made:
        store.close_now()
