"""``mockd.MockServer`` serving the other protocols to real clients: gRPC (grpcio, stubs
generated with grpcio-tools), MQTT (paho-mqtt), WebSocket (websockets) and SSE (httpx-sse),
through the library's helpers (``grpc_channel``, ``mqtt_client``)."""
from __future__ import annotations

import importlib
import queue
import sys
from pathlib import Path

import pytest

from mockd import MockServer, grpc as grpc_mock, mqtt as mqtt_mock, sse, websocket

grpc = pytest.importorskip("grpc")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "grpc"
TIMEOUT = 10


@pytest.fixture(scope="module")
def greeter(tmp_path_factory):
    """``(greeter_pb2, greeter_pb2_grpc)`` generated now."""
    from grpc_tools import protoc

    out = tmp_path_factory.mktemp("grpc-stubs")
    assert protoc.main(["protoc", f"-I{FIXTURES}", f"--python_out={out}",
                        f"--grpc_python_out={out}", str(FIXTURES / "greeter.proto")]) == 0
    sys.path.insert(0, str(out))
    try:
        return (importlib.import_module("greeter_pb2"),
                importlib.import_module("greeter_pb2_grpc"))
    finally:
        sys.path.remove(str(out))


@pytest.fixture(scope="module")
def server():
    proto = (FIXTURES / "greeter.proto").read_text()
    mocks = [
        grpc_mock(proto, {"helloworld.Greeter": {"methods": {
            "SayHello": {"message": "Hello {{request.name}}"}}}}, id="greeter"),
        mqtt_mock([{"topic": "ping", "onPublish": {"response": {"topic": "pong",
                                                                "payload": "pong"}}}],
                  id="broker"),
        websocket("/ws", echo=True, id="echo"),
        sse("/events", [{"type": "tick", "data": {"n": 1}}, {"type": "tick", "data": {"n": 2}}],
            interval_ms=5, id="events"),
    ]
    with MockServer(mocks=mocks) as running:
        yield running


def test_grpc_channel_reaches_the_grpc_mock(server, greeter):
    greeter_pb2, greeter_pb2_grpc = greeter
    with server.grpc_channel() as channel:
        stub = greeter_pb2_grpc.GreeterStub(channel)
        reply = stub.SayHello(greeter_pb2.HelloRequest(name="Ada"), timeout=TIMEOUT)
    assert reply.message == "Hello Ada"
    assert server.verify("greeter", times=1) == 1
    assert [entry.protocol for entry in server.requests(matched="greeter")] == ["grpc"]


def test_mqtt_client_reaches_the_broker(server):
    received: queue.Queue = queue.Queue()
    client = server.mqtt_client(client_id="library-test")
    try:
        client.on_message = lambda _client, _data, message: received.put(
            (message.topic, message.payload))
        client.subscribe("pong")
        # The subscription is in place once the broker acknowledges it; publish after.
        for _ in range(50):
            client.publish("ping", b"hi", qos=1).wait_for_publish(TIMEOUT)
            try:
                assert received.get(timeout=0.2) == ("pong", b"pong")
                break
            except queue.Empty:
                continue
        else:
            pytest.fail("no answer on 'pong'")
    finally:
        client.disconnect()
        client.loop_stop()


def test_websocket_and_sse_mocks(server):
    import httpx
    from httpx_sse import connect_sse
    from websockets.sync.client import connect

    with connect(server.url.replace("http", "ws", 1) + "/ws", open_timeout=TIMEOUT) as ws:
        ws.send("hello")
        assert ws.recv(timeout=TIMEOUT) == "hello"
    with httpx.Client(base_url=server.url, timeout=TIMEOUT) as client, \
            connect_sse(client, "GET", "/events") as source:
        events = []
        for event in source.iter_sse():
            if event.event != "tick":
                continue
            events.append((event.event, event.json()))
            if len(events) == 2:
                break
    assert events == [("tick", {"n": 1}), ("tick", {"n": 2})]


def test_helpers_without_such_a_mock_say_so():
    with MockServer() as empty:
        with pytest.raises(LookupError, match="grpc"):
            empty.grpc_channel()
        with pytest.raises(LookupError, match="mqtt"):
            empty.mqtt_port()
