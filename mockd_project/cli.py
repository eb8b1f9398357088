"""The ``mockd`` command line (SPEC "Command-line surface"; behavior notes §15).

Server commands (``start``/``serve``, ``engine``) run in the foreground through
:func:`mockd_project.runner.run_server`. Client commands talk to the admin API; they and the
protocols' commands (named by the registry, ``ProtocolEntry.cli``: ``mocks/protocols/<name>/
cli.py``) are imported only when they run or their help is shown (:class:`MockdGroup`), so a
client command loads click and the standard library's http.client, never Django, the config models or a protocol library.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from mockd_project import __version__
from mockd_project.cli_lazy import LazyGroup
from tables.state_options import state_store_options, state_store_run_options


def _env_int(name: str, default: int | None) -> int | None:
    value = os.environ.get(name)
    try:
        return int(value) if value else default
    except ValueError:
        raise click.BadParameter(f"{name}={value!r} is not a port number") from None


#: The commands of the project itself (not of a protocol): ``{name: "module:attribute"}``,
#: each imported only when it runs or its help is shown. Protocols add theirs through the
#: registry (:data:`mocks.protocols.PROTOCOLS`, ``ProtocolEntry.cli``).
CLIENT_COMMANDS: dict[str, str] = {
    "list": "mockd_project.cli_client:list_command",
    "add": "mockd_project.cli_client:add_command",
    "status": "mockd_project.cli_client:status_command",
    "stop": "mockd_project.cli_client:stop_command",
    "admin": "mockd_project.cli_admin:admin_group",
    "import": "mocks.cli_portability:import_command",
    "export": "mocks.cli_portability:export_command",
    "stateful": "tables.cli:stateful_group",
    "chaos": "chaos.cli:chaos_group",
    "proxy": "proxy.cli:proxy_group",
    "convert": "recordings.cli:convert_command",
    "recordings": "recordings.cli:recordings_group",
    "stream-recordings": "recordings.stream_cli:stream_recordings_group",
}

#: Options one module adds to another's command: ``{command name: "module:function"}``;
#: the function gets the command before its first use (tables add ``--stateful`` to ``add``
#: and ``http add``).
COMMAND_EXTENSIONS: dict[str, str] = {
    "add": "tables.cli:with_stateful_options",
    "http": "tables.cli:with_stateful_options",
}


def _extend(command: click.Command) -> None:
    """Apply the :data:`COMMAND_EXTENSIONS` entry of ``command``'s name, if any."""
    target = COMMAND_EXTENSIONS.get(command.name or "")
    if target is not None:
        import importlib

        module_name, _, attribute = target.partition(":")
        getattr(importlib.import_module(module_name), attribute)(command)


def protocol_commands() -> dict[str, str]:
    """``{command name: "module:attribute"}`` of the protocols' CLI commands: each registry
    entry with a ``cli`` string, under its mock type (``grpc``, ``mqtt``, ``oauth``...).
    Reads the registry only; imports no protocol."""
    from mocks.protocols import PROTOCOLS

    return {entry.mock_type: entry.cli for entry in PROTOCOLS if entry.cli}


class MockdGroup(LazyGroup):
    """The ``mockd`` group: server commands defined here, client commands
    (:data:`CLIENT_COMMANDS`) and protocol commands (:func:`protocol_commands`) imported
    when they run or their help is shown; suggests the closest command for a typo."""

    _client_commands_known = False

    def _know_client_commands(self) -> None:
        # On first need, so that `mockd --version` and server commands skip the registry.
        if not self._client_commands_known:
            self._client_commands_known = True
            for name, target in {**CLIENT_COMMANDS, **protocol_commands()}.items():
                self.add_lazy_command(name, target)

    def get_command(self, ctx: click.Context, cmd_name: str):
        if cmd_name in CLIENT_COMMANDS:  # the registry is not read for `mockd list`
            self.lazy_commands.setdefault(cmd_name, CLIENT_COMMANDS[cmd_name])
        elif cmd_name not in self.commands:
            self._know_client_commands()
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        self._know_client_commands()
        return super().list_commands(ctx)

    def resolve_command(self, ctx: click.Context, args: list[str]):
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as error:
            import difflib

            name = args[0] if args else ""
            close = difflib.get_close_matches(name, self.list_commands(ctx), n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            raise click.UsageError(f"unknown command {name!r}.{hint} "
                                   f"Run 'mockd --help' for the list of commands.",
                                   ctx) from error


#: Settings of every command's context (inherited by subcommands; given again to a server
#: command run on its own as a management command).
CONTEXT_SETTINGS: dict = {"help_option_names": ["-h", "--help"]}


@click.group(cls=MockdGroup, context_settings=CONTEXT_SETTINGS, extend=_extend)
@click.version_option(__version__, "--version", "-v", prog_name="mockd",
                      message="%(prog)s %(version)s")
@click.option("--admin-url", default=None, metavar="URL",
              help="Admin API of the server client commands talk to "
                   "(env MOCKD_ADMIN_URL; default http://localhost:4290).")
@click.option("--api-key", default=None, metavar="KEY",
              help="Admin API key for client commands (default: the key of the running "
                   "server the PID file names, else --data-dir's key file, else env "
                   "MOCKD_API_KEY).")
@click.option("--data-dir", "client_data_dir", default=None, metavar="DIR",
              type=click.Path(file_okay=False),
              help="Data directory whose admin-api-key client commands use when no running "
                   "server's PID file names one.")
@click.option("--ca-file", "ca_file", default=None, metavar="FILE",
              type=click.Path(dir_okay=False),
              help="CA or certificate PEM client commands trust for an https:// admin URL "
                   "(env MOCKD_CA_FILE; e.g. <data dir>/tls/localhost-cert.pem of "
                   "--admin-tls-auto).")
@click.pass_context
def main(context: click.Context, admin_url: str | None, api_key: str | None,
         client_data_dir: str | None, ca_file: str | None) -> None:
    """mockd: a local, offline, multi-protocol mock server.

    Start it with a config file and point your app at http://localhost:4280:

        mockd start -c examples/quickstart.yaml
    """
    context.ensure_object(dict)
    context.obj["admin_url"] = admin_url
    context.obj["api_key"] = api_key
    context.obj["data_dir"] = client_data_dir
    context.obj["ca_file"] = ca_file


def _server_options(function):
    options = [
        click.option("-c", "--config", "config", type=click.Path(dir_okay=False),
                     default=lambda: os.environ.get("MOCKD_CONFIG"),
                     help="Config file (YAML or JSON)."),
        click.option("--host", default="127.0.0.1", show_default=True,
                     help="Interface to listen on (loopback unless you ask for more)."),
        click.option("--engine-port", type=click.IntRange(0, 65535), default=None,
                     help="Engine-control port of 'mockd engine' (default: first free from "
                          "4281); accepted and ignored by start/serve, which bind none."),
        click.option("--allow-body-files-anywhere", is_flag=True,
                     help="Let bodyFile/dataFile read any file (default: only files inside "
                          "the config file's folder or <data dir>/files); the data directory "
                          "and mockd's secret files stay refused."),
        click.option("--allow-env", "allow_env", multiple=True, metavar="NAME",
                     help="Let the config read this environment variable (a name or a glob "
                          "such as 'API_*'; repeatable; also $MOCKD_ALLOW_ENV). Without it a "
                          "config reads MOCKD_* variables only."),
        click.option("--allow-remote-imports", is_flag=True,
                     help="Fetch the config's imports that name a url (default: refused)."),
        click.option("--server", type=click.Choice(["uvicorn", "daphne"]), default="uvicorn",
                     show_default=True, help="ASGI server for the listeners."),
        click.option("--log-level", default=None,
                     type=click.Choice(["debug", "info", "warn", "warning", "error"]),
                     help="Log level."),
        click.option("--cors-origins", default=None,
                     help="Comma-separated origins allowed by CORS on the mock server "
                          "(default: loopback origins; '*' for any)."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


#: ``--mtls-client-auth`` values (behavior notes §14 ``mtls.clientAuth``).
MTLS_CLIENT_AUTH = ("none", "request", "require", "verify-if-given", "require-and-verify")


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _tls_options(function):
    """HTTPS of the mock port and the admin port (SPEC "TLS configuration of the mock
    server"; behavior notes §15 ``--https-port``, ``--tls-*``, ``--mtls-*``)."""
    options = [
        click.option("--https-port", type=click.IntRange(0, 65535),
                     default=lambda: _env_int("MOCKD_HTTPS_PORT", None),
                     help="HTTPS port of the mock server, serving the same mocks as --port "
                          "(env MOCKD_HTTPS_PORT; default: the config's, else none). Without "
                          "--tls-cert it uses the self-signed certificate of --tls-auto."),
        click.option("--tls-cert", type=click.Path(dir_okay=False), default=None,
                     help="PEM certificate (chain) of the HTTPS port."),
        click.option("--tls-key", type=click.Path(dir_okay=False), default=None,
                     help="PEM private key of --tls-cert (unencrypted)."),
        click.option("--tls-auto", is_flag=True, default=lambda: _env_flag("MOCKD_AUTO_CERT"),
                     help="Use a self-signed certificate for localhost, 127.0.0.1 and ::1, "
                          "generated once into <data dir>/tls/ (env MOCKD_AUTO_CERT)."),
        click.option("--mtls-client-auth", type=click.Choice(MTLS_CLIENT_AUTH), default=None,
                     help="Client certificates on the HTTPS port: none, request, require, "
                          "verify-if-given, require-and-verify (needs --mtls-ca)."),
        click.option("--mtls-ca", multiple=True, type=click.Path(dir_okay=False),
                     help="PEM file of a CA that signs client certificates (repeatable)."),
        click.option("--admin-tls-cert", type=click.Path(dir_okay=False), default=None,
                     help="PEM certificate of the admin port, which then serves HTTPS only."),
        click.option("--admin-tls-key", type=click.Path(dir_okay=False), default=None,
                     help="PEM private key of --admin-tls-cert."),
        click.option("--admin-tls-auto", is_flag=True,
                     help="Serve the admin port over HTTPS with the self-signed localhost "
                          "certificate of --tls-auto (clients trust it with --ca-file "
                          "<data dir>/tls/localhost-cert.pem)."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def _tls_run_options(flags: dict) -> dict:
    """RunOptions keywords of the :func:`_tls_options` flags."""
    return {"https_port": flags.get("https_port"), "tls_cert": flags.get("tls_cert"),
            "tls_key": flags.get("tls_key"), "tls_auto": bool(flags.get("tls_auto")),
            "mtls_client_auth": flags.get("mtls_client_auth"),
            "mtls_cas": tuple(flags.get("mtls_ca") or ()),
            "admin_tls_cert": flags.get("admin_tls_cert"),
            "admin_tls_key": flags.get("admin_tls_key"),
            "admin_tls_auto": bool(flags.get("admin_tls_auto"))}


def _cors_origins(value: str | None) -> list[str] | None:
    return [item.strip() for item in value.split(",") if item.strip()] if value else None


#: Key of the parsed chaos flags in the click context's ``meta``.
CHAOS_META = "mockd.chaos"


def _chaos_latency(context: click.Context, parameter: click.Parameter, value: str | None):
    if value is None:
        return None
    from mocks.core.durations import parse_duration_range_ms

    try:
        return parse_duration_range_ms(value)
    except ValueError as error:
        raise click.BadParameter(f"{error} (expected a range such as 10ms-100ms)") from None


def _chaos_profile(context: click.Context, parameter: click.Parameter, value: str | None):
    if value is None:
        return None
    from chaos.profiles import PROFILES

    if value not in PROFILES:
        raise click.BadParameter(f"chaos profile not found: {value} (one of "
                                 f"{', '.join(sorted(PROFILES))})")
    return value


def _chaos_options(function):
    """``--chaos-enabled``, ``--chaos-latency``, ``--chaos-error-rate``, ``--chaos-profile``
    (behavior notes §15); the parsed flags go to ``context.meta[CHAOS_META]`` as a
    :class:`chaos.startup.ChaosFlags` (read by :func:`_chaos_flags`)."""
    import functools

    @functools.wraps(function)
    def wrapper(*args, chaos_enabled=False, chaos_latency=None, chaos_error_rate=None,
                chaos_profile=None, **kwargs):
        if chaos_profile is not None and (chaos_enabled or chaos_latency is not None
                                          or chaos_error_rate is not None):
            raise click.UsageError("--chaos-profile cannot be combined with --chaos-enabled, "
                                   "--chaos-latency or --chaos-error-rate")
        if chaos_enabled or chaos_latency is not None or chaos_error_rate is not None \
                or chaos_profile is not None:
            # Only with a flag: a start without chaos never imports the chaos config.
            from chaos.startup import ChaosFlags

            click.get_current_context().meta[CHAOS_META] = ChaosFlags(
                chaos_enabled, chaos_latency, chaos_error_rate, chaos_profile)
        return function(*args, **kwargs)

    options = [
        click.option("--chaos-enabled", is_flag=True,
                     help="Inject faults from the config's serverConfig.chaos (any chaos "
                          "flag turns chaos on)."),
        click.option("--chaos-latency", default=None, metavar="MIN-MAX",
                     callback=_chaos_latency,
                     help="Add a random latency to every answer, e.g. 10ms-100ms."),
        click.option("--chaos-error-rate", type=click.FloatRange(0.0, 1.0), default=None,
                     metavar="P", help="Answer this share of requests (0..1) with an error "
                                       "(500 unless serverConfig.chaos.errorRate names codes)."),
        click.option("--chaos-profile", default=None, metavar="NAME", callback=_chaos_profile,
                     help="Apply a named chaos profile (slow-api, degraded, flaky, offline, "
                          "timeout, rate-limited, mobile-3g, satellite, dns-flaky, "
                          "overloaded); not with the other chaos flags."),
    ]
    for option in reversed(options):
        wrapper = option(wrapper)
    return wrapper


def _chaos_flags():
    """The :class:`chaos.startup.ChaosFlags` of the running command (None without them)."""
    context = click.get_current_context(silent=True)
    return context.meta.get(CHAOS_META) if context is not None else None


#: Key of the ``--allowed-host`` names in the click context's ``meta``.
ALLOWED_HOSTS_META = "mockd.allowed_hosts"


def _env_allowed_hosts() -> tuple[str, ...]:
    """``$MOCKD_ALLOWED_HOSTS``: comma-separated host names."""
    raw = os.environ.get("MOCKD_ALLOWED_HOSTS", "")
    return tuple(name.strip() for name in raw.split(",") if name.strip())


def _allowed_host_option(function):
    """``--allowed-host NAME`` (repeatable; env ``MOCKD_ALLOWED_HOSTS``, comma-separated): a
    name the admin and engine-control ports answer besides loopback names and IP addresses
    (the DNS-rebinding guard, docs/security.md). The names go to
    ``context.meta[ALLOWED_HOSTS_META]`` (read by :func:`_allowed_hosts`), so the command
    function keeps its parameters."""
    import functools

    @functools.wraps(function)
    def wrapper(*args, allowed_host=(), **kwargs):
        click.get_current_context().meta[ALLOWED_HOSTS_META] = tuple(allowed_host)
        return function(*args, **kwargs)

    return click.option(
        "--allowed-host", "allowed_host", multiple=True, metavar="NAME",
        default=_env_allowed_hosts,
        help="Host name the admin and engine-control ports answer besides localhost and IP "
             "addresses (repeatable; env MOCKD_ALLOWED_HOSTS, comma-separated; '*' for any). "
             "Other Host headers get 400: a guard against DNS rebinding.")(wrapper)


def _allowed_hosts() -> tuple[str, ...]:
    """The ``--allowed-host`` names of the running command."""
    context = click.get_current_context(silent=True)
    return context.meta.get(ALLOWED_HOSTS_META, ()) if context is not None else ()


def child_argv(context: click.Context, drop: frozenset[str] = frozenset()) -> list[str]:
    """The arguments that repeat this command's command-line options for a child process:
    ``[<command name>, --option value, --flag, ...]``, for every parameter given on the
    command line (not those from the environment, which the child inherits), except ``drop``.
    Values are passed as parsed (paths as given; the child runs in the same folder)."""
    from click.core import ParameterSource

    argv = [context.info_name or context.command.name]
    for parameter in context.command.params:
        if (not isinstance(parameter, click.Option) or parameter.name in drop
                or context.get_parameter_source(parameter.name) != ParameterSource.COMMANDLINE):
            continue
        value = context.params[parameter.name]
        flag = max(parameter.opts, key=len)
        if parameter.is_flag:
            if value:
                argv.append(flag)
        elif parameter.multiple:
            for item in value or ():
                argv += [flag, str(item)]
        elif value is not None:
            argv += [flag, str(value)]
    return argv


#: Key of the ``--workers``/split-mode flags' values in the click context's ``meta``.
FLEET_META = "mockd.fleet"


def _fleet_options(engine: bool):
    """Add ``--workers N|auto`` and the split-mode flags (``start``: ``--engines-only``;
    ``engine``: ``--join``, ``--api-key``, ``--engine-host``, ``--engine-url``) to a server
    command; their values go to the click context (:func:`_fleet_run_options`)."""
    def parse_workers(context: click.Context, parameter: click.Parameter,
                      value: str | None) -> int:
        from mockd_project.workers import parse_workers as parse

        try:
            return parse(value)
        except ValueError as error:
            raise click.BadParameter(str(error)) from None

    def decorate(function):
        import functools

        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            names = (("workers", "join", "join_api_key", "engine_host", "engine_url")
                     if engine else ("workers", "engines_only", "allow_remote_engines"))
            click.get_current_context().meta[FLEET_META] = {
                name: kwargs.pop(name) for name in names}
            return function(*args, **kwargs)

        options = [click.option("--workers", default=None, metavar="N|auto",
                                callback=parse_workers,
                                help="Engine processes serving the mock-server port (default "
                                     "1; auto: one per CPU core). Tables, sequence() and "
                                     "identity-provider mocks then need --state-store.")]
        if engine:
            options += [
                click.option("--join", default=None, metavar="ADMIN_URL",
                             help="Register with the admin at ADMIN_URL (split mode); it "
                                  "pushes its config at once and every change after. No -c "
                                  "needed."),
                click.option("--api-key", "join_api_key", default=None, metavar="KEY",
                             help="Admin API key for --join (env MOCKD_API_KEY)."),
                click.option("--engine-host", default="127.0.0.1", show_default=True,
                             help="Interface of the engine-control port (an admin on another "
                                  "machine needs a reachable one, and --allowed-host for "
                                  "the name it uses)."),
                click.option("--engine-url", default=None, metavar="URL",
                             help="URL the admin reaches this engine-control port at "
                                  "(default http://<engine-host>:<port>).")]
        else:
            options.append(click.option(
                "--engines-only", is_flag=True,
                help="Run the admin without an engine of its own: it drives the engines that "
                     "join it (mockd engine --join)."))
            options.append(click.option(
                "--allow-remote-engines", is_flag=True,
                help="With --host on loopback (the default): let POST /engines register "
                     "engines at non-loopback URLs (replicas on other machines)."))
        for option in reversed(options):
            wrapper = option(wrapper)
        return wrapper

    return decorate


def _fleet_run_options() -> dict:
    """The :func:`_fleet_options` values of the running command, as ``RunOptions``
    keywords (none without them)."""
    context = click.get_current_context(silent=True)
    return dict((context.meta.get(FLEET_META) if context is not None else None) or {})


def _start(config, port, admin_port, host, engine_port, data_dir, no_auth, server,
           log_level, detach=False, pid_file=None, max_log_entries=None,
           no_persist=False, cors_origins=None, allow_body_files_anywhere=False,
           merge=False, tls_flags=None, trust_flags=None) -> None:
    if merge and not config:
        raise click.UsageError("--merge needs -c/--config: it adds the file's mocks to the "
                               "stored ones")
    if detach:
        from mockd_project import daemon

        # The child is `mockd start` with the same options, whichever way this one was
        # started (`mockd serve`, `python manage.py runmocks`, options before the command).
        argv = child_argv(click.get_current_context(), frozenset({"detach"}))
        argv[0] = "start"
        sys.exit(daemon.detach(argv, daemon.pid_file_path(pid_file)))
    from mockd_project.engine_start import pause_collector, skip_pydantic_plugin_scan

    skip_pydantic_plugin_scan()  # before the runner's imports build the first config model
    pause_collector()  # until ready (the runner resumes it)
    from mockd_project.runner import RunOptions, run_server

    options = RunOptions(full=True, config=config, host=host, port=port, admin_port=admin_port,
                         allowed_hosts=_allowed_hosts(),
                         engine_port=engine_port, data_dir=data_dir, no_auth=no_auth,
                         server=server, log_level=_level(log_level, "warning"),
                         pid_file=pid_file, max_log_entries=max_log_entries,
                         no_persist=no_persist, cors_origins=_cors_origins(cors_origins),
                         allow_body_files_anywhere=allow_body_files_anywhere, merge=merge,
                         chaos=_chaos_flags(), **state_store_run_options(),
                         **_fleet_run_options(),
                         **_tls_run_options(tls_flags or {}),
                         **_trust_run_options(trust_flags or {}))
    sys.exit(run_server(options))


def _trust_run_options(flags: dict) -> dict:
    """RunOptions keywords of ``--allow-env`` and ``--allow-remote-imports`` (what a config
    from someone else may reach; docs/security.md)."""
    return {"allow_env": tuple(flags.get("allow_env") or ()),
            "allow_remote_imports": bool(flags.get("allow_remote_imports"))}


def _level(value: str | None, default: str) -> str:
    value = value or default
    return "warning" if value == "warn" else value


def _start_command(name: str, help_text: str):
    @main.command(name, help=help_text)
    @_server_options
    @click.option("-p", "--port", type=click.IntRange(0, 65535),
                  default=lambda: _env_int("MOCKD_PORT", None), show_default="4280",
                  help="Mock server (data plane) port (env MOCKD_PORT, else the config's "
                       "serverConfig.httpPort).")
    @click.option("-a", "--admin-port", type=click.IntRange(0, 65535),
                  default=lambda: _env_int("MOCKD_ADMIN_PORT", None), show_default="4290",
                  help="Admin API port (env MOCKD_ADMIN_PORT, else the config's "
                       "serverConfig.adminPort).")
    @click.option("--data-dir", type=click.Path(file_okay=False), default=None,
                  help="Data directory (default $MOCKD_DATA_DIR or ~/.local/share/mockd).")
    @click.option("--no-auth", is_flag=True, help="Do not require an admin API key.")
    @click.option("-d", "--detach", is_flag=True,
                  help="Run in the background (output to ~/.mockd/daemon.log).")
    @click.option("--pid-file", type=click.Path(dir_okay=False), default=None,
                  help="PID file (default ~/.mockd/mockd.pid).")
    @click.option("--max-log-entries", type=click.IntRange(0, None), default=None,
                  help="Request-log capacity (default 1000; env MOCKD_MAX_LOG_ENTRIES).")
    @click.option("--no-persist", is_flag=True,
                  help="Keep definitions in memory only (nothing written to the data dir "
                       "but the API key).")
    @_tls_options
    @click.option("--merge", is_flag=True,
                  help="With -c: also load the stored mocks the file does not define (added "
                       "at run time); a stored mock with a file mock's id is replaced by the "
                       "file's. Without it, -c replaces the stored definitions.")
    @_chaos_options
    @state_store_options
    @_fleet_options(engine=False)
    @_allowed_host_option
    def command(config, host, engine_port, allow_body_files_anywhere, allow_env,
                allow_remote_imports, server, log_level, cors_origins, port, admin_port,
                data_dir, no_auth, detach, pid_file, max_log_entries, no_persist, merge,
                **tls_flags):
        _start(config, port, admin_port, host, engine_port, data_dir, no_auth, server, log_level,
               detach, pid_file, max_log_entries, no_persist, cors_origins,
               allow_body_files_anywhere, merge, tls_flags,
               {"allow_env": allow_env, "allow_remote_imports": allow_remote_imports})

    return command


start_command = _start_command("start",
                               "Start the mock server and the admin API in the foreground.")
_start_command("serve", "Alias of 'start'.")


@main.command("engine")
@_server_options
@click.option("-p", "--port", type=click.IntRange(0, 65535), default=None, show_default="4280",
              help="Mock server port; 0 picks a free port (default: the config's "
                   "serverConfig.httpPort, else 4280).")
@click.option("--print-url", is_flag=True, help="Print the mock server URL on stdout.")
@click.option("--engine-token", default=None, metavar="TOKEN",
              help="Token the engine-control port requires in X-Engine-Token (env "
                   "MOCKD_ENGINE_TOKEN; default: generated into <data dir>/engine-token with "
                   "--data-dir, else into a runtime file deleted at exit).")
@click.option("--data-dir", type=click.Path(file_okay=False), default=None,
              help="Data directory: engine-token file; its files/ folder is one bodyFile may "
                   "read from (default $MOCKD_DATA_DIR or ~/.local/share/mockd).")
@_chaos_options
@state_store_options
@_fleet_options(engine=True)
@_allowed_host_option
def engine_command(config, host, engine_port, allow_body_files_anywhere, allow_env,
                   allow_remote_imports, server, log_level, cors_origins, port, print_url,
                   engine_token, data_dir):
    """Headless engine: data plane and a token-protected engine-control port on loopback; no
    admin API, database or PID file, and no file left behind (a generated engine token lives
    in the runtime directory until the engine stops, unless --data-dir keeps it there)."""
    from mockd_project.engine_start import pause_collector, skip_pydantic_plugin_scan

    skip_pydantic_plugin_scan()  # before the runner's imports build the first config model
    pause_collector()  # until ready (the runner resumes it)
    from mockd_project.runner import RunOptions, run_server

    fleet = _fleet_run_options()
    if not config and not fleet.get("join") and not os.environ.get("MOCKD_WORKER_INDEX"):
        raise click.UsageError("'mockd engine' needs a config file: -c/--config FILE (or "
                               "--join ADMIN_URL)")
    options = RunOptions(full=False, config=config, host=host, port=port,
                         allowed_hosts=_allowed_hosts(),
                         engine_port=engine_port, print_url=print_url, server=server,
                         log_level=_level(log_level, "warning"),
                         cors_origins=_cors_origins(cors_origins), engine_token=engine_token,
                         data_dir=data_dir,
                         allow_body_files_anywhere=allow_body_files_anywhere,
                         chaos=_chaos_flags(), **state_store_run_options(), **fleet,
                         **_trust_run_options({"allow_env": allow_env,
                                               "allow_remote_imports": allow_remote_imports}))
    sys.exit(run_server(options))


@main.command("schema")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Write the schema to FILE instead of standard output.")
def schema_command(output: str | None) -> None:
    """Print the JSON Schema of the config file (the same document as GET /config/schema).

    Built from the config models at run time, so editors and CI can validate files against
    exactly what this mockd accepts.
    """
    import json

    from mocks.control.config_schema import config_json_schema

    text = json.dumps(config_json_schema(), indent=2) + "\n"
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        with open(output, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as error:
        raise click.ClickException(f"cannot write {output}: {error.strerror or error}") \
            from None
    click.echo(f"Wrote the config schema to {output}", err=True)


#: Django management commands that are the same command as a ``mockd`` server command.
MANAGEMENT_ALIASES = {"runmocks": "start", "runengine": "engine"}


def run_management_alias(name: str, args: list[str], program: str = "manage.py") -> None:
    """Run ``python manage.py runmocks|runengine ARGS`` as ``mockd start|engine ARGS``: one
    command definition, the same options, help and exit statuses. Never returns (exits with
    the command's status). Raises :class:`KeyError` for a name not in
    :data:`MANAGEMENT_ALIASES`.

    ``manage.py`` calls this before Django reads its settings, so that ``--data-dir`` and
    ``--no-persist`` decide which database the settings name (the runner sets
    ``MOCKD_DATA_DIR`` before setting Django up).
    """
    command = main.commands[MANAGEMENT_ALIASES[name]]
    command.main(args=list(args), prog_name=f"{Path(program).name} {name}",
                 **CONTEXT_SETTINGS)


if __name__ == "__main__":  # pragma: no cover
    main()
