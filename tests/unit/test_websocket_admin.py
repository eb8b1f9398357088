"""The admin side of WebSocket mocks without sockets: outgoing-message bodies, the endpoint
listing, ``EngineControl``'s "WebSocket connections" block driven through the engine-control
port's mirrored routes (connections registered in the hub by hand, their queues read
directly), and the ``mockd websocket`` option parsing.

Source: behavior notes §1 ("Connections": WebSocket routes), §16, §17."""
from __future__ import annotations

import base64

import httpx
import pytest

from mocks.protocols.websocket.cli import (UsageProblem, build_websocket_mock, message_body,
                                         parse_match)
from mocks.engine.control import EngineControl, EngineControlApp
from mocks.protocols import WebSocketRoute
from mocks.protocols.websocket.control import (WebSocketAdminError, broadcast_target,
                                               endpoint_documents, outgoing_message)
from mocks.protocols.websocket.handler import hub_of
from mocks.protocols.websocket.hub import CloseRequest, WebSocketConnection
from tests.helpers import engine_with, http_mock

CHAT = {"id": "chat", "name": "Chat", "type": "websocket", "websocket": {
    "path": "/ws/chat", "subprotocols": ["v2", "v1"], "echoMode": True,
    "matchers": [{"match": {"type": "exact", "value": "ping"},
                  "response": {"type": "text", "value": "pong"}}]}}
SCRIPT = {"id": "script", "type": "websocket", "websocket": {
    "path": "/ws/script/{room}", "scenario": {"name": "login", "steps": [
        {"type": "send", "message": {"type": "text", "value": "hi"}},
        {"type": "wait", "duration": "10ms"}]}}}


# ---------------------------------------------------------------------------- message bodies


@pytest.mark.parametrize("body, expected", [
    pytest.param({"type": "text", "data": "hello"}, ("text", "hello"), id="text"),
    pytest.param({"data": "no type"}, ("text", "no type"), id="type defaults to text"),
    pytest.param({"type": "text", "data": ""}, ("text", ""), id="empty text"),
    pytest.param({"type": "binary", "data": base64.b64encode(b"\x00\xff").decode()},
                 ("binary", b"\x00\xff"), id="binary base64 decoded"),
])
def test_outgoing_message_reads_type_and_data(body, expected):
    assert outgoing_message(body) == expected


@pytest.mark.parametrize("body, key", [
    pytest.param(["text"], "body:", id="not an object"),
    pytest.param({"type": "json", "data": "x"}, "type:", id="unknown type"),
    pytest.param({"type": "text"}, "data: required", id="missing data"),
    pytest.param({"type": "text", "data": None}, "data: required", id="null data"),
    pytest.param({"type": "text", "data": {"a": 1}}, "data: must be a string", id="object data"),
    pytest.param({"type": "binary", "data": "not base64!"}, "data: type binary needs",
                 id="bad base64"),
])
def test_outgoing_message_refuses_a_bad_body_naming_the_key(body, key):
    with pytest.raises(WebSocketAdminError) as refused:
        outgoing_message(body)
    assert refused.value.status == 400 and refused.value.code == "validation_error"
    assert refused.value.message.startswith(key)


def test_broadcast_target_is_optional_but_must_be_a_string():
    assert broadcast_target({"data": "x"}) is None
    assert broadcast_target({"data": "x", "mockId": "chat"}) == "chat"
    with pytest.raises(WebSocketAdminError, match="mockId"):
        broadcast_target({"data": "x", "mockId": 7})


# ---------------------------------------------------------------------------- endpoints


def test_endpoint_documents_list_websocket_mocks_only_with_their_connections():
    engine = engine_with(CHAT, SCRIPT, http_mock("plain", "GET", "/plain"))
    hub = hub_of(engine.shared_state)
    compiled = engine.snapshot.websocket_routes["/ws/chat"].app.compiled
    hub.add(WebSocketConnection(compiled, "/ws/chat", "127.0.0.1:1", "", None))

    async def other_handler(scope, receive, send):  # e.g. GraphQL subscriptions
        return None

    routes = [*engine.snapshot.websocket_routes.values(),
              WebSocketRoute(path="/graphql", mock_id="gql", app=other_handler)]
    documents = endpoint_documents(routes, hub)
    assert documents == [
        {"mockId": "chat", "name": "Chat", "path": "/ws/chat", "connections": 1,
         "subprotocols": ["v2", "v1"], "echoMode": True, "matchers": 1},
        {"mockId": "script", "path": "/ws/script/{room}", "connections": 0, "subprotocols": [],
         "echoMode": False, "matchers": 0, "scenario": {"name": "login", "steps": 2}}]


# ---------------------------------------------------------------------------- engine control


def _open(engine, path: str) -> WebSocketConnection:
    """A connection registered in the hub as the endpoint would (no socket behind it)."""
    connection = WebSocketConnection(engine.snapshot.websocket_routes[path].app.compiled, path,
                                     "127.0.0.1:50000", "probe/1", None)
    hub_of(engine.shared_state).add(connection)
    return connection


def _queued(connection: WebSocketConnection) -> list:
    items = []
    while not connection.queue.empty():
        items.append(connection.queue.get_nowait())
    return items


@pytest.fixture
def linked():
    engine = engine_with(CHAT, SCRIPT, http_mock("plain", "GET", "/plain"))
    control = EngineControl(engine, max_log_entries=10)
    transport = httpx.ASGITransport(app=EngineControlApp(control, token="t0ken"))
    client = httpx.AsyncClient(transport=transport, base_url="http://localhost",
                               headers={"X-Engine-Token": "t0ken",
                                        "Content-Type": "application/json"})
    return engine, control, client


async def test_engine_control_lists_reads_sends_and_closes_websocket_connections(linked):
    engine, control, link = linked
    async with link:
        first, second = _open(engine, "/ws/chat"), _open(engine, "/ws/chat")
        other = _open(engine, "/ws/script/{room}")
        listed = (await link.get("/websocket/connections")).json()
        assert listed["count"] == 3 and listed["stats"]["activeConnections"] == 3
        assert [c["id"] for c in listed["connections"]] == [first.id, second.id, other.id]
        one = (await link.get(f"/websocket/connections/{first.id}")).json()
        assert one["mockId"] == "chat" and one["mockName"] == "Chat" and one["status"] == "open"
        assert one["clientIp"] == "127.0.0.1" and one["userAgent"] == "probe/1"

        sent = await link.post(f"/websocket/connections/{first.id}/send",
                               json={"type": "binary", "data": "AAE="})
        assert sent.json() == {"message": "Message sent", "connection": first.id,
                               "type": "binary"}
        assert _queued(first) == [(b"\x00\x01", 0.0)]
        bad = await link.post(f"/websocket/connections/{first.id}/send", json={"type": "x"})
        assert bad.status_code == 400 and bad.json()["message"].startswith("type:")
        not_json = await link.post(f"/websocket/connections/{first.id}/send", content=b"{")
        assert not_json.status_code == 400 and not_json.json()["error"] == "invalid_json"
        missing = await link.post("/websocket/connections/ws_0/send", json={"data": "x"})
        assert missing.status_code == 404 and missing.json()["message"] == "Connection not found"

        everyone = await link.post("/websocket/broadcast", json={"data": "all"})
        assert everyone.json() == {"message": "Message broadcast", "sent": 3}
        only_chat = await link.post("/websocket/broadcast",
                                    json={"type": "text", "data": "chat", "mockId": "chat"})
        assert only_chat.json()["sent"] == 2
        assert [item[0] for item in _queued(second)] == ["all", "chat"]
        assert [item[0] for item in _queued(other)] == ["all"]
        unknown = await link.post("/websocket/broadcast", json={"data": "x", "mockId": "nope"})
        assert unknown.status_code == 404 and unknown.json()["message"] == "Mock not found"

        endpoints = (await link.get("/websocket/endpoints")).json()
        assert endpoints["count"] == 2 and endpoints["endpoints"][0]["connections"] == 2
        assert (await link.get("/websocket/stats")).json()["connectionsByMock"] == {
            "chat": 2, "script": 1}
        assert (await control.status())["openStreams"]["websocket"] == 3

        closed = await link.delete(f"/websocket/connections/{first.id}")
        assert closed.json() == {"message": "Connection closed", "connection": first.id}
        [close] = _queued(first)
        assert isinstance(close, CloseRequest)
        assert (close.code, close.reason) == (1000, "closed by admin")
        refused = await link.post(f"/websocket/connections/{first.id}/send", json={"data": "x"})
        assert refused.status_code == 409 and refused.json()["error"] == "conflict"

        of_chat = (await link.get("/mocks/chat/websocket/connections")).json()
        assert of_chat["mockId"] == "chat" and of_chat["count"] == 2
        closed_all = (await link.delete("/mocks/chat/websocket/connections")).json()
        assert closed_all == {"message": "Connections closed", "closed": 1, "mockId": "chat"}
        assert (await link.get("/mocks/plain/websocket/connections")).json()["count"] == 0
        gone = await link.get("/mocks/nope/websocket/connections")
        assert gone.status_code == 404 and gone.json()["message"] == "Mock not found"
        assert (await link.get("/websocket/connections/ws_0")).status_code == 404
        assert (await link.delete("/websocket/connections/ws_0")).status_code == 404
        assert (await link.post("/websocket/stats")).status_code == 405
        assert (await link.get("/websocket/broadcast")).status_code == 405
        assert (await link.get("/websocket/nothing")).status_code == 404


# ---------------------------------------------------------------------------- CLI parsing


@pytest.mark.parametrize("text, match, response", [
    pytest.param("exact:ping=pong", {"type": "exact", "value": "ping"}, "pong", id="exact"),
    pytest.param("contains:a=b=c", {"type": "contains", "value": "a"}, "b=c",
                 id="response keeps later equals signs"),
    pytest.param(r"regex:^a\=(\d+)$=got {{message}}", {"type": "regex", "value": r"^a=(\d+)$"},
                 "got {{message}}", id="escaped equals sign in the value"),
    pytest.param("suffix:?=", {"type": "suffix", "value": "?"}, "", id="empty response"),
])
def test_parse_match_splits_type_value_and_response(text, match, response):
    assert parse_match(text) == {"match": match,
                                 "response": {"type": "text", "value": response}}


@pytest.mark.parametrize("text, reason", [
    pytest.param("ping=pong", "expected TYPE:VALUE=RESPONSE", id="no type"),
    pytest.param("json:$.a=1", "expected TYPE:VALUE=RESPONSE", id="unsupported type"),
    pytest.param("exact:ping", "no '='", id="no response"),
    pytest.param("exact:=pong", "empty value", id="empty value"),
    pytest.param("regex:(=x", "bad regex", id="bad regex"),
])
def test_parse_match_refuses_bad_text_naming_the_option(text, reason):
    with pytest.raises(UsageProblem) as refused:
        parse_match(text)
    assert refused.value.exit_code == 2
    assert refused.value.format_message().startswith("--match: ")
    assert reason in refused.value.format_message()


def test_build_websocket_mock_makes_the_document_post_mocks_takes():
    mock = build_websocket_mock(path="/ws", mock_id="w", name="W", echo=True,
                                matches=("exact:ping=pong",), default="?",
                                subprotocols=("v1",))
    assert mock == {"type": "websocket", "id": "w", "name": "W", "websocket": {
        "path": "/ws", "subprotocols": ["v1"],
        "matchers": [{"match": {"type": "exact", "value": "ping"},
                      "response": {"type": "text", "value": "pong"}}],
        "defaultResponse": {"type": "text", "value": "?"}, "echoMode": True}}
    with pytest.raises(UsageProblem, match="--path"):
        build_websocket_mock(path="ws", mock_id=None, name=None, echo=False, matches=(),
                             default=None, subprotocols=())


def test_message_body_reads_text_base64_or_a_file(tmp_path):
    assert message_body("hi", False, None) == {"type": "text", "data": "hi"}
    assert message_body("AAE=", True, None) == {"type": "binary", "data": "AAE="}
    blob = tmp_path / "blob.bin"
    blob.write_bytes(b"\x00\x01")
    assert message_body(None, False, str(blob)) == {"type": "binary", "data": "AAE="}
    for data, binary, file, option in (("!!", True, None, "DATA"), (None, False, None, "DATA"),
                                       ("x", False, str(blob), "--file"),
                                       (None, False, str(tmp_path / "none"), "--file")):
        with pytest.raises(UsageProblem) as refused:
            message_body(data, binary, file)
        assert refused.value.format_message().startswith(f"{option}: ")
