"""Admin API routes of gRPC servers (django-ninja ``Router``; STYLE §8: parse, call, return).

Composed in :mod:`mockd_project.api`. Every operation reads the engine's live snapshot,
listeners and gRPC call state through ``EngineControl`` on the engine loop; without an
engine: 503 ``no_engine``.

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

from typing import Any

from django.http import HttpRequest
from ninja import Router

from mocks import services
from mocks.api import engine_control
from mocks.protocols.grpc.control import (close_grpc_connection, grpc_connection,
                                          grpc_connections, grpc_overview, grpc_stats,
                                          grpc_status)

router = Router(tags=["grpc"])


@router.get("/grpc", summary="List gRPC mocks and servers")
async def list_servers(request: HttpRequest) -> dict[str, Any]:
    """``{mocks, total, count, servers: [{id, address, running, ...}]}``."""
    return await grpc_overview(engine_control())


@router.get("/grpc/connections", summary="gRPC calls in progress")
async def connections(request: HttpRequest) -> dict[str, Any]:
    """``{connections: [{id, port, method, mockId, streamType, clientAddr, connectedAt,
    messagesReceived, messagesSent}], count}``."""
    return await grpc_connections(engine_control())


@router.get("/grpc/stats", summary="gRPC call statistics")
async def stats(request: HttpRequest) -> dict[str, Any]:
    """``{totalCalls, totalErrors, activeCalls, servers, byMethod, byStatus}``."""
    return await grpc_stats(engine_control())


@router.get("/grpc/connections/{call_id}", summary="One gRPC call in progress")
async def connection(request: HttpRequest, call_id: str) -> dict[str, Any]:
    """The call; 404 ``gRPC connection not found``."""
    found = await grpc_connection(engine_control(), call_id)
    if found is None:
        raise services.not_found("gRPC connection not found")
    return found


@router.delete("/grpc/connections/{call_id}", summary="Cancel a gRPC call in progress")
async def close_connection(request: HttpRequest, call_id: str) -> dict[str, Any]:
    """``{message: "Connection closed", id}``; the client sees ``CANCELLED``; 404 when
    unknown."""
    found = await close_grpc_connection(engine_control(), call_id)
    if found is None:
        raise services.not_found("gRPC connection not found")
    return found


@router.get("/grpc/{server_id}/status", summary="Status of one gRPC server")
async def server_status(request: HttpRequest, server_id: str) -> dict[str, Any]:
    """One server by mock id or ``grpc:<port>``; 404 ``gRPC server not found``."""
    found = await grpc_status(engine_control(), server_id)
    if found is None:
        raise services.not_found("gRPC server not found")
    return found
