"""Every listener of one ``mockd engine`` fuzzed with hypothesis: random bytes and random
well-formed messages on the HTTP port (raw TCP: request lines, headers, chunked bodies,
truncated requests), WebSocket frames after a valid upgrade, GraphQL queries built from the
schema (``hypothesis-graphql``), SOAP envelopes (random XML, entity expansion, deep nesting),
the gRPC port (random bytes; HTTP/2 with length-prefixed messages to real methods) and the
MQTT port (random bytes; CONNECTs of 3.1, 3.1.1 and 5 and packets with absurd lengths).

After every example every listener still answers what a real client sends: ``GET /health``,
a WebSocket echo, a GraphQL query, a SOAP call, a gRPC health check and an MQTT
CONNECT/PINGREQ; a well-formed HTTP request never gets a 5xx, a WebSocket is never closed
with 1011, a well-formed gRPC call gets ``OK``; the server log holds no traceback.

Derandomized (runs repeat), few examples each, every socket read bounded in time.

Source: issue 33 item 3; behavior notes §4 (data plane), §10 (protocol mocks); RFC 6455 §5
(frames), RFC 9113 and the gRPC HTTP/2 protocol (length-prefixed messages), MQTT 3.1.1 §2
(fixed header, remaining length).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
import struct
import time
from urllib.parse import quote

import grpc
import hypothesis_graphql
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from mocks.protocols.mqtt.wire import encode_length
from tests.helpers import free_port, start_engine
from tests.integration.test_limits import GREETER, NS, SOAP11, WSDL, hello_request


pytestmark = pytest.mark.integration

#: Longest wait for one answer, in seconds (a loaded 2-core machine).
READ_TIMEOUT = 5.0
#: Most bytes read back from one fuzzed connection.
READ_LIMIT = 256 * 1024
SDL = """
type User { id: ID! name: String! age: Int friends(first: Int): [User!]! }
type Query { hello: String user(id: ID!): User users(first: Int, name: String): [User!]! }
type Mutation { rename(id: ID!, name: String!): User }
"""
SAY_HELLO = "/helloworld.Greeter/SayHello"
HEALTH_CHECK = "/grpc.health.v1.Health/Check"
REFLECTION = ("/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
              "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo")
H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
WS_HANDSHAKE = (b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                b"Sec-WebSocket-Version: 13\r\n\r\n")

#: Examples per test; ``MOCKD_FUZZ_EXAMPLES`` raises it for a longer hunt by hand.
EXAMPLES = int(os.environ.get("MOCKD_FUZZ_EXAMPLES") or 12)
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))


def fuzz_config(grpc_port: int, mqtt_port: int) -> dict:
    """One mock of each protocol on one server."""
    echo = (f"<EchoResponse xmlns='{NS}'><text>{{{{xpath '/Envelope/Body/Echo/text'}}}}"
            "</text></EchoResponse>")
    return {"version": "1.0", "mocks": [
        {"id": "hello", "type": "http", "http": {
            "matcher": {"method": "GET", "path": "/hello"},
            "response": {"statusCode": 200, "body": {"message": "hello"}}}},
        {"id": "echo", "type": "http", "http": {
            "matcher": {"path": "/f/{name}"},
            "response": {"statusCode": 200, "body": {
                "method": "{{request.method}}", "name": "{{request.pathParam.name}}",
                "q": "{{request.query.q}}", "h": "{{request.header.X-Fuzz}}",
                "b": "{{request.body.a}}"}}}},
        {"id": "ws", "type": "websocket", "websocket": {
            "path": "/ws", "echoMode": True, "maxMessageSize": 65536}},
        {"id": "gql", "type": "graphql", "graphql": {"path": "/graphql", "schema": SDL}},
        {"id": "soap", "type": "soap", "soap": {
            "path": "/soap", "wsdlFile": "users.wsdl",
            "operations": {"Echo": {"response": echo}}}},
        {"id": "greeter", "type": "grpc", "grpc": {
            "port": grpc_port, "protoContent": GREETER, "reflection": True,
            "services": {"helloworld.Greeter": {"methods": {
                "SayHello": {"response": {"message": "Hello {{request.name}}"}}}}}}},
        {"id": "broker", "type": "mqtt", "mqtt": {"port": mqtt_port, "topics": [
            {"topic": "ping", "onPublish": {"response": {"topic": "pong",
                                                         "payload": "pong"}}}]}},
    ]}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("listener-fuzz")
    shutil.copy(WSDL, folder / "users.wsdl")
    grpc_port, mqtt_port = free_port(), free_port()
    # `mockd engine`: the listeners of `mockd start` without its admin plane (fuzzed on its
    # own by test_admin_fuzz), half the start-up time.
    with start_engine(folder, fuzz_config(grpc_port, mqtt_port)) as process:
        process.port = int(process.base.rsplit(":", 1)[1])
        process.grpc_port, process.mqtt_port = grpc_port, mqtt_port
        process.channel = grpc.insecure_channel(f"127.0.0.1:{grpc_port}")
        assert_listeners_answer(process)
        yield process
        process.channel.close()
        log = process.log()
    at = log.find("Traceback")
    assert at < 0, log[max(0, at - 1500):at + 3000]


# --- sockets --------------------------------------------------------------------------------

def exchange(port: int, data: bytes, *, half_close: bool = True,
             timeout: float = READ_TIMEOUT) -> bytes:
    """Send ``data`` on a new loopback connection (then end the sending side when
    ``half_close``) and read until the server closes, :data:`READ_LIMIT` bytes or
    ``timeout`` seconds; what came back."""
    received = bytearray()
    deadline = time.monotonic() + timeout
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        try:
            sock.sendall(data)
            if half_close:
                sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # the server closed first (a refused packet): read what it said
        for chunk in chunks(sock, deadline):
            received += chunk
            if len(received) >= READ_LIMIT:
                break
    return bytes(received)


def chunks(sock: socket.socket, deadline: float):
    """What ``sock`` receives until it is closed or reset, or ``deadline`` passes."""
    while (left := deadline - time.monotonic()) > 0:
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except (TimeoutError, OSError):
            return
        if not chunk:
            return
        yield chunk


def http_status(answer: bytes) -> int | None:
    """The status of the first HTTP/1.x response in ``answer``; None when there is none."""
    found = re.match(rb"HTTP/1\.[01] (\d{3})", answer)
    return int(found.group(1)) if found else None


def http_post(port: int, path: str, body: bytes, content_type: str,
              extra: str = "") -> tuple[int | None, bytes]:
    """A one-request ``POST`` on its own connection: ``(status, body)``."""
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n{extra}\r\n").encode()
    answer = exchange(port, head + body, half_close=False)
    return http_status(answer), answer.partition(b"\r\n\r\n")[2]


# --- what a real client does after every example --------------------------------------------

def soap_echo(text: str) -> bytes:
    return (f"<soap:Envelope xmlns:soap='{SOAP11}'><soap:Body><Echo xmlns='{NS}'>"
            f"<text>{xml_escape(text)}</text></Echo></soap:Body></soap:Envelope>").encode()


def xml_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def mqtt_connect(client_id: bytes, level: int = 4, name: bytes = b"MQTT",
                 properties: bytes | None = None, flags: int = 0x02,
                 keepalive: int = 30, tail: bytes = b"") -> bytes:
    """A CONNECT packet (``properties``: MQTT 5's, length included)."""
    body = (struct.pack(">H", len(name)) + name + bytes([level, flags])
            + struct.pack(">H", keepalive) + (properties or b"")
            + struct.pack(">H", len(client_id)) + client_id + tail)
    return b"\x10" + encode_length(len(body)) + body


def assert_listeners_answer(server) -> None:
    """Every listener answers a real client's first exchange (the health checks)."""
    from grpc_health.v1 import health_pb2, health_pb2_grpc
    from websockets.sync.client import connect

    status, body = http_post(server.port, "/graphql", b'{"query": "{ hello }"}',
                             "application/json")
    assert status == 200 and b'"hello"' in body, (status, body[:300])
    status, body = http_post(server.port, "/soap", soap_echo("probe"), "text/xml",
                             f"SOAPAction: \"{NS}/Echo\"\r\n")
    assert status == 200 and b"<text>probe</text>" in body, (status, body[:300])
    health = exchange(server.port, b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                      half_close=False)
    assert http_status(health) == 200, health[:300]
    with connect(f"ws://127.0.0.1:{server.port}/ws", open_timeout=READ_TIMEOUT,
                 close_timeout=1) as ws:
        ws.send("probe")
        assert ws.recv(timeout=READ_TIMEOUT) == "probe"
    stub = health_pb2_grpc.HealthStub(server.channel)
    assert stub.Check(health_pb2.HealthCheckRequest(), timeout=READ_TIMEOUT).status == \
        health_pb2.HealthCheckResponse.SERVING
    with socket.create_connection(("127.0.0.1", server.mqtt_port), timeout=READ_TIMEOUT) as mq:
        mq.sendall(mqtt_connect(b"probe"))
        assert read_exactly(mq, 4) == b"\x20\x02\x00\x00"
        mq.sendall(b"\xc0\x00")  # PINGREQ
        assert read_exactly(mq, 2) == b"\xd0\x00"
        mq.sendall(b"\xe0\x00")  # DISCONNECT


def read_exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            break
        data += chunk
    return data


# --- HTTP -----------------------------------------------------------------------------------

TOKEN = st.text("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", min_size=1,
                max_size=20)
#: Header names the request framing owns (set by :func:`http_request` itself).
FRAMING = {"host", "content-length", "transfer-encoding", "connection", "upgrade", "expect",
           "te", "trailer"}
HEADER_VALUE = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7e), max_size=60) \
    .map(str.strip)
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                    | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=12)


@st.composite
def http_request(draw) -> bytes:
    """A well-formed HTTP/1.1 request: any method, path, query and headers; a body framed by
    Content-Length or by chunks (with extensions and trailers)."""
    method = draw(st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD",
                                   "PROPFIND"]))
    segment = st.text(st.characters(blacklist_categories=("Cs",)), max_size=15) \
        .map(lambda text: quote(text, safe=""))
    path = draw(st.sampled_from(["/hello", "/health", "/f/", "/", "/__mockd/health", "/x/"]))
    if path.endswith("/") and path != "/":
        path += draw(segment)
    query = draw(st.lists(st.tuples(st.sampled_from(["q", "limit", "a[b]", "x"]) | TOKEN,
                                    segment), max_size=4))
    if query:
        path += "?" + "&".join(f"{name}={value}" for name, value in query)
    headers = [(name, value) for name, value in draw(st.lists(
        st.tuples(st.sampled_from(["X-Fuzz", "Accept", "Origin", "Cookie", "Authorization",
                                   "If-None-Match", "Range"]) | TOKEN, HEADER_VALUE),
        max_size=6)) if name.lower() not in FRAMING]
    kind, body = draw(st.one_of(
        st.tuples(st.just("application/json"), JSON.map(lambda v: json.dumps(v).encode())),
        st.tuples(st.sampled_from(["application/x-www-form-urlencoded", "text/plain",
                                   "multipart/form-data; boundary=b", "application/xml",
                                   "application/json"]), st.binary(max_size=400))))
    if method in ("GET", "HEAD", "OPTIONS", "DELETE") and draw(st.booleans()):
        body = b""
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in headers]
    if body:
        lines.append(f"Content-Type: {kind}")
    if body and draw(st.booleans()):
        lines.append("Transfer-Encoding: chunked")
        cuts = sorted(draw(st.lists(st.integers(0, len(body)), max_size=4)))
        pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)]) if b > a]
        extension = draw(st.sampled_from(["", ";a=b", ";ext"]))
        framed = b"".join(f"{len(p):x}{extension}\r\n".encode() + p + b"\r\n" for p in pieces)
        trailer = draw(st.sampled_from([b"", b"X-Trailer: 1\r\n"]))
        return ("\r\n".join(lines) + "\r\n\r\n").encode() + framed + b"0\r\n" + trailer + b"\r\n"
    lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


@FUZZ
@given(request=http_request())
def test_well_formed_http_requests_never_get_a_5xx(server, request):
    answer = exchange(server.port, request, half_close=False)
    status = http_status(answer)
    assert status is not None and status < 500, (request[:500], answer[:500])
    assert_listeners_answer(server)


@FUZZ
@given(request=http_request(), data=st.data())
def test_truncated_http_requests_get_nothing_or_a_4xx(server, request, data):
    cut = data.draw(st.integers(1, len(request) - 1))
    status = http_status(exchange(server.port, request[:cut]))
    assert status is None or 400 <= status < 500, (request[:cut][:500], status)
    assert_listeners_answer(server)


@FUZZ
@given(noise=st.one_of(
    st.binary(min_size=1, max_size=600),
    st.builds(lambda line, rest: line + rest, st.sampled_from(
        [b"GET / HTTP/1.1\r\n", b"POST /f/a HTTP/1.1\r\nContent-Length: 5\r\n",
         b"GET /f/a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
         b"GET /ws HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"]),
        st.binary(max_size=300))))
def test_random_bytes_on_the_http_port(server, noise):
    status = http_status(exchange(server.port, noise))
    assert status is None or status < 500, (noise[:300], status)
    assert_listeners_answer(server)


# --- WebSocket ------------------------------------------------------------------------------

@st.composite
def ws_frame(draw) -> bytes:
    """One client frame: any FIN/RSV bits and opcode (valid ones more often), masked or not,
    its length told exactly, in a longer form, absurdly (2^40 or 2^63-1) or too short."""
    fin = draw(st.booleans())
    rsv = draw(st.sampled_from([0, 0, 0, 1, 4, 7]))
    opcode = draw(st.sampled_from([0, 1, 1, 2, 8, 9, 10]) | st.integers(0, 15))
    payload = draw(st.binary(max_size=200) | st.text(max_size=60).map(str.encode))
    if opcode == 8 and draw(st.booleans()):
        payload = struct.pack(">H", draw(st.sampled_from([1000, 1001, 999, 1005, 4000, 65535])))\
            + payload[:100]
    masked = draw(st.sampled_from([True, True, True, False]))
    mode = draw(st.sampled_from(["exact", "exact", "16", "64", "absurd", "short"]))
    size = len(payload)
    if mode == "exact":
        length = bytes([size]) if size < 126 else b"\x7e" + struct.pack(">H", size)
        told = length
    elif mode == "16":
        told = b"\x7e" + struct.pack(">H", size)
    elif mode == "64":
        told = b"\x7f" + struct.pack(">Q", size)
    elif mode == "absurd":
        told = b"\x7f" + struct.pack(">Q", draw(st.sampled_from([2**40, 2**63 - 1, 2**64 - 1])))
    else:
        told = bytes([max(0, min(size, 125) - 3)])
    key = draw(st.binary(min_size=4, max_size=4))
    if masked:
        payload = bytes(byte ^ key[index % 4] for index, byte in enumerate(payload))
    first = (0x80 if fin else 0) | (rsv << 4) | opcode
    return bytes([first, told[0] | (0x80 if masked else 0)]) + told[1:] \
        + (key if masked else b"") + payload


def close_codes(data: bytes) -> list[int]:
    """The codes of the close frames among the server's (unmasked) frames in ``data``."""
    codes, at = [], 0
    while at + 2 <= len(data):
        opcode, size, at = data[at] & 0x0F, data[at + 1] & 0x7F, at + 2
        if size == 126:
            size, at = struct.unpack(">H", data[at:at + 2])[0], at + 2
        elif size == 127:
            size, at = struct.unpack(">Q", data[at:at + 8])[0], at + 8
        if opcode == 8 and size >= 2:
            codes.append(struct.unpack(">H", data[at:at + 2])[0])
        at += size
    return codes


@FUZZ
@given(frames=st.lists(ws_frame(), min_size=1, max_size=5))
def test_random_websocket_frames_after_a_valid_upgrade(server, frames):
    answer = exchange(server.port, WS_HANDSHAKE + b"".join(frames))
    head, _, rest = answer.partition(b"\r\n\r\n")
    assert http_status(head) == 101, answer[:300]
    assert 1011 not in close_codes(rest), (frames, rest[:300])
    assert_listeners_answer(server)


# --- GraphQL --------------------------------------------------------------------------------

@FUZZ
@given(query=hypothesis_graphql.from_schema(SDL))
def test_generated_graphql_queries_are_answered(server, query):
    status, body = http_post(server.port, "/graphql", json.dumps({"query": query}).encode(),
                             "application/json")
    answer = json.loads(body)
    assert status == 200 and "data" in answer and not answer.get("errors"), (query, body[:500])
    assert_listeners_answer(server)


@FUZZ
@given(request=st.one_of(
    hypothesis_graphql.from_schema(SDL, mode=hypothesis_graphql.Mode.NEGATIVE).map(
        lambda query: json.dumps({"query": query}).encode()),
    st.builds(lambda query, variables, name: json.dumps(
        {"query": query, "variables": variables, "operationName": name}).encode(),
        st.text(max_size=80) | st.sampled_from(["{ user(id: $id) { id } }",
                                                "query Q($id: ID!) { user(id: $id) { name } }",
                                                "{ users(first: -1) { friends { id } } }"]),
        JSON, st.none() | st.text(max_size=5)),
    JSON.map(lambda value: json.dumps(value).encode()),
    st.binary(max_size=300)))
def test_invalid_graphql_requests_get_graphql_errors(server, request):
    status, body = http_post(server.port, "/graphql", request, "application/json")
    assert status is not None and status < 500, (request[:300], status, body[:300])
    assert_listeners_answer(server)


# --- SOAP -----------------------------------------------------------------------------------

XML_NAME = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,8}", fullmatch=True)
XML_TEXT = st.text(st.characters(min_codepoint=0x20, max_codepoint=0xD7FF), max_size=30)
XML_TREE = st.recursive(
    XML_TEXT.map(xml_escape),
    lambda inner: st.builds(lambda name, children: f"<{name}>{''.join(children)}</{name}>",
                            XML_NAME, st.lists(inner, max_size=3)), max_leaves=15)
BOMB = ("<?xml version='1.0'?><!DOCTYPE lolz [<!ENTITY lol 'lol'>"
        + "".join(f"<!ENTITY lol{n} '{('&lol' + str(n - 1) + ';') * 10}'>".replace("&lol0;",
                                                                                      "&lol;")
                  for n in range(1, 10))
        + "]><soap:Envelope xmlns:soap='" + SOAP11 + "'><soap:Body><Echo xmlns='" + NS
        + "'><text>&lol9;</text></Echo></soap:Body></soap:Envelope>")
XXE = ("<?xml version='1.0'?><!DOCTYPE t [<!ENTITY x SYSTEM 'file:///etc/passwd'>]>"
       f"<soap:Envelope xmlns:soap='{SOAP11}'><soap:Body><Echo xmlns='{NS}'><text>&x;</text>"
       "</Echo></soap:Body></soap:Envelope>")
REMOTE_DTD = ("<?xml version='1.0'?><!DOCTYPE t SYSTEM 'http://127.0.0.1:1/evil.dtd'>"
              f"<soap:Envelope xmlns:soap='{SOAP11}'><soap:Body/></soap:Envelope>")


def deep(depth: int) -> str:
    return (f"<soap:Envelope xmlns:soap='{SOAP11}'><soap:Body><Echo xmlns='{NS}'>"
            + "<a>" * depth + "</a>" * depth + "</Echo></soap:Body></soap:Envelope>")


@FUZZ
@given(document=st.one_of(
    XML_TREE,
    XML_TREE.map(lambda tree: f"<soap:Envelope xmlns:soap='{SOAP11}'><soap:Body>{tree}"
                              "</soap:Body></soap:Envelope>"),
    st.sampled_from([BOMB, XXE, REMOTE_DTD]),
    st.sampled_from([50, 1_000, 100_000]).map(deep),
    st.text(max_size=200)), action=st.sampled_from(["", f"{NS}/Echo", "nothing"]))
def test_random_xml_gets_a_soap_fault_or_an_answer(server, document, action):
    status, body = http_post(server.port, "/soap", document.encode(), "text/xml",
                             f"SOAPAction: \"{action}\"\r\n")
    assert status is not None, document[:300]
    assert status < 500 or b"Fault" in body, (document[:300], status, body[:300])
    assert b"root:" not in body  # no external entity is ever read
    assert_listeners_answer(server)


@FUZZ
@given(text=XML_TEXT)
def test_well_formed_soap_calls_are_answered(server, text):
    status, body = http_post(server.port, "/soap", soap_echo(text), "text/xml",
                             f"SOAPAction: \"{NS}/Echo\"\r\n")
    assert status == 200 and b"Fault" not in body, (text, body[:300])
    assert_listeners_answer(server)


# --- gRPC -----------------------------------------------------------------------------------

def grpc_call(port: int, path: str, body: bytes) -> dict:
    """One HTTP/2 stream of ``body`` to ``path`` with h2 on a new connection: ``{"headers",
    "data", "trailers", "reset"}`` as far as they came within :data:`READ_TIMEOUT`."""
    import h2.config
    import h2.connection
    import h2.events

    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True,
                                                                header_encoding="utf-8"))
    conn.initiate_connection()
    stream = conn.get_next_available_stream_id()
    conn.send_headers(stream, [(":method", "POST"), (":scheme", "http"), (":path", path),
                               (":authority", "127.0.0.1"), ("content-type", "application/grpc"),
                               ("te", "trailers")])
    conn.send_data(stream, body, end_stream=True)
    result: dict = {"headers": {}, "data": b"", "trailers": {}, "reset": None}
    deadline = time.monotonic() + READ_TIMEOUT
    with socket.create_connection(("127.0.0.1", port), timeout=READ_TIMEOUT) as sock:
        sock.sendall(conn.data_to_send())
        for chunk in chunks(sock, deadline):
            for event in conn.receive_data(chunk):
                if isinstance(event, h2.events.ResponseReceived):
                    result["headers"] = dict(event.headers)
                elif isinstance(event, h2.events.DataReceived):
                    result["data"] += event.data
                    conn.acknowledge_received_data(event.flow_controlled_length, stream)
                elif isinstance(event, h2.events.TrailersReceived):
                    result["trailers"] = dict(event.headers)
                elif isinstance(event, h2.events.StreamReset):
                    result["reset"] = event.error_code
                elif isinstance(event, h2.events.ConnectionTerminated):
                    result["reset"] = event.error_code
                if isinstance(event, (h2.events.StreamEnded, h2.events.StreamReset,
                                      h2.events.ConnectionTerminated)):
                    return result
            sock.sendall(conn.data_to_send())
    return result


def grpc_status(result: dict) -> str | None:
    """The ``grpc-status`` of a :func:`grpc_call` result (trailers, or headers when the answer
    is trailers-only)."""
    return result["trailers"].get("grpc-status") or result["headers"].get("grpc-status")


@st.composite
def grpc_message(draw) -> bytes:
    """Length-prefixed messages: a real ``HelloRequest`` or random bytes, the compressed flag
    0 or not, the length told exactly or not, one message or two."""
    payload = draw(st.one_of(st.text(max_size=40).map(hello_request),
                             st.binary(max_size=200)))
    flag = draw(st.sampled_from([0, 0, 0, 1, 2, 255]))
    length = draw(st.sampled_from([None, None, 0, 1, 2**31 - 1, 2**32 - 1]))
    told = len(payload) if length is None else length
    framed = bytes([flag]) + struct.pack(">I", told) + payload
    if draw(st.booleans()):
        framed += framed  # two messages to a unary method
    return framed


@FUZZ
@given(message=grpc_message(), path=st.sampled_from([SAY_HELLO, SAY_HELLO, HEALTH_CHECK,
                                                      *REFLECTION, "/helloworld.Greeter/Nope",
                                                      "/x.Y/Z"]))
def test_random_length_prefixed_messages_to_real_methods(server, message, path):
    result = grpc_call(server.grpc_port, path, message)
    assert grpc_status(result) or result["reset"] is not None, result
    assert_listeners_answer(server)


@pytest.mark.parametrize("path", [HEALTH_CHECK, *REFLECTION])
def test_a_corrupt_message_to_health_or_reflection_gets_internal(server, path):
    # Found by the fuzzing above: grpcio's own deserializer logged a traceback and answered
    # UNKNOWN for each such message.
    result = grpc_call(server.grpc_port, path, b"\x00\x00\x00\x00\x01\xff")
    assert grpc_status(result) == "13", result
    assert "Traceback" not in server.log()
    assert_listeners_answer(server)


@FUZZ
@given(name=st.text(max_size=60))
def test_well_formed_grpc_calls_get_ok(server, name):
    payload = hello_request(name)
    result = grpc_call(server.grpc_port, SAY_HELLO,
                       b"\x00" + struct.pack(">I", len(payload)) + payload)
    assert grpc_status(result) == "0", (name, result)
    assert f"Hello {name}".encode() in result["data"]
    assert_listeners_answer(server)


@FUZZ
@given(noise=st.one_of(st.binary(min_size=1, max_size=500),
                       st.binary(max_size=300).map(lambda data: H2_PREFACE + data)))
def test_random_bytes_on_the_grpc_port(server, noise):
    exchange(server.grpc_port, noise)
    assert_listeners_answer(server)


# --- MQTT -----------------------------------------------------------------------------------

MQTT_STRING = st.text(max_size=20).map(lambda text: struct.pack(">H", len(text.encode()))
                                       + text.encode())


@st.composite
def mqtt_packet(draw) -> bytes:
    """A packet after CONNECT: PUBLISH, SUBSCRIBE, UNSUBSCRIBE, PINGREQ, PUBACK, DISCONNECT or
    any type with any flags; its remaining length exact, absurd (268,435,455), a five-byte
    (malformed) varint, or shorter than the body."""
    kind = draw(st.sampled_from(["publish", "subscribe", "unsubscribe", "ping", "puback",
                                 "any"]))
    packet_id = struct.pack(">H", draw(st.integers(0, 65535)))
    if kind == "publish":
        qos = draw(st.integers(0, 3))
        first = 0x30 | (qos << 1) | draw(st.integers(0, 1))
        body = draw(MQTT_STRING) + (packet_id if qos else b"") + draw(st.binary(max_size=100))
    elif kind == "subscribe":
        first = 0x82
        body = packet_id + b"".join(topic + bytes([draw(st.integers(0, 3))]) for topic in
                                    draw(st.lists(MQTT_STRING, max_size=3)))
    elif kind == "unsubscribe":
        first, body = 0xA2, packet_id + b"".join(draw(st.lists(MQTT_STRING, max_size=3)))
    elif kind == "ping":
        first, body = 0xC0, b""
    elif kind == "puback":
        first, body = 0x40, packet_id
    else:
        first, body = draw(st.integers(0, 255)), draw(st.binary(max_size=60))
    mode = draw(st.sampled_from(["exact", "exact", "absurd", "malformed", "short"]))
    if mode == "exact":
        told = encode_length(len(body))
    elif mode == "absurd":
        told = encode_length(268_435_455)
    elif mode == "malformed":
        told = b"\xff\xff\xff\xff\x7f"
    else:
        told = encode_length(max(0, len(body) - 2))
    return bytes([first]) + told + body


@st.composite
def mqtt_session(draw) -> tuple[bytes, int]:
    """``(bytes, level)``: a well-formed CONNECT of MQTT 3.1, 3.1.1 or 5 (will, user name and
    password, keep-alive, MQTT 5 properties), then random packets."""
    level = draw(st.sampled_from([3, 4, 5]))
    name = b"MQIsdp" if level == 3 else b"MQTT"
    will, user = draw(st.booleans()), draw(st.booleans())
    flags = 0x02 | (0x04 | draw(st.integers(0, 2)) << 3 if will else 0) | (0xC0 if user else 0)
    tail = (draw(MQTT_STRING) + draw(MQTT_STRING) if will else b"") \
        + (draw(MQTT_STRING) + draw(MQTT_STRING) if user else b"")
    properties = None
    if level == 5:
        raw = draw(st.sampled_from([b"", b"\x11\x00\x00\x00\x10", b"\x21\x00\x0a"]))
        properties = encode_length(len(raw)) + raw
    client = draw(st.text("abcxyz0123", min_size=1, max_size=12)).encode()
    connect = mqtt_connect(client, level, name, properties, flags,
                           draw(st.integers(0, 65535)), tail)
    return connect + b"".join(draw(st.lists(mqtt_packet(), max_size=4))), level


@FUZZ
@given(session=mqtt_session())
def test_well_formed_mqtt_connects_then_random_packets(server, session):
    data, level = session
    answer = exchange(server.mqtt_port, data)
    # 3.1 and 3.1.1 are accepted, 5 is refused with "unacceptable protocol version"
    assert answer[:4] == (b"\x20\x02\x00\x01" if level == 5 else b"\x20\x02\x00\x00"), \
        (data[:200], answer[:40])
    assert_listeners_answer(server)


def test_a_publish_with_qos_3_closes_its_connection(server):
    # Found by the fuzzing above: the broker logged a task's traceback and kept the connection.
    publish = b"\x36" + encode_length(7) + b"\x00\x01t" + b"\x00\x01" + b"hi"
    with socket.create_connection(("127.0.0.1", server.mqtt_port), timeout=READ_TIMEOUT) as mq:
        mq.sendall(mqtt_connect(b"qos3"))
        assert read_exactly(mq, 4) == b"\x20\x02\x00\x00"
        mq.sendall(publish)
        assert mq.recv(16) == b""  # closed, nothing sent
    assert_listeners_answer(server)


@FUZZ
@given(noise=st.one_of(
    st.binary(min_size=1, max_size=400),
    st.binary(max_size=200).map(lambda data: mqtt_connect(b"noise") + data),
    st.builds(lambda first, told, data: bytes([first]) + told + data, st.integers(0, 255),
              st.sampled_from([b"\xff\xff\xff\x7f", b"\xff\xff\xff\xff\xff", b"\x80\x80"]),
              st.binary(max_size=50))))
def test_random_bytes_on_the_mqtt_port(server, noise):
    exchange(server.mqtt_port, noise)
    assert_listeners_answer(server)
