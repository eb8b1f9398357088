"""Limits crossed against one ``mockd start``, each seen as a client sees it (the ones not
tested elsewhere; docs/limits.md lists every limit and its test): the request log keeps the
newest 1000 entries, ``delayMs`` over 30000 and a static SSE event over 1 MiB are refused
naming the key, a templated SSE event over 1 MiB is skipped, a gRPC message over 4 MiB gets
``RESOURCE_EXHAUSTED``, a SOAP envelope over 2 MiB or nested past 256 levels gets a Client
fault, and GraphQL depth, query length and batch size are refused.

Source: behavior notes §9 (SSE), §10 (protocol mocks), §18 (limits); issue 33 item 4.
"""
from __future__ import annotations

import shutil
import socket
import time
from pathlib import Path

import grpc
import httpx
import pytest

from mocks.protocols.mqtt.wire import encode_length
from tests.helpers import free_port, start_server


pytestmark = pytest.mark.integration

MIB = 1024 * 1024
TIMEOUT = 10
WSDL = Path(__file__).resolve().parents[1] / "fixtures" / "soap" / "users.wsdl"
NS = "urn:example:users"
SOAP11 = "http://schemas.xmlsoap.org/soap/envelope/"
GREETER = """syntax = "proto3";
package helloworld;
service Greeter { rpc SayHello (HelloRequest) returns (HelloReply); }
message HelloRequest { string name = 1; }
message HelloReply { string message = 1; }
"""
SDL = "type User { id: ID! best: User } type Query { me: User! hello: String }"


def hello_request(name: str) -> bytes:
    """A serialized ``helloworld.HelloRequest`` (a protobuf varint is MQTT's length form)."""
    data = name.encode()
    return (b"\x0a" + encode_length(len(data)) + data) if data else b""


#: serverConfig.maxConnections of the module's server.
MAX_CONNECTIONS = 40


def limits_config(grpc_port: int) -> dict:
    return {"version": "1.0", "serverConfig": {"maxConnections": MAX_CONNECTIONS}, "mocks": [
        {"id": "numbered", "type": "http", "http": {
            "matcher": {"method": "GET", "path": "/n/{n}"},
            "response": {"statusCode": 200, "body": "ok"}}},
        {"id": "big-event", "type": "http", "http": {
            "matcher": {"method": "POST", "path": "/sse/echo"},
            "sse": {"events": [{"type": "echo", "data": "{{request.rawBody}}"},
                               {"type": "after", "data": "next"}]}}},
        {"id": "gql", "type": "graphql", "graphql": {"path": "/graphql", "schema": SDL}},
        {"id": "soap", "type": "soap", "soap": {
            "path": "/soap", "wsdlFile": "users.wsdl", "operations": {"Echo": {
                "response": f"<EchoResponse xmlns='{NS}'><text>ok</text></EchoResponse>"}}}},
        {"id": "greeter", "type": "grpc", "grpc": {
            "port": grpc_port, "protoContent": GREETER,
            "services": {"helloworld.Greeter": {"methods": {
                "SayHello": {"response": {"message": "hi"}}}}}}},
    ]}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("limits")
    shutil.copy(WSDL, folder / "users.wsdl")
    grpc_port = free_port()
    with start_server(folder, limits_config(grpc_port)) as process:
        process.grpc_port = grpc_port
        yield process


def test_request_log_keeps_the_newest_1000_entries(server, admin):
    admin.delete("/requests")
    # 1003 requests pipelined on one connection (a loop of round trips costs seconds)
    port = int(server.base.rsplit(":", 1)[1])
    requests = b"".join(f"GET /n/{number} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
                        for number in range(1003))
    answers = b""
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as sock:
        sock.sendall(requests)
        deadline = time.monotonic() + 30
        while answers.count(b"HTTP/1.1 200") < 1003 and time.monotonic() < deadline:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answers += chunk
    assert answers.count(b"HTTP/1.1 200") == 1003
    log = admin.get("/requests", params={"limit": 2, "offset": 998}).json()
    assert log["total"] == 1000
    # newest first: the 1000th entry is request number 3; 0, 1 and 2 were dropped
    assert [entry["path"] for entry in log["requests"]] == ["/n/4", "/n/3"]


@pytest.mark.parametrize(("delay", "status"), [(30000, 201), (30001, 400)])
def test_delay_up_to_30000_ms(admin, delay, status):
    mock = {"id": f"slow-{delay}", "type": "http", "http": {
        "matcher": {"method": "GET", "path": f"/slow/{delay}"},
        "response": {"statusCode": 200, "delayMs": delay}}}
    answer = admin.post("/mocks", json=mock)
    assert answer.status_code == status, answer.text
    if status == 400:
        assert answer.json()["error"] == "validation_error"
        assert "delayMs" in answer.text
    else:
        admin.delete(f"/mocks/{mock['id']}")


def test_static_sse_event_over_1_mib_is_refused_naming_the_key(admin):
    mock = {"id": "huge-event", "http": {"matcher": {"method": "GET", "path": "/sse/huge"},
                                         "sse": {"events": [{"data": "x" * (MIB + 1)}]}}}
    answer = admin.post("/mocks", json=mock)
    assert answer.status_code == 400, answer.text[:300]
    assert "events[0].data" in answer.text and "1 MiB" in answer.text


def test_templated_sse_event_over_1_mib_is_skipped_and_the_stream_goes_on(data):
    def events(body: bytes) -> list[tuple[str, int]]:
        seen, kind = [], ""
        with data.stream("POST", "/sse/echo", content=body) as response:
            for line in response.iter_lines():
                if line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: "):
                    seen.append((kind, len(line) - 6))
                    if kind == "after":
                        break
        return seen

    assert events(b"x" * MIB) == [("echo", MIB), ("after", 4)]
    assert events(b"x" * (MIB + 1)) == [("after", 4)]


def _say_hello(server, name_size: int) -> grpc.RpcError | bytes:
    """The reply to a ``SayHello`` whose name has ``name_size`` bytes, or the error."""
    with grpc.insecure_channel(f"127.0.0.1:{server.grpc_port}") as channel:
        call = channel.unary_unary("/helloworld.Greeter/SayHello")
        try:
            return call(hello_request("n" * name_size), timeout=TIMEOUT)
        except grpc.RpcError as error:
            return error


def test_grpc_message_over_4_mib_gets_resource_exhausted(server):
    assert _say_hello(server, 4 * MIB - 16) == b"\x0a\x02hi"
    refused = _say_hello(server, 4 * MIB)
    assert isinstance(refused, grpc.RpcError)
    assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, refused


def _soap(data, body: bytes) -> httpx.Response:
    return data.post("/soap", content=body, headers={"Content-Type": "text/xml",
                                                      "SOAPAction": f'"{NS}/Echo"'})


def _envelope(inner: str) -> bytes:
    return (f"<soap:Envelope xmlns:soap='{SOAP11}'><soap:Body><Echo xmlns='{NS}'>{inner}"
            "</Echo></soap:Body></soap:Envelope>").encode()


def test_soap_envelope_over_2_mib_gets_a_client_fault(data):
    frame = len(_envelope("<text></text>"))
    assert _soap(data, _envelope("<text>" + "x" * (2 * MIB - frame) + "</text>")) \
        .status_code == 200
    refused = _soap(data, _envelope("<text>" + "x" * (2 * MIB - frame + 1) + "</text>"))
    assert refused.status_code == 500
    assert "soap:Client" in refused.text and "over the limit of 2097152 bytes" in refused.text, \
        refused.text[:500]


def test_soap_envelope_nested_past_256_levels_gets_a_client_fault(data):
    assert _soap(data, _envelope("<a>" * 200 + "</a>" * 200)).status_code == 200
    refused = _soap(data, _envelope("<a>" * 300 + "</a>" * 300))
    assert refused.status_code == 500
    assert "Client" in refused.text and "not well-formed" in refused.text, refused.text[:500]


def _graphql(data, payload) -> tuple[int, dict | list]:
    answer = data.post("/graphql", json=payload)
    return answer.status_code, answer.json()


def test_graphql_depth_over_32_is_refused_with_query_too_complex(data):
    def nested(depth: int) -> str:  # `me` is level 1, each `best` one more, `id` the last
        return "{ me { " + "best { " * (depth - 2) + "id" + " }" * (depth - 1) + " }"

    status, answer = _graphql(data, {"query": nested(32)})
    assert status == 200 and "errors" not in answer, answer
    status, answer = _graphql(data, {"query": nested(33)})
    assert status == 400, answer
    error = answer["errors"][0]
    assert error["extensions"]["code"] == "QUERY_TOO_COMPLEX", answer
    assert error["extensions"]["limit"] == "maxDepth"


def test_graphql_query_text_over_256_kib_is_refused(data):
    padding = " " * (256 * 1024)
    status, answer = _graphql(data, {"query": "{ hello }" + padding[:256 * 1024 - 9]})
    assert status == 200 and "errors" not in answer, answer
    status, answer = _graphql(data, {"query": "{ hello }" + padding[:256 * 1024 - 8]})
    assert status == 400, answer
    assert "longer than 262144 characters" in answer["errors"][0]["message"], answer


def test_graphql_batch_over_32_operations_gets_400(data):
    status, answer = _graphql(data, [{"query": "{ hello }"}] * 32)
    assert status == 200 and len(answer) == 32
    status, answer = _graphql(data, [{"query": "{ hello }"}] * 33)
    assert status == 400 and "1 to 32 operations" in str(answer), answer


def _raw_answer(port: int, request: bytes) -> bytes:
    answer = b""
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as sock:
        sock.sendall(request)
        deadline = time.monotonic() + TIMEOUT
        while b"\r\n\r\n" not in answer and time.monotonic() < deadline:
            chunk = sock.recv(65536)
            if not chunk:
                break
            answer += chunk
    return answer


@pytest.mark.parametrize("port_of", ["data", "admin"])
def test_request_head_over_64_kib_gets_431_and_never_reaches_the_log(server, admin, port_of):
    port = int((server.base if port_of == "data" else str(admin.base_url)).rstrip("/")
               .rsplit(":", 1)[1])
    head = "GET /head-limit/{} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: {}\r\n\r\n"
    refused = _raw_answer(port, head.format("big", "a" * 70_000).encode())
    assert refused.startswith(b"HTTP/1.1 431 "), refused[:200]
    assert b'"error":"header_too_large"' in refused
    served = _raw_answer(port, head.format("fits", "a" * 60_000).encode())
    assert not served.startswith(b"HTTP/1.1 431 ") and served.startswith(b"HTTP/1.1 "), served[:200]
    if port_of == "data":
        paths = [entry["path"] for entry in admin.get("/requests", params={"limit": 50}).json()["requests"]]
        assert "/head-limit/fits" in paths and "/head-limit/big" not in paths


def test_mock_port_connections_past_max_connections_get_503(server):
    port = int(server.base.rsplit(":", 1)[1])
    request = b"GET /n/1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    idle = [socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
            for _ in range(MAX_CONNECTIONS)]
    try:
        deadline = time.monotonic() + TIMEOUT  # the server counts them as they are accepted
        while (refused := _raw_answer(port, request)).startswith(b"HTTP/1.1 200") \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        assert refused.startswith(b"HTTP/1.1 503 "), refused[:200]
    finally:
        for sock in idle:
            sock.close()
    deadline = time.monotonic() + TIMEOUT
    while not (served := _raw_answer(port, request)).startswith(b"HTTP/1.1 200") \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    assert served.startswith(b"HTTP/1.1 200 "), served[:200]

