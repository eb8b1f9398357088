"""MQTT mocks and the clients found in the wild (paho-mqtt, MQTT 3.1, 3.1.1 and 5, over TCP,
TLS with client certificates and WebSocket): protocol versions, shared subscriptions, the
RETAIN bit of queued messages, the QoS of ``onPublish`` answers, the WebSocket listener's
origin and path checks, and the bounds on what a client may send (behavior notes §4, §10,
§14; docs/mqtt.md). MQTT.js (its browser bundle, fetched with npm through
``tests/thirdparty.py``, run by node) is a second WebSocket client.

One ``mockd start`` serves the module: a plain broker with a WebSocket port, and a TLS broker
that requires client certificates (CA, server and client certificates are made here with
``cryptography``). Every port is a free loopback port; every wait is bounded.
"""
from __future__ import annotations

import contextlib
import datetime
import ipaddress
import json
import queue
import shutil
import socket
import ssl
import subprocess
import time
from pathlib import Path

import pytest

mqtt = pytest.importorskip("paho.mqtt.client")
pytest.importorskip("cryptography")

from cryptography import x509  # noqa: E402
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402
from paho.mqtt.packettypes import PacketTypes  # noqa: E402
from paho.mqtt.properties import Properties  # noqa: E402

from tests.helpers import free_port, start_server  # noqa: E402
from tests.thirdparty import npm_file, tool_missing  # noqa: E402

pytestmark = pytest.mark.integration

TIMEOUT = 8
#: The origin the server's CORS list allows (serverConfig.cors.allowOrigins).
DASHBOARD = "https://dash.example"


# ------------------------------------------------------------------------- certificates

def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _certificate(subject: str, issuer_key, issuer_name: x509.Name, *, ca: bool = False,
                 server: bool = False):
    """``(certificate, key)`` of a fresh EC key signed by ``issuer_key`` (itself when None)."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder().subject_name(_name(subject))
               .issuer_name(issuer_name or _name(subject)).public_key(key.public_key())
               .serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5))
               .not_valid_after(now + datetime.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if server:
        builder = builder.add_extension(x509.SubjectAlternativeName(
            [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
    certificate = builder.sign(issuer_key or key, hashes.SHA256())
    return certificate, key


def _write(folder: Path, stem: str, certificate, key) -> tuple[str, str]:
    cert_path, key_path = folder / f"{stem}.pem", folder / f"{stem}.key"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return str(cert_path), str(key_path)


def make_certificates(folder: Path) -> dict[str, tuple[str, str]]:
    """A CA with a server certificate (127.0.0.1) and client certificates ``sensor-1`` and
    ``intruder``, and a ``rogue`` client certificate of another CA."""
    ca_cert, ca_key = _certificate("mockd test CA", None, None, ca=True)
    rogue_ca, rogue_key = _certificate("rogue CA", None, None, ca=True)
    files = {"ca": _write(folder, "ca", ca_cert, ca_key)}
    for stem, issuer, issuer_key, server in (
            ("server", ca_cert, ca_key, True), ("sensor-1", ca_cert, ca_key, False),
            ("intruder", ca_cert, ca_key, False), ("rogue", rogue_ca, rogue_key, False)):
        files[stem] = _write(folder, stem, *_certificate(stem, issuer_key, issuer.subject,
                                                         server=server))
    return files


# ------------------------------------------------------------------------------- server

@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mqtt-wild")
    files = make_certificates(folder)
    port, ws_port, tls_port = free_port(), free_port(), free_port()
    config = {
        "version": "1.0",
        "serverConfig": {"cors": {"allowOrigins": [DASHBOARD]}},
        "mocks": [
            {"id": "wild", "type": "mqtt", "mqtt": {
                "port": port,
                "websocket": {"port": ws_port, "path": "/mqtt"},
                "topics": [
                    {"topic": "ask/auto/+", "onPublish": {
                        "response": {"topic": "answer/auto/{{wildcard.0}}", "payload": "ok"}}},
                    {"topic": "ask/fixed/+", "onPublish": {
                        "response": {"topic": "answer/fixed/{{wildcard.0}}", "payload": "ok",
                                     "qos": 2}}},
                    {"topic": "ask/topic/+", "qos": 1, "onPublish": {
                        "response": {"topic": "answer/topic/{{wildcard.0}}",
                                     "payload": "ok"}}},
                ]}},
            {"id": "certs", "type": "mqtt", "mqtt": {
                "port": tls_port,
                "tls": {"enabled": True, "certFile": "server.pem", "keyFile": "server.key",
                        "clientAuth": "require", "caCertFile": "ca.pem",
                        "allowedCNs": ["sensor-1"]},
                "topics": [{"topic": "tls/hello", "retain": True,
                            "messages": [{"payload": "over mutual tls"}]}]}},
        ],
    }
    with start_server(folder, config) as process:
        process.port, process.ws_port, process.tls_port = port, ws_port, tls_port
        process.files = files
        for wanted in (port, ws_port, tls_port):
            deadline = time.time() + 10
            while True:
                try:
                    socket.create_connection(("127.0.0.1", wanted), timeout=1).close()
                    break
                except OSError:
                    if time.time() > deadline:
                        raise AssertionError(f"nothing listens on {wanted}:\n{process.log()}")
                    time.sleep(0.05)
        yield process


class Client:
    """A paho client collecting ``(topic, payload, qos, retain)``; ``rc`` is the CONNACK
    reason, None when the connection ended without one."""

    def __init__(self, port: int, name: str, *, protocol=mqtt.MQTTv311, clean: bool = True,
                 transport: str = "tcp", path: str = "/mqtt", headers: dict | None = None,
                 tls: dict | None = None, properties=None):
        self.queue: queue.Queue = queue.Queue()
        self.events: queue.Queue = queue.Queue()
        options = {} if protocol == mqtt.MQTTv5 else {"clean_session": clean}
        # no reconnect: a refused or dropped client's thread ends instead of sleeping in
        # paho's reconnect wait (1 s steps), so close() returns at once
        self.c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=name,
                             protocol=protocol, transport=transport,
                             reconnect_on_failure=False, **options)
        self.c.on_message = lambda cl, ud, msg: self.queue.put(
            (msg.topic, msg.payload, msg.qos, msg.retain))
        self.c.on_connect = lambda cl, ud, flags, rc, props: self.events.put(("connack", rc))
        self.c.on_disconnect = lambda cl, ud, flags, rc, props: self.events.put(("gone", rc))
        if transport == "websockets":
            self.c.ws_set_options(path=path, headers=headers)
        if tls is not None:
            self.c.tls_set(**tls)
        self.started = time.monotonic()
        self.c.connect("127.0.0.1", port, keepalive=30, properties=properties)
        self.c.loop_start()
        kind, self.rc = self.events.get(timeout=TIMEOUT)
        self.elapsed = time.monotonic() - self.started
        if kind != "connack":
            self.rc = None

    def subscribe(self, topic: str, qos: int = 0) -> int:
        done: queue.Queue = queue.Queue()
        self.c.on_subscribe = lambda cl, ud, mid, codes, props: done.put(codes[0])
        self.c.subscribe(topic, qos)
        return done.get(timeout=TIMEOUT).value

    def publish(self, topic: str, payload: bytes, qos: int = 1, retain: bool = False) -> None:
        self.c.publish(topic, payload, qos=qos, retain=retain).wait_for_publish(TIMEOUT)

    def next(self, timeout: float = TIMEOUT):
        return self.queue.get(timeout=timeout)

    def drain(self, quiet: float = 0.5) -> list:
        """What arrives until nothing has come for ``quiet`` seconds (at most 100 items)."""
        got = []
        while len(got) < 100:
            try:
                got.append(self.queue.get(timeout=quiet))
            except queue.Empty:
                break
        return got

    def close(self) -> None:
        self.c.disconnect()
        self.c.loop_stop()


@pytest.fixture
def client(server):
    """``client(name, port=None, **options)``: a connected :class:`Client`, closed after the
    test."""
    with contextlib.ExitStack() as closing:
        def connected(name: str, port: int | None = None, **options) -> Client:
            made = Client(port or server.port, name, **options)
            closing.callback(made.close)
            return made

        yield connected


def connection_row(server, client_id: str) -> dict:
    with server.admin_client() as admin:
        rows = admin.get("/mqtt-connections").json()["connections"]
    return next(row for row in rows if row["clientId"] == client_id)


# ----------------------------------------------------------------------- protocol versions

def test_an_mqtt31_client_connects_and_exchanges_messages(client, server):
    old = client("sdk-31", protocol=mqtt.MQTTv31)
    assert old.rc == 0
    assert old.subscribe("v31/#", 1) == 1
    modern = client("sdk-311")
    modern.publish("v31/temp", b"21", qos=1)
    assert old.next()[:3] == ("v31/temp", b"21", 1)
    old.publish("v31/back", b"hello from 3.1", qos=2)
    assert old.next()[:2] == ("v31/back", b"hello from 3.1")
    row = connection_row(server, "sdk-31")
    assert (row["protocolVersion"], row["transport"]) == ("3.1", "tcp")
    assert connection_row(server, "sdk-311")["protocolVersion"] == "3.1.1"


def test_an_mqtt5_client_is_refused_at_once_with_unsupported_protocol_version(server):
    """With CONNECT properties (as MQTT.js and most v5 SDKs send) the library used to read
    them as the payload and wait for bytes that never came."""
    properties = Properties(PacketTypes.CONNECT)
    properties.SessionExpiryInterval = 300
    properties.ReceiveMaximum = 10
    refused = Client(server.port, "v5-sdk", protocol=mqtt.MQTTv5, properties=properties)
    try:
        assert refused.rc is not None and refused.rc.is_failure
        assert refused.rc.getName() == "Unsupported protocol version"
        assert refused.elapsed < 2
    finally:
        refused.close()


def test_raw_connects_of_other_levels_get_return_code_1_and_other_protocols_nothing(server):
    def connect(name: bytes, level: int) -> bytes:
        body = len(name).to_bytes(2, "big") + name + bytes([level, 2, 0, 30]) + b"\x00\x03raw"
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw:
            raw.sendall(b"\x10" + bytes([len(body)]) + body)
            raw.settimeout(5)
            try:
                return raw.recv(16)
            except ConnectionResetError:
                return b""

    assert connect(b"MQTT", 4) == b"\x20\x02\x00\x00"
    assert connect(b"MQIsdp", 3) == b"\x20\x02\x00\x00"
    assert connect(b"MQTT", 3) == b"\x20\x02\x00\x01"
    assert connect(b"MQTT", 6) == b"\x20\x02\x00\x01"
    assert connect(b"AMQP", 4) == b""


# ----------------------------------------------------------------------- delivery rules

def test_a_shared_subscription_gives_each_message_to_one_member_in_turn(client):
    first = client("worker-1")
    second = client("worker-2")
    watcher = client("watcher")
    for member in (first, second):
        assert member.subscribe("$share/workers/jobs/+", 1) == 1
    assert watcher.subscribe("jobs/#", 1) == 1
    publisher = client("dispatcher")
    count = 20
    for number in range(count):
        publisher.publish(f"jobs/{number % 3}", str(number).encode(), qos=1)
    seen_by_watcher = [item[1] for item in watcher.drain()]
    got_first = [item[1] for item in first.drain()]
    got_second = [item[1] for item in second.drain()]
    assert sorted(seen_by_watcher, key=int) == [str(n).encode() for n in range(count)]
    assert sorted(got_first + got_second, key=int) == [str(n).encode() for n in range(count)]
    assert not set(got_first) & set(got_second)
    assert len(got_first) == len(got_second) == count // 2


def test_malformed_shared_subscriptions_are_refused(client):
    member = client("bad-share")
    assert member.subscribe("$share/g", 0) == 128
    assert member.subscribe("$share//x", 0) == 128
    assert member.subscribe("$share/+/x", 0) == 128


def test_queued_messages_keep_retain_0_and_retained_ones_go_to_new_subscriptions(client):
    sleeper = client("sleeper", clean=False)
    assert sleeper.subscribe("queue/#", 1) == 1
    sleeper.close()
    publisher = client("waker")
    publisher.publish("queue/plain", b"while away", qos=1)
    publisher.publish("queue/kept", b"retained while away", qos=1, retain=True)
    back = client("sleeper", clean=False)
    got = sorted(back.drain())
    assert got == [("queue/kept", b"retained while away", 1, False),
                   ("queue/plain", b"while away", 1, False)]
    late = client("late-reader")
    late.subscribe("queue/#", 1)
    assert late.drain() == [("queue/kept", b"retained while away", 1, True)]
    publisher.publish("queue/live", b"now", qos=1, retain=True)
    assert back.next()[:4] == ("queue/live", b"now", 1, False)


@pytest.mark.parametrize("ask, published_qos, expected_qos", [
    pytest.param("auto", 0, 0, id="no qos configured: the publish's QoS 0"),
    pytest.param("auto", 1, 1, id="no qos configured: the publish's QoS 1"),
    pytest.param("auto", 2, 2, id="no qos configured: the publish's QoS 2"),
    pytest.param("fixed", 0, 2, id="response.qos 2"),
    pytest.param("topic", 2, 1, id="the topic entry's qos 1"),
])
def test_on_publish_answers_go_out_at_the_qos_asked(client, ask, published_qos, expected_qos):
    listener = client(f"answers-{ask}-{published_qos}")
    assert listener.subscribe(f"answer/{ask}/#", 2) == 2
    asker = client(f"asker-{ask}-{published_qos}")
    asker.publish(f"ask/{ask}/lamp", b"?", qos=published_qos)
    topic, payload, qos, retain = listener.next()
    assert (topic, payload, qos, retain) == (f"answer/{ask}/lamp", b"ok", expected_qos, False)


def test_a_subscriber_gets_at_most_its_own_qos(client):
    low = client("low-qos")
    assert low.subscribe("answer/fixed/#", 0) == 0
    client("asker-low").publish("ask/fixed/fan", b"?", qos=2)
    assert low.next()[2] == 0


# -------------------------------------------------------------------------- WebSocket

def test_mqtt_over_websocket_reaches_tcp_clients_both_ways(client, server):
    browser_like = client("ws-dashboard", port=server.ws_port, transport="websockets",
                          headers={"Origin": DASHBOARD})
    assert browser_like.rc == 0
    assert browser_like.subscribe("dash/#", 1) == 1
    tcp = client("tcp-device")
    tcp.subscribe("cmd/#", 1)
    tcp.publish("dash/temp", b"22", qos=1)
    assert browser_like.next()[:3] == ("dash/temp", b"22", 1)
    browser_like.publish("cmd/fan", b"on", qos=1)
    assert tcp.next()[:2] == ("cmd/fan", b"on")
    plain = client("ws-paho", port=server.ws_port, transport="websockets")
    assert plain.rc == 0  # paho's own Origin names the address it connects to
    old = client("ws-31", port=server.ws_port, transport="websockets",
                 protocol=mqtt.MQTTv31)
    assert old.rc == 0
    row = connection_row(server, "ws-dashboard")
    assert (row["transport"], row["protocolVersion"]) == ("websocket", "3.1.1")
    with server.admin_client() as admin:
        ports = admin.get("/ports").json()["ports"]
        status = admin.get("/mqtt/wild/status").json()
    assert {"port": server.ws_port, "protocol": "MQTT", "component": "MQTT over WebSocket",
            "status": "running"} in ports
    assert status["websocket"] == {"port": server.ws_port, "path": "/mqtt"}


@pytest.mark.parametrize("path, origin, status", [
    pytest.param("/mqtt", "https://evil.example", 403, id="a foreign origin"),
    pytest.param("/mqtt", "http://localhost:3000", 403,
                 id="loopback origin when allowOrigins lists others"),
    pytest.param("/mqtt", "http://127.0.0.2:9", 403, id="another address than the Host"),
    pytest.param("/other", None, 404, id="another path"),
])
def test_websocket_upgrades_are_refused_before_accept(server, path, origin, status):
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    with pytest.raises(InvalidStatus) as refused:
        connect(f"ws://127.0.0.1:{server.ws_port}{path}", origin=origin,
                subprotocols=["mqtt"], open_timeout=5, proxy=None)
    assert refused.value.response.status_code == status


def test_websocket_admits_the_listed_origin_and_no_origin_with_the_mqtt_subprotocol(server):
    from websockets.exceptions import InvalidHandshake
    from websockets.sync.client import connect

    for origin in (DASHBOARD, None):
        with connect(f"ws://127.0.0.1:{server.ws_port}/mqtt", origin=origin,
                     subprotocols=["mqtt"], open_timeout=5, proxy=None) as socket_:
            assert socket_.subprotocol == "mqtt"
            body = b"\x00\x04MQTT\x04\x02\x00\x1e\x00\x03raw"
            socket_.send(b"\x10" + bytes([len(body)]) + body)
            assert socket_.recv(timeout=5) == b"\x20\x02\x00\x00"
    with pytest.raises(InvalidHandshake):
        connect(f"ws://127.0.0.1:{server.ws_port}/mqtt", open_timeout=5, proxy=None)


def test_a_websocket_packet_over_the_bound_or_a_text_message_closes_the_connection(server):
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    body = b"\x00\x04MQTT\x04\x02\x00\x1e\x00\x03big"
    for oversized in (b"\x30\x80\x80\x80\x01" + b"\x00\x01a", "text is not MQTT"):
        with connect(f"ws://127.0.0.1:{server.ws_port}/mqtt", subprotocols=["mqtt"],
                     open_timeout=5, proxy=None) as socket_:
            socket_.send(b"\x10" + bytes([len(body)]) + body)
            assert socket_.recv(timeout=5) == b"\x20\x02\x00\x00"
            socket_.send(oversized)  # 2 MiB announced (bound 1 MiB), or a text frame
            with pytest.raises(ConnectionClosed):
                socket_.recv(timeout=5)


MQTT_JS = "mqtt@5.10.1"
#: MQTT.js's browser bundle run by node: browser globals it looks for, native timers, and a
#: subscription to its own publish. Prints each message as JSON and exits 0 after one.
MQTT_JS_CLIENT = """
globalThis.navigator = {userAgent: "node"}; globalThis.window = globalThis;
globalThis.document = {};
require("vm").runInThisContext(require("fs").readFileSync(process.argv[2], "utf8"));
const client = mqtt.connect(process.argv[3], {clientId: "mqtt-js", protocolVersion: 4,
  reconnectPeriod: 0, connectTimeout: 5000, timerVariant: "native"});
const timer = setTimeout(() => { console.log("timeout"); process.exit(2); }, 10000);
client.on("error", (e) => { console.log("error " + e.message); process.exit(1); });
client.on("connect", () => client.subscribe("js/#", {qos: 1}, (err) => {
  if (err) { console.log("refused"); process.exit(1); }
  client.publish("js/hello", "from mqtt.js", {qos: 1});
}));
client.on("message", (topic, payload, packet) => {
  console.log(JSON.stringify({topic, payload: payload.toString(), qos: packet.qos}));
  clearTimeout(timer); client.end(false, () => process.exit(0));
});
"""


def test_mqtt_js_over_websocket_talks_to_tcp_clients(client, server, tmp_path):
    node = shutil.which("node")
    if node is None:
        tool_missing("MQTT.js test", "node is not installed")
    bundle = npm_file(MQTT_JS, "dist/mqtt.min.js")
    script = tmp_path / "client.js"
    script.write_text(MQTT_JS_CLIENT)
    # Node 20 offers the WebSocket class behind a flag; later releases by default.
    flags = [] if subprocess.run([node, "-e", "process.exit(typeof WebSocket === 'function' "
                                              "? 0 : 1)"], timeout=30).returncode == 0 \
        else ["--experimental-websocket"]
    watcher = client("js-watcher")
    watcher.subscribe("js/#", 1)
    run = subprocess.run([node, *flags, str(script), str(bundle),
                          f"ws://127.0.0.1:{server.ws_port}/mqtt"],
                         capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert run.returncode == 0, (run.stdout, run.stderr[-2000:])
    assert json.loads(run.stdout.splitlines()[-1]) == {"topic": "js/hello",
                                                      "payload": "from mqtt.js", "qos": 1}
    assert watcher.next()[:3] == ("js/hello", b"from mqtt.js", 1)


# ---------------------------------------------------------------------- client certificates

def test_a_client_certificate_with_an_allowed_cn_is_served(client, server):
    ca = server.files["ca"][0]
    cert, key = server.files["sensor-1"]
    sensor = client("sensor-1", port=server.tls_port,
                    tls={"ca_certs": ca, "certfile": cert, "keyfile": key})
    assert sensor.rc == 0
    sensor.subscribe("tls/#", 1)
    assert sensor.next()[:2] == ("tls/hello", b"over mutual tls")


def test_another_cn_gets_not_authorized(server):
    ca = server.files["ca"][0]
    cert, key = server.files["intruder"]
    intruder = Client(server.tls_port, "intruder",
                      tls={"ca_certs": ca, "certfile": cert, "keyfile": key})
    try:
        assert intruder.rc is not None and intruder.rc.is_failure
        assert intruder.rc.getName() == "Not authorized"  # CONNACK return code 5
    finally:
        intruder.close()


@pytest.mark.parametrize("who", ["rogue", None], ids=["another CA", "no certificate"])
def test_a_client_without_a_certificate_of_the_ca_fails_the_handshake(server, who):
    context = ssl.create_default_context(cafile=server.files["ca"][0])
    if who is not None:
        context.load_cert_chain(*server.files[who])
    body = b"\x00\x04MQTT\x04\x02\x00\x1e\x00\x03tls"
    answer = b""
    with socket.create_connection(("127.0.0.1", server.tls_port), timeout=5) as raw:
        try:
            with context.wrap_socket(raw, server_hostname="127.0.0.1") as wrapped:
                wrapped.settimeout(5)
                wrapped.sendall(b"\x10" + bytes([len(body)]) + body)
                answer = wrapped.recv(4)
        except (ssl.SSLError, ConnectionResetError, BrokenPipeError):
            pass
    assert answer != b"\x20\x02\x00\x00"


# ------------------------------------------------------------------------------ bounds

def test_a_client_silent_past_one_and_a_half_keep_alives_is_disconnected(server):
    body = b"\x00\x04MQTT\x04\x02\x00\x01\x00\x06silent"  # keep alive 1 s
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw:
        raw.sendall(b"\x10" + bytes([len(body)]) + body)
        raw.settimeout(5)
        assert raw.recv(4) == b"\x20\x02\x00\x00"
        started = time.monotonic()
        assert raw.recv(16) == b""
        assert 1.0 <= time.monotonic() - started < 4.5


def test_a_client_holding_too_many_qos2_publishes_open_is_disconnected(server):
    from mocks.protocols.mqtt.amqtt_broker import MAX_INFLIGHT_IN

    body = b"\x00\x04MQTT\x04\x02\x00\x3c\x00\x04hold"
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw:
        raw.sendall(b"\x10" + bytes([len(body)]) + body)
        raw.settimeout(5)
        assert raw.recv(4) == b"\x20\x02\x00\x00"
        packets = b""
        for packet_id in range(1, MAX_INFLIGHT_IN + 2):  # never a PUBREL
            publish = b"\x00\x04held" + packet_id.to_bytes(2, "big") + b"x"
            packets += b"\x34" + bytes([len(publish)]) + publish
        raw.sendall(packets)
        pieces = [b"?"]
        deadline = time.monotonic() + 5
        while pieces[-1] and time.monotonic() < deadline:
            try:
                pieces.append(raw.recv(4096))
            except ConnectionResetError:
                pieces.append(b"")
        assert pieces[-1] == b"", "the connection stayed open"
        assert b"".join(pieces[1:]).count(b"\x50\x02") == MAX_INFLIGHT_IN  # one PUBREC each
