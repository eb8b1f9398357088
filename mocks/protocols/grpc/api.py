"""Admin API routes of gRPC servers (django-ninja ``Router``; STYLE §8: parse, call, return).

Mounted by :mod:`mockd_project.api` from the registry (``admin_router``); built by the shared
factory :func:`mocks.protocols.api.connection_router`. Every operation reads the engine's live
snapshot, listeners and gRPC call state through ``EngineControl`` on the engine loop; without
an engine: 503 ``no_engine``.

=============================================  ============================================
``GET /grpc``                                  ``{mocks, total, count, servers: [{id,
                                               address, port, running, mocks, services}]}``
``GET /grpc/connections``                      calls in progress ``{connections, count}``
``GET /grpc/connections/{id}``                 one call; 404
``DELETE /grpc/connections/{id}``              cancel it; 404
``GET /grpc/stats``                            call statistics
``GET /grpc/{id}/status``                      one server (mock id or ``grpc:<port>``); 404
                                               ``gRPC server not found``
``GET /grpc/{mock_id}/describe``               the mock's services, methods and message
                                               fields (dashboard "Try it"); 404
``POST /grpc/{mock_id}/call``                  one call with grpcio; NDJSON replies and
                                               status (dashboard "Try it"); 404, 400
=============================================  ============================================

Shapes: :mod:`mocks.protocols.grpc.control`.

Source: SPEC "WebSocket, gRPC, MQTT and SOAP administration"; behavior notes §1.
"""
from __future__ import annotations

import time
from typing import Any

import orjson
from django.http import HttpRequest, StreamingHttpResponse

from mocks.api import engine_control, json_body
from mocks.control import errors
from mocks.control import openapi_docs as oa
from mocks.protocols.api import Route, connection_router
from mocks.protocols.grpc.control import (close_grpc_connection, grpc_connection,
                                          grpc_connections, grpc_overview, grpc_stats,
                                          grpc_status)

_CALL_NOT_FOUND = "gRPC connection not found"
_CALL_EXAMPLE = {"id": "grpc-1", "port": 50051, "method": "/shop.Orders/Watch",
                 "service": "shop.Orders", "methodName": "Watch",
                 "mockId": "grpc_0123456789abcdef", "streamType": "server_stream",
                 "clientAddr": "127.0.0.1:51514", "connectedAt": "2026-11-27T10:00:00.000Z",
                 "messagesReceived": 1, "messagesSent": 3}

router = connection_router(
    "grpc",
    overview=Route("/grpc", "List gRPC mocks and servers", grpc_overview,
                   "``{mocks, total, count, servers: [{id, address, running, ...}]}``.",
                   example={"mocks": [], "total": 0, "count": 0, "servers": []}),
    connections=Route("/grpc/connections", "gRPC calls in progress", grpc_connections,
                      "``{connections: [{id, port, method, mockId, streamType, clientAddr, "
                      "connectedAt, messagesReceived, messagesSent}], count}``.",
                      example={"connections": [_CALL_EXAMPLE], "count": 1}),
    stats=Route("/grpc/stats", "gRPC call statistics", grpc_stats,
                "``{totalCalls, totalErrors, activeCalls, servers, byMethod, byStatus}``.",
                example={"totalCalls": 0, "totalErrors": 0, "activeCalls": 0, "servers": 0,
                         "byMethod": {}, "byStatus": {}}),
    connection=Route("/grpc/connections/{call_id}", "One gRPC call in progress",
                     grpc_connection, "The call; 404 ``gRPC connection not found``.",
                     missing=_CALL_NOT_FOUND, example=_CALL_EXAMPLE),
    close=Route("/grpc/connections/{call_id}", "Cancel a gRPC call in progress",
                close_grpc_connection,
                "``{message: \"Connection closed\", id}``; the client sees ``CANCELLED``; "
                "404 when unknown.", missing=_CALL_NOT_FOUND,
                example={"message": "Connection closed", "id": _CALL_EXAMPLE["id"]}),
    status=Route("/grpc/{server_id}/status", "Status of one gRPC server", grpc_status,
                 "One server by mock id or ``grpc:<port>``; 404 ``gRPC server not found``.",
                 missing="gRPC server not found",
                 example={"id": "grpc:50051", "port": 50051, "address": ":50051",
                          "running": True, "enabled": True, "reflection": True,
                          "services": [{"name": "shop.Orders", "methods": [
                              {"name": "GetOrder", "streamType": "unary"}]}]}),
)


# ------------------------------------------------------------------ "Try it" (dashboard)
# Two routes the dashboard's "Try it" area uses to call a gRPC mock as a client would:
#
# ``GET /grpc/{mock_id}/describe``   the mock's services, methods and message fields
# ``POST /grpc/{mock_id}/call``      one call with grpcio against the mock's port; the answer
#                                    is NDJSON, one line per reply message as it arrives
#                                    and a last line with the status

#: Nested message fields are described this deep; deeper ones are given as ``json`` inputs.
DESCRIBE_DEPTH = 4
#: At most this many request messages are sent on a client or bidi stream.
MAX_REQUEST_MESSAGES = 100
#: A call ends after this many reply messages (the rest are not read).
MAX_REPLY_MESSAGES = 1000
#: Call deadline: default and largest (ms).
DEFAULT_TIMEOUT_MS = 30_000
MAX_TIMEOUT_MS = 300_000
#: Well-known types whose JSON form is not an object of their fields: one ``json`` input.
_JSON_VALUED = {"google.protobuf.Timestamp", "google.protobuf.Duration",
                "google.protobuf.Struct", "google.protobuf.Value", "google.protobuf.ListValue",
                "google.protobuf.FieldMask", "google.protobuf.Any", "google.protobuf.Empty"}


def _type_names() -> dict[int, str]:
    from google.protobuf.descriptor import FieldDescriptor

    return {value: name[5:].lower() for name, value in vars(FieldDescriptor).items()
            if name.startswith("TYPE_")}


def describe_message(descriptor: Any, depth: int = 0,
                     seen: tuple[str, ...] = ()) -> dict[str, Any]:
    """A message type as ``{name, fields: [field]}``; a field is ``{name, jsonName, number,
    type, repeated, oneof?, enum?: [names], map?: {key, value}, message?: {name, fields} |
    {name, json: true}}``. ``type`` is protobuf's scalar name (``string``, ``int64``,
    ``bool``, ``bytes``...), ``enum`` or ``message``. A recursive type, a well-known type whose
    JSON form is not an object (``Timestamp``, ``Struct``...) and anything deeper than
    :data:`DESCRIBE_DEPTH` is ``{name, json: true}``: one JSON input."""
    names = _type_names()
    name = descriptor.full_name
    if (name in _JSON_VALUED or name.startswith("google.protobuf.") and name.endswith("Value")
            or name in seen or depth >= DESCRIBE_DEPTH):
        return {"name": name, "json": True}
    fields = []
    for field in descriptor.fields:
        row: dict[str, Any] = {"name": field.name, "jsonName": field.json_name,
                               "number": field.number,
                               "type": names.get(field.type, str(field.type)),
                               "repeated": field.is_repeated}
        if field.containing_oneof is not None and not field.containing_oneof.name.startswith("_"):
            row["oneof"] = field.containing_oneof.name
        if field.enum_type is not None:
            row["enum"] = [value.name for value in field.enum_type.values]
        message_type = field.message_type
        if message_type is not None and message_type.GetOptions().map_entry:
            key, value = message_type.fields_by_name["key"], message_type.fields_by_name["value"]
            row["repeated"] = False
            row["map"] = {"key": names.get(key.type), "value": names.get(value.type)}
        elif message_type is not None:
            row["message"] = describe_message(message_type, depth + 1, (*seen, name))
        fields.append(row)
    return {"name": name, "fields": fields}


def _port_methods(control: Any, mock_id: str) -> tuple[Any, dict[str, Any]]:
    """``(mock, {path: CompiledMethod})`` of a ``grpc`` mock of the live snapshot; raises 404
    ``Mock not found`` / 400 when the mock is not a gRPC mock."""
    from mocks.protocols.grpc.server import GrpcPortService

    engine = control.engine
    mock = next((mock for mock in engine.snapshot.mocks if mock.id == mock_id), None)
    if mock is None:
        raise errors.not_found("Mock not found")
    if mock.type != "grpc":
        raise errors.validation_error(f"mock {mock_id!r} is a {mock.type} mock, not grpc")
    port = mock.grpc.port
    service = engine.listeners.running.get(f"grpc:{port}")
    if not isinstance(service, GrpcPortService):
        service = next((item for item in engine.snapshot.services.values()
                        if isinstance(item, GrpcPortService) and item.port == port), None)
    methods = {} if service is None else {
        path: method for path, method in service.table.methods.items()
        if method.mock_id == mock_id}
    return mock, methods


@router.get("/grpc/{mock_id}/describe", summary="Describe a gRPC mock's methods and messages",
            operation_id="grpc_describe", openapi_extra=oa.answers({
                200: {"id": "grpc_0123456789abcdef", "port": 50051, "running": True,
                      "services": [{"name": "shop.Orders", "methods": [{
                          "name": "GetOrder", "path": "/shop.Orders/GetOrder",
                          "streamType": "unary",
                          "input": {"name": "shop.GetOrderRequest", "fields": [
                              {"name": "id", "jsonName": "id", "number": 1, "type": "string",
                               "repeated": False}]},
                          "output": {"name": "shop.Order", "fields": [
                              {"name": "id", "jsonName": "id", "number": 1, "type": "string",
                               "repeated": False}]}}]}]},
                400: oa.bad_request("validation_error",
                                    "mock 'http_a1b2c3d4e5f60718' is a http mock, not grpc"),
                404: oa.not_found("Mock not found")}, engine=True))
async def grpc_describe(request: HttpRequest, mock_id: str) -> dict[str, Any]:
    """``{id, port, running, services: [{name, methods: [{name, path, streamType, input,
    output}]}]}``; ``input``/``output`` as :func:`describe_message`. ``streamType`` is
    ``unary``, ``server_stream``, ``client_stream`` or ``bidi``. 404 ``Mock not found``; 400
    ``validation_error`` for a mock of another type. For the dashboard's "Try it" form."""
    control = engine_control()
    mock, methods = _port_methods(control, mock_id)
    services: dict[str, list[dict[str, Any]]] = {}
    for path, method in methods.items():
        info = method.info
        services.setdefault(info.service, []).append({
            "name": info.name, "path": path, "streamType": info.kind,
            "input": describe_message(info.input), "output": describe_message(info.output)})
    running = control.engine.listeners.running.get(f"grpc:{mock.grpc.port}")
    return {"id": mock.id, "port": mock.grpc.port,
            "running": bool(running is not None and getattr(running, "running", False)),
            "services": [{"name": name, "methods": rows} for name, rows in services.items()]}


def _call_plan(body: Any, methods: dict[str, Any]) -> tuple[Any, list[Any], list[tuple[str, str]],
                                                           float]:
    """Check a ``POST /grpc/{id}/call`` body: ``(method, request documents, metadata,
    timeout s)``; raises 400 ``validation_error`` naming the key."""
    if not isinstance(body, dict):
        raise errors.validation_error('body: must be a JSON object {"method": ..., '
                                      '"message": {...}}')
    name = body.get("method")
    if not isinstance(name, str) or not name:
        raise errors.validation_error('method: required: "/pkg.Service/Method", '
                                      '"pkg.Service/Method" or "Method"')
    path = name if name.startswith("/") else f"/{name}"
    method = methods.get(path) or next(
        (item for item in methods.values() if item.info.name == name), None)
    if method is None:
        known = ", ".join(sorted(methods)) or "none"
        raise errors.validation_error(f"method: {name!r} is not a method of this mock "
                                      f"(known: {known})")
    if "messages" in body:
        documents = body["messages"]
        if not isinstance(documents, list) or not documents:
            raise errors.validation_error("messages: must be a non-empty list of objects")
        if method.info.kind in ("unary", "server_stream") and len(documents) != 1:
            raise errors.validation_error(f"messages: a {method.info.kind} call sends exactly "
                                          "one message")
        if len(documents) > MAX_REQUEST_MESSAGES:
            raise errors.validation_error(f"messages: at most {MAX_REQUEST_MESSAGES}")
    else:
        documents = [body.get("message") or {}]
    for index, document in enumerate(documents):
        if not isinstance(document, dict):
            raise errors.validation_error(f"messages[{index}]: must be a JSON object")
    metadata = body.get("metadata") or {}
    if not isinstance(metadata, dict) or not all(
            isinstance(key, str) and isinstance(value, str) for key, value in metadata.items()):
        raise errors.validation_error("metadata: must be an object of strings")
    timeout_ms = body.get("timeoutMs", DEFAULT_TIMEOUT_MS)
    if (not isinstance(timeout_ms, int) or isinstance(timeout_ms, bool)
            or not 1 <= timeout_ms <= MAX_TIMEOUT_MS):
        raise errors.validation_error(f"timeoutMs: must be an integer from 1 to "
                                      f"{MAX_TIMEOUT_MS}")
    return method, documents, [(key.lower(), value) for key, value in metadata.items()], \
        timeout_ms / 1000


@router.post("/grpc/{mock_id}/call", summary="Call a gRPC mock (NDJSON answer)",
             operation_id="grpc_call", openapi_extra=oa.doc(
                 oa.body({"method": "/shop.Orders/GetOrder", "message": {"id": "o-1"},
                          "metadata": {"x-tenant": "acme"}, "timeoutMs": 30000},
                         {"type": "object", "required": ["method"], "properties": {
                             "method": {"type": "string"},
                             "message": {"type": "object"},
                             "messages": {"type": "array", "items": {"type": "object"}},
                             "metadata": {"type": "object",
                                          "additionalProperties": {"type": "string"}},
                             "timeoutMs": {"type": "integer", "default": 30000}}}),
                 oa.answers({200: oa.Raw(
                     '{"message": {"id": "o-1", "status": "SHIPPED"}}\n'
                     '{"status": {"code": 0, "name": "OK", "message": ""}, "elapsedMs": 4.2}\n',
                     "application/x-ndjson"),
                     400: oa.bad_request("validation_error", 'method: required: '
                                         '"/pkg.Service/Method", "pkg.Service/Method" or '
                                         '"Method"'),
                     404: oa.not_found("Mock not found")}, engine=True)))
async def grpc_call(request: HttpRequest, mock_id: str) -> StreamingHttpResponse:
    """Call one method of a ``grpc`` mock with grpcio on ``127.0.0.1:<its port>``.

    Body: ``{method: "/pkg.Service/Method" | "Method", message?: {...} | messages?: [{...}],
    metadata?: {name: value}, timeoutMs?: 30000}``: ``messages`` for a client or bidi stream
    (at most :data:`MAX_REQUEST_MESSAGES`), fields by ``.proto`` or JSON name.

    Answer: ``application/x-ndjson``, written as the call goes: ``{"message": {...}}`` per
    reply (JSON form, at most :data:`MAX_REPLY_MESSAGES`), then ``{"status": {code, name,
    message}, "elapsedMs", "trailers"?}``. A request that does not fit the input type ends
    with status ``INVALID_ARGUMENT`` before anything is sent. 404 ``Mock not found``; 400
    ``validation_error`` naming the key (body, ``method``, ``messages``, ``metadata``,
    ``timeoutMs``). For the dashboard's "Try it" form.
    """
    control = engine_control()
    mock, methods = _port_methods(control, mock_id)
    method, documents, metadata, timeout = _call_plan(json_body(request), methods)
    return StreamingHttpResponse(_call_lines(mock.grpc.port, method, documents, metadata,
                                             timeout),
                                 content_type="application/x-ndjson")


def _line(document: dict[str, Any]) -> bytes:
    return orjson.dumps(document) + b"\n"


async def _call_lines(port: int, method: Any, documents: list[Any],
                      metadata: list[tuple[str, str]], timeout: float) -> Any:
    """The NDJSON lines of one call (see :func:`grpc_call`)."""
    import grpc

    from mocks.protocols.grpc.messages import MessageError, encode, to_document

    started = time.monotonic()

    def status(code: Any, message: str, trailers: Any = None) -> bytes:
        out: dict[str, Any] = {"status": {"code": code.value[0], "name": code.name,
                                          "message": message},
                               "elapsedMs": round((time.monotonic() - started) * 1000, 1)}
        if trailers:
            out["trailers"] = {key: value for key, value in trailers
                               if isinstance(value, str)}
        return _line(out)

    try:
        payloads = [encode(document, method.input_class, method.protos.pool)
                    for document in documents]
    except MessageError as error:
        yield status(grpc.StatusCode.INVALID_ARGUMENT, f"request: {error}")
        return
    kind, path = method.info.kind, method.info.path
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        factory = {"unary": channel.unary_unary, "server_stream": channel.unary_stream,
                   "client_stream": channel.stream_unary, "bidi": channel.stream_stream}[kind]
        stub = factory(path)
        argument = payloads[0] if kind in ("unary", "server_stream") else iter(payloads)
        call = stub(argument, metadata=metadata or None, timeout=timeout)
        try:
            if kind in ("unary", "client_stream"):
                reply = await call
                yield _line({"message": to_document(method.output_class.FromString(reply))})
            else:
                received = 0
                async for reply in call:
                    yield _line({"message": to_document(method.output_class.FromString(reply))})
                    received += 1
                    if received >= MAX_REPLY_MESSAGES:
                        call.cancel()
                        yield status(grpc.StatusCode.CANCELLED,
                                     f"stopped after {MAX_REPLY_MESSAGES} messages")
                        return
            code = await call.code()
            yield status(code, await call.details() or "", await call.trailing_metadata())
        except grpc.aio.AioRpcError as error:
            yield status(error.code(), error.details() or "", error.trailing_metadata())
