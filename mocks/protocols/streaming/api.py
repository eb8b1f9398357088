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
_CONNECTION = {"id": "sse-1", "mockId": "http_a1b2c3d4e5f60718", "path": "/api/orders/7/events",
               "clientIp": "127.0.0.1", "startTime": "2026-11-27T10:00:00.000Z",
               "duration": "2.004s", "durationMs": 2004, "eventsSent": 2, "bytesSent": 96,
               "lastEventId": "2", "lastEventTime": "2026-11-27T10:00:02.000Z",
               "status": "open"}
_STATS = {"activeConnections": 1, "totalConnections": 3, "totalEventsSent": 12,
         "totalBytesSent": 640, "connectionErrors": 0,
         "connectionsByMock": {"http_a1b2c3d4e5f60718": 1}, "maxConnections": 100}

router = connection_router(
    "sse",
    connections=Route("/sse/connections", "List open SSE connections",
                      "sse_connections",
                      "``{connections, count, stats}``, oldest connection first.",
                      example={"connections": [_CONNECTION], "count": 1, "stats": _STATS}),
    stats=Route("/sse/stats", "SSE statistics", "sse_stats",
                "Counters since start and the open connections per mock.",
                example=_STATS),
    connection=Route("/sse/connections/{connection_id}", "One SSE connection",
                     "sse_connection",
                     "The connection; 404 ``Connection not found``.", missing=_NOT_FOUND,
                     example=_CONNECTION),
    close=Route("/sse/connections/{connection_id}", "Close an SSE connection",
                "close_sse_connection",
                "``{\"message\": \"Connection closed\", \"connection\": id}``; 404 "
                "``Connection not found``.", missing=_NOT_FOUND,
                example={"message": "Connection closed", "connection": _CONNECTION["id"]}),
    mock_connections=Route("/mocks/{mock_id}/sse/connections",
                           "Open SSE connections of a mock",
                           "mock_sse_connections",
                           "``{connections, count, mockId}``; 404 ``Mock not found``.",
                           require_mock=True,
                           example={"connections": [_CONNECTION], "count": 1,
                                    "mockId": _CONNECTION["mockId"]}),
    close_mock_connections=Route(
        "/mocks/{mock_id}/sse/connections", "Close the SSE connections of a mock",
        "close_mock_sse_connections",
        "``{\"message\": \"Connections closed\", \"closed\": n, \"mockId\"}``; 404 "
        "``Mock not found``.", require_mock=True,
        example={"message": "Connections closed", "closed": 1,
                 "mockId": _CONNECTION["mockId"]}),
)

add_route(router, "GET", "sse_buffer",
          Route("/mocks/{mock_id}/sse/buffer", "Resumption buffer of an SSE mock",
                "sse_buffer",
                "``{mockId, events, count, capacity}`` (events with an id, oldest first).",
                require_mock=True,
                example={"mockId": _CONNECTION["mockId"],
                         "events": [{"id": "2", "type": "status",
                                     "data": "{\"state\": \"shipped\"}", "position": 1,
                                     "index": 0, "timestamp": "2026-11-27T10:00:02.000Z"}],
                         "count": 1, "capacity": 100}))
add_route(router, "DELETE", "sse_clear_buffer",
          Route("/mocks/{mock_id}/sse/buffer", "Clear the resumption buffer of a mock",
                "clear_sse_buffer",
                "``{\"message\": \"Buffer cleared\", \"mockId\", \"cleared\": n}``.",
                require_mock=True,
                example={"message": "Buffer cleared", "mockId": _CONNECTION["mockId"],
                         "cleared": 1}))
