"""The recording proxy through a real ``mockd start``: httpx clients send traffic through it
to upstream servers this module starts on loopback (HTTP, HTTPS with a trustme CA, a
WebSocket echo, an SSE stream), and the recordings are read back from the store's admin
routes or the store file.

Source: SPEC "Proxy", "Proxy, CA and recordings", "States and transitions" (Proxy); behavior
notes §1 "Proxy, CA, sessions, recordings".
"""
from __future__ import annotations

import asyncio
import base64
import json
import socket
import ssl
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import trustme
from cryptography import x509
from cryptography.hazmat.primitives import hashes

from tests.helpers import free_port, start_server

pytestmark = pytest.mark.integration


# ---------------------------------------------------------------------------- upstream


async def upstream_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The origin behind the proxy: ``/echo`` (the request as JSON, with a Set-Cookie),
    ``/big`` (2 MiB), ``/sse`` (three events), WebSocket ``/ws`` (echo)."""
    if scope["type"] == "lifespan":
        return
    if scope["type"] == "websocket":
        await receive()
        await send({"type": "websocket.accept"})
        while True:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                return
            if message.get("text") == "bye":
                await send({"type": "websocket.close", "code": 1000, "reason": "done"})
                return
            if message.get("text") is not None:
                await send({"type": "websocket.send", "text": "echo:" + message["text"]})
            else:
                await send({"type": "websocket.send", "bytes": message["bytes"]})
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    path = scope["path"]
    if path == "/sse":
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")]})
        for number in range(3):
            await send({"type": "http.response.body", "more_body": True,
                        "body": f"event: tick\nid: {number}\ndata: {{\"n\": {number}}}\n\n"
                        .encode()})
            await asyncio.sleep(0.02)
        await send({"type": "http.response.body", "body": b""})
        return
    if path == "/big":
        chunk = b"x" * 65536
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/octet-stream")]})
        for _ in range(32):
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
        return
    document = {"method": scope["method"], "path": path,
                "query": scope["query_string"].decode(),
                "headers": {k.decode(): v.decode() for k, v in scope["headers"]},
                "body": body.decode("latin-1"), "scheme": scope["scheme"]}
    payload = json.dumps(document).encode()
    await send({"type": "http.response.start", "status": 201 if path == "/created" else 200,
                "headers": [(b"content-type", b"application/json"),
                            (b"set-cookie", b"session=s3cr3t; Path=/"),
                            (b"x-auth-token", b"tok-123")]})
    await send({"type": "http.response.body", "body": payload})


class Upstream:
    """uvicorn serving :func:`upstream_app` in a thread, over HTTP or HTTPS."""

    def __init__(self, tls: trustme.LeafCert | None = None):
        import uvicorn

        self.port = free_port()
        options: dict[str, Any] = {}
        self._files: list[Any] = []
        if tls is not None:
            cert = tls.private_key_and_cert_chain_pem.tempfile()
            self._files.append(cert)
            options = {"ssl_certfile": cert.__enter__(), "ssl_keyfile": None}
        config = uvicorn.Config(upstream_app, host="127.0.0.1", port=self.port,
                                lifespan="off", log_level="warning", ws="websockets-sansio",
                                ws_per_message_deflate=False, **options)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            assert time.monotonic() < deadline, "upstream did not start"
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        for handle in self._files:
            handle.__exit__(None, None, None)


@pytest.fixture(scope="module")
def upstream_ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture(scope="module")
def upstream(upstream_ca):
    plain = Upstream()
    secure = Upstream(upstream_ca.issue_cert("127.0.0.1", "localhost"))
    yield plain, secure
    plain.stop()
    secure.stop()


@pytest.fixture(scope="module")
def server(tmp_path_factory, upstream_ca):
    tmp = tmp_path_factory.mktemp("proxy")
    ca_file = tmp / "upstream-ca.pem"
    upstream_ca.cert_pem.write_to_path(str(ca_file))
    process = start_server(tmp)
    process.upstream_ca_file = ca_file
    process.data_dir = tmp / "data"
    yield process
    process.stop()


@pytest.fixture
def proxy(server, admin):
    """A running proxy on a free port in record mode (stopped after the test)."""
    started = []

    def start(**body: Any) -> dict[str, Any]:
        body.setdefault("port", free_port())
        body.setdefault("upstreamCa", str(server.upstream_ca_file))
        answer = admin.post("/proxy/start", json=body)
        assert answer.status_code == 200, answer.text
        started.append(answer.json())
        return answer.json()

    yield start
    if started:
        admin.post("/proxy/stop")
        admin.put("/proxy/filters", json={})


def through(status: dict[str, Any], **kwargs: Any) -> httpx.Client:
    kwargs.setdefault("timeout", 10.0)
    return httpx.Client(proxy=f"http://127.0.0.1:{status['port']}", trust_env=False, **kwargs)


def recordings(server, session_id: str, kind: str = "http") -> list[dict[str, Any]]:
    """The recordings of ``kind`` of a session, read from the store file."""
    from recordings.store import open_store

    store = open_store(server.data_dir)
    try:
        page, _ = store.query(kind, session_id=session_id, limit=1000)
        return page
    finally:
        store.close()


def stream_recordings(server, session_id: str) -> list[dict[str, Any]]:
    return recordings(server, session_id, "stream")


def ensure_ca(admin) -> dict[str, Any]:
    status = admin.get("/proxy/ca").json()
    if not status["exists"]:
        created = admin.post("/proxy/ca", json={"caPath": "ca"})
        assert created.status_code == 201, created.text
        status = admin.get("/proxy/ca").json()
    return status


# ---------------------------------------------------------------------------- HTTP


def test_proxy_http_request_is_forwarded_and_recorded(server, upstream, proxy):
    plain, _ = upstream
    status = proxy(sessionName="plain-http")
    with through(status) as client:
        answer = client.post(f"http://127.0.0.1:{plain.port}/echo?page=2",
                             content=b'{"a": 1}',
                             headers={"Content-Type": "application/json"})
    assert answer.status_code == 200
    assert answer.json()["body"] == '{"a": 1}'
    assert answer.json()["query"] == "page=2"
    [record] = recordings(server, status["sessionId"])
    assert record["request"]["method"] == "POST"
    assert record["request"]["path"] == "/echo"
    assert record["request"]["url"] == f"http://127.0.0.1:{plain.port}/echo?page=2"
    assert record["request"]["scheme"] == "http"
    assert base64.b64decode(record["request"]["body"]) == b'{"a": 1}'
    assert record["response"]["statusCode"] == 200
    assert json.loads(base64.b64decode(record["response"]["body"]))["path"] == "/echo"
    assert record["duration"] > 0


def test_proxy_redacts_every_default_header_in_recordings(server, upstream, proxy):
    plain, _ = upstream
    status = proxy(sessionName="redaction")
    secrets = {"Authorization": "Bearer abc.def", "Cookie": "sid=xyz; theme=dark",
               "X-API-Key": "k-1", "X-Auth-Token": "t-1"}
    with through(status) as client:
        answer = client.get(f"http://127.0.0.1:{plain.port}/echo", headers=secrets)
    assert answer.status_code == 200
    assert answer.json()["headers"]["authorization"] == "Bearer abc.def"  # forwarded as is
    [record] = recordings(server, status["sessionId"])
    text = json.dumps(record)
    for value in ("abc.def", "xyz", "dark", "k-1", "t-1", "s3cr3t", "tok-123"):
        assert value not in text
    request_headers = {k.lower(): v for k, v in record["request"]["headers"].items()}
    assert request_headers["authorization"] == ["Bearer [REDACTED]"]
    assert request_headers["cookie"] == ["sid=[REDACTED]; theme=[REDACTED]"]
    assert request_headers["x-api-key"] == ["[REDACTED]"]
    assert request_headers["x-auth-token"] == ["[REDACTED]"]
    response_headers = {k.lower(): v for k, v in record["response"]["headers"].items()}
    assert response_headers["set-cookie"] == ["session=[REDACTED]; Path=/"]
    assert response_headers["x-auth-token"] == ["[REDACTED]"]


def test_proxy_large_body_is_relayed_whole_and_recorded_up_to_the_cap(server, upstream, proxy):
    plain, _ = upstream
    status = proxy(sessionName="big", bodyCap=1000)
    with through(status) as client:
        answer = client.get(f"http://127.0.0.1:{plain.port}/big")
    assert len(answer.content) == 2 * 1024 * 1024
    [record] = recordings(server, status["sessionId"])
    assert len(base64.b64decode(record["response"]["body"])) == 1000
    assert record["bodyTruncated"] is True


def test_proxy_unreachable_upstream_answers_502_and_keeps_serving(server, upstream, proxy):
    plain, _ = upstream
    status = proxy()
    with through(status) as client:
        dead = client.get(f"http://127.0.0.1:{free_port()}/x")
        assert dead.status_code == 502
        assert dead.json()["error"] == "upstream_unreachable"
        assert "cannot connect" in dead.json()["message"]
        assert client.get(f"http://127.0.0.1:{plain.port}/echo").status_code == 200


def test_proxy_refuses_a_request_aimed_at_itself(server, proxy):
    status = proxy()
    with through(status) as client:
        answer = client.get(f"http://127.0.0.1:{status['port']}/loop")
    assert answer.status_code == 508
    assert answer.json()["error"] == "proxy_loop"


# ---------------------------------------------------------------------------- HTTPS


def test_proxy_https_with_ca_is_intercepted_and_recorded(server, upstream, proxy, admin,
                                                         tmp_path):
    _, secure = upstream
    ca = ensure_ca(admin)
    pem = admin.get("/proxy/ca/download").content
    ca_file = tmp_path / "proxy-ca.pem"
    ca_file.write_bytes(pem)
    status = proxy(sessionName="https")
    assert status["caEnabled"] is True
    with through(status, verify=ssl.create_default_context(cafile=str(ca_file))) as client:
        answer = client.post(f"https://localhost:{secure.port}/created?x=1", json={"n": 1})
    assert answer.status_code == 201
    assert answer.json()["scheme"] == "https"
    [record] = recordings(server, status["sessionId"])
    assert record["request"]["scheme"] == "https"
    assert record["request"]["method"] == "POST"
    assert record["request"]["path"] == "/created"
    assert record["response"]["statusCode"] == 201
    assert json.loads(base64.b64decode(record["response"]["body"]))["body"] == '{"n":1}'
    assert ca["fingerprint"]


@pytest.fixture(scope="module")
def no_ca_server(tmp_path_factory):
    """A second server on a fresh data dir, where no CA is ever generated: the blind tunnel
    and the CA download's 404 both need a server without one (neither test creates it)."""
    with start_server(tmp_path_factory.mktemp("proxy-no-ca")) as process:
        yield process


def test_proxy_https_without_ca_is_tunnelled_blind(no_ca_server, upstream, upstream_ca):
    _, secure = upstream
    with no_ca_server.admin_client() as admin:
        assert admin.get("/proxy/ca").json()["exists"] is False
        status = admin.post("/proxy/start", json={"port": free_port()}).json()
        assert status["caEnabled"] is False
        try:
            context = ssl.create_default_context()
            upstream_ca.configure_trust(context)
            # The origin's own certificate reaches the client: nothing is decrypted.
            with through(status, verify=context) as client:
                answer = client.get(f"https://localhost:{secure.port}/echo")
            assert answer.status_code == 200
            time.sleep(0.2)
            assert admin.get("/proxy/status").json()["recordingCount"] == 0
        finally:
            admin.post("/proxy/stop")
        assert admin.get("/proxy/ca").json()["exists"] is False


def test_proxy_https_upstream_certificate_is_verified(server, upstream, proxy, admin, tmp_path):
    _, secure = upstream
    ensure_ca(admin)
    ca_file = tmp_path / "proxy-ca.pem"
    ca_file.write_bytes(admin.get("/proxy/ca/download").content)
    answer = admin.post("/proxy/start", json={"port": free_port()})  # no upstreamCa
    assert answer.status_code == 200, answer.text
    try:
        with through(answer.json(), verify=ssl.create_default_context(cafile=str(ca_file))) as client:
            refused = client.get(f"https://localhost:{secure.port}/echo")
        assert refused.status_code == 502
        assert refused.json()["error"] == "upstream_tls_error"
    finally:
        admin.post("/proxy/stop")
    status = proxy(insecureUpstream=True, upstreamCa=None)
    with through(status, verify=ssl.create_default_context(cafile=str(ca_file))) as client:
        assert client.get(f"https://localhost:{secure.port}/echo").status_code == 200


# ---------------------------------------------------------------------------- modes


def test_proxy_playback_answers_without_the_upstream(server, proxy, admin):
    origin = Upstream()
    status = proxy(sessionName="playback")
    url = f"http://127.0.0.1:{origin.port}/echo"
    with through(status) as client:
        recorded = client.get(url + "?q=1")
        assert recorded.status_code == 200
    origin.stop()
    changed = admin.put("/proxy/mode", json={"mode": "playback"})
    assert changed.status_code == 200
    assert changed.json()["mode"] == "playback"
    with through(status) as client:
        exact = client.get(url + "?q=1")
        by_path = client.get(url + "?q=other")
        missing = client.get(f"http://127.0.0.1:{origin.port}/nothing")
    assert exact.status_code == 200
    assert exact.json() == recorded.json()
    assert exact.headers["x-mockd-recording"]
    assert by_path.status_code == 200
    assert missing.status_code == 502
    assert missing.json()["error"] == "no_recording"


def test_proxy_passthrough_records_nothing_and_mode_changes(server, upstream, proxy, admin):
    plain, _ = upstream
    status = proxy(mode="passthrough", sessionName="pass")
    assert status["mode"] == "passthrough"
    with through(status) as client:
        assert client.get(f"http://127.0.0.1:{plain.port}/echo").status_code == 200
        assert admin.put("/proxy/mode", json={"mode": "record"}).json()["mode"] == "record"
        assert client.get(f"http://127.0.0.1:{plain.port}/echo").status_code == 200
    assert len(recordings(server, status["sessionId"])) == 1
    bad = admin.put("/proxy/mode", json={"mode": "mirror"})
    assert bad.status_code == 400
    assert bad.json()["error"] == "invalid_mode"


def test_proxy_filters_decide_what_is_recorded(server, upstream, proxy, admin):
    plain, _ = upstream
    put = admin.put("/proxy/filters", json={"includePaths": ["/echo*"],
                                            "excludePaths": ["/echo/private*"]})
    assert put.status_code == 200
    assert admin.get("/proxy/filters").json()["includePaths"] == ["/echo*"]
    status = proxy(sessionName="filters")
    with through(status) as client:
        for path in ("/echo/a", "/echo/private/b", "/other"):
            assert client.get(f"http://127.0.0.1:{plain.port}{path}").status_code == 200
    assert [r["request"]["path"] for r in recordings(server, status["sessionId"])] == ["/echo/a"]
    bad = admin.put("/proxy/filters", json={"includePaths": "/x"})
    assert bad.status_code == 400
    assert "includePaths" in bad.json()["message"]


# ---------------------------------------------------------------------------- streams


def _read_frames(sock: socket.socket, want: int) -> list[Any]:
    from wsproto.frame_protocol import FrameProtocol

    received = b""
    frames: list[Any] = []
    deadline = time.monotonic() + 5
    while len(frames) < want and time.monotonic() < deadline:
        received += sock.recv(4096)
        parser = FrameProtocol(client=True, extensions=[])
        parser.receive_bytes(received)
        frames = list(parser.received_frames())
    return frames


def test_proxy_websocket_is_relayed_and_recorded_as_a_stream(server, upstream, proxy):
    from wsproto.frame_protocol import FrameProtocol

    plain, _ = upstream
    status = proxy(sessionName="ws")
    sock = socket.create_connection(("127.0.0.1", status["port"]), timeout=5)
    key = base64.b64encode(b"0123456789abcdef").decode()
    sock.sendall((f"GET http://127.0.0.1:{plain.port}/ws HTTP/1.1\r\n"
                  f"Host: 127.0.0.1:{plain.port}\r\nUpgrade: websocket\r\n"
                  f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                  f"Sec-WebSocket-Version: 13\r\n"
                  f"Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)
    assert head.startswith(b"HTTP/1.1 101")
    assert b"permessage-deflate" not in head.lower()  # not forwarded while recording
    client = FrameProtocol(client=True, extensions=[])
    sock.sendall(client.send_data("hello", fin=True))
    frames = _read_frames(sock, 1)
    assert frames[0].payload == "echo:hello"
    sock.sendall(client.send_data("bye", fin=True))
    time.sleep(0.2)
    sock.close()
    deadline = time.monotonic() + 5
    streams: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        streams = [r for r in stream_recordings(server, status["sessionId"])
                   if r["protocol"] == "websocket" and r["status"] != "recording"]
        if streams:
            break
        time.sleep(0.1)
    [stream] = streams
    assert stream["metadata"]["source"] == "proxy"
    assert stream["metadata"]["path"] == "/ws"
    frames = [(f["direction"], f["type"], f["data"]) for f in stream["websocket"]["frames"]]
    assert ("c2s", "text", "hello") in frames
    assert ("s2c", "text", "echo:hello") in frames
    assert stream["websocket"]["closeCode"] == 1000
    assert stream["status"] == "complete"


def test_proxy_sse_is_relayed_and_recorded_as_a_stream(server, upstream, proxy):
    plain, _ = upstream
    status = proxy(sessionName="sse")
    with through(status) as client:
        with client.stream("GET", f"http://127.0.0.1:{plain.port}/sse") as answer:
            text = b"".join(answer.iter_raw()).decode()
    assert text.count("event: tick") == 3
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        streams = [r for r in stream_recordings(server, status["sessionId"])
                   if r["status"] != "recording"]
        if streams:
            break
        time.sleep(0.1)
    [stream] = streams
    assert stream["protocol"] == "sse"
    assert stream["metadata"]["source"] == "proxy"
    events = stream["sse"]["events"]
    assert [(e["type"], e["id"], e["data"]) for e in events] == [
        ("tick", "0", '{"n": 0}'), ("tick", "1", '{"n": 1}'), ("tick", "2", '{"n": 2}')]


# ---------------------------------------------------------------------------- routes


def test_proxy_start_twice_is_409_and_busy_port_is_400(server, proxy, admin):
    status = proxy()
    again = admin.post("/proxy/start", json={"port": free_port()})
    assert again.status_code == 409
    assert again.json()["error"] == "already_running"
    admin.post("/proxy/stop")
    busy = admin.post("/proxy/start", json={"port": int(server.admin.rsplit(":", 1)[1])})
    assert busy.status_code == 400
    assert busy.json()["error"] == "port_error"
    bad = admin.post("/proxy/start", json={"port": 70000})
    assert bad.status_code == 400
    assert bad.json()["error"] == "port_error"
    mode = admin.post("/proxy/start", json={"port": free_port(), "mode": "spy"})
    assert mode.json()["error"] == "invalid_mode"
    assert admin.get("/proxy/status").json() == {"running": False}
    assert admin.post("/proxy/stop").status_code == 404
    assert admin.put("/proxy/mode", json={"mode": "record"}).json()["error"] == "not_running"
    del status


def test_proxy_status_while_running(server, proxy, admin):
    status = proxy(sessionName="status-check")
    shown = admin.get("/proxy/status").json()
    assert shown["running"] is True
    assert shown["port"] == status["port"]
    assert shown["mode"] == "record"
    assert shown["sessionId"] == status["sessionId"]
    assert shown["recordingCount"] == 0
    assert shown["uptime"] >= 0


@pytest.mark.parametrize("ca_path", ["../outside", "/tmp/abs-ca", "a/../../b", ""])
def test_proxy_ca_path_outside_the_data_dir_is_400(server, admin, ca_path):
    answer = admin.post("/proxy/ca", json={"caPath": ca_path})
    assert answer.status_code == 400
    assert "caPath" in answer.json()["message"]


def test_proxy_ca_routes(server, admin):
    status = ensure_ca(admin)
    again = admin.post("/proxy/ca", json={"caPath": "ca"})
    assert again.status_code == 409
    assert again.json()["error"] == "ca_exists"
    download = admin.get("/proxy/ca/download")
    assert download.status_code == 200
    assert download.headers["content-type"] == "application/x-pem-file"
    assert "attachment" in download.headers["content-disposition"]
    cert = x509.load_pem_x509_certificate(download.content)
    assert cert.fingerprint(hashes.SHA256()).hex(":").upper() == status["fingerprint"]
    assert status["organization"] == "mockd"
    assert status["expiresAt"].endswith("Z")
    key = Path(status["path"]) / "ca.key"
    assert key.stat().st_mode & 0o777 == 0o600
    assert b"PRIVATE KEY" not in download.content


def test_proxy_ca_download_without_a_ca_is_404(no_ca_server):
    with no_ca_server.admin_client() as admin:
        assert admin.get("/proxy/ca").json()["exists"] is False
        answer = admin.get("/proxy/ca/download")
        assert answer.status_code == 404
        assert answer.json()["error"] == "no_ca"


def test_proxy_stops_when_the_server_gets_sigterm(tmp_path):
    process = start_server(tmp_path)
    port = free_port()
    with process.admin_client() as admin:
        assert admin.post("/proxy/start", json={"port": port}).status_code == 200
    with socket.create_connection(("127.0.0.1", port), timeout=2):
        pass
    assert process.stop() == 0
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
