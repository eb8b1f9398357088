"""Record and replay of the pytest plugin beyond plain HTTP, in inner pytest sessions
(``pytester``): an HTTPS upstream (its certificate from a ``trustme`` CA, the client trusting
the recording proxy's CA), an SSE stream and WebSocket conversations (``websockets``, over
``ws://`` and ``wss://``) are recorded with ``--mockd-record``, then replayed with every upstream stopped. Loopback only."""
from __future__ import annotations

import http.server
import json
import ssl
import threading
from typing import Iterator

# httpcore and uvicorn's httptools protocol are loaded here, once: pytester's in-process
# runs drop the modules they import, and a second import would give errors new classes
# (httptools' C parser and httpx's cached map of httpcore errors keep the first ones).
import httpcore  # noqa: F401
import pytest
import trustme
import uvicorn.protocols.http.httptools_impl  # noqa: F401
from websockets.sync.server import Server, ServerConnection, serve

from mockd import MockServer

pytest_plugins = ["pytester"]

#: Inner sessions run in this process without the plugins of our own suite (Faker's loads
#: every locale, ~0.25 s of CPU a session; the outer suite runs without it too).
INNER = ("-p", "no:django", "-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:randomly",
         "-p", "no:faker", "-q")

EVENTS = [("tick", "0", "first"), ("tick", "1", "second"), ("done", "2", "last")]


class _Upstream(http.server.BaseHTTPRequestHandler):
    """A loopback service: ``GET /users/<id>`` answers JSON, ``GET /events`` an SSE stream of
    :data:`EVENTS` (then the connection closes)."""

    protocol_version = "HTTP/1.1"
    served: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the http.server name
        type(self).served.append(self.path)
        if self.path == "/events":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            for event, event_id, data in EVENTS:
                self.wfile.write(f"event: {event}\nid: {event_id}\ndata: {data}\n\n".encode())
                self.wfile.flush()
            self.close_connection = True
            return
        body = json.dumps({"id": self.path.rsplit("/", 1)[-1], "secure": True}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def _chat(connection: ServerConnection) -> None:
    """The WebSocket upstream: answers each text message with ``echo: <text>``."""
    _Upstream.served.append("ws " + connection.request.path)
    for message in connection:
        connection.send(f"echo: {message}")


class Upstreams:
    """An HTTPS upstream (certificate of a ``trustme`` CA), a ``ws://`` and a ``wss://``
    (the same certificate) WebSocket upstream, each in a thread of its own on a loopback
    port."""

    def __init__(self) -> None:
        self.ca = trustme.CA()
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ca.issue_cert("127.0.0.1").configure_cert(context)
        self.https = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
        self.https.socket = context.wrap_socket(self.https.socket, server_side=True)
        self.websocket: Server = serve(_chat, "127.0.0.1", 0)
        self.secure_websocket: Server = serve(_chat, "127.0.0.1", 0, ssl=context)
        self.threads = [threading.Thread(target=server.serve_forever, daemon=True)
                        for server in (self.https, self.websocket, self.secure_websocket)]
        for thread in self.threads:
            thread.start()

    @property
    def https_url(self) -> str:
        return f"https://127.0.0.1:{self.https.server_port}"

    @property
    def websocket_url(self) -> str:
        return f"ws://127.0.0.1:{self.websocket.socket.getsockname()[1]}"

    @property
    def secure_websocket_url(self) -> str:
        return f"wss://127.0.0.1:{self.secure_websocket.socket.getsockname()[1]}"

    def stop(self) -> None:
        self.https.shutdown()
        self.https.server_close()
        self.websocket.shutdown()
        self.secure_websocket.shutdown()
        for thread in self.threads:
            thread.join(10)


@pytest.fixture
def upstreams() -> Iterator[Upstreams]:
    # The engine's modules loaded once here: each in-process inner session drops the
    # modules it imported, so otherwise both would import them again.
    MockServer().start().stop()
    _Upstream.served = []
    servers = Upstreams()
    try:
        yield servers
    finally:
        servers.stop()


STREAM_TESTS = '''
import pytest
from httpx_sse import connect_sse

HTTPS = "{https}"
WEBSOCKET = "{websocket}"
SECURE_WEBSOCKET = "{secure_websocket}"
EVENTS = {events!r}


@pytest.mark.mockd(upstream=HTTPS, upstream_ca="upstream-ca.pem")
def test_https(mockd):
    with mockd.http_client(timeout=10) as client:
        assert client.get("/users/7").json() == {{"id": "7", "secure": True}}
    assert mockd.recording == {recording}


@pytest.mark.mockd(upstream=HTTPS, upstream_ca="upstream-ca.pem")
def test_sse(mockd):
    received = []
    with mockd.http_client(timeout=10) as client:
        with connect_sse(client, "GET", "/events") as source:
            for event in source.iter_sse():
                if not event.data:
                    continue  # the retry field alone
                received.append((event.event, event.id, event.data))
                if len(received) == len(EVENTS):
                    break
    assert received == [tuple(item) for item in EVENTS]


@pytest.mark.mockd(upstream=WEBSOCKET)
def test_websocket(mockd):
    with mockd.websocket_connect("/chat") as connection:
        connection.send("hello")
        assert connection.recv(10) == "echo: hello"
        connection.send("again")
        assert connection.recv(10) == "echo: again"


@pytest.mark.mockd(upstream=SECURE_WEBSOCKET, upstream_ca="upstream-ca.pem")
def test_secure_websocket(mockd):
    with mockd.websocket_connect("/secure") as connection:
        connection.send("hush")
        assert connection.recv(10) == "echo: hush"
'''


def test_https_sse_and_websocket_record_then_replay_with_upstreams_stopped(
        pytester: pytest.Pytester, upstreams: Upstreams) -> None:
    upstreams.ca.cert_pem.write_to_path(str(pytester.path / "upstream-ca.pem"))
    values = {"https": upstreams.https_url, "websocket": upstreams.websocket_url,
              "secure_websocket": upstreams.secure_websocket_url, "events": EVENTS}
    pytester.makepyfile(test_inner=STREAM_TESTS.format(recording=True, **values))
    recorded = pytester.runpytest_inprocess(*INNER, "--mockd-record")
    recorded.assert_outcomes(passed=4)
    assert sorted(_Upstream.served) == ["/events", "/users/7", "ws /chat", "ws /secure"]
    cassettes = pytester.path / "cassettes"
    assert "path: /users/" in (cassettes / "test_https.yaml").read_text()
    assert "sse:" in (cassettes / "test_sse.yaml").read_text()
    assert "type: websocket" in (cassettes / "test_websocket.yaml").read_text()
    assert "value: 'echo: hush'" in (cassettes / "test_secure_websocket.yaml").read_text()

    upstreams.stop()
    pytester.makepyfile(test_inner=STREAM_TESTS.format(recording=False, **values))
    replayed = pytester.runpytest_inprocess(*INNER)
    replayed.assert_outcomes(passed=4)
    assert len(_Upstream.served) == 4
