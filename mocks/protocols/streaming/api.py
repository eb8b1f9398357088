"""Admin API routes of SSE connections (django-ninja ``Router``; STYLE §8: parse, call, return).

Mounted by :mod:`mockd_project.api` from the registry (the ``http`` entry's
``admin_router``: an HTTP mock's SSE streams are served by this folder); built by the shared
factory :func:`mocks.protocols.api.connection_router`. Every operation is async and calls
``EngineControl`` on the engine loop (its "SSE connections" block; ARCHITECTURE seam 5);
without an engine: 503 ``no_engine``.

=============================================  ============================================
``GET /sse/connections``                       ``{connections: [connection], count, stats}``
``GET /sse/connections/{id}``                  connection; 404 ``Connection not found``
``DELETE /sse/connections/{id}``               ``{"message": "Connection closed",
                                               "connection": id}``; the stream ends at once
``GET /sse/stats``                             ``{activeConnections, totalConnections,
                                               totalEventsSent, totalBytesSent,
                                               connectionErrors, connectionsByMock,
                                               maxConnections}``
``GET /mocks/{id}/sse/connections``            ``{connections, count, mockId}``
``DELETE /mocks/{id}/sse/connections``         ``{"message": "Connections closed", closed,
                                               mockId}``
``GET /mocks/{id}/sse/buffer``                 ``{mockId, events: [{id, type?, data, retry?,
                                               position, index, timestamp}], count,
                                               capacity}``
``DELETE /mocks/{id}/sse/buffer``              ``{"message": "Buffer cleared", mockId,
                                               cleared}``
=============================================  ============================================

A connection is ``{id, mockId, mockName?, path, clientIp, userAgent?, startTime, duration,
durationMs, eventsSent, bytesSent, lastEventId?, lastEventTime?, resumedFrom?, status}``.
``/mocks/{id}/…`` for an unknown mock: 404 ``Mock not found``.

Source: SPEC "Admin API" → "SSE connections", "States and transitions" (SSE connection);
behavior notes §1 ("Connections, protocol handlers, stream recordings").
"""
from __future__ import annotations

from mocks.protocols.api import Route, add_route, connection_router

_NOT_FOUND = "Connection not found"

router = connection_router(
    "sse",
    connections=Route("/sse/connections", "List open SSE connections",
                      "sse_connections",
                      "``{connections, count, stats}``, oldest connection first."),
    stats=Route("/sse/stats", "SSE statistics", "sse_stats",
                "Counters since start and the open connections per mock."),
    connection=Route("/sse/connections/{connection_id}", "One SSE connection",
                     "sse_connection",
                     "The connection; 404 ``Connection not found``.", missing=_NOT_FOUND),
    close=Route("/sse/connections/{connection_id}", "Close an SSE connection",
                "close_sse_connection",
                "``{\"message\": \"Connection closed\", \"connection\": id}``; 404 "
                "``Connection not found``.", missing=_NOT_FOUND),
    mock_connections=Route("/mocks/{mock_id}/sse/connections",
                           "Open SSE connections of a mock",
                           "mock_sse_connections",
                           "``{connections, count, mockId}``; 404 ``Mock not found``.",
                           require_mock=True),
    close_mock_connections=Route(
        "/mocks/{mock_id}/sse/connections", "Close the SSE connections of a mock",
        "close_mock_sse_connections",
        "``{\"message\": \"Connections closed\", \"closed\": n, \"mockId\"}``; 404 "
        "``Mock not found``.", require_mock=True),
)

add_route(router, "GET", "sse_buffer",
          Route("/mocks/{mock_id}/sse/buffer", "Resumption buffer of an SSE mock",
                "sse_buffer",
                "``{mockId, events, count, capacity}`` (events with an id, oldest first).",
                require_mock=True))
add_route(router, "DELETE", "sse_clear_buffer",
          Route("/mocks/{mock_id}/sse/buffer", "Clear the resumption buffer of a mock",
                "clear_sse_buffer",
                "``{\"message\": \"Buffer cleared\", \"mockId\", \"cleared\": n}``.",
                require_mock=True))
