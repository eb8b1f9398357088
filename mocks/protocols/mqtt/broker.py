"""The MQTT broker of one port: an ``amqtt`` broker on the engine's event loop.

:class:`MqttPortService` is the :class:`~mocks.protocols.ListenerService` ``mqtt:<port>``:
``start`` binds ``<listen host>:<port>`` (loopback by default; TLS when the mock says so) and,
with ``websocket``, the MQTT over WebSocket port, and begins the scheduled publishes; ``stop``
cancels them and shuts the broker down. The broker is ``amqtt`` as
:mod:`mocks.protocols.mqtt.amqtt_broker` adapts it (MQTT 3.1 and 3.1.1: QoS 0-2, retained
messages, ``+``/``#`` and shared ``$share/<group>/...`` subscriptions, clean and persistent
sessions held in memory; an MQTT 5 CONNECT is refused at once with "unacceptable protocol
version"). Its only plugin is :class:`MockdPlugin`: authentication from the mock's ``auth``
block and ``tls.allowedCNs``/``allowedOUs``, and connection tracking. The per-message work
runs in :class:`~mocks.protocols.mqtt.amqtt_broker.MockBroker` without amqtt's plugin
dispatch (which costs a task per hook per message): the ACL check on publish, subscribe and
delivery (a plain True when auth is off), and, for each client publish that passed it,
:meth:`MqttPortService.client_published`: the request log entry (method ``mqtt``, path =
topic), the recording, and the ``onPublish`` answer, which alone gets a task of its own.
While chaos is on, a client publish first goes through it
(:meth:`MqttPortService.chaos_admits`: latency delays it; an error or reset drops it and
disconnects the client).

Hardening (:mod:`mocks.protocols.mqtt.wire`, :mod:`mocks.protocols.mqtt.amqtt_broker`): a
packet whose remaining length exceeds :data:`MAX_PACKET_BYTES` closes the connection; a
client that does not complete CONNECT within :data:`CONNECT_TIMEOUT_SECONDS`, sends bytes
that are not MQTT, stays silent past its keep alive or holds too many QoS 2 publishes open is
disconnected; an offline session's queue is bounded; other clients keep being served.

Engine-wide state (:class:`MqttHub`, ``shared["mqtt"]``): running brokers by port, client
connections, and the bounded recording store
(the ``mqtt`` recordings of the one recording store, :class:`recordings.store.KindRecordings`).

Source: behavior notes §1 (MQTT routes, recordings), §4 (CORS origins, for the WebSocket
listener), §10 (``mqtt`` row), §14 (``mtls`` keys, mirrored by ``tls``); SPEC "Mock kinds",
"MQTT" administration. Django-free.
"""
from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import ssl
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Hashable

import orjson
from amqtt.broker import Broker
from amqtt.contexts import Action
from amqtt.plugins.base import BaseAuthPlugin

from chaos.injector import before_call
from mocks.core.recordings import MAX_RECORDING_BYTES, MAX_RECORDINGS
from mocks.core.templating import TemplateState
from mocks.protocols.mqtt.amqtt_broker import CONNECT_TIMEOUT_SECONDS, MockBroker
from mocks.protocols.mqtt.tls import MqttTlsSettings, certificate_refusal, server_context
from mocks.protocols.mqtt.topics import (capture_params, match, message_request, render)
from mocks.protocols.mqtt.wire import MAX_PACKET_BYTES

logger = logging.getLogger("mocks.mqtt")

__all__ = ["CONNECT_TIMEOUT_SECONDS", "MAX_PACKET_BYTES", "BrokerTable", "CompiledTopic",
           "MockdPlugin", "MqttHub", "MqttPortService", "credentials_match", "device_topic",
           "hub_of"]


# ------------------------------------------------------------------------------ recordings
# Entries of the ``mqtt`` kind of the one recording store (:mod:`recordings.store`, bounded
# by ``MAX_RECORDINGS`` entries and ``MAX_RECORDING_BYTES`` bytes of stored JSON):
# ``{id, brokerId, port, topic, payload (text), payloadBase64?, qos, retain, clientId,
# direction: publish | subscribe, timestamp (epoch s)}``.


@dataclass
class MqttHub:
    """Engine-wide MQTT state: ``brokers`` (port -> running service), ``connections``
    (connection id -> info dict), ``recording`` (broker ids recording now) and
    ``recordings``."""

    brokers: dict[int, "MqttPortService"] = field(default_factory=dict)
    connections: dict[str, dict[str, Any]] = field(default_factory=dict)
    recording: set[str] = field(default_factory=set)
    recordings: Any = field(default_factory=lambda: _mqtt_recordings())
    published: int = 0


def _mqtt_recordings() -> Any:
    from recordings.store import KindRecordings

    return KindRecordings("mqtt", max_entries=MAX_RECORDINGS, max_bytes=MAX_RECORDING_BYTES)


def hub_of(shared: dict[str, Any] | None) -> MqttHub:
    """The engine's :class:`MqttHub` (made on first use); a private one without ``shared``."""
    if shared is None:
        return MqttHub()
    hub = shared.get("mqtt")
    if hub is None:
        hub = shared["mqtt"] = MqttHub()
    return hub


# -------------------------------------------------------------------------- compiled data

@dataclass(frozen=True)
class CompiledTopic:
    """One ``topics`` entry, templates compiled (see :mod:`mocks.protocols.mqtt.handler`)."""

    mock_id: str
    topic: str
    qos: int
    retain: bool
    messages: tuple[Any, ...]          # (template, delay s, repeat, interval s)
    devices: tuple[str, ...]           # simulated device ids ("" = no simulation)
    response: Any                      # (payload template, topic template | None, delay s)
    forward: str | None
    table: Any                         # (resource, action) or None
    key_path: str
    #: QoS of the ``onPublish`` answer; None: the QoS of the client's publish.
    answer_qos: int | None = None
    #: QoS of the forward; None: the QoS of the client's publish.
    forward_qos: int | None = None


@dataclass(frozen=True)
class BrokerTable:
    """Everything one port's broker serves: ``port``, ``mock_ids``, ``topics``, ``tls``
    (:class:`~mocks.protocols.mqtt.tls.MqttTlsSettings` or None), ``users`` (username ->
    (password, acl tuple of (filter, access))) or None when auth is off, and ``websocket``
    (``(port, path or None)`` of the MQTT over WebSocket listener, or None)."""

    port: int
    mock_ids: tuple[str, ...]
    topics: tuple[CompiledTopic, ...]
    tls: MqttTlsSettings | None
    users: dict[str, tuple[str, tuple[tuple[str, str], ...]]] | None
    websocket: tuple[int, str | None] | None = None


def device_topic(topic: str, device_id: str) -> str:
    """The topic a simulated device publishes on (see ``deviceSimulation``)."""
    if "{deviceId}" in topic:
        return topic.replace("{deviceId}", device_id)
    levels = topic.split("/")
    if "+" in levels:
        levels[levels.index("+")] = device_id
        return "/".join(levels)
    return f"{topic}/{device_id}"


def _utf8(value: str | bytes | None) -> bytes:
    if value is None:
        return b""
    return value if isinstance(value, bytes) else value.encode("utf-8", "surrogateescape")


def credentials_match(users: dict[str, tuple[str, Any]], username: str | bytes | None,
                      password: str | bytes | None) -> bool:
    """Whether a CONNECT's ``username`` and ``password`` (text or bytes, None when absent)
    name a configured user of ``users`` (``username -> (password, acl)``).

    The password is compared in constant time (:func:`hmac.compare_digest`), and an unknown
    user costs the same comparison against an empty password, so the answer time tells
    nothing about the password or about which usernames exist. Source: behavior notes §10
    "GraphQL, gRPC, WebSocket, MQTT mock configs" (``auth.users``).
    """
    name = _utf8(username).decode("utf-8", "surrogateescape")
    known = users.get(name)
    expected = _utf8(known[0]) if known is not None else b""
    matches = hmac.compare_digest(_utf8(password), expected)
    return matches and known is not None


# ------------------------------------------------------------------------------- the plugin

class MockdPlugin(BaseAuthPlugin):
    """The broker's only plugin: authentication and connection tracking for its
    :class:`MqttPortService` (set as ``service`` right after the broker is built). ACLs and
    client publishes are handled by :class:`~mocks.protocols.mqtt.amqtt_broker.MockBroker`
    directly."""

    service: "MqttPortService | None" = None

    async def authenticate(self, *, session: Any) -> bool | None:
        """True when the client certificate passes ``tls.allowedCNs``/``allowedOUs``
        (:func:`~mocks.protocols.mqtt.tls.certificate_refusal`) and auth is off or the
        CONNECT's username and password match a user (:func:`credentials_match`); False
        answers CONNACK "not authorized"."""
        service = self.service
        if service is None:
            return True
        refusal = certificate_refusal(session.ssl_object, service.table.tls)
        if refusal is not None:
            logger.warning("MQTT client %s refused on port %s: %s", session.client_id,
                           service.port, refusal)
            return False
        users = service.table.users
        if users is None:
            return True
        return credentials_match(users, session.username, session.password)

    async def on_broker_client_connected(self, *, client_id: str, client_session: Any) -> None:
        """Track the connection (``/mqtt-connections``)."""
        if self.service is not None:
            self.service.connected(client_id, client_session)

    async def on_broker_client_disconnected(self, *, client_id: str,
                                            client_session: Any) -> None:
        """Forget the connection."""
        if self.service is not None:
            self.service.disconnected(client_id)

    async def on_broker_client_subscribed(self, *, client_id: str, topic: str,
                                          qos: int) -> None:
        """Count and record a subscription."""
        if self.service is not None:
            self.service.subscribed(client_id, topic, qos)


# ------------------------------------------------------------------------------ the service

class MqttPortService:
    """The :class:`~mocks.protocols.ListenerService` ``mqtt:<port>`` (see the module
    docstring).

    Attributes:
        name: ``mqtt:<port>``; port: the TCP port; table: the :class:`BrokerTable` served.
        definition: ``(port, tls settings, users, websocket)``: topics change in place
            (:meth:`adopt`); a new port, TLS setting, user list or WebSocket listener
            restarts the broker.
        broker_id: the id of the broker's first mock (admin routes ``/mqtt/{id}``).
        websocket: ``(port, path or None)`` of the MQTT over WebSocket listener, or None.
        tls_context: the server :class:`ssl.SSLContext` of ``tls`` while serving, else None.
        running, address, started_at: state while serving.
    """

    def __init__(self, table: BrokerTable, shared: dict[str, Any] | None,
                 tables: Any = None):
        self.port = table.port
        self.name = f"mqtt:{table.port}"
        self.shared = shared
        self.hub = hub_of(shared)
        self.sink = shared.get("serve_event") if shared is not None else None
        #: ``shared["chaos"]``: returns the live chaos injector, None while chaos is off.
        self.chaos_of = shared.get("chaos") if shared is not None else None
        self.state: TemplateState = ((shared or {}).get("template_state") or TemplateState())
        self.tables = tables
        self.table = table
        users = tuple(sorted((name, password, acl) for name, (password, acl)
                             in (table.users or {}).items()))
        self.definition: Hashable = (table.port, table.tls, table.users is not None, users,
                                     table.websocket)
        self.websocket = table.websocket
        self.tls_context: ssl.SSLContext | None = None
        self.broker_id = table.mock_ids[0]
        self.running = False
        self.address = ""
        self.started_at: float | None = None
        self.messages_received = 0
        self.messages_published = 0
        self._broker: Broker | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._answering: set[asyncio.Task[None]] = set()  # onPublish answers under way

    # ListenerService -------------------------------------------------------------------
    def merged(self, other: "MqttPortService") -> "MqttPortService":
        """One broker serving this service's topics and ``other``'s (the earlier mock keeps
        TLS, auth and the WebSocket listener)."""
        mine, theirs = self.table, other.table
        table = BrokerTable(mine.port, mine.mock_ids + theirs.mock_ids,
                            mine.topics + theirs.topics, mine.tls or theirs.tls,
                            mine.users if mine.users is not None else theirs.users,
                            mine.websocket or theirs.websocket)
        return MqttPortService(table, self.shared, self.tables or other.tables)

    def adopt(self, replacement: "MqttPortService") -> None:
        """Serve ``replacement``'s topics without restarting the broker (schedules restart)."""
        self.table = replacement.table
        self.broker_id = replacement.broker_id
        if self.running:
            self._cancel_schedules()
            self._start_schedules()

    async def start(self) -> None:
        """Bind and serve: the MQTT port and, with ``websocket``, its WebSocket port (TLS on
        both with ``tls``). Raises ``OSError`` naming the ports and the mock when one cannot
        be bound or the TLS files cannot be loaded."""
        host = (self.shared or {}).get("listen_host") or "127.0.0.1"
        listeners: dict[str, Any] = {"default": {"type": "tcp", "bind": f"{host}:{self.port}",
                                                 "max_connections": 10_000}}
        ports = str(self.port)
        if self.websocket is not None:
            listeners["websocket"] = {"type": "ws", "bind": f"{host}:{self.websocket[0]}",
                                      "max_connections": 10_000}
            ports += f" (WebSocket port {self.websocket[0]})"
        # The keep-alive deadline is the broker's own (amqtt_broker.MockProtocolHandler).
        config = {"listeners": listeners, "plugins": {f"{__name__}.MockdPlugin": {}},
                  "timeout_disconnect_delay": 0}
        mocks = ", ".join(repr(mock_id) for mock_id in self.table.mock_ids)
        try:
            self.tls_context = (server_context(self.table.tls) if self.table.tls is not None
                                else None)
            broker = MockBroker(config, loop=asyncio.get_running_loop())
            broker.service = self
            for plugin in broker.plugins_manager.plugins:
                if isinstance(plugin, MockdPlugin):
                    plugin.service = self
            await broker.start()
        except Exception as error:  # noqa: BLE001 - amqtt wraps OSError in BrokerError
            raise OSError(f"MQTT port {ports} of mock {mocks} cannot be bound on {host} "
                          f"(is it in use by another program?): {error}") from None
        self._broker = broker
        self.running = True
        self.address = f"{host}:{self.port}"
        self.started_at = time.time()
        self.hub.brokers[self.port] = self
        self._start_schedules()
        logger.info("MQTT broker for %s listening on %s", mocks, self.address)

    async def stop(self) -> None:
        """Cancel the schedules and shut the broker down (clients are disconnected)."""
        self._cancel_schedules()
        broker, self._broker = self._broker, None
        self.running = False
        self.tls_context = None
        if self.hub.brokers.get(self.port) is self:
            del self.hub.brokers[self.port]
        for key in [key for key, info in self.hub.connections.items()
                    if info["port"] == self.port]:
            del self.hub.connections[key]
        if broker is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(broker.shutdown(), 5)

    def health(self) -> dict[str, Any]:
        """``{status, port, address, mocks, topics, tls, clients, websocketPort?}``."""
        health = {"status": "running" if self.running else "stopped", "port": self.port,
                  "address": self.address, "mocks": list(self.table.mock_ids),
                  "topics": [topic.topic for topic in self.table.topics],
                  "tls": self.table.tls is not None, "clients": self.client_count()}
        if self.websocket is not None:
            health["websocketPort"] = self.websocket[0]
        return health

    def origin_allowed(self, origin: str) -> bool:
        """Whether a WebSocket upgrade from the browser origin ``origin`` is admitted: the
        data plane's CORS policy (``shared["cors"]``, a callable returning it: loopback
        origins by default, else ``serverConfig.cors.allowOrigins``), or no origin at all
        without one (behavior notes §4)."""
        cors_of = (self.shared or {}).get("cors")
        policy = cors_of() if cors_of is not None else None
        return policy is not None and policy.allowed(origin)

    # state ----------------------------------------------------------------------------
    def client_count(self) -> int:
        """Connected clients of this broker."""
        return sum(1 for info in self.hub.connections.values() if info["port"] == self.port)

    def connected(self, client_id: str, session: Any) -> None:
        """Track a client that passed CONNECT."""
        self.hub.connections[f"{self.port}:{client_id}"] = {
            "id": f"{self.port}:{client_id}", "clientId": client_id, "port": self.port,
            "brokerId": self.broker_id, "username": session.username,
            "remoteAddr": f"{session.remote_address}:{session.remote_port}",
            "protocolVersion": getattr(session, "mockd_version", "3.1.1"),
            "transport": getattr(session, "mockd_transport", "tcp"),
            "cleanSession": bool(session.clean_session),
            "keepAlive": getattr(session, "mockd_keep_alive", session.keep_alive),
            "connectedAt": time.time(), "subscriptions": [], "messagesReceived": 0}

    def disconnected(self, client_id: str) -> None:
        """Forget a client."""
        self.hub.connections.pop(f"{self.port}:{client_id}", None)

    def subscribed(self, client_id: str, topic: str, qos: int) -> None:
        """Note a subscription (and record it while recording)."""
        info = self.hub.connections.get(f"{self.port}:{client_id}")
        if info is not None and topic not in info["subscriptions"]:
            info["subscriptions"].append(topic)
        if self.broker_id in self.hub.recording:
            self._record(client_id, topic, b"", qos, False, "subscribe")

    async def disconnect(self, client_id: str) -> bool:
        """Close a client's connection; False when it is not connected here."""
        broker = self._broker
        if broker is None or client_id not in broker.sessions:
            return False
        _session, handler = broker.sessions[client_id]
        writer = getattr(handler, "writer", None)
        if writer is None:
            return False
        with contextlib.suppress(Exception):
            await writer.close()
        return True

    # publishing -------------------------------------------------------------------------
    async def publish(self, topic: str, payload: bytes, qos: int = 0,
                      retain: bool = False) -> None:
        """Publish as the broker itself (to every matching subscriber)."""
        broker = self._broker
        if broker is None:
            return
        self.messages_published += 1
        await broker.internal_message_broadcast(topic, payload, qos)
        if retain:
            await broker.retain_message(None, topic, payload, qos)

    def _record(self, client_id: str, topic: str, payload: bytes, qos: int, retain: bool,
                direction: str) -> None:
        entry: dict[str, Any] = {
            "id": f"mqttrec_{uuid.uuid4().hex[:16]}", "brokerId": self.broker_id,
            "port": self.port, "topic": topic, "qos": qos, "retain": retain,
            "clientId": client_id, "direction": direction, "timestamp": time.time()}
        try:
            entry["payload"] = payload.decode("utf-8")
        except UnicodeDecodeError:
            import base64

            entry["payload"] = ""
            entry["payloadBase64"] = base64.b64encode(payload).decode()
        self.hub.recordings.add(entry)

    def permits(self, session: Any, topic: str | None, action: Action) -> bool:
        """The ACL check of ``auth`` (docs/mqtt.md "Auth and ACL"): always True when auth is
        off; else the CONNECT's user must be known, and ``action`` (``Action.PUBLISH`` needs
        ``write``, subscribing and delivery need ``read``) allowed on ``topic`` by one of its
        ``acl`` entries (a user without entries may use every topic)."""
        users = self.table.users
        if users is None or session is None or topic is None:
            return True
        known = users.get(session.username or "")
        if known is None:
            return False
        acl = known[1]
        if not acl:
            return True
        wanted = "write" if action == Action.PUBLISH else "read"
        return any(access in (wanted, "readwrite") and match(pattern, topic) is not None
                   for pattern, access in acl)

    async def chaos_admits(self, client_id: str, topic: str, message: Any) -> bool:
        """Chaos for a client's publish (behavior notes §11, the rules seeing it as method
        ``PUBLISH`` on path = topic): waits the injected latency before the message is
        delivered; False for an injected error or reset, the message then being dropped
        and the client disconnected (MQTT 3.1.1 has no error answer to a PUBLISH), with a
        request-log entry of error ``chaos``. An injected empty response passes."""
        chaos_of = self.chaos_of
        decision = await before_call(chaos_of() if chaos_of is not None else None,
                                     "PUBLISH", topic)
        if decision is None or (not decision.reset and (decision.status or 500) < 400):
            return True
        packet = message.publish_packet
        self._log(message_request(topic, bytes(message.data or b""), client_id), time.time(),
                  None, client_id, topic, message.qos or 0,
                  bool(packet is not None and packet.retain_flag), None, "chaos")
        return False

    def client_published(self, client_id: str, topic: str, payload: bytes, qos: int,
                         retain: bool) -> None:
        """A client's publish that passed the ACL and is queued for delivery: counters,
        recording (while recording), and the request log entry (behavior notes §1: method
        ``mqtt``, path = topic). When the first topic entry whose filter matches has
        ``onPublish`` work (an answer, a forward, a table write), that work runs in a task of
        its own, so a delayed answer never holds the client's next packets, and the log entry
        follows it with the answer; otherwise the entry is written at once."""
        started = time.time()
        self.messages_received += 1
        self.hub.published += 1
        info = self.hub.connections.get(f"{self.port}:{client_id}")
        if info is not None:
            info["messagesReceived"] += 1
        if self.hub.recording and self.broker_id in self.hub.recording:
            self._record(client_id, topic, payload, qos, retain, "publish")
        request = message_request(topic, payload, client_id)
        matched: CompiledTopic | None = None
        captures: list[str] | None = None
        for entry in self.table.topics:
            captures = match(entry.topic, topic)
            if captures is not None:
                matched = entry
                break
        if matched is None or (matched.response is None and not matched.forward
                               and matched.table is None):
            self._log(request, started, matched, client_id, topic, qos, retain, None, None)
            return
        task = asyncio.ensure_future(self._answer_and_log(
            request, started, matched, captures, client_id, topic, payload, qos, retain))
        self._answering.add(task)
        task.add_done_callback(self._answering.discard)

    async def _answer_and_log(self, request: Any, started: float, matched: CompiledTopic,
                              captures: list[str] | None, client_id: str, topic: str,
                              payload: bytes, qos: int, retain: bool) -> None:
        answer: bytes | None = None
        error = None
        try:
            answer = await self._answer(matched, request, captures, payload, qos)
        except Exception as problem:  # noqa: BLE001 - a bad template never stops the broker
            error = "mqtt_answer_failed"
            logger.warning("MQTT answer of %s on %s failed: %s", matched.mock_id, topic,
                           problem)
        self._log(request, started, matched, client_id, topic, qos, retain, answer, error)

    async def _answer(self, entry: CompiledTopic, request: Any, captures: list[str] | None,
                      payload: bytes, qos: int) -> bytes | None:
        # `qos` is the client's publish's: the answer and the forward go out at it unless the
        # config names theirs (CompiledTopic.answer_qos, forward_qos).
        if entry.forward:
            forward_qos = entry.forward_qos if entry.forward_qos is not None else qos
            await self.publish(entry.forward, payload, forward_qos, False)
        if entry.table is not None and self.tables is not None:
            await self._write_table(entry, request)
        if entry.response is None:
            return None
        template, topic_template, delay = entry.response
        params = capture_params(captures)
        answer = render(template, request, params, self.state).encode()
        target = (render(topic_template, request, params, self.state)
                  if topic_template is not None else request.path)
        if delay:
            await asyncio.sleep(delay)
        answer_qos = entry.answer_qos if entry.answer_qos is not None else qos
        await self.publish(target, answer, answer_qos, entry.retain)
        return answer

    async def _write_table(self, entry: CompiledTopic, request: Any) -> None:
        await write_table(self.tables, entry, request)

    def _log(self, request: Any, started: float, matched: CompiledTopic | None,
             client_id: str, topic: str, qos: int, retain: bool, answer: bytes | None,
             error: str | None) -> None:
        sink = self.sink
        if sink is None:
            return
        try:
            sink(request=request, received_at=started,
                 duration_ms=(time.time() - started) * 1000.0, status=0 if error is None else 1,
                 mock_id=matched.mock_id if matched is not None else self.broker_id,
                 path_template=matched.topic if matched is not None else None,
                 protocol="mqtt", error=error, response_body=answer,
                 details={"mqttTopic": topic, "mqttClientId": client_id,
                          "mqtt": {"topic": topic, "clientId": client_id, "qos": qos,
                                   "retain": retain, "port": self.port}})
        except Exception:  # noqa: BLE001 - logging never breaks the broker
            logger.exception("MQTT request log entry of %s failed", topic)

    # schedules --------------------------------------------------------------------------
    def _start_schedules(self) -> None:
        for entry in self.table.topics:
            for message in entry.messages:
                self._tasks.append(asyncio.ensure_future(self._schedule(entry, message)))

    def _cancel_schedules(self) -> None:
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()

    async def _schedule(self, entry: CompiledTopic, message: Any) -> None:
        template, delay, repeat, interval = message
        devices = entry.devices or ("",)
        loop = asyncio.get_running_loop()
        start = loop.time() + delay
        step = (interval / len(devices)) if repeat and interval else 0.0
        cycle = 0
        try:
            while True:
                for index, device in enumerate(devices):
                    due = start + cycle * interval + index * step
                    wait = due - loop.time()
                    if wait > 0:
                        await asyncio.sleep(wait)
                    topic = device_topic(entry.topic, device) if device else entry.topic
                    params = {"deviceId": device} if device else {}
                    request = message_request(topic, b"")
                    try:
                        payload = render(template, request, params, self.state).encode()
                    except Exception as problem:  # noqa: BLE001
                        logger.warning("MQTT message of %s on %s failed: %s", entry.mock_id,
                                       topic, problem)
                        return
                    await self.publish(topic, payload, entry.qos, entry.retain)
                if not repeat:
                    return
                cycle += 1
                if loop.time() > start + (cycle + 1) * interval:
                    # fell behind by more than a whole cycle: skip ahead, never burst
                    cycle = int((loop.time() - start) // interval)
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - a schedule never stops the broker
            logger.exception("MQTT schedule of %s on %s stopped", entry.mock_id, entry.topic)


async def write_table(store: Any, entry: CompiledTopic, request: Any) -> None:
    """``onPublish`` with ``statefulResource``: the JSON object payload becomes a row
    (``create``) or updates the row of its id (``update``). A payload that is not a JSON
    object, or a table error, is logged and skipped."""
    from tables.errors import TableError
    from tables.store import OperationRequest

    resource, action = entry.table
    try:
        document = orjson.loads(request.body)
    except orjson.JSONDecodeError:
        logger.warning("MQTT payload on %s is not JSON; table %s not written", request.path,
                       resource)
        return
    if not isinstance(document, dict):
        return
    if action == "update" and document.get("id") not in (None, ""):
        operation = OperationRequest("update", resource, id=str(document["id"]), body=document)
    else:
        operation = OperationRequest("create", resource, body=document)
    try:
        result = await store.execute_async(operation) if store.remote \
            else store.execute(operation)
    except TableError as error:
        result = None
        logger.warning("MQTT payload on %s not written to %s: %s", request.path, resource,
                       error.message)
    if result is not None and result.error is not None:
        logger.warning("MQTT payload on %s not written to %s: %s", request.path, resource,
                       result.error.message)
