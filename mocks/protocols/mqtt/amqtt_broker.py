"""``amqtt``'s broker as a mock serves it: :class:`MockBroker` and its protocol handler.

The library (0.12.1, the newest release; MQTT 3.1.1 only) does the MQTT sessions, QoS flows
and retained messages. :class:`MockBroker` changes what the mock needs changed:

* Intake: every connection is read through a bounded reader
  (:mod:`mocks.protocols.mqtt.wire`): MQTT 3.1 and 3.1.1 CONNECTs are served, any other
  protocol level (MQTT 5) gets CONNACK return code 1 at once, a packet over
  :data:`~mocks.protocols.mqtt.wire.MAX_PACKET_BYTES` or a first packet that is not a
  CONNECT closes the connection, and a CONNECT must arrive within
  :data:`CONNECT_TIMEOUT_SECONDS`. Listeners are TCP (TLS with the service's context) and
  WebSocket (:mod:`mocks.protocols.mqtt.websocket`).
* Keep alive: a client silent for one and a half times its keep-alive period is
  disconnected (MQTT 3.1.1 §3.1.2.10); the library only logs it.
* Delivery (:meth:`MockBroker._run_broadcast`): a subscriber gets a message at the lower of
  the publish's QoS and its subscription's (MQTT 3.1.1 §3.8.4), with RETAIN 0 (§3.3.1.3);
  a shared subscription ``$share/<group>/<filter>`` gives each message to one member of the
  group, in turn, preferring connected members; a persistent session that is offline
  queues QoS 1 and 2 messages, at most :data:`MAX_QUEUED_MESSAGES` (later ones are
  dropped), and gets them on reconnect with RETAIN 0.
* Retained messages go to a new subscription only (not to shared subscriptions, and not
  again on every reconnect), with RETAIN 1.
* Hooks: the ACL check and the client-publish hook of the owning
  :class:`~mocks.protocols.mqtt.broker.MqttPortService` (``service``) are called directly,
  without the library's plugin dispatch (a task per hook per message).
* In-flight bound: a client with :data:`MAX_INFLIGHT_IN` QoS 2 publishes awaiting their
  PUBREL that sends another is disconnected.

Concurrency: everything runs on the engine's event loop. Source: behavior notes §10
(``mqtt`` row); MQTT 3.1.1 §3.1.2 (CONNECT), §3.3.1.3 (RETAIN), §4.8.2 of MQTT 5 (shared
subscriptions, used by 3.1.1 clients by name). Django-free.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from functools import partial
from typing import Any

from amqtt.adapters import StreamWriterAdapter
from amqtt.broker import Broker, RetainedApplicationMessage
from amqtt.contexts import Action, ListenerType
from amqtt.errors import AMQTTError
from amqtt.events import BrokerEvents
from amqtt.mqtt.constants import QOS_2
from amqtt.mqtt.protocol.broker_handler import BrokerProtocolHandler

from mocks.protocols.mqtt.topics import SHARE_PREFIX, shared_subscription
from mocks.protocols.mqtt.websocket import serve_websocket
from mocks.protocols.mqtt.wire import (NotAcceptable, StreamIntake, WebSocketIntake,
                                       WebSocketWriter)

logger = logging.getLogger("mocks.mqtt")

#: Seconds a new connection has to send a complete CONNECT.
CONNECT_TIMEOUT_SECONDS = 10.0
#: Messages kept for one offline persistent session; later ones are dropped.
MAX_QUEUED_MESSAGES = 1000
#: QoS 2 publishes of one client that may await their PUBREL at once.
MAX_INFLIGHT_IN = 100
#: The ``SUBACK`` return code of a refused subscription.
SUBSCRIPTION_REFUSED = 0x80


class MockProtocolHandler(BrokerProtocolHandler):
    """The library's per-connection handler with the keep-alive deadline enforced and the
    incoming QoS 2 in-flight bound (see the module docstring). The library builds a
    :class:`BrokerProtocolHandler` inside its CONNECT parsing; :class:`MockBroker` makes it
    this class right after."""

    _closing: asyncio.Future[None] | None = None

    def _close(self, reason: str) -> None:
        if self._closing is None:
            logger.info("MQTT client %s disconnected: %s",
                        self.session.client_id if self.session else "?", reason)
            self._closing = asyncio.ensure_future(self.handle_connection_closed())

    def handle_read_timeout(self) -> None:
        """The client sent nothing for 1.5 times its keep alive: close its connection."""
        self._close("no packet within one and a half keep-alive periods")

    async def handle_publish(self, publish_packet: Any) -> None:
        """The library's publish flow, after the QoS check (both QoS bits set is a malformed
        packet: the connection is closed, MQTT 3.1.1 §3.3.1.2) and the in-flight bound."""
        if publish_packet.qos not in (0, 1, 2):
            self._close("a PUBLISH with QoS 3 (malformed packet)")
            return
        session = self.session
        header = publish_packet.variable_header
        if (publish_packet.qos == QOS_2 and session is not None and header is not None
                and header.packet_id not in session.inflight_in
                and len(session.inflight_in) >= MAX_INFLIGHT_IN):
            self._close(f"more than {MAX_INFLIGHT_IN} QoS 2 publishes awaiting PUBREL")
            return
        await super().handle_publish(publish_packet)


class MockBroker(Broker):
    """``amqtt``'s broker as the module docstring describes. ``service`` is the owning
    :class:`~mocks.protocols.mqtt.broker.MqttPortService` (set right after the broker is
    built; it gives ``tls_context``, ``websocket``, ``origin_allowed``, ``permits``,
    ``chaos_of``, ``chaos_admits`` and ``client_published``)."""

    service: Any = None

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        #: Shared subscription filter -> deliveries made, to pick the next member.
        self._share_turns: dict[str, int] = {}

    # listeners --------------------------------------------------------------------------
    async def _create_server_instance(self, listener_name: str, listener_type: ListenerType,
                                      address: str | None, port: int,
                                      ssl_context: Any) -> Any:
        # The library's TLS context asks every client for a certificate and trusts the
        # system CAs; the service's context follows the mock's `tls` block instead.
        service = self.service
        context = service.tls_context if service is not None else ssl_context
        if listener_type == ListenerType.WS:
            path = service.websocket[1] if service is not None else None
            allowed = service.origin_allowed if service is not None else (lambda _origin: False)
            return await serve_websocket(partial(self.ws_connected, listener_name=listener_name),
                                         address, port, path, context, allowed)
        return await asyncio.start_server(
            partial(self.stream_connected, listener_name=listener_name), address, port,
            reuse_address=True, ssl=context)

    async def stream_connected(self, reader: asyncio.StreamReader,
                               writer: asyncio.StreamWriter, listener_name: str) -> None:
        """Serve one TCP (or TLS) connection until it ends."""
        try:
            await self._client_connected(listener_name, StreamIntake(reader),
                                         StreamWriterAdapter(writer))
        except Exception:  # noqa: BLE001 - one bad client never stops the broker
            logger.debug("MQTT connection ended with an error", exc_info=True)
        finally:
            writer.close()

    async def ws_connected(self, websocket: Any, listener_name: str) -> None:
        """Serve one MQTT over WebSocket connection until it ends."""
        try:
            await self._client_connected(listener_name, WebSocketIntake(websocket),
                                         WebSocketWriter(websocket))
        except Exception:  # noqa: BLE001 - one bad client never stops the broker
            logger.debug("MQTT over WebSocket connection ended with an error", exc_info=True)

    # CONNECT ----------------------------------------------------------------------------
    async def _initialize_client_session(self, reader: Any, writer: Any, remote_address: str,
                                         remote_port: int) -> Any:
        try:
            return await asyncio.wait_for(
                self._open_session(reader, writer, remote_address, remote_port),
                CONNECT_TIMEOUT_SECONDS)
        except (AMQTTError, asyncio.CancelledError):
            raise
        except NotAcceptable as refusal:
            if refusal.connack:
                with contextlib.suppress(Exception):
                    writer.write(refusal.connack)
                    await writer.drain()
            raise AMQTTError(f"CONNECT from {remote_address} refused: {refusal}") from None
        except Exception as error:  # noqa: BLE001 - garbage instead of CONNECT, or no CONNECT
            raise AMQTTError(f"no valid CONNECT from {remote_address}: {error!r}") from None

    async def _open_session(self, reader: Any, writer: Any, remote_address: str,
                            remote_port: int) -> Any:
        version = await reader.take_connect()
        handler, session = await super()._initialize_client_session(
            reader, writer, remote_address, remote_port)
        session.mockd_version = version
        session.mockd_transport = reader.transport
        if version == "3.1":
            session.parent = 0  # MQTT 3.1's CONNACK has no session-present flag
        session.mockd_keep_alive = session.keep_alive
        if session.keep_alive > 0:
            session.keep_alive += (session.keep_alive + 1) // 2
        handler.__class__ = MockProtocolHandler
        return handler, session

    # subscriptions ----------------------------------------------------------------------
    async def add_subscription(self, subscription: tuple[str, int], session: Any) -> int:
        """The library's subscription, after checking a ``$share/<group>/<filter>`` filter
        (``SUBACK`` 0x80 when it is malformed)."""
        try:
            shared_subscription(subscription[0])
        except ValueError as problem:
            logger.info("%s: subscription %r refused: %s", session.client_id,
                        subscription[0], problem)
            return SUBSCRIPTION_REFUSED
        return await super().add_subscription(subscription, session)

    async def _handle_subscription(self, client_session: Any, handler: Any,
                                   subscribe_waiter: asyncio.Future[Any]) -> None:
        # Retained messages go to new subscriptions only; the library also replays them on
        # every reconnect of a persistent session, which this flag tells apart.
        client_session.mockd_subscribing = True
        try:
            await super()._handle_subscription(client_session, handler, subscribe_waiter)
        finally:
            client_session.mockd_subscribing = False

    async def _publish_retained_messages_for_subscription(self, subscription: tuple[str, int],
                                                          session: Any) -> None:
        if not getattr(session, "mockd_subscribing", False) or \
                subscription[0].startswith(SHARE_PREFIX):
            return
        await super()._publish_retained_messages_for_subscription(subscription, session)

    async def _topic_filtering(self, session: Any, topic: str, action: Action) -> bool:
        # amqtt asks every topic plugin through one task each, on every publish, subscription
        # and delivery; the ACL of the service is the only check there is. A shared
        # subscription is checked for the filter after its group.
        service = self.service
        if service is None:
            return True
        if action == Action.SUBSCRIBE and topic.startswith(SHARE_PREFIX):
            topic = topic[len(SHARE_PREFIX):].partition("/")[2]
        return service.permits(session, topic, action)

    # publishing -------------------------------------------------------------------------
    async def _handle_message_delivery(self, client_session: Any, handler: Any,
                                       wait_deliver: asyncio.Future[Any]) -> bool:
        # amqtt 0.12.1's method, with the service's hook called after the message is queued
        # for delivery instead of through a MESSAGE_BROADCAST plugin event (a task per
        # message), and the publish's QoS carried to the subscribers. Messages amqtt refuses
        # (no topic, a wildcard, a leading "$") go to the original, which logs them and
        # closes the connection.
        message = wait_deliver.result()
        topic = message.topic if message is not None else None
        if (not topic or "#" in topic or "+" in topic or topic.startswith("$")
                or self.service is None):
            return await super()._handle_message_delivery(client_session, handler,
                                                          wait_deliver)
        client_id = client_session.client_id
        await self.plugins_manager.fire_event(BrokerEvents.MESSAGE_RECEIVED,
                                              client_id=client_id, message=message)
        if not self.service.permits(client_session, topic, Action.PUBLISH):
            logger.info("%s not allowed to publish to topic %s", client_id, topic)
            return True
        chaos_of = self.service.chaos_of
        if chaos_of is not None and chaos_of() is not None and \
                not await self.service.chaos_admits(client_id, topic, message):
            return False  # the message is dropped and the client's connection closed
        data = message.data
        qos = message.qos or 0
        await self._broadcast_message(client_session, topic, data, qos)
        packet = message.publish_packet
        retain = bool(packet is not None and packet.retain_flag)
        if retain:
            await self.retain_message(client_session, topic, data, qos)
        try:
            self.service.client_published(client_id, topic, bytes(data or b""), qos, retain)
        except Exception:  # noqa: BLE001 - the hook never ends the client's connection
            logger.exception("MQTT publish of %s on %s: the request log or recording failed",
                             client_id, topic)
        return True

    def _may_receive(self, session: Any, topic: str) -> bool:
        service = self.service
        return service is None or service.permits(session, topic, Action.RECEIVE)

    def _shared_member(self, topic_filter: str, members: list[tuple[Any, int]],
                       topic: str) -> list[tuple[Any, int]]:
        """The one member of a shared subscription that gets this message: the next in turn
        among the connected members that may read ``topic``, else among the offline
        persistent ones (whose queue keeps it); none when no member may read it."""
        readers = [(session, qos) for session, qos in members
                   if self._may_receive(session, topic)]
        pool = [(session, qos) for session, qos in readers
                if session.transitions.state == "connected"]
        pool = pool or [(session, qos) for session, qos in readers if not session.clean_session]
        if not pool:
            return []
        turn = self._share_turns.get(topic_filter, 0)
        self._share_turns[topic_filter] = turn + 1
        if len(self._share_turns) > 2 * len(self._subscriptions) + 16:
            self._share_turns = {key: value for key, value in self._share_turns.items()
                                 if key in self._subscriptions}
        return [pool[turn % len(pool)]]

    async def _run_broadcast(self, running_tasks: deque[asyncio.Task[Any]]) -> None:
        # amqtt 0.12.1's fan-out of one message, with shared subscriptions, the QoS of the
        # publish as a ceiling, the ACL check called directly, and a bounded offline queue.
        broadcast = await self._broadcast_queue.get()
        topic, data = broadcast["topic"], broadcast["data"]
        published_qos = broadcast.get("qos")
        for topic_filter, members in list(self._subscriptions.items()):
            shared = topic_filter.startswith(SHARE_PREFIX)
            real_filter = topic_filter[len(SHARE_PREFIX):].partition("/")[2] if shared \
                else topic_filter
            if not self._matches(topic, real_filter):
                continue
            targets = self._shared_member(topic_filter, members, topic) if shared else [
                (session, qos) for session, qos in members if self._may_receive(session, topic)]
            for session, subscribed_qos in targets:
                qos = subscribed_qos if published_qos is None else min(published_qos,
                                                                        subscribed_qos)
                if session.transitions.state != "connected":
                    # Offline: a persistent session keeps QoS 1 and 2 messages [MQTT 3.1.2.4]
                    if not session.clean_session and qos > 0:
                        self._queue_offline(session, broadcast, qos)
                    continue
                handler = self._get_handler(session)
                if handler is not None:
                    running_tasks.append(asyncio.ensure_future(
                        handler.mqtt_publish(topic, data, qos, retain=False)))

    def _queue_offline(self, session: Any, broadcast: dict[str, Any], qos: int) -> None:
        queued = session.retained_messages
        if queued.qsize() >= MAX_QUEUED_MESSAGES:
            if not getattr(session, "mockd_queue_full", False):
                logger.warning("MQTT session %s: %d messages queued while offline; later ones "
                               "are dropped", session.client_id, MAX_QUEUED_MESSAGES)
                session.mockd_queue_full = True
            return
        queued.put_nowait(RetainedApplicationMessage(broadcast["session"], broadcast["topic"],
                                                     broadcast["data"], qos))

    async def _publish_session_retained_messages(self, session: Any) -> None:
        # The messages queued while the session was offline: the library sends them with
        # RETAIN 1, but they are ordinary messages of its subscriptions (RETAIN 0).
        session.mockd_queue_full = False
        handler = self._get_handler(session)
        queued = session.retained_messages
        tasks = []
        while handler is not None and not queued.empty():
            message = queued.get_nowait()
            tasks.append(asyncio.ensure_future(
                handler.mqtt_publish(message.topic, message.data, message.qos, retain=False)))
        if tasks:
            await asyncio.wait(tasks)
