"""The recording proxy: an HTTP/1.1 forward proxy on asyncio streams and httptools.

One :class:`ProxyServer` listens on its own port in the server's event loop. Per client
connection, an httptools (llhttp) request parser reads requests; the proxy writes heads
itself, one write per direction when a body is there, and re-frames bodies for the client's
HTTP version (chunked, or delimited by closing for HTTP/1.0):

* absolute-form requests (``GET http://host/path``) are forwarded to the origin over a
  keep-alive upstream connection (:class:`_Origin`, answers parsed by httptools; TLS for
  ``https://``);
* ``CONNECT host:port`` is *intercepted* when a CA is loaded, the mode needs to see the traffic
  (``record``, ``playback``) and the host passes the host filters: the proxy answers 200, speaks
  TLS to the client with a leaf certificate minted for the host, and serves the requests inside
  as above (origin-form, upstream over TLS). Otherwise the bytes are tunnelled blind;
* in ``record`` mode a CONNECT tunnel whose client speaks HTTP/2 (the h2c preface, or TLS
  with ALPN ``h2`` when intercepted) is relayed by :func:`proxy.grpc.relay_h2`, each gRPC
  call becoming a ``grpc`` recording;
* a WebSocket upgrade is forwarded (the upstream side with h11), and after ``101`` bytes are
  relayed both ways; in
  ``record`` mode the frames are parsed (wsproto) into a stream recording (source ``proxy``);
  ``Sec-WebSocket-Extensions`` is not forwarded then, so frames are never compressed;
* a ``text/event-stream`` answer is relayed chunk by chunk and, in ``record`` mode, its events
  become an SSE stream recording.

Bodies stream through in both directions; a recording keeps at most ``body_cap`` bytes of each
(``bodyTruncated``). HTTP recordings are built and stored by the background
:class:`~proxy.writer.RecordingWriter` (at once when nothing else is in flight). Modes: ``record`` (forward and record), ``passthrough`` (forward only),
``playback`` (answer from the session's HTTP recordings, :mod:`proxy.playback`; nothing
matching: 502 ``no_recording``, or forwarded with ``fallthrough: forward``). Errors the proxy
answers itself are JSON ``{"error", "message"}``: 502 ``upstream_unreachable`` /
``upstream_tls_error``, 508 ``proxy_loop`` (a request aimed at the proxy itself), 400
``not_a_proxy_request`` (an origin-form request on the proxy port), 413 ``body_too_large``.

Limits: request heads 64 KiB; :data:`MAX_CONNECTIONS` client connections; an idle client
connection is closed after :data:`IDLE_TIMEOUT` s; connecting upstream times out after
:data:`CONNECT_TIMEOUT` s and waiting for a response head after :data:`RESPONSE_TIMEOUT` s.

Source: SPEC "Proxy" (records or replays HTTP traffic; HTTPS recorded only when the client
trusts the CA, tunnelled otherwise), "Proxy and stream recording"; behavior notes §1.

Django-free; everything runs on one event loop (the server's).
"""
from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import socket
import ssl
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Callable
from urllib.parse import urlsplit

import h11
import httptools
import orjson

from proxy.recording import (DEFAULT_BODY_CAP, BodyTap, Filters, RecordingRedaction, SSEParser,
                             WebSocketTap, b64, header_lists)
from proxy.writer import RecordingWriter

log = logging.getLogger("mockd.proxy")

MODES = ("record", "passthrough", "playback")
FALLTHROUGHS = ("502", "forward")
MAX_HEAD = 64 * 1024
MAX_CONNECTIONS = 1000
IDLE_TIMEOUT = 120.0
CONNECT_TIMEOUT = 10.0
RESPONSE_TIMEOUT = 300.0
TLS_HANDSHAKE_TIMEOUT = 15.0
#: Seconds to wait for a tunnel's first client bytes (TLS, HTTP/2 preface) in record mode.
FIRST_BYTES_WAIT = 2.0
#: Largest request body playback buffers to compare with recordings (beyond it: 413).
PLAYBACK_BODY_LIMIT = 10 * 1024 * 1024
READ_SIZE = 64 * 1024

#: Headers that describe one hop, never forwarded (RFC 9110 §7.6.1, plus the proxy ones).
HOP_BY_HOP = frozenset({b"connection", b"keep-alive", b"proxy-connection",
                        b"proxy-authorization", b"proxy-authenticate", b"te", b"trailer",
                        b"transfer-encoding", b"upgrade"})


class UpstreamError(Exception):
    """The origin could not be reached (``code`` ``upstream_unreachable`` or
    ``upstream_tls_error``)."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class ProxySettings:
    """Everything a :class:`ProxyServer` runs with.

    Attributes:
        host, port: where it listens (port 0: any free port).
        mode: ``record``, ``passthrough`` or ``playback`` (may change while running).
        session_id, session_name: the HTTP recording session recordings go to.
        filters: recording filters (may change while running).
        ca: a :class:`proxy.ca.CertificateAuthority`, or None (CONNECT is tunnelled).
        upstream_context: client TLS context for origins (verification as configured).
        fallthrough: ``502`` or ``forward`` (playback with no matching recording).
        body_cap: bytes of each body a recording keeps.
        redaction: how recordings are redacted.
        store: returns the recording store (``recordings.store.current``).
        upstream_h2_context: as ``upstream_context`` with ALPN ``h2`` (gRPC over TLS).
    """

    host: str = "127.0.0.1"
    port: int = 8888
    mode: str = "record"
    session_id: str | None = None
    session_name: str = "default"
    filters: Filters = field(default_factory=Filters)
    ca: Any = None
    upstream_context: ssl.SSLContext | None = None
    fallthrough: str = "502"
    body_cap: int = DEFAULT_BODY_CAP
    redaction: RecordingRedaction = field(default_factory=RecordingRedaction)
    store: Callable[[], Any] | None = None
    upstream_h2_context: ssl.SSLContext | None = None


def upstream_context(ca_file: str | None = None, insecure: bool = False,
                     alpn: tuple[str, ...] = ("http/1.1",)) -> ssl.SSLContext:
    """The client TLS context for origins: the system store (and ``SSL_CERT_FILE`` /
    ``SSL_CERT_DIR``), plus ``ca_file`` when given; ``insecure`` verifies nothing; ``alpn``:
    the protocols offered (``h2`` for gRPC).
    Raises :class:`OSError` / :class:`ssl.SSLError` when ``ca_file`` cannot be loaded."""
    context = ssl.create_default_context()
    if ca_file:
        context.load_verify_locations(cafile=ca_file)
    if insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    context.set_alpn_protocols(list(alpn))
    return context


def _json_error(status: int, code: str, message: str) -> tuple[int, list[tuple[bytes, bytes]],
                                                                   bytes]:
    body = orjson.dumps({"error": code, "message": message})
    return status, [(b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode())], body


def _connection_tokens(headers: list[tuple[bytes, bytes]]) -> set[bytes]:
    tokens: set[bytes] = set()
    for name, value in headers:
        if name.lower() == b"connection":
            tokens.update(token.strip().lower() for token in value.split(b","))
    return tokens


def _strip_hop(headers: list[tuple[bytes, bytes]], keep: frozenset[bytes] = frozenset()
               ) -> list[tuple[bytes, bytes]]:
    """``headers`` without the hop-by-hop ones (and those ``Connection`` names), except
    ``keep``."""
    lowered = [name.lower() for name, _ in headers]
    named = _connection_tokens(headers) - keep if b"connection" in lowered else frozenset()
    return [pair for pair, name in zip(headers, lowered)
            if (name not in HOP_BY_HOP or name in keep) and name not in named]


def _header(headers: list[tuple[bytes, bytes]], wanted: bytes) -> bytes | None:
    for name, value in headers:
        if name.lower() == wanted:
            return value
    return None


def _split_authority(authority: str, default_port: int) -> tuple[str, int]:
    """``(host, port)`` of ``host[:port]`` / ``[v6][:port]``; raises ValueError."""
    parts = urlsplit("//" + authority)
    host = parts.hostname
    if not host:
        raise ValueError(f"no host in {authority!r}")
    return host, parts.port or default_port


async def _open(scheme: str, host: str, port: int, context: ssl.SSLContext | None
                ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection to ``host:port`` (TLS for ``https``/``wss``, verified with ``context``);
    raises :class:`UpstreamError` (``upstream_unreachable``, ``upstream_tls_error``)."""
    tls = None
    if scheme in ("https", "wss"):
        tls = context or upstream_context()
    try:
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(host, port, ssl=tls, limit=READ_SIZE,
                                    server_hostname=host if tls else None),
            CONNECT_TIMEOUT)
    except ssl.SSLCertVerificationError as error:
        raise UpstreamError("upstream_tls_error",
                            f"the certificate of {host}:{port} was not accepted: "
                            f"{error.verify_message or error.reason}; trust its CA with "
                            f"upstreamCa (--upstream-ca) or set insecureUpstream") from None
    except ssl.SSLError as error:
        raise UpstreamError("upstream_tls_error",
                            f"TLS with {host}:{port} failed: {error.reason}") from None
    except (OSError, asyncio.TimeoutError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror \
            else type(error).__name__
        raise UpstreamError("upstream_unreachable",
                            f"cannot connect to {host}:{port}: {reason}") from None
    return reader, writer


class Upstream:
    """One connection to an origin, speaking HTTP/1.1 through an h11 client connection."""

    def __init__(self, key: tuple[str, str, int], reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter):
        self.key = key
        self.reader = reader
        self.writer = writer
        self.conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD)

    @classmethod
    async def open(cls, scheme: str, host: str, port: int,
                   context: ssl.SSLContext | None) -> "Upstream":
        """Connect (TLS for ``https``); raises :class:`UpstreamError`."""
        reader, writer = await _open(scheme, host, port, context)
        return cls((scheme, host.lower(), port), reader, writer)

    def send(self, event: Any) -> None:
        """Serialize ``event`` onto the connection."""
        data = self.conn.send(event)
        if data:
            self.writer.write(data)

    async def next_event(self, timeout: float | None = None) -> Any:
        """The next h11 event from the origin (reads as needed)."""
        while True:
            event = self.conn.next_event()
            if event is not h11.NEED_DATA:
                return event
            if timeout is None:
                data = await self.reader.read(READ_SIZE)
            else:
                data = await asyncio.wait_for(self.reader.read(READ_SIZE), timeout)
            self.conn.receive_data(data)

    @property
    def reusable(self) -> bool:
        """True when both directions ended cleanly and the origin keeps the connection."""
        return self.conn.our_state is h11.DONE and self.conn.their_state is h11.DONE

    def close(self) -> None:
        """Close the socket (no wait)."""
        with contextlib.suppress(Exception):
            self.writer.close()


class _Stop(Exception):
    """End this client connection (its peer is gone or it cannot go on)."""


class _Watchdog:
    """A lazily re-armed timer: :meth:`arm` and :meth:`disarm` only set a deadline (no timer
    handle per read); ``action`` runs once the loop time passes an armed deadline."""

    __slots__ = ("_loop", "_action", "_deadline", "_handle")

    def __init__(self, action: Callable[[], None]):
        self._loop = asyncio.get_running_loop()
        self._action = action
        self._deadline: float | None = None
        self._handle: asyncio.TimerHandle | None = None

    def arm(self, seconds: float) -> None:
        """Run the action in ``seconds`` s unless disarmed (or re-armed) before."""
        self._deadline = self._loop.time() + seconds
        if self._handle is None:
            self._handle = self._loop.call_at(self._deadline, self._fire)

    def disarm(self) -> None:
        """Forget the deadline."""
        self._deadline = None

    def cancel(self) -> None:
        """Disarm and drop the timer."""
        self._deadline = None
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _fire(self) -> None:
        self._handle = None
        if self._deadline is None:
            return
        if self._loop.time() >= self._deadline:
            self._deadline = None
            self._action()
        else:
            self._handle = self._loop.call_at(self._deadline, self._fire)


#: The end of a message body (an event of the parsers below).
_END = object()
#: The peer closed the connection.
_CLOSED = object()


class _BadMessage(Exception):
    """Bytes that are not HTTP/1.x (or a head beyond :data:`MAX_HEAD`)."""


@dataclass(slots=True)
class _Head:
    """A parsed request head (``method`` upper-case text, ``target`` as sent)."""

    method: str
    target: bytes
    headers: list[tuple[bytes, bytes]]
    http_version: bytes
    keep_alive: bool


class _RequestParser:
    """Client bytes to events (httptools): a :class:`_Head`, body ``bytes``, :data:`_END`.
    After a CONNECT or an upgrade request the bytes that follow the head are kept in
    :attr:`trailing` and nothing more is parsed."""

    __slots__ = ("events", "trailing", "_parser", "_url", "_headers", "_in_head", "_head_size",
                 "_fed")

    def __init__(self) -> None:
        self.events: deque[Any] = deque()
        self.trailing: bytes | None = None
        self._parser = httptools.HttpRequestParser(self)
        self._url = b""
        self._headers: list[tuple[bytes, bytes]] = []
        self._in_head = False
        self._head_size = 0
        self._fed = 0

    def on_message_begin(self) -> None:
        self._url, self._headers, self._in_head, self._head_size = b"", [], True, 0
        self._fed = 0

    def on_url(self, url: bytes) -> None:
        self._url += url
        self._head_size += len(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name, value))
        self._head_size += len(name) + len(value) + 4

    def on_headers_complete(self) -> None:
        parser = self._parser
        self._in_head = False
        self.events.append(_Head(parser.get_method().decode("ascii", "replace").upper(),
                                 self._url, self._headers,
                                 parser.get_http_version().encode("ascii"),
                                 parser.should_keep_alive()))

    def on_body(self, body: bytes) -> None:
        self.events.append(body)

    def on_message_complete(self) -> None:
        self.events.append(_END)

    def feed(self, data: bytes) -> None:
        """Parse ``data``; raises :class:`_BadMessage`."""
        if self.trailing is not None:
            self.trailing += data
            return
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade as upgrade:
            self.trailing = data[upgrade.args[0]:]
        except httptools.HttpParserError as error:
            raise _BadMessage(f"malformed HTTP request: {error}") from None
        if self._in_head:
            # A head still incomplete: bound the bytes fed into it (a loose bound; the
            # exact one counts its parts as they complete).
            self._fed += len(data)
        if self._head_size > MAX_HEAD or self._fed > 2 * MAX_HEAD:
            raise _BadMessage(f"the request head is larger than {MAX_HEAD} bytes")


class _ResponseParser:
    """Origin bytes to events for one exchange (httptools): ``(status, reason, headers,
    keep_alive)`` once (informational answers skipped), body ``bytes``, :data:`_END`.
    ``head_only``: the answer to a HEAD request (ends with its head)."""

    __slots__ = ("events", "done", "extra", "keep_alive", "_parser", "_head_only", "_reason",
                 "_headers", "_head_size")

    def __init__(self, head_only: bool):
        self.events: deque[Any] = deque()
        self.done = False
        self.extra = False
        self.keep_alive = False
        self._parser = httptools.HttpResponseParser(self)
        self._head_only = head_only
        self._reason = b""
        self._headers: list[tuple[bytes, bytes]] = []
        self._head_size = 0

    def on_message_begin(self) -> None:
        if self.done:
            self.extra = True
        self._reason, self._headers = b"", []

    def on_status(self, reason: bytes) -> None:
        self._reason += reason

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.append((name, value))

    def on_headers_complete(self) -> None:
        if self.done:
            return
        status = self._parser.get_status_code()
        if 100 <= status < 200:
            self._headers = []
            return
        self.events.append((status, self._reason, self._headers))
        if self._head_only:
            self._finish()

    def on_body(self, body: bytes) -> None:
        if self.done:
            self.extra = True
        elif self.events or self._headers:
            self.events.append(body)

    def on_message_complete(self) -> None:
        if not self.done and self._parser.get_status_code() >= 200:
            self._finish()

    def _finish(self) -> None:
        self.done = True
        self.keep_alive = self._parser.should_keep_alive()
        self.events.append(_END)

    def feed(self, data: bytes) -> None:
        """Parse ``data``; raises :class:`_BadMessage` (a 101 answer is one too)."""
        if self.done:
            self.extra = True
            return
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            raise _BadMessage("the origin switched protocols unasked") from None
        except httptools.HttpParserError as error:
            raise _BadMessage(f"malformed HTTP answer: {error}") from None
        if not self.events:
            self._head_size += len(data)
            if self._head_size > MAX_HEAD:
                raise _BadMessage(f"the answer head is larger than {MAX_HEAD} bytes")


class _Origin:
    """A keep-alive connection to an origin for forwarded requests (HTTP/1.1 written by
    hand, answers parsed by :class:`_ResponseParser`)."""

    __slots__ = ("key", "reader", "writer", "reusable", "timed_out", "watchdog")

    def __init__(self, key: tuple[str, str, int], reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter):
        self.key = key
        self.reader = reader
        self.writer = writer
        self.reusable = False
        self.timed_out = False
        self.watchdog = _Watchdog(self._expire)

    def _expire(self) -> None:
        self.timed_out = True
        with contextlib.suppress(Exception):
            self.writer.transport.abort()

    def close(self) -> None:
        """Close the socket (no wait)."""
        self.watchdog.cancel()
        with contextlib.suppress(Exception):
            self.writer.close()


def _head_bytes(first_line: bytes, headers: list[tuple[bytes, bytes]]) -> bytearray:
    out = bytearray(first_line)
    for name, value in headers:
        out += name + b": " + value + b"\r\n"
    out += b"\r\n"
    return out


def _status_line(status: int, reason: bytes | None = None) -> bytes:
    if reason is None:
        try:
            reason = HTTPStatus(status).phrase.encode("ascii")
        except ValueError:
            reason = b""
    return b"HTTP/1.1 %d %s\r\n" % (status, reason)


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data) if data else b""


def _is_chunked(headers: list[tuple[bytes, bytes]]) -> bool:
    for name, value in headers:
        if name.lower() == b"transfer-encoding" and b"chunked" in value.lower():
            return True
    return False


class ProxyServer:
    """The proxy listener (see the module docstring). Use :meth:`start` and :meth:`stop` on
    the event loop; :attr:`settings` may be changed while running (mode, filters, ca).

    Attributes:
        recorded: HTTP and stream recordings written since start.
        started_at: epoch seconds of :meth:`start`.
        writer: the background :class:`~proxy.writer.RecordingWriter` of HTTP recordings
            (its ``dropped`` counts recordings lost to a full queue).
    """

    def __init__(self, settings: ProxySettings):
        self.settings = settings
        self.recorded = 0
        self.started_at = 0.0
        self._server: asyncio.base_events.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._own: set[tuple[str, int]] = set()
        self._port: int | None = None
        self.writer = RecordingWriter(self._store, self._count)
        #: Exchanges being forwarded now (an idle proxy writes recordings at once).
        self.active = 0

    def _count(self, written: int) -> None:
        self.recorded += written

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        """Bind and serve. Raises :class:`OSError` when the port cannot be bound."""
        self._server = await asyncio.start_server(
            self._handle, self.settings.host, self.settings.port, limit=READ_SIZE,
            reuse_address=True)
        self.started_at = time.time()
        for sock in self._server.sockets:
            address = sock.getsockname()
            self._own.add((str(address[0]), int(address[1])))
        self._port = next(iter(self._own))[1] if self._own else None

    @property
    def port(self) -> int:
        """The port listened on (the real one when started with port 0)."""
        if self._server is None or self._port is None:
            return self.settings.port
        return self._port

    async def stop(self) -> None:
        """Stop listening and close every open connection (streams end; their recordings
        are finished); the queued HTTP recordings are written before it returns."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=5)
        if server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(server.wait_closed(), 2)
        await asyncio.to_thread(self.writer.close)

    async def flush(self) -> None:
        """Wait (up to 5 s) until the HTTP recordings queued so far are written."""
        done = threading.Event()
        if not self.writer.submit(lambda: done.set()):
            return
        await asyncio.to_thread(done.wait, 5)

    # ------------------------------------------------------------------ helpers
    def _is_self(self, host: str, port: int) -> bool:
        if port != self.port:
            return False
        host = host.strip("[]").lower()
        if host in ("localhost", self.settings.host.lower()):
            return True
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        if address.is_loopback or address.is_unspecified:
            return True
        bound = self.settings.host
        return bound in ("0.0.0.0", "::", "") or str(address) == bound

    def _store(self) -> Any:
        getter = self.settings.store
        if getter is None:
            from recordings.store import current

            return current()
        return getter()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if len(self._tasks) >= MAX_CONNECTIONS:
            writer.close()
            return
        if task is not None:
            self._tasks.add(task)
        with contextlib.suppress(OSError):
            sock = writer.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            await _ClientConnection(self, reader, writer).run()
        except (asyncio.CancelledError, _Stop):
            pass
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError, OSError) as error:
            log.debug("proxy connection ended: %s", type(error).__name__)
        except Exception:  # noqa: BLE001 - one broken exchange must not stop the proxy
            log.exception("proxy connection failed")
        finally:
            with contextlib.suppress(Exception):
                writer.close()
            if task is not None:
                self._tasks.discard(task)


class _ClientConnection:
    """One client connection (or the TLS stream inside an intercepted CONNECT)."""

    def __init__(self, proxy: ProxyServer, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter, tunnel: tuple[str, int] | None = None,
                 tunnel_scheme: str = "https"):
        self.proxy = proxy
        self.settings = proxy.settings
        self.reader = reader
        self.writer = writer
        self.tunnel = tunnel  # (host, port) of an intercepted CONNECT
        self.tunnel_scheme = tunnel_scheme  # "http" for a plain HTTP/1 tunnel (ws://)
        self.parser = _RequestParser()
        self.upstream: _Origin | None = None
        self.head: _Head | None = None
        self.body_done = True  # the current request's body was read to its end
        self.responded = False  # a response head went out for the current request
        self.close_after = False
        self.watchdog = _Watchdog(self._idle)

    def _idle(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.transport.abort()

    # ------------------------------------------------------------------ plumbing
    async def _next_event(self, timeout: float = IDLE_TIMEOUT) -> Any:
        """The next request event (:class:`_Head`, body bytes, :data:`_END`, or
        :data:`_CLOSED`)."""
        events = self.parser.events
        while not events:
            if self.parser.trailing is not None:
                return _CLOSED
            self.watchdog.arm(timeout)
            try:
                data = await self.reader.read(READ_SIZE)
            except (OSError, ssl.SSLError, ConnectionError):
                data = b""
            finally:
                self.watchdog.disarm()
            if not data:
                return _CLOSED
            try:
                self.parser.feed(data)
            except _BadMessage as error:
                await self._error_if_possible(400, "bad_request", str(error))
                raise _Stop from None
        event = events.popleft()
        if event is _END:
            self.body_done = True
        elif isinstance(event, _Head):
            self.body_done = False
        return event

    async def _write(self, data: bytes | bytearray) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def _respond(self, status: int, headers: list[tuple[bytes, bytes]], body: bytes,
                       ) -> None:
        headers = list(headers)
        if self.head is None or not self.head.keep_alive or self.close_after:
            self.close_after = True
            headers.append((b"Connection", b"close"))
        out = _head_bytes(_status_line(status), headers)
        if body and not (self.head is not None and self.head.method == "HEAD"):
            out += body
        self.responded = True
        await self._write(out)

    async def _error_if_possible(self, status: int, code: str, message: str) -> None:
        if not self.responded:
            with contextlib.suppress(Exception):
                await self._respond(*_json_error(status, code, message))

    async def _error(self, status: int, code: str, message: str) -> None:
        await self._respond(*_json_error(status, code, message))

    # ------------------------------------------------------------------ the loop
    async def run(self) -> None:
        """Serve requests until the client or the proxy closes the connection."""
        try:
            while True:
                event = await self._next_event()
                if not isinstance(event, _Head):
                    return
                self.head, self.responded = event, False
                switched = await self._serve(event)
                if switched:
                    return
                if not (self.body_done and self.responded and event.keep_alive) or \
                        self.close_after:
                    return
                trailing = self.parser.trailing
                if trailing is not None:
                    # An upgrade that was answered as a plain request: parse on.
                    self.parser = _RequestParser()
                    if trailing:
                        self.parser.feed(trailing)
        except _BadMessage:
            return
        finally:
            self.watchdog.cancel()
            if self.upstream is not None:
                self.upstream.close()

    async def _drain_request(self) -> None:
        """Read the rest of the request (its body), discarding it."""
        while not self.body_done:
            event = await self._next_event()
            if event is _CLOSED:
                raise _Stop

    async def _serve(self, request: _Head) -> bool:
        """Serve one request; True when the connection was switched (tunnel, WebSocket)."""
        method = request.method
        if method == "CONNECT":
            return await self._connect(request)
        headers = request.headers
        target = request.target.decode("latin-1")
        if self.tunnel is not None:
            scheme = self.tunnel_scheme
            host, port = self.tunnel
            path_query = target if target.startswith("/") else "/" + target
            authority = _header(headers, b"host")
            authority_text = authority.decode("latin-1") if authority else \
                (host if port == (443 if scheme == "https" else 80) else f"{host}:{port}")
        else:
            parts = urlsplit(target)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                await self._drain_request()
                await self._error(400, "not_a_proxy_request",
                                  "this is the mockd recording proxy: configure it as your "
                                  "HTTP proxy (absolute-form requests, or CONNECT for HTTPS)")
                return False
            scheme = parts.scheme
            host = parts.hostname
            try:
                port = parts.port or (443 if scheme == "https" else 80)
            except ValueError:
                await self._drain_request()
                await self._error(400, "bad_request", f"invalid port in {target!r}")
                return False
            path_query = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
            authority_text = parts.netloc.rpartition("@")[2]
        if self.proxy._is_self(host, port):
            await self._drain_request()
            await self._error(508, "proxy_loop",
                              f"{host}:{port} is this proxy; a request must target an origin")
            return False
        url = f"{scheme}://{authority_text}{path_query}" if self.tunnel is None or \
            authority_text else f"{scheme}://{host}{path_query}"
        exchange = _Exchange(method, scheme, host, port, authority_text, path_query, url,
                             headers, request.http_version)
        mode = self.settings.mode
        upgrade = _header(headers, b"upgrade")
        if upgrade is not None and upgrade.lower() == b"websocket" and \
                b"upgrade" in _connection_tokens(headers):
            return await self._websocket(exchange)
        if mode == "playback":
            return await self._playback(exchange)
        self.proxy.active += 1
        try:
            await self._forward(exchange, record=mode == "record")
        finally:
            self.proxy.active -= 1
        return False

    # ------------------------------------------------------------------ forwarding
    def _upstream_headers(self, exchange: "_Exchange") -> list[tuple[bytes, bytes]]:
        headers = [(name, value) for name, value in _strip_hop(exchange.headers)
                   if name.lower() not in (b"host", b"expect")]
        return [(b"Host", exchange.authority.encode("latin-1")), *headers]

    async def _get_upstream(self, exchange: "_Exchange") -> _Origin:
        key = (exchange.scheme, exchange.host.lower(), exchange.port)
        origin = self.upstream
        if origin is not None:
            if origin.key == key and origin.reusable and not origin.reader.at_eof():
                origin.reusable = False
                return origin
            origin.close()
            self.upstream = None
        reader, writer = await _open(exchange.scheme, exchange.host, exchange.port,
                                     self.settings.upstream_context)
        with contextlib.suppress(OSError):
            sock = writer.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.upstream = _Origin(key, reader, writer)
        return self.upstream

    def _drop_upstream(self) -> None:
        if self.upstream is not None:
            self.upstream.close()
            self.upstream = None

    async def _forward(self, exchange: "_Exchange", record: bool,
                       body: bytes | None = None) -> None:
        """Send the request upstream (streaming its body, or ``body`` when already read) and
        relay the answer; record it when ``record`` and the filters pass (the recording is
        built and written by the proxy's background writer)."""
        record = record and self.settings.filters.records(exchange.host, exchange.path)
        cap = self.settings.body_cap
        started = time.perf_counter_ns()
        request_tap = BodyTap(cap) if record else None
        try:
            origin = await self._get_upstream(exchange)
        except UpstreamError as error:
            await self._drain_request()
            await self._error(502, error.code, error.message)
            return
        headers = self._upstream_headers(exchange)
        chunked = False
        if body is not None:
            headers = [(name, value) for name, value in headers
                       if name.lower() != b"content-length"]
            if body or _header(exchange.headers, b"content-length") is not None:
                headers.append((b"Content-Length", str(len(body)).encode()))
        elif _is_chunked(exchange.headers):
            chunked = True
            headers.append((b"Transfer-Encoding", b"chunked"))
        out = _head_bytes(b"%s %s HTTP/1.1\r\n" % (exchange.method.encode("ascii"),
                                                  exchange.path_query.encode("latin-1")),
                          headers)
        try:
            if body is not None:
                out += body
                if request_tap is not None:
                    request_tap.feed(body)
            else:
                expect = _header(exchange.headers, b"expect")
                if expect is not None and expect.lower() == b"100-continue" and \
                        not self.body_done and not self.parser.events:
                    await self._write(b"HTTP/1.1 100 Continue\r\n\r\n")
                while not self.body_done:
                    if not self.parser.events and out:
                        origin.writer.write(out)
                        out = bytearray()
                        await origin.writer.drain()
                    event = await self._next_event()
                    if event is _END:
                        if chunked:
                            out += b"0\r\n\r\n"
                    elif isinstance(event, bytes):
                        if request_tap is not None:
                            request_tap.feed(event)
                        out += _chunk(event) if chunked else event
                    else:
                        raise _Stop("client went away mid-request")
            origin.writer.write(out)
            answer = _ResponseParser(exchange.method == "HEAD")
            origin.watchdog.arm(RESPONSE_TIMEOUT)
            try:
                while not answer.events:
                    data = await origin.reader.read(READ_SIZE)
                    if not data:
                        break
                    answer.feed(data)
            finally:
                origin.watchdog.disarm()
        except (OSError, ssl.SSLError, ConnectionError, _BadMessage) as error:
            timed_out = origin.timed_out
            self._drop_upstream()
            reason = "timed out" if timed_out else (str(error) or type(error).__name__)
            await self._error_if_possible(
                502, "upstream_unreachable",
                f"{exchange.host}:{exchange.port} did not answer: {reason}")
            if not self.body_done:
                raise _Stop from None
            return
        if not answer.events:
            timed_out = origin.timed_out
            self._drop_upstream()
            await self._error_if_possible(
                502, "upstream_unreachable",
                f"{exchange.host}:{exchange.port} did not answer: timed out" if timed_out else
                f"{exchange.host}:{exchange.port} closed the connection without an answer")
            return
        status, reason, response_headers = answer.events.popleft()
        await self._relay_answer(exchange, origin, answer, status, reason, response_headers,
                                 request_tap, started)

    async def _relay_answer(self, exchange: "_Exchange", origin: _Origin,
                            answer: _ResponseParser, status: int, reason: bytes,
                            response_headers: list[tuple[bytes, bytes]],
                            request_tap: BodyTap | None, started: int) -> None:
        """Send the origin's answer to the client as it arrives (re-framed for the client's
        HTTP version) and queue its recording."""
        record = request_tap is not None
        cap = self.settings.body_cap
        content_type = (_header(response_headers, b"content-type") or b"").lower()
        sse = record and content_type.startswith(b"text/event-stream")
        bodiless = exchange.method == "HEAD" or status in (204, 304)
        origin_chunked = _is_chunked(response_headers)
        sized = not origin_chunked and \
            _header(response_headers, b"content-length") is not None
        headers = _strip_hop(response_headers)
        client_chunked = False
        if not bodiless and not sized:
            if exchange.http_version == b"1.1":
                client_chunked = True
                headers.append((b"Transfer-Encoding", b"chunked"))
            else:
                self.close_after = True
        if not self.head.keep_alive or self.close_after:  # type: ignore[union-attr]
            self.close_after = True
            headers.append((b"Connection", b"close"))
        out = _head_bytes(_status_line(status, reason), headers)
        self.responded = True
        response_tap = BodyTap(cap) if record and not sse else None
        stream = self._sse_recorder(exchange) if sse else None
        parser = SSEParser() if stream is not None else None
        complete = False
        events = answer.events
        try:
            while True:
                while events:
                    event = events.popleft()
                    if event is _END:
                        complete = True
                        break
                    if response_tap is not None:
                        response_tap.feed(event)
                    if parser is not None:
                        for event_type, data, event_id in parser.feed(event):
                            stream.sse_event(data, event_type=event_type, event_id=event_id)
                    out += _chunk(event) if client_chunked else event
                if complete:
                    break
                if out:
                    self.writer.write(out)
                    out = bytearray()
                    await self.writer.drain()
                data = await origin.reader.read(READ_SIZE)
                if not data:
                    # A body delimited by the connection's end is complete here.
                    complete = not bodiless and not sized and not origin_chunked
                    break
                answer.feed(data)
            if complete and client_chunked:
                out += b"0\r\n\r\n"
            if complete and response_tap is not None and request_tap is not None:
                # Before the last bytes: a client reading the recordings right after its
                # answer finds this one (when it is written at once, see _record_http).
                self._record_http(exchange, request_tap, status, reason.decode("latin-1"),
                                  response_headers, response_tap,
                                  time.perf_counter_ns() - started)
            if out:
                self.writer.write(out)
                await self.writer.drain()
        except (OSError, ssl.SSLError, _BadMessage):
            complete = False
        finally:
            if stream is not None:
                self._finish_stream(stream, "complete" if complete else "incomplete")
            if complete and answer.done and answer.keep_alive and not answer.extra:
                origin.reusable = True
            else:
                self._drop_upstream()
        if not complete:
            raise _Stop("the answer did not end cleanly")

    # ------------------------------------------------------------------ recording
    def _record_http(self, exchange: "_Exchange", request_tap: BodyTap, status: int,
                     reason: str, response_headers: list[tuple[bytes, bytes]],
                     response_tap: BodyTap, duration_ns: int) -> None:
        """Queue the recording of one exchange; it is built and stored by the writer."""
        redaction = self.settings.redaction
        session_id = self.settings.session_id

        def build() -> tuple[str, dict, str | None, dict]:
            request_headers = header_lists(exchange.headers_for_record())
            answer_headers = header_lists(response_headers)
            request_body = redaction.body(request_tap.value(), request_headers,
                                          request_tap.truncated)
            response_body = redaction.body(response_tap.value(), answer_headers,
                                           response_tap.truncated)
            record: dict[str, Any] = {
                "request": {"method": exchange.method, "url": redaction.url(exchange.url),
                            "path": exchange.path, "host": exchange.authority,
                            "scheme": exchange.scheme,
                            "headers": redaction.headers(request_headers),
                            "body": b64(request_body)},
                "response": {"statusCode": status, "statusText": reason,
                             "headers": redaction.headers(answer_headers),
                             "body": b64(response_body)},
                "duration": duration_ns,
                "timestamp": timestamp,
            }
            if request_tap.truncated:
                record["request"]["bodyTruncated"] = True
            if response_tap.truncated:
                record["response"]["bodyTruncated"] = True
            if request_tap.truncated or response_tap.truncated:
                record["bodyTruncated"] = True
            return "http", record, session_id, {"method": exchange.method,
                                                "path": exchange.path,
                                                "host": exchange.host, "status": status}

        from recordings.store import utc_now

        timestamp = utc_now()
        writer = self.proxy.writer
        if self.proxy.active <= 1 and writer.idle:
            writer.write_now(build)
        else:
            writer.submit(build)

    def _stream_recorder(self, exchange: "_Exchange", protocol: str,
                         subprotocol: str | None = None) -> Any:
        try:
            from recordings.streams import StreamRecorder

            redaction = self.settings.redaction
            headers = redaction.headers(header_lists(exchange.headers_for_record()))
            query = exchange.path_query.partition("?")[2]
            return StreamRecorder.start(
                self.proxy._store(), protocol=protocol, path=exchange.path,
                name=f"{exchange.method} {redaction.url(exchange.url)}"[:200],
                headers=headers, query=redaction.redaction.query(query), source="proxy",
                session_id=self.settings.session_id, subprotocol=subprotocol)
        except Exception:  # noqa: BLE001 - recording is an observer
            log.exception("cannot start a proxy stream recording")
            return None

    def _sse_recorder(self, exchange: "_Exchange") -> Any:
        return self._stream_recorder(exchange, "sse")

    def _finish_stream(self, recorder: Any, status: str) -> None:
        try:
            recorder.finish(status)
            self.proxy.recorded += 1
        except Exception:  # noqa: BLE001 - recording is an observer
            log.exception("cannot finish a proxy stream recording")

    # ------------------------------------------------------------------ playback
    async def _playback(self, exchange: "_Exchange") -> bool:
        from proxy.playback import find_recording, playback_response

        body = bytearray()
        while not self.body_done:
            event = await self._next_event()
            if isinstance(event, bytes):
                body += event
                if len(body) > PLAYBACK_BODY_LIMIT:
                    await self._error(413, "body_too_large",
                                      f"playback compares bodies up to "
                                      f"{PLAYBACK_BODY_LIMIT} bytes")
                    raise _Stop
            elif event is not _END:
                raise _Stop
        try:
            recording = find_recording(self.proxy._store(), self.settings.session_id,
                                       self.settings.session_name, exchange.method,
                                       self.settings.redaction.url(exchange.url),
                                       exchange.path, bytes(body))
        except Exception:  # noqa: BLE001 - a store fault answers like "no recording"
            log.exception("proxy playback lookup failed")
            recording = None
        if recording is not None:
            await self._respond(*playback_response(recording))
            return False
        if self.settings.fallthrough == "forward":
            await self._forward(exchange, record=False, body=bytes(body))
            return False
        await self._error(502, "no_recording",
                          f"no recording of {exchange.method} {exchange.path} in session "
                          f"{self.settings.session_name!r}; record it first, or start the "
                          f"proxy with fallthrough: forward")
        return False

    # ------------------------------------------------------------------ CONNECT
    async def _connect(self, request: _Head) -> bool:
        target = request.target.decode("latin-1")
        try:
            host, port = _split_authority(target, 443)
        except ValueError:
            await self._drain_request()
            await self._error(400, "bad_request", f"CONNECT needs host:port, got {target!r}")
            return False
        await self._drain_request()
        if self.proxy._is_self(host, port):
            await self._error(508, "proxy_loop",
                              f"{host}:{port} is this proxy; CONNECT must target an origin")
            return False
        settings = self.settings
        passes = settings.filters.host_passes(host) and self.tunnel is None
        intercept = (settings.ca is not None and settings.mode in ("record", "playback")
                     and passes)
        watch_h2 = settings.mode == "record" and passes
        if not intercept:
            try:
                reader, writer = await _open("tcp", host, port, None)
            except UpstreamError as error:
                await self._error(502, error.code, error.message)
                return False
            self.responded = True
            await self._write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            first = self.parser.trailing or b""
            if watch_h2 and not first:
                with contextlib.suppress(asyncio.TimeoutError, OSError, ConnectionError):
                    first = await asyncio.wait_for(self.reader.read(READ_SIZE), FIRST_BYTES_WAIT)
            if watch_h2 and first[:1] == b"P":
                await self._relay_h2(reader, writer, first, host, port, "http")
                return True
            if first:
                writer.write(first)
            await _pipe_both(self.reader, self.writer, reader, writer)
            return True
        self.responded = True
        trailing = self.parser.trailing
        if trailing:
            await self._write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            # The client spoke before the answer; the buffered bytes cannot go back under TLS.
            raise _Stop
        transport = self.writer.transport
        transport.pause_reading()
        await self._write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        first = await _peek_byte(self.writer, FIRST_BYTES_WAIT)
        if first and first != b"\x16":
            # Not TLS: h2c prior knowledge (gRPC on an insecure channel) or other bytes.
            transport.resume_reading()
            if first in _PLAIN_HTTP1_FIRST and settings.mode == "record":
                # Plain HTTP/1 in the tunnel (a ws:// client behind CONNECT): served as
                # proxied requests, so WebSocket conversations and SSE are recorded too.
                inner = _ClientConnection(self.proxy, self.reader, self.writer,
                                          tunnel=(host, port), tunnel_scheme="http")
                await inner.run()
                return True
            try:
                reader, writer = await _open("tcp", host, port, None)
            except UpstreamError as error:
                log.info("CONNECT %s:%d: %s", host, port, error.message)
                raise _Stop from None
            if first == b"P" and settings.mode == "record":
                await self._relay_h2(reader, writer, b"", host, port, "http")
            else:
                await _pipe_both(self.reader, self.writer, reader, writer)
            return True
        context = settings.ca.server_context(host)
        try:
            await self.writer.start_tls(context, ssl_handshake_timeout=TLS_HANDSHAKE_TIMEOUT)
        except (ssl.SSLError, OSError, asyncio.TimeoutError, ConnectionError) as error:
            log.info("TLS with a client for %s failed (does it trust the proxy CA?): %s",
                     host, getattr(error, "reason", None) or type(error).__name__)
            raise _Stop from None
        tls = self.writer.get_extra_info("ssl_object")
        if tls is not None and tls.selected_alpn_protocol() == "h2":
            try:
                reader, writer = await _open("https", host, port,
                                             settings.upstream_h2_context or
                                             upstream_context(alpn=("h2",)))
            except UpstreamError as error:
                log.info("CONNECT %s:%d: %s", host, port, error.message)
                raise _Stop from None
            await self._relay_h2(reader, writer, b"", host, port, "https")
            return True
        inner = _ClientConnection(self.proxy, self.reader, self.writer, tunnel=(host, port))
        await inner.run()
        return True

    async def _relay_h2(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                        first: bytes, host: str, port: int, scheme: str) -> None:
        """Relay an HTTP/2 tunnel (:func:`proxy.grpc.relay_h2`); in ``record`` mode each gRPC
        call whose path passes the filters is queued as a ``grpc`` recording."""
        from proxy.grpc import grpc_record, relay_h2

        settings = self.settings
        writer_ = self.proxy.writer

        def on_call(call: Any) -> None:
            if settings.mode != "record":
                return
            path = (call.header(b":path") or b"/").decode("latin-1")
            if not settings.filters.records(host, path):
                return
            session_id = settings.session_id
            from recordings.store import utc_now

            timestamp = utc_now()

            def build() -> tuple[str, dict, str | None, dict]:
                record, columns = grpc_record(call, scheme, host, port, settings.redaction)
                record["timestamp"] = timestamp
                return "grpc", record, session_id, columns

            writer_.submit(build)

        await relay_h2(self.reader, self.writer, reader, writer, first, on_call=on_call,
                       body_cap=settings.body_cap, idle_timeout=IDLE_TIMEOUT)

    # ------------------------------------------------------------------ WebSocket
    async def _websocket(self, exchange: "_Exchange") -> bool:
        await self._drain_request()
        record = self.settings.mode == "record" and \
            self.settings.filters.records(exchange.host, exchange.path)
        headers = [(name, value) for name, value in
                   _strip_hop(exchange.headers, keep=frozenset({b"upgrade"}))
                   if name.lower() not in (b"host",)
                   and not (record and name.lower() == b"sec-websocket-extensions")]
        headers = [(b"Host", exchange.authority.encode("latin-1")),
                   (b"Connection", b"Upgrade"), *headers]
        try:
            upstream = await Upstream.open(exchange.scheme, exchange.host, exchange.port,
                                           self.settings.upstream_context)
        except UpstreamError as error:
            await self._error(502, error.code, error.message)
            return False
        try:
            upstream.send(h11.Request(method=exchange.method,
                                      target=exchange.path_query.encode("latin-1"),
                                      headers=headers))
            upstream.send(h11.EndOfMessage())
            await upstream.writer.drain()
            answer = await upstream.next_event(RESPONSE_TIMEOUT)
        except (OSError, asyncio.TimeoutError, h11.ProtocolError, ssl.SSLError) as error:
            upstream.close()
            await self._error(502, "upstream_unreachable",
                              f"{exchange.host}:{exchange.port} did not answer: "
                              f"{type(error).__name__}")
            return False
        if not (isinstance(answer, h11.InformationalResponse) and answer.status_code == 101):
            # Refused upgrade: relay the answer as is, then close.
            try:
                if isinstance(answer, h11.Response):
                    # Relayed as a body delimited by the end of the connection.
                    headers = [(name, value) for name, value in
                               _strip_hop(list(answer.headers.raw_items()))
                               if name.lower() != b"content-length"]
                    self.responded = True
                    await self._write(_head_bytes(
                        _status_line(answer.status_code, answer.reason),
                        headers + [(b"Connection", b"close")]))
                    while True:
                        event = await upstream.next_event(RESPONSE_TIMEOUT)
                        if not isinstance(event, h11.Data):
                            break
                        await self._write(event.data)
                else:
                    await self._error(502, "upstream_unreachable", "no upgrade answer")
            finally:
                upstream.close()
            raise _Stop
        answer_headers = list(answer.headers.raw_items())
        self.responded = True
        await self._write(_head_bytes(
            _status_line(101, answer.reason),
            _strip_hop(answer_headers, keep=frozenset({b"upgrade"}))
            + [(b"Connection", b"Upgrade")]))
        client_trailing = self.parser.trailing
        upstream_trailing, _ = upstream.conn.trailing_data
        recorder = None
        taps: tuple[Any, Any] = (None, None)
        if record:
            subprotocol = _header(answer_headers, b"sec-websocket-protocol")
            recorder = self._stream_recorder(
                exchange, "websocket", subprotocol.decode("latin-1") if subprotocol else None)
            if recorder is not None:
                taps = (WebSocketTap(recorder, "c2s", self.settings.body_cap),
                        WebSocketTap(recorder, "s2c", self.settings.body_cap))
        if client_trailing:
            if taps[0] is not None:
                taps[0].feed(client_trailing)
            upstream.writer.write(client_trailing)
        if upstream_trailing:
            if taps[1] is not None:
                taps[1].feed(upstream_trailing)
            self.writer.write(upstream_trailing)
        try:
            await _pipe_both(self.reader, self.writer, upstream.reader, upstream.writer,
                             taps[0].feed if taps[0] else None,
                             taps[1].feed if taps[1] else None)
        finally:
            if recorder is not None:
                closed = taps[0].closed or taps[1].closed
                failed = taps[0].failed or taps[1].failed
                self._finish_stream(recorder, "corrupted" if failed else
                                    "complete" if closed else "incomplete")
        return True


@dataclass(slots=True)
class _Exchange:
    """One proxied request's parts (``path``: ``path_query`` without its query)."""

    method: str
    scheme: str
    host: str
    port: int
    authority: str
    path_query: str
    url: str
    headers: list[tuple[bytes, bytes]]
    http_version: bytes
    path: str = ""

    def __post_init__(self) -> None:
        self.path = self.path_query.partition("?")[0] or "/"

    def headers_for_record(self) -> list[tuple[bytes, bytes]]:
        """The request headers as the origin got them (hop-by-hop ones left out)."""
        return [(name, value) for name, value in _strip_hop(self.headers)
                if name.lower() != b"expect"]


#: First bytes of the HTTP/1 methods (GET, HEAD, DELETE, OPTIONS) recognised inside a
#: plain CONNECT tunnel; "P" stays the HTTP/2 preface (PRI).
_PLAIN_HTTP1_FIRST = (b"G", b"H", b"D", b"O")


async def _peek_byte(writer: asyncio.StreamWriter, timeout: float) -> bytes:
    """The first byte the client sends, left unread on the socket (its transport must be
    paused); b"" when nothing came within ``timeout`` s or the peer closed."""
    sock = writer.get_extra_info("socket")
    if sock is None:
        return b""
    loop = asyncio.get_running_loop()
    ready = loop.create_future()
    # A duplicate descriptor: event loops refuse watching one that a transport owns.
    peer = socket.fromfd(sock.fileno(), sock.family, sock.type)
    try:
        loop.add_reader(peer.fileno(), lambda: ready.done() or ready.set_result(None))
        try:
            await asyncio.wait_for(ready, timeout)
        except asyncio.TimeoutError:
            return b""
        finally:
            loop.remove_reader(peer.fileno())
        try:
            return peer.recv(1, socket.MSG_PEEK)
        except OSError:
            return b""
    finally:
        peer.close()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                tap: Callable[[bytes], None] | None) -> None:
    try:
        while True:
            data = await reader.read(READ_SIZE)
            if not data:
                break
            if tap is not None:
                tap(data)
            writer.write(data)
            await writer.drain()
    except (OSError, ssl.SSLError, ConnectionError):
        pass
    finally:
        with contextlib.suppress(Exception):
            if writer.can_write_eof():
                writer.write_eof()


async def _pipe_both(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter,
                     upstream_reader: asyncio.StreamReader,
                     upstream_writer: asyncio.StreamWriter,
                     c2s: Callable[[bytes], None] | None = None,
                     s2c: Callable[[bytes], None] | None = None) -> None:
    """Relay bytes both ways until both directions end (or one fails), then close the
    upstream side."""
    tasks = [asyncio.ensure_future(_pipe(client_reader, upstream_writer, c2s)),
             asyncio.ensure_future(_pipe(upstream_reader, client_writer, s2c))]
    try:
        done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        # The upstream ended but the client cannot be told so by a half-close (TLS): the
        # client (a WebSocket after its close handshake) waits for the connection to close.
        half_close_lost = tasks[1] in done and not client_writer.can_write_eof()
        if pending and not half_close_lost:
            # One side ended: give the other a moment to finish its last bytes.
            await asyncio.wait(pending, timeout=5)
    finally:
        for task in tasks:
            task.cancel()
        with contextlib.suppress(Exception):
            upstream_writer.close()


def bind_check(host: str, port: int) -> None:
    """Raise :class:`OSError` when ``host:port`` cannot be bound now (a quick probe before
    the real listener, so a busy port is reported before any session is created)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        probe.bind((host, port))
