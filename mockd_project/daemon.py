"""Process files of a full-mode server: the PID file, detaching, stopping, the first superuser.

Source: behavior notes §15 (PID file ``~/.mockd/mockd.pid`` and its JSON shape, ``start -d``
messages and ``~/.mockd/daemon.log``, ``stop`` messages and flags); issue 3 (superuser with a
one-time password when none exists).

Files: ``~/.mockd`` is created 0700 and ``daemon.log`` 0600. No secret reaches the log: a
detached server's stderr is that file, so it prints where the API key and the Django-admin
password are stored, never their values (:func:`mockd_project.auth.shows_secrets`); ``start
-d`` names those files and the ``mockd admin key``/``password`` commands that print them.
"""
from __future__ import annotations

import json
import logging
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, NoReturn

from mockd_project import __version__
from mockd_project.paths import ensure_private_dir, write_private_file

logger = logging.getLogger("mockd")

#: Seconds ``start -d`` waits for the background server to write its PID file.
DETACH_WAIT_SECONDS = 30.0

#: File of the Django-admin one-time password in the data directory, written (0600) when it
#: cannot be shown on a terminal.
ADMIN_PASSWORD_FILE_NAME = "django-admin-password"


def mockd_home() -> Path:
    """``~/.mockd`` (PID file and daemon log)."""
    return Path.home() / ".mockd"


def ensure_mockd_home() -> Path:
    """Create ``~/.mockd`` if needed and make it 0700 (it holds the daemon log); returns it.
    Raises :class:`OSError` when it cannot be created."""
    home = ensure_private_dir(mockd_home())
    try:
        os.chmod(home, 0o700)
    except OSError:
        pass  # not ours to change; the files in it are still 0600
    return home


def open_daemon_log(path: Path) -> int:
    """Open the daemon log for appending, created 0600 (an existing one is narrowed to 0600);
    returns the file descriptor. Raises :class:`OSError`."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.fchmod(descriptor, 0o600)
    except OSError:
        pass
    return descriptor


def pid_file_path(explicit: str | None = None) -> Path:
    """``explicit`` or ``~/.mockd/mockd.pid``."""
    return Path(explicit).expanduser() if explicit else mockd_home() / "mockd.pid"


def daemon_log_path() -> Path:
    """``~/.mockd/daemon.log`` (output of a detached server)."""
    return mockd_home() / "daemon.log"


def local_url(host: str, port: int, scheme: str = "http") -> str:
    """The URL a client on this machine uses to reach a listener bound to ``host``: the
    loopback address for a wildcard bind (``0.0.0.0`` -> ``127.0.0.1``, ``::`` -> ``[::1]``)."""
    host = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}.get(host, host)
    return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"


def write_pid_file(path: Path, *, host: str, ports: dict[str, int], config_file: str | None,
                   mocks_loaded: int, data_dir: str | None = None, persist: bool = True,
                   api_key_source: str = "file", dropped_mocks: int = 0,
                   tls_listeners: frozenset[str] | set[str] = frozenset()) -> None:
    """Write ``{pid, startTime, version, components: {admin: {enabled, port, host, url, tls?},
    engine: {enabled, port, host, httpsPort?}}, config: {file?, mocksLoaded, droppedMocks?},
    dataDir?, persist, apiKey: {source, file?}}`` atomically (write then rename).

    ``tls_listeners`` names the roles of ``ports`` serving TLS: an HTTPS admin port gets an
    ``https://`` url and ``tls: true``; the ``https`` port is the engine's ``httpsPort``.

    ``apiKey.source`` is ``file`` (then ``apiKey.file`` is ``<data dir>/admin-api-key``),
    ``MOCKD_API_KEY`` or ``none`` (``--no-auth``): client commands read it to find the key of
    the server they talk to. The file holds no secret. ``config.droppedMocks`` counts the
    stored mocks ``-c`` left out (:func:`dropped_mocks_note`).

    A PID file naming another live process is left alone (a second foreground server must not
    take over the file ``mockd stop`` uses for the first)."""
    current = read_pid_file(path)
    if current is not None and current["pid"] != os.getpid() and process_alive(current["pid"]):
        logger.warning("PID file %s belongs to running PID %s; not replacing it", path,
                       current["pid"])
        return
    admin: dict[str, Any] = {"enabled": "admin" in ports, "port": ports.get("admin"),
                             "host": host}
    if "admin" in ports:
        admin_tls = "admin" in tls_listeners
        admin["url"] = local_url(host, ports["admin"], "https" if admin_tls else "http")
        if admin_tls:
            admin["tls"] = True
    engine: dict[str, Any] = {"enabled": True, "port": ports.get("data"), "host": host}
    if "https" in ports:
        engine["httpsPort"] = ports["https"]
    document: dict[str, Any] = {
        "pid": os.getpid(),
        "startTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "version": __version__,
        "components": {
            "admin": admin,
            "engine": engine,
        },
        "config": {"mocksLoaded": mocks_loaded},
        "persist": persist,
        "apiKey": {"source": api_key_source},
    }
    if config_file:
        document["config"]["file"] = str(Path(config_file).resolve())
    if dropped_mocks:
        document["config"]["droppedMocks"] = dropped_mocks
    if data_dir:
        document["dataDir"] = str(Path(data_dir).resolve())
        if api_key_source == "file":
            from mockd_project.auth import api_key_path

            document["apiKey"]["file"] = str(api_key_path(document["dataDir"]))
    try:
        if path.parent == mockd_home():
            ensure_mockd_home()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
        # A PID file may sit in a shared folder (--pid-file /tmp/...): no guessable
        # temporary name, no symbolic link followed.
        write_private_file(path, json.dumps(document, indent=2) + "\n", mode=0o644)
    except OSError as error:
        logger.warning("cannot write the PID file %s: %s", path, error)


def read_pid_file(path: Path) -> dict[str, Any] | None:
    """The PID file's document, or None when it is missing or unreadable."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return document if isinstance(document, dict) and isinstance(document.get("pid"), int) \
        else None


def remove_pid_file(path: Path) -> None:
    """Remove the PID file if it still names this process."""
    document = read_pid_file(path)
    if document is not None and document.get("pid") == os.getpid():
        try:
            path.unlink()
        except OSError:
            pass


def process_alive(pid: int) -> bool:
    """Whether a process with this id exists (and is not a zombie)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        status = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return status != "Z"
    except (OSError, IndexError):
        return True


# ---------------------------------------------------------------------------- detach


def detach(argv: list[str], pid_file: Path) -> int:
    """Relaunch ``mockd`` with ``argv`` (``-d`` removed) in a new session, its output going to
    ``~/.mockd/daemon.log`` (0600 in a 0700 ``~/.mockd``); wait ≤ 30 s for its PID file and
    print the notes §15 messages.

    Returns the exit status for the parent: 0 when the server is up, 1 otherwise.
    """
    log_path = daemon_log_path()
    if log_path.parent == mockd_home():
        ensure_mockd_home()
    stale = read_pid_file(pid_file)
    if stale is not None and process_alive(stale["pid"]):
        print(f"mockd is already running (PID {stale['pid']}); stop it with 'mockd stop'",
              file=sys.stderr)
        return 1
    command = [sys.executable, "-m", "mockd_project.cli", *argv]
    with os.fdopen(open_daemon_log(log_path), "ab") as log, \
            open(os.devnull, "rb") as devnull:
        log.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} mockd {' '.join(argv)}\n".encode())
        log.flush()
        child = subprocess.Popen(command, stdin=devnull, stdout=log, stderr=log,
                                 start_new_session=True, close_fds=True)
    deadline = time.monotonic() + DETACH_WAIT_SECONDS
    while time.monotonic() < deadline:
        document = read_pid_file(pid_file)
        if document is not None and document.get("pid") == child.pid:
            _announce_detached(document)
            return 0
        if child.poll() is not None:
            print(f"mockd failed to start (exit {child.returncode}); see {log_path}:",
                  file=sys.stderr)
            print(_tail(log_path), file=sys.stderr)
            return 1
        time.sleep(0.1)
    print(f"mockd did not start within {DETACH_WAIT_SECONDS:.0f} s; see {log_path}",
          file=sys.stderr)
    return 1


def _announce_detached(document: dict[str, Any]) -> None:
    components = document.get("components", {})
    lines = [f"mockd started in background (PID {document['pid']})"]
    admin = components.get("admin") or {}
    engine = components.get("engine") or {}
    if admin.get("port"):
        lines.append(f"Admin API:   http://localhost:{admin['port']}")
    if engine.get("port"):
        lines.append(f"Mock server: http://localhost:{engine['port']}")
    loaded = (document.get("config") or {}).get("mocksLoaded") or 0
    if loaded:
        lines.append(f"Loaded {loaded} mocks")
    dropped = (document.get("config") or {}).get("droppedMocks") or 0
    if dropped:
        lines.append(dropped_mocks_note(dropped))
    lines.extend(secret_hints(document))
    print("\n".join(lines), flush=True)


def dropped_mocks_note(count: int) -> str:
    """The start banner's line when ``-c`` leaves out ``count`` stored mocks (behavior notes
    §15: with ``--config`` the run starts from the file)."""
    if count == 1:
        return ("1 mock added at run time is not loaded because -c was given; use --merge to "
                "keep it")
    return (f"{count} mocks added at run time are not loaded because -c was given; use --merge "
            f"to keep them")


def secret_hints(document: dict[str, Any]) -> list[str]:
    """Where the admin key and the Django admin password of the server a PID file describes
    are, and the commands that print them; never the secrets themselves."""
    key = document.get("apiKey") or {}
    source = key.get("source")
    lines = []
    if source == "file" and key.get("file"):
        lines.append(f"Admin API key: stored in {key['file']} (print it with 'mockd admin key')")
    elif source == "MOCKD_API_KEY":
        lines.append("Admin API key: from MOCKD_API_KEY")
    admin_port = ((document.get("components") or {}).get("admin") or {}).get("port")
    if admin_port:
        lines.append(f"Django admin:  http://localhost:{admin_port}/admin/ (user and password: "
                     f"'mockd admin password')")
    return lines


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


# ---------------------------------------------------------------------------- stop


def stop(pid_file: Path, *, force: bool = False, timeout: float = 10.0) -> int:
    """Stop the server named by the PID file: SIGTERM (SIGKILL with ``force``), wait up to
    ``timeout`` seconds. Prints ``Stopping mockd (PID n) with SIGTERM... done``.

    Returns 0 when it stopped, 1 when it was not running or did not stop in time.
    """
    document = read_pid_file(pid_file)
    if document is None:
        print(f"mockd is not running (no PID file found at {pid_file})")
        return 1
    pid = document["pid"]
    if not process_alive(pid):
        _unlink(pid_file)
        print(f"mockd is not running (PID {pid} not found; removed stale PID file {pid_file})")
        return 1
    name = "SIGKILL" if force else "SIGTERM"
    print(f"Stopping mockd (PID {pid}) with {name}...", end=" ", flush=True)
    try:
        os.kill(pid, signal.SIGKILL if force else signal.SIGTERM)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not process_alive(pid):
            _unlink(pid_file)
            print("done", flush=True)
            return 0
        time.sleep(0.1)
    print("timed out", flush=True)
    print(f"mockd (PID {pid}) is still running after {timeout:g} s; try 'mockd stop --force'",
          file=sys.stderr)
    return 1


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


# ---------------------------------------------------------------------------- exit


def end_process(status: int) -> NoReturn:
    """End a server process that has stopped serving with exit ``status``, as the interpreter
    would, minus its teardown: join the non-daemon threads and run the thread-pool and
    ``atexit`` callbacks (the recording store's close, logging's flush), flush stdout and
    stderr, then ``os._exit(status)``. Freeing every module and object of a full server
    (Django, ninja, pydantic models) one by one costs 0.2-0.4 s of CPU per stop and leaves
    nothing behind that the operating system does not free anyway."""
    import atexit

    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        shutdown()  # what the interpreter does first when the main thread returns
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass  # closed or replaced: nothing left to write
    os._exit(status)


# ---------------------------------------------------------------------------- superuser


def ensure_superuser_in_background() -> None:
    """Create a Django-admin superuser when none exists, in a background thread (password
    hashing takes a moment and must not delay readiness). Prints the user name and a one-time
    password on stderr when that is a terminal; otherwise (``daemon.log``, a redirect, a pipe)
    the password goes to ``<data dir>/django-admin-password`` (0600) and only that path is
    printed."""
    threading.Thread(target=_ensure_superuser, name="mockd-superuser", daemon=True).start()


#: Environment variable the test suite sets (``tests/helpers.py``: ``isolated_env``) so the
#: servers it starts hash the Django-admin password with Django's MD5 hasher, which costs
#: microseconds instead of PBKDF2's half second of CPU per first start. Only this exact value
#: switches; never set it for a real server (an MD5 hash is easy to reverse).
CHEAP_PASSWORD_HASH_ENV = "MOCKD_TESTS_CHEAP_PASSWORD_HASH"
CHEAP_PASSWORD_HASH_VALUE = "insecure-md5-for-tests"


def use_cheap_password_hasher_in_tests() -> bool:
    """When ``$MOCKD_TESTS_CHEAP_PASSWORD_HASH`` is ``insecure-md5-for-tests`` (set by the
    test suite only), put Django's MD5 hasher first in ``settings.PASSWORD_HASHERS`` of this
    process, so new passwords are hashed with it and logins with such a hash are checked (the
    default hashers stay, for hashes made without the switch). Returns whether it switched;
    otherwise changes nothing. Call after Django is set up."""
    if os.environ.get(CHEAP_PASSWORD_HASH_ENV) != CHEAP_PASSWORD_HASH_VALUE:
        return False
    from django.conf import settings
    from django.contrib.auth import hashers

    md5 = "django.contrib.auth.hashers.MD5PasswordHasher"
    if list(settings.PASSWORD_HASHERS[:1]) != [md5]:
        settings.PASSWORD_HASHERS = [md5, *settings.PASSWORD_HASHERS]
        hashers.get_hashers.cache_clear()
        hashers.get_hashers_by_algorithm.cache_clear()
    return True


def _ensure_superuser() -> None:
    from django.contrib.auth import get_user_model
    from django.db import connection

    try:
        use_cheap_password_hasher_in_tests()
        user_model = get_user_model()
        if user_model.objects.filter(is_superuser=True).exists():
            return
        password = secrets.token_urlsafe(12)
        user_model.objects.create_superuser("admin", "", password)
        print(_password_announcement(password), file=sys.stderr, flush=True)
    except Exception:  # noqa: BLE001 - the admin UI is optional; the server keeps running
        logger.warning("could not create the Django admin superuser", exc_info=True)
    finally:
        connection.close()


def _password_announcement(password: str) -> str:
    """The line announcing the superuser. The password is always written 0600 into the data
    directory (``mockd admin password`` reads it there); the line shows it only on a
    terminal and otherwise names that file."""
    from django.conf import settings

    from mockd_project.auth import shows_secrets

    path = Path(settings.DATA_DIR) / ADMIN_PASSWORD_FILE_NAME
    write_private_file(path, password + "\n")
    if shows_secrets():
        return (f"Django admin: user 'admin', one-time password {password} "
                f"(change it at /admin/password_change/)")
    return (f"Django admin: user 'admin', one-time password stored in {path} "
            f"(change it at /admin/password_change/)")
