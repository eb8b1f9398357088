"""``mockd mqtt add|publish|subscribe`` against a real server, and an MQTT mock served over
TLS (``tls: {enabled, certFile, keyFile}``) to a paho client that trusts a test CA (trustme).

One ``mockd start`` serves the module; its config holds the TLS mock, whose certificate and
key are written next to the config file. Every port is a free loopback port.
"""
from __future__ import annotations

import json
import queue
import socket
import time

import pytest

mqtt = pytest.importorskip("paho.mqtt.client")
trustme = pytest.importorskip("trustme")

from tests.helpers import free_port, run_mockd, start_server  # noqa: E402

pytestmark = pytest.mark.integration

TIMEOUT = 8


def _wait_port(port: int) -> None:
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"nothing listens on {port}")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mqtt-cli")
    ca = trustme.CA()
    leaf = ca.issue_cert("127.0.0.1", "localhost")
    leaf.cert_chain_pems[0].write_to_path(str(folder / "server.pem"))
    for extra in leaf.cert_chain_pems[1:]:
        extra.write_to_path(str(folder / "server.pem"), append=True)
    leaf.private_key_pem.write_to_path(str(folder / "server.key"))
    ca.cert_pem.write_to_path(str(folder / "ca.pem"))
    tls_port = free_port()
    config = {"version": "1.0", "mocks": [{"id": "secure-plant", "type": "mqtt", "mqtt": {
        "port": tls_port,
        "tls": {"enabled": True, "certFile": "server.pem", "keyFile": "server.key"},
        "topics": [{"topic": "tls/hello", "retain": True, "qos": 1,
                    "messages": [{"payload": "over tls"}]}]}}]}
    with start_server(folder, config) as process:
        process.tls_port, process.ca_file = tls_port, str(folder / "ca.pem")
        _wait_port(tls_port)
        yield process


def test_cli_add_publish_and_subscribe(server, tmp_path):
    port = free_port()
    added = run_mockd(["mqtt", "add", "--port", str(port), "--topic", "cli/temp",
                       "--payload", '{"t": 21}', "--interval", "100ms", "--qos", "1",
                       "--id", "cli-mqtt", "--admin-url", server.admin], tmp_path)
    assert added.returncode == 0, added.stderr
    assert added.stdout.strip() == f"Created MQTT mock cli-mqtt on port {port} (topic cli/temp)"
    _wait_port(port)
    got = run_mockd(["mqtt", "subscribe", "--port", str(port), "--topic", "cli/#", "--qos",
                     "1", "--count", "2", "--timeout", "5", "--json"], tmp_path)
    assert got.returncode == 0, got.stderr
    rows = [json.loads(line) for line in got.stdout.splitlines()]
    assert len(rows) == 2 and rows[0]["topic"] == "cli/temp"
    assert json.loads(rows[0]["payload"]) == {"t": 21} and rows[0]["qos"] == 1

    merged = run_mockd(["mqtt", "add", "--port", str(port), "--topic", "cli/other",
                        "--payload", "x", "--admin-url", server.admin], tmp_path)
    assert merged.returncode == 0, merged.stderr
    assert merged.stdout.startswith(f"Merged into MQTT mock cli-mqtt on port {port} (topics: ")

    published = run_mockd(["mqtt", "publish", "--port", str(port), "--topic", "cli/retained",
                           "--payload", "kept", "--qos", "2", "--retain"], tmp_path)
    assert published.returncode == 0, published.stderr
    assert published.stdout.strip() == "Published 4 bytes to cli/retained (QoS 2)"
    late = run_mockd(["mqtt", "subscribe", "--port", str(port), "--topic", "cli/retained",
                      "--timeout", "5"], tmp_path)
    assert (late.returncode, late.stdout.strip()) == (0, "cli/retained kept"), late.stderr

    none = run_mockd(["mqtt", "subscribe", "--port", str(port), "--topic", "quiet/#",
                      "--timeout", "0.3"], tmp_path)
    assert none.returncode == 1 and "0 of 1 messages on quiet/# within 0.3s" in none.stderr
    bad = run_mockd(["mqtt", "publish", "--port", str(port), "--topic", "a/+",
                     "--payload", "x"], tmp_path)
    assert bad.returncode == 2 and "'+'" in bad.stderr


def test_tls_broker_accepts_a_client_that_trusts_the_ca(server):
    got: queue.Queue = queue.Queue()
    connack: queue.Queue = queue.Queue()
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="tls-client")
    client.tls_set(ca_certs=server.ca_file)
    client.on_connect = lambda cl, ud, flags, rc, props: connack.put(rc)
    client.on_message = lambda cl, ud, msg: got.put((msg.topic, msg.payload, msg.retain))
    client.connect("127.0.0.1", server.tls_port, keepalive=30)
    client.loop_start()
    try:
        assert connack.get(timeout=TIMEOUT) == 0
        client.subscribe("tls/#", 1)
        assert got.get(timeout=TIMEOUT) == ("tls/hello", b"over tls", True)
    finally:
        client.loop_stop()
        client.disconnect()
    # a plain-text client gets no CONNACK from the TLS port
    with socket.create_connection(("127.0.0.1", server.tls_port), timeout=5) as raw:
        body = b"\x00\x04MQTT\x04\x02\x00\x3c\x00\x05plain"
        raw.sendall(b"\x10" + bytes([len(body)]) + body)
        raw.settimeout(5)
        try:
            answer = raw.recv(4)
        except (ConnectionResetError, socket.timeout):
            answer = b""
        assert answer != b"\x20\x02\x00\x00"
