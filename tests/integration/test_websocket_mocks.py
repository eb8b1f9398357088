"""WebSocket mocks over real sockets with the ``websockets`` client against a real
``mockd engine``: every matcher type, responses (text, json, binary, delay, noResponse),
default response and echo, templates from the message and the path, scenarios, subprotocols,
limits and their close codes, heartbeat, and 1012 when the mock changes."""
from __future__ import annotations

import base64
import json
import time

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from tests.helpers import start_engine

pytestmark = pytest.mark.integration

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n\x00\x01").decode()

MOCKS = [
    {"id": "chat", "type": "websocket", "websocket": {
        "path": "/ws/chat/{room}",
        "matchers": [
            {"match": {"type": "exact", "value": "ping"},
             "response": {"type": "text", "value": "pong"}},
            {"match": {"type": "contains", "value": "secret"}, "noResponse": True},
            {"match": {"type": "prefix", "value": "hello "},
             "response": {"type": "text", "value": "hi from {{request.pathParam.room}}"}},
            {"match": {"type": "suffix", "value": "?"},
             "response": {"type": "text", "value": "good question", "delay": "150ms"}},
            {"match": {"type": "regex", "value": "^order-(\\d+)$"},
             "response": {"type": "json", "value": {"ok": True, "text": "{{message}}"}}},
            {"match": {"type": "json", "path": "$.type", "value": "join"},
             "response": {"type": "json",
                          "value": {"joined": "{{message.user.name}}",
                                    "room": "{{request.pathParam.room}}",
                                    "lang": "{{request.query.lang}}"}}},
            {"match": {"type": "exact", "value": "image", "messageType": "text"},
             "response": {"type": "binary", "value": PNG}},
            {"match": {"type": "contains", "value": "bin", "messageType": "binary"},
             "response": {"type": "text", "value": "got binary"}},
        ],
        "defaultResponse": {"type": "text", "value": "unknown: {{message}}"}}},
    {"id": "echo", "type": "websocket", "websocket": {"path": "/ws/echo", "echoMode": True,
                                                      "maxMessageSize": 1024}},
    {"id": "script", "type": "websocket", "websocket": {
        "path": "/ws/script",
        "scenario": {"name": "login", "steps": [
            {"type": "send", "message": {"type": "text", "value": "welcome"}},
            {"type": "expect", "match": {"type": "json", "path": "$.action", "value": "login"},
             "timeout": "5s"},
            {"type": "send", "message": {"type": "json", "value": {"status": "logged-in"}}},
            {"type": "wait", "duration": "200ms"},
            {"type": "send", "message": {"type": "text", "value": "tick"}}]}}},
    {"id": "proto", "type": "websocket", "websocket": {
        "path": "/ws/proto", "subprotocols": ["chat.v2", "chat.v1"], "requireSubprotocol": True,
        "echoMode": True}},
    {"id": "limited", "type": "websocket", "websocket": {
        "path": "/ws/limited", "maxConnections": 1, "echoMode": True,
        "idleTimeout": "600ms"}},
    {"id": "beat", "type": "websocket", "websocket": {
        "path": "/beat", "echoMode": True,
        "heartbeat": {"enabled": True, "interval": "200ms", "timeout": "300ms"}}},
]


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    directory = tmp_path_factory.mktemp("websocket")
    with start_engine(directory, {"version": "1.0", "mocks": MOCKS}) as process:
        process.ws = process.base.replace("http://", "ws://")
        yield process


def ask(ws, message, timeout=5.0):
    ws.send(message)
    return ws.recv(timeout=timeout)


def test_every_matcher_type_answers(engine):
    with connect(engine.ws + "/ws/chat/lobby?lang=fr", open_timeout=10) as ws:
        assert ask(ws, "ping") == "pong"
        assert ask(ws, "hello there") == "hi from lobby"
        assert json.loads(ask(ws, "order-42")) == {"ok": True, "text": "order-42"}
        joined = json.loads(ask(ws, json.dumps({"type": "join", "user": {"name": "ann"}})))
        assert joined == {"joined": "ann", "room": "lobby", "lang": "fr"}
        assert ask(ws, "image") == base64.b64decode(PNG)
        assert ask(ws, b"a bin frame") == "got binary"
        assert ask(ws, "anything else") == "unknown: anything else"
        assert ask(ws, "{not json") == "unknown: {not json"  # malformed JSON: no json match


def test_no_response_swallows_and_delay_waits(engine):
    with connect(engine.ws + "/ws/chat/a", open_timeout=10) as ws:
        ws.send("my secret")
        with pytest.raises(TimeoutError):
            ws.recv(timeout=0.5)
        started = time.monotonic()
        assert ask(ws, "why?") == "good question"
        assert time.monotonic() - started >= 0.14
        assert ask(ws, "ping") == "pong"  # order kept after a delayed answer


def test_echo_mode_and_message_size_limit(engine):
    with connect(engine.ws + "/ws/echo", open_timeout=10) as ws:
        assert ask(ws, "repeat me") == "repeat me"
        assert ask(ws, b"\x00\x01") == b"\x00\x01"
        ws.send("x" * 2000)
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=5)
        assert closed.value.rcvd.code == 1009


def test_scenario_runs_its_steps_in_order(engine):
    with connect(engine.ws + "/ws/script", open_timeout=10) as ws:
        assert ws.recv(timeout=5) == "welcome"
        ws.send(json.dumps({"action": "login"}))
        assert json.loads(ws.recv(timeout=5)) == {"status": "logged-in"}
        started = time.monotonic()
        assert ws.recv(timeout=5) == "tick"
        assert time.monotonic() - started >= 0.15


def test_scenario_unexpected_message_closes_with_1008(engine):
    with connect(engine.ws + "/ws/script", open_timeout=10) as ws:
        assert ws.recv(timeout=5) == "welcome"
        ws.send("nonsense")
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=5)
        assert closed.value.rcvd.code == 1008


def test_subprotocol_negotiation_and_requirement(engine):
    with connect(engine.ws + "/ws/proto", subprotocols=["chat.v1"], open_timeout=10) as ws:
        assert ws.subprotocol == "chat.v1"
        assert ask(ws, "hi") == "hi"
    with connect(engine.ws + "/ws/proto", subprotocols=["chat.v1", "chat.v2"],
                 open_timeout=10) as ws:
        assert ws.subprotocol == "chat.v2"  # the mock's order decides
    with connect(engine.ws + "/ws/proto", open_timeout=10) as ws:
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=5)
        assert closed.value.rcvd.code == 1002
        assert "chat.v2" in closed.value.rcvd.reason


def test_max_connections_refuses_with_1013_and_idle_timeout_closes_with_1001(engine):
    with connect(engine.ws + "/ws/limited", open_timeout=10) as first:
        assert ask(first, "one") == "one"
        with connect(engine.ws + "/ws/limited", open_timeout=10) as second:
            with pytest.raises(ConnectionClosed) as refused:
                second.recv(timeout=5)
            assert refused.value.rcvd.code == 1013
        with pytest.raises(ConnectionClosed) as idle:
            first.recv(timeout=5)  # nothing sent for 600 ms
        assert idle.value.rcvd.code == 1001


def test_heartbeat_pings_and_closes_a_silent_client_with_1011(engine):
    import socket

    # The module engine's ``beat`` mock: heartbeat every 200 ms, 300 ms to answer.
    server = engine
    ws_url = server.base.replace("http://", "ws://") + "/beat"
    with connect(ws_url, open_timeout=10) as ws:  # answers pings by itself
        time.sleep(1.0)
        assert ask(ws, "still here") == "still here"
    host, port = server.base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as raw:
        raw.sendall(b"GET /beat HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                    b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                    b"Sec-WebSocket-Version: 13\r\n\r\n")
        received = b""
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:  # never answers the pings
            chunk = raw.recv(4096)
            if not chunk:
                break
            received += chunk
        assert b"101 Switching Protocols" in received
        assert b"\x89" in received  # a ping frame came
        assert b"\x88\x02\x03\xf3" in received or b"\x03\xf3" in received  # close 1011


def test_changing_the_mock_closes_its_clients_with_1012(tmp_path):
    import httpx

    from tests.helpers import start_server

    config = {"version": "1.0", "mocks": [{"id": "live", "type": "websocket", "websocket": {
        "path": "/live", "echoMode": True}}]}
    with start_server(tmp_path, config) as server:
        with connect(server.base.replace("http://", "ws://") + "/live", open_timeout=10) as ws:
            assert ask(ws, "a") == "a"
            changed = httpx.put(server.admin + "/mocks/live", json={
                "id": "live", "type": "websocket",
                "websocket": {"path": "/live", "defaultResponse": {"type": "text",
                                                                   "value": "new"}}},
                timeout=10, trust_env=False)
            assert changed.status_code == 200, changed.text
            with pytest.raises(ConnectionClosed) as closed:
                ws.recv(timeout=5)
            assert closed.value.rcvd.code == 1012
        with connect(server.base.replace("http://", "ws://") + "/live", open_timeout=10) as ws:
            assert ask(ws, "a") == "new"
