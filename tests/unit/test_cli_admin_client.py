"""The admin client of the client commands (:class:`mockd_project.cli_client.AdminClient`).

It runs on the standard library; these tests drive it against small loopback servers (plain
HTTP, and HTTPS with a ``trustme`` CA) and check what a caller and a user see: the request
that arrives (method, path, query, body, headers), the parsed answer, and the one-line
errors (unreachable server, untrusted certificate, an error status, 401 with the key trail).
"""
from __future__ import annotations

import json
import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import trustme

from mockd_project.cli_client import AdminClient, ClientError, KeyLookup


class Recorder(BaseHTTPRequestHandler):
    """Answers by path; records every request on the server (``server.seen``)."""

    protocol_version = "HTTP/1.1"

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        self.server.seen.append({"method": self.command, "target": self.path, "body": body,
                                 "headers": {k.lower(): v for k, v in self.headers.items()},
                                 "connection": id(self.connection)})
        path = self.path.split("?")[0]
        status, content_type, payload = {
            "/none": (204, None, b""),
            "/text": (200, "text/plain; charset=latin-1", "caf\xe9".encode("latin-1")),
            "/missing": (404, "application/json",
                         b'{"error": "not_found", "message": "Mock not found"}'),
            "/denied": (401, "application/json",
                        b'{"error": "unauthorized", "message": "Invalid API key"}'),
            "/broken": (500, "text/html", b"  <h1>oops</h1>  "),
            "/empty-error": (502, "text/plain", b""),
        }.get(path, (200, "application/json", json.dumps({"echo": path}).encode()))
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        self.send_header("X-Answer", "1")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_DELETE = _answer  # noqa: N815 (http.server's names)

    def log_message(self, *args: object) -> None:
        pass


def _serve(context: ssl.SSLContext | None = None):
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    server.seen = []
    server.daemon_threads = True
    if context is not None:
        server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def plain():
    server = _serve()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture()
def client(plain):
    plain.seen.clear()
    admin = AdminClient(f"http://127.0.0.1:{plain.server_address[1]}/", "k3y", timeout=5)
    yield admin
    admin.close()


def test_get_with_params_sends_the_key_and_parses_json(client, plain):
    answer = client.request("GET", "/mocks", params={"type": "http", "all": True, "n": 2})
    assert answer == {"echo": "/mocks"}
    seen = plain.seen[-1]
    assert (seen["method"], seen["target"]) == ("GET", "/mocks?type=http&all=true&n=2")
    assert seen["headers"]["x-api-key"] == "k3y"


def test_json_and_raw_bodies_and_extra_headers(client, plain):
    client.request("POST", "/mocks", json={"name": "café", "n": 1})
    client.request("PUT", "/config", content=b'{"a":1}',
                   headers={"Content-Type": "application/json"})
    client.request("POST", "/text-body", content="plain text")
    first, second, third = plain.seen[-3:]
    assert json.loads(first["body"]) == {"name": "café", "n": 1}
    assert first["headers"]["content-type"] == "application/json"
    assert second["body"] == b'{"a":1}' and second["headers"]["content-type"] == \
        "application/json"
    assert third["body"] == b"plain text"


def test_one_connection_serves_the_requests_of_a_command(client, plain):
    client.request("GET", "/a")
    client.request("GET", "/b")
    assert plain.seen[-1]["connection"] == plain.seen[-2]["connection"]


def test_path_prefix_query_in_path_and_characters_a_url_may_not_hold(plain):
    admin = AdminClient(f"http://127.0.0.1:{plain.server_address[1]}/base", None, timeout=5)
    try:
        admin.request("DELETE", "/mocks/my id?x=1", params={"y": "a b"})
    finally:
        admin.close()
    seen = plain.seen[-1]
    assert seen["target"] == "/base/mocks/my%20id?x=1&y=a+b"
    assert "x-api-key" not in seen["headers"]


def test_no_content_and_text_answers(client):
    assert client.request("DELETE", "/none") is None
    assert client.request("GET", "/text") == "café"


def test_fetch_gives_status_headers_and_bytes(client):
    answer = client.fetch("GET", "/text")
    assert answer.status_code == 200
    assert answer.headers["x-answer"] == "1"
    assert answer.content == "caf\xe9".encode("latin-1") and answer.text == "café"


@pytest.mark.parametrize(("path", "message"), [
    ("/missing", "Mock not found (HTTP 404)"),
    ("/broken", "<h1>oops</h1> (HTTP 500)"),
    ("/empty-error", "Bad Gateway (HTTP 502)"),
])
def test_an_error_status_is_the_servers_message(client, path, message):
    with pytest.raises(ClientError) as raised:
        client.request("GET", path)
    assert raised.value.format_message() == message


def test_a_401_names_where_the_key_was_looked_for(plain):
    lookup = KeyLookup("k", ["--data-dir /d -> /d/admin-api-key"])
    admin = AdminClient(f"http://127.0.0.1:{plain.server_address[1]}", "k", timeout=5,
                        key_lookup=lookup)
    with pytest.raises(ClientError) as raised:
        admin.request("GET", "/denied")
    message = raised.value.format_message()
    assert message.startswith("Invalid API key (HTTP 401); looked in: --data-dir /d -> "
                              "/d/admin-api-key; MOCKD_API_KEY")
    assert message.endswith("pass --api-key or run 'mockd admin key'")


def test_an_unreachable_server_says_how_to_start_one():
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        port = holder.getsockname()[1]  # bound, not listening: the connection is refused
        admin = AdminClient(f"http://127.0.0.1:{port}", None, timeout=5)
        with pytest.raises(ClientError) as raised:
            admin.request("GET", "/status")
    assert raised.value.format_message() == (
        f"cannot reach the mockd admin API at http://127.0.0.1:{port} (ConnectError); is the "
        f"server running? Start it with 'mockd start' or pass --admin-url")


def test_a_server_that_does_not_answer_times_out():
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)  # accepts (in the backlog) and never answers
        admin = AdminClient(f"http://127.0.0.1:{silent.getsockname()[1]}", None, timeout=0.3)
        started = time.monotonic()
        with pytest.raises(ClientError) as raised:
            admin.request("GET", "/status")
    assert "(ReadTimeout)" in raised.value.format_message()
    assert time.monotonic() - started < 5


def test_a_kept_connection_the_server_closed_is_opened_again():
    accepted: list[int] = []

    def serve_one_request_per_connection(listener: socket.socket) -> None:
        for _ in range(2):
            connection, _ = listener.accept()
            accepted.append(1)
            with connection:
                connection.recv(65536)
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                   b"Content-Length: 2\r\n\r\n{}")
                time.sleep(0.1)  # then closes, without saying so in the answer

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(2)
        listener.settimeout(10)
        thread = threading.Thread(target=serve_one_request_per_connection, args=(listener,),
                                  daemon=True)
        thread.start()
        admin = AdminClient(f"http://127.0.0.1:{listener.getsockname()[1]}", None, timeout=5)
        assert admin.request("GET", "/one") == {}
        time.sleep(0.3)
        assert admin.request("POST", "/two", json={}) == {}
        admin.close()
        thread.join(10)
    assert len(accepted) == 2


def test_proxies_from_the_environment_are_not_used(plain, monkeypatch):
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")  # discard port: nothing answers
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    admin = AdminClient(f"http://127.0.0.1:{plain.server_address[1]}", None, timeout=5)
    try:
        assert admin.request("GET", "/via") == {"echo": "/via"}
    finally:
        admin.close()


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory):
    authority = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1", "localhost").configure_cert(context)
    ca_file = tmp_path_factory.mktemp("ca") / "ca.pem"
    authority.cert_pem.write_to_path(str(ca_file))
    server = _serve(context)
    yield f"https://127.0.0.1:{server.server_address[1]}", str(ca_file)
    server.shutdown()
    server.server_close()


def test_https_with_ca_file(tls_server):
    url, ca_file = tls_server
    admin = AdminClient(url, "k", timeout=5, ca_file=ca_file)
    try:
        assert admin.request("GET", "/status") == {"echo": "/status"}
    finally:
        admin.close()


def test_an_untrusted_certificate_says_to_pass_ca_file(tls_server):
    url, _ = tls_server
    admin = AdminClient(url, "k", timeout=5)
    with pytest.raises(ClientError) as raised:
        admin.request("GET", "/status")
    assert raised.value.format_message() == (
        f"the admin API at {url} presented a certificate this client does not trust; pass "
        f"--ca-file with its CA or certificate PEM (for --admin-tls-auto: "
        f"<data dir>/tls/localhost-cert.pem)")


def test_an_unreadable_ca_file_is_named(tls_server, tmp_path):
    url, _ = tls_server
    with pytest.raises(ClientError) as raised:
        AdminClient(url, "k", ca_file=str(tmp_path / "nope.pem"))
    assert "(--ca-file)" in raised.value.format_message()
    assert "nope.pem" in raised.value.format_message()
