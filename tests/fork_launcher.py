"""``mockd`` commands for the tests, forked from a process that imported the server's
libraries once.

A server start is mostly imports: Django, pydantic, uvicorn and the rest take about 0.6 of the
0.85 s of CPU a ``mockd start`` costs on an idle core, and the suite starts some 230 servers.
:func:`serve` (one launcher process per test worker, started on first use) imports those
libraries, then for every request forks a child that runs ``mockd_project.cli.main`` with the
request's arguments, environment, working directory and standard streams, in a new session,
and reports the child's exit status when it ends.

What a child runs is the ``mockd`` command's own code from its entry point on. What differs
from an exec'd ``mockd``: modules that import without Django's settings (libraries, and
mockd's own Django-free ones) are already imported, and ``/proc/<pid>/cmdline`` names the
launcher. That is the same as a fresh import as long as no module does anything at import
that depends on the process (its environment, folder, clock or PID):
``tests/unit/test_fork_launcher.py`` checks mockd's modules that the launcher keeps. Django's
settings are never loaded in the launcher (they read the data dir from the environment).

:func:`launch` is the test side: a :class:`ForkedProcess` (the part of
:class:`subprocess.Popen` that :class:`tests.helpers.MockdProcess` and the tests use) when
``$MOCKD_TESTS_FORK`` is not ``0`` and the requested environment has the launcher's
interpreter settings (``PYTHON*``, ``LANG``, ``LC_*``, ``TZ``: read once at interpreter start),
else a plain :class:`subprocess.Popen`. Every wait is bounded by the caller's timeout.
"""
from __future__ import annotations

import importlib
import io
import json
import locale
import os
import queue
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

#: The repository: the launcher imports this module from here.
ROOT = str(Path(__file__).resolve().parents[1])
#: mockd's own top-level packages.
OWN_PACKAGES = ("mockd", "mockd_project", "mocks", "tables", "oidc", "proxy", "recordings",
                "chaos")
#: Modules whose presence in ``sys.modules`` a start path reads, so the launcher must not
#: hold them (``mocks.engine.core`` binds custom table operations only when one is loaded).
NOT_PRELOADED = ("tables.operations", "mockd_project.settings")
#: What the launcher imports. mockd's entry points pull in most libraries; the Django modules
#: a full start loads while it sets up (the admin app, forms, templates, migrations) are
#: named. A module that cannot be imported before Django's settings exist is loaded by the
#: child instead.
PRELOAD = (
    "mockd_project.cli", "mockd_project.runner", "mockd_project.engine_start",
    "mockd_project.admin_handler", "mocks.engine.app", "mocks.engine.control", "mocks.config",
    "mocks.loader", "django.contrib.admin", "django.contrib.auth.hashers",
    "django.contrib.sessions.backends.base", "django.contrib.staticfiles.handlers",
    "django.contrib.staticfiles.finders",
    "django.db.models", "django.db.backends.sqlite3.base", "django.db.backends.sqlite3.schema",
    "django.db.migrations.executor", "django.db.migrations.autodetector",
    "django.core.handlers.asgi", "django.core.management.sql", "django.middleware.csrf",
    "django.middleware.cache", "django.template.backends.django", "django.template.defaulttags",
    "django.templatetags.static", "django.views.generic", "uvicorn.main",
    "uvicorn.protocols.http.httptools_impl", "uvloop", "httptools", "prometheus_client",
    "sqlparse", "yaml", "httpx")
#: Environment variables the interpreter reads once at start: a request that differs from the
#: launcher in any of them is run by exec instead.
INTERPRETER_ENV_PREFIXES = ("PYTHON", "LANG", "LC_", "TZ")
#: Seconds a request waits for the launcher to answer with the child's PID.
LAUNCH_TIMEOUT = 30.0


def _interpreter_env(env: dict[str, str]) -> dict[str, str]:
    return {key: value for key, value in env.items()
            if key.startswith(INTERPRETER_ENV_PREFIXES)}


def _preload() -> list[str]:
    """Import :data:`PRELOAD` (failures ignored); returns mockd's own modules now loaded.
    Django's settings stay unloaded: they depend on each command's environment (its data
    dir)."""
    os.environ.pop("DJANGO_SETTINGS_MODULE", None)
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:  # needs Django's settings or apps: the child imports it
            pass
    from django.conf import settings
    assert not settings.configured, "a preloaded module loaded Django's settings"
    held = [name for name in NOT_PRELOADED if name in sys.modules]
    assert not held, f"the launcher must not hold {held}"
    return sorted(name for name in sys.modules if name.split(".")[0] in OWN_PACKAGES)


def _run_child(request: dict[str, Any], fds: list[int], channel: socket.socket,
               wakeup_read: int, wakeup_write: int) -> None:
    """In the forked child: become the requested ``mockd`` command; never returns."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        channel.close()
        os.close(wakeup_read)
        os.close(wakeup_write)
        os.setsid()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = list(request["argv"])
        # An exec'd script has its own folder first on sys.path (the venv's bin), and neither
        # the working folder nor the repository (the launcher's).
        sys.path[:] = [str(Path(request["argv"][0]).parent),
                       *(entry for entry in sys.path if entry not in ("", ROOT))]
        from mockd_project.cli import main
        try:
            main(args=request["argv"][1:], prog_name="mockd")
            code = 0
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None
                                                                    else 1)
    except BaseException:
        import traceback
        traceback.print_exc()
    # The interpreter's own shutdown (atexit callbacks, non-daemon threads, flushed streams),
    # as when the command's script returns.
    raise SystemExit(code)


def serve(channel_fd: int) -> None:
    """The launcher: preload, then answer requests on the SOCK_SEQPACKET socket
    ``channel_fd`` until it closes. A request is a JSON object (``argv``, ``env``, ``cwd``)
    with three file descriptors (stdin, stdout, stderr); the answer is ``{"pid": N}``, and
    ``{"exit": N, "status": S}`` (S as :attr:`subprocess.Popen.returncode`) when the child
    ends. When the socket closes, every child still running is killed with its session."""
    _preload()
    import gc
    gc.collect()
    gc.freeze()  # the children share these pages instead of copying them at their first GC
    channel = socket.socket(fileno=channel_fd)
    wakeup_read, wakeup_write = os.pipe()
    os.set_blocking(wakeup_write, False)
    signal.set_wakeup_fd(wakeup_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: set[int] = set()
    while True:
        ready, _, _ = select.select([channel, wakeup_read], [], [])
        if wakeup_read in ready:
            os.read(wakeup_read, 4096)
            while children:
                try:
                    pid, status = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    break
                if pid == 0:
                    break
                children.discard(pid)
                channel.send(json.dumps({"exit": pid,
                                         "status": os.waitstatus_to_exitcode(status)}).encode())
        if channel in ready:
            try:
                message, fds, _, _ = socket.recv_fds(channel, 1 << 20, 3)
            except OSError:
                message = b""
            if not message:
                break
            request = json.loads(message)
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                _run_child(request, fds, channel, wakeup_read, wakeup_write)
            for fd in fds:
                os.close(fd)
            children.add(pid)
            channel.send(json.dumps({"pid": pid}).encode())
    for pid in children:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass


class _Launcher:
    """The test side of one launcher process: sends requests, and a reader thread hands the
    answers to the waiting :class:`ForkedProcess` objects."""

    def __init__(self, env: dict[str, str]):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.env = env
        self.process = subprocess.Popen(
            [sys.executable, "-c",
             f"import sys; sys.path.insert(0, {ROOT!r}); "
             f"from tests.fork_launcher import serve; serve({theirs.fileno()})"],
            # Never the worker's own stdout: pytest-xdist talks to its workers over it.
            pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            cwd=ROOT, env=env, start_new_session=True)
        theirs.close()
        self.channel = ours
        self.lock = threading.Lock()
        self.pids: queue.Queue[int] = queue.Queue()
        self.exits: dict[int, int] = {}
        self.exited = threading.Condition()
        self.closed = False
        self.started = time.monotonic()
        threading.Thread(target=self._read, daemon=True, name="fork-launcher").start()

    def _read(self) -> None:
        while True:
            try:
                message = self.channel.recv(1 << 16)
            except OSError:
                message = b""
            if not message:
                with self.exited:
                    self.closed = True
                    self.exited.notify_all()
                return
            answer = json.loads(message)
            if "pid" in answer:
                self.pids.put(answer["pid"])
            else:
                with self.exited:
                    self.exits[answer["exit"]] = answer["status"]
                    self.exited.notify_all()

    def fork(self, argv: list[str], env: dict[str, str], cwd: str, fds: list[int]) -> int:
        message = json.dumps({"argv": argv, "env": env, "cwd": cwd}).encode()
        with self.lock:
            socket.send_fds(self.channel, [message], fds)
            try:
                return self.pids.get(timeout=LAUNCH_TIMEOUT)
            except queue.Empty:
                raise RuntimeError("the fork launcher did not answer") from None


_launcher: list[_Launcher] = []
_launcher_lock = threading.Lock()


def _get_launcher(env: dict[str, str]) -> _Launcher | None:
    """This worker's launcher (started on first use with ``env``), or None when it died."""
    with _launcher_lock:
        if not _launcher:
            _launcher.append(_Launcher(env))
        launcher = _launcher[0]
    if launcher.closed or launcher.process.poll() is not None:
        return None
    return launcher


class ForkedProcess:
    """A ``mockd`` command forked by the launcher: ``pid``, ``args``, ``stdout`` (a binary
    pipe when asked for), ``returncode``, ``poll()``, ``wait(timeout)`` (raises
    :class:`subprocess.TimeoutExpired`), ``send_signal``, ``terminate``, ``kill``."""

    def __init__(self, launcher: _Launcher, argv: list[str], env: dict[str, str], cwd: str,
                 stdout: Any, stderr: Any):
        self.args = argv
        self._launcher = launcher
        self.returncode: int | None = None
        self.stdout = None
        close_after: list[int] = []
        null = os.open(os.devnull, os.O_RDWR)
        close_after.append(null)
        if stdout == subprocess.PIPE:
            read_end, write_end = os.pipe()
            self.stdout = open(read_end, "rb")
            close_after.append(write_end)
            out = write_end
        else:
            out = stdout.fileno() if hasattr(stdout, "fileno") else null
        err = stderr.fileno() if hasattr(stderr, "fileno") else null
        try:
            self.pid = launcher.fork(argv, env, cwd, [null, out, err])
        finally:
            for fd in close_after:
                os.close(fd)

    def poll(self) -> int | None:
        if self.returncode is None:
            with self._launcher.exited:
                self.returncode = self._launcher.exits.get(self.pid)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._launcher.exited:
            while self.pid not in self._launcher.exits:
                left = None if deadline is None else deadline - time.monotonic()
                if (left is not None and left <= 0) or self._launcher.closed:
                    raise subprocess.TimeoutExpired(self.args, timeout)
                self._launcher.exited.wait(left)
            self.returncode = self._launcher.exits[self.pid]
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _launcher_for(env: dict[str, str]) -> _Launcher | None:
    """The launcher that may fork a command with ``env``, or None (see the module
    docstring)."""
    if os.environ.get("MOCKD_TESTS_FORK", "1") == "0":
        return None
    launcher = _get_launcher(env)
    if launcher is None or _interpreter_env(env) != _interpreter_env(launcher.env):
        return None
    return launcher


def launch(argv: list[str], env: dict[str, str], cwd: Path | str, stdout: Any,
           stderr: Any) -> Any:
    """Start ``argv`` (a ``mockd`` command) as :class:`subprocess.Popen` would with
    ``stdin=DEVNULL, start_new_session=True``: forked by this worker's launcher when allowed,
    else exec'd."""
    launcher = _launcher_for(env)
    if launcher is not None:
        return ForkedProcess(launcher, argv, env, str(cwd), stdout, stderr)
    return subprocess.Popen(argv, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL,
                            cwd=cwd, env=env, start_new_session=True)


def run(argv: list[str], env: dict[str, str], cwd: Path | str,
        timeout: float) -> subprocess.CompletedProcess:
    """Run ``argv`` (a ``mockd`` command) to completion as :func:`subprocess.run` would with
    ``capture_output=True, text=True, stdin=DEVNULL``: forked when allowed, else exec'd.
    Raises :class:`subprocess.TimeoutExpired` after ``timeout`` seconds (the command and its
    session killed)."""
    launcher = _launcher_for(env)
    if launcher is None:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=cwd,
                              env=env, stdin=subprocess.DEVNULL)
    read_err, write_err = os.pipe()
    with open(write_err, "wb") as err_writer:
        process = ForkedProcess(launcher, argv, env, str(cwd), subprocess.PIPE, err_writer)
    captured: dict[str, bytes] = {}
    readers = [threading.Thread(target=lambda key, stream: captured.__setitem__(key,
                                                                               stream.read()),
                                args=args, daemon=True)
               for args in (("out", process.stdout), ("err", open(read_err, "rb")))]
    for reader in readers:
        reader.start()
    deadline = time.monotonic() + timeout
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except OSError:
            pass
        raise
    for reader in readers:  # output still open in a process the command left running
        reader.join(max(0.0, deadline - time.monotonic()))
    if any(reader.is_alive() for reader in readers):
        raise subprocess.TimeoutExpired(argv, timeout)
    return subprocess.CompletedProcess(argv, process.returncode, _text(captured["out"]),
                                       _text(captured["err"]))


def _text(data: bytes) -> str:
    """``data`` decoded as ``subprocess.run(text=True)`` does: the locale's encoding,
    universal newlines."""
    return io.TextIOWrapper(io.BytesIO(data), encoding=locale.getpreferredencoding(False)).read()


if __name__ == "__main__":
    serve(int(sys.argv[1]))
