"""The Django-free part of starting an engine: sockets, the engine token, start-up defaults.

``mockd engine`` (through :func:`mockd_project.runner.run_server`, which re-exports these
names) and the in-process :class:`mockd.MockServer` use these without loading Django, the
admin side or any config model: this module imports the standard library only, and
:mod:`mockd_project.paths` (itself standard library only) inside the token functions.

* :func:`bind_socket`, :func:`bind_engine_control`: listening sockets; a port that cannot be
  bound is a :class:`StartupFailure` with exit status 1 (behavior notes §15).
* :func:`resolve_engine_token`: the engine-control token (behavior notes §16).
* :func:`tls_contexts`: the HTTPS listeners' TLS contexts (none and no TLS module without
  HTTPS).
* :func:`lazy_websocket_protocol`: the uvicorn WebSocket protocol, imported on the first
  WebSocket upgrade instead of at start.
* :func:`skip_pydantic_plugin_scan`: a ``mockd`` process uses no pydantic plugin, so the
  scan of every installed package's entry points that pydantic runs before its first model is
  skipped (unless ``PYDANTIC_DISABLE_PLUGINS`` is already set).
* :func:`pause_collector`, :func:`resume_collector`: no cyclic garbage collection while a
  server process starts; what the start built is then moved out of the collector's way.
"""
from __future__ import annotations

import gc
import os
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

EXIT_CONFIG_ERROR = 2
EXIT_LISTEN_ERROR = 1
ENGINE_CONTROL_FIRST_PORT = 4281
ENGINE_CONTROL_LAST_PORT = 4380
#: File of the generated engine token inside the data directory (behavior notes §16).
ENGINE_TOKEN_FILE_NAME = "engine-token"
#: Environment variable giving the engine token.
ENGINE_TOKEN_ENV = "MOCKD_ENGINE_TOKEN"
#: Listen backlog of every listening socket.
LISTEN_BACKLOG = 2048


class StartupFailure(Exception):
    """Startup cannot go on; ``exit_code`` and a one-line ``message`` for stderr."""

    def __init__(self, exit_code: int, message: str):
        super().__init__(message)
        self.exit_code = exit_code
        self.message = message


def bind_socket(host: str, port: int, what: str,
                error: Callable[[str], Exception] | None = None) -> socket.socket:
    """A listening, non-blocking TCP socket on ``host:port`` (IPv6 when ``host`` has a
    colon; port 0 picks a free one). ``what`` names the listener in the error. Raises
    :class:`StartupFailure` (exit 1, ``cannot listen on HOST:PORT for the WHAT: reason``)
    when it cannot bind (behavior notes §15), or ``error(that message)`` when ``error`` is
    given (the library's ``ServerStartError``)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(LISTEN_BACKLOG)
    except OSError as failure:
        sock.close()
        message = f"cannot listen on {host}:{port} for the {what}: {failure.strerror or failure}"
        if error is not None:
            raise error(message) from None
        raise StartupFailure(EXIT_LISTEN_ERROR, message) from None
    sock.setblocking(False)
    return sock


def bind_engine_control(port: int | None, host: str = "127.0.0.1") -> socket.socket:
    """The engine-control socket: ``port`` if pinned, else first free from 4281 to 4380,
    else any free port; loopback unless ``host`` (``--engine-host``) says otherwise
    (behavior notes §15). Raises :class:`StartupFailure` (exit 1) for a pinned port that is
    taken."""
    if port is not None:
        return bind_socket(host, port, "engine control")
    for candidate in range(ENGINE_CONTROL_FIRST_PORT, ENGINE_CONTROL_LAST_PORT + 1):
        try:
            return bind_socket(host, candidate, "engine control")
        except StartupFailure:
            continue
    return bind_socket(host, 0, "engine control")


def data_dir_of(options: Any) -> Path:
    """The data directory of a run (``options``: a :class:`mockd_project.runner.RunOptions`
    or anything with ``data_dir``): ``--data-dir``, else ``$MOCKD_DATA_DIR``, else the
    platform default (behavior notes §15); not created here."""
    if options.data_dir:
        return Path(options.data_dir).expanduser()
    from mockd_project.paths import default_data_dir

    return default_data_dir()


@dataclass(frozen=True)
class EngineToken:
    """The token the engine-control port requires (behavior notes §16).

    Attributes:
        value: the secret itself; never printed or logged.
        source: where it came from, for the start-up note: ``--engine-token``,
            ``MOCKD_ENGINE_TOKEN`` or ``file``.
        path: the token file when ``source`` is ``file``, else None.
        ephemeral: True when ``path`` was generated for this run only (deleted at exit).
    """

    value: str = field(repr=False)
    source: str
    path: Path | None = None
    ephemeral: bool = False

    def discard(self) -> None:
        """Delete the token file when it was generated for this run only."""
        if self.ephemeral and self.path is not None:
            try:
                self.path.unlink()
            except OSError:
                pass  # already gone: nothing is left behind either way

    def describe(self) -> str:
        """Where the token is, without its value (``stored in <path>``, ``from …``)."""
        return f"stored in {self.path}" if self.path is not None else f"from {self.source}"


def runtime_token_dir() -> Path:
    """Where a generated engine token lives when no data directory was named:
    ``$XDG_RUNTIME_DIR/mockd``, else ``<temp dir>/mockd-<uid>`` (not the data directory, so
    ``mockd engine`` leaves no file behind). :func:`resolve_engine_token` creates it 0700 and
    refuses it when it is not private to the current user (another user may have made
    ``/tmp/mockd-<uid>`` first)."""
    runtime_dir = os.environ.get("XDG_RUNTIME_DIR", "").strip()
    if runtime_dir:
        return Path(runtime_dir) / "mockd"
    import tempfile

    return Path(tempfile.gettempdir()) / f"mockd-{os.getuid()}"


def resolve_engine_token(options: Any) -> EngineToken:
    """The engine token (behavior notes §16) of a run (``options``: a
    :class:`mockd_project.runner.RunOptions`): ``--engine-token``, else
    ``$MOCKD_ENGINE_TOKEN``, else a token file:

    * with ``--data-dir`` (or ``$MOCKD_DATA_DIR``): ``<data dir>/engine-token``, kept and reused
      across runs, written with a new random token on first use;
    * otherwise a new token in ``<runtime dir>/engine-<pid>.token`` (see
      :func:`runtime_token_dir`), which the runner deletes when the engine stops: an engine
      writes nothing to disk that outlives it (behavior notes §15).

    Tokens are 43 URL-safe characters (256 bits). A token file is written 0600 under a new
    name and renamed into place (:func:`mockd_project.paths.write_private_file`), and read
    without following a symbolic link, so a link planted at its name cannot make the engine
    overwrite or read another file. The runtime folder is created 0700 and must be a real
    directory of the current user that no one else may open
    (:func:`mockd_project.paths.ensure_owned_private_dir`).

    Raises :class:`StartupFailure` (exit 1) when the file cannot be read or written, or when
    the runtime folder is not private (the message names the folder, what is wrong and the
    ways out: remove it, or set ``--engine-token``, ``MOCKD_ENGINE_TOKEN`` or
    ``XDG_RUNTIME_DIR``).
    """
    if options.engine_token:
        return EngineToken(options.engine_token, "--engine-token")
    from_environment = os.environ.get(ENGINE_TOKEN_ENV, "").strip()
    if from_environment:
        return EngineToken(from_environment, ENGINE_TOKEN_ENV)
    import secrets

    from mockd_project.paths import (UnsafeDirectoryError, ensure_owned_private_dir,
                                     ensure_private_dir, read_private_file, write_private_file)

    if options.data_dir or os.environ.get("MOCKD_DATA_DIR"):
        path, ephemeral = data_dir_of(options) / ENGINE_TOKEN_FILE_NAME, False
    else:
        path, ephemeral = runtime_token_dir() / f"engine-{os.getpid()}.token", True
    try:
        if ephemeral:
            ensure_owned_private_dir(path.parent)
        else:
            existing = read_private_file(path)
            if existing:
                return EngineToken(existing, "file", path)
            ensure_private_dir(path.parent)
        token = secrets.token_urlsafe(32)
        write_private_file(path, token + "\n")
    except UnsafeDirectoryError as error:
        raise StartupFailure(EXIT_LISTEN_ERROR,
                             f"refusing to keep the engine token in {error.path}: the folder "
                             f"{error.problem}, so another local user could read or replace "
                             f"it. Remove the folder (mockd creates it again, 0700), or give "
                             f"the token with --engine-token or {ENGINE_TOKEN_ENV}, or set "
                             f"XDG_RUNTIME_DIR to a private folder") from None
    except OSError as error:
        raise StartupFailure(EXIT_LISTEN_ERROR,
                             f"cannot keep the engine token in {path}: "
                             f"{error.strerror or error}; give one with --engine-token or "
                             f"{ENGINE_TOKEN_ENV}") from None
    return EngineToken(token, "file", path, ephemeral=ephemeral)


def tls_contexts(options: Any, data: Any, admin: Any = None) -> dict[str, Any]:
    """The TLS contexts (``ssl.SSLContext``) by listener name (``https``, ``admin``) of a run
    (``options``: a :class:`mockd_project.runner.RunOptions`; ``data``, ``admin``: the
    :class:`mocks.server_config.TlsSettings` of the mock server and of the admin port, or
    None for an admin without TLS). Empty without HTTPS, and then the TLS module is not
    imported. Raises :class:`StartupFailure` (exit 2) with the one-line reason naming the
    file or key (SPEC "TLS configuration of the mock server")."""
    if not data.enabled and admin is None:
        return {}
    from mockd_project.tls import TlsSetupError, server_context

    contexts: dict[str, Any] = {}
    try:
        if data.enabled:
            contexts["https"] = server_context(data, data_dir_of(options))
        if admin is not None:
            contexts["admin"] = server_context(admin, data_dir_of(options))
    except TlsSetupError as error:
        raise StartupFailure(EXIT_CONFIG_ERROR, str(error)) from None
    return contexts


def lazy_websocket_protocol(**keywords: Any) -> Any:
    """uvicorn's WebSocket protocol for one upgraded connection, imported on the first
    upgrade: pass this function as ``uvicorn.Config(ws=...)`` instead of ``"auto"`` (uvicorn
    calls ``ws_protocol_class(config=, server_state=, app_state=)``), so a server that never
    sees a WebSocket never imports the ``websockets`` library. Same choice as ``"auto"``:
    websockets' sans-I/O protocol, else wsproto's. Raises RuntimeError when neither library
    is installed (uvicorn then answers the upgrade with its error)."""
    from uvicorn.protocols.websockets.auto import AutoWebSocketsProtocol

    if AutoWebSocketsProtocol is None:  # pragma: no cover - websockets ships with mockd
        raise RuntimeError("no WebSocket library: install websockets or wsproto")
    return AutoWebSocketsProtocol(**keywords)


def skip_pydantic_plugin_scan() -> None:
    """Set ``PYDANTIC_DISABLE_PLUGINS=__all__`` unless the environment sets it: before its
    first model, pydantic otherwise reads the entry points of every installed distribution
    looking for plugins (tens of milliseconds with a hundred packages), and mockd's config
    models use none. Call it in a ``mockd`` server process before any config model is built
    (never inside a library user's process)."""
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")


#: Whether :func:`pause_collector` turned the cyclic garbage collector off in this process.
_collector_paused = False


def pause_collector() -> None:
    """Turn the cyclic garbage collector off until :func:`resume_collector` (called once the
    server is ready). A start creates some 500,000 objects that live as long as the process
    (modules, classes, pydantic and ninja models) and almost no cyclic garbage; the collector
    otherwise runs about 250 times during a full start and walks them again and again (about
    0.15 s of CPU of a 1.2 s start). Only for a ``mockd`` server process, called before its
    imports; nothing when the collector is already off."""
    global _collector_paused
    if gc.isenabled():
        gc.disable()
        _collector_paused = True


def resume_collector() -> None:
    """After :func:`pause_collector`, once the server is ready: move every object alive now
    into the collector's permanent generation (``gc.freeze``: the long-lived start-up state
    is never walked again by later collections) and turn the collector back on. Does nothing
    when :func:`pause_collector` did not turn it off (an embedding process's collector is left
    as it is)."""
    global _collector_paused
    if _collector_paused:
        _collector_paused = False
        gc.freeze()
        gc.enable()
