"""gRPC through the recording proxy: an HTTP/2 relay (h2 on both sides) that records each
call.

grpcio clients reach a proxy with ``CONNECT`` and speak HTTP/2 inside the tunnel:
prior-knowledge cleartext (h2c) for an insecure channel, TLS with ALPN ``h2`` for a secure one
(the proxy intercepts it with its CA, see :mod:`proxy.server`). :func:`relay_h2` serves one
such tunnel: client streams are opened on one upstream HTTP/2 connection, headers, data,
trailers and resets relayed both ways with flow control respected (data waits for window,
bounded by :data:`MAX_PENDING` per direction).

Every stream whose request ``content-type`` is ``application/grpc...`` becomes a ``grpc``
recording (:func:`grpc_record`)::

    {service, method, path, authority, host, port, scheme ("http" h2c | "https" TLS),
     requestMetadata: {name: [values]}, responseMetadata, trailers   (redacted like headers),
     requestMessages: [base64 protobuf], responseMessages: [base64],
     compressed: bool (a message had the compressed flag; grpc-encoding in the metadata),
     status: {code (int), message}, duration (ns), messagesTruncated?: true}

Messages are the payloads of the 5-byte gRPC framing (flag, big-endian length); at most
:data:`MAX_MESSAGES` per direction and ``body_cap`` bytes in all per direction are kept.

Source: SPEC "Proxy" (records traffic through the proxy), behavior notes §1 (recordings,
redaction) and §10 (the ``grpc`` mock the recordings convert to).

Django-free; runs on the proxy's event loop.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
import struct
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions

from proxy.recording import b64, header_lists

log = logging.getLogger("mockd.proxy")

#: The HTTP/2 client connection preface (RFC 9113 §3.4).
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#: Messages kept per direction of one call.
MAX_MESSAGES = 1000
#: Bytes waiting for flow-control window, per direction of the connection; beyond it the
#: reading side pauses.
MAX_PENDING = 4 * 1024 * 1024
#: Streams open at once in one tunnel.
MAX_STREAMS = 1000
READ_SIZE = 64 * 1024


class _Messages:
    """gRPC length-prefixed messages of one direction, parsed as data arrives."""

    __slots__ = ("cap", "messages", "kept", "truncated", "compressed", "_buffer", "_skip")

    def __init__(self, cap: int):
        self.cap = cap
        self.messages: list[bytes] = []
        self.kept = 0
        self.truncated = False
        self.compressed = False
        self._buffer = bytearray()
        self._skip = 0

    def feed(self, data: bytes) -> None:
        """Take relayed DATA bytes; completed messages are kept (within the bounds). A
        message that cannot be kept is skipped as it streams past, never buffered."""
        if self._skip:
            skipped = min(self._skip, len(data))
            self._skip -= skipped
            data = data[skipped:]
        self._buffer += data
        while len(self._buffer) >= 5:
            flag, length = struct.unpack_from(">BI", self._buffer)
            self.compressed = self.compressed or bool(flag & 1)
            if len(self.messages) >= MAX_MESSAGES or self.kept + length > self.cap:
                self.truncated = True
                available = len(self._buffer) - 5
                if available < length:
                    self._skip = length - available
                    self._buffer.clear()
                    return
                del self._buffer[:5 + length]
                continue
            if len(self._buffer) < 5 + length:
                return
            self.messages.append(bytes(self._buffer[5:5 + length]))
            del self._buffer[:5 + length]
            self.kept += length


@dataclass
class GrpcCall:
    """One relayed stream (a gRPC call when its content-type says so)."""

    client_id: int
    request_headers: list[tuple[bytes, bytes]]
    cap: int
    started: int = field(default_factory=time.perf_counter_ns)
    upstream_id: int | None = None
    response_headers: list[tuple[bytes, bytes]] = field(default_factory=list)
    trailers: list[tuple[bytes, bytes]] = field(default_factory=list)
    reset: int | None = None
    requests: _Messages = field(init=False)
    responses: _Messages = field(init=False)

    def __post_init__(self) -> None:
        self.requests = _Messages(self.cap)
        self.responses = _Messages(self.cap)

    def header(self, name: bytes) -> bytes | None:
        """A request header's value."""
        for key, value in self.request_headers:
            if key == name:
                return value
        return None

    @property
    def is_grpc(self) -> bool:
        """Whether the request is a gRPC call (``content-type: application/grpc...``)."""
        content_type = (self.header(b"content-type") or b"").lower()
        return content_type.startswith(b"application/grpc")


def _metadata(headers: list[tuple[bytes, bytes]], redaction: Any) -> dict[str, list[str]]:
    plain = [(name, value) for name, value in headers if not name.startswith(b":")]
    lists = header_lists(plain)
    return redaction.headers(lists) if redaction is not None else lists


def grpc_record(call: GrpcCall, scheme: str, host: str, port: int, redaction: Any,
                ) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(record, columns)`` of a finished call (see the module docstring)."""
    path = (call.header(b":path") or b"").decode("latin-1")
    service, _, method = path.lstrip("/").partition("/")
    status_source = call.trailers or call.response_headers
    code: int | None = None
    message = ""
    for name, value in status_source:
        if name == b"grpc-status":
            with contextlib.suppress(ValueError):
                code = int(value)
        elif name == b"grpc-message":
            from urllib.parse import unquote

            message = unquote(value.decode("latin-1"))
    if code is None:
        code = 1 if call.reset is not None else 2  # CANCELLED / UNKNOWN
    authority = (call.header(b":authority") or f"{host}:{port}".encode()).decode("latin-1")
    record: dict[str, Any] = {
        "service": service, "method": method, "path": path, "authority": authority,
        "host": host, "port": port, "scheme": scheme,
        "requestMetadata": _metadata(call.request_headers, redaction),
        "responseMetadata": _metadata(call.response_headers, redaction),
        "trailers": _metadata(call.trailers, redaction),
        "requestMessages": [b64(item) for item in call.requests.messages],
        "responseMessages": [b64(item) for item in call.responses.messages],
        "compressed": call.requests.compressed or call.responses.compressed,
        "status": {"code": code, "message": message},
        "duration": time.perf_counter_ns() - call.started,
    }
    if call.requests.truncated or call.responses.truncated:
        record["messagesTruncated"] = True
    columns = {"method": method, "path": path, "host": host, "status": code,
               "protocol": "grpc", "name": service}
    return record, columns


class _Side:
    """One HTTP/2 connection of the relay with its socket and the data waiting for window."""

    def __init__(self, client_side: bool, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter):
        config = h2.config.H2Configuration(client_side=client_side, header_encoding=None,
                                           validate_inbound_headers=False,
                                           normalize_inbound_headers=False,
                                           validate_outbound_headers=False,
                                           normalize_outbound_headers=False)
        self.conn = h2.connection.H2Connection(config=config)
        self.reader = reader
        self.writer = writer
        self.pending: dict[int, list[Any]] = {}
        self.pending_bytes = 0

    def send_data(self, stream_id: int, data: bytes, end: bool) -> None:
        """Send ``data`` on ``stream_id`` as the window allows; the rest waits."""
        queue = self.pending.setdefault(stream_id, [])
        queue.append([data, end])
        self.pending_bytes += len(data)
        self.flush_stream(stream_id)

    def end_stream(self, stream_id: int) -> None:
        """End ``stream_id`` once its waiting data went out."""
        if self.pending.get(stream_id):
            self.pending[stream_id].append([b"", True])
            self.flush_stream(stream_id)
        else:
            with contextlib.suppress(h2.exceptions.H2Error):
                self.conn.end_stream(stream_id)

    def send_trailers(self, stream_id: int, headers: list[tuple[bytes, bytes]]) -> None:
        """Trailers close the stream after its waiting data."""
        self.pending.setdefault(stream_id, []).append([headers, True])
        self.flush_stream(stream_id)

    def flush_stream(self, stream_id: int) -> None:
        queue = self.pending.get(stream_id)
        while queue:
            item, end = queue[0]
            try:
                if isinstance(item, list):
                    self.conn.send_headers(stream_id, item, end_stream=True)
                    queue.pop(0)
                    continue
                window = min(self.conn.local_flow_control_window(stream_id),
                             self.conn.max_outbound_frame_size)
                if len(item) > window:
                    if window > 0:
                        self.conn.send_data(stream_id, item[:window])
                        queue[0][0] = item[window:]
                        self.pending_bytes -= window
                    return
                self.conn.send_data(stream_id, item, end_stream=end)
                self.pending_bytes -= len(item)
                queue.pop(0)
            except (h2.exceptions.StreamClosedError, h2.exceptions.ProtocolError, KeyError):
                self.pending_bytes -= sum(len(i) for i, _ in queue if isinstance(i, bytes))
                queue.clear()
        self.pending.pop(stream_id, None)

    def flush_all(self) -> None:
        for stream_id in list(self.pending):
            self.flush_stream(stream_id)

    def out(self) -> None:
        data = self.conn.data_to_send()
        if data:
            self.writer.write(data)


async def relay_h2(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter,
                   upstream_reader: asyncio.StreamReader,
                   upstream_writer: asyncio.StreamWriter, first: bytes, *,
                   on_call: Callable[[GrpcCall], None] | None, body_cap: int,
                   idle_timeout: float) -> None:
    """Relay one HTTP/2 connection (``first``: bytes already read from the client, starting
    with the preface) until either side closes; ``on_call`` gets each finished gRPC call
    (None: record nothing). Never raises for a peer's fault; closes the upstream side."""
    client = _Side(False, client_reader, client_writer)
    upstream = _Side(True, upstream_reader, upstream_writer)
    client.conn.initiate_connection()
    upstream.conn.initiate_connection()
    client.out()
    upstream.out()
    calls: dict[int, GrpcCall] = {}
    by_upstream: dict[int, GrpcCall] = {}

    def finish(call: GrpcCall) -> None:
        calls.pop(call.client_id, None)
        if call.upstream_id is not None:
            by_upstream.pop(call.upstream_id, None)
        if on_call is not None and call.is_grpc:
            try:
                on_call(call)
            except Exception:  # noqa: BLE001 - recording is an observer
                log.exception("cannot record a gRPC call")

    def from_client(events: list[Any]) -> None:
        for event in events:
            if isinstance(event, h2.events.RequestReceived):
                if len(calls) >= MAX_STREAMS:
                    client.conn.reset_stream(event.stream_id, h2.errors.ErrorCodes.REFUSED_STREAM)
                    continue
                call = GrpcCall(event.stream_id, list(event.headers), body_cap)
                call.upstream_id = upstream.conn.get_next_available_stream_id()
                calls[event.stream_id] = call
                by_upstream[call.upstream_id] = call
                upstream.conn.send_headers(call.upstream_id, call.request_headers,
                                           end_stream=event.stream_ended is not None)
            elif isinstance(event, h2.events.DataReceived):
                call = calls.get(event.stream_id)
                client.conn.acknowledge_received_data(event.flow_controlled_length,
                                                      event.stream_id)
                if call is None:
                    continue
                call.requests.feed(event.data)
                upstream.send_data(call.upstream_id, event.data,
                                   event.stream_ended is not None)
            elif isinstance(event, h2.events.StreamEnded):
                call = calls.get(event.stream_id)
                if call is not None and not _data_ended(event, events):
                    upstream.end_stream(call.upstream_id)
            elif isinstance(event, h2.events.TrailersReceived):
                call = calls.get(event.stream_id)
                if call is not None:
                    upstream.send_trailers(call.upstream_id, list(event.headers))
            elif isinstance(event, h2.events.StreamReset):
                call = calls.get(event.stream_id)
                if call is not None:
                    call.reset = event.error_code
                    with contextlib.suppress(h2.exceptions.H2Error):
                        upstream.conn.reset_stream(call.upstream_id, event.error_code)
                    finish(call)
            elif isinstance(event, h2.events.WindowUpdated):
                upstream_flush(client, event.stream_id)
            elif isinstance(event, h2.events.ConnectionTerminated):
                raise EOFError

    def from_upstream(events: list[Any]) -> None:
        for event in events:
            call = by_upstream.get(getattr(event, "stream_id", 0) or 0)
            if isinstance(event, h2.events.ResponseReceived):
                if call is not None:
                    call.response_headers = list(event.headers)
                    client.conn.send_headers(call.client_id, call.response_headers,
                                             end_stream=event.stream_ended is not None)
                    if event.stream_ended is not None:
                        finish(call)
            elif isinstance(event, h2.events.DataReceived):
                upstream.conn.acknowledge_received_data(event.flow_controlled_length,
                                                        event.stream_id)
                if call is not None:
                    call.responses.feed(event.data)
                    client.send_data(call.client_id, event.data, event.stream_ended is not None)
                    if event.stream_ended is not None:
                        finish(call)
            elif isinstance(event, h2.events.TrailersReceived):
                if call is not None:
                    call.trailers = list(event.headers)
                    client.send_trailers(call.client_id, call.trailers)
                    finish(call)
            elif isinstance(event, h2.events.StreamEnded):
                if call is not None and not _data_ended(event, events):
                    client.end_stream(call.client_id)
                    finish(call)
            elif isinstance(event, h2.events.StreamReset):
                if call is not None:
                    call.reset = event.error_code
                    with contextlib.suppress(h2.exceptions.H2Error):
                        client.conn.reset_stream(call.client_id, event.error_code)
                    finish(call)
            elif isinstance(event, h2.events.WindowUpdated):
                upstream_flush(upstream, event.stream_id)
            elif isinstance(event, h2.events.ConnectionTerminated):
                raise EOFError

    def upstream_flush(side: _Side, stream_id: int) -> None:
        if stream_id:
            side.flush_stream(stream_id)
        else:
            side.flush_all()

    async def pump(source: _Side, handle: Callable[[list[Any]], None],
                   initial: bytes = b"") -> None:
        data = initial
        while True:
            if data:
                try:
                    events = source.conn.receive_data(data)
                except h2.exceptions.ProtocolError as error:
                    log.info("HTTP/2 relay stopped: %s", error)
                    source.out()
                    return
                handle(events)
                client.out()
                upstream.out()
                await asyncio.gather(client.writer.drain(), upstream.writer.drain())
            other = upstream if source is client else client
            while other.pending_bytes > MAX_PENDING:
                await asyncio.sleep(0.01)
            data = await asyncio.wait_for(source.reader.read(READ_SIZE), idle_timeout)
            if not data:
                return

    tasks = [asyncio.ensure_future(pump(client, from_client, first)),
             asyncio.ensure_future(pump(upstream, from_upstream))]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        raise
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task
        for call in list(calls.values()):
            if call.reset is None:
                call.reset = h2.errors.ErrorCodes.CANCEL
            finish(call)
        with contextlib.suppress(Exception):
            upstream_writer.close()


def _data_ended(event: Any, events: list[Any]) -> bool:
    """Whether ``event`` (StreamEnded) was already handled with its DATA or headers frame
    (h2 reports ``stream_ended`` on those too)."""
    for other in events:
        if other is not event and getattr(other, "stream_ended", None) is event:
            return True
    return False
