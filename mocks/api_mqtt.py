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

Shapes: :mod:`mocks.protocols.mqtt.control`.

Source: SPEC "WebSocket, gRPC, MQTT and SOAP administration"; behavior notes §1.
"""
from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Router

import orjson

from mocks import services
from mocks.api import engine_control
from mocks.protocols.mqtt.control import (clear_recordings, close_mqtt_connection,
                                          convert_recordings, delete_recording,
                                          export_recordings, get_recording, list_recordings,
                                          mqtt_connection, mqtt_connection_stats,
                                          mqtt_connections, mqtt_overview, mqtt_status,
                                          mqtt_summary, recording_stats, set_recording)
from mocks.protocols.mqtt.recordings import RecordingQueryError

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
    return _or_404(await set_recording(engine_control(), broker_id, enabled),
                   "MQTT broker not found")


def _or_404(found: dict[str, Any] | None, message: str) -> dict[str, Any]:
    """``found``; raises 404 ``not_found`` with ``message`` when it is None."""
    if found is None:
        raise services.not_found(message)
    return found


@router.get("/mqtt-recordings", summary="Recorded MQTT traffic")
async def recordings(request: HttpRequest) -> dict[str, Any]:
    """``{recordings, total, limit, offset}``; 400 ``validation_error`` for a bad filter."""
    try:
        return await list_recordings(engine_control(), request.GET.dict())
    except RecordingQueryError as problem:
        raise services.validation_error(str(problem)) from None


@router.delete("/mqtt-recordings", summary="Delete every MQTT recording")
async def clear(request: HttpRequest) -> dict[str, Any]:
    """``{deleted: n}``."""
    return await clear_recordings(engine_control())


@router.get("/mqtt-recordings/stats", summary="MQTT recording statistics")
async def stats(request: HttpRequest) -> dict[str, Any]:
    """``{total, bytes, dropped, maxRecordings, maxBytes, byDirection, byBroker, byTopic,
    uniqueClients, recordingBrokers, oldest?, newest?}``."""
    return await recording_stats(engine_control())


@router.post("/mqtt-recordings/export", summary="Export every MQTT recording")
async def export(request: HttpRequest) -> dict[str, Any]:
    """``{version, exportedAt, count, dropped, recordings}``."""
    return await export_recordings(engine_control())


@router.post("/mqtt-recordings/convert", summary="MQTT recordings to an MQTT mock config")
async def convert_all(request: HttpRequest) -> dict[str, Any]:
    """``{mock, recordingCount, topicCount, skipped}`` (the mock is not created: POST it
    to ``/mocks``); 400 ``validation_error`` / ``no_recordings``."""
    return await _convert(request, None)


@router.get("/mqtt-recordings/{recording_id}", summary="One MQTT recording")
async def recording(request: HttpRequest, recording_id: str) -> dict[str, Any]:
    """The entry; 404 ``MQTT recording not found``."""
    return _or_404(await get_recording(engine_control(), recording_id),
                   "MQTT recording not found")


@router.delete("/mqtt-recordings/{recording_id}", summary="Delete one MQTT recording")
async def delete(request: HttpRequest, recording_id: str) -> dict[str, Any]:
    """``{message: "Recording deleted", id}``; 404 ``MQTT recording not found``."""
    return _or_404(await delete_recording(engine_control(), recording_id),
                   "MQTT recording not found")


@router.post("/mqtt-recordings/{recording_id}/convert",
             summary="One MQTT recording to an MQTT mock config")
async def convert_one(request: HttpRequest, recording_id: str) -> dict[str, Any]:
    """As ``/mqtt-recordings/convert`` for that entry; 404 ``MQTT recording not found``."""
    return await _convert(request, recording_id)


async def _convert(request: HttpRequest, recording_id: str | None) -> dict[str, Any]:
    try:
        body = orjson.loads(request.body) if request.body.strip() else None
        found = await convert_recordings(engine_control(), body, recording_id)
    except (orjson.JSONDecodeError, RecordingQueryError) as problem:
        message = (str(problem) if isinstance(problem, RecordingQueryError)
                   else "the body is not valid JSON")
        raise services.validation_error(message) from None
    except LookupError as problem:
        raise services.AdminError(400, "no_recordings", str(problem)) from None
    return _or_404(found, "MQTT recording not found")
