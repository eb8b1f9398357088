"""Admin API routes of SOAP handlers (django-ninja ``Router``; STYLE §8: parse, call, return).

Composed in :mod:`mockd_project.api`. Both operations read the engine's live snapshot and
request log through ``EngineControl`` on the engine loop; without an engine: 503 ``no_engine``.

=============================================  ============================================
``GET /soap``                                  ``{handlers: [{id, name?, path, enabled,
                                               recordingEnabled, operations}], count}``
``GET /soap/{id}/status``                      one handler's status; 404 ``SOAP handler
                                               not found``
=============================================  ============================================

Shapes: :mod:`mocks.protocols.soap.control`.

Source: SPEC "WebSocket, gRPC, MQTT and SOAP administration"; behavior notes §1.
"""
from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Router

from mocks import services
from mocks.api import engine_control
from mocks.protocols.soap.control import soap_handlers, soap_status

router = Router(tags=["soap"])


@router.get("/soap", summary="List SOAP handlers")
async def list_handlers(request: HttpRequest) -> dict[str, Any]:
    """``{handlers: [{id, name?, path, enabled, recordingEnabled, operations}], count}``."""
    return await soap_handlers(engine_control())


@router.get("/soap/{mock_id}/status", summary="Status of one SOAP handler")
async def handler_status(request: HttpRequest, mock_id: str) -> dict[str, Any]:
    """The handler's status (operations, request and fault counts); 404 ``SOAP handler not
    found``."""
    status = await soap_status(engine_control(), mock_id)
    if status is None:
        raise services.not_found("SOAP handler not found")
    return status
