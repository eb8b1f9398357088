"""MQTT intake and listener rules without a network: the CONNECT check (MQTT 3.1 and 3.1.1
served, other levels refused with return code 1), the bounded readers, shared subscription
filters, the WebSocket upgrade refusals, client certificate lists, and the config keys of
``tls`` client authentication and ``websocket`` (behavior notes §4, §10, §14, §15)."""
from __future__ import annotations

import asyncio
from http import HTTPStatus
from pathlib import Path

import pytest

pytest.importorskip("amqtt")

from mocks.core.errors import ConfigError  # noqa: E402
from mocks.loader import validate_config  # noqa: E402
from mocks.protocols import CompileContext  # noqa: E402
from mocks.protocols.mqtt.handler import HANDLER  # noqa: E402
from mocks.protocols.mqtt.tls import MqttTlsSettings, certificate_refusal  # noqa: E402
from mocks.protocols.mqtt.topics import shared_subscription  # noqa: E402
from mocks.protocols.mqtt.websocket import origin_is_host, upgrade_refusal  # noqa: E402
from mocks.protocols.mqtt.wire import (CONNACK_BAD_VERSION, MAX_PACKET_BYTES,  # noqa: E402
                                       NotAcceptable, StreamIntake, check_connect,
                                       encode_length)

REST = b"\x02\x00\x3c\x00\x03abc"  # flags, keep alive 60, client id "abc"


def connect_body(name: bytes, level: int) -> bytes:
    return len(name).to_bytes(2, "big") + name + bytes([level]) + REST


# ---------------------------------------------------------------------------- CONNECT

def test_check_connect_passes_mqtt_311_unchanged():
    body = connect_body(b"MQTT", 4)
    assert check_connect(body) == ("3.1.1", body)


def test_check_connect_hands_mqtt_31_on_as_311():
    assert check_connect(connect_body(b"MQIsdp", 3)) == ("3.1", connect_body(b"MQTT", 4))


@pytest.mark.parametrize("name, level", [
    pytest.param(b"MQTT", 5, id="MQTT 5"),
    pytest.param(b"MQTT", 3, id="MQTT name with the 3.1 level"),
    pytest.param(b"MQIsdp", 4, id="MQIsdp name with the 3.1.1 level"),
])
def test_check_connect_refuses_other_levels_with_return_code_1(name, level):
    with pytest.raises(NotAcceptable) as refused:
        check_connect(connect_body(name, level))
    assert refused.value.connack == CONNACK_BAD_VERSION == b"\x20\x02\x00\x01"


@pytest.mark.parametrize("body", [
    pytest.param(connect_body(b"AMQP", 4), id="another protocol"),
    pytest.param(b"\x00", id="too short"),
    pytest.param(b"\x00\x06MQIsdp", id="no level"),
])
def test_check_connect_closes_without_an_answer_for_what_is_not_mqtt(body):
    with pytest.raises(NotAcceptable) as refused:
        check_connect(body)
    assert refused.value.connack == b""


@pytest.mark.parametrize("size, encoded", [
    (0, b"\x00"), (127, b"\x7f"), (128, b"\x80\x01"), (16_383, b"\xff\x7f"),
    (2_097_152, b"\x80\x80\x80\x01"),
])
def test_encode_length(size, encoded):
    assert encode_length(size) == encoded


def reader_of(data: bytes) -> StreamIntake:
    stream = asyncio.StreamReader()
    stream.feed_data(data)
    stream.feed_eof()
    return StreamIntake(stream)


async def test_take_connect_keeps_the_rewritten_connect_for_the_library():
    body = connect_body(b"MQIsdp", 3)
    reader = reader_of(b"\x10" + encode_length(len(body)) + body + b"\xc0\x00")
    assert await reader.take_connect() == "3.1"
    expected = connect_body(b"MQTT", 4)
    assert await reader.read(1) == b"\x10"
    assert await reader.read(1) == encode_length(len(expected))
    assert await reader.read(len(expected)) == expected
    assert await reader.read(2) == b"\xc0\x00"  # the next packet (PINGREQ), from the stream


@pytest.mark.parametrize("data", [
    pytest.param(b"GET / HTTP/1.1\r\n\r\n", id="HTTP"),
    pytest.param(b"\x30\x02\x00\x00", id="a PUBLISH first"),
    pytest.param(b"\x10\xff\xff\xff\xff\x01", id="a length of five bytes"),
    pytest.param(b"\x10" + encode_length(MAX_PACKET_BYTES + 1), id="a CONNECT over the bound"),
])
async def test_take_connect_refuses(data):
    with pytest.raises(NotAcceptable):
        await reader_of(data).take_connect()


async def test_a_read_over_the_packet_bound_is_refused():
    with pytest.raises(NotAcceptable):
        reader_of(b"").read(MAX_PACKET_BYTES + 1)


# ---------------------------------------------------------------------- shared filters

@pytest.mark.parametrize("text, expected", [
    pytest.param("sensors/+", None, id="not shared"),
    pytest.param("$share/g/sensors/+", ("g", "sensors/+"), id="shared"),
    pytest.param("$share/g/#", ("g", "#"), id="shared, everything"),
    pytest.param("$SYS/x", None, id="another $ topic"),
])
def test_shared_subscription(text, expected):
    assert shared_subscription(text) == expected


@pytest.mark.parametrize("text", ["$share/g", "$share//x", "$share/+/x", "$share/g#/x",
                                  "$share/g/"])
def test_malformed_shared_subscriptions(text):
    with pytest.raises(ValueError):
        shared_subscription(text)


# ----------------------------------------------------------------- WebSocket upgrades

def allow_dashboard(origin: str) -> bool:
    return origin == "https://dash.example"


@pytest.mark.parametrize("path, origin, host, configured, expected", [
    pytest.param("/mqtt", None, "127.0.0.1:9001", "/mqtt", None, id="no origin"),
    pytest.param("/mqtt?x=1", "https://dash.example", "h", "/mqtt", None,
                 id="listed origin, query string"),
    pytest.param("/any", "http://127.0.0.1:9001", "127.0.0.1:9001", None, None,
                 id="origin is the Host address (paho), any path"),
    pytest.param("/", "http://[::1]:9001", "[::1]:9001", None, None, id="IPv6 Host"),
    pytest.param("/mqtt", "https://evil.example", "127.0.0.1:9001", "/mqtt",
                 HTTPStatus.FORBIDDEN, id="foreign origin"),
    pytest.param("/mqtt", "http://evil.example:9001", "evil.example:9001", "/mqtt",
                 HTTPStatus.FORBIDDEN, id="a name as Host (DNS rebinding)"),
    pytest.param("/ws", None, "127.0.0.1:9001", "/mqtt", HTTPStatus.NOT_FOUND,
                 id="another path"),
])
def test_upgrade_refusal(path, origin, host, configured, expected):
    refusal = upgrade_refusal(path, origin, host, configured, allow_dashboard)
    assert (refusal[0] if refusal else None) == expected


def test_origin_is_host_needs_the_same_port_and_an_ip_address():
    assert origin_is_host("http://10.0.0.5:9001", "10.0.0.5:9001")
    assert not origin_is_host("http://10.0.0.5:9002", "10.0.0.5:9001")
    assert not origin_is_host("http://localhost:9001", "localhost:9001")
    assert not origin_is_host("file://10.0.0.5", "10.0.0.5")
    assert not origin_is_host("null", None)


# --------------------------------------------------------------- client certificates

class FakeTls:
    def __init__(self, certificate):
        self.certificate = certificate

    def getpeercert(self):
        return self.certificate


def certificate(cn: str, *ous: str) -> dict:
    subject = [(("commonName", cn),)] + [(("organizationalUnitName", ou),) for ou in ous]
    return {"subject": tuple(subject)}


@pytest.mark.parametrize("cns, ous, peer, refused", [
    pytest.param((), (), certificate("any"), False, id="no lists"),
    pytest.param(("sensor-1",), (), certificate("sensor-1"), False, id="listed CN"),
    pytest.param(("sensor-1",), (), certificate("intruder"), True, id="other CN"),
    pytest.param(("sensor-1",), (), None, False, id="no certificate sent"),
    pytest.param((), ("fleet",), certificate("x", "lab", "fleet"), False, id="listed OU"),
    pytest.param((), ("fleet",), certificate("x", "lab"), True, id="other OU"),
])
def test_certificate_refusal(cns, ous, peer, refused):
    settings = MqttTlsSettings("c.pem", "k.pem", "request", ("ca.pem",), cns, ous)
    assert (certificate_refusal(FakeTls(peer), settings) is not None) is refused


def test_a_plain_connection_has_no_certificate_to_refuse():
    settings = MqttTlsSettings("c.pem", "k.pem", "require", ("ca.pem",), ("a",))
    assert certificate_refusal(None, settings) is None
    assert certificate_refusal(FakeTls(certificate("b")), None) is None


# -------------------------------------------------------------------------- config

def mqtt_mock(**block) -> dict:
    return {"version": "1.0", "mocks": [{"id": "m", "type": "mqtt",
                                         "mqtt": {"port": 1883, **block}}]}


@pytest.mark.parametrize("block, message", [
    pytest.param({"websocket": {"port": 1883}}, "mocks[0].mqtt: websocket.port 1883 is the "
                 "MQTT port itself", id="websocket on the MQTT port"),
    pytest.param({"websocket": {"port": 9001, "path": "mqtt"}},
                 "mocks[0].mqtt.websocket.path: path must start with '/'", id="bad path"),
    pytest.param({"tls": {"enabled": True, "certFile": "s.pem", "keyFile": "s.key",
                          "clientAuth": "require"}},
                 "mocks[0].mqtt.tls: tls.clientAuth 'require' needs caCertFile",
                 id="client auth without a CA"),
    pytest.param({"tls": {"enabled": True, "certFile": "s.pem", "keyFile": "s.key",
                          "clientAuth": "sometimes", "caCertFile": "ca.pem"}},
                 "mocks[0].mqtt.tls.clientAuth: Input should be", id="unknown mode"),
    pytest.param({"topics": [{"topic": "a", "onPublish": {"response": {"qos": 3}}}]},
                 "mocks[0].mqtt.topics[0].onPublish.response.qos", id="answer qos 3"),
])
def test_config_errors_name_the_key(block, message):
    with pytest.raises(ConfigError) as error:
        validate_config(mqtt_mock(**block))
    assert message in str(error.value)


def compile_mock(config: dict, base_dir: Path, roots: tuple[Path, ...] = ()):
    mock = validate_config(config).mocks[0]
    return HANDLER.compile(mock, CompileContext("mocks[0]", base_dir=base_dir,
                                                body_file_roots=roots))


def test_tls_files_outside_the_file_roots_are_refused(tmp_path):
    inside = tmp_path / "config"
    inside.mkdir()
    (tmp_path / "server.pem").write_text("x")
    config = mqtt_mock(tls={"enabled": True, "certFile": "../server.pem", "keyFile": "k.key"})
    with pytest.raises(ConfigError) as error:
        compile_mock(config, inside, (inside.resolve(),))
    assert "mocks[0].mqtt.tls.certFile" in str(error.value)
    assert "outside the folders files may be read from" in str(error.value)


def test_a_missing_ca_file_is_named(tmp_path):
    trustme = pytest.importorskip("trustme")
    ca = trustme.CA()
    leaf = ca.issue_cert("127.0.0.1")
    leaf.cert_chain_pems[0].write_to_path(str(tmp_path / "s.pem"))
    leaf.private_key_pem.write_to_path(str(tmp_path / "s.key"))
    config = mqtt_mock(tls={"enabled": True, "certFile": "s.pem", "keyFile": "s.key",
                            "clientAuth": "require", "caCertFiles": ["s.pem", "none.pem"]})
    with pytest.raises(ConfigError) as error:
        compile_mock(config, tmp_path, (tmp_path.resolve(),))
    assert "mocks[0].mqtt.tls.caCertFiles[1]: file not found" in str(error.value)


def test_answer_and_forward_qos_follow_the_config_or_the_publish(tmp_path):
    config = mqtt_mock(topics=[
        {"topic": "a/+", "onPublish": {"response": {"payload": "x"}, "forward": "f"}},
        {"topic": "b/+", "qos": 1, "onPublish": {"response": {"payload": "x"},
                                                 "forward": "f"}},
        {"topic": "c/+", "qos": 1, "onPublish": {"response": {"payload": "x", "qos": 0}}},
    ])
    service = compile_mock(config, tmp_path).services[0]
    assert [(topic.answer_qos, topic.forward_qos) for topic in service.table.topics] == [
        (None, None), (1, 1), (0, 1)]


def test_the_websocket_listener_is_part_of_the_definition(tmp_path):
    plain = compile_mock(mqtt_mock(), tmp_path).services[0]
    with_ws = compile_mock(mqtt_mock(websocket={"port": 9001, "path": "/mqtt"}),
                           tmp_path).services[0]
    off = compile_mock(mqtt_mock(websocket={"port": 9001, "enabled": False}),
                       tmp_path).services[0]
    assert with_ws.websocket == (9001, "/mqtt") and with_ws.definition != plain.definition
    assert off.websocket is None and off.definition == plain.definition
