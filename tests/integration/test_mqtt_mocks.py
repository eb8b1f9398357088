"""MQTT mocks served to real clients (paho-mqtt, MQTT 3.1.1): scheduled messages, onPublish
answers with payload/topic/wildcard templates, simulated devices, QoS 1/2 delivery, retained
messages, wildcard subscriptions, auth and ACL refusals, garbage bytes, tables written from
publishes, chaos on client publishes, and the request log (behavior notes §1, §10; SPEC "Mocks", "Templating").
Debian's ``mosquitto_sub`` / ``mosquitto_pub`` (package ``mosquitto-clients``) are a second,
independent client: without them that test skips, and fails under CI (``tests/thirdparty.py``).

One ``mockd start`` serves the module (module-scoped fixture); every port is a free loopback
port.
"""
from __future__ import annotations

import json
import queue
import socket
import subprocess
import time

import pytest

mqtt = pytest.importorskip("paho.mqtt.client")

from tests.helpers import free_port, start_server  # noqa: E402
from tests.thirdparty import debian_tool  # noqa: E402

TIMEOUT = 8


def config(port: int, auth_port: int) -> dict:
    return {
        "version": "1.0",
        "tables": [{"name": "telemetry", "idStrategy": "uuid"}],
        "mocks": [
            {"id": "plant", "type": "mqtt", "mqtt": {"port": port, "topics": [
                {"topic": "sensors/temp", "qos": 1,
                 "messages": [{"payload": {"v": 1}, "interval": "200ms", "repeat": True}]},
                {"topic": "status/boot", "retain": True, "qos": 1,
                 "messages": [{"payload": "up", "delay": "10ms"}]},
                {"topic": "cmd/+/set", "qos": 1, "onPublish": {
                    "response": {"topic": "cmd/{{wildcard.0}}/ack",
                                 "payload": '{"ok": true, "level": "{{payload.level}}", '
                                            '"on": "{{topic}}"}'},
                    "forward": "audit/cmd"}},
                {"topic": "fleet/+/data", "qos": 0,
                 "deviceSimulation": {"enabled": True, "deviceCount": 3,
                                      "deviceIdPattern": "dev-{n}"},
                 "messages": [{"payload": '{"id": "{{device.id}}"}', "interval": "300ms",
                               "repeat": True}]},
                {"topic": "telemetry/in", "onPublish": {"statefulResource": "telemetry",
                                                        "statefulAction": "create"}},
            ]}},
            {"id": "secure", "type": "mqtt", "mqtt": {
                "port": auth_port,
                "auth": {"enabled": True, "users": [
                    {"username": "app", "password": "pw",
                     "acl": [{"topic": "open/#", "access": "readwrite"},
                             {"topic": "ro/#", "access": "read"}]}]},
                "topics": [{"topic": "ro/news", "retain": True,
                            "messages": [{"payload": "hello"}]}]}},
            {"id": "telemetry-rest", "type": "http", "http": {
                "matcher": {"method": "GET", "path": "/telemetry"}}},
        ],
        "extend": [{"mock": "telemetry-rest", "table": "telemetry", "action": "list"}],
    }


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mqtt")
    port, auth_port = free_port(), free_port()
    with start_server(folder, config(port, auth_port)) as process:
        process.port, process.auth_port = port, auth_port
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield process


class Client:
    """A connected paho client collecting ``(topic, payload, qos, retain)``."""

    def __init__(self, port: int, name: str, username: str | None = None,
                 password: str | None = None, clean: bool = True):
        self.queue: queue.Queue = queue.Queue()
        # no reconnect: a refused or dropped client's thread ends instead of sleeping in
        # paho's reconnect wait (1 s steps), so close() returns at once
        self.c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=name,
                             clean_session=clean, reconnect_on_failure=False)
        self.c.on_message = lambda cl, ud, msg: self.queue.put(
            (msg.topic, msg.payload, msg.qos, msg.retain))
        self.connack: queue.Queue = queue.Queue()
        self.c.on_connect = lambda cl, ud, flags, rc, props: self.connack.put(rc)
        if username:
            self.c.username_pw_set(username, password)
        self.c.connect("127.0.0.1", port, keepalive=30)
        self.c.loop_start()
        self.rc = self.connack.get(timeout=TIMEOUT)

    def subscribe(self, topic: str, qos: int = 0) -> int:
        done: queue.Queue = queue.Queue()
        self.c.on_subscribe = lambda cl, ud, mid, codes, props: done.put(codes[0])
        self.c.subscribe(topic, qos)
        return done.get(timeout=TIMEOUT).value

    def next(self, topic_prefix: str = "", timeout: float = TIMEOUT):
        deadline = time.time() + timeout
        while time.time() < deadline:
            item = self.queue.get(timeout=max(0.05, deadline - time.time()))
            if item[0].startswith(topic_prefix):
                return item
        raise AssertionError(f"nothing on {topic_prefix}")

    def close(self) -> None:
        """Send DISCONNECT, then join the network thread: the DISCONNECT wakes the thread's
        select and ends its loop at once (stopping the loop first waits out its 1 s select)."""
        self.c.disconnect()
        self.c.loop_stop()


@pytest.fixture
def client(server):
    made = []

    def make(name: str, port: int | None = None, **kwargs):
        made.append(Client(port or server.port, name, **kwargs))
        return made[-1]

    yield make
    for item in made:
        item.close()


def test_scheduled_messages_reach_a_subscriber_at_the_topic_qos(client):
    sub = client("sched")
    assert sub.subscribe("sensors/temp", 1) == 1
    topic, payload, qos, _ = sub.next("sensors/temp")
    assert json.loads(payload) == {"v": 1} and qos == 1


def test_retained_message_reaches_a_late_subscriber(client):
    time.sleep(0.1)
    sub = client("late")
    sub.subscribe("status/#", 1)
    topic, payload, _, retain = sub.next("status/")
    assert (topic, payload, retain) == ("status/boot", b"up", True)


def test_a_client_retained_publish_reaches_a_late_subscriber_and_the_log(client, server):
    pub = client("keeper")
    pub.c.publish("kept/lamp", b"on", qos=1, retain=True).wait_for_publish(TIMEOUT)
    late = client("kept-late")
    late.subscribe("kept/#", 1)
    assert late.next("kept/")[:4] == ("kept/lamp", b"on", 1, True)
    with server.admin_client() as admin:
        rows = admin.get("/requests", params={"mqttClientId": "keeper"}).json()["requests"]
    assert [(row["path"], row["mqtt"]["retain"], row["mqtt"]["qos"]) for row in rows] == [
        ("kept/lamp", True, 1)]


def test_on_publish_answers_with_wildcard_payload_and_topic_templates_and_forwards(client,
                                                                                   server):
    sub = client("app-sub")
    sub.subscribe("cmd/+/ack", 1)
    sub.subscribe("audit/#", 1)
    pub = client("app-pub")
    pub.c.publish("cmd/lamp/set", json.dumps({"level": 7}), qos=2).wait_for_publish(TIMEOUT)
    seen = {}
    for _ in range(2):
        topic, payload, _, _ = sub.next("")
        seen[topic] = payload
    assert "cmd/lamp/ack" in seen, (seen, server.log()[-3000:])
    assert json.loads(seen["cmd/lamp/ack"]) == {"ok": True, "level": "7",
                                                 "on": "cmd/lamp/set"}
    assert json.loads(seen["audit/cmd"]) == {"level": 7}


def wait_for_subscription(admin, client_id: str, topic_filter: str) -> None:
    """Poll ``/mqtt-connections`` until ``client_id`` holds ``topic_filter`` (bounded)."""
    deadline = time.time() + TIMEOUT
    while time.time() < deadline:
        rows = admin.get("/mqtt-connections").json()["connections"]
        if any(row["clientId"] == client_id and topic_filter in row["subscriptions"]
               for row in rows):
            return
        time.sleep(0.05)
    raise AssertionError(f"{client_id} never subscribed to {topic_filter}: {rows}")


def test_mosquitto_clients_receive_retained_messages_and_onpublish_answers(client, server):
    mosquitto_sub = debian_tool("mosquitto_sub", "mosquitto-clients")
    mosquitto_pub = debian_tool("mosquitto_pub", "mosquitto-clients")
    where = ["-h", "127.0.0.1", "-p", str(server.port), "-V", "mqttv311"]
    # -C: messages to wait for, -W: seconds before giving up; the subprocess timeout is a
    # second bound should the client hang.
    retained = subprocess.run(
        [mosquitto_sub, *where, "-i", "mosq-retained", "-t", "status/boot", "-q", "1", "-v",
         "-C", "1", "-W", str(TIMEOUT)],
        capture_output=True, text=True, timeout=TIMEOUT + 5, stdin=subprocess.DEVNULL)
    assert retained.returncode == 0, retained.stderr
    assert retained.stdout == "status/boot up\n"

    audit = client("paho-audit")
    audit.subscribe("audit/#", 1)
    acks = subprocess.Popen(
        [mosquitto_sub, *where, "-i", "mosq-acks", "-t", "cmd/+/ack", "-q", "1", "-v",
         "-C", "1", "-W", str(TIMEOUT)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    try:
        with server.admin_client() as admin:
            wait_for_subscription(admin, "mosq-acks", "cmd/+/ack")
        sent = subprocess.run(
            [mosquitto_pub, *where, "-i", "mosq-pub", "-t", "cmd/heater/set", "-q", "1",
             "-m", json.dumps({"level": 3})],
            capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
        assert sent.returncode == 0, sent.stderr
        out, err = acks.communicate(timeout=TIMEOUT + 5)
    finally:
        if acks.poll() is None:
            acks.kill()
            acks.communicate(timeout=5)
    assert acks.returncode == 0, err
    topic, _, payload = out.rstrip("\n").partition(" ")
    assert topic == "cmd/heater/ack"
    assert json.loads(payload) == {"ok": True, "level": "3", "on": "cmd/heater/set"}
    topic, payload, _, _ = audit.next("audit/")
    assert (topic, json.loads(payload)) == ("audit/cmd", {"level": 3})


def test_each_simulated_device_publishes_on_its_own_topic(client):
    sub = client("fleet")
    sub.subscribe("fleet/+/data")
    seen = set()
    deadline = time.time() + TIMEOUT
    while len(seen) < 3 and time.time() < deadline:
        topic, payload, _, _ = sub.next("fleet/")
        assert json.loads(payload)["id"] == topic.split("/")[1]
        seen.add(topic)
    assert seen == {"fleet/dev-1/data", "fleet/dev-2/data", "fleet/dev-3/data"}


def test_qos2_relay_between_clients_and_persistent_session(client, server):
    first = client("persist", clean=False)
    first.subscribe("chat/#", 2)
    first.close()
    pub = client("talker")
    pub.c.publish("chat/room", b"while away", qos=2).wait_for_publish(TIMEOUT)
    # the anonymous session is not kept by amqtt; a live subscriber gets QoS 2 delivery
    live = client("live")
    live.subscribe("chat/#", 2)
    pub.c.publish("chat/room", b"hi", qos=2).wait_for_publish(TIMEOUT)
    topic, payload, qos, _ = live.next("chat/")
    assert (topic, payload, qos) == ("chat/room", b"hi", 2)


def test_auth_refuses_unknown_users_and_enforces_acl(client, server):
    bad = Client(server.auth_port, "intruder", username="app", password="nope")
    try:
        assert bad.rc != 0
    finally:
        bad.close()
    anonymous = Client(server.auth_port, "anon")
    try:
        assert anonymous.rc != 0
    finally:
        anonymous.close()
    good = client("good", port=server.auth_port, username="app", password="pw")
    assert good.rc == 0
    assert good.subscribe("secret/#") == 128
    assert good.subscribe("ro/#") == 0
    assert good.next("ro/")[1] == b"hello"
    good.subscribe("open/#")
    good.c.publish("ro/news", b"tamper").wait_for_publish(TIMEOUT)
    good.c.publish("open/x", b"fine").wait_for_publish(TIMEOUT)
    assert good.next("open/")[1] == b"fine"
    assert good.queue.empty() or all(item[1] != b"tamper" for item in list(good.queue.queue))


def test_an_mqtt5_client_is_refused_at_connack_with_unsupported_protocol_version(server):
    """The broker (amqtt) speaks MQTT 3.1.1 only: an MQTT 5 client learns it at once from its
    CONNACK instead of hanging (docs/mqtt.md)."""
    answers: queue.Queue = queue.Queue()
    v5 = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="v5-client",
                     protocol=mqtt.MQTTv5, reconnect_on_failure=False)
    v5.on_connect = lambda cl, ud, flags, reason, props: answers.put(reason)
    v5.connect("127.0.0.1", server.port, keepalive=30)
    v5.loop_start()
    try:
        reason = answers.get(timeout=TIMEOUT)
    finally:
        v5.disconnect()
        v5.loop_stop()
    assert reason.is_failure and reason.getName() == "Unsupported protocol version"


def test_garbage_bytes_disconnect_that_client_only(client, server):
    live = client("survivor")
    live.subscribe("alive/#")
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw:
        body = b"\x00\x04MQTT\x04\x02\x00\x3c\x00\x03raw"
        raw.sendall(b"\x10" + bytes([len(body)]) + body)
        raw.settimeout(5)
        assert raw.recv(4) == b"\x20\x02\x00\x00"
        size = 2 * 1024 * 1024  # above the broker's packet bound: the connection is closed
        length = bytearray()
        while True:
            size, digit = divmod(size, 128)
            length.append(digit | (0x80 if size else 0))
            if not size:
                break
        raw.sendall(b"\x30" + bytes(length) + b"\x00\x01a" + b"x" * 1000)
        assert raw.recv(100) == b""
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw:
        raw.sendall(b"GET / HTTP/1.1\r\n\r\n")
        raw.settimeout(5)
        assert raw.recv(100) == b""
    other = client("after")
    other.c.publish("alive/x", b"still").wait_for_publish(TIMEOUT)
    assert live.next("alive/")[1] == b"still"


def test_publishes_reach_the_request_log_and_tables(client, server):
    pub = client("logger")
    pub.c.publish("telemetry/in", json.dumps({"deviceId": "d1", "t": 21}),
                  qos=1).wait_for_publish(TIMEOUT)
    deadline = time.time() + TIMEOUT
    with server.admin_client() as admin, server.client() as data:
        while time.time() < deadline:
            entries = admin.get("/requests", params={"protocol": "mqtt",
                                                     "mqttTopic": "telemetry/in"}).json()
            rows = entries.get("requests") or entries.get("entries") or []
            if rows:
                break
            time.sleep(0.1)
        assert rows and rows[0]["method"] == "mqtt" and rows[0]["path"] == "telemetry/in"
        assert rows[0]["mqttClientId"] == "logger"
        items = data.get("/telemetry").json()
        listed = items.get("data") if isinstance(items, dict) else items
        assert listed is not None, items
        assert any(item.get("deviceId") == "d1" for item in listed)


def test_chaos_delays_a_publish_and_an_error_drops_it_and_disconnects_the_client(client,
                                                                                 server):
    """Chaos rules see a client publish as method ``PUBLISH`` on path = topic: latency
    delays its delivery; an injected error drops the message and closes the publisher's
    connection (MQTT 3.1.1 has no error answer to a PUBLISH), logged with error ``chaos``."""
    listener = client("chaos-listener")
    listener.subscribe("chaos/#", 1)
    pub = client("chaos-pub")
    dropped: queue.Queue = queue.Queue()
    pub.c.on_disconnect = lambda cl, ud, flags, rc, props: dropped.put(rc)
    rules = {"enabled": True, "rules": [
        {"pathPattern": "^chaos/slow$", "methods": ["PUBLISH"],
         "faults": [{"type": "latency", "min": "400ms", "max": "400ms"}]},
        {"pathPattern": "^chaos/drop$", "faults": [{"type": "error", "statusCodes": [503]}]}]}
    with server.admin_client() as admin:
        try:
            assert admin.put("/chaos", json=rules).status_code == 200
            started = time.monotonic()
            pub.c.publish("chaos/slow", b"late", qos=1)
            assert listener.next("chaos/")[1] == b"late"
            assert time.monotonic() - started >= 0.3
            pub.c.publish("chaos/fast", b"now", qos=1)
            assert listener.next("chaos/")[1] == b"now"
            pub.c.publish("chaos/drop", b"lost", qos=0)
            assert dropped.get(timeout=TIMEOUT) is not None
            with pytest.raises(queue.Empty):
                listener.queue.get(timeout=0.5)
            entries = admin.get("/requests", params={"protocol": "mqtt",
                                                     "mqttTopic": "chaos/drop"}).json()
            rows = entries.get("requests") or entries.get("entries") or []
            assert rows and rows[0]["error"] == "chaos"
            assert rows[0]["mqttClientId"] == "chaos-pub"
        finally:
            assert admin.put("/chaos", json={"enabled": False}).status_code == 200
    again = client("chaos-after")
    again.c.publish("chaos/drop", b"kept", qos=1).wait_for_publish(TIMEOUT)
    assert listener.next("chaos/")[1] == b"kept"


def mqtt_metrics(admin) -> tuple[float, float]:
    """``(mockd_requests_total of method mqtt on path cmd/+/set, mockd_match_hits_total of
    mock plant)`` as ``GET /metrics`` shows them (0 when the series is absent)."""
    from prometheus_client.parser import text_string_to_metric_families

    requests = hits = 0.0
    for family in text_string_to_metric_families(admin.get("/metrics").text):
        for sample in family.samples:
            if (sample.name == "mockd_requests_total" and sample.labels.get("method") == "mqtt"
                    and sample.labels.get("path") == "cmd/+/set"):
                requests += sample.value
            elif (sample.name == "mockd_match_hits_total"
                  and sample.labels.get("mock_id") == "plant"):
                hits += sample.value
    return requests, hits


def test_client_publishes_count_in_verification_and_metrics(client, server):
    pub = client("counted")
    with server.admin_client() as admin:
        assert admin.delete("/mocks/plant/invocations").status_code == 200
        assert admin.get("/mocks/plant/verify").json()["callCount"] == 0
        requests_before, hits_before = mqtt_metrics(admin)
        for level in range(3):
            pub.c.publish("cmd/valve/set", json.dumps({"level": level}),
                          qos=1).wait_for_publish(TIMEOUT)
        deadline = time.time() + TIMEOUT
        while time.time() < deadline:
            status = admin.get("/mocks/plant/verify").json()
            if status["callCount"] >= 3:
                break
            time.sleep(0.05)
        assert status["callCount"] == 3, status
        assert status["firstCalledAt"] <= status["lastCalledAt"]
        verdict = admin.post("/mocks/plant/verify", json={"exactly": 3}).json()
        assert verdict["passed"] is True and verdict["actual"] == 3, verdict
        calls = admin.get("/mocks/plant/invocations").json()
        assert calls["total"] == 3
        assert {row["path"] for row in calls["invocations"]} == {"cmd/valve/set"}
        requests_after, hits_after = mqtt_metrics(admin)
        assert requests_after - requests_before == 3
        assert hits_after - hits_before == 3


def test_posting_an_mqtt_mock_for_a_used_port_merges_its_topics_and_conflicts_are_409(
        client, server):
    port = server.port
    extra = {"type": "mqtt", "mqtt": {"port": port, "topics": [
        {"topic": "merged/hello", "messages": [{"payload": "joined", "interval": "100ms",
                                                "repeat": True}]}]}}
    with server.admin_client() as admin:
        merged = admin.post("/mocks", json=extra)
        assert merged.status_code == 200, merged.text
        body = merged.json()
        assert body["action"] == "merged" and body["targetMockId"] == "plant"
        assert body["addedServices"] == ["merged/hello"]
        assert body["totalServices"][-1] == "merged/hello" and "sensors/temp" in body[
            "totalServices"]
        again = admin.post("/mocks", json=extra)
        assert again.status_code == 409 and again.json()["error"] == "service_conflict"
        assert "merged/hello" in again.json()["message"]
        team = admin.post("/workspaces", json={"name": "Team mqtt"}).json()
        other = admin.post("/mocks", json={**extra, "workspaceId": team["id"]})
        assert other.status_code == 409 and other.json()["error"] == "port_conflict"
        grpc_port = free_port()
        assert admin.post("/mocks", json={
            "type": "grpc", "grpc": {"port": grpc_port, "protoContent": (
                'syntax = "proto3"; package d; message T { string t = 1; } '
                'service P { rpc Ping (T) returns (T); }')}}).status_code == 201
        clash = admin.post("/mocks", json={"type": "mqtt", "mqtt": {"port": grpc_port}})
        assert clash.status_code == 409 and clash.json()["error"] == "port_conflict"
    sub = client("merged-sub")
    sub.subscribe("merged/#")
    assert sub.next("merged/")[1] == b"joined"


def test_admin_lists_brokers_status_clients_and_ports_and_disconnects_a_client(client, server):
    watched = client("watched")
    watched.subscribe("sensors/#")
    with server.admin_client() as admin:
        listing = admin.get("/mqtt").json()
        assert listing["count"] == 2
        plant = next(row for row in listing["brokers"] if row["id"] == "plant")
        assert plant["port"] == server.port and plant["running"] is True
        assert plant["recordingEnabled"] is False
        assert admin.get("/mqtt/status").json()["running"] is True
        status = admin.get(f"/mqtt/mqtt:{server.port}/status").json()
        assert status["id"] == "plant" and status["messagesPublished"] > 0
        assert admin.get("/mqtt/nope/status").status_code == 404
        rows = admin.get("/mqtt-connections").json()["connections"]
        mine = next(row for row in rows if row["clientId"] == "watched")
        assert mine["subscriptions"] == ["sensors/#"] and mine["port"] == server.port
        assert admin.get("/mqtt-connections/stats").json()["total"] >= 1
        assert admin.get(f"/mqtt-connections/{mine['id']}").json()["clientId"] == "watched"
        ports = admin.get("/ports").json()["ports"]
        assert {"port": server.port, "protocol": "MQTT", "component": "MQTT Broker",
                "status": "running"} in ports
        closed = admin.delete(f"/mqtt-connections/{mine['id']}")
        assert closed.status_code == 200, closed.text
        assert admin.get(f"/mqtt-connections/{mine['id']}").status_code == 404
        assert admin.delete("/mqtt-connections/none").status_code == 404


def test_a_broker_added_through_the_admin_api_accepts_connections_once_it_answers(server):
    """POST /mocks answers after the new mock's broker listens: a client connecting right
    after the 201 gets its CONNACK (no retry)."""
    with server.admin_client() as admin:
        for _ in range(3):
            port = free_port()
            created = admin.post("/mocks", json={"type": "mqtt",
                                                 "mqtt": {"port": port, "topics": []}})
            assert created.status_code == 201, created.text
            with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as raw:
                # CONNECT, MQTT 3.1.1, clean session, keepalive 30 s, client id "at-once"
                raw.sendall(bytes([0x10, 19, 0, 4]) + b"MQTT" + bytes([4, 2, 0, 30, 0, 7])
                            + b"at-once")
                raw.settimeout(TIMEOUT)
                assert raw.recv(4) == bytes([0x20, 2, 0, 0])  # CONNACK, accepted
            assert admin.delete(f"/mocks/{created.json()['id']}").status_code == 204


def test_recording_filters_and_converts_into_a_mock_that_serves_the_same_messages(
        client, server):
    with server.admin_client() as admin:
        started = admin.post("/mqtt/plant/record/start")
        assert started.status_code == 200 and started.json()["recordingEnabled"] is True
        assert admin.post("/mqtt/nope/record/start").status_code == 404
        rows = admin.get("/mqtt").json()["brokers"]
        assert next(row for row in rows if row["id"] == "plant")["recordingEnabled"] is True
        watcher = client("rec-watch")
        watcher.subscribe("rec/#", 1)
        pub = client("rec-pub")
        for topic, payload, qos in (("rec/a/temp", b"21", 1), ("rec/b/temp", b"22", 0),
                                    ("rec/a/temp", b"21", 1), ("rec/a/temp", b"23", 1)):
            pub.c.publish(topic, payload, qos=qos).wait_for_publish(TIMEOUT)
        for _ in range(4):
            watcher.next("rec/")
        admin.post("/mqtt/plant/record/stop")
        assert not next(row for row in admin.get("/mqtt").json()["brokers"]
                        if row["id"] == "plant")["recordingEnabled"]
        pub.c.publish("rec/a/temp", b"after stop").wait_for_publish(TIMEOUT)

        temps = admin.get("/mqtt-recordings", params={"topicPattern": "rec/+/temp"}).json()
        assert temps["total"] == 4, temps
        assert [row["payload"] for row in temps["recordings"]] == ["21", "22", "21", "23"]
        assert temps["recordings"][0]["clientId"] == "rec-pub"
        assert temps["recordings"][0]["direction"] == "publish"
        subs = admin.get("/mqtt-recordings", params={"clientId": "rec-watch",
                                                     "direction": "subscribe"}).json()
        assert [row["topic"] for row in subs["recordings"]] == ["rec/#"]
        page = admin.get("/mqtt-recordings", params={"topicPattern": "rec/#", "limit": 1,
                                                     "offset": 1}).json()
        assert page["limit"] == 1 and len(page["recordings"]) == 1
        bad = admin.get("/mqtt-recordings", params={"topicPattern": "rec/#/x"})
        assert bad.status_code == 400 and bad.json()["error"] == "validation_error"
        first = temps["recordings"][0]
        assert admin.get(f"/mqtt-recordings/{first['id']}").json() == first
        stats = admin.get("/mqtt-recordings/stats").json()
        assert stats["total"] >= 5 and stats["byDirection"]["subscribe"] >= 1
        assert stats["dropped"] == 0 and stats["recordingBrokers"] == []
        assert admin.post("/mqtt-recordings/export").json()["count"] == stats["total"]

        one = admin.post(f"/mqtt-recordings/{first['id']}/convert").json()
        assert one["mock"]["mqtt"]["topics"] == [
            {"topic": "rec/a/temp", "qos": 1, "messages": [{"payload": "21", "delay": 0}]}]
        replay_port = free_port()
        converted = admin.post("/mqtt-recordings/convert", json={
            "topicPattern": "rec/#", "deduplicate": True, "includeQoS": True,
            "includeRetain": True}).json()
        assert converted["recordingCount"] == 3 and converted["topicCount"] == 2
        assert converted["skipped"] == 1  # the subscription
        mock = converted["mock"]
        assert mock["type"] == "mqtt" and mock["mqtt"]["port"] == server.port
        assert admin.post("/mqtt-recordings/convert", json={
            "topicPattern": "none/#"}).json()["error"] == "no_recordings"

        # an empty broker first, so a subscriber is there when the converted topics arrive
        assert admin.post("/mocks", json={"type": "mqtt", "mqtt": {
            "port": replay_port, "topics": []}}).status_code == 201
        replay = client("replay-sub", port=replay_port)
        replay.subscribe("rec/#", 1)
        mock["mqtt"]["port"] = replay_port
        posted = admin.post("/mocks", json=mock)
        assert posted.status_code == 200 and posted.json()["action"] == "merged", posted.text
        got = [replay.next("rec/")[:3] for _ in range(3)]
        assert sorted(got) == sorted([("rec/a/temp", b"21", 1), ("rec/b/temp", b"22", 0),
                                      ("rec/a/temp", b"23", 1)])

        assert admin.delete(f"/mqtt-recordings/{first['id']}").status_code == 200
        assert admin.get(f"/mqtt-recordings/{first['id']}").status_code == 404
        assert admin.delete("/mqtt-recordings").json()["deleted"] == stats["total"] - 1
        assert admin.get("/mqtt-recordings").json()["total"] == 0
