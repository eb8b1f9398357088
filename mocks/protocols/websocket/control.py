"""Admin side of WebSocket mocks: outgoing-message bodies, the endpoint listing, and the
WebSocket routes of the engine-control port (split mode), mirroring the admin's.

``EngineControl`` owns the methods (its "WebSocket connections" block); this module reads the
bodies they take (:func:`outgoing_message`), lists the served endpoints
(:func:`endpoint_documents`) and maps the mirrored HTTP routes onto the methods
(:func:`route_websocket`), like :func:`mocks.protocols.streaming.control.route_sse` does for SSE:

=============================================  ============================================
``GET /websocket/connections``                 ``{connections, count, stats}``
``GET /websocket/connections/{id}``            one connection; 404 ``Connection not found``
``DELETE /websocket/connections/{id}``         ``{message, connection}``; 404 as above
``POST /websocket/connections/{id}/send``      ``{type, data}`` -> ``{message, connection,
                                               type}``; 404 as above, 400, 409
``POST /websocket/broadcast``                  ``{type, data, mockId?}`` -> ``{message,
                                               sent}``; 404 ``Mock not found``, 400
``GET /websocket/endpoints``                   ``{endpoints, count}``
``GET /websocket/stats``                       statistics
``GET /mocks/{id}/websocket/connections``      ``{connections, count, mockId}``
``DELETE /mocks/{id}/websocket/connections``   ``{message, closed, mockId}``
=============================================  ============================================

A ``/mocks/{id}/…`` route for a mock the engine does not have answers 404 ``Mock not found``;
a wrong method 405; a body that is not JSON 400 ``invalid_json`` (raised to the caller).

Concurrency: everything runs on the engine's event loop.

Source: behavior notes §1 ("Connections, protocol handlers, stream recordings": WebSocket
routes) and §16; SPEC "WebSocket, gRPC, MQTT and SOAP administration".
"""
from __future__ import annotations

import base64
import binascii
import re
import sys
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import orjson

from mocks.protocols.websocket.hub import WebSocketHub

#: The WebSocket endpoint module (its config model and compiled scripts): loaded when a
#: WebSocket mock compiles, never by these views (no endpoint exists before it is loaded).
SESSION_MODULE = "mocks.protocols.websocket.session"

#: ``type`` values of an outgoing message sent by the admin.
MESSAGE_TYPES = ("text", "binary")

_CONNECTION = re.compile(r"^/websocket/connections/([^/]+)$")
_SEND = re.compile(r"^/websocket/connections/([^/]+)/send$")
_MOCK_CONNECTIONS = re.compile(r"^/mocks/([^/]+)/websocket/connections$")

CONNECTION_NOT_FOUND = {"error": "not_found", "message": "Connection not found"}
MOCK_NOT_FOUND = {"error": "not_found", "message": "Mock not found"}


class WebSocketAdminError(Exception):
    """A WebSocket admin request that cannot be served, rendered as ``{error, message}``.

    Attributes:
        status: 400 (``validation_error``: a bad ``type``, ``data`` or ``mockId``), 404
            (``not_found``: ``Mock not found`` for a broadcast), 409 (``conflict``: the
            connection is closing and took nothing).
        code: the ``error`` code.
        message: what went wrong, naming the body key, and what to send instead.
    """

    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message

    def document(self) -> dict[str, str]:
        """``{error, message}``."""
        return {"error": self.code, "message": self.message}


def _invalid(message: str) -> WebSocketAdminError:
    return WebSocketAdminError(400, "validation_error", message)


def outgoing_message(body: Any) -> tuple[str, str | bytes]:
    """Read ``{type?: "text"|"binary", data}`` (``type`` defaults to ``text``; ``binary`` data
    is standard base64). Returns ``(type, str for text | bytes for binary)``.

    Raises :class:`WebSocketAdminError` 400 naming the key: a body that is not an object, an
    unknown ``type``, no ``data``, ``data`` that is not a string, or binary ``data`` that is
    not standard base64.
    """
    if not isinstance(body, dict):
        raise _invalid('body: must be a JSON object {"type": "text"|"binary", "data": "..."}')
    kind = body.get("type", "text")
    if kind not in MESSAGE_TYPES:
        raise _invalid(f"type: must be \"text\" or \"binary\", got {kind!r}")
    if "data" not in body or body["data"] is None:
        raise _invalid("data: required: the message to send (text, or standard base64 for "
                       "type binary)")
    data = body["data"]
    if not isinstance(data, str):
        raise _invalid(f"data: must be a string, got {type(data).__name__}; to send JSON, "
                       f"send its text")
    if kind == "text":
        return kind, data
    try:
        return kind, base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise _invalid("data: type binary needs standard base64 text (A-Z, a-z, 0-9, +, /, "
                       "= padding)") from None


def broadcast_target(body: Any) -> str | None:
    """The ``mockId`` of a broadcast body (None: every connection); raises
    :class:`WebSocketAdminError` 400 when it is present but not a non-empty string."""
    mock_id = body.get("mockId") if isinstance(body, dict) else None
    if mock_id is not None and (not isinstance(mock_id, str) or not mock_id):
        raise _invalid(f"mockId: must be a mock id (a non-empty string), got {mock_id!r}")
    return mock_id


def endpoint_documents(routes: Iterable[Any], hub: WebSocketHub) -> list[dict[str, Any]]:
    """``[{mockId, name?, path, connections, subprotocols, echoMode, matchers, scenario?}]``
    of the ``websocket`` mocks among a snapshot's WebSocket routes, in route order.

    ``path`` is the path served (under the workspace's base path), ``connections`` the open
    connections of the mock, ``matchers`` how many matchers it has, ``scenario``
    ``{name, steps}`` when it runs one. Routes of other handlers (GraphQL subscriptions) are
    left out.
    """
    documents: list[dict[str, Any]] = []
    kind = getattr(sys.modules.get(SESSION_MODULE), "WebSocketEndpoint", None)
    for route in routes:
        endpoint = route.app
        if kind is None or not isinstance(endpoint, kind):
            continue
        compiled = endpoint.compiled
        document: dict[str, Any] = {"mockId": route.mock_id}
        if compiled.name:
            document["name"] = compiled.name
        document.update(path=route.path, connections=hub.count(route.mock_id),
                        subprotocols=list(compiled.subprotocols), echoMode=compiled.echo,
                        matchers=len(compiled.rules))
        if compiled.steps:
            document["scenario"] = {"name": compiled.scenario_name,
                                    "steps": len(compiled.steps)}
        documents.append(document)
    return documents


async def route_websocket(control: Any, method: str, path: str,
                          read_body: Callable[[], Awaitable[bytes]],
                          answer: Callable[[int, Any], Awaitable[None]]) -> bool:
    """Answer a WebSocket route of the engine-control port; False when ``path`` is not one.

    ``control`` is an ``EngineControl``; ``read_body()`` returns the request body;
    ``answer(status, payload)`` sends JSON. A body that is not JSON raises
    ``orjson.JSONDecodeError`` (the caller answers 400 ``invalid_json``).
    """
    if not (path.startswith("/websocket/") or (path.startswith("/mocks/")
                                               and path.endswith("/websocket/connections"))):
        return False
    try:
        return await _route(control, method, path, read_body, answer)
    except WebSocketAdminError as error:
        await answer(error.status, error.document())
        return True


async def _route(control: Any, method: str, path: str,
                 read_body: Callable[[], Awaitable[bytes]],
                 answer: Callable[[int, Any], Awaitable[None]]) -> bool:
    simple = {"/websocket/connections": control.websocket_connections,
              "/websocket/endpoints": control.websocket_endpoints,
              "/websocket/stats": control.websocket_stats}
    if path in simple:
        if method != "GET":
            return await _wrong_method(method, answer)
        await answer(200, await simple[path]())
    elif path == "/websocket/broadcast":
        if method != "POST":
            return await _wrong_method(method, answer)
        await answer(200, await control.broadcast_websocket(await _json(read_body)))
    elif found := _SEND.match(path):
        if method != "POST":
            return await _wrong_method(method, answer)
        sent = await control.send_websocket_message(found.group(1), await _json(read_body))
        await (answer(200, sent) if sent is not None else answer(404, CONNECTION_NOT_FOUND))
    elif found := _CONNECTION.match(path):
        connection_id = found.group(1)
        if method == "GET":
            connection = await control.websocket_connection(connection_id)
        elif method == "DELETE":
            connection = await control.close_websocket_connection(connection_id)
        else:
            return await _wrong_method(method, answer)
        await (answer(200, connection) if connection is not None
               else answer(404, CONNECTION_NOT_FOUND))
    elif found := _MOCK_CONNECTIONS.match(path):
        mock_id = found.group(1)
        if method not in ("GET", "DELETE"):
            return await _wrong_method(method, answer)
        if not await control.has_mock(mock_id):
            await answer(404, MOCK_NOT_FOUND)
        else:
            await answer(200, await (control.mock_websocket_connections(mock_id)
                                     if method == "GET"
                                     else control.close_mock_websocket_connections(mock_id)))
    else:
        return False
    return True


async def _json(read_body: Callable[[], Awaitable[bytes]]) -> Any:
    return orjson.loads(await read_body())


async def _wrong_method(method: str, answer: Callable[[int, Any], Awaitable[None]]) -> bool:
    await answer(405, {"error": "method_not_allowed", "message": f"{method} is not allowed here"})
    return True


async def control_routes(control: Any, method: str, path: str, query: dict[str, str],
                         read_body: Callable[[], Awaitable[bytes]],
                         answer: Callable[[int, Any], Awaitable[None]]) -> bool:
    """:func:`route_websocket` with the registry's engine-control signature
    (``ProtocolEntry.control_routes``); ``query`` is unused."""
    return await route_websocket(control, method, path, read_body, answer)
