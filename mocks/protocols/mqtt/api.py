"""Admin API routes of MQTT brokers and their clients (django-ninja ``Router``; STYLE §8:
parse, call, return).

Mounted by :mod:`mockd_project.api` from the registry (``admin_router``); the list, status
and connection routes come from the shared factory
:func:`mocks.protocols.api.connection_router`. Every operation reads the engine's live
snapshot, listeners and MQTT hub through ``EngineControl`` on the engine loop; without an
engine: 503 ``no_engine``.

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
from mocks.protocols.mqtt.control import (RECORDING_ROUTES, close_mqtt_connection,
                                          mqtt_connection, mqtt_connection_stats,
                                          mqtt_connections, mqtt_overview, mqtt_status,
                                          mqtt_summary, set_recording)

_CLIENT_NOT_FOUND = "MQTT connection not found"
_BROKER = {"id": "mqtt_0123456789abcdef", "port": 1883, "running": True,
           "recordingEnabled": False, "address": "127.0.0.1:1883",
           "mocks": ["mqtt_0123456789abcdef"], "topics": ["sensors/temperature"], "clients": 1}
_SWITCH = oa.answers({200: {"id": "mqtt_0123456789abcdef", "recordingEnabled": True,
                            "message": "Recording started"},
                      404: oa.not_found("MQTT broker not found")}, engine=True)

router = connection_router(
    "mqtt",
    overview=Route("/mqtt", "List MQTT brokers", mqtt_overview,
                   "``{brokers: [{id, port, running, recordingEnabled, ...}], count}``.",
                   example={"brokers": [_BROKER], "count": 1}),
    summary=Route("/mqtt/status", "Status of all MQTT brokers", mqtt_summary,
                  "``{running, brokers, clients, messagesReceived, messagesPublished}``.",
                  example={"running": True, "brokers": 1, "clients": 1,
                           "messagesReceived": 12, "messagesPublished": 30}),
    connections=Route("/mqtt-connections", "Connected MQTT clients", mqtt_connections,
                      "``{connections: [{id, clientId, port, brokerId, ...}], count}``.",
                      example={"connections": [], "count": 0}),
    stats=Route("/mqtt-connections/stats", "MQTT client counts", mqtt_connection_stats,
                "``{total, byBroker, subscriptions}``.",
                example={"total": 1, "byBroker": {"mqtt_0123456789abcdef": 1},
                         "subscriptions": 2}),
    connection=Route("/mqtt-connections/{connection_id}", "One connected MQTT client",
                     mqtt_connection, "The client; 404 ``MQTT connection not found``.",
                     missing=_CLIENT_NOT_FOUND,
                     example={"id": "1883:sensor-1", "clientId": "sensor-1", "port": 1883,
                              "brokerId": "mqtt_0123456789abcdef",
                              "connectedAt": "2026-11-27T10:00:00.000Z",
                              "subscriptions": ["sensors/#"], "messagesReceived": 4}),
    close=Route("/mqtt-connections/{connection_id}", "Disconnect an MQTT client",
                close_mqtt_connection,
                "``{message: \"Connection closed\", id}``; 404 when unknown.",
                missing=_CLIENT_NOT_FOUND,
                example={"message": "Connection closed", "id": "1883:sensor-1"}),
    status=Route("/mqtt/{broker_id}/status", "Status of one MQTT broker", mqtt_status,
                 "One broker by mock id or ``mqtt:<port>``; 404 ``MQTT broker not found``.",
                 missing="MQTT broker not found",
                 example={**_BROKER, "tls": False, "messagesReceived": 12,
                          "messagesPublished": 30, "startedAt": "2026-11-27T10:00:00.000Z"}),
)


@router.post("/mqtt/{broker_id}/record/start", summary="Start recording an MQTT broker",
             openapi_extra=_SWITCH)
async def record_start(request: HttpRequest, broker_id: str) -> dict[str, Any]:
    """``{id, recordingEnabled: true, message}``; 404 ``MQTT broker not found``."""
    return await _recording_switch(broker_id, True)


@router.post("/mqtt/{broker_id}/record/stop", summary="Stop recording an MQTT broker",
             openapi_extra=oa.answers({200: {"id": "mqtt_0123456789abcdef",
                                             "recordingEnabled": False,
                                             "message": "Recording stopped"},
                                       404: oa.not_found("MQTT broker not found")},
                                      engine=True))
async def record_stop(request: HttpRequest, broker_id: str) -> dict[str, Any]:
    """``{id, recordingEnabled: false, message}``; 404 ``MQTT broker not found``."""
    return await _recording_switch(broker_id, False)


async def _recording_switch(broker_id: str, enabled: bool) -> dict[str, Any]:
    return or_404(await set_recording(engine_control(), broker_id, enabled),
                  "MQTT broker not found")


add_recording_routes(
    router, RECORDING_ROUTES, "MQTT",
    entry={"id": "mqttrec_0123456789abcdef", "brokerId": "mqtt_0123456789abcdef",
           "port": 1883, "topic": "sensors/temperature", "qos": 1, "retain": False,
           "clientId": "sensor-1", "direction": "publish", "timestamp": 1795773600.0,
           "payload": "{\"celsius\": 21.5}"},
    stats_example={"total": 1, "bytes": 17, "dropped": 0, "maxRecordings": 10000,
                   "maxBytes": 16777216, "byDirection": {"publish": 1, "subscribe": 0},
                   "byBroker": {"mqtt_0123456789abcdef": 1},
                   "byTopic": {"sensors/temperature": 1}, "uniqueClients": 1,
                   "recordingBrokers": ["mqtt_0123456789abcdef"]},
    convert_example={"topicPattern": "sensors/#", "deduplicate": True, "includeQoS": True,
                     "name": "Recorded sensors"},
    converted={"mock": {"type": "mqtt", "name": "Recorded sensors", "mqtt": {
                   "port": 1883, "topics": [{"topic": "sensors/temperature", "messages": [
                       {"payload": "{\"celsius\": 21.5}", "delay": 0}]}]}},
               "recordingCount": 1, "topicCount": 1, "skipped": 0},
    nothing_matches="no recorded publishes match")
