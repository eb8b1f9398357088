"""The data-plane request as matchers and templates see it.

Source: SPEC "Matcher" (what conditions read) and "Templating" (``request.*`` fields);
SPEC "TLS configuration of the mock server" (the client certificate of an HTTPS request).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Generic, TypeVar
from urllib.parse import unquote_plus

import orjson

#: Marker for "the body is not valid JSON" (distinct from a JSON ``null`` body).
INVALID_JSON: Any = object()

_Value = TypeVar("_Value")

#: Key of the :class:`ClientCertificate` inside the ASGI ``tls`` scope extension (the
#: extension's standard keys carry only PEM text and an RFC 4514 name).
CLIENT_CERT_KEY = "mockd.client_cert"


@dataclass(frozen=True, slots=True)
class ClientCertificate:
    """The subject of the certificate a client presented on an HTTPS connection.

    Built once per connection by the HTTPS listener (``mockd_project.tls``) and shared by every
    request on it. Only verified certificates reach the app: the listener's TLS stack checks
    each certificate it receives against the configured client CAs.

    Attributes:
        cn: the subject's first Common Name (``""`` when it has none).
        ous: every Organizational Unit of the subject, in order.
        o: the subject's first Organization (``""`` when none).
        subject: the whole subject as RFC 4514 text (``CN=client,OU=Team A,O=Acme``).
        issuer: the issuer as RFC 4514 text.
        serial: the serial number in lower-case hex without ``0x``.
    """

    cn: str
    ous: tuple[str, ...]
    o: str
    subject: str
    issuer: str
    serial: str

    def fields(self) -> dict[str, str]:
        """The values a ``clientCert`` matcher reads, by key: ``cn``, ``ou`` (the first OU),
        ``o``, ``subject``, ``issuer``, ``serial``."""
        return {"cn": self.cn, "ou": self.ous[0] if self.ous else "", "o": self.o,
                "subject": self.subject, "issuer": self.issuer, "serial": self.serial}

#: The ``clientCert`` matcher keys (:meth:`ClientCertificate.fields`).
CLIENT_CERT_FIELDS = ("cn", "ou", "o", "subject", "issuer", "serial")


def query_pairs(query: str) -> list[tuple[str, str]]:
    """Decoded ``(name, value)`` pairs of a raw query string, in order, blanks kept.

    The same result as urllib's ``parse_qsl(query, keep_blank_values=True)``, without its
    per-call overhead; decoding only runs when there is something to decode.
    """
    if not query:
        return []
    encoded = "%" in query or "+" in query
    pairs = []
    for part in query.split("&"):
        if not part:
            continue
        name, _, value = part.partition("=")
        if encoded:
            name, value = unquote_plus(name), unquote_plus(value)
        pairs.append((name, value))
    return pairs


class cached_property(Generic[_Value]):  # noqa: N801 - reads like the functools decorator
    """A lock-free cached property: computes once, then the instance ``__dict__`` answers.

    ``functools.cached_property`` takes a lock on every first access in Python 3.11; requests
    are owned by one event loop, so the lock is pure cost on the hot path.
    """

    def __init__(self, function: Callable[[Any], _Value]):
        self.function = function
        self.name = function.__name__
        self.__doc__ = function.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.function(instance)
        return value


class MockRequest:
    """One HTTP request, read once, with lazily decoded views.

    Attributes:
        method: upper-case method (``"GET"``).
        path: URL-decoded path, as in the ASGI scope (``"/api/users/42"``).
        query_string: raw query string without ``?`` (``"a=1&b=2"``).
        header_pairs: list of ``(lower-case name, value)`` str pairs in arrival order (built
            lazily from ``raw_headers`` when the request came from ASGI).
        body: raw body bytes (already capped at the body limit by the app).
        scheme, host: for ``request.url``; ``host`` is the Host header or the server address.
        client: ``"ip:port"`` of the peer, or ``""``.
        tls: the ASGI ``tls`` scope extension of an HTTPS request (``tls_version``,
            ``cipher_suite``, ``client_cert_name``, ... and :data:`CLIENT_CERT_KEY`), or None
            over plain HTTP.

    Lazy views (computed on first use, then cached): :attr:`query` (name -> first value),
    :attr:`query_all` (name -> all values), :attr:`headers` (lower-case name -> first value),
    :attr:`text` (body as UTF-8 with replacement), :attr:`json` (parsed body, or
    :data:`INVALID_JSON`).
    """

    __slots__ = ("method", "path", "query_string", "raw_headers", "body", "scheme", "peer",
                 "server", "origin_header", "seed_header", "tls", "__dict__")

    def __init__(self, method: str, path: str, query_string: str = "",
                 header_pairs: list[tuple[str, str]] | None = None, body: bytes = b"",
                 scheme: str = "http", host: str | None = None, client: str | None = None,
                 raw_headers: list[tuple[bytes, bytes]] | None = None,
                 peer: tuple[str, int] | None = None, server: tuple[str, int] | None = None,
                 tls: dict[str, Any] | None = None):
        self.method = method.upper()
        self.path = path
        self.query_string = query_string
        if header_pairs is not None:
            self.__dict__["header_pairs"] = [(name.lower(), value) for name, value in header_pairs]
        if host is not None:
            self.__dict__["host"] = host
        if client is not None:
            self.__dict__["client"] = client
        #: ASGI header pairs (lower-case name bytes, value bytes); decoded only when read.
        self.raw_headers = raw_headers or []
        self.body = body
        self.scheme = scheme
        #: ASGI ``client`` and ``server`` tuples, formatted only when read.
        self.peer = peer
        self.server = server
        self.tls = tls
        #: The ``Origin`` (CORS) and ``X-Mockd-Seed`` (templating) headers, read on most
        #: requests, so they are found once when the request is built.
        self.origin_header = self.header("origin")
        self.seed_header = self.header("x-mockd-seed")

    @cached_property
    def host(self) -> str:
        """The Host header, else the server address, else ``localhost``."""
        host = self.headers.get("host")
        if host:
            return host
        if self.server:
            return f"{self.server[0]}:{self.server[1]}" if self.server[1] else str(self.server[0])
        return "localhost"

    @cached_property
    def client(self) -> str:
        """``"ip:port"`` of the peer, or ``""``."""
        return f"{self.peer[0]}:{self.peer[1]}" if self.peer else ""

    @cached_property
    def header_pairs(self) -> list[tuple[str, str]]:
        """``(lower-case name, value)`` pairs in arrival order (latin-1 decoded)."""
        return [(name.decode("latin-1").lower(), value.decode("latin-1"))
                for name, value in self.raw_headers]

    @cached_property
    def query_all(self) -> dict[str, list[str]]:
        """Every value of every query parameter, in order (``a=1&a=2&b`` ->
        ``{"a": ["1", "2"], "b": [""]}``; ``+`` and ``%XX`` decoded as in a form)."""
        out: dict[str, list[str]] = {}
        for name, value in query_pairs(self.query_string):
            values = out.get(name)
            if values is None:
                out[name] = [value]
            else:
                values.append(value)
        return out

    @cached_property
    def query(self) -> dict[str, str]:
        """First value of each query parameter (SPEC notes §5: "Query: first value, exact")."""
        if "query_all" in self.__dict__:
            return {name: values[0] for name, values in self.query_all.items()}
        out: dict[str, str] = {}
        for name, value in query_pairs(self.query_string):
            if name not in out:
                out[name] = value
        return out

    @cached_property
    def headers(self) -> dict[str, str]:
        """First value of each header, keyed by lower-case name."""
        out: dict[str, str] = {}
        if "header_pairs" in self.__dict__:
            for name, value in self.header_pairs:
                out.setdefault(name, value)
            return out
        # ASGI header names arrive lower-case already (ASGI spec), so no .lower() here.
        for raw_name, raw_value in self.raw_headers:
            name = raw_name.decode("latin-1")
            if name not in out:
                out[name] = raw_value.decode("latin-1")
        return out

    @classmethod
    def from_scope(cls, scope: dict[str, Any]) -> MockRequest:
        """The request of an ASGI ``http`` scope (body still empty): the hot path's
        constructor, which skips the keyword handling of ``__init__``."""
        request = cls.__new__(cls)
        request.method = scope["method"].upper()  # h11 passes a lower-case method through
        request.path = scope["path"]
        request.query_string = scope["query_string"].decode("latin-1")
        request.raw_headers = scope["headers"]
        request.body = b""
        request.scheme = scope.get("scheme", "http")
        request.peer = scope.get("client")
        request.server = scope.get("server")
        # Plain-HTTP scopes of uvicorn carry no "extensions"; the HTTPS listener adds "tls".
        extensions = scope.get("extensions")
        request.tls = extensions.get("tls") if extensions else None
        # One pass finds the two headers the engine reads on most requests.
        origin = seed = None
        for name, value in request.raw_headers:
            if name == b"origin":
                if origin is None:
                    origin = value.decode("latin-1")
            elif name == b"x-mockd-seed" and seed is None:
                seed = value.decode("latin-1")
        request.origin_header = origin
        request.seed_header = seed
        return request

    def header(self, name: str, encoded: bytes | None = None) -> str | None:
        """First value of header ``name`` (lower-case), or None; scans the raw pairs instead
        of decoding every header when the :attr:`headers` view was not built yet.

        Callers may pass ``encoded`` (``name`` as latin-1 bytes) to skip encoding it.
        """
        state = self.__dict__
        cached = state.get("headers")
        if cached is not None:
            return cached.get(name)
        if "header_pairs" in state:
            return self.headers.get(name)
        wanted = encoded if encoded is not None else name.encode("latin-1")
        for raw_name, raw_value in self.raw_headers:
            if raw_name == wanted:
                return raw_value.decode("latin-1")
        return None

    @property
    def client_cert(self) -> ClientCertificate | None:
        """The certificate the client presented over HTTPS, or None (plain HTTP, or no
        certificate sent)."""
        tls = self.tls
        return tls.get(CLIENT_CERT_KEY) if tls else None

    @cached_property
    def client_cert_fields(self) -> dict[str, str]:
        """:meth:`ClientCertificate.fields` of :attr:`client_cert`; ``{}`` without one."""
        cert = self.client_cert
        return cert.fields() if cert is not None else {}

    @cached_property
    def text(self) -> str:
        """The body decoded as UTF-8 (invalid bytes replaced)."""
        return self.body.decode("utf-8", "replace")

    @cached_property
    def json(self) -> Any:
        """The parsed JSON body, or :data:`INVALID_JSON` when empty or not JSON."""
        if not self.body:
            return INVALID_JSON
        try:
            return orjson.loads(self.body)
        except orjson.JSONDecodeError:
            return INVALID_JSON

    @property
    def url(self) -> str:
        """The full URL: ``scheme://host/path?query``."""
        query = f"?{self.query_string}" if self.query_string else ""
        return f"{self.scheme}://{self.host}{self.path}{query}"
