"""The admin side of WebSocket mocks against a real ``mockd start`` (API key required) and a
real ``mockd engine``'s control port, with real ``websockets`` clients: listing, reading,
pushing, broadcasting and closing connections, endpoints and statistics, the
``mockd_active_connections`` gauge, the request log and verification of connections, the
API key and cross-origin rules of the new write routes, and the ``mockd websocket`` commands.

Each test uses mocks of its own, so the module's server can be shared. Every wait is bounded.

Source: behavior notes §1 ("Connections": WebSocket routes, "Request log", "Verification"),
§3, §16, §17.
"""
from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from tests.helpers import free_port, make_config, run_mockd, start_engine, start_server

pytestmark = pytest.mark.integration

WAIT = 5.0  # seconds any single wait may take


def ws_mock(mock_id: str, path: str, **block: Any) -> dict[str, Any]:
    return {"id": mock_id, "type": "websocket", "websocket": {"path": path, **block}}


MOCKS = [
    ws_mock("push", "/ws/push", echoMode=True),
    ws_mock("errors", "/ws/errors", echoMode=True),
    ws_mock("crowd", "/ws/crowd", echoMode=True),
    ws_mock("bystander", "/ws/bystander", echoMode=True),
    ws_mock("closing", "/ws/closing", echoMode=True),
    ws_mock("group", "/ws/group", echoMode=True),
    ws_mock("gauge", "/ws/gauge", echoMode=True),
    ws_mock("logged", "/ws/logged", matchers=[
        {"match": {"type": "exact", "value": "ping"},
         "response": {"type": "text", "value": "pong"}}]),
    {"id": "listed", "name": "Listed chat", "type": "websocket", "websocket": {
        "path": "/ws/listed/{room}", "subprotocols": ["chat.v1"], "echoMode": True,
        "matchers": [{"match": {"type": "prefix", "value": "a"},
                      "response": {"type": "text", "value": "b"}}],
        "scenario": {"name": "greet", "steps": [
            {"type": "send", "message": {"type": "text", "value": "welcome"}}]}}},
    ws_mock("clipush", "/ws/clipush", echoMode=True),
    {"id": "plain", "type": "http", "http": {"matcher": {"path": "/plain"},
                                             "response": {"body": "hi"}}},
]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    directory = tmp_path_factory.mktemp("websocket-admin")
    with start_server(directory, make_config(*MOCKS), no_auth=False) as process:
        process.key = (directory / "data" / "admin-api-key").read_text().strip()
        process.ws = process.base.replace("http://", "ws://")
        process.directory = directory
        yield process


@pytest.fixture
def admin(server):
    with server.admin_client(headers={"X-API-Key": server.key}) as client:
        yield client


def eventually(check: Callable[[], Any], timeout: float = WAIT) -> Any:
    """Poll ``check`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not true within {timeout} s: {check}")
        time.sleep(0.05)


def connections_of(admin, mock_id: str, count: int) -> list[dict[str, Any]]:
    """The mock's open connections once there are ``count`` of them."""
    def listed():
        found = admin.get(f"/mocks/{mock_id}/websocket/connections").json()["connections"]
        return (found,) if len(found) == count else None
    return eventually(listed)[0]


def closed_with(client) -> tuple[int, str]:
    """Read until the server closes; ``(code, reason)``."""
    with pytest.raises(ConnectionClosed):
        for _ in range(100):
            client.recv(timeout=WAIT)
    return client.close_code, client.close_reason


# ---------------------------------------------------------------------------- admin routes


def test_admin_lists_reads_and_pushes_text_and_binary_to_a_live_client(server, admin):
    with connect(server.ws + "/ws/push", open_timeout=WAIT,
                 user_agent_header="admin-test/1") as client:
        [listed] = connections_of(admin, "push", 1)
        everything = admin.get("/websocket/connections").json()
        assert listed["id"] in [c["id"] for c in everything["connections"]]
        assert everything["count"] == len(everything["connections"])
        assert everything["stats"]["connectionsByMock"]["push"] == 1
        one = admin.get(f"/websocket/connections/{listed['id']}").json()
        assert one["mockId"] == "push" and one["path"] == "/ws/push"
        assert one["clientIp"] == "127.0.0.1" and one["userAgent"] == "admin-test/1"
        assert one["status"] == "open" and one["id"].startswith("ws_")

        sent = admin.post(f"/websocket/connections/{listed['id']}/send",
                          json={"type": "text", "data": "hello from admin"})
        assert sent.json() == {"message": "Message sent", "connection": listed["id"],
                               "type": "text"}
        assert client.recv(timeout=WAIT) == "hello from admin"
        payload = b"\x00\x01\xfe\xff"
        binary = admin.post(f"/websocket/connections/{listed['id']}/send",
                            json={"type": "binary", "data": base64.b64encode(payload).decode()})
        assert binary.json()["type"] == "binary"
        assert client.recv(timeout=WAIT) == payload

        client.send("echo me")
        assert client.recv(timeout=WAIT) == "echo me"
        counted = eventually(lambda: (lambda c: c if c["messagesSent"] == 3 else None)(
            admin.get(f"/websocket/connections/{listed['id']}").json()))
        assert counted["messagesReceived"] == 1 and counted["bytesReceived"] == 7
        assert counted["bytesSent"] == len("hello from admin") + 4 + 7
        assert "lastMessageTime" in counted


@pytest.mark.parametrize("body, key", [
    pytest.param({"type": "json", "data": "x"}, "type:", id="unknown type"),
    pytest.param({"type": "text"}, "data:", id="missing data"),
    pytest.param({"type": "binary", "data": "***"}, "data:", id="bad base64"),
    pytest.param({"type": "text", "data": 5}, "data:", id="data not a string"),
    pytest.param([1, 2], "body:", id="not an object"),
])
def test_send_with_a_bad_body_is_400_naming_the_key(server, admin, body, key):
    with connect(server.ws + "/ws/errors", open_timeout=WAIT) as client:
        [listed] = connections_of(admin, "errors", 1)
        answer = admin.post(f"/websocket/connections/{listed['id']}/send", json=body)
        assert answer.status_code == 400
        assert answer.json()["error"] == "validation_error"
        assert answer.json()["message"].startswith(key)
        client.send("still open")
        assert client.recv(timeout=WAIT) == "still open"  # nothing else was sent


def test_unknown_connections_and_mocks_are_404_and_bad_json_400(admin):
    for method, path in (("GET", "/websocket/connections/ws_nope"),
                         ("DELETE", "/websocket/connections/ws_nope")):
        answer = admin.request(method, path)
        assert answer.status_code == 404
        assert answer.json() == {"error": "not_found", "message": "Connection not found"}
    missing = admin.post("/websocket/connections/ws_nope/send", json={"data": "x"})
    assert missing.status_code == 404 and missing.json()["message"] == "Connection not found"
    for method in ("GET", "DELETE"):
        answer = admin.request(method, "/mocks/nope/websocket/connections")
        assert answer.status_code == 404 and answer.json()["message"] == "Mock not found"
    unknown = admin.post("/websocket/broadcast", json={"data": "x", "mockId": "nope"})
    assert unknown.status_code == 404 and unknown.json()["message"] == "Mock not found"
    broken = admin.post("/websocket/broadcast", content=b"{not json",
                        headers={"Content-Type": "application/json"})
    assert broken.status_code == 400 and broken.json()["error"] == "invalid_json"


def test_broadcast_reaches_three_clients_and_mock_id_narrows_it(server, admin):
    url = server.ws + "/ws/crowd"
    with connect(url, open_timeout=WAIT) as one, connect(url, open_timeout=WAIT) as two, \
            connect(url, open_timeout=WAIT) as three, \
            connect(server.ws + "/ws/bystander", open_timeout=WAIT) as bystander:
        connections_of(admin, "crowd", 3)
        connections_of(admin, "bystander", 1)
        answer = admin.post("/websocket/broadcast",
                            json={"type": "text", "data": "to the crowd", "mockId": "crowd"})
        assert answer.json() == {"message": "Message broadcast", "sent": 3}
        assert [client.recv(timeout=WAIT) for client in (one, two, three)] == \
            ["to the crowd"] * 3
        everyone = admin.post("/websocket/broadcast",
                              json={"type": "binary", "data": base64.b64encode(b"\x07").decode()})
        assert everyone.json()["sent"] >= 4
        assert bystander.recv(timeout=WAIT) == b"\x07"  # the first thing it ever received
        assert [client.recv(timeout=WAIT) for client in (one, two, three)] == [b"\x07"] * 3


def test_close_through_the_admin_reaches_the_client_as_1000(server, admin):
    with connect(server.ws + "/ws/closing", open_timeout=WAIT) as client:
        [listed] = connections_of(admin, "closing", 1)
        answer = admin.delete(f"/websocket/connections/{listed['id']}")
        assert answer.json() == {"message": "Connection closed", "connection": listed["id"]}
        assert closed_with(client) == (1000, "closed by admin")
    eventually(lambda: admin.get(f"/websocket/connections/{listed['id']}").status_code == 404)


def test_per_mock_list_and_close(server, admin):
    url = server.ws + "/ws/group"
    with connect(url, open_timeout=WAIT) as first, connect(url, open_timeout=WAIT) as second:
        listed = connections_of(admin, "group", 2)
        answer = admin.get("/mocks/group/websocket/connections").json()
        assert answer["mockId"] == "group" and answer["count"] == 2
        assert {c["mockId"] for c in listed} == {"group"}
        closed = admin.delete("/mocks/group/websocket/connections").json()
        assert closed == {"message": "Connections closed", "closed": 2, "mockId": "group"}
        assert closed_with(first) == (1000, "closed by admin")
        assert closed_with(second) == (1000, "closed by admin")
    connections_of(admin, "group", 0)
    assert admin.get("/mocks/plain/websocket/connections").json()["count"] == 0


def test_endpoints_list_the_websocket_mocks_with_their_connections(server, admin):
    with connect(server.ws + "/ws/listed/lobby", open_timeout=WAIT,
                 subprotocols=["chat.v1"]) as client:
        assert client.recv(timeout=WAIT) == "welcome"
        connections_of(admin, "listed", 1)
        answer = admin.get("/websocket/endpoints").json()
        assert answer["count"] == len(answer["endpoints"])
        by_id = {endpoint["mockId"]: endpoint for endpoint in answer["endpoints"]}
        assert "plain" not in by_id
        assert by_id["listed"] == {"mockId": "listed", "name": "Listed chat",
                                   "path": "/ws/listed/{room}", "connections": 1,
                                   "subprotocols": ["chat.v1"], "echoMode": True,
                                   "matchers": 1, "scenario": {"name": "greet", "steps": 1}}
        assert by_id["push"]["connections"] == 0 and "scenario" not in by_id["push"]


def test_stats_count_connections_messages_and_bytes(server, admin):
    before = admin.get("/websocket/stats").json()
    with connect(server.ws + "/ws/gauge", open_timeout=WAIT) as client:
        client.send("abc")
        assert client.recv(timeout=WAIT) == "abc"
        during = admin.get("/websocket/stats").json()
        assert during["connectionsByMock"]["gauge"] == 1
        assert during["activeConnections"] >= 1
        assert during["totalConnections"] == before["totalConnections"] + 1
        assert during["messagesReceived"] == before["messagesReceived"] + 1
        assert during["bytesReceived"] == before["bytesReceived"] + 3
        assert during["messagesSent"] == before["messagesSent"] + 1
        assert during["bytesSent"] == before["bytesSent"] + 3
        assert set(during) == {"activeConnections", "totalConnections", "refusedConnections",
                               "messagesReceived", "messagesSent", "bytesReceived",
                               "bytesSent", "connectionsByMock"}


def _gauge(admin) -> float:
    for line in admin.get("/metrics").text.splitlines():
        if line.startswith('mockd_active_connections{protocol="websocket"}'):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError("no mockd_active_connections{protocol=\"websocket\"} line")


def test_metrics_gauge_counts_open_websocket_connections(server, admin):
    baseline = _gauge(admin)
    url = server.ws + "/ws/gauge"
    with connect(url, open_timeout=WAIT), connect(url, open_timeout=WAIT):
        connections_of(admin, "gauge", 2)
        assert _gauge(admin) == baseline + 2
    eventually(lambda: _gauge(admin) == baseline)


def test_request_log_and_verification_count_closed_connections(server, admin):
    with connect(server.ws + "/ws/logged?x=1", open_timeout=WAIT) as client:
        for _ in range(2):
            client.send("ping")
            assert client.recv(timeout=WAIT) == "pong"
        client.send("unanswered")
        [listed] = connections_of(admin, "logged", 1)
    connection_id = listed["id"]

    def entry():
        found = admin.get("/requests", params={"protocol": "websocket",
                                               "wsConnectionId": connection_id}).json()
        return found["requests"][0] if found["count"] == 1 else None
    logged = eventually(entry)
    assert logged["protocol"] == "websocket" and logged["path"] == "/ws/logged"
    assert logged["matchedMockId"] == "logged" and logged["statusCode"] == 101
    assert logged["messagesReceived"] == 3 and logged["messagesSent"] == 2
    assert logged["closeCode"] == 1000
    other = admin.get("/requests", params={"protocol": "websocket",
                                           "wsConnectionId": "ws_other"}).json()
    assert other["count"] == 0
    assert all(item["protocol"] == "websocket" for item in
               admin.get("/requests", params={"protocol": "websocket"}).json()["requests"])

    assert admin.get("/mocks/logged/verify").json()["callCount"] == 1
    with connect(server.ws + "/ws/logged", open_timeout=WAIT):
        connections_of(admin, "logged", 1)
    eventually(lambda: admin.get("/mocks/logged/verify").json()["callCount"] == 2)
    verdict = admin.post("/mocks/logged/verify", json={"exactly": 2}).json()
    assert verdict["passed"] is True and verdict["actual"] == 2


# ---------------------------------------------------------------------------- key and origin


def test_write_routes_need_the_key_and_refuse_cross_origin_pages(server, admin):
    with connect(server.ws + "/ws/errors", open_timeout=WAIT) as client:
        [listed] = connections_of(admin, "errors", 1)
        path = f"/websocket/connections/{listed['id']}/send"
        with server.admin_client() as anonymous:
            for route in (path, "/websocket/broadcast"):
                assert anonymous.post(route, json={"data": "x"}).status_code == 401
            assert anonymous.get("/websocket/connections").status_code == 401
            assert anonymous.delete(f"/websocket/connections/{listed['id']}").status_code == 401
        page = admin.post(path, content=b'{"data": "from a page"}',
                          headers={"Origin": "https://evil.example",
                                   "Content-Type": "text/plain"})
        assert page.status_code == 403 and page.json()["error"] == "cors_forbidden"
        local = admin.post(path, json={"data": "from the dashboard"},
                           headers={"Origin": "http://localhost:5173"})
        assert local.status_code == 200
        assert client.recv(timeout=WAIT) == "from the dashboard"  # not "from a page"


# ---------------------------------------------------------------------------- CLI


def cli(server, *args: str):
    return run_mockd(["websocket", *args, "--admin-url", server.admin,
                      "--api-key", server.key], server.directory, timeout=60)


def test_cli_add_creates_a_mock_a_client_talks_to(server, admin):
    done = cli(server, "add", "--path", "/ws/from-cli", "--id", "from-cli", "--name", "CLI",
               "--match", "exact:ping=pong", "--match", r"regex:^a\=(\d+)$=got {{message}}",
               "--default", "what is {{message}}?", "--subprotocol", "v1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Created websocket mock from-cli at /ws/from-cli"
    assert admin.get("/mocks/from-cli").json()["name"] == "CLI"
    with connect(server.ws + "/ws/from-cli", open_timeout=WAIT, subprotocols=["v1"]) as client:
        assert client.subprotocol == "v1"
        for sent, expected in (("ping", "pong"), ("a=12", "got a=12"),
                               ("hello", "what is hello?")):
            client.send(sent)
            assert client.recv(timeout=WAIT) == expected
    as_json = cli(server, "add", "--path", "/ws/echo-cli", "--echo", "--json")
    assert as_json.returncode == 0, as_json.stderr
    created = json.loads(as_json.stdout)
    assert created["type"] == "websocket" and created["id"]
    assert created["websocket"]["path"] == "/ws/echo-cli"
    assert created["websocket"]["echoMode"] is True
    with connect(server.ws + "/ws/echo-cli", open_timeout=WAIT) as client:
        client.send("round trip")
        assert client.recv(timeout=WAIT) == "round trip"


def test_cli_add_refuses_bad_options_with_exit_2(server):
    for args, option in ((["--path", "/ws/x", "--match", "ping=pong"], "--match"),
                         (["--path", "/ws/x", "--match", "regex:(=x"], "--match"),
                         (["--path", "ws/x"], "--path")):
        done = cli(server, "add", *args)
        assert done.returncode == 2
        assert done.stderr.strip().startswith(f"Error: {option}: ")
    taken = cli(server, "add", "--path", "/ws/dup", "--id", "push")
    assert taken.returncode == 1 and taken.stderr.startswith("Error: ")


def test_cli_lists_sends_broadcasts_and_closes(server, admin, tmp_path):
    with connect(server.ws + "/ws/clipush", open_timeout=WAIT) as client:
        [listed] = connections_of(admin, "clipush", 1)
        connection_id = listed["id"]
        table = cli(server, "connections", "--mock", "clipush")
        assert table.returncode == 0, table.stderr
        assert table.stdout.splitlines()[0].split() == ["ID", "MOCK", "PATH", "CLIENT", "AGE",
                                                        "RECEIVED", "SENT"]
        assert connection_id in table.stdout and "/ws/clipush" in table.stdout
        as_json = json.loads(cli(server, "connections", "--json").stdout)
        assert connection_id in [c["id"] for c in as_json["connections"]]

        sent = cli(server, "send", connection_id, "hello from the CLI")
        assert sent.returncode == 0, sent.stderr
        assert sent.stdout.strip() == f"Sent text message to {connection_id}"
        assert client.recv(timeout=WAIT) == "hello from the CLI"
        binary = cli(server, "send", connection_id, base64.b64encode(b"\x01\x02").decode(),
                     "--binary", "--json")
        assert json.loads(binary.stdout)["type"] == "binary"
        assert client.recv(timeout=WAIT) == b"\x01\x02"
        blob = tmp_path / "blob.bin"
        blob.write_bytes(b"\xff\x00")
        assert cli(server, "send", connection_id, "--file", str(blob)).returncode == 0
        assert client.recv(timeout=WAIT) == b"\xff\x00"

        broadcast = cli(server, "broadcast", "to all of clipush", "--mock", "clipush")
        assert broadcast.stdout.strip() == "Broadcast text message to 1 connection"
        assert client.recv(timeout=WAIT) == "to all of clipush"

        bad = cli(server, "send", connection_id, "!!", "--binary")
        assert bad.returncode == 2 and bad.stderr.startswith("Error: DATA: ")
        gone = cli(server, "send", "ws_nope", "x")
        assert gone.returncode == 1
        assert gone.stderr.strip() == "Error: Connection not found (HTTP 404)"

        closed = cli(server, "close", connection_id)
        assert closed.stdout.strip() == f"Closed connection {connection_id}"
        assert closed_with(client) == (1000, "closed by admin")
    # Wait for the close through the admin API, then read the CLI's empty listing once.
    connections_of(admin, "clipush", 0)
    empty = cli(server, "connections", "--mock", "clipush")
    assert empty.returncode == 0 and empty.stdout.strip() == "No open WebSocket connections"


# ---------------------------------------------------------------------------- engine port


def test_engine_control_port_mirrors_the_websocket_routes(tmp_path):
    port = free_port()
    config = make_config(ws_mock("mirror", "/ws/mirror", echoMode=True))
    with start_engine(tmp_path, config, extra_args=["--engine-port", str(port),
                                                    "--engine-token", "test-token"]) as engine:
        control = httpx.Client(base_url=f"http://127.0.0.1:{port}", trust_env=False,
                               timeout=10, headers={"X-Engine-Token": "test-token",
                                                    "Content-Type": "application/json"})
        url = engine.base.replace("http://", "ws://") + "/ws/mirror"
        with control, connect(url, open_timeout=WAIT) as client:
            [listed] = connections_of(control, "mirror", 1)
            assert control.get("/websocket/connections").json()["count"] == 1
            assert control.get(f"/websocket/connections/{listed['id']}").json()["mockId"] == \
                "mirror"
            sent = control.post(f"/websocket/connections/{listed['id']}/send",
                                json={"type": "text", "data": "via the engine port"})
            assert sent.json()["message"] == "Message sent"
            assert client.recv(timeout=WAIT) == "via the engine port"
            assert control.post("/websocket/broadcast", json={"data": "b"}).json()["sent"] == 1
            assert client.recv(timeout=WAIT) == "b"
            bad = control.post("/websocket/broadcast", json={"type": "binary", "data": "%"})
            assert bad.status_code == 400 and bad.json()["message"].startswith("data:")
            assert control.get("/websocket/endpoints").json()["endpoints"][0]["path"] == \
                "/ws/mirror"
            assert control.get("/websocket/stats").json()["activeConnections"] == 1
            refused = control.post("/websocket/broadcast", json={"data": "x"},
                                   headers={"Origin": "http://localhost"})
            assert refused.status_code == 403
            closed = control.delete("/mocks/mirror/websocket/connections").json()
            assert closed == {"message": "Connections closed", "closed": 1, "mockId": "mirror"}
            assert closed_with(client) == (1000, "closed by admin")
            assert control.get("/mocks/nope/websocket/connections").status_code == 404
