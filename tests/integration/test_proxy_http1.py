"""HTTP/1.1 framing through the recording proxy, byte for byte: raw client sockets against
``mockd start``'s proxy, a raw origin on loopback that answers with chosen framings (chunked,
delimited by the connection's end, HEAD, 204) and counts the requests of each of its
connections (upstream keep-alive)."""
from __future__ import annotations

import socket
import socketserver
import threading
import time

import httpx
import pytest

from tests.helpers import free_port, start_server

TIMEOUT = 10


def _read_head(stream) -> tuple[str, dict[str, str]]:
    lines = []
    while True:
        line = stream.readline(65536)
        if not line:
            raise ConnectionError("closed")
        if line in (b"\r\n", b"\n"):
            break
        lines.append(line.decode("latin-1").rstrip("\r\n"))
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return lines[0], headers


def _read_body(stream, headers: dict[str, str]) -> bytes:
    if "chunked" in headers.get("transfer-encoding", ""):
        body = b""
        while True:
            size = int(stream.readline().strip(), 16)
            if size == 0:
                stream.readline()
                return body
            body += stream.read(size)
            stream.readline()
    return stream.read(int(headers.get("content-length", "0")))


class _Origin(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        served = 0
        while True:
            try:
                line, headers = _read_head(self.rfile)
            except (ConnectionError, OSError):
                return
            served += 1
            method, target, _ = line.split(" ", 2)
            body = _read_body(self.rfile, headers)
            info = f"{method} {target} n={served} te={headers.get('transfer-encoding', '-')} " \
                   f"body={body.decode('latin-1')}".encode()
            if target == "/chunked":
                self.wfile.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                                 b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
            elif target == "/close":
                self.wfile.write(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"
                                 b"until the end")
                return
            elif target == "/nocontent":
                self.wfile.write(b"HTTP/1.1 204 No Content\r\nX-Info: " + info + b"\r\n\r\n")
            elif method == "HEAD":
                self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n")
            else:
                self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s"
                                 % (len(info), info))


@pytest.fixture(scope="module")
def origin():
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Origin)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def proxy(tmp_path_factory):
    process = start_server(tmp_path_factory.mktemp("proxy-http1"))
    admin = httpx.Client(base_url=process.admin, timeout=30, trust_env=False)
    port = free_port()
    assert admin.post("/proxy/start", json={"port": port, "mode": "record",
                                            "sessionName": "http1"}).status_code == 200
    yield {"port": port, "admin": admin}
    admin.close()
    process.stop()


class _Client:
    def __init__(self, port: int):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        self.stream = self.sock.makefile("rb")

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def answer(self, head_only: bool = False) -> tuple[str, dict[str, str], bytes]:
        line, headers = _read_head(self.stream)
        if head_only or line.split(" ")[1] in ("204", "304"):
            return line, headers, b""
        if "chunked" in headers.get("transfer-encoding", "") or "content-length" in headers:
            return line, headers, _read_body(self.stream, headers)
        return line, headers, self.stream.read()

    def closed(self) -> bool:
        self.sock.settimeout(TIMEOUT)
        return self.sock.recv(1) == b""

    def __enter__(self) -> "_Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stream.close()
        self.sock.close()


def _get(origin: int, path: str, method: str = "GET", extra: str = "",
         version: str = "1.1") -> bytes:
    return (f"{method} http://127.0.0.1:{origin}{path} HTTP/{version}\r\n"
            f"Host: 127.0.0.1:{origin}\r\n{extra}\r\n").encode()


def test_keep_alive_reuses_the_upstream_and_pipelined_requests_answer_in_order(proxy, origin):
    with _Client(proxy["port"]) as client:
        client.send(_get(origin, "/a") + _get(origin, "/b"))
        first, second = client.answer(), client.answer()
        assert first[0].startswith("HTTP/1.1 200") and first[2].startswith(b"GET /a n=1 ")
        assert second[2].startswith(b"GET /b n=2 ")
        client.send(_get(origin, "/c"))
        assert client.answer()[2].startswith(b"GET /c n=3 ")


def test_chunked_request_bodies_and_answers_are_reframed(proxy, origin):
    with _Client(proxy["port"]) as client:
        client.send(_get(origin, "/echo", "POST", "Transfer-Encoding: chunked\r\n")
                    + b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n")
        line, _, body = client.answer()
        assert line.startswith("HTTP/1.1 200") and body.endswith(b"te=chunked body=abcde")
        client.send(_get(origin, "/chunked"))
        line, headers, body = client.answer()
        assert headers["transfer-encoding"] == "chunked" and body == b"hello world"


def test_an_answer_delimited_by_the_end_of_the_connection(proxy, origin):
    with _Client(proxy["port"]) as client:
        client.send(_get(origin, "/close"))
        _, headers, body = client.answer()
        assert headers.get("transfer-encoding") == "chunked" and body == b"until the end"
        client.send(_get(origin, "/after"))  # a new upstream connection is opened
        assert client.answer()[2].startswith(b"GET /after n=1 ")
    with _Client(proxy["port"]) as old:
        old.send(_get(origin, "/close", version="1.0"))
        line, headers, body = old.answer()
        assert "transfer-encoding" not in headers and body == b"until the end"


def test_head_204_and_100_continue(proxy, origin):
    with _Client(proxy["port"]) as client:
        client.send(_get(origin, "/thing", "HEAD"))
        line, headers, _ = client.answer(head_only=True)
        assert line.startswith("HTTP/1.1 200") and headers["content-length"] == "1234"
        client.send(_get(origin, "/nocontent"))
        line, headers, _ = client.answer()
        assert line.startswith("HTTP/1.1 204") and "transfer-encoding" not in headers
        client.send(_get(origin, "/echo", "PUT", "Content-Length: 4\r\nExpect: 100-continue\r\n"))
        line, _ = _read_head(client.stream)
        assert line.startswith("HTTP/1.1 100")
        client.send(b"data")
        assert client.answer()[2].endswith(b"body=data")


def test_http10_client_without_keep_alive_is_closed_after_its_answer(proxy, origin):
    with _Client(proxy["port"]) as client:
        client.send(_get(origin, "/one", version="1.0"))
        line, headers, body = client.answer()
        assert line.startswith("HTTP/1.1 200") and body.startswith(b"GET /one")
        assert client.closed()


@pytest.mark.parametrize("request_bytes", [
    b"NOT HTTP AT ALL\r\n\r\n",
    b"GET http://127.0.0.1:1/ HTTP/1.1\r\nX-Big: " + b"a" * (70 * 1024) + b"\r\n\r\n",
])
def test_malformed_or_oversized_heads_get_400_and_the_proxy_keeps_serving(proxy, origin,
                                                                          request_bytes):
    with _Client(proxy["port"]) as client:
        client.send(request_bytes)
        line, headers, body = client.answer()
        assert line.startswith("HTTP/1.1 400") and b"bad_request" in body
        assert headers.get("connection") == "close"
    with _Client(proxy["port"]) as again:
        again.send(_get(origin, "/fine"))
        assert again.answer()[0].startswith("HTTP/1.1 200")


def test_recordings_of_framed_exchanges_hold_the_decoded_bodies(proxy, origin):
    with _Client(proxy["port"]) as client:
        client.send(_get(origin, "/echo?rec=1", "POST", "Transfer-Encoding: chunked\r\n")
                    + b"4\r\nwxyz\r\n0\r\n\r\n")
        client.answer()
    import base64

    deadline = time.monotonic() + TIMEOUT
    found = []
    while time.monotonic() < deadline and not found:
        page = proxy["admin"].get("/recordings", params={"path": "/echo"}).json()["recordings"]
        found = [r for r in page if "rec=1" in r["request"]["url"]]
        time.sleep(0.05)
    (record,) = found
    assert base64.b64decode(record["request"]["body"]) == b"wxyz"
    assert base64.b64decode(record["response"]["body"]).endswith(b"body=wxyz")
