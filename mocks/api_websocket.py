"""Admin API routes of WebSocket connections (django-ninja ``Router``; STYLE §8: parse, call,
return).

Composed in :mod:`mockd_project.api`. Every operation is async and calls ``EngineControl``
on the engine loop (its "WebSocket connections" block; ARCHITECTURE seam 5); without an
engine: 503 ``no_engine``.

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
from ninja import Router

from mocks import services
from mocks.api import engine_control, json_body
from mocks.protocols.websocket.control import WebSocketAdminError

router = Router(tags=["websocket"])

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


def _body(schema: dict[str, Any]) -> dict[str, Any]:
    return {"requestBody": {"required": True,
                            "content": {"application/json": {"schema": schema}}}}


def _connection_not_found() -> services.AdminError:
    return services.not_found("Connection not found")


async def _require_mock(control: Any, mock_id: str) -> None:
    if not await control.has_mock(mock_id):
        raise services.not_found("Mock not found")


async def _admin_errors(call: Awaitable[Any]) -> Any:
    """Await ``call``, turning a :class:`WebSocketAdminError` into the admin error body."""
    try:
        return await call
    except WebSocketAdminError as error:
        raise services.AdminError(error.status, error.code, error.message) from None


@router.get("/websocket/connections", summary="List open WebSocket connections")
async def list_connections(request: HttpRequest) -> dict[str, Any]:
    """``{connections, count, stats}``, oldest connection first."""
    return await engine_control().websocket_connections()


@router.get("/websocket/connections/{connection_id}", summary="One WebSocket connection")
async def get_connection(request: HttpRequest, connection_id: str) -> dict[str, Any]:
    """The connection; 404 ``Connection not found``."""
    connection = await engine_control().websocket_connection(connection_id)
    if connection is None:
        raise _connection_not_found()
    return connection


@router.delete("/websocket/connections/{connection_id}",
               summary="Close a WebSocket connection (code 1000)")
async def close_connection(request: HttpRequest, connection_id: str) -> dict[str, Any]:
    """``{"message": "Connection closed", "connection": id}``; 404 ``Connection not found``."""
    closed = await engine_control().close_websocket_connection(connection_id)
    if closed is None:
        raise _connection_not_found()
    return closed


@router.post("/websocket/connections/{connection_id}/send",
             summary="Send a message to one WebSocket connection",
             openapi_extra=_body(_MESSAGE_SCHEMA))
async def send_message(request: HttpRequest, connection_id: str) -> dict[str, Any]:
    """``{"message": "Message sent", "connection": id, "type"}``; 404 ``Connection not
    found``; 400 ``validation_error`` naming the key; 409 ``conflict`` (closing)."""
    body = json_body(request)
    sent = await _admin_errors(engine_control().send_websocket_message(connection_id, body))
    if sent is None:
        raise _connection_not_found()
    return sent


@router.post("/websocket/broadcast", summary="Send a message to every WebSocket connection",
             openapi_extra=_body(_BROADCAST_SCHEMA))
async def broadcast(request: HttpRequest) -> dict[str, Any]:
    """``{"message": "Message broadcast", "sent": n}``; 404 ``Mock not found`` for an unknown
    ``mockId``; 400 ``validation_error`` naming the key."""
    body = json_body(request)
    return await _admin_errors(engine_control().broadcast_websocket(body))


@router.get("/websocket/endpoints", summary="WebSocket mocks being served")
async def endpoints(request: HttpRequest) -> dict[str, Any]:
    """``{endpoints, count}``: the enabled ``websocket`` mocks and their open connections."""
    return await engine_control().websocket_endpoints()


@router.get("/websocket/stats", summary="WebSocket statistics")
async def stats(request: HttpRequest) -> dict[str, Any]:
    """Counters since start and the open connections per mock."""
    return await engine_control().websocket_stats()


@router.get("/mocks/{mock_id}/websocket/connections",
            summary="Open WebSocket connections of a mock")
async def list_mock_connections(request: HttpRequest, mock_id: str) -> dict[str, Any]:
    """``{connections, count, mockId}``; 404 ``Mock not found``."""
    control = engine_control()
    await _require_mock(control, mock_id)
    return await control.mock_websocket_connections(mock_id)


@router.delete("/mocks/{mock_id}/websocket/connections",
               summary="Close the WebSocket connections of a mock (code 1000)")
async def close_mock_connections(request: HttpRequest, mock_id: str) -> dict[str, Any]:
    """``{"message": "Connections closed", "closed": n, "mockId"}``; 404 ``Mock not found``."""
    control = engine_control()
    await _require_mock(control, mock_id)
    return await control.close_mock_websocket_connections(mock_id)
