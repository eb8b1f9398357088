"""Client commands of the ``mockd`` CLI: they talk to a running server's admin API.

Commands: ``list``, ``http add``, ``add [type]``, ``status``, ``stop``. Every client command
accepts ``--admin-url`` (env ``MOCKD_ADMIN_URL``) and ``--api-key`` (env ``MOCKD_API_KEY``,
else the key file in the data directory) before or after its own arguments. Tables are printed
with rich; an error is one line ``Error: <the server's message>`` on stderr with exit 1.

Source: SPEC "Command-line surface"; behavior notes §15 (``list`` columns and truncation,
``add``/``http add`` flags and output, ``stop`` messages).
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

import click

from mockd_project import daemon
from mockd_project.auth import api_key_path
from mockd_project.cli_sse import apply_sse_options, sse_options
from mockd_project.paths import default_data_dir

DEFAULT_ADMIN_URL = "http://localhost:4290"

#: METHOD column for mocks that are not HTTP (behavior notes §15 "list").
METHOD_LABELS = {"websocket": "WS", "graphql": "GQL", "grpc": "gRPC", "mqtt": "MQTT",
                 "soap": "SOAP", "oauth": "OAUTH"}


class ClientError(click.ClickException):
    """A failed client command: printed as one line ``Error: <message>``, exit 1."""

    def show(self, file: Any = None) -> None:
        """Print ``Error: <message>`` on stderr."""
        click.echo(f"Error: {self.format_message()}", err=True)


class AdminClient:
    """A small httpx client for the admin API.

    Args:
        admin_url: base URL (``http://localhost:4290``).
        api_key: sent as ``X-API-Key`` when given.
        timeout: seconds per request.
    """

    def __init__(self, admin_url: str, api_key: str | None, timeout: float = 15.0):
        import httpx  # imported here: `mockd start` and `--help` never need it

        self._http_error = httpx.HTTPError
        self.admin_url = admin_url.rstrip("/")
        headers = {"X-API-Key": api_key} if api_key else {}
        self._client = httpx.Client(base_url=self.admin_url, headers=headers, timeout=timeout,
                                    trust_env=False)

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        """Send one request; returns the parsed JSON answer (None for 204).

        Raises :class:`ClientError` with the server's ``message`` for an error status, or a
        hint when the server cannot be reached.
        """
        try:
            response = self._client.request(method, path, **kwargs)
        except self._http_error as error:
            raise ClientError(f"cannot reach the mockd admin API at {self.admin_url} "
                              f"({type(error).__name__}); is the server running? Start it "
                              f"with 'mockd start' or pass --admin-url") from None
        if response.status_code >= 400:
            try:
                body = response.json()
                message = body.get("message") or body.get("error") or response.text
            except ValueError:
                message = response.text.strip() or response.reason_phrase
            raise ClientError(f"{message} (HTTP {response.status_code})")
        if response.status_code == 204 or not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            return response.text

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()


def resolve_admin_url(context: click.Context, value: str | None) -> str:
    """Command option > group option > ``$MOCKD_ADMIN_URL`` > ``http://localhost:4290``."""
    group = (context.find_root().obj or {}) if context else {}
    return (value or group.get("admin_url") or os.environ.get("MOCKD_ADMIN_URL")
            or DEFAULT_ADMIN_URL)


def resolve_api_key(context: click.Context, value: str | None) -> str | None:
    """Command option > group option > ``$MOCKD_API_KEY`` > the key file of the default data
    directory > None."""
    group = (context.find_root().obj or {}) if context else {}
    key = value or group.get("api_key") or os.environ.get("MOCKD_API_KEY")
    if key:
        return key
    try:
        return api_key_path(default_data_dir()).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def client_options(function: Callable) -> Callable:
    """``--admin-url`` and ``--api-key`` on a client command (so they may follow its own
    arguments)."""
    function = click.option("--api-key", "api_key", default=None, metavar="KEY",
                            help="Admin API key (env MOCKD_API_KEY).")(function)
    return click.option("--admin-url", "admin_url", default=None, metavar="URL",
                        help="Admin API URL (env MOCKD_ADMIN_URL; default "
                             "http://localhost:4290).")(function)


def make_client(admin_url: str | None, api_key: str | None) -> AdminClient:
    """An :class:`AdminClient` for the current command's options."""
    context = click.get_current_context()
    return AdminClient(resolve_admin_url(context, admin_url), resolve_api_key(context, api_key))


# ---------------------------------------------------------------------------- list


def list_row(mock: dict[str, Any]) -> dict[str, Any]:
    """``{id, name?, type, path?, method?, status?, enabled}`` of one mock (``list --json``)."""
    mock_type = mock.get("type", "http")
    config = mock.get(mock_type) or {}
    row: dict[str, Any] = {"id": mock.get("id", "")}
    if mock.get("name"):
        row["name"] = mock["name"]
    row["type"] = mock_type
    if mock_type == "http":
        matcher = config.get("matcher") or {}
        path = matcher.get("path") or matcher.get("pathPattern")
        if path:
            row["path"] = path
        row["method"] = matcher.get("method") or "*"
        response = config.get("response") or {}
        row["status"] = response.get("statusCode", 200)
    else:
        if mock_type in ("grpc", "mqtt") and config.get("port"):
            row["path"] = f":{config['port']}"
        elif config.get("path"):
            row["path"] = config["path"]
        elif config.get("issuer"):
            row["path"] = config["issuer"]
        row["method"] = METHOD_LABELS.get(mock_type, mock_type.upper())
    row["enabled"] = mock.get("enabled", True) is not False
    return row


def _shorten(text: str, limit: int, keep: int, wide: bool) -> str:
    return text if wide or len(text) <= limit else text[:keep] + "..."


def print_mock_table(mocks: list[dict[str, Any]], wide: bool) -> None:
    """The ``ID TYPE PATH METHOD STATUS ENABLED`` table (ids > 20 -> 17 + ``...``, paths > 25
    -> 22 + ``...`` unless ``wide``)."""
    from rich.console import Console
    from rich.table import Table

    table = Table(box=None, show_edge=False, pad_edge=False, header_style="bold")
    for column in ("ID", "TYPE", "PATH", "METHOD", "STATUS", "ENABLED"):
        table.add_column(column, no_wrap=True, overflow="ignore")
    for mock in mocks:
        row = list_row(mock)
        table.add_row(_shorten(row["id"], 20, 17, wide), row["type"],
                      _shorten(str(row.get("path", "-")), 25, 22, wide), row.get("method", "-"),
                      str(row.get("status", "-")), "true" if row["enabled"] else "false")
    width = None if sys.stdout.isatty() else 1000
    Console(width=width, highlight=False, soft_wrap=True).print(table)


@click.command("list")
@click.option("-t", "--type", "mock_type", default=None, help="Only mocks of this type.")
@click.option("-c", "--config", "config_file", type=click.Path(exists=True, dir_okay=False),
              default=None, help="List the mocks of a config file instead of a server.")
@click.option("-w", "--wide", is_flag=True, help="Do not shorten ids and paths.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@client_options
def list_command(mock_type: str | None, config_file: str | None, wide: bool, as_json: bool,
                 admin_url: str | None, api_key: str | None) -> None:
    """List mocks (including imported ones)."""
    if config_file:
        from mocks.core.errors import ConfigError
        from mocks.loader import load_config_file

        try:
            config = load_config_file(config_file)
        except ConfigError as error:
            raise ClientError(f"config error: {error}") from None
        mocks = [mock.model_dump(mode="json", by_alias=True, exclude_unset=True)
                 for mock in config.mocks]
    else:
        client = make_client(admin_url, api_key)
        try:
            params = {"type": mock_type} if mock_type else None
            mocks = client.request("GET", "/mocks", params=params)["mocks"]
        finally:
            client.close()
    if mock_type:
        mocks = [mock for mock in mocks if mock.get("type") == mock_type]
    if as_json:
        click.echo(json.dumps([list_row(mock) for mock in mocks], indent=2))
    elif not mocks:
        click.echo("No mocks configured")
    else:
        print_mock_table(mocks, wide)


# ---------------------------------------------------------------------------- add


def _pairs(values: tuple[str, ...], flag: str, separators: str = ":") -> dict[str, str]:
    pairs: dict[str, str] = {}
    for value in values:
        position = min((value.find(separator) for separator in separators
                        if value.find(separator) > 0), default=-1)
        if position <= 0:
            raise click.BadParameter(f"{value!r}: expected name{separators[0]}value", param_hint=flag)
        pairs[value[:position].strip()] = value[position + 1:].strip()
    return pairs


def build_http_mock(*, name: str | None, method: str, path: str | None,
                    path_pattern: str | None, status: int, body: str | None,
                    body_file: str | None, headers: tuple[str, ...],
                    match_headers: tuple[str, ...], match_queries: tuple[str, ...],
                    match_body_contains: str | None, priority: int | None,
                    delay: int | None) -> dict[str, Any]:
    """The ``type: http`` mock document ``http add`` sends (behavior notes §15 flags)."""
    matcher: dict[str, Any] = {"method": method.upper()}
    if path:
        matcher["path"] = path
    if path_pattern:
        matcher["pathPattern"] = path_pattern
    if match_headers:
        matcher["headers"] = _pairs(match_headers, "--match-header")
    if match_queries:
        matcher["queryParams"] = _pairs(match_queries, "--match-query", "=:")
    if match_body_contains:
        matcher["bodyContains"] = match_body_contains
    response: dict[str, Any] = {"statusCode": status}
    if headers:
        response["headers"] = _pairs(headers, "-H/--header")
    if body_file:
        response["bodyFile"] = str(Path(body_file).expanduser().resolve())
    elif body is not None:
        response["body"] = body
    if delay:
        response["delayMs"] = delay
    http: dict[str, Any] = {"matcher": matcher, "response": response}
    if priority is not None:
        http["priority"] = priority
    mock: dict[str, Any] = {"type": "http", "http": http}
    if name:
        mock["name"] = name
    return mock


def _same_route(mock: dict[str, Any], method: str, path: str | None,
                path_pattern: str | None) -> bool:
    matcher = ((mock.get("http") or {}).get("matcher")) or {}
    return (str(matcher.get("method") or "").upper() == method.upper()
            and matcher.get("path") == path and matcher.get("pathPattern") == path_pattern)


def http_add_options(function: Callable) -> Callable:
    """The flags shared by ``add`` and ``http add``."""
    options = [
        click.option("-n", "--name", default=None, help="Mock name."),
        click.option("-m", "--method", default="GET", show_default=True, help="HTTP method."),
        click.option("--path", default=None, help="Exact path ({name} captures a segment)."),
        click.option("--path-pattern", default=None, help="Path regular expression."),
        click.option("-s", "--status", type=click.IntRange(100, 599), default=200,
                     show_default=True, help="Response status."),
        click.option("-b", "--body", default=None, help="Response body (templates allowed)."),
        click.option("--body-file", type=click.Path(dir_okay=False), default=None,
                     help="File whose content is the response body."),
        click.option("-H", "--header", "headers", multiple=True, metavar="NAME:VALUE",
                     help="Response header (repeatable)."),
        click.option("--match-header", "match_headers", multiple=True, metavar="NAME:VALUE",
                     help="Required request header (repeatable)."),
        click.option("--match-query", "match_queries", multiple=True, metavar="NAME=VALUE",
                     help="Required query parameter (repeatable)."),
        click.option("--match-body-contains", default=None,
                     help="Required substring of the request body."),
        click.option("--priority", type=click.IntRange(0, None), default=None,
                     help="Tie-breaker between matching mocks (higher wins)."),
        click.option("--delay", type=click.IntRange(0, 30000), default=None,
                     help="Added latency in milliseconds."),
        click.option("--allow-duplicate", is_flag=True,
                     help="Create a new mock even if one has the same method and path."),
        click.option("--json", "as_json", is_flag=True, help="Print the created mock as JSON."),
    ]
    for option in reversed(options):
        function = option(function)
    return client_options(sse_options(function))


def run_http_add(options: dict[str, Any]) -> None:
    """Create (or, for the same method + path, update) one HTTP mock and print the result.

    ``options`` are the command's; an optional ``mock_adjusters`` sequence of callables
    (set by flags other modules add, e.g. ``--table``) each reshape the mock document before
    it is sent. Errors: :class:`click.UsageError` without a path (non-interactive),
    :class:`ClientError` for the server's refusal.
    """
    if not options["path"] and not options["path_pattern"]:
        if not sys.stdin.isatty():
            raise click.UsageError("--path (or --path-pattern) is required")
        options["path"] = click.prompt("Path", default="/")
        options["method"] = click.prompt("Method", default=options["method"])
        options["status"] = click.prompt("Status", default=options["status"], type=int)
        options["body"] = click.prompt("Body", default="", show_default=False) or None
    mock = build_http_mock(
        name=options["name"], method=options["method"], path=options["path"],
        path_pattern=options["path_pattern"], status=options["status"], body=options["body"],
        body_file=options["body_file"], headers=options["headers"],
        match_headers=options["match_headers"], match_queries=options["match_queries"],
        match_body_contains=options["match_body_contains"], priority=options["priority"],
        delay=options["delay"])
    apply_sse_options(mock, options)
    # Flags other modules add to this command reshape the document here (tables/cli.py:
    # --table/--bind, --stateful-operation); each adjuster takes the mock document.
    for adjust in options.get("mock_adjusters", ()):
        adjust(mock)
    client = make_client(options["admin_url"], options["api_key"])
    try:
        existing = None
        if not options["allow_duplicate"]:
            listed = client.request("GET", "/mocks", params={"type": "http"})["mocks"]
            existing = next((item for item in listed if _same_route(
                item, options["method"], options["path"], options["path_pattern"])), None)
        if existing is not None:
            if not options["name"] and existing.get("name"):
                mock["name"] = existing["name"]
            answer = client.request("PUT", f"/mocks/{existing['id']}", json=mock)
            verb = "Updated"
        else:
            answer = client.request("POST", "/mocks", json=mock)
            verb = "Created"
    finally:
        client.close()
    saved = answer.get("mock", answer)
    if options["as_json"]:
        click.echo(json.dumps(saved, indent=2))
        return
    matcher = saved["http"]["matcher"]
    click.echo(f"{verb} mock: {saved['id']}")
    click.echo("  Type: http")
    click.echo(f"  Method: {matcher.get('method', '*')}")
    click.echo(f"  Path: {matcher.get('path') or matcher.get('pathPattern')}")
    binding = saved["http"].get("statefulBinding")
    operation = saved["http"].get("statefulOperation")
    # A bound mock has no response of its own: say what answers instead of a status.
    if binding:
        click.echo(f"  Table: {binding.get('table')}  Action: {binding.get('action')}")
    elif operation:
        click.echo(f"  Operation: {operation}")
    else:
        click.echo(f"  Status: {(saved['http'].get('response') or {}).get('statusCode', 200)}")


@click.group("http")
def http_group() -> None:
    """HTTP mocks."""


@http_group.command("add")
@http_add_options
def http_add(**options: Any) -> None:
    """Add an HTTP mock (the same method + path updates the existing one)."""
    run_http_add(options)


@click.command("add")
@click.argument("mock_type", required=False, default="http", metavar="[TYPE]")
@http_add_options
def add_command(mock_type: str, **options: Any) -> None:
    """Add a mock; TYPE is http (other types arrive with their protocols)."""
    if mock_type != "http":
        raise ClientError(f"'mockd add {mock_type}' is not available yet; use 'mockd add http' "
                          f"or POST the mock to /mocks")
    run_http_add(options)


# ---------------------------------------------------------------------------- status and stop


@click.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@client_options
def status_command(as_json: bool, admin_url: str | None, api_key: str | None) -> None:
    """Show whether the server is running, its ports, mocks and traffic."""
    client = make_client(admin_url, api_key)
    try:
        status = client.request("GET", "/status")
    finally:
        client.close()
    if as_json:
        click.echo(json.dumps(status, indent=2))
        return
    click.echo(f"mockd {status.get('version', '')} is {status.get('status', 'running')}")
    click.echo(f"  Mock server: http://localhost:{status.get('httpPort')}")
    click.echo(f"  Admin API:   http://localhost:{status.get('adminPort')}")
    click.echo(f"  Mocks:       {status.get('mockCount', 0)} "
               f"({status.get('activeMocks', 0)} enabled)")
    click.echo(f"  Requests:    {status.get('requestCount', 0)}")
    click.echo(f"  Uptime:      {status.get('uptime', 0)} s")


@click.command("stop")
@click.argument("component", required=False, type=click.Choice(["admin", "engine"]))
@click.option("--pid-file", type=click.Path(dir_okay=False), default=None,
              help="PID file (default ~/.mockd/mockd.pid).")
@click.option("-f", "--force", is_flag=True, help="Kill at once (SIGKILL).")
@click.option("--timeout", type=click.FloatRange(0, None), default=10.0, show_default=True,
              help="Seconds to wait for the server to exit.")
@client_options
def stop_command(component: str | None, pid_file: str | None, force: bool, timeout: float,
                 admin_url: str | None, api_key: str | None) -> None:
    """Stop a server started with 'mockd start -d' (admin and engine share one process)."""
    sys.exit(daemon.stop(daemon.pid_file_path(pid_file), force=force, timeout=timeout))


def register(group: click.Group) -> None:
    """Add the client commands to the ``mockd`` group."""
    for command in (list_command, http_group, add_command, status_command, stop_command):
        group.add_command(command)
