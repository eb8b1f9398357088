"""The gRPC listener of one port: a ``grpc.aio`` server on the engine's event loop.

:class:`GrpcPortService` is the :class:`~mocks.protocols.ListenerService` of ``grpc:<port>``.
Every ``grpc`` mock of a port contributes its methods to one :class:`PortTable`
(:meth:`GrpcPortService.merged`); the service's ``definition`` is the port's *service set*
(method paths and kinds, the descriptors' digests, reflection on or off), so the
:class:`~mocks.engine.listeners.ListenerSupervisor` restarts the server only when that set
changes. An edit that keeps the set (a new response, a new variant) reaches the running
server through :meth:`GrpcPortService.adopt`: calls look their method up in the current
table when they start, and calls in flight finish with the answer they started with. A
restart stops the old server with a grace period, so in-flight calls finish.

Calls run as coroutines of the server on the engine's loop (no thread per call); request and
reply bytes pass through untouched by grpc (no (de)serializer), so a static answer sends
bytes prepared at compile time. Each call ends in one serve event (request log, verification,
``mockd_http_requests_total{method="grpc"}``): path ``/pkg.Service/Method``, status the gRPC
code number, ``error`` its name when not ``OK``, and ``grpcService``, ``grpcMethod``,
``grpc: {service, methodName, streamType, statusCode, statusMessage?, messagesReceived,
messagesSent}``.

Also served on every port: ``grpc.health.v1.Health`` (``SERVING`` for ``""`` and each
service) and, with ``reflection: true``, server reflection ``grpc.reflection.v1`` and
``v1alpha`` over the port's descriptors (:mod:`.reflection`).

Concurrency: start, stop, adopt and every call run on the engine's event loop.

Source: behavior notes §1 (gRPC routes), §10 (``grpc``), §17 (``method="grpc"``); ARCHITECTURE
"Processes and ports" (``grpc.aio`` servers on the one loop). Django-free.
"""
from __future__ import annotations

import asyncio
import itertools
import logging
import time
from datetime import datetime, timezone
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable

import grpc
import orjson

from chaos.faults import reason_phrase
from chaos.injector import before_call
from mocks.core.request import MockRequest
from mocks.protocols.grpc.compiled import (OK, CallError, CompiledAnswer, CompiledMethod,
                                           call_request)
from mocks.protocols.grpc.config import STATUS_CODES, STATUS_NAMES
from mocks.protocols.grpc.messages import to_document
from mocks.protocols.grpc.protos import split_method_path
from mocks.protocols.grpc.stateful import operation_request, reply_document, status_of

logger = logging.getLogger("mockd.grpc")

#: Seconds a stopping server gives in-flight calls before cancelling them.
STOP_GRACE_SECONDS = 1.0
#: Received messages kept for the request log of a streaming call.
LOGGED_MESSAGES = 100

_STATUS_ENUM = {status.value[0]: status for status in grpc.StatusCode}
_STREAM_TYPES = {"unary": "unary", "server_stream": "server_stream",
                 "client_stream": "client_stream", "bidi": "bidi"}


# ---------------------------------------------------------------------------- hub


@dataclass
class ActiveCall:
    """One call in progress (``GET /grpc/connections``).

    Attributes: id (``grpc-<n>``), port, path, mock_id, kind (stream type), peer,
    started_at (epoch s), received, sent (message counts), task (cancelled by
    :meth:`GrpcHub.cancel`).
    """

    id: str
    port: int
    path: str
    mock_id: str | None
    kind: str
    peer: str
    started_at: float
    received: int = 0
    sent: int = 0
    task: Any = None

    def document(self) -> dict[str, Any]:
        """``{id, port, method, service, methodName, mockId, streamType, clientAddr,
        connectedAt, messagesReceived, messagesSent}``."""
        service, name = split_method_path(self.path)
        return {"id": self.id, "port": self.port, "method": self.path, "service": service,
                "methodName": name, "mockId": self.mock_id, "streamType": self.kind,
                "clientAddr": self.peer, "connectedAt": timestamp(self.started_at),
                "messagesReceived": self.received, "messagesSent": self.sent}


def timestamp(epoch: float) -> str:
    """RFC 3339 UTC with milliseconds and ``Z``."""
    return datetime.fromtimestamp(epoch, tz=timezone.utc).isoformat(
        timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class GrpcHub:
    """Engine-wide gRPC state (``CompileContext.shared["grpc"]``).

    Attributes:
        servers: port -> the running :class:`GrpcPortService`.
        calls: id -> :class:`ActiveCall` of calls in progress.
        total_calls, total_errors: counts since the engine started.
        by_method: path -> ``[calls, errors]``.
        by_code: status name -> calls that ended with it.
    """

    servers: dict[int, "GrpcPortService"] = field(default_factory=dict)
    calls: dict[str, ActiveCall] = field(default_factory=dict)
    total_calls: int = 0
    total_errors: int = 0
    by_method: dict[str, list[int]] = field(default_factory=dict)
    by_code: dict[str, int] = field(default_factory=dict)
    #: ``shared["chaos"]``: returns the live chaos injector, None while chaos is off.
    chaos_of: Callable[[], Any] | None = None
    _ids: Any = field(default_factory=lambda: itertools.count(1))

    def open(self, port: int, path: str, mock_id: str | None, kind: str,
             peer: str) -> ActiveCall:
        """Register a call that starts now."""
        call = ActiveCall(f"grpc-{next(self._ids)}", port, path, mock_id, kind, peer,
                          time.time(), task=asyncio.current_task())
        self.calls[call.id] = call
        return call

    def close(self, call: ActiveCall, code: int) -> None:
        """Count a call that ended with ``code``."""
        self.calls.pop(call.id, None)
        self.total_calls += 1
        cell = self.by_method.get(call.path)
        if cell is None:
            cell = self.by_method[call.path] = [0, 0]
        cell[0] += 1
        name = STATUS_NAMES.get(code, "UNKNOWN")
        self.by_code[name] = self.by_code.get(name, 0) + 1
        if code != OK:
            self.total_errors += 1
            cell[1] += 1

    def cancel(self, call_id: str) -> bool:
        """Cancel a call in progress (the client sees ``CANCELLED``); False if unknown."""
        call = self.calls.get(call_id)
        if call is None:
            return False
        if call.task is not None and not call.task.done():
            call.task.cancel()
        self.calls.pop(call_id, None)
        return True

    def stats(self) -> dict[str, Any]:
        """``{totalCalls, totalErrors, activeCalls, servers, byMethod: {path: {calls,
        errors}}, byStatus: {name: n}}``."""
        return {"totalCalls": self.total_calls, "totalErrors": self.total_errors,
                "activeCalls": len(self.calls), "servers": len(self.servers),
                "byMethod": {path: {"calls": cell[0], "errors": cell[1]}
                             for path, cell in sorted(self.by_method.items())},
                "byStatus": dict(sorted(self.by_code.items()))}


def hub_of(shared: dict[str, Any] | None) -> GrpcHub:
    """The engine's :class:`GrpcHub` in ``shared`` (made on first use); a throw-away hub when
    ``shared`` is None (compiling only to validate)."""
    if shared is None:
        return GrpcHub()
    hub = shared.get("grpc")
    if hub is None:
        hub = shared["grpc"] = GrpcHub(chaos_of=shared.get("chaos"))
    return hub


# ---------------------------------------------------------------------------- calls


class _Call:
    """Serving one call: metadata, logging, status; one per RPC."""

    __slots__ = ("method", "path", "port", "sink", "hub", "metadata", "peer", "started",
                 "active", "request", "received", "sent", "reply_json", "code", "message",
                 "details", "trailing", "logged_messages")

    def __init__(self, method: CompiledMethod | None, path: str, port: int, sink: Any,
                 hub: GrpcHub, context: Any, kind: str):
        self.method = method
        self.path = path
        self.port = port
        self.sink = sink
        self.hub = hub
        self.started = time.time()
        self.metadata = [(key, value) for key, value in context.invocation_metadata() or ()
                         if isinstance(value, str)]
        peer = context.peer() or ""
        self.peer = peer.partition(":")[2] if peer.startswith(("ipv4:", "ipv6:")) else peer
        self.active = hub.open(port, path, method.mock_id if method else None, kind, self.peer)
        self.request: MockRequest | None = None
        self.received = 0
        self.sent = 0
        self.reply_json: bytes | None = None
        self.code = OK
        self.message = ""
        self.details: bytes | None = None
        self.trailing: tuple[tuple[str, str], ...] = ()
        self.logged_messages: list[Any] | None = None

    def request_of(self, data: bytes) -> MockRequest:
        """Decode one received message into the call's request (counts it)."""
        self.received += 1
        self.active.received = self.received
        message = self.method.decode(data)
        document = to_document(message)
        if self.logged_messages is not None and len(self.logged_messages) < LOGGED_MESSAGES:
            self.logged_messages.append(document)
        request = self.request = call_request(self.path, self.metadata, document, self.peer)
        return request

    def failed(self, error: CallError) -> None:
        self.code, self.message, self.details = error.code, error.message, error.details
        self.trailing = error.metadata

    async def abort(self, context: Any) -> None:
        """End the call with its status when it is not ``OK`` (raises grpc's abort)."""
        if self.code == OK:
            return
        trailing = (("grpc-status-details-bin", self.details),) if self.details else ()
        trailing += self.trailing
        await context.abort(_STATUS_ENUM.get(self.code, grpc.StatusCode.UNKNOWN), self.message,
                            trailing_metadata=trailing)

    def finish(self, cancelled: bool = False) -> None:
        """Count the call and hand its serve event to the request log (never raises)."""
        if cancelled and self.code == OK:
            self.code, self.message = STATUS_CODES["CANCELLED"], "cancelled"
        self.hub.close(self.active, self.code)
        sink = self.sink
        if sink is None:
            return
        try:
            request = self.request
            if self.logged_messages is not None:
                request = call_request(self.path, self.metadata, self.logged_messages,
                                       self.peer)
            elif request is None:
                request = call_request(self.path, self.metadata, {}, self.peer)
                request.body = b""
            service, name = split_method_path(self.path)
            status_name = STATUS_NAMES.get(self.code, "UNKNOWN")
            grpc_fields: dict[str, Any] = {
                "service": service, "methodName": name,
                "streamType": self.active.kind, "statusCode": status_name}
            if self.message:
                grpc_fields["statusMessage"] = self.message
            grpc_fields.update(messagesReceived=self.received, messagesSent=self.sent)
            sink(request=request, received_at=self.started,
                 duration_ms=(time.time() - self.started) * 1000.0, status=self.code,
                 mock_id=self.method.mock_id if self.method is not None else None,
                 path_template=self.path if self.method is not None else None,
                 protocol="grpc", error=None if self.code == OK else status_name,
                 response_body=self.reply_json,
                 details={"grpcService": service, "grpcMethod": name, "grpc": grpc_fields})
        except Exception:  # noqa: BLE001 - logging never breaks a call
            logger.exception("gRPC request log entry of %s failed", self.path)


async def _replies(call: _Call, answer: CompiledAnswer | None,
                   request: MockRequest) -> AsyncIterator[bytes]:
    """The reply messages of ``answer`` for ``request``, after its delays; ends by raising
    the answer's :class:`CallError` when it has an error."""
    method = call.method
    if answer is None or answer.fake:
        if answer is not None and answer.delay:
            await asyncio.sleep(answer.delay)
        data, text = method.fake_message(method.context(request))
        call.reply_json = text
        yield data
        return
    if answer.delay:
        await asyncio.sleep(answer.delay)
    context = method.context(request)
    if answer.table is not None:
        store, operation = _table_operation(call, answer, request)
        result = await store.execute_async(operation) if store.remote \
            else store.execute(operation)
        yield _table_reply(call, result)
        return
    for index, message in enumerate(answer.messages):
        if index and answer.stream_delay:
            await asyncio.sleep(answer.stream_delay)
        data, text = message.render(context)
        call.reply_json = text
        yield data
    if answer.error is not None:
        answer.error.raise_for(context)


def _table_operation(call: _Call, answer: CompiledAnswer, request: MockRequest
                     ) -> tuple[Any, Any]:
    """``(table store, OperationRequest)`` of a table-bound answer; raises
    :class:`CallError` UNAVAILABLE when the engine has no table store."""
    store = call.method.tables
    if store is None:
        raise CallError(STATUS_CODES["UNAVAILABLE"], "tables are not loaded")
    action = answer.table
    document = request.json if isinstance(request.json, dict) else {}
    return store, operation_request(action.action, action.table, action.operation,
                                    document, store)


def _table_reply(call: _Call, result: Any) -> bytes:
    method = call.method
    if result.error is not None:
        code, message = status_of(result.error)
        raise CallError(code, message)
    reply = reply_document(result, method.info.output)
    from mocks.protocols.grpc.messages import MessageError, encode

    try:
        data = encode(reply, method.output_class, method.protos.pool)
    except MessageError as error:
        raise CallError(STATUS_CODES["INTERNAL"], f"table answer does not fit "
                                                  f"{method.info.output.full_name}: {error}") \
            from None
    call.reply_json = orjson.dumps(reply)
    return data


def _internal(error: Exception, path: str) -> CallError:
    logger.exception("gRPC call %s failed", path)
    return CallError(STATUS_CODES["INTERNAL"], f"the mock failed to answer: "
                                               f"{type(error).__name__}: {error}")


#: HTTP status of a chaos answer -> gRPC status (gRPC's own HTTP-to-gRPC mapping:
#: 400 INTERNAL, 401 UNAUTHENTICATED, 403 PERMISSION_DENIED, 404 UNIMPLEMENTED, 429/502/503/
#: 504 UNAVAILABLE, anything else UNKNOWN).
_CHAOS_CODES = {400: "INTERNAL", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
                404: "UNIMPLEMENTED", 429: "UNAVAILABLE", 502: "UNAVAILABLE",
                503: "UNAVAILABLE", 504: "UNAVAILABLE"}
#: Headers of a chaos answer passed on as trailing metadata.
_CHAOS_METADATA = (b"retry-after", b"x-circuit-state")


async def _chaos_stage(call: _Call) -> bool:
    """Chaos for one call, before it is answered (behavior notes §11, the rules seeing the
    call as ``POST /package.Service/Method``): waits the injected latency; raises
    :class:`CallError` for an injected error (its HTTP status mapped by :data:`_CHAOS_CODES`,
    message ``chaos: 503 Service Unavailable``; ``Retry-After`` and ``X-Circuit-State`` as
    trailing metadata) or a connection reset (``UNAVAILABLE``). True for an injected empty
    answer (a 2xx from ``empty_response``): the call then ends ``OK`` with an empty message
    (unary, client stream) or no message (server and bidirectional streams)."""
    chaos_of = call.hub.chaos_of
    injector = chaos_of() if chaos_of is not None else None
    if injector is None:
        return False
    decision = await before_call(injector, "POST", call.path)
    if decision is None:
        return False
    if decision.reset:
        raise CallError(STATUS_CODES["UNAVAILABLE"], "chaos: connection reset")
    status = decision.status or 500
    if status < 400:
        return True
    metadata = tuple((name.decode("latin-1"), value.decode("latin-1"))
                     for name, value in decision.headers if name.lower() in _CHAOS_METADATA)
    raise CallError(STATUS_CODES[_CHAOS_CODES.get(status, "UNKNOWN")],
                    f"chaos: {status} {reason_phrase(status)}", metadata=metadata)


class _Answering:
    """``async with _Answering(call):`` around the work of one call. A :class:`CallError`
    (or any other exception, logged and sent as ``INTERNAL``) becomes the call's status
    instead of escaping; the call is then finished (counted and logged), as ``CANCELLED``
    when the client went away (cancellation is not swallowed). A failing answer never
    kills the server."""

    __slots__ = ("call",)

    def __init__(self, call: _Call):
        self.call = call

    async def __aenter__(self) -> _Call:
        return self.call

    async def __aexit__(self, kind: Any, error: Any, traceback: Any) -> bool:
        handled = isinstance(error, Exception)
        if isinstance(error, CallError):
            self.call.failed(error)
        elif handled:
            self.call.failed(_internal(error, self.call.path))
        self.call.finish(cancelled=error is not None and not handled)
        return handled


def _unary(method: CompiledMethod, port: int, sink: Any, hub: GrpcHub) -> Callable[..., Any]:
    path = method.info.path

    async def unary(data: bytes, context: Any) -> bytes | None:
        call = _Call(method, path, port, sink, hub, context, "unary")
        reply = None
        async with _Answering(call):
            request = call.request_of(data)
            if await _chaos_stage(call):
                reply, call.sent = b"", 1
            else:
                async for reply in _replies(call, method.choose(request), request):
                    call.sent = 1
        await call.abort(context)
        return reply

    return unary


def _server_stream(method: CompiledMethod, port: int, sink: Any,
                   hub: GrpcHub) -> Callable[..., Any]:
    path = method.info.path

    async def server_stream(data: bytes, context: Any) -> AsyncIterator[bytes]:
        call = _Call(method, path, port, sink, hub, context, "server_stream")
        async with _Answering(call):
            request = call.request_of(data)
            if not await _chaos_stage(call):
                async for reply in _replies(call, method.choose(request), request):
                    call.sent += 1
                    call.active.sent = call.sent
                    yield reply
        await call.abort(context)

    return server_stream


def _client_stream(method: CompiledMethod, port: int, sink: Any,
                   hub: GrpcHub) -> Callable[..., Any]:
    path = method.info.path

    async def client_stream(requests: AsyncIterator[bytes], context: Any) -> bytes | None:
        call = _Call(method, path, port, sink, hub, context, "client_stream")
        call.logged_messages = []
        reply = None
        async with _Answering(call):
            if await _chaos_stage(call):
                return b""
            documents = []
            async for data in requests:
                documents.append(call.request_of(data).json)
            document = {"messages": documents, "count": len(documents),
                        "last": documents[-1] if documents else {}}
            request = call.request = call_request(path, call.metadata, document, call.peer)
            async for reply in _replies(call, method.choose(request), request):
                call.sent = 1
        await call.abort(context)
        return reply

    return client_stream


def _bidi(method: CompiledMethod, port: int, sink: Any, hub: GrpcHub) -> Callable[..., Any]:
    path = method.info.path

    async def bidi(requests: AsyncIterator[bytes], context: Any) -> AsyncIterator[bytes]:
        call = _Call(method, path, port, sink, hub, context, "bidi")
        call.logged_messages = []
        async with _Answering(call):
            if await _chaos_stage(call):
                return
            async for data in requests:
                request = call.request_of(data)
                async for reply in _replies(call, method.choose(request), request):
                    call.sent += 1
                    call.active.sent = call.sent
                    yield reply
        await call.abort(context)

    return bidi


def method_handler(method: CompiledMethod, port: int, sink: Any, hub: GrpcHub) -> Any:
    """The ``grpc.RpcMethodHandler`` serving ``method`` (bytes in, bytes out)."""
    kind = method.info.kind
    if kind == "unary":
        return grpc.unary_unary_rpc_method_handler(_unary(method, port, sink, hub))
    if kind == "server_stream":
        return grpc.unary_stream_rpc_method_handler(_server_stream(method, port, sink, hub))
    if kind == "client_stream":
        return grpc.stream_unary_rpc_method_handler(_client_stream(method, port, sink, hub))
    return grpc.stream_stream_rpc_method_handler(_bidi(method, port, sink, hub))


def _unknown_handler(path: str, port: int, served: tuple[str, ...], sink: Any,
                     hub: GrpcHub) -> Any:
    async def unknown(requests: Any, context: Any) -> None:
        call = _Call(None, path, port, sink, hub, context, "unknown")
        call.code = STATUS_CODES["UNIMPLEMENTED"]
        call.message = (f"unknown method {path} on port {port}; served: "
                        + (", ".join(served) or "none"))
        call.finish()
        await call.abort(context)

    return grpc.stream_stream_rpc_method_handler(unknown)


# ---------------------------------------------------------------------------- port service


@dataclass(frozen=True)
class PortTable:
    """What one port serves: ``methods`` by call path (merged over its mocks), the serialized
    descriptor files (for reflection), the mocks, the services, and ``reflection``."""

    port: int
    methods: dict[str, CompiledMethod]
    files: tuple[bytes, ...]
    mock_ids: tuple[str, ...]
    services: tuple[str, ...]
    reflection: bool
    digests: tuple[str, ...]


class _Dispatch(grpc.GenericRpcHandler):
    """The generic handler of a port: the current table's handler for the call path, else an
    ``UNIMPLEMENTED`` answer that is logged too."""

    def __init__(self, owner: "GrpcPortService"):
        self._owner = owner

    def service(self, handler_call_details: Any) -> Any:
        owner = self._owner
        path = handler_call_details.method
        handler = owner.handlers.get(path)
        if handler is None:
            return _unknown_handler(path, owner.port, tuple(sorted(owner.table.methods)),
                                    owner.sink, owner.hub)
        return handler


def _health_handler(servicer: Any) -> Any:
    """``grpc.health.v1.Health`` (``Check``, ``Watch``) of ``servicer`` with the request parsed
    here: a message that is not a ``HealthCheckRequest`` gets ``INTERNAL`` naming the type, as
    a mock method's does, instead of a logged traceback and ``UNKNOWN``."""
    from google.protobuf.message import DecodeError
    from grpc_health.v1 import health_pb2

    async def parsed(data: bytes, context: Any) -> Any:
        try:
            return health_pb2.HealthCheckRequest.FromString(data)
        except DecodeError as error:
            await context.abort(grpc.StatusCode.INTERNAL, "cannot parse the request as "
                                f"grpc.health.v1.HealthCheckRequest: {error}")

    async def check(data: bytes, context: Any) -> Any:
        return await servicer.Check(await parsed(data, context), context)

    async def watch(data: bytes, context: Any) -> None:
        await servicer.Watch(await parsed(data, context), context)

    serialize = health_pb2.HealthCheckResponse.SerializeToString
    return grpc.method_handlers_generic_handler("grpc.health.v1.Health", {
        "Check": grpc.unary_unary_rpc_method_handler(check, response_serializer=serialize),
        "Watch": grpc.unary_stream_rpc_method_handler(watch, response_serializer=serialize)})


class GrpcPortService:
    """The :class:`~mocks.protocols.ListenerService` ``grpc:<port>`` (see the module
    docstring).

    Attributes:
        name: ``grpc:<port>``; port: the TCP port.
        table: the :class:`PortTable` served now.
        definition: ``(port, method paths and kinds, descriptor digests, reflection)``.
        running: True between a successful :meth:`start` and :meth:`stop`.
        address: ``host:port`` it listens on while running.
    """

    def __init__(self, table: PortTable, shared: dict[str, Any] | None):
        self.port = table.port
        self.name = f"grpc:{table.port}"
        self.shared = shared
        self.hub = hub_of(shared)
        self.sink = shared.get("serve_event") if shared is not None else None
        self.table = table
        self.handlers = self._handlers(table)
        self.definition = (table.port,
                           tuple(sorted((path, method.info.kind)
                                        for path, method in table.methods.items())),
                           tuple(sorted(set(table.digests))), table.reflection)
        self.running = False
        self.address = ""
        self.started_at: float | None = None
        self._server: Any = None

    def _handlers(self, table: PortTable) -> dict[str, Any]:
        return {path: method_handler(method, table.port, self.sink, self.hub)
                for path, method in table.methods.items()}

    def merged(self, other: "GrpcPortService") -> "GrpcPortService":
        """A service for this port serving this one's methods plus ``other``'s (a method both
        define stays this one's: the earlier mock keeps it)."""
        mine, theirs = self.table, other.table
        methods = dict(theirs.methods)
        methods.update(mine.methods)
        files = mine.files + tuple(item for item in theirs.files if item not in mine.files)
        table = PortTable(mine.port, methods, files, mine.mock_ids + theirs.mock_ids,
                          mine.services + tuple(name for name in theirs.services
                                                if name not in mine.services),
                          mine.reflection or theirs.reflection,
                          mine.digests + theirs.digests)
        return GrpcPortService(table, self.shared)

    def adopt(self, replacement: "GrpcPortService") -> None:
        """Serve ``replacement``'s answers without a restart (same definition): calls that
        start from now on use them."""
        self.table = replacement.table
        self.handlers = replacement.handlers
        if self.running:
            self.hub.servers[self.port] = self

    async def start(self) -> None:
        """Bind ``<host>:<port>`` and serve. Raises ``OSError`` naming the port and the mock
        when the port cannot be bound."""
        host = (self.shared or {}).get("listen_host") or "127.0.0.1"
        shown = f"[{host}]" if ":" in host else host
        address = f"{shown}:{self.port}"
        server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
        await self._add_health(server)
        if self.table.reflection:
            self._add_reflection(server)
        server.add_generic_rpc_handlers((_Dispatch(self),))
        mocks = ", ".join(repr(mock_id) for mock_id in self.table.mock_ids)
        try:
            bound = server.add_insecure_port(address)
        except RuntimeError as error:
            raise OSError(f"gRPC port {self.port} of mock {mocks} cannot be bound on {host} "
                          f"(is it in use by another program?): {error}") from None
        if not bound:
            raise OSError(f"gRPC port {self.port} of mock {mocks} is already in use on {host}")
        await server.start()
        self._server = server
        self.running = True
        self.address = address
        self.started_at = time.time()
        self.hub.servers[self.port] = self
        logger.info("gRPC server for %s listening on %s", mocks, address)

    async def _add_health(self, server: Any) -> None:
        from grpc_health.v1 import health, health_pb2

        servicer = health.aio.HealthServicer()
        server.add_generic_rpc_handlers((_health_handler(servicer),))
        for service in ("", *self.table.services):
            await servicer.set(service, health_pb2.HealthCheckResponse.SERVING)

    def _add_reflection(self, server: Any) -> None:
        from mocks.protocols.grpc.reflection import ReflectionIndex, reflection_handlers

        index = ReflectionIndex(self.table.files, self.table.services)
        server.add_generic_rpc_handlers(reflection_handlers(index))

    async def stop(self) -> None:
        """Stop accepting calls; calls in flight get :data:`STOP_GRACE_SECONDS` to finish."""
        server, self._server = self._server, None
        self.running = False
        if self.hub.servers.get(self.port) is self:
            del self.hub.servers[self.port]
        if server is not None:
            await server.stop(STOP_GRACE_SECONDS)

    def health(self) -> dict[str, Any]:
        """``{status, port, address, mocks, services}``."""
        return {"status": "running" if self.running else "stopped", "port": self.port,
                "address": self.address, "mocks": list(self.table.mock_ids),
                "services": list(self.table.services)}
