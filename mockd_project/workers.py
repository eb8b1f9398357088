"""Workers on one machine (``--workers N``) and the wiring of split mode in the runner.

``mockd start|engine --workers N`` runs N engine processes on one data-plane port: this
process serves it as worker 0 and starts N-1 ``mockd engine`` children. Each binds the port
with ``SO_REUSEPORT`` where the system has it (the kernel spreads connections over the
listeners); elsewhere the children inherit this process's listening socket
(``MOCKD_WORKER_DATA_FD``). Each worker has its own event loop and engine-control port
(loopback, the same engine token). In ``mockd start`` the admin registers the children as
remote engines of its :class:`~mocks.control.engines.EngineSet`, pushes them the config
before the admin port answers, and merges their request logs, verification counts and
metrics; in ``mockd engine`` every child loads the same config file.

Children die with this process: each asks the kernel for SIGTERM when its parent dies
(``PR_SET_PDEATHSIG`` on Linux), and this process stops them (SIGTERM, then SIGKILL after
:data:`STOP_TIMEOUT` seconds) when it stops. A child that dies while serving (killed, or a
non-zero exit) is started again on the same engine-control port after a back-off
(:class:`RestartPolicy`: 0.5 s doubling to 10 s; after 5 deaths within a minute it stays
down and ``GET /engines`` says why); in ``mockd start`` the admin pushes it the current
config as soon as it answers, in ``mockd engine`` it loads the same config file.

State that lives in one engine's memory (tables, ``sequence()`` counters, identity-provider
tokens, custom operations) would differ between workers, so N > 1 is refused with such a
config unless a shared state store is given (:func:`refusal`).

Source: ARCHITECTURE "Processes and ports", "Scale"; behavior notes §15, §16; issue 32
items 1 and 3.
"""
from __future__ import annotations

import asyncio
import logging
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import orjson

#: Most workers one process starts.
MAX_WORKERS = 64
#: Seconds a child may take to answer its engine-control ``/health``.
CHILD_START_TIMEOUT = 30.0
#: Seconds children get to stop after SIGTERM before SIGKILL.
STOP_TIMEOUT = 5.0
#: Environment of a child: its worker number, an inherited data socket.
WORKER_INDEX_ENV = "MOCKD_WORKER_INDEX"
WORKER_FD_ENV = "MOCKD_WORKER_DATA_FD"
#: Linux ``prctl`` option asking for a signal when the parent dies.
_PR_SET_PDEATHSIG = 1
#: Restart back-off of a dead worker: first delay and longest delay, seconds.
RESTART_DELAY = 0.5
RESTART_DELAY_MAX = 10.0
#: A worker that dies this many times within :data:`RESTART_WINDOW` seconds stays down.
RESTART_LIMIT = 5
RESTART_WINDOW = 60.0
#: Seconds between two looks of the supervisor at its children.
WATCH_INTERVAL = 0.1

logger = logging.getLogger("mockd.workers")


def _child_failure(message: str) -> Exception:
    """The runner's ``StartupFailure`` (exit 1) for a worker that cannot start."""
    from mockd_project.runner import EXIT_LISTEN_ERROR, StartupFailure

    return StartupFailure(EXIT_LISTEN_ERROR, message)


def parse_workers(value: str | int | None) -> int:
    """``--workers``: a whole number from 1 to :data:`MAX_WORKERS`, or ``auto``
    (``os.cpu_count()``). Raises ValueError with the reason."""
    if value is None:
        return 1
    if isinstance(value, str) and value.strip().lower() == "auto":
        return max(1, min(os.cpu_count() or 1, MAX_WORKERS))
    try:
        count = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"use a whole number or auto, got {value!r}") from None
    if not 1 <= count <= MAX_WORKERS:
        raise ValueError(f"use 1 to {MAX_WORKERS} or auto, got {count}")
    return count


def worker_index() -> int | None:
    """This process's worker number when it is a child of ``--workers``, else None."""
    raw = os.environ.get(WORKER_INDEX_ENV, "")
    return int(raw) if raw.isdigit() else None


# ---------------------------------------------------------------------------- refusal


def stateful_features(config: Any) -> list[str]:
    """What in ``config`` keeps state in one engine's memory: ``tables``, ``custom
    operations``, ``identity-provider mocks``, ``sequence() templates`` (empty: stateless)."""
    if config is None:
        return []
    found = []
    if getattr(config, "tables", None) or getattr(config, "stateful_resources", None):
        found.append("tables")
    if getattr(config, "custom_operations", None):
        found.append("custom operations")
    mocks = getattr(config, "mocks", None) or []
    if any(mock.type == "oauth" for mock in mocks):
        found.append("identity-provider mocks")
    if any(b"sequence(" in orjson.dumps(mock.model_dump(mode="json", exclude_none=True))
           for mock in mocks):
        found.append("sequence() templates")
    return found


def shared_store_of(options: Any, config: Any) -> str | None:
    """The shared state store given (``--state-store`` or ``serverConfig.stateStore``), or
    None for the in-memory one."""
    given = getattr(options, "state_store", None) or (getattr(options, "extra", None)
                                                      or {}).get("state_store")
    if not given:
        given = getattr(getattr(config, "server_config", None), "state_store", None)
    if given and str(given).startswith(("redis://", "rediss://", "unix://")):
        return str(given)
    return None


def refusal(workers: int, config: Any, store: str | None) -> str | None:
    """The one-line reason ``workers`` engines cannot serve ``config`` without a shared state
    store, naming the fix, or None."""
    if workers <= 1 or store:
        return None
    features = stateful_features(config)
    if not features:
        return None
    return (f"--workers {workers} needs a shared state store for {', '.join(features)} "
            f"(each worker would keep its own copy): add --state-store redis://host:6379/0 "
            f"or serverConfig.stateStore, or run one worker")


# ---------------------------------------------------------------------------- sockets


def bind_data_socket(host: str, port: int) -> socket.socket:
    """The data-plane listening socket of a worker: the inherited one
    (``MOCKD_WORKER_DATA_FD``), else :func:`_reuse_port_socket`. Raises OSError when it
    cannot bind."""
    inherited = os.environ.get(WORKER_FD_ENV, "")
    if inherited.isdigit():
        sock = socket.socket(fileno=int(inherited))
        sock.setblocking(False)
        return sock
    return _reuse_port_socket(host, port)


def _reuse_port_socket(host: str, port: int) -> socket.socket:
    """A listening socket with ``SO_REUSEPORT`` where the system has it (and
    ``SO_REUSEADDR``). Raises OSError when it cannot bind."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if hasattr(socket, "SO_REUSEPORT"):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


def _free_loopback_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# ---------------------------------------------------------------------------- children


def _death_signal_setter() -> Any:
    """``prctl`` of the C library on Linux (looked up in the parent, before any fork), or
    None elsewhere."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def _die_with_parent(parent: int, prctl: Any) -> None:
    """``preexec_fn`` of a child: SIGTERM when the parent dies (Linux ``PR_SET_PDEATHSIG``),
    and exit now if it already has."""
    if prctl is not None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


@dataclass
class RestartPolicy:
    """When to start a dead worker again: after :data:`RESTART_DELAY` seconds, doubling
    with each death in a row up to :data:`RESTART_DELAY_MAX` (a worker that served
    :data:`RESTART_WINDOW` seconds before dying starts the row again); never once it died
    :data:`RESTART_LIMIT` times within :data:`RESTART_WINDOW` seconds."""

    deaths: deque = field(default_factory=lambda: deque(maxlen=RESTART_LIMIT))
    streak: int = 0

    def delay(self, now: float, started_at: float) -> float | None:
        """Record a death at ``now`` of a worker started at ``started_at`` (monotonic
        seconds); the seconds to wait before the restart, or None: stay down."""
        if now - started_at >= RESTART_WINDOW:
            self.streak = 0
        self.streak += 1
        self.deaths.append(now)
        if len(self.deaths) == RESTART_LIMIT and now - self.deaths[0] < RESTART_WINDOW:
            return None
        return min(RESTART_DELAY * 2 ** (self.streak - 1), RESTART_DELAY_MAX)


@dataclass
class Child:
    """One worker process: its number, process and engine-control URL.

    Attributes:
        restarts: how many times it was started again after dying.
        policy: its restart back-off.
        gave_up: why it stays down (too many deaths, or it exited with 0), else None.
        started_at: when its process started (monotonic seconds).
    """

    index: int
    process: subprocess.Popen
    control_url: str
    restarts: int = 0
    policy: RestartPolicy = field(default_factory=RestartPolicy)
    gave_up: str | None = None
    started_at: float = field(default_factory=time.monotonic)


@dataclass
class Supervisor:
    """The children of one ``--workers N`` run.

    Attributes:
        children: the running children, worker 1 first.
        token: the engine token they share (never logged).
        engines: the admin's :class:`~mocks.control.engines.EngineSet` in ``mockd start``
            (a restarted child is pushed the current config), else None.
    """

    token: str = field(repr=False)
    children: list[Child] = field(default_factory=list)
    engines: Any = None
    _launch: Any = field(default=None, repr=False)
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _watcher: threading.Thread | None = field(default=None, repr=False)

    def start(self, count: int, argv: list[str], data_socket: socket.socket,
              env: dict[str, str] | None = None) -> None:
        """Start workers 1..count-1: ``mockd engine`` with ``argv`` (its options) plus the
        data port, an engine-control port of their own and the shared token; returns at
        once (:meth:`wait_ready` waits for them)."""
        host, port = data_socket.getsockname()[:2]
        parent = os.getpid()
        prctl = _death_signal_setter()
        pass_fds: tuple[int, ...] = ()
        base_env = {**os.environ, **(env or {}), "MOCKD_ENGINE_TOKEN": self.token}
        base_env.pop(WORKER_FD_ENV, None)
        if not hasattr(socket, "SO_REUSEPORT"):
            pass_fds = (data_socket.fileno(),)
            base_env[WORKER_FD_ENV] = str(data_socket.fileno())

        def launch(index: int, control_port: int) -> subprocess.Popen:
            command = [sys.executable, "-c", "from mockd_project.cli import main; main()",
                       "engine", "--host", host, "--port", str(port),
                       "--engine-port", str(control_port), *argv]
            return subprocess.Popen(
                command, env={**base_env, WORKER_INDEX_ENV: str(index)},
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, pass_fds=pass_fds,
                preexec_fn=lambda: _die_with_parent(parent, prctl))

        self._launch = launch
        for index in range(1, count):
            control_port = _free_loopback_port()
            self.children.append(Child(index, launch(index, control_port),
                                       f"http://127.0.0.1:{control_port}"))

    def watch(self) -> None:
        """Start the thread that restarts dead children (:meth:`_watch`); :meth:`stop`
        ends it. It is also the thread that starts the restarted children, so it lives as
        long as they may (their death signal follows the thread that started them)."""
        if self._watcher is None and self.children:
            self._watcher = threading.Thread(target=self._watch, name="mockd-workers",
                                             daemon=True)
            self._watcher.start()

    def _watch(self) -> None:
        """Every :data:`WATCH_INTERVAL` seconds: a child that exited with a non-zero status
        or a signal is marked unhealthy and started again after its back-off (one exiting
        with 0 was stopped on purpose and stays down); a restarted child that answers
        ``/health`` is pushed the current config (``mockd start``)."""
        due: dict[int, float] = {}
        while not self._stop.wait(WATCH_INTERVAL):
            for child in self.children:
                try:
                    self._look_after(child, due)
                except Exception:  # noqa: BLE001 - the watcher must outlive one bad look
                    logger.exception("cannot restart worker %d", child.index)

    def _look_after(self, child: Child, due: dict[int, float]) -> None:
        if child.gave_up or child.process.poll() is None and child.index not in due:
            return
        now = time.monotonic()
        if child.index not in due:
            status = child.process.returncode
            if status == 0:
                child.gave_up = f"worker {child.index} stopped (exit status 0); not restarted"
            else:
                delay = child.policy.delay(now, child.started_at)
                if delay is None:
                    child.gave_up = (f"worker {child.index} died {RESTART_LIMIT} times within "
                                     f"{RESTART_WINDOW:.0f} s (last exit status {status}); "
                                     "not restarted again")
                else:
                    due[child.index] = now + delay
                    self._mark(child, f"worker {child.index} exited with status {status}; "
                                      f"restarting in {delay:g} s")
            if child.gave_up:  # exit status 0: stopped on purpose (Ctrl-C reaches it too)
                logger.log(logging.INFO if status == 0 else logging.ERROR, "%s", child.gave_up)
                self._mark(child, child.gave_up, gave_up=True)
            return
        if now < due[child.index] or self._stop.is_set():
            return
        del due[child.index]
        port = int(child.control_url.rsplit(":", 1)[1])
        child.process = self._launch(child.index, port)
        child.started_at = time.monotonic()
        child.restarts += 1
        # Counted on the row at once: the admin's health check may find the new process and
        # mark the row healthy before this thread's rejoin below.
        record = self.engines.records.get(f"worker-{child.index}") if self.engines else None
        if record is not None:
            record.restarts = child.restarts
        try:
            self._wait_ready([child], CHILD_START_TIMEOUT)
        except Exception as error:  # noqa: BLE001 - counted as one more death
            logger.warning("restarted %s", getattr(error, "message", error))
            if child.process.poll() is None:
                child.process.kill()
                child.process.wait(5)
            return
        logger.warning("worker %d restarted (%d restart(s) so far)", child.index,
                       child.restarts)
        if self.engines is not None:
            asyncio.run(_rejoin(self.engines, child, self.token))

    def _mark(self, child: Child, reason: str, gave_up: bool = False) -> None:
        """Show ``reason`` on the child's ``GET /engines`` row (``mockd start``)."""
        record = self.engines.records.get(f"worker-{child.index}") if self.engines else None
        if record is not None:
            record.restarts = child.restarts
            record.gave_up = reason if gave_up else None
            record.fail(RuntimeError(reason))

    def wait_ready(self, timeout: float = CHILD_START_TIMEOUT) -> None:
        """Wait until every child's engine-control ``/health`` answers 200. Raises
        ``StartupFailure`` (exit 1) when a child exits or the time runs out."""
        self._wait_ready(list(self.children), timeout)

    def _wait_ready(self, pending: list[Child], timeout: float) -> None:
        import httpx

        deadline = time.monotonic() + timeout
        with httpx.Client(trust_env=False, timeout=1.0,
                          headers={"X-Engine-Token": self.token}) as client:
            while pending:
                child = pending[0]
                if child.process.poll() is not None:
                    raise _child_failure(f"worker {child.index} exited with status "
                                         f"{child.process.returncode} while starting")
                try:
                    if client.get(child.control_url + "/health").status_code == 200:
                        pending.pop(0)
                        continue
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline or self._stop.is_set():
                    raise _child_failure(f"worker {child.index} did not answer on "
                                         f"{child.control_url} within {timeout:.0f} s")
                time.sleep(0.05)

    def stop(self) -> None:
        """End the restarts, SIGTERM every child, then SIGKILL those still running after
        :data:`STOP_TIMEOUT` seconds."""
        self._stop.set()
        if self._watcher is not None and self._watcher is not threading.current_thread():
            self._watcher.join(CHILD_START_TIMEOUT + STOP_TIMEOUT)
        for child in self.children:
            if child.process.poll() is None:
                child.process.terminate()
        deadline = time.monotonic() + STOP_TIMEOUT
        for child in self.children:
            try:
                child.process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.process.kill()
                child.process.wait(5)


def child_options(options: Any, config: Any = None) -> list[str]:
    """The ``mockd engine`` options a child repeats from the parent's run options (the
    shared state store also from ``config``'s ``serverConfig.stateStore``)."""
    argv = ["--log-level", options.log_level]
    if not options.full and options.config:
        argv += ["-c", options.config]
    if options.data_dir:
        argv += ["--data-dir", options.data_dir]
    for name in options.allowed_hosts:
        argv += ["--allowed-host", name]
    if options.cors_origins:
        argv += ["--cors-origins", ",".join(options.cors_origins)]
    if options.allow_body_files_anywhere:
        argv.append("--allow-body-files-anywhere")
    for name in options.allow_env:
        argv += ["--allow-env", name]
    if options.allow_remote_imports:
        argv.append("--allow-remote-imports")
    chaos = options.chaos  # the --chaos-* flags (serverConfig.chaos comes with a -c file)
    if chaos is not None:
        if chaos.enabled:
            argv.append("--chaos-enabled")
        if chaos.latency is not None:
            argv += ["--chaos-latency", f"{chaos.latency[0]}ms-{chaos.latency[1]}ms"]
        if chaos.error_rate is not None:
            argv += ["--chaos-error-rate", str(chaos.error_rate)]
        if chaos.profile is not None:
            argv += ["--chaos-profile", chaos.profile]
    store = shared_store_of(options, config)
    if store:
        argv += ["--state-store", store]
    namespace = getattr(options, "state_namespace", None)
    if namespace:
        argv += ["--state-namespace", namespace]
    return argv


def register_workers(supervisor: Supervisor, fanout: Any) -> None:
    """Register the ready children with the admin's
    :class:`~mocks.control.engines.FanOutControl` as ``worker-<n>`` and push them the
    current config (version 1 or later). Raises ``StartupFailure`` (exit 1) when one refuses
    it."""
    engines = fanout.engines
    for child in supervisor.children:
        engines.add(child.control_url, supervisor.token, worker=child.index)
    asyncio.run(_first_push(fanout))
    late = [record.id for record in engines.records.values() if not record.healthy]
    if late:
        raise _child_failure(f"worker(s) {', '.join(late)} refused the config: "
                             f"{engines.records[late[0]].last_error}")
    supervisor.engines = engines


async def _rejoin(engines: Any, child: Child, token: str) -> None:
    """Push the current config to a restarted child through a client of this loop (the
    admin's own client of that engine belongs to the admin's loop), again while the admin's
    version moves on meanwhile (at most three pushes)."""
    from mocks.engine.remote import RemoteEngine

    record = engines.records.get(f"worker-{child.index}")
    if record is None:
        return
    remote = RemoteEngine(child.control_url, token)
    try:
        for _ in range(3):
            version = engines.version
            await engines.push(record, remote)
            if not record.healthy or engines.version == version:
                break
    finally:
        await remote.close()
    record.restarts = child.restarts


async def _first_push(fanout: Any) -> None:
    engines = fanout.engines
    engines.set_config(await fanout.current_config())
    records = list(engines.records.values())
    await asyncio.gather(*(engines.push(record) for record in records))  # not yet healthy
    for record in records:
        await record.remote.close()


# ---------------------------------------------------------------------------- runner hooks


def data_socket(options: Any, bind_socket: Any) -> socket.socket | None:
    """The data-plane socket of a run: None with ``--engines-only``, else
    :func:`listening_socket` for the mock-server port."""
    if options.full and options.engines_only:
        return None
    return listening_socket(options, bind_socket, options.port, "mock server")


def listening_socket(options: Any, bind_socket: Any, port: int, what: str,
                     inherit: bool = True) -> socket.socket:
    """A mock-server socket (plain or HTTPS): shared by the workers
    (:func:`bind_data_socket`; ``inherit``: the parent's may be inherited) with
    ``--workers`` > 1 or in a child, else ``bind_socket(host, port, what)``. Raises
    ``StartupFailure`` (exit 1) when it cannot bind."""
    if options.workers <= 1 and worker_index() is None:
        return bind_socket(options.host, port, what)
    from mockd_project.runner import EXIT_LISTEN_ERROR, StartupFailure

    try:
        return (bind_data_socket(options.host, port) if inherit
                else _reuse_port_socket(options.host, port))
    except OSError as error:
        raise StartupFailure(EXIT_LISTEN_ERROR,
                             f"cannot listen on {options.host}:{port} for the {what}: "
                             f"{error.strerror or error}") from None


def admin_control(options: Any, local: Any) -> Any:
    """The ``runtime.control`` of a full-mode admin: a
    :class:`~mocks.control.engines.FanOutControl` over ``local`` (None with
    ``--engines-only``) and the remote engines (registered off loopback only with a
    non-loopback ``--host`` or ``--allow-remote-engines``); with ``--workers`` > 1 and no
    shared state store it refuses a config that keeps state in memory (:func:`refusal`)."""
    from mocks.control.engines import EngineSet, FanOutControl, is_loopback

    def guard(config: Any) -> str | None:
        return refusal(options.workers, config, shared_store_of(options, config))

    remote = bool(getattr(options, "allow_remote_engines", False)) or not is_loopback(
        options.host)
    return FanOutControl(None if options.engines_only else local, EngineSet(remote),
                         guard if options.workers > 1 else None)


def _refuse(options: Any, config: Any) -> None:
    """Raise ``StartupFailure`` (exit 2) when :func:`refusal` refuses ``config``."""
    from mockd_project.runner import EXIT_CONFIG_ERROR, StartupFailure

    refused = refusal(options.workers, config, shared_store_of(options, config))
    if refused:
        raise StartupFailure(EXIT_CONFIG_ERROR, refused)


def spawn(options: Any, data_sock: socket.socket | None, token: Any,
          config: Any) -> Supervisor | None:
    """Start the N-1 children of ``--workers N`` (None with one worker or no data port),
    without waiting: they start while the admin side sets up. ``token``: the engine token
    of engine mode (full mode makes one); ``config``: the config file's. Raises
    ``StartupFailure`` (exit 2) when that config needs a shared state store
    (:func:`refusal`)."""
    if options.workers <= 1 or data_sock is None:
        return None
    _refuse(options, config)
    shared = None if options.full else getattr(token, "value", None)
    supervisor = Supervisor(shared or secrets.token_urlsafe(32))
    supervisor.start(options.workers, child_options(options, config), data_sock)
    return supervisor


def finish(options: Any, local: Any, supervisor: Supervisor | None) -> None:
    """Once the config is live (full mode: the stored definitions loaded): in a child, keep
    its engine from starting listeners with a port of their own (gRPC, MQTT: worker 0
    serves them); in the parent, refuse the config when it needs a shared state store
    (exit 2), wait for every child (exit 1 when one fails) and, in full mode, register them
    with the admin and push them the config. Stops the children before raising
    ``StartupFailure``."""
    from mockd_project.runtime import runtime

    if worker_index():  # workers 1..N-1: the ports of gRPC and MQTT mocks are worker 0's
        local.engine.listeners.own_ports = False
    if supervisor is None:
        return
    try:
        _refuse(options, local.engine.snapshot.config)
        supervisor.wait_ready()
        if options.full:
            register_workers(supervisor, runtime.control)
        supervisor.watch()
    except BaseException:
        supervisor.stop()
        raise


def join(options: Any, token: str, control: Any, control_port: int) -> None:
    """Engine mode with ``--join``: register this engine with the admin (and again every few
    seconds, :func:`mocks.engine.remote.join_admin`), at ``--engine-url`` or
    ``http://<engine host>:<control port>``."""
    from mocks.engine.remote import join_admin

    url = options.engine_url
    if not url:
        host = options.engine_host
        shown = f"[{host}]" if ":" in host else host
        url = f"http://{shown}:{control_port}"
    api_key = options.join_api_key or os.environ.get("MOCKD_API_KEY") or None
    join_admin(options.join, api_key, url, token, lambda: control.config_version)
