"""``mockd mqtt add|publish|subscribe``: an MQTT mock from the command line, and quick checks
against any MQTT 3.1.1 broker.

``mockd mqtt add --port 1883 --topic sensors/temp --payload '{"t": 21}' [--interval 5s]
[--qos 1] [--retain]`` posts an ``mqtt`` mock to the admin API: one topic whose message is
published once when the broker starts, or every ``--interval`` (``"500ms"``, ``"5s"`` or ms)
with it. A port an MQTT mock already uses merges the topic into that mock (the answer says
so). Output: ``Created MQTT mock <id> on port <port> (topic <topic>)`` or ``Merged into MQTT
mock <id> on port <port> (topics: ...)``; ``--json`` prints the admin answer.

``mockd mqtt publish --port P --topic T --payload X [--qos N] [--retain]`` connects, publishes
once (waiting for the broker's acknowledgement at QoS 1 and 2) and disconnects.

``mockd mqtt subscribe --port P --topic FILTER [--count N] [--timeout S]`` prints each message
as ``<topic> <payload>`` (``--json``: one object ``{topic, payload, qos, retain}`` a line) and
stops after ``--count`` messages (default 1; 0: until the timeout) or ``--timeout`` seconds
(default 10). Exit status 1 when fewer than ``--count`` messages arrived in time, or the
broker refused the connection or the subscription; 2 for bad options.

The client is a small MQTT 3.1.1 client over one blocking socket (:class:`MqttClient`);
``--host`` defaults to 127.0.0.1.

Source: issue "MQTT mocks" item 7.
"""
from __future__ import annotations

import json
import socket
import struct
import time
import uuid
from typing import Any, Iterator

import click

from mockd_project.cli_client import client_options
from mocks.protocols.grpc.cli import post_port_mock

#: CONNACK return codes of MQTT 3.1.1 (1-5) -> reason.
REFUSALS = {1: "unacceptable protocol version", 2: "identifier rejected",
            3: "server unavailable", 4: "bad user name or password", 5: "not authorized"}

CONNECT, CONNACK, PUBLISH, PUBACK, PUBREC, PUBREL, PUBCOMP = 1, 2, 3, 4, 5, 6, 7
SUBSCRIBE, SUBACK, PINGREQ, DISCONNECT = 8, 9, 12, 14

#: Seconds of the keep-alive the client announces; it pings at half of it.
KEEP_ALIVE = 60


class MqttError(click.ClickException):
    """A refused connection or subscription, a broken connection or a timeout (exit 1)."""

    exit_code = 1


def _text(value: str) -> bytes:
    raw = value.encode("utf-8")
    return struct.pack("!H", len(raw)) + raw


class MqttClient:
    """A blocking MQTT 3.1.1 client for one short session (clean session).

    ``MqttClient(host, port, client_id=None, username=None, password=None, timeout=10.0)``
    connects and waits for CONNACK; raises :class:`MqttError` when the broker refuses
    (``connection refused: not authorized``) or does not answer within ``timeout`` seconds.
    """

    def __init__(self, host: str, port: int, *, client_id: str | None = None,
                 username: str | None = None, password: str | None = None,
                 timeout: float = 10.0):
        self.timeout = timeout
        self._next_id = 0
        self._last_sent = time.monotonic()
        try:
            self.sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as error:
            raise MqttError(f"cannot connect to {host}:{port}: {error}") from None
        flags = 0x02
        payload = _text(client_id or f"mockd-{uuid.uuid4().hex[:12]}")
        if username is not None:
            flags |= 0x80
            payload += _text(username)
            if password is not None:
                flags |= 0x40
                payload += _text(password)
        self._send(CONNECT << 4, _text("MQTT") + bytes([4, flags])
                   + struct.pack("!H", KEEP_ALIVE) + payload)
        kind, _, body = self._read(time.monotonic() + timeout)
        if kind != CONNACK or len(body) < 2:
            raise MqttError("the broker did not answer CONNECT with CONNACK")
        if body[1]:
            self.sock.close()
            raise MqttError("connection refused: "
                            + REFUSALS.get(body[1], f"return code {body[1]}"))

    def _send(self, header: int, body: bytes) -> None:
        # The broker's encoder; imported here so that other commands never load amqtt.
        from mocks.protocols.mqtt.wire import encode_length

        self.sock.sendall(bytes([header]) + encode_length(len(body)) + body)
        self._last_sent = time.monotonic()

    def _exact(self, size: int, deadline: float) -> bytes:
        data = bytearray()
        while len(data) < size:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            if time.monotonic() - self._last_sent > KEEP_ALIVE / 2:
                self._send(PINGREQ << 4, b"")
            self.sock.settimeout(min(left, KEEP_ALIVE / 2))
            try:
                chunk = self.sock.recv(size - len(data))
            except socket.timeout:
                continue
            if not chunk:
                raise MqttError("the broker closed the connection")
            data += chunk
        return bytes(data)

    def _read(self, deadline: float) -> tuple[int, int, bytes]:
        """The next packet as ``(type, flags, body)``; TimeoutError past ``deadline``."""
        first = self._exact(1, deadline)[0]
        size, shift = 0, 0
        while True:
            digit = self._exact(1, deadline)[0]
            size |= (digit & 0x7F) << shift
            shift += 7
            if not digit & 0x80:
                break
        return first >> 4, first & 0x0F, self._exact(size, deadline)

    def _packet_id(self) -> int:
        self._next_id = self._next_id % 65535 + 1
        return self._next_id

    def _expect(self, kind: int, packet_id: int, what: str) -> bytes:
        deadline = time.monotonic() + self.timeout
        try:
            while True:
                got, _, body = self._read(deadline)
                if got == kind and body[:2] == struct.pack("!H", packet_id):
                    return body
        except TimeoutError:
            raise MqttError(f"no {what} from the broker within {self.timeout:g}s") from None

    def publish(self, topic: str, payload: bytes, qos: int = 0, retain: bool = False) -> None:
        """Publish once; at QoS 1 waits for PUBACK, at QoS 2 for PUBREC and PUBCOMP."""
        body = _text(topic)
        packet_id = 0
        if qos:
            packet_id = self._packet_id()
            body += struct.pack("!H", packet_id)
        self._send(PUBLISH << 4 | qos << 1 | int(retain), body + payload)
        if qos == 1:
            self._expect(PUBACK, packet_id, "PUBACK")
        elif qos == 2:
            self._expect(PUBREC, packet_id, "PUBREC")
            self._send(PUBREL << 4 | 0x02, struct.pack("!H", packet_id))
            self._expect(PUBCOMP, packet_id, "PUBCOMP")

    def subscribe(self, topic_filter: str, qos: int = 0) -> int:
        """Subscribe; returns the granted QoS, raises :class:`MqttError` when refused."""
        packet_id = self._packet_id()
        self._send(SUBSCRIBE << 4 | 0x02,
                   struct.pack("!H", packet_id) + _text(topic_filter) + bytes([qos]))
        granted = self._expect(SUBACK, packet_id, "SUBACK")[2:3]
        if not granted or granted[0] == 0x80:
            raise MqttError(f"subscription to {topic_filter} refused")
        return granted[0]

    def messages(self, deadline: float) -> Iterator[tuple[str, bytes, int, bool]]:
        """``(topic, payload, qos, retain)`` of each PUBLISH until ``deadline`` (a
        ``time.monotonic()`` value); acknowledges QoS 1 and 2 deliveries."""
        while True:
            try:
                kind, flags, body = self._read(deadline)
            except TimeoutError:
                return
            if kind == PUBREL:
                self._send(PUBCOMP << 4, body[:2])
            if kind != PUBLISH:
                continue
            qos, retain = (flags >> 1) & 0x03, bool(flags & 0x01)
            size = struct.unpack("!H", body[:2])[0]
            topic, rest = body[2:2 + size].decode("utf-8", "replace"), body[2 + size:]
            if qos:
                packet_id, rest = rest[:2], rest[2:]
                self._send((PUBACK if qos == 1 else PUBREC) << 4, packet_id)
            yield topic, rest, qos, retain

    def close(self) -> None:
        """Send DISCONNECT and close the socket (errors ignored)."""
        try:
            self._send(DISCONNECT << 4, b"")
        except OSError:
            pass
        self.sock.close()


def build_mqtt_mock(*, port: int, topic: str, payload: str, interval: int | None, qos: int,
                    retain: bool, mock_id: str | None, name: str | None) -> dict[str, Any]:
    """The mock document ``mqtt add`` posts (``interval`` in ms, or None: publish once)."""
    message: dict[str, Any] = {"payload": payload}
    if interval is not None:
        message.update(repeat=True, interval=interval)
    entry: dict[str, Any] = {"topic": topic, "qos": qos, "messages": [message]}
    if retain:
        entry["retain"] = True
    mock: dict[str, Any] = {"type": "mqtt", "name": name or f"MQTT {topic}",
                            "mqtt": {"port": port, "topics": [entry]}}
    if mock_id:
        mock["id"] = mock_id
    return mock


def _duration_ms(ctx: click.Context, param: click.Parameter, value: str | None) -> int | None:
    if value is None:
        return None
    from mocks.core.durations import parse_duration_ms

    try:
        return parse_duration_ms(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


_PORT = click.option("--port", type=click.IntRange(1, 65535), default=1883, show_default=True,
                     help="MQTT port.")
_QOS = click.option("--qos", type=click.IntRange(0, 2), default=0, show_default=True,
                    help="QoS 0-2.")


def _broker_options(command: Any) -> Any:
    for option in reversed([
            click.option("--host", default="127.0.0.1", show_default=True, help="Broker host."),
            click.option("-u", "--username", default=None, help="User name (auth)."),
            click.option("-P", "--password", default=None, help="Password (auth)."),
            click.option("--client-id", default=None, help="Client id (default: generated).")]):
        command = option(command)
    return command


@click.group("mqtt")
def mqtt_group() -> None:
    """MQTT mocks and quick publish/subscribe checks."""


@mqtt_group.command("add")
@_PORT
@click.option("--topic", required=True, help="Topic the mock publishes on.")
@click.option("--payload", required=True, metavar="JSON",
              help="Message payload (JSON or text; templates allowed).")
@click.option("--interval", default=None, callback=_duration_ms, metavar="DURATION",
              help="Publish every DURATION (5s, 500ms); default: once at start.")
@_QOS
@click.option("--retain", is_flag=True, help="The broker keeps the last message.")
@click.option("--id", "mock_id", default=None, help="Mock id (default: generated).")
@click.option("-n", "--name", default=None, help="Mock name.")
@click.option("--json", "as_json", is_flag=True, help="Print the admin answer as JSON.")
@client_options
def mqtt_add(port: int, topic: str, payload: str, interval: int | None, qos: int,
             retain: bool, mock_id: str | None, name: str | None, as_json: bool,
             admin_url: str | None, api_key: str | None) -> None:
    """Add an MQTT mock that publishes PAYLOAD on TOPIC."""
    mock = build_mqtt_mock(port=port, topic=topic, payload=payload, interval=interval, qos=qos,
                           retain=retain, mock_id=mock_id, name=name)
    post_port_mock(mock, kind="MQTT", port=port, created=f"topic {topic}",
                   merged_noun="topics", admin_url=admin_url, api_key=api_key,
                   as_json=as_json)


@mqtt_group.command("publish")
@_PORT
@click.option("--topic", required=True, help="Topic to publish on.")
@click.option("--payload", required=True, help="Message payload (text).")
@_QOS
@click.option("--retain", is_flag=True, help="Ask the broker to keep the message.")
@click.option("--timeout", type=click.FloatRange(0.1, 3600), default=10, show_default=True,
              help="Seconds to wait for the broker.")
@_broker_options
def mqtt_publish(port: int, topic: str, payload: str, qos: int, retain: bool, timeout: float,
                 host: str, username: str | None, password: str | None,
                 client_id: str | None) -> None:
    """Publish one message."""
    from mocks.protocols.mqtt.config import topic_filter_problem

    problem = topic_filter_problem(topic, wildcards=False)
    if problem:
        raise click.BadParameter(problem, param_hint="--topic")
    client = MqttClient(host, port, client_id=client_id, username=username,
                        password=password, timeout=timeout)
    try:
        client.publish(topic, payload.encode("utf-8"), qos, retain)
    finally:
        client.close()
    click.echo(f"Published {len(payload.encode('utf-8'))} bytes to {topic} (QoS {qos})")


@mqtt_group.command("subscribe")
@_PORT
@click.option("--topic", required=True, help="Topic filter (+ and # allowed).")
@_QOS
@click.option("--count", type=click.IntRange(0), default=1, show_default=True,
              help="Stop after N messages (0: run until the timeout).")
@click.option("--timeout", type=click.FloatRange(0.1, 86400), default=10, show_default=True,
              help="Stop after S seconds.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object a line.")
@_broker_options
def mqtt_subscribe(port: int, topic: str, qos: int, count: int, timeout: float,
                   as_json: bool, host: str, username: str | None, password: str | None,
                   client_id: str | None) -> None:
    """Print the messages of a topic filter."""
    from mocks.protocols.mqtt.config import topic_filter_problem

    problem = topic_filter_problem(topic)
    if problem:
        raise click.BadParameter(problem, param_hint="--topic")
    deadline = time.monotonic() + timeout
    client = MqttClient(host, port, client_id=client_id, username=username,
                        password=password, timeout=timeout)
    received = 0
    try:
        client.subscribe(topic, qos)
        for name, payload, got_qos, retain in client.messages(deadline):
            text = payload.decode("utf-8", "replace")
            if as_json:
                click.echo(json.dumps({"topic": name, "payload": text, "qos": got_qos,
                                       "retain": retain}))
            else:
                click.echo(f"{name} {text}")
            received += 1
            if count and received >= count:
                break
    finally:
        client.close()
    if count and received < count:
        raise MqttError(f"{received} of {count} messages on {topic} within {timeout:g}s")
