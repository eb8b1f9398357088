"""Admin API routes of SOAP handlers and their recordings (django-ninja ``Router``; STYLE §8:
parse, call, return).

Mounted by :mod:`mockd_project.api` from the registry (``admin_router``); the list and status
routes come from the shared factory :func:`mocks.protocols.api.connection_router`. Every
operation reads the engine's live snapshot, request log and SOAP hub through
``EngineControl`` on the engine loop; without an engine: 503 ``no_engine``.

=============================================  ============================================
``GET /soap``                                  ``{handlers: [{id, name?, path, enabled,
                                               recordingEnabled, operations}], count}``
``GET /soap/{id}/status``                      one handler's status; 404 ``SOAP handler
                                               not found``
``POST /soap/{id}/record/start|stop``          ``{id, recordingEnabled, message}``; 404
                                               ``SOAP handler not found``
``GET /soap-recordings``                       filters ``endpoint``, ``operation``,
                                               ``soapAction``, ``hasFault``, ``limit``,
                                               ``offset``; 400 ``validation_error``
``DELETE /soap-recordings``                    clear: ``{deleted}``
``GET /soap-recordings/stats``                 counts, bytes, ``dropped``, bounds
``POST /soap-recordings/export``               every entry ``{version, exportedAt, count,
                                               dropped, recordings}``
``POST /soap-recordings/convert``              ``{recordingIds?, endpoint?, operation?,
                                               deduplicate?, includeDelay?,
                                               preserveFaults?, path?, name?}`` -> ``{mock,
                                               recordingCount, operationCount, skipped}``;
                                               400 ``validation_error`` / ``no_recordings``
``GET|DELETE /soap-recordings/{id}``           one entry / ``{message, id}``; 404 ``SOAP
                                               recording not found``
``POST /soap-recordings/{id}/convert``         convert that entry; 404, 400 as above
=============================================  ============================================

Shapes: :mod:`mocks.protocols.soap.control`; the ``/soap-recordings`` routes are made by
:func:`recordings.protocol_api.add_recording_routes`.

Source: SPEC "WebSocket, gRPC, MQTT and SOAP administration"; behavior notes §1.
"""
from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from mocks.api import engine_control
from mocks.control import openapi_docs as oa
from recordings.protocol_api import add_recording_routes, or_404
from mocks.protocols.api import Route, connection_router
from mocks.protocols.soap.control import (RECORDING_ROUTES, set_recording, soap_handlers,
                                          soap_status)

_HANDLER = {"id": "soap_0123456789abcdef", "name": "User service", "path": "/soap/users",
            "enabled": True, "recordingEnabled": False,
            "operations": ["DeleteUser", "GetUser"]}

router = connection_router(
    "soap",
    overview=Route("/soap", "List SOAP handlers", soap_handlers,
                   "``{handlers: [{id, name?, path, enabled, recordingEnabled, operations}], "
                   "count}``.",
                   example={"handlers": [_HANDLER], "count": 1}),
    status=Route("/soap/{mock_id}/status", "Status of one SOAP handler", soap_status,
                 "The handler's status (operations, request and fault counts); 404 ``SOAP "
                 "handler not found``.", missing="SOAP handler not found",
                 example={**_HANDLER, "running": True, "wsdl": False, "operations": [
                     {"name": "GetUser", "soapAction": "urn:users/GetUser"}],
                     "requestCount": 0, "faultCount": 0, "wsdlRequests": 0}),
)


@router.post("/soap/{mock_id}/record/start", summary="Start recording a SOAP handler",
             openapi_extra=oa.answers({200: {"id": _HANDLER["id"], "recordingEnabled": True,
                                             "message": "Recording started"},
                                       404: oa.not_found("SOAP handler not found")},
                                      engine=True))
async def record_start(request: HttpRequest, mock_id: str) -> dict[str, Any]:
    """``{id, recordingEnabled: true, message}``; 404 ``SOAP handler not found``."""
    return or_404(await set_recording(engine_control(), mock_id, True),
                  "SOAP handler not found")


@router.post("/soap/{mock_id}/record/stop", summary="Stop recording a SOAP handler",
             openapi_extra=oa.answers({200: {"id": _HANDLER["id"], "recordingEnabled": False,
                                             "message": "Recording stopped"},
                                       404: oa.not_found("SOAP handler not found")},
                                      engine=True))
async def record_stop(request: HttpRequest, mock_id: str) -> dict[str, Any]:
    """``{id, recordingEnabled: false, message}``; 404 ``SOAP handler not found``."""
    return or_404(await set_recording(engine_control(), mock_id, False),
                  "SOAP handler not found")


add_recording_routes(
    router, RECORDING_ROUTES, "SOAP",
    entry={"id": "soaprec_0123456789abcdef", "endpoint": _HANDLER["id"],
           "path": "/soap/users", "operation": "GetUser", "soapAction": "urn:users/GetUser",
           "soapVersion": "1.1",
           "requestBody": "<soap:Envelope xmlns:soap=\"http://schemas.xmlsoap.org/soap/"
                          "envelope/\"><soap:Body><GetUser><id>7</id></GetUser></soap:Body>"
                          "</soap:Envelope>",
           "responseBody": "<soap:Envelope xmlns:soap=\"http://schemas.xmlsoap.org/soap/"
                           "envelope/\"><soap:Body><GetUserResponse><id>7</id>"
                           "</GetUserResponse></soap:Body></soap:Envelope>",
           "statusCode": 200, "fault": False, "durationMs": 1.204,
           "timestamp": 1795773600.0},
    stats_example={"total": 1, "bytes": 412, "dropped": 0, "maxRecordings": 10000,
                   "maxBytes": 16777216, "faults": 0, "byEndpoint": {_HANDLER["id"]: 1},
                   "byOperation": {"GetUser": 1}, "averageDurationMs": 1.204,
                   "recordingEndpoints": [_HANDLER["id"]]},
    convert_example={"operation": "GetUser", "deduplicate": True, "includeDelay": False,
                     "preserveFaults": True, "name": "Recorded users"},
    converted={"mock": {"type": "soap", "name": "Recorded users", "soap": {
                   "path": "/soap/users", "operations": {"GetUser": {
                       "soapAction": "urn:users/GetUser",
                       "response": "<GetUserResponse><id>7</id></GetUserResponse>"}}}},
               "recordingCount": 1, "operationCount": 1, "skipped": 0},
    nothing_matches="no recorded SOAP answers match")
