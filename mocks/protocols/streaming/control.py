"""The SSE routes of the engine-control port (split mode), mirroring the admin's.

``EngineControl`` owns the methods (its "SSE connections" block); this module only maps the
mirrored HTTP routes onto them, like :func:`tables.control.route_state` does for tables:

=============================================  ============================================
``GET /sse/connections``                       ``{connections, count, stats}``
``GET /sse/connections/{id}``                  one connection; 404 ``Connection not found``
``DELETE /sse/connections/{id}``               ``{message, connection}``; 404 as above
``GET /sse/stats``                             statistics
``GET /mocks/{id}/sse/connections``            ``{connections, count, mockId}``
``DELETE /mocks/{id}/sse/connections``         ``{message, closed, mockId}``
``GET /mocks/{id}/sse/buffer``                 ``{mockId, events, count, capacity}``
``DELETE /mocks/{id}/sse/buffer``              ``{message, mockId, cleared}``
=============================================  ============================================

A ``/mocks/{id}/…`` route for a mock the engine does not have answers 404 ``Mock not
found``; a wrong method 405.

Source: SPEC "Admin API" → "SSE connections"; behavior notes §1 ("Connections") and §16.
"""
from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

_CONNECTION = re.compile(r"^/sse/connections/([^/]+)$")
_MOCK_ROUTE = re.compile(r"^/mocks/([^/]+)/sse/(connections|buffer)$")

CONNECTION_NOT_FOUND = {"error": "not_found", "message": "Connection not found"}
MOCK_NOT_FOUND = {"error": "not_found", "message": "Mock not found"}


async def route_sse(control: Any, method: str, path: str,
                    answer: Callable[[int, Any], Awaitable[None]]) -> bool:
    """Answer an SSE route of the engine-control port; False when ``path`` is not one.

    ``control`` is an ``EngineControl``; ``answer(status, payload)`` sends JSON.
    """
    if path == "/sse/connections":
        if method != "GET":
            return await _wrong_method(method, answer)
        await answer(200, await control.sse_connections())
    elif path == "/sse/stats":
        if method != "GET":
            return await _wrong_method(method, answer)
        await answer(200, await control.sse_stats())
    elif found := _CONNECTION.match(path):
        connection_id = found.group(1)
        if method == "GET":
            connection = await control.sse_connection(connection_id)
            await (answer(200, connection) if connection is not None
                   else answer(404, CONNECTION_NOT_FOUND))
        elif method == "DELETE":
            closed = await control.close_sse_connection(connection_id)
            await (answer(200, closed) if closed is not None
                   else answer(404, CONNECTION_NOT_FOUND))
        else:
            return await _wrong_method(method, answer)
    elif found := _MOCK_ROUTE.match(path):
        mock_id, what = found.group(1), found.group(2)
        if method not in ("GET", "DELETE"):
            return await _wrong_method(method, answer)
        if not await control.has_mock(mock_id):
            await answer(404, MOCK_NOT_FOUND)
        elif what == "connections":
            await answer(200, await (control.mock_sse_connections(mock_id) if method == "GET"
                                     else control.close_mock_sse_connections(mock_id)))
        else:
            await answer(200, await (control.sse_buffer(mock_id) if method == "GET"
                                     else control.clear_sse_buffer(mock_id)))
    else:
        return False
    return True


async def _wrong_method(method: str, answer: Callable[[int, Any], Awaitable[None]]) -> bool:
    await answer(405, {"error": "method_not_allowed", "message": f"{method} is not allowed here"})
    return True
