"""Runs every listener of one mockd process on one asyncio event loop.

``run_server(options)`` is what ``mockd start``/``serve``, ``mockd engine`` and the
``runmocks``/``runengine`` management commands call. Order of work (ARCHITECTURE "Processes
and ports"; STYLE §1): read and compile the config (exit 2 on a config error) -> engine mode:
find the engine token -> bind every socket (exit 1 when a port is taken) -> set up Django
(full mode only) -> mark ready -> serve until SIGINT/SIGTERM -> stop within about two seconds.

Full mode binds no engine-control port: the admin drives the engine in process through
``runtime.control``. ``mockd engine`` binds it on loopback behind the engine token (behavior
notes §15, §16). Nothing of the admin side (Django's ORM, ninja, the admin URLconf) is imported
on the ``mockd engine`` path.

Listeners are uvicorn servers (uvloop + httptools) driven by hand with ``lifespan`` off, since
startup is done here before the sockets accept; ``--server daphne`` runs the same ASGI apps
under daphne instead.
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import signal
import socket
import ssl
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from mocks.engine.control import EngineControl, EngineControlApp
from mocks.engine.core import DEFAULT_MAX_BODY_SIZE, Engine
from mocks.engine.cors import CorsPolicy
from mocks.engine.hosts import HostPolicy
from mocks.protocols import HandlerImportError, load_handlers
from mocks.core.environment import allow_environment
from mocks.core.errors import ConfigError
from mocks.core.responses import FileRoots
from mocks.loader import load_config_file
from mocks.server_config import TlsSettings, tls_settings_from_file

# The Django-free start functions, re-exported: mockd_project.engine_start.
from mockd_project.engine_start import (EXIT_CONFIG_ERROR, EXIT_LISTEN_ERROR, StartupFailure,
                                        bind_engine_control, bind_socket, data_dir_of,
                                        lazy_websocket_protocol, resolve_engine_token,
                                        resume_collector, runtime_token_dir, tls_contexts)
from mockd_project.paths import ensure_private_dir
from mockd_project.runtime import runtime

logger = logging.getLogger("mockd")

DEFAULT_HTTP_PORT = 4280
DEFAULT_ADMIN_PORT = 4290


@dataclass
class RunOptions:
    """Options of one server run (behavior notes §15).

    Attributes:
        full: True for ``start`` (engine + admin), False for ``engine`` (headless).
        config: config file path or None.
        host: interface for the data plane and admin (default loopback).
        port, admin_port: listener ports; 0 picks a free port; None (not given by a flag or
            the environment) takes ``serverConfig.httpPort``/``adminPort`` (``server.port``
            for the data plane) from the config file, else 4280/4290 (behavior notes §14, §15).
        engine_port: engine-control port in ``mockd engine``; None = first free from 4281.
            Accepted and ignored in full mode, which binds no engine-control port.
        engine_token: the engine token (``--engine-token``); None takes
            ``$MOCKD_ENGINE_TOKEN``, else the ``engine-token`` file of the data directory
            (generated on first use). Engine mode only.
        data_dir: data directory (None: ``$MOCKD_DATA_DIR``, else the platform default):
            definitions and the API key in full mode, the engine token in engine mode; also
            never a folder a config may read files from (only its ``files/`` folder is).
        allow_body_files_anywhere: let ``bodyFile``/``dataFile`` read any file instead of
            only files inside the config file's folder and ``<data dir>/files`` (the rest of
            the data directory stays refused, see :func:`body_file_roots`).
        allow_env: ``--allow-env`` names or globs of environment variables the config may
            read besides ``MOCKD_*`` (:mod:`mocks.core.environment`).
        allow_remote_imports: ``--allow-remote-imports``: fetch ``imports[].url`` entries
            (refused by default).
        no_auth: disable admin API keys.
        allowed_hosts: ``--allowed-host`` names (and ``$MOCKD_ALLOWED_HOSTS``) the admin and
            engine-control ports answer besides loopback names and IP addresses
            (:func:`host_policy`).
        print_url: print the data-plane URL on stdout once listening.
        server: ``uvicorn`` or ``daphne``.
        log_level: Python logging level name.
        quiet: do not print the human banner.
        max_body_size: data-plane request body limit in bytes; None takes
            ``serverConfig.maxBodySize``, else 10 MiB (behavior notes §18).
        max_log_entries: request-log capacity (None: ``serverConfig.maxLogEntries``, else
            ``$MOCKD_MAX_LOG_ENTRIES``, else 1000).
        no_persist: keep definitions in memory only (full mode).
        merge: with ``config``, keep the stored mocks the file does not define (added at run
            time) after the file's, instead of replacing every stored definition (full mode).
        pid_file: PID file path (full mode; None = ``~/.mockd/mockd.pid``).
        cors_origins: origins CORS allows on the mock server (``--cors-origins``), overriding
            ``serverConfig.cors.allowOrigins``; None keeps the config's or the default.
        chaos: the chaos flags (:class:`chaos.startup.ChaosFlags`), or None; applied over
            ``serverConfig.chaos`` when the engine starts (behavior notes §15).
        https_port: HTTPS port of the mock server (``--https-port``; 0 or None: the config's,
            else no HTTPS).
        tls_cert, tls_key: ``--tls-cert``/``--tls-key``: PEM certificate and key of the HTTPS
            port (relative to the working directory), overriding the config's.
        tls_auto: ``--tls-auto``: use the self-signed ``localhost`` certificate kept in the
            data directory.
        mtls_client_auth: ``--mtls-client-auth``: client certificates (``none``, ``request``,
            ``require``, ``verify-if-given``, ``require-and-verify``); None keeps the config's.
        mtls_cas: ``--mtls-ca`` files of the CAs that sign client certificates.
        admin_tls_cert, admin_tls_key, admin_tls_auto: the same for the admin port
            (``--admin-tls-*``), which then serves HTTPS only.
        state_store: ``--state-store`` Redis URL keeping the tables (None: the config's
            ``serverConfig.stateStore``, else in memory); state_namespace: its key prefix
            (``--state-namespace``). See :mod:`tables.state_options`.
        workers: ``--workers``: engine processes sharing the data-plane port (1: this one
            alone; :mod:`mockd_project.workers`).
        engines_only: ``--engines-only`` (full mode): an admin with no engine of its own that
            drives the engines which join it.
        allow_remote_engines: ``--allow-remote-engines`` (full mode): ``POST /engines``
            accepts engine URLs off loopback while ``host`` is loopback.
        join, join_api_key: ``--join``/``--api-key`` (engine mode): the admin URL to register
            with, and its API key.
        engine_host, engine_url: ``--engine-host``/``--engine-url`` (engine mode): the
            interface the engine-control port binds (default loopback), and the URL an admin
            reaches it at (default ``http://<engine host>:<port>``).
        max_connections: ``serverConfig.maxConnections``: concurrent connections (and
            requests in flight) the mock port serves per process before it answers 503
            (None or 0: no cap).
    """

    full: bool = True
    config: str | None = None
    host: str = "127.0.0.1"
    port: int | None = None
    admin_port: int | None = None
    engine_port: int | None = None
    engine_token: str | None = None
    data_dir: str | None = None
    allow_body_files_anywhere: bool = False
    allow_env: tuple[str, ...] = ()
    allow_remote_imports: bool = False
    no_auth: bool = False
    allowed_hosts: tuple[str, ...] = ()
    print_url: bool = False
    server: str = "uvicorn"
    log_level: str = "warning"
    quiet: bool = False
    max_body_size: int | None = None
    max_log_entries: int | None = None
    no_persist: bool = False
    merge: bool = False
    pid_file: str | None = None
    cors_origins: list[str] | None = None
    https_port: int | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    tls_auto: bool = False
    mtls_client_auth: str | None = None
    mtls_cas: tuple[str, ...] = ()
    admin_tls_cert: str | None = None
    admin_tls_key: str | None = None
    admin_tls_auto: bool = False
    chaos: Any = None
    state_store: str | None = None
    state_namespace: str = "mockd"
    workers: int = 1
    engines_only: bool = False
    allow_remote_engines: bool = False
    join: str | None = None
    join_api_key: str | None = field(default=None, repr=False)
    engine_host: str = "127.0.0.1"
    engine_url: str | None = None
    max_connections: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def host_policy(options: RunOptions) -> HostPolicy:
    """The ``Host`` values the admin and engine-control ports answer: loopback names, IP
    addresses, the ``--host`` name and ``options.allowed_hosts``
    (:class:`mocks.engine.hosts.HostPolicy`; the data plane answers every ``Host``). Raises
    :class:`StartupFailure` (exit 2) for a malformed ``--allowed-host``.
    Source: docs/security.md "The admin port: API key, origins and Host"."""
    try:
        return HostPolicy(options.allowed_hosts, bind_host=options.host)
    except ValueError as error:
        raise StartupFailure(EXIT_CONFIG_ERROR, str(error)) from None


#: The folder of the data directory that holds files mocks may serve (bodies uploaded
#: through the admin API); the rest of the data directory is never read for a config.
DATA_FILES_FOLDER = "files"


def body_file_roots(options: RunOptions) -> FileRoots:
    """The resolved folders ``bodyFile``, ``dataFile``, ``schemaFile``, ``wsdlFile`` and
    ``importPaths`` may read from: the config file's folder (when there is a config file) and
    ``<data dir>/files``; none (anywhere) with ``--allow-body-files-anywhere``.

    Never readable, whatever the flags (:class:`~mocks.core.responses.FileRoots` ``denied``):
    the rest of the data directory (API key, secret key, engine token, TLS keys, the
    database), the engine token folder and the database file when it lies elsewhere.
    Source: docs/security.md "Files a config may read".
    """
    data_dir = data_dir_of(options).resolve()
    token_dir = runtime_token_dir()  # not resolved: it may be a link planted by another user
    denied = [data_dir, token_dir.parent.resolve() / token_dir.name]
    database = os.environ.get("MOCKD_DATABASE")
    if database:
        denied.append(Path(database).resolve())
    files = data_dir / DATA_FILES_FOLDER
    if options.allow_body_files_anywhere:
        return FileRoots((), denied, [files])
    roots = [files]
    if options.config:
        roots.insert(0, Path(options.config).resolve().parent)
    return FileRoots(roots, denied, [files])


def _url(host: str, port: int, scheme: str = "http") -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}:{port}"


def apply_file_settings(options: RunOptions, config: Any) -> None:
    """Fill the options no flag gave (None) from the config file's ``serverConfig`` (and the
    ``server`` block's ``port``), then from the defaults; changes ``options`` in place.

    Flags > environment > file > defaults (behavior notes §14 "File ports apply when no CLI
    flag is given", §15). ``managementPort`` pins the engine-control port in engine mode only
    (ignored in full mode, notes §15). ``config`` may be None (no file).
    """
    server_config = getattr(config, "server_config", None)
    server_block = getattr(config, "server", None)
    if options.port is None:
        options.port = next((port for port in (getattr(server_config, "http_port", None),
                                               getattr(server_block, "port", None))
                             if port is not None), DEFAULT_HTTP_PORT)
    if options.admin_port is None:
        file_port = getattr(server_config, "admin_port", None)
        options.admin_port = file_port if file_port is not None else DEFAULT_ADMIN_PORT
    if options.engine_port is None and not options.full:
        options.engine_port = getattr(server_config, "management_port", None)
    if options.max_body_size is None:
        options.max_body_size = (getattr(server_config, "max_body_size", None)
                                 or DEFAULT_MAX_BODY_SIZE)
    if options.max_connections is None:
        options.max_connections = getattr(server_config, "max_connections", None) or None


def resolve_tls(options: RunOptions, config: Any) -> TlsSettings:
    """The HTTPS settings of the mock server: the config file's (``server`` block,
    ``serverConfig.httpsPort``/``tls``/``mtls``), overridden by the flags (``--https-port``,
    ``--tls-cert``/``--tls-key``, ``--tls-auto``, ``--mtls-client-auth``, ``--mtls-ca``).
    A certificate flag or ``--tls-auto`` turns HTTPS on; ``--https-port`` alone does too, with
    the generated certificate when no certificate is given.

    Raises :class:`StartupFailure` (exit 2): only one of ``--tls-cert``/``--tls-key``; both
    with ``--tls-auto``; HTTPS on without a port.
    Source: SPEC "TLS configuration of the mock server"; behavior notes §14, §15.
    """
    base_dir = str(Path(options.config).resolve().parent) if options.config else "."
    settings = tls_settings_from_file(getattr(config, "server_config", None),
                                      getattr(config, "server", None), base_dir)
    changes: dict[str, Any] = {}
    if (options.tls_cert is None) != (options.tls_key is None):
        raise StartupFailure(EXIT_CONFIG_ERROR, "give --tls-cert and --tls-key together")
    if options.tls_cert is not None and options.tls_auto:
        raise StartupFailure(EXIT_CONFIG_ERROR,
                             "give --tls-cert/--tls-key or --tls-auto, not both")
    if options.https_port:
        changes.update(port=options.https_port, enabled=True)
    if options.tls_cert is not None:
        # Flag paths are the user's, relative to the working directory.
        changes.update(cert_file=str(Path(options.tls_cert).absolute()),
                       key_file=str(Path(options.tls_key).absolute()), auto_cert=False,
                       enabled=True)
    if options.tls_auto:
        changes.update(auto_cert=True, enabled=True)
    if options.mtls_client_auth is not None:
        changes["client_auth"] = options.mtls_client_auth
    if options.mtls_cas:
        changes["client_cas"] = tuple(str(Path(name).absolute()) for name in options.mtls_cas)
    if changes:
        settings = dataclasses.replace(settings, **changes)
    if settings.enabled and not settings.port:
        where = settings.source or "--tls-cert/--tls-auto"
        raise StartupFailure(EXIT_CONFIG_ERROR,
                             f"HTTPS is on ({where}) but has no port: give --https-port, "
                             f"server.tls.port or serverConfig.httpsPort")
    return settings


def resolve_admin_tls(options: RunOptions) -> TlsSettings | None:
    """The admin port's TLS settings from ``--admin-tls-cert``/``--admin-tls-key`` or
    ``--admin-tls-auto``, or None (plain HTTP). Raises :class:`StartupFailure` (exit 2) for a
    certificate without its key or both forms at once."""
    if (options.admin_tls_cert is None) != (options.admin_tls_key is None):
        raise StartupFailure(EXIT_CONFIG_ERROR,
                             "give --admin-tls-cert and --admin-tls-key together")
    if options.admin_tls_cert is not None and options.admin_tls_auto:
        raise StartupFailure(EXIT_CONFIG_ERROR, "give --admin-tls-cert/--admin-tls-key or "
                                                "--admin-tls-auto, not both")
    if options.admin_tls_cert is not None:
        return TlsSettings(enabled=True, cert_file=str(Path(options.admin_tls_cert).absolute()),
                           key_file=str(Path(options.admin_tls_key).absolute()),
                           source="--admin-tls")
    if options.admin_tls_auto:
        return TlsSettings(enabled=True, auto_cert=True, source="--admin-tls")
    return None


def _load_handlers(mock_types) -> None:
    """:func:`~mocks.protocols.load_handlers` of ``mock_types``; raises
    :class:`StartupFailure` (exit 2) when a handler cannot be imported or found."""
    try:
        load_handlers(mock_types)
    except HandlerImportError as error:
        raise StartupFailure(EXIT_CONFIG_ERROR, f"cannot load a protocol handler: {error}") \
            from None


def prepare(options: RunOptions) -> tuple[Engine, Any]:
    """Load the protocol handlers, then load and compile the config into a new engine.

    Raises :class:`StartupFailure` (exit 2) for a config error (a ``bodyFile`` outside the
    allowed folders included) or a handler that cannot be imported (a broken install must not
    leave a mock type silently dead).
    """
    _load_handlers(())  # every handler found: a broken install fails before anything binds
    engine = Engine(max_body_size=options.max_body_size or DEFAULT_MAX_BODY_SIZE)
    engine.shared_state["listen_host"] = options.host  # gRPC/MQTT listeners bind here too
    engine.body_file_roots = body_file_roots(options)
    allow_environment(options.allow_env)
    if options.cors_origins is not None:
        engine.cors_origins = options.cors_origins
        engine.cors = CorsPolicy(None, options.cors_origins)
    if options.config:
        try:
            config = load_config_file(options.config,
                                      allow_remote_imports=options.allow_remote_imports)
            apply_file_settings(options, config)
            _use_state_store(engine, options, config)
            engine.max_body_size = options.max_body_size
            # Only the config's protocols are imported: an HTTP-only engine pays for no grpc
            _load_handlers({mock.type for mock in config.mocks})
            engine.load(config, base_dir=Path(options.config).resolve().parent)
        except ConfigError as error:
            raise StartupFailure(EXIT_CONFIG_ERROR, f"config error: {error}") from None
        return engine, config
    apply_file_settings(options, None)
    _use_state_store(engine, options, None)
    engine.ready = True
    return engine, None


def _use_state_store(engine: Engine, options: RunOptions, config: Any) -> None:
    """Keep the engine's tables in the Redis of ``--state-store`` (else of
    ``serverConfig.stateStore``); raises :class:`StartupFailure` (exit 2, one line naming
    the flag or the URL) when it is unusable or unreachable."""
    from tables.state_options import StateStoreError, install_state_store

    url, source = options.state_store, "--state-store"
    if not url:
        url = getattr(getattr(config, "server_config", None), "state_store", None)
        source = "serverConfig.stateStore"
    try:
        install_state_store(engine, url, options.state_namespace, source)
    except StateStoreError as error:
        raise StartupFailure(EXIT_CONFIG_ERROR, str(error)) from None


def setup_django(options: RunOptions) -> None:
    """Point Django at the data directory (created 0700) and set it up (full mode and the
    ``mockd admin`` commands).

    The settings read ``MOCKD_DATA_DIR`` and ``MOCKD_NO_PERSIST`` when they are first loaded,
    so this sets both before touching them. When something loaded the settings earlier
    (``django-admin runmocks``, ``call_command``) and they name another data directory or
    persistence mode, raises :class:`StartupFailure` (exit 2) instead of serving the wrong
    folder.
    """
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mockd_project.settings")
    from django.conf import settings

    loaded_before = settings.configured
    # Absolute, so that the paths printed and recorded in the PID file hold from any folder.
    data_dir = Path(options.data_dir).expanduser().absolute() if options.data_dir else None
    if data_dir is not None:
        os.environ["MOCKD_DATA_DIR"] = str(data_dir)
    if options.no_persist:
        os.environ["MOCKD_NO_PERSIST"] = "1"

    import django

    if loaded_before:
        wrong_dir = (data_dir is not None
                     and Path(settings.DATA_DIR).resolve() != data_dir.resolve())
        if wrong_dir or (options.no_persist and settings.PERSIST):
            raise StartupFailure(
                EXIT_CONFIG_ERROR,
                f"Django's settings were loaded for {settings.DATA_DIR} before --data-dir or "
                f"--no-persist was read; run 'mockd start' or 'python manage.py runmocks' "
                f"with these options instead")
    ensure_private_dir(Path(settings.DATA_DIR))
    django.setup()


def setup_admin_database(options: RunOptions) -> Path:
    """Set Django up for ``options``' data directory (:func:`setup_django`) and bring its
    database schema up to date; returns the data directory. For commands that read or
    change the stored admin data without serving (``mockd admin password --reset``).
    Raises :class:`StartupFailure` as :func:`setup_django` does."""
    from django.conf import settings
    from django.core.management import call_command

    setup_django(options)
    call_command("migrate", verbosity=0, interactive=False)
    return Path(settings.DATA_DIR)


def _migrate(options: RunOptions) -> None:
    """``migrate`` the admin database; a new data-dir database starts from the schema
    template when there is one (then nothing is left to apply: the migrations are not even
    loaded), and leaves one for the next first start when not
    (:mod:`mockd_project.schema_cache`)."""
    from django.conf import settings

    database = Path(str(settings.DATABASES["default"]["NAME"]))
    fresh = (not options.no_persist and not os.environ.get("MOCKD_DATABASE")
             and not str(database).startswith("file:") and not database.exists())
    template = None
    if fresh:
        from mockd_project import schema_cache

        copied, template = schema_cache.seed(database)
        if copied:
            return
    if template is None:
        from django.db import connection
        from django.db.migrations.executor import MigrationExecutor

        executor = MigrationExecutor(connection)
        if not executor.migration_plan(executor.loader.graph.leaf_nodes()):
            # An existing database that is up to date: nothing to apply, and
            # migrate's system checks and post-migrate signals cost ~0.15 s per start.
            return
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    if template is not None:
        from django.db import connection

        connection.close()  # the template is read from the file, with the WAL checkpointed
        schema_cache.save_template(database, template)


def start_control_plane(options: RunOptions, config: Any) -> tuple[int, int]:
    """Full mode, after Django is set up: migrate the database, load the definitions into the
    engine (the ``-c`` file replaces the stored ones, notes §15; with ``--merge`` the stored
    mocks it does not define are kept after the file's), prepare the API key.

    Returns ``(mocks loaded, stored mocks dropped)``: the second counts the mocks added at run
    time that ``-c`` without ``--merge`` leaves out (0 otherwise). Raises
    :class:`StartupFailure` (exit 2) when the stored or given definitions do not compile.
    """
    from django.conf import settings

    from mockd_project import auth
    from mocks.control import configuration, errors

    _migrate(options)
    dropped = (len(configuration.stored_mocks_beside(config))
               if config is not None and not options.merge else 0)
    try:
        loaded = configuration.start_from(config, merge=options.merge)
    except errors.AdminError as error:
        raise StartupFailure(EXIT_CONFIG_ERROR, f"config error: {error.message}") from None
    runtime.data_dir = str(settings.DATA_DIR)
    runtime.persist = not options.no_persist
    _install_recording_store(options, config, Path(settings.DATA_DIR))
    runtime.shutdown_hooks.append(_end_stream_recordings)
    runtime.api_key = (None if options.no_auth
                       else auth.load_or_create_api_key(settings.DATA_DIR))
    return loaded, dropped


async def _end_stream_recordings() -> None:
    """Shutdown hook: stream recordings still armed are written as ``complete`` and replays
    end (``aborted``), so none is left ``recording`` in the store after a clean stop."""
    from recordings import replay, stream_registry

    stream_registry.stop_all()
    replay.stop_all()


def _install_recording_store(options: RunOptions, config: Any, data_dir: Path) -> None:
    """Open the recording store of every kind in the data dir (or the config's
    ``recording.dataDir``, relative to the config file) with its ``maxBytes`` and
    ``warnPercent``, make it the process-wide one, and close it when the process exits (after
    the listeners and the shutdown hooks that may still write recordings). With
    ``--no-persist`` the store lives in memory and nothing is written.

    ``recording.dataDir`` must stay inside the config file's folder or the data dir (a config
    from someone else cannot make the server write files elsewhere): otherwise raises
    :class:`StartupFailure` (exit 2) naming the key."""
    import atexit

    from recordings import store as recording_store

    recording = getattr(config, "recording", None)
    max_bytes = getattr(recording, "max_bytes", None)
    warn_percent = getattr(recording, "warn_percent", None)
    if options.no_persist:
        kwargs = {key: value for key, value in (("max_bytes", max_bytes),
                                                ("warn_percent", warn_percent))
                  if value is not None}
        recording_store.install(recording_store.RecordingStore(None, **kwargs))
        return
    folder = data_dir
    if recording is not None and recording.data_dir:
        config_folder = (Path(options.config).resolve().parent if options.config
                         else Path.cwd())
        folder = (config_folder / Path(recording.data_dir).expanduser()).resolve()
        allowed = (config_folder, data_dir.resolve())
        if not any(folder == root or folder.is_relative_to(root) for root in allowed):
            raise StartupFailure(EXIT_CONFIG_ERROR,
                                 f"config error: recording.dataDir: {recording.data_dir!r} "
                                 f"is outside the config file's folder and the data dir; "
                                 f"recordings are only written inside those")
    opened = recording_store.open_store(folder, max_bytes=max_bytes, warn_percent=warn_percent)
    recording_store.install(opened)
    atexit.register(opened.close)


def _api_key_source(options: RunOptions) -> str:
    """Where the admin key of this server comes from, for the PID file: ``none``
    (``--no-auth``), ``MOCKD_API_KEY`` or ``file``."""
    if options.no_auth:
        return "none"
    return "MOCKD_API_KEY" if os.environ.get("MOCKD_API_KEY", "").strip() else "file"


def _log_capacity(options: RunOptions, config: Any) -> int:
    if options.max_log_entries is not None:
        return options.max_log_entries
    server_config = getattr(config, "server_config", None)
    if server_config is not None and server_config.max_log_entries is not None:
        return server_config.max_log_entries
    try:
        return int(os.environ.get("MOCKD_MAX_LOG_ENTRIES") or 1000)
    except ValueError:
        return 1000


def run_server(options: RunOptions) -> NoReturn:
    """Run until stopped, then end the process with its exit status (0 on a clean stop)
    without the interpreter's teardown (:func:`mockd_project.daemon.end_process`)."""
    from mockd_project.daemon import end_process

    end_process(serve(options))


def serve(options: RunOptions) -> int:
    """Run until stopped; returns the process exit status (0 on a clean stop)."""
    # Uptime counts from here, not from when this module was imported (an embedding
    # process may have imported it long before).
    runtime.started_at = time.time()
    logging.basicConfig(level=options.log_level.upper(), format="%(levelname)s %(name)s: %(message)s",
                        stream=sys.stderr)
    try:
        hosts = host_policy(options)
        engine, config = prepare(options)
        tls = resolve_tls(options, config)
        admin_tls = resolve_admin_tls(options) if options.full else None
        if (tls.enabled or admin_tls is not None) and options.server == "daphne":
            raise StartupFailure(EXIT_CONFIG_ERROR, "HTTPS listeners need --server uvicorn")
        contexts = tls_contexts(options, tls, admin_tls)
        from mockd_project import workers

        data_socket = workers.data_socket(options, bind_socket)  # None: --engines-only
        https_socket = (workers.listening_socket(options, bind_socket, tls.port,
                                                 "HTTPS mock server", inherit=False)
                        if tls.enabled and tls.port and data_socket is not None else None)
        admin_socket = (bind_socket(options.host, options.admin_port, "admin API")
                        if options.full else None)
        # Full mode binds no engine-control port (the admin calls the engine in process);
        # --engine-port is accepted there and ignored.
        control_socket = (None if options.full
                          else bind_engine_control(options.engine_port, options.engine_host))
        # Last: a token file generated for this run must not outlive a failed start.
        token = None if options.full else resolve_engine_token(options)
    except StartupFailure as failure:
        print(failure.message, file=sys.stderr)
        return failure.exit_code

    from mockd_project.asgi import data_plane_application

    control = EngineControl(engine, _log_capacity(options, config))
    file_chaos = getattr(getattr(config, "server_config", None), "chaos", None)
    if file_chaos is not None or options.chaos is not None:
        # Imported only then: the chaos models are built only when there is chaos to apply.
        from chaos.startup import startup_chaos

        chaos = startup_chaos(file_chaos, options.chaos)
        if chaos is not None:
            control.install_chaos(chaos)  # serverConfig.chaos and the --chaos-* flags
    # Full mode: the admin drives this engine and the remote ones through one control.
    runtime.control = workers.admin_control(options, control) if options.full else control
    try:  # --workers: the children start while the admin side sets up
        supervisor = workers.spawn(options, data_socket, token, config)
    except StartupFailure as failure:
        print(failure.message, file=sys.stderr)
        return failure.exit_code
    runtime.host = options.host
    data_app = data_plane_application(engine, lean=not options.full)
    apps: list[tuple[str, Any, socket.socket]] = (
        [("data", data_app, data_socket)] if data_socket is not None else [])
    if https_socket is not None:
        from mockd_project.tls import https_redirect_app

        # Both ports serve the same app over the same engine, so the same snapshot.
        apps.append(("https", data_app, https_socket))
        if tls.https_redirect:
            apps[0] = ("data", https_redirect_app(data_app, https_socket.getsockname()[1]),
                       data_socket)
    if control_socket is not None and token is not None:
        apps.append(("control", EngineControlApp(control, token.value, hosts),
                     control_socket))
    mocks_loaded = engine.snapshot.mock_count
    mocks_dropped = 0
    if options.full:
        try:
            setup_django(options)
            mocks_loaded, mocks_dropped = start_control_plane(options, config)
        except StartupFailure as failure:
            print(failure.message, file=sys.stderr)
            return failure.exit_code
        except Exception as error:  # noqa: BLE001 - one clear line instead of a traceback
            print(f"cannot start the admin side: {error}", file=sys.stderr)
            return EXIT_LISTEN_ERROR
        from mockd_project.middleware import build_admin_application

        apps.append(("admin", build_admin_application(auth_enabled=not options.no_auth,
                                                      hosts=hosts),
                     admin_socket))
    try:
        workers.finish(options, control, supervisor)
    except StartupFailure as failure:
        print(failure.message, file=sys.stderr)
        return failure.exit_code
    data_port = data_socket.getsockname()[1] if data_socket is not None else None
    runtime.ports = {"data": data_port} if data_port is not None else {}
    if control_socket is not None:
        runtime.ports["control"] = control_socket.getsockname()[1]
    if admin_socket is not None:
        runtime.ports["admin"] = admin_socket.getsockname()[1]
    if https_socket is not None:
        runtime.ports["https"] = https_socket.getsockname()[1]
    runtime.tls_listeners = set(contexts) & set(runtime.ports)
    runtime.ready = True
    pid_file = None
    if options.full:
        from mockd_project import daemon

        pid_file = daemon.pid_file_path(options.pid_file)

    def announce() -> None:
        if options.print_url:
            print(_url(options.host, data_port), flush=True)
        if options.join and token is not None:
            workers.join(options, token.value, control, runtime.ports["control"])
        if not options.quiet:
            lines = ([f"Mock server running on {_url(options.host, data_port)}"]
                     if data_port is not None else [])
            if options.workers > 1:
                lines.append(f"Workers: {options.workers} engine processes on port "
                             f"{data_port}")
            if https_socket is not None:
                lines.append(f"HTTPS mock server running on "
                             f"{_url(options.host, runtime.ports['https'], 'https')}")
            if options.full:
                admin_url = _url(options.host, runtime.ports['admin'],
                                 'https' if admin_tls else 'http')
                lines.append(f"Admin API running on {admin_url}")
                lines.append(f"Dashboard: {admin_url}/")
            if mocks_dropped:
                from mockd_project import daemon

                lines.append(daemon.dropped_mocks_note(mocks_dropped))
            lines.append("Press Ctrl+C to stop")
            print("\n".join(lines), file=sys.stderr if options.print_url else sys.stdout,
                  flush=True)
            if token is not None:
                # Where the token is, never the token itself.
                print(f"Engine control on {_url('127.0.0.1', runtime.ports['control'])}, "
                      f"token (X-Engine-Token) {token.describe()}", file=sys.stderr, flush=True)
        if pid_file is not None:
            from mockd_project import daemon

            daemon.write_pid_file(pid_file, host=options.host, ports=runtime.ports,
                                  config_file=options.config, mocks_loaded=mocks_loaded,
                                  data_dir=runtime.data_dir, persist=runtime.persist,
                                  api_key_source=_api_key_source(options),
                                  dropped_mocks=mocks_dropped,
                                  tls_listeners=runtime.tls_listeners)
            daemon.ensure_superuser_in_background()
        resume_collector()  # paused by the server commands while they start

    try:
        if options.server == "daphne":
            return _run_daphne(apps, announce)
        return _run_uvicorn(apps, options, announce,
                            {name: (context, admin_tls if name == "admin" else tls)
                             for name, context in contexts.items()})
    finally:
        if supervisor is not None:
            supervisor.stop()
        if pid_file is not None:
            from mockd_project import daemon

            daemon.remove_pid_file(pid_file)
        if token is not None:
            token.discard()


def _run_uvicorn(apps: list[tuple[str, Any, socket.socket]], options: RunOptions,
                 announce: Any,
                 tls: dict[str, tuple[ssl.SSLContext, TlsSettings]] | None = None) -> int:
    """Serve ``apps`` with uvicorn on one loop; the listeners named in ``tls`` serve HTTPS
    with the given context and the protocols of :func:`mockd_project.tls.tls_protocols`."""
    import uvicorn

    try:
        import uvloop
        loop_factory = uvloop.new_event_loop
    except ImportError:  # pragma: no cover - uvloop ships with uvicorn[standard]
        loop_factory = asyncio.new_event_loop

    from mockd_project.bounded_http import bounded_head, bounded_httptools

    servers = []
    for name, app, sock in apps:
        http: Any = bounded_httptools()
        # The data plane's WebSocket library is imported on its first upgrade.
        ws: Any = "none" if name not in ("data", "https") else lazy_websocket_protocol
        tls_options: dict[str, Any] = {}
        if tls and name in tls:
            from mockd_project.tls import tls_protocols

            context, settings = tls[name]
            https, wss = tls_protocols(settings)
            http = bounded_head(https)
            ws = wss if ws != "none" else ws
            # config.load() takes the ready context from the factory.
            tls_options["ssl_context_factory"] = lambda _config, _default, c=context: c
        config = uvicorn.Config(app, lifespan="off", http=http, loop="none",
                                log_level=options.log_level, access_log=False,
                                server_header=False, timeout_graceful_shutdown=1,
                                # a local mock server has no trusted proxy in front of it
                                proxy_headers=False,
                                ws=ws,
                                # Compression of WebSocket messages costs ~34 KiB of zlib
                                # state per connection and CPU per message; a mock server on
                                # localhost gains nothing from it (clients fall back to
                                # uncompressed frames, as the protocol allows).
                                ws_per_message_deflate=False,
                                # serverConfig.maxConnections: past it uvicorn answers 503.
                                limit_concurrency=(options.max_connections
                                                   if name in ("data", "https") else None),
                                **tls_options)
        servers.append((uvicorn.Server(config), sock))

    async def main() -> None:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        for server, sock in servers:
            server.config.load()
            server.lifespan = server.config.lifespan_class(server.config)
            await server.startup(sockets=[sock])
        if getattr(runtime.control, "engine", None) is not None:  # none: --engines-only
            # Listener services (gRPC, MQTT, ...) of the first snapshot start on this loop.
            await runtime.control.engine.listeners.reconcile(
                runtime.control.engine.snapshot.services)
        announce()
        tasks = [asyncio.create_task(server.main_loop()) for server, _ in servers]
        waiter = asyncio.create_task(stop.wait())
        await asyncio.wait([waiter, *tasks], return_when=asyncio.FIRST_COMPLETED)
        for server, _ in servers:
            server.should_exit = True
        if getattr(runtime.control, "engine", None) is not None:
            from mocks.engine.shutdown import end_connections

            # SSE `event: shutdown` then the end, other streams end, WebSocket close 1001
            await end_connections(runtime.control)
        for hook in list(runtime.shutdown_hooks):
            try:
                await hook()
            except Exception:  # noqa: BLE001 - one failing hook must not keep the rest open
                logging.getLogger("mockd.runner").exception("shutdown hook %r failed", hook)
        await asyncio.gather(*tasks, return_exceptions=True)
        if getattr(runtime.control, "engine", None) is not None:
            await runtime.control.engine.listeners.stop_all()
        await asyncio.gather(*(server.shutdown(sockets=[sock]) for server, sock in servers),
                             return_exceptions=True)
        waiter.cancel()

    loop = loop_factory()
    asyncio.set_event_loop(loop)
    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    return 0


def _run_daphne(apps: list[tuple[str, Any, socket.socket]], announce: Any) -> int:
    """Serve the same ASGI apps under daphne: one reactor, one app routed by local port."""
    from daphne.server import Server
    from twisted.internet import reactor

    by_port = {sock.getsockname()[1]: app for _, app, sock in apps}
    endpoints = []
    for _, _, sock in apps:
        host, port = sock.getsockname()[:2]
        sock.close()  # daphne binds from endpoint strings; the port was reserved above
        endpoints.append(f"tcp:port={port}:interface={host}")

    async def route_by_port(scope: dict[str, Any], receive: Any, send: Any) -> None:
        server = scope.get("server") or (None, None)
        app = by_port.get(server[1]) or next(iter(by_port.values()))
        await app(scope, receive, send)

    server = Server(application=route_by_port, endpoints=endpoints, signal_handlers=True,
                    verbosity=0, ready_callable=lambda: reactor.callLater(0.05, announce))
    server.run()
    return 0
