"""Admin API routes of MQTT brokers and their clients (django-ninja ``Router``; STYLE §8:
parse, call, return).

Composed in :mod:`mockd_project.api`. Every operation reads the engine's live snapshot,
listeners and MQTT hub through ``EngineControl`` on the engine loop; without an engine: 503
``no_engine``.

=============================================  ============================================
``GET /mqtt``                                  ``{brokers: [{id, port, running,
                                               recordingEnabled, ...}], count}``
``GET /mqtt/status``                           all brokers in one object
``GET /mqtt/{id}/status``                      one broker (mock id or ``mqtt:<port>``); 404
``GET /mqtt-connections``                      connected clients ``{connections, count}``
``GET /mqtt-connections/stats``                client counts
``GET /mqtt-connections/{id}``                 one client; 404
``DELETE /mqtt-connections/{id}``              disconnect it; 404
``POST /mqtt/{id}/record/start|stop``          ``{id, recordingEnabled, message}``; 404
``GET /mqtt-recordings``                       filters ``topicPattern``, ``clientId``,
                                               ``direction``, ``brokerId``, ``limit``,
                                               ``offset``; 400 ``validation_error``
``DELETE /mqtt-recordings``                    clear: ``{deleted}``
``GET /mqtt-recordings/stats``                 counts, bytes, ``dropped``, bounds
``POST /mqtt-recordings/export``               every entry ``{version, exportedAt, count,
                                               dropped, recordings}``
``POST /mqtt-recordings/convert``              ``{recordingIds?, topicPattern?,
                                               deduplicate?, includeQoS?, includeRetain?,
                                               port?, name?}`` -> ``{mock, recordingCount,
                                               topicCount, skipped}``; 400
                                               ``validation_error`` / ``no_recordings``
``GET|DELETE /mqtt-recordings/{id}``           one entry / ``{message, id}``; 404
``POST /mqtt-recordings/{id}/convert``         convert that entry; 404, 400 as above
=============================================  ============================================

Shapes: :mod:`mocks.protocols.mqtt.control`; the ``/mqtt-recordings`` routes are made by
:func:`mocks.api_recordings.add_recording_routes`.

Source: SPEC "WebSocket, gRPC, MQTT and SOAP administration"; behavior notes §1.
"""
from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Router

from mocks import services
from mocks.api import engine_control
from mocks.api_recordings import add_recording_routes, or_404
from mocks.protocols.mqtt.control import (RECORDING_ROUTES, close_mqtt_connection,
                                          mqtt_connection, mqtt_connection_stats,
                                          mqtt_connections, mqtt_overview, mqtt_status,
                                          mqtt_summary, set_recording)

router = Router(tags=["mqtt"])


@router.get("/mqtt", summary="List MQTT brokers")
async def list_brokers(request: HttpRequest) -> dict[str, Any]:
    """``{brokers: [{id, port, running, recordingEnabled, ...}], count}``."""
    return await mqtt_overview(engine_control())


@router.get("/mqtt/status", summary="Status of all MQTT brokers")
async def brokers_status(request: HttpRequest) -> dict[str, Any]:
    """``{running, brokers, clients, messagesReceived, messagesPublished}``."""
    return await mqtt_summary(engine_control())


@router.get("/mqtt/{broker_id}/status", summary="Status of one MQTT broker")
async def broker_status(request: HttpRequest, broker_id: str) -> dict[str, Any]:
    """One broker by mock id or ``mqtt:<port>``; 404 ``MQTT broker not found``."""
    found = await mqtt_status(engine_control(), broker_id)
    if found is None:
        raise services.not_found("MQTT broker not found")
    return found


@router.get("/mqtt-connections", summary="Connected MQTT clients")
async def connections(request: HttpRequest) -> dict[str, Any]:
    """``{connections: [{id, clientId, port, brokerId, ...}], count}``."""
    return await mqtt_connections(engine_control())


@router.get("/mqtt-connections/stats", summary="MQTT client counts")
async def connection_stats(request: HttpRequest) -> dict[str, Any]:
    """``{total, byBroker, subscriptions}``."""
    return await mqtt_connection_stats(engine_control())


@router.get("/mqtt-connections/{connection_id}", summary="One connected MQTT client")
async def connection(request: HttpRequest, connection_id: str) -> dict[str, Any]:
    """The client; 404 ``MQTT connection not found``."""
    found = await mqtt_connection(engine_control(), connection_id)
    if found is None:
        raise services.not_found("MQTT connection not found")
    return found


@router.delete("/mqtt-connections/{connection_id}", summary="Disconnect an MQTT client")
async def close_connection(request: HttpRequest, connection_id: str) -> dict[str, Any]:
    """``{message: "Connection closed", id}``; 404 when unknown."""
    found = await close_mqtt_connection(engine_control(), connection_id)
    if found is None:
        raise services.not_found("MQTT connection not found")
    return found


@router.post("/mqtt/{broker_id}/record/start", summary="Start recording an MQTT broker")
async def record_start(request: HttpRequest, broker_id: str) -> dict[str, Any]:
    """``{id, recordingEnabled: true, message}``; 404 ``MQTT broker not found``."""
    return await _recording_switch(broker_id, True)


@router.post("/mqtt/{broker_id}/record/stop", summary="Stop recording an MQTT broker")
async def record_stop(request: HttpRequest, broker_id: str) -> dict[str, Any]:
    """``{id, recordingEnabled: false, message}``; 404 ``MQTT broker not found``."""
    return await _recording_switch(broker_id, False)


async def _recording_switch(broker_id: str, enabled: bool) -> dict[str, Any]:
    return or_404(await set_recording(engine_control(), broker_id, enabled),
                  "MQTT broker not found")


add_recording_routes(router, RECORDING_ROUTES, "MQTT")
