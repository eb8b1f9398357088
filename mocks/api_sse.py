"""Admin API routes of SSE connections (django-ninja ``Router``; STYLE §8: parse, call, return).

Composed in :mod:`mockd_project.api`. Every operation is async and calls ``EngineControl``
on the engine loop (its "SSE connections" block; ARCHITECTURE seam 5); without an engine:
503 ``no_engine``.

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

from typing import Any

from django.http import HttpRequest
from ninja import Router

from mocks import services
from mocks.api import engine_control

router = Router(tags=["sse"])


def _connection_not_found() -> services.AdminError:
    return services.not_found("Connection not found")


async def _require_mock(control: Any, mock_id: str) -> None:
    if not await control.has_mock(mock_id):
        raise services.not_found("Mock not found")


@router.get("/sse/connections", summary="List open SSE connections")
async def list_connections(request: HttpRequest) -> dict[str, Any]:
    """``{connections, count, stats}``, oldest connection first."""
    return await engine_control().sse_connections()


@router.get("/sse/connections/{connection_id}", summary="One SSE connection")
async def get_connection(request: HttpRequest, connection_id: str) -> dict[str, Any]:
    """The connection; 404 ``Connection not found``."""
    connection = await engine_control().sse_connection(connection_id)
    if connection is None:
        raise _connection_not_found()
    return connection


@router.delete("/sse/connections/{connection_id}", summary="Close an SSE connection")
async def close_connection(request: HttpRequest, connection_id: str) -> dict[str, Any]:
    """``{"message": "Connection closed", "connection": id}``; 404 ``Connection not found``."""
    closed = await engine_control().close_sse_connection(connection_id)
    if closed is None:
        raise _connection_not_found()
    return closed


@router.get("/sse/stats", summary="SSE statistics")
async def stats(request: HttpRequest) -> dict[str, Any]:
    """Counters since start and the open connections per mock."""
    return await engine_control().sse_stats()


@router.get("/mocks/{mock_id}/sse/connections", summary="Open SSE connections of a mock")
async def list_mock_connections(request: HttpRequest, mock_id: str) -> dict[str, Any]:
    """``{connections, count, mockId}``; 404 ``Mock not found``."""
    control = engine_control()
    await _require_mock(control, mock_id)
    return await control.mock_sse_connections(mock_id)


@router.delete("/mocks/{mock_id}/sse/connections", summary="Close the SSE connections of a mock")
async def close_mock_connections(request: HttpRequest, mock_id: str) -> dict[str, Any]:
    """``{"message": "Connections closed", "closed": n, "mockId"}``; 404 ``Mock not found``."""
    control = engine_control()
    await _require_mock(control, mock_id)
    return await control.close_mock_sse_connections(mock_id)


@router.get("/mocks/{mock_id}/sse/buffer", summary="Resumption buffer of an SSE mock")
async def get_buffer(request: HttpRequest, mock_id: str) -> dict[str, Any]:
    """``{mockId, events, count, capacity}`` (events with an id, oldest first)."""
    control = engine_control()
    await _require_mock(control, mock_id)
    return await control.sse_buffer(mock_id)


@router.delete("/mocks/{mock_id}/sse/buffer", summary="Clear the resumption buffer of a mock")
async def clear_buffer(request: HttpRequest, mock_id: str) -> dict[str, Any]:
    """``{"message": "Buffer cleared", "mockId", "cleared": n}``."""
    control = engine_control()
    await _require_mock(control, mock_id)
    return await control.clear_sse_buffer(mock_id)
