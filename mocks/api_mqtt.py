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
=============================================  ============================================

Shapes: :mod:`mocks.protocols.mqtt.control`.

Source: SPEC "WebSocket, gRPC, MQTT and SOAP administration"; behavior notes §1.
"""
from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Router

from mocks import services
from mocks.api import engine_control
from mocks.protocols.mqtt.control import (close_mqtt_connection, mqtt_connection,
                                          mqtt_connection_stats, mqtt_connections,
                                          mqtt_overview, mqtt_status, mqtt_summary)

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
