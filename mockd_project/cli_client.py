"""Client commands of the ``mockd`` CLI: they talk to a running server's admin API.

Commands: ``list``, ``http add``, ``add [type]``, ``status``, ``stop``. Every client command
accepts ``--admin-url``, ``--api-key`` and ``--data-dir`` before or after its own arguments.

Which server and which key (:func:`resolve_admin_url`, :func:`lookup_api_key`): the admin URL
is ``--admin-url``, else ``$MOCKD_ADMIN_URL``, else the one the PID file of a running server
records, else ``http://localhost:4290``. The key is ``--api-key``, else the key of the server
the PID file describes when that is the server being talked to (its data directory's key file,
or ``$MOCKD_API_KEY`` when that server takes its key from there), else the key file of
``--data-dir``, else ``$MOCKD_API_KEY``, else the key file of the default data directory. A 401
answer names every place looked in. Tables are printed with rich; an error is one line
``Error: <the server's message>`` on stderr with exit 1.

Source: SPEC "Command-line surface"; behavior notes §15 (``list`` columns and truncation,
``add``/``http add`` flags and output, ``stop`` messages).
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable
from urllib.parse import quote, urlsplit

import click

from mockd_project import daemon
from mockd_project.auth import api_key_path
from mocks.protocols.streaming.cli import apply_sse_options, sse_options
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


@dataclass
class KeyLookup:
    """The admin key a client command sends, and where it was looked for.

    Attributes:
        key: the key, or None (no key found, or the server needs none).
        trail: one entry per place looked in, in order, the last being where ``key`` came
            from (``PID file ~/.mockd/mockd.pid -> data dir D -> D/admin-api-key``,
            ``MOCKD_API_KEY not set``).
    """

    key: str | None = field(repr=False)
    trail: list[str]

    def describe(self) -> str:
        """The trail as one line: ``place; place; ...``, ending with whether
        ``$MOCKD_API_KEY`` is set when the trail did not get that far."""
        trail = list(self.trail)
        if not any("MOCKD_API_KEY" in step for step in trail):
            trail.append("MOCKD_API_KEY set (not used)" if os.environ.get("MOCKD_API_KEY")
                         else "MOCKD_API_KEY not set")
        return "; ".join(trail)


def _transport_error_name(stage: str, error: BaseException) -> str:
    """What a failure at ``stage`` (``connect``, ``send`` or ``read``) is called in the
    "cannot reach" message: the names the admin client has always printed (those of httpx's
    exceptions: ``ConnectError``, ``ConnectTimeout``, ``ReadTimeout``,
    ``RemoteProtocolError``...)."""
    from http.client import HTTPException

    names = (("connect", TimeoutError, "ConnectTimeout"), ("connect", OSError, "ConnectError"),
             ("send", TimeoutError, "WriteTimeout"), ("send", OSError, "WriteError"),
             ("read", TimeoutError, "ReadTimeout"), ("read", HTTPException, "RemoteProtocolError"),
             ("read", OSError, "ReadError"))
    for where, kind, name in names:
        if stage == where and isinstance(error, kind):
            return name
    return type(error).__name__


#: Failures of a kept connection that mean the server closed it while it was idle.
_STALE_CONNECTION = frozenset({"RemoteProtocolError", "ReadError", "WriteError"})


class _TransportError(Exception):
    """A request that got no answer; ``name`` is what the message calls it."""

    def __init__(self, name: str, cause: BaseException):
        super().__init__(f"{name}: {cause}")
        self.name = name
        self.cause = cause


#: Characters kept as they are in a request path (RFC 3986 ``pchar``, ``/`` and ``%``).
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"


def _query_value(value: Any) -> str:
    """A query parameter value as text: ``true``/``false`` for booleans, ``""`` for None."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    return "" if value is None else str(value)


def _query_string(params: Any) -> str:
    """``params`` (a mapping whose values may be lists, or a list of pairs) URL-encoded."""
    from urllib.parse import urlencode

    items = params.items() if hasattr(params, "items") else params
    pairs = [(str(name), _query_value(item)) for name, value in items
             for item in (value if isinstance(value, (list, tuple)) else [value])]
    return urlencode(pairs)


@dataclass
class AdminResponse:
    """One answer of the admin API as :meth:`AdminClient.fetch` returns it.

    Attributes:
        status_code: the HTTP status.
        headers: the response headers, names lower-cased (a repeated header's values joined
            with ``, ``).
        content: the body, bytes as sent (no content decoding is asked for).
        reason_phrase: the status line's reason (``Not Found``).
    """

    status_code: int
    headers: dict[str, str]
    content: bytes = field(repr=False)
    reason_phrase: str = ""

    @property
    def text(self) -> str:
        """The body decoded with the ``Content-Type`` charset (UTF-8 when none is named;
        undecodable bytes replaced)."""
        charset = "utf-8"
        for part in self.headers.get("content-type", "").split(";")[1:]:
            name, _, value = part.strip().partition("=")
            if name.lower() == "charset" and value:
                charset = value.strip('"')
        try:
            return self.content.decode(charset, errors="replace")
        except LookupError:
            return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The body parsed as JSON; raises ValueError when it is not JSON."""
        return json.loads(self.content)


class AdminClient:
    """A small client for the admin API, on the standard library (``http.client``, ``ssl``,
    ``json``): a client command starts without importing an HTTP library.

    One connection is kept for the requests of one command (and opened again when the server
    closed it). Proxies from the environment are never used; redirects are not followed.

    Args:
        admin_url: base URL (``http://localhost:4290``, ``https://host:port/prefix``).
        api_key: sent as ``X-API-Key`` when given.
        timeout: seconds to connect, and seconds each send or read of a request may wait.
        key_lookup: where ``api_key`` was looked for; a 401 answer names it.
        ca_file: PEM file of the CA (or the self-signed certificate) an ``https://`` admin URL
            is checked against, besides the system CAs (``--ca-file``); without it an
            ``https://`` URL is checked against the certifi bundle (the system CAs when
            certifi is not installed).

    Raises :class:`ClientError` when ``ca_file`` cannot be read or ``admin_url`` is not an
    ``http://`` or ``https://`` URL.
    """

    def __init__(self, admin_url: str, api_key: str | None, timeout: float = 15.0,
                 key_lookup: KeyLookup | None = None, ca_file: str | None = None):
        self.admin_url = admin_url.rstrip("/")
        self.key_lookup = key_lookup
        self.timeout = timeout
        parts = urlsplit(self.admin_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ClientError(f"the admin URL {admin_url!r} is not an http:// or https:// "
                              f"URL (--admin-url)")
        self._scheme = parts.scheme
        self._host = parts.hostname
        try:
            self._port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            raise ClientError(f"the admin URL {admin_url!r} has a bad port (--admin-url)") \
                from None
        self._prefix = parts.path.rstrip("/")
        self._headers = {"Accept": "*/*", "User-Agent": "mockd-cli"}
        if api_key:
            self._headers["X-API-Key"] = api_key
        self._ssl_context: Any = None
        if parts.scheme == "https":
            self._ssl_context = self._tls_context(ca_file)
        self._connection: Any = None

    @staticmethod
    def _tls_context(ca_file: str | None) -> Any:
        """The TLS context of an ``https://`` admin URL (see the class docstring)."""
        if ca_file:
            from mockd_project.tls import TlsSetupError, client_context

            try:
                return client_context(ca_file)
            except TlsSetupError as error:
                raise ClientError(f"{error} (--ca-file)") from None
        import ssl

        try:
            import certifi
        except ImportError:
            return ssl.create_default_context()
        return ssl.create_default_context(cafile=certifi.where())

    def _connect(self) -> Any:
        import http.client

        if self._scheme == "https":
            return http.client.HTTPSConnection(self._host, self._port, timeout=self.timeout,
                                               context=self._ssl_context)
        return http.client.HTTPConnection(self._host, self._port, timeout=self.timeout)

    def _target(self, path: str, params: Any) -> str:
        """The request target: the URL's path prefix, ``path`` (characters a URL may not
        hold percent-encoded, escapes kept) and the query."""
        path, mark, query = path.partition("?")
        target = quote(self._prefix + (path if path.startswith("/") else "/" + path),
                       safe=_PATH_SAFE)
        query = quote(query, safe=_PATH_SAFE + "?") if mark else ""
        extra = _query_string(params) if params else ""
        query = "&".join(part for part in (query, extra) if part)
        return f"{target}?{query}" if query else target

    @staticmethod
    def _body(json_body: Any, content: Any, headers: dict[str, str]) -> bytes | None:
        if json_body is not None:
            headers.setdefault("Content-Type", "application/json")
            return json.dumps(json_body, ensure_ascii=False, separators=(",", ":"),
                              allow_nan=False).encode("utf-8")
        if content is None:
            return None
        return content.encode("utf-8") if isinstance(content, str) else bytes(content)

    def _exchange(self, method: str, target: str, body: bytes | None,
                  headers: dict[str, str]) -> AdminResponse:
        """One request on the kept connection (a new one when there is none); raises
        :class:`_TransportError` when no answer arrives."""
        import http.client

        if self._connection is None:
            self._connection = self._connect()
            try:
                self._connection.connect()
            except OSError as error:
                self.close()
                raise _TransportError(_transport_error_name("connect", error), error) from None
        connection = self._connection
        try:
            connection.request(method, target, body=body, headers=headers)
        except OSError as error:
            self.close()
            raise _TransportError(_transport_error_name("send", error), error) from None
        try:
            answer = connection.getresponse()
            content = answer.read()
        except (OSError, http.client.HTTPException) as error:
            self.close()
            raise _TransportError(_transport_error_name("read", error), error) from None
        headers_seen: dict[str, str] = {}
        for name, value in answer.getheaders():
            key = name.lower()
            headers_seen[key] = f"{headers_seen[key]}, {value}" if key in headers_seen \
                else value
        if answer.will_close:
            self.close()
        return AdminResponse(answer.status, headers_seen, content, answer.reason or "")

    def fetch(self, method: str, path: str, *, params: Any = None, json: Any = None,
              content: bytes | str | None = None,
              headers: dict[str, str] | None = None) -> AdminResponse:
        """Send one request and return the whole answer (status, headers, bytes), for a
        caller that needs more than the parsed JSON (an export's file, a header).

        Keywords as httpx's: ``params`` (query parameters, added to any in ``path``),
        ``json`` (a JSON body), ``content`` (a raw body, bytes or text), ``headers`` (added
        to ``X-API-Key``). Raises
        :class:`ClientError` with the server's ``message`` for a status of 400 or more (for
        401, followed by where the key was looked for), or the hint of :meth:`request` when
        the server cannot be reached or its certificate is not trusted.
        """
        sent = dict(self._headers)
        sent.update(headers or {})
        body = self._body(json, content, sent)
        target = self._target(path, params)
        reused = self._connection is not None
        try:
            try:
                response = self._exchange(method, target, body, sent)
            except _TransportError as error:
                # A kept connection the server closed while idle: one more try on a new one.
                if not reused or error.name not in _STALE_CONNECTION:
                    raise
                response = self._exchange(method, target, body, sent)
        except _TransportError as error:
            if "CERTIFICATE_VERIFY_FAILED" in str(error.cause):
                raise ClientError(f"the admin API at {self.admin_url} presented a certificate "
                                  f"this client does not trust; pass --ca-file with its CA "
                                  f"or certificate PEM (for --admin-tls-auto: "
                                  f"<data dir>/tls/localhost-cert.pem)") from None
            raise ClientError(f"cannot reach the mockd admin API at {self.admin_url} "
                              f"({error.name}); is the server running? Start it "
                              f"with 'mockd start' or pass --admin-url") from None
        if response.status_code >= 400:
            raise ClientError(self._error_message(response))
        return response

    def _error_message(self, response: AdminResponse) -> str:
        """``<the server's message> (HTTP <status>)``, for 401 followed by the key trail."""
        try:
            document = response.json()
        except ValueError:
            message = response.text.strip() or response.reason_phrase
        else:
            message = ((document.get("message") or document.get("error"))
                       if isinstance(document, dict) else None) or response.text
        message = f"{message} (HTTP {response.status_code})"
        if response.status_code == 401 and self.key_lookup is not None:
            message += (f"; looked in: {self.key_lookup.describe()}; pass --api-key or "
                        f"run 'mockd admin key'")
        return message

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        """Send one request; returns the parsed JSON answer (None for 204 or an empty body,
        the text when the body is not JSON). Keywords as :meth:`fetch`.

        Raises :class:`ClientError` with the server's ``message`` for an error status (for
        401, followed by where the key was looked for and what to do), or a hint when the
        server cannot be reached (``cannot reach the mockd admin API at URL (ConnectError);
        is the server running? ...``) or presents a certificate this client does not trust
        (``... pass --ca-file ...``).
        """
        response = self.fetch(method, path, **kwargs)
        if response.status_code == 204 or not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            return response.text

    def close(self) -> None:
        """Close the kept connection (the client stays usable: the next request opens one)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def shown_path(path: Path | str) -> str:
    """``path`` with the home folder written ``~``, for messages."""
    text = str(path)
    home = str(Path.home())
    return "~" + text[len(home):] if home not in ("", "/") and (
        text == home or text.startswith(home + os.sep)) else text


def running_server() -> tuple[Path, dict[str, Any] | None, str]:
    """The default PID file, its document when its process is alive (else None), and a
    note for messages when it is not (``none``, ``PID 123 not running``)."""
    path = daemon.pid_file_path()
    document = daemon.read_pid_file(path)
    if document is None:
        return path, None, "none"
    if not daemon.process_alive(document["pid"]):
        return path, None, f"PID {document['pid']} not running"
    return path, document, ""


def _recorded_admin_url(document: dict[str, Any] | None) -> str | None:
    admin = ((document or {}).get("components") or {}).get("admin") or {}
    if admin.get("url"):
        return str(admin["url"])
    if admin.get("port"):
        return daemon.local_url(str(admin.get("host") or "127.0.0.1"), int(admin["port"]))
    return None


_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0", "::", ""})


def same_server(url: str, other: str) -> bool:
    """Whether two admin URLs reach the same listener on this machine: same port, and the
    same host or both local (``localhost``, ``127.0.0.1``, ``::1``)."""
    first, second = urlsplit(url), urlsplit(other)
    try:
        ports = first.port or 80, second.port or 80
    except ValueError:
        return False
    hosts = (first.hostname or "").lower(), (second.hostname or "").lower()
    return ports[0] == ports[1] and (hosts[0] == hosts[1]
                                     or (hosts[0] in _LOCAL_HOSTS and hosts[1] in _LOCAL_HOSTS))


def _root_options(context: click.Context | None) -> dict[str, Any]:
    if context is None:
        return {}
    root = context.find_root()
    return root.obj if isinstance(root.obj, dict) else {}


def resolve_admin_url(context: click.Context | None, value: str | None) -> str:
    """Command option > group option > ``$MOCKD_ADMIN_URL`` > the admin URL in the PID file
    of a running server > ``http://localhost:4290``."""
    group = _root_options(context)
    explicit = value or group.get("admin_url") or os.environ.get("MOCKD_ADMIN_URL")
    if explicit:
        return explicit
    _, document, _ = running_server()
    return _recorded_admin_url(document) or DEFAULT_ADMIN_URL


def _read_key(path: Path) -> tuple[str | None, str]:
    """The key in ``path`` and a note for the trail (``""``, ``missing``, ``empty``, ...)."""
    try:
        key = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None, "missing"
    except OSError as error:
        return None, f"unreadable: {error.strerror or error}"
    return (key, "") if key else (None, "empty")


def lookup_api_key(context: click.Context | None, value: str | None,
                   admin_url: str | None = None) -> KeyLookup:
    """The admin key for a client command talking to ``admin_url`` (None: the URL
    :func:`resolve_admin_url` gives), and where it was looked for. Order:

    1. ``--api-key`` (command or group option);
    2. the default PID file, when its server is alive and is the one at ``admin_url``: none
       for a ``--no-auth`` server, ``$MOCKD_API_KEY`` for a server that takes its key from
       there, else the key file of its data directory;
    3. ``<--data-dir>/admin-api-key``;
    4. ``$MOCKD_API_KEY``;
    5. the key file of the default data directory (``$MOCKD_DATA_DIR``, XDG, ``~/.local/...``).

    Never raises; a missing or unreadable file is noted in the trail.
    """
    group = _root_options(context)
    explicit = value or group.get("api_key")
    if explicit:
        return KeyLookup(explicit, ["--api-key"])
    target = admin_url or resolve_admin_url(context, None)
    trail: list[str] = []
    pid_path, document, note = running_server()
    place = f"PID file {shown_path(pid_path)}"
    recorded = _recorded_admin_url(document)
    environment_key = os.environ.get("MOCKD_API_KEY", "").strip()
    if document is None:
        trail.append(f"{place} ({note})")
    elif recorded is None or not same_server(recorded, target):
        trail.append(f"{place} (its server's admin API is {recorded}, not {target})")
    else:
        key_info = document.get("apiKey") or {}
        source = key_info.get("source", "file")
        if source == "none":
            return KeyLookup(None, [f"{place} (the server runs with --no-auth)"])
        if source == "MOCKD_API_KEY":
            step = f"{place} -> the server takes its key from MOCKD_API_KEY"
            if environment_key:
                return KeyLookup(environment_key, [step])
            trail.append(f"{step}, which is not set here")
        elif document.get("dataDir") or key_info.get("file"):
            data_dir = document.get("dataDir")
            key_file = Path(key_info.get("file") or api_key_path(data_dir))
            step = (f"{place} -> data dir {shown_path(data_dir)} -> {shown_path(key_file)}"
                    if data_dir else f"{place} -> {shown_path(key_file)}")
            key, problem = _read_key(key_file)
            if key:
                return KeyLookup(key, [step])
            trail.append(f"{step} ({problem})")
        else:
            trail.append(f"{place} (names no data dir)")
    if group.get("data_dir"):
        key_file = api_key_path(Path(group["data_dir"]).expanduser())
        step = f"--data-dir {shown_path(key_file.parent)} -> {shown_path(key_file)}"
        key, problem = _read_key(key_file)
        if key:
            return KeyLookup(key, trail + [step])
        trail.append(f"{step} ({problem})")
    if environment_key:
        return KeyLookup(environment_key, trail + ["MOCKD_API_KEY"])
    trail.append("MOCKD_API_KEY not set")
    key_file = api_key_path(default_data_dir())
    step = f"default data dir -> {shown_path(key_file)}"
    key, problem = _read_key(key_file)
    if key:
        return KeyLookup(key, trail + [step])
    trail.append(f"{step} ({problem})")
    return KeyLookup(None, trail)


def resolve_api_key(context: click.Context | None, value: str | None,
                    admin_url: str | None = None) -> str | None:
    """The key :func:`lookup_api_key` finds (None when none is found or needed)."""
    return lookup_api_key(context, value, admin_url).key


def _remember_data_dir(context: click.Context, parameter: click.Parameter,
                       value: str | None) -> None:
    if value is not None:
        root = context.find_root()
        root.ensure_object(dict)
        root.obj["data_dir"] = value


def data_dir_option(function: Callable) -> Callable:
    """``--data-dir D``: where client commands look for the admin key when no running
    server's PID file names it (kept in the root context; not passed to the command)."""
    return click.option("--data-dir", type=click.Path(file_okay=False), default=None,
                        expose_value=False, callback=_remember_data_dir, is_eager=True,
                        help="Data directory whose admin-api-key to use when the PID file "
                             "names no running server.")(function)


def ca_file_option(function: Callable) -> Callable:
    """``--ca-file FILE``: the CA (or self-signed certificate) PEM an ``https://`` admin URL
    is verified with (kept in the root context; not passed to the command)."""
    def remember(context: click.Context, parameter: click.Parameter, value: str | None) -> None:
        if value is not None:
            context.find_root().ensure_object(dict)["ca_file"] = value

    return click.option("--ca-file", type=click.Path(dir_okay=False), default=None,
                        expose_value=False, callback=remember, is_eager=True,
                        help="CA or certificate PEM trusted for an https:// admin URL "
                             "(env MOCKD_CA_FILE).")(function)


def resolve_ca_file(context: click.Context | None) -> str | None:
    """``--ca-file`` (command or group option), else ``$MOCKD_CA_FILE``, else None."""
    return _root_options(context).get("ca_file") or os.environ.get("MOCKD_CA_FILE") or None


def client_options(function: Callable) -> Callable:
    """``--admin-url``, ``--api-key``, ``--data-dir`` and ``--ca-file`` on a client command
    (so they may follow its own arguments)."""
    function = ca_file_option(data_dir_option(function))
    function = click.option("--api-key", "api_key", default=None, metavar="KEY",
                            help="Admin API key (env MOCKD_API_KEY).")(function)
    return click.option("--admin-url", "admin_url", default=None, metavar="URL",
                        help="Admin API URL (env MOCKD_ADMIN_URL; default: the running "
                             "server's, else http://localhost:4290).")(function)


def make_client(admin_url: str | None, api_key: str | None,
                timeout: float = 15.0) -> AdminClient:
    """An :class:`AdminClient` for the current command's options (see the module docstring
    for how the URL and the key are found)."""
    context = click.get_current_context()
    url = resolve_admin_url(context, admin_url)
    lookup = lookup_api_key(context, api_key, url)
    return AdminClient(url, lookup.key, timeout=timeout, key_lookup=lookup,
                       ca_file=resolve_ca_file(context))


def call_admin(admin_url: str | None, api_key: str | None, method: str, path: str,
               **kwargs: Any) -> Any:
    """One admin API request for the current command (:func:`make_client`, then
    :meth:`AdminClient.request` with ``kwargs``, then close): the parsed answer, or
    :class:`ClientError` with the server's message."""
    client = make_client(admin_url, api_key)
    try:
        return client.request(method, path, **kwargs)
    finally:
        client.close()


def print_json(document: Any) -> None:
    """Print an admin API answer as indented JSON (``--json``)."""
    click.echo(json.dumps(document, indent=2, ensure_ascii=False))


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
        response["body"] = read_body_file(body_file, response.get("headers") or {})
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


def read_body_file(path: str, headers: dict[str, str]) -> Any:
    """The response body ``--body-file`` gives: the file's content, sent inline (the server
    reads ``bodyFile`` paths only inside its config folder and data directory). Parsed JSON
    when the ``Content-Type`` header among ``headers`` names JSON and the content parses;
    else the text. Raises :class:`ClientError` when the file cannot be read or is not UTF-8
    text."""
    file = Path(path).expanduser()
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ClientError(f"--body-file {path}: not UTF-8 text; serve binary files with "
                          f"bodyFile in a config file next to them") from None
    except OSError as error:
        raise ClientError(f"--body-file {path}: cannot read it "
                          f"({error.strerror or error})") from None
    content_type = next((value for name, value in headers.items()
                         if name.lower() == "content-type"), "")
    if "json" in content_type.lower():
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text


#: Matcher keys that place a mock (its route); every other matcher key is a condition.
ROUTE_KEYS = frozenset({"method", "path", "pathPattern"})


def matcher_conditions(matcher: dict[str, Any]) -> dict[str, Any]:
    """The conditions of a matcher besides its method and path (headers, query parameters,
    body and JSONPath conditions), empty values left out."""
    return {key: value for key, value in (matcher or {}).items()
            if key not in ROUTE_KEYS and value not in (None, "", {}, [])}


def _same_route(mock: dict[str, Any], method: str, path: str | None,
                path_pattern: str | None) -> bool:
    matcher = ((mock.get("http") or {}).get("matcher")) or {}
    return (str(matcher.get("method") or "").upper() == method.upper()
            and matcher.get("path") == path and matcher.get("pathPattern") == path_pattern)


def _describe_conditions(mock: dict[str, Any]) -> str:
    """``'id' (name) matching on headers, bodyJsonPath`` for messages."""
    text = f"'{mock['id']}'" + (f" ({mock['name']})" if mock.get("name") else "")
    conditions = sorted(matcher_conditions(mock["http"]["matcher"]))
    return text + (f" matching on {', '.join(conditions)}" if conditions
                   else " with no other conditions")


def mock_to_update(listed: list[dict[str, Any]], document: dict[str, Any], *,
                   replace: bool) -> dict[str, Any] | None:
    """The stored mock that adding ``document`` (an HTTP mock) updates, or None to create one.

    Among ``listed`` mocks with the same method and path (or path pattern): the one whose
    other conditions equal the new matcher's is updated. When every such mock has other
    conditions, adding would drop them: with ``replace`` the first is updated, otherwise
    :class:`ClientError` names them and says what to pass (``--replace`` or
    ``--allow-duplicate``).
    """
    matcher = document["http"]["matcher"]
    method = str(matcher.get("method") or "")
    same = [item for item in listed
            if _same_route(item, method, matcher.get("path"), matcher.get("pathPattern"))]
    if not same:
        return None
    wanted = matcher_conditions(matcher)
    for item in same:
        if matcher_conditions(item["http"]["matcher"]) == wanted:
            return item
    if replace:
        return same[0]
    route = f"{method or '*'} {matcher.get('path') or matcher.get('pathPattern')}"
    described = "; ".join(_describe_conditions(item) for item in same)
    raise ClientError(f"{route} already has {'a mock' if len(same) == 1 else 'mocks'} with "
                      f"other conditions: {described}; this add would replace "
                      f"'{same[0]['id']}' and drop its conditions. Pass --replace to replace "
                      f"it, or --allow-duplicate to add a new mock beside it")


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
                     help="File whose content is the response body (read now and sent "
                          "inline; JSON when -H 'Content-Type: application/json')."),
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
        click.option("--replace", is_flag=True,
                     help="Replace the mock with the same method and path even when its "
                          "other conditions (headers, query, body) differ."),
        click.option("--json", "as_json", is_flag=True, help="Print the created mock as JSON."),
    ]
    for option in reversed(options):
        function = option(function)
    return client_options(sse_options(function))


def run_http_add(options: dict[str, Any]) -> None:
    """Create (or, for the same method + path, update) one HTTP mock and print the result.

    An existing mock with the same method and path but other conditions is not replaced
    unless ``--replace`` is given (see :func:`mock_to_update`).

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
            existing = mock_to_update(listed, mock, replace=options.get("replace", False))
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
    """Add an HTTP mock (the same method + path and conditions updates the existing one)."""
    run_http_add(options)


@click.command("add")
@click.argument("mock_type", required=False, default="http", metavar="[TYPE]")
@http_add_options
def add_command(mock_type: str, **options: Any) -> None:
    """Add a mock; TYPE is http (other types arrive with their protocols)."""
    if mock_type == "websocket":
        raise ClientError("'mockd add websocket' takes other flags: use 'mockd websocket add "
                          "--path /ws ...' (see 'mockd websocket add --help')")
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
