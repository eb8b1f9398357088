"""The MQTT admin views, on the admin API and mirrored on the engine-control port.

=============================================  ============================================
``GET /mqtt``                                  ``{brokers: [{id, port, running,
                                               recordingEnabled, address, mocks, topics,
                                               clients}], count}``
``GET /mqtt/status``                           ``{running, brokers, clients,
                                               messagesReceived, messagesPublished}``
``GET /mqtt/{id}/status``                      one broker (a mock id or ``mqtt:<port>``):
                                               ``{id, port, running, address, tls, mocks,
                                               topics, clients, recordingEnabled,
                                               messagesReceived, messagesPublished,
                                               startedAt?, websocket?: {port, path}}``;
                                               404 ``MQTT broker not found``
``GET /mqtt-connections``                      ``{connections: [{id, clientId, port,
                                               brokerId, username, remoteAddr,
                                               protocolVersion, transport,
                                               cleanSession, keepAlive, connectedAt,
                                               subscriptions, messagesReceived}], count}``
``GET /mqtt-connections/stats``                ``{total, byBroker: {id: n},
                                               subscriptions}``
``GET /mqtt-connections/{id}``                 one connection (``<port>:<clientId>``); 404
``DELETE /mqtt-connections/{id}``              closes it ``{message, id}``; 404
``POST /mqtt/{id}/record/start|stop``          ``{id, recordingEnabled, message}``; 404
``GET /mqtt-recordings``                       query ``topicPattern`` (``+``/``#``),
                                               ``clientId``, ``direction`` (publish |
                                               subscribe), ``brokerId``, ``limit`` (1-10000,
                                               default 100), ``offset`` -> ``{recordings,
                                               total, limit, offset}``, oldest first; 400
                                               ``validation_error``
``DELETE /mqtt-recordings``                    clear: ``{deleted: n}``
``GET /mqtt-recordings/stats``                 :func:`~mocks.protocols.mqtt.recordings.
                                               statistics`
``POST /mqtt-recordings/export``               ``{version, exportedAt, count, dropped,
                                               recordings}`` (every entry, oldest first)
``POST /mqtt-recordings/convert``              body ``{recordingIds?, topicPattern?,
                                               deduplicate?, includeQoS? (true),
                                               includeRetain? (true), port?, name?}`` ->
                                               ``{mock, recordingCount, topicCount,
                                               skipped}``; 400 ``validation_error`` /
                                               ``no_recordings``
``GET /mqtt-recordings/{id}``                  one entry; 404 ``MQTT recording not found``
``DELETE /mqtt-recordings/{id}``               ``{message, id}``; 404
``POST /mqtt-recordings/{id}/convert``         as convert, of that entry only; 404
=============================================  ============================================

Recording entries: ``{id, brokerId, port, topic, payload (UTF-8 text, "" when binary),
payloadBase64? (binary payloads), qos, retain, clientId, direction: publish | subscribe,
timestamp (epoch s)}``; a broker records client publishes and subscriptions while its id is
in the hub's ``recording`` set. The store is bounded (see
:class:`~recordings.store.KindRecordings`: the oldest go first, ``dropped`` counts
them).

:func:`mqtt_ports` gives the ``GET /ports`` rows (``{port, protocol: "MQTT", component:
"MQTT Broker", status, tls?}``). ``control`` is an ``EngineControl``; everything here reads
its engine's live snapshot, listener supervisor and MQTT hub on the engine loop.

Source: SPEC "WebSocket, gRPC, MQTT and SOAP administration" (MQTT: list brokers, status,
recording, recordings filters and convert body); behavior notes §1 (MQTT brokers, clients
and recordings routes, ``/ports`` rows). Django-free.

The broker module (amqtt) and the recordings module (topic matching) are imported on the
first call that needs them; a view of the brokers (``/ports``, ``GET /mqtt``) finds none
without importing them while no MQTT mock has compiled (no :class:`MqttPortService` can
exist before its module is loaded), so an admin API serving HTTP mocks only never loads amqtt.
"""
from __future__ import annotations

import re
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from datetime import datetime, timezone

from mocks.core.recordings import (RecordingQueryError, convert_body, hub_routes,
                                   route_recordings)

if TYPE_CHECKING:  # pragma: no cover
    from mocks.protocols.mqtt.broker import MqttPortService

BROKER_MODULE = "mocks.protocols.mqtt.broker"

_STATUS = re.compile(r"^/mqtt/([^/]+)/status$")
_RECORD = re.compile(r"^/mqtt/([^/]+)/record/(start|stop)$")
_CONNECTION = re.compile(r"^/mqtt-connections/([^/]+)$")
BROKER_NOT_FOUND = {"error": "not_found", "message": "MQTT broker not found"}
CONNECTION_NOT_FOUND = {"error": "not_found", "message": "MQTT connection not found"}
RECORDING_NOT_FOUND = {"error": "not_found", "message": "MQTT recording not found"}


def utc_timestamp(epoch: float) -> str:
    """RFC 3339 UTC text of an epoch time (``2026-01-02T03:04:05.678Z``)."""
    moment = datetime.fromtimestamp(epoch, tz=timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _hub(control: Any) -> Any:
    from mocks.protocols.mqtt.broker import hub_of  # amqtt, on first use

    return hub_of(control.engine.shared_state)


def _service_class() -> type | None:
    """:class:`MqttPortService` when its module is loaded; None before (then no instance
    exists)."""
    return getattr(sys.modules.get(BROKER_MODULE), "MqttPortService", None)


def select(entries: Any, query: dict[str, str]) -> dict[str, Any]:
    """:func:`mocks.protocols.mqtt.recordings.select`, imported on first use."""
    from mocks.protocols.mqtt import recordings

    return recordings.select(entries, query)


def statistics(entries: Any, **options: Any) -> dict[str, Any]:
    """:func:`mocks.protocols.mqtt.recordings.statistics`, imported on first use."""
    from mocks.protocols.mqtt import recordings

    return recordings.statistics(entries, **options)


def convert(entries: Any, **options: Any) -> dict[str, Any]:
    """:func:`mocks.protocols.mqtt.recordings.convert`, imported on first use."""
    from mocks.protocols.mqtt import recordings

    return recordings.convert(entries, **options)


def _services(control: Any) -> dict[int, MqttPortService]:
    """Port -> the service the live snapshot wants for it."""
    kind = _service_class()
    if kind is None:
        return {}
    return {service.port: service for service in control.engine.snapshot.services.values()
            if isinstance(service, kind)}


def _running(control: Any, port: int) -> MqttPortService | None:
    kind = _service_class()
    service = control.engine.listeners.running.get(f"mqtt:{port}")
    return service if kind and isinstance(service, kind) and service.running else None


def _row(control: Any, service: MqttPortService) -> dict[str, Any]:
    live = _running(control, service.port)
    shown = live or service
    return {"id": service.broker_id, "port": service.port, "running": live is not None,
            "recordingEnabled": service.broker_id in _hub(control).recording,
            "address": live.address if live is not None else "",
            "mocks": list(service.table.mock_ids),
            "topics": [topic.topic for topic in service.table.topics],
            "clients": shown.client_count()}


def find_broker(control: Any, broker_id: str) -> MqttPortService | None:
    """The service of a mock id (any of its mocks) or ``mqtt:<port>``; None when unknown."""
    for service in _services(control).values():
        if broker_id == service.name or broker_id in service.table.mock_ids:
            return service
    return None


async def mqtt_overview(control: Any) -> dict[str, Any]:
    """``GET /mqtt``."""
    rows = [_row(control, service) for _port, service in sorted(_services(control).items())]
    return {"brokers": rows, "count": len(rows)}


async def mqtt_summary(control: Any) -> dict[str, Any]:
    """``GET /mqtt/status``."""
    services = _services(control)
    live = [service for port in services if (service := _running(control, port)) is not None]
    return {"running": bool(live), "brokers": len(services),
            "clients": len(_hub(control).connections),
            "messagesReceived": sum(service.messages_received for service in live),
            "messagesPublished": sum(service.messages_published for service in live)}


async def mqtt_status(control: Any, broker_id: str) -> dict[str, Any] | None:
    """``GET /mqtt/{id}/status``; None when unknown."""
    service = find_broker(control, broker_id)
    if service is None:
        return None
    live = _running(control, service.port)
    row = _row(control, service)
    row.update(tls=service.table.tls is not None,
               messagesReceived=live.messages_received if live else 0,
               messagesPublished=live.messages_published if live else 0)
    if service.websocket is not None:
        row["websocket"] = {"port": service.websocket[0], "path": service.websocket[1]}
    if live is not None and live.started_at is not None:
        row["startedAt"] = utc_timestamp(live.started_at)
    return row


def _connection(info: dict[str, Any]) -> dict[str, Any]:
    row = dict(info)
    row["connectedAt"] = utc_timestamp(info["connectedAt"])
    row["subscriptions"] = list(info["subscriptions"])
    return row


async def mqtt_connections(control: Any) -> dict[str, Any]:
    """``GET /mqtt-connections``."""
    rows = [_connection(info) for info in _hub(control).connections.values()]
    return {"connections": rows, "count": len(rows)}


async def mqtt_connection_stats(control: Any) -> dict[str, Any]:
    """``GET /mqtt-connections/stats``."""
    by_broker: dict[str, int] = {}
    subscriptions = 0
    for info in _hub(control).connections.values():
        by_broker[info["brokerId"]] = by_broker.get(info["brokerId"], 0) + 1
        subscriptions += len(info["subscriptions"])
    return {"total": sum(by_broker.values()), "byBroker": by_broker,
            "subscriptions": subscriptions}


async def mqtt_connection(control: Any, connection_id: str) -> dict[str, Any] | None:
    """``GET /mqtt-connections/{id}``; None when unknown."""
    info = _hub(control).connections.get(connection_id)
    return _connection(info) if info is not None else None


async def close_mqtt_connection(control: Any, connection_id: str) -> dict[str, Any] | None:
    """``DELETE /mqtt-connections/{id}``: close the client's connection; None when unknown."""
    hub = _hub(control)
    info = hub.connections.get(connection_id)
    if info is None:
        return None
    service = hub.brokers.get(info["port"])
    if service is None or not await service.disconnect(info["clientId"]):
        return None
    hub.connections.pop(connection_id, None)
    return {"message": "Connection closed", "id": connection_id}


# ------------------------------------------------------------------------------ recording

async def set_recording(control: Any, broker_id: str, enabled: bool) -> dict[str, Any] | None:
    """``POST /mqtt/{id}/record/start|stop`` (a mock id or ``mqtt:<port>``): ``{id,
    recordingEnabled, message}``; None when the broker is unknown."""
    service = find_broker(control, broker_id)
    if service is None:
        return None
    recording = _hub(control).recording
    if enabled:
        recording.add(service.broker_id)
    else:
        recording.discard(service.broker_id)
    return {"id": service.broker_id, "recordingEnabled": enabled,
            "message": "Recording started" if enabled else "Recording stopped"}


def _convert_options(body: Any) -> dict[str, Any]:
    """The keyword options of :func:`convert` from a JSON body; raises
    :class:`RecordingQueryError` naming the bad key."""
    options, body = convert_body(body, {"deduplicate": "deduplicate",
                                        "includeQoS": "include_qos",
                                        "includeRetain": "include_retain"})
    for key, kind in (("topicPattern", str), ("name", str), ("port", int)):
        value = body.get(key)
        if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
            raise RecordingQueryError(f"{key} must be a {kind.__name__}")
    port = body.get("port")
    if port is not None and not 1 <= port <= 65535:
        raise RecordingQueryError("port must be 1-65535")
    options.update(topic_pattern=body.get("topicPattern") or None, port=port,
                   name=body.get("name") or None)
    return options


#: The ``/mqtt-recordings…`` operations: the engine-control port (:func:`route_mqtt`)
#: and the admin API (:mod:`mocks.protocols.mqtt.api`).
RECORDING_ROUTES = hub_routes("/mqtt-recordings", RECORDING_NOT_FOUND, _hub, select,
                              statistics, _convert_options, convert, utc_timestamp)


def mqtt_ports(control: Any) -> list[dict[str, Any]]:
    """``GET /ports`` rows of the MQTT brokers, by port: ``{port, protocol: "MQTT",
    component: "MQTT Broker", status, tls?}``, followed by a row of component ``"MQTT over
    WebSocket"`` for a broker's WebSocket port."""
    rows = []
    for port, service in sorted(_services(control).items()):
        row: dict[str, Any] = {"port": port, "protocol": "MQTT", "component": "MQTT Broker",
                               "status": "running" if _running(control, port) else "stopped"}
        if service.table.tls is not None:
            row["tls"] = True
        rows.append(row)
        if service.websocket is not None:
            rows.append({**row, "port": service.websocket[0],
                         "component": "MQTT over WebSocket"})
    return rows


async def route_mqtt(control: Any, method: str, path: str, query: dict[str, str],
                     body: Callable[[], Awaitable[bytes]],
                     answer: Callable[[int, Any], Awaitable[None]]) -> bool:
    """Answer an MQTT route of the engine-control port; False when ``path`` is not one.
    ``query`` is the decoded query string, ``body`` reads the request body."""
    if await route_recordings(RECORDING_ROUTES, control, method, path, query, body, answer):
        return True
    if not (path == "/mqtt" or path.startswith("/mqtt/") or path == "/mqtt-connections"
            or path.startswith("/mqtt-connections/")):
        return False
    connection = _CONNECTION.match(path)
    status = _STATUS.match(path)
    record = _RECORD.match(path)
    if connection is not None and method == "DELETE":
        result = await close_mqtt_connection(control, connection.group(1))
        await (answer(200, result) if result is not None else
               answer(404, CONNECTION_NOT_FOUND))
        return True
    if record is not None and method == "POST":
        result = await set_recording(control, record.group(1), record.group(2) == "start")
        await (answer(200, result) if result is not None else answer(404, BROKER_NOT_FOUND))
        return True
    if method != "GET":
        await answer(405, {"error": "method_not_allowed", "message": f"{method} not allowed"})
        return True
    if path == "/mqtt":
        await answer(200, await mqtt_overview(control))
    elif path == "/mqtt/status":
        await answer(200, await mqtt_summary(control))
    elif path == "/mqtt-connections":
        await answer(200, await mqtt_connections(control))
    elif path == "/mqtt-connections/stats":
        await answer(200, await mqtt_connection_stats(control))
    elif connection is not None:
        found = await mqtt_connection(control, connection.group(1))
        await (answer(200, found) if found is not None else answer(404, CONNECTION_NOT_FOUND))
    elif status is not None:
        found = await mqtt_status(control, status.group(1))
        await (answer(200, found) if found is not None else answer(404, BROKER_NOT_FOUND))
    else:
        await answer(404, {"error": "not_found", "message": "Resource not found"})
    return True
