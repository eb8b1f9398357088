"""Admin API routes of WebSocket connections (django-ninja ``Router``; STYLE §8: parse, call,
return).

Mounted by :mod:`mockd_project.api` from the registry (``admin_router``); the connection
routes come from the shared factory :func:`mocks.protocols.api.connection_router`. Every
operation is async and calls ``EngineControl`` on the engine loop (its "WebSocket
connections" block; ARCHITECTURE seam 5); without an engine: 503 ``no_engine``.

=============================================  ============================================
``GET /websocket/connections``                 ``{connections: [connection], count, stats}``
``GET /websocket/connections/{id}``            connection; 404 ``Connection not found``
``DELETE /websocket/connections/{id}``         ``{"message": "Connection closed",
                                               "connection": id}``; the client gets close
                                               1000 "closed by admin"
``POST /websocket/connections/{id}/send``      body ``{type: "text"|"binary", data}``
                                               (binary: standard base64) ->
                                               ``{"message": "Message sent", "connection": id,
                                               "type"}``; 404 as above; 400
                                               ``validation_error`` naming the key; 409
                                               ``conflict`` when the connection is closing
``POST /websocket/broadcast``                  body ``{type, data, mockId?}`` ->
                                               ``{"message": "Message broadcast", "sent": n}``;
                                               404 ``Mock not found`` for an unknown mockId
``GET /websocket/endpoints``                   ``{endpoints: [{mockId, name?, path,
                                               connections, subprotocols, echoMode, matchers,
                                               scenario?: {name, steps}}], count}``
``GET /websocket/stats``                       ``{activeConnections, totalConnections,
                                               refusedConnections, messagesReceived,
                                               messagesSent, bytesReceived, bytesSent,
                                               connectionsByMock}``
``GET /mocks/{id}/websocket/connections``      ``{connections, count, mockId}``
``DELETE /mocks/{id}/websocket/connections``   ``{"message": "Connections closed", closed,
                                               mockId}``
=============================================  ============================================

A connection is ``{id, mockId, mockName?, path, clientIp, userAgent?, subprotocol?,
startTime, duration, durationMs, messagesReceived, messagesSent, bytesReceived, bytesSent,
lastMessageTime?, status}``. ``/mocks/{id}/…`` for an unknown mock: 404 ``Mock not found``.
A body that is not JSON: 400 ``invalid_json``.

Source: behavior notes §1 ("Connections, protocol handlers, stream recordings": WebSocket
routes); SPEC "WebSocket, gRPC, MQTT and SOAP administration".
"""
from __future__ import annotations

from typing import Any, Awaitable

from django.http import HttpRequest

from mocks.control import errors
from mocks.control import openapi_docs as oa
from mocks.api import engine_control, json_body
from mocks.protocols.api import Route, connection_router
from mocks.protocols.websocket.control import WebSocketAdminError

_MESSAGE_SCHEMA = {
    "type": "object", "required": ["data"],
    "properties": {"type": {"type": "string", "enum": ["text", "binary"], "default": "text"},
                   "data": {"type": "string",
                            "description": "The message; standard base64 for type binary."}}}
_BROADCAST_SCHEMA = {
    "type": "object", "required": ["data"],
    "properties": {**_MESSAGE_SCHEMA["properties"],
                   "mockId": {"type": "string",
                              "description": "Only the connections of this mock."}}}


_CONNECTION = {"id": "ws_0123456789abcdef", "mockId": "websocket_0123456789abcdef", "path": "/ws/chat/lobby",
               "clientIp": "127.0.0.1", "startTime": "2026-11-27T10:00:00.000Z",
               "duration": 2.004, "durationMs": 2004, "messagesReceived": 2,
               "messagesSent": 2, "bytesReceived": 9, "bytesSent": 12, "status": "open"}
_STATS = {"activeConnections": 1, "totalConnections": 3, "refusedConnections": 0,
          "messagesReceived": 2, "messagesSent": 2, "bytesReceived": 9, "bytesSent": 12,
          "connectionsByMock": {"websocket_0123456789abcdef": 1}}
_MOCK_ID = _CONNECTION["mockId"]


async def _admin_errors(call: Awaitable[Any]) -> Any:
    """Await ``call``, turning a :class:`WebSocketAdminError` into the admin error body."""
    try:
        return await call
    except WebSocketAdminError as error:
        raise errors.AdminError(error.status, error.code, error.message) from None


_NOT_FOUND = "Connection not found"

router = connection_router(
    "websocket",
    connections=Route("/websocket/connections", "List open WebSocket connections",
                      "websocket_connections",
                      "``{connections, count, stats}``, oldest connection first.",
                      example={"connections": [_CONNECTION], "count": 1, "stats": _STATS}),
    stats=Route("/websocket/stats", "WebSocket statistics", "websocket_stats",
                "Counters since start and the open connections per mock.",
                example=_STATS),
    connection=Route("/websocket/connections/{connection_id}", "One WebSocket connection",
                     "websocket_connection", "The connection; 404 ``Connection not found``.",
                     missing=_NOT_FOUND, example=_CONNECTION),
    close=Route("/websocket/connections/{connection_id}",
                "Close a WebSocket connection (code 1000)", "close_websocket_connection",
                "``{\"message\": \"Connection closed\", \"connection\": id}``; 404 "
                "``Connection not found``.", missing=_NOT_FOUND,
                example={"message": "Connection closed", "connection": _CONNECTION["id"]}),
    mock_connections=Route("/mocks/{mock_id}/websocket/connections",
                           "Open WebSocket connections of a mock",
                           "mock_websocket_connections",
                           "``{connections, count, mockId}``; 404 ``Mock not found``.",
                           require_mock=True,
                           example={"connections": [_CONNECTION], "count": 1,
                                    "mockId": _MOCK_ID}),
    close_mock_connections=Route(
        "/mocks/{mock_id}/websocket/connections",
        "Close the WebSocket connections of a mock (code 1000)",
        "close_mock_websocket_connections",
        "``{\"message\": \"Connections closed\", \"closed\": n, \"mockId\"}``; 404 "
        "``Mock not found``.", require_mock=True,
        example={"message": "Connections closed", "closed": 1, "mockId": _MOCK_ID}),
)


@router.post("/websocket/connections/{connection_id}/send",
             summary="Send a message to one WebSocket connection",
             openapi_extra=oa.doc(oa.body({"type": "text", "data": "hello"}, _MESSAGE_SCHEMA),
                                  oa.answers({200: {"message": "Message sent",
                                                    "connection": _CONNECTION["id"], "type": "text"},
                                              400: oa.bad_request(
                                                  "validation_error",
                                                  'type: must be "text" or "binary", got '
                                                  "'json'"),
                                              404: oa.not_found(_NOT_FOUND)}, engine=True)))
async def send_message(request: HttpRequest, connection_id: str) -> dict[str, Any]:
    """``{"message": "Message sent", "connection": id, "type"}``; 404 ``Connection not
    found``; 400 ``validation_error`` naming the key; 409 ``conflict`` (closing)."""
    body = json_body(request)
    sent = await _admin_errors(engine_control().send_websocket_message(connection_id, body))
    if sent is None:
        raise errors.not_found(_NOT_FOUND)
    return sent


@router.post("/websocket/broadcast", summary="Send a message to every WebSocket connection",
             openapi_extra=oa.doc(
                 oa.body({"type": "text", "data": "server restarting", "mockId": _MOCK_ID},
                         _BROADCAST_SCHEMA),
                 oa.answers({200: {"message": "Message broadcast", "sent": 1},
                             404: oa.not_found("Mock not found")}, engine=True)))
async def broadcast(request: HttpRequest) -> dict[str, Any]:
    """``{"message": "Message broadcast", "sent": n}``; 404 ``Mock not found`` for an unknown
    ``mockId``; 400 ``validation_error`` naming the key."""
    body = json_body(request)
    return await _admin_errors(engine_control().broadcast_websocket(body))


@router.get("/websocket/endpoints", summary="WebSocket mocks being served",
            openapi_extra=oa.answers({200: {"endpoints": [], "count": 0}}, engine=True))
async def endpoints(request: HttpRequest) -> dict[str, Any]:
    """``{endpoints, count}``: the enabled ``websocket`` mocks and their open connections."""
    return await engine_control().websocket_endpoints()
