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
=============================================  ============================================

Shapes: :mod:`mocks.protocols.grpc.control`.

Source: SPEC "WebSocket, gRPC, MQTT and SOAP administration"; behavior notes §1.
"""
from __future__ import annotations

from mocks.protocols.api import Route, connection_router
from mocks.protocols.grpc.control import (close_grpc_connection, grpc_connection,
                                          grpc_connections, grpc_overview, grpc_stats,
                                          grpc_status)

_CALL_NOT_FOUND = "gRPC connection not found"

router = connection_router(
    "grpc",
    overview=Route("/grpc", "List gRPC mocks and servers", grpc_overview,
                   "``{mocks, total, count, servers: [{id, address, running, ...}]}``."),
    connections=Route("/grpc/connections", "gRPC calls in progress", grpc_connections,
                      "``{connections: [{id, port, method, mockId, streamType, clientAddr, "
                      "connectedAt, messagesReceived, messagesSent}], count}``."),
    stats=Route("/grpc/stats", "gRPC call statistics", grpc_stats,
                "``{totalCalls, totalErrors, activeCalls, servers, byMethod, byStatus}``."),
    connection=Route("/grpc/connections/{call_id}", "One gRPC call in progress",
                     grpc_connection, "The call; 404 ``gRPC connection not found``.",
                     missing=_CALL_NOT_FOUND),
    close=Route("/grpc/connections/{call_id}", "Cancel a gRPC call in progress",
                close_grpc_connection,
                "``{message: \"Connection closed\", id}``; the client sees ``CANCELLED``; "
                "404 when unknown.", missing=_CALL_NOT_FOUND),
    status=Route("/grpc/{server_id}/status", "Status of one gRPC server", grpc_status,
                 "One server by mock id or ``grpc:<port>``; 404 ``gRPC server not found``.",
                 missing="gRPC server not found"),
)
