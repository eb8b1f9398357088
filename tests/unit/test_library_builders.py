"""The mockd library's builders (``mockd.builders``) and its import cost: every builder
gives a mock the config schema accepts, keywords land on the documented keys, and importing
``mockd`` loads no Django (nor, for an HTTP-only server, anything its mocks do not use)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mockd import MockConfigError, MockServer, builders
from mocks.loader import validate_config

GREETER = """syntax = "proto3";
package demo;
service Greeter { rpc SayHello (HelloRequest) returns (HelloReply); }
message HelloRequest { string name = 1; }
message HelloReply { string message = 1; }
"""


def test_http_builder_maps_keywords_to_config_keys():
    mock = builders.http("post", "/orders/{id}", status=201, json={"ok": True},
                         headers={"X-Trace": "1"}, query={"page": "2"},
                         match_headers={"X-Tenant": "a"}, delay_ms=5, id="order",
                         name="Create order", priority=3, body_contains="sku")
    assert mock == {"type": "http", "id": "order", "name": "Create order", "http": {
        "matcher": {"method": "POST", "path": "/orders/{id}", "queryParams": {"page": "2"},
                    "headers": {"X-Tenant": "a"}, "bodyContains": "sku"},
        "response": {"statusCode": 201, "body": {"ok": True}, "delayMs": 5,
                     "headers": {"X-Trace": "1", "Content-Type": "application/json"}},
        "priority": 3}}
    assert validate_config({"mocks": [mock]}).mocks[0].id == "order"


def test_http_builder_refuses_body_and_json_together():
    with pytest.raises(ValueError, match="body= or json="):
        builders.http("GET", "/", body="a", json={"a": 1})


@pytest.mark.parametrize("mock", [
    builders.http("GET", "/a", body="x"),
    builders.sse("/events", [{"type": "tick", "data": {"n": 1}}, "done"], interval_ms=10),
    builders.websocket("/ws", echo=True, default_response="?"),
    builders.graphql("/graphql", "type Query { hello: String }", {"Query.hello": "world"}),
    builders.grpc(GREETER, {"demo.Greeter": {"methods": {"SayHello": {"message": "hi"}}}}),
    builders.mqtt(["status", {"topic": "ping", "onPublish": {"response": {"payload": "pong"}}}]),
    builders.soap("/soap", {"Ping": "<PingResponse/>"}),
    builders.oauth(users=[{"username": "ada", "password": "pw"}]),
], ids=lambda mock: mock["type"] + ("-sse" if "sse" in mock.get("http", {}) else ""))
def test_every_builder_gives_a_valid_mock(mock):
    config = validate_config({"mocks": [mock]})
    assert config.mocks[0].type == mock["type"]


def test_grpc_builder_wraps_plain_answers_and_picks_a_port():
    mock = builders.grpc(GREETER, {"demo.Greeter": {"methods": {
        "SayHello": {"message": "hi"}, "Other": {"error": {"code": "NOT_FOUND"}}}}})
    methods = mock["grpc"]["services"]["demo.Greeter"]["methods"]
    assert methods["SayHello"] == {"response": {"message": "hi"}}
    assert methods["Other"] == {"error": {"code": "NOT_FOUND"}}
    assert 0 < mock["grpc"]["port"] < 65536


def test_invalid_mock_at_construction_names_the_key():
    with pytest.raises(MockConfigError) as caught:
        MockServer(mocks=[builders.http("GET", "/a", status=99)])
    assert caught.value.path == "mocks[0].http.response.statusCode"
    assert "statusCode" in str(caught.value)


def test_config_dict_without_version_and_unknown_key():
    assert MockServer({"mocks": [builders.http("GET", "/a")]}).mocks()[0]["type"] == "http"
    with pytest.raises(MockConfigError, match="mocks"):
        MockServer({"mocks": [{"http": {"matcher": {"path": "/a"}, "colour": 1}}]})


def test_methods_before_start_say_the_server_is_not_running():
    from mockd import ServerNotRunning

    server = MockServer()
    with pytest.raises(ServerNotRunning, match="start"):
        server.url
    with pytest.raises(ServerNotRunning):
        server.verify("x")


#: What an HTTP-only ``MockServer`` never loads: other protocols' libraries, Django and the
#: admin side, and the modules of features its mocks do not use (streams, tables, chaos,
#: request validation, the WebSocket libraries, the HTTP client), each loaded on first use.
NOT_LOADED_BY_AN_HTTP_SERVER = (
    "grpc", "google.protobuf", "graphql", "amqtt", "lxml", "oauthlib", "authlib", "jwt",
    "django", "ninja", "channels", "daphne", "mocks.api", "mocks.models", "yaml",
    "mocks.protocols.streaming.config", "mocks.protocols.streaming.actions", "tables.config",
    "tables.query", "tables.validation", "mocks.protocols.http.validation", "chaos.config",
    "chaos.injector", "mocks.server_config", "websockets", "wsproto", "httpx")

LIBRARY_START = """
import http.client, json, sys
import mockd
imported = sorted(sys.modules)
server = mockd.MockServer(mocks=[mockd.http("GET", "/ping", body="ok", id="ping"),
                                 mockd.http("POST", "/users/{id}", status=201,
                                            json={"id": "{{request.pathParam.id}}"})])
server.start()
connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
connection.request("GET", "/ping")
answer = connection.getresponse().read().decode()
connection.close()
server.stop()
print(json.dumps({"imported": imported, "started": sorted(sys.modules), "answer": answer}))
"""


def _among(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return sorted({wanted for name in modules for wanted in names
                   if name == wanted or name.startswith(wanted + ".")})


def test_an_http_only_mock_server_loads_only_what_its_mocks_use():
    """``import mockd`` loads no config model, engine or server module (they load with the
    first server); a started HTTP-only server that answered a request has loaded none of
    :data:`NOT_LOADED_BY_AN_HTTP_SERVER`. One subprocess."""
    done = subprocess.run([sys.executable, "-c", LIBRARY_START], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["answer"] == "ok"
    assert _among(seen["imported"], ("pydantic", "mocks", "tables", "uvicorn", "uvloop")) == []
    assert _among(seen["started"], NOT_LOADED_BY_AN_HTTP_SERVER) == []
