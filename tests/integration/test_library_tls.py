"""``MockServer(tls=...)`` on loopback: HTTPS with the generated certificate (httpx, requests
and a ``wss://`` WebSocket trusting ``server.ca_path``; a client that does not trust it is
refused), HTTPS with a given certificate and key from a ``trustme`` CA, and the errors of a
bad ``tls`` argument or certificate file."""
from __future__ import annotations

import httpx
import pytest
import trustme
from websockets.sync.client import connect

from mockd import MockServer, ServerStartError, http, websocket

MOCKS = [http("GET", "/ping", body="pong", id="ping"), websocket("/echo", echo=True, id="echo")]


@pytest.fixture(scope="module")
def server():
    with MockServer(mocks=MOCKS, tls=True) as running:
        yield running


def test_https_with_the_generated_certificate(server: MockServer) -> None:
    assert server.url == f"https://127.0.0.1:{server.port}"
    assert server.ca_path is not None and server.ca_path.is_file()
    with server.client() as client:
        assert client.get("/ping").text == "pong"
    with server.requests_session() as session:
        assert session.get("/ping").text == "pong"
    server.verify("ping", times=2)


def test_a_client_without_the_ca_is_refused(server: MockServer) -> None:
    with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        httpx.get(server.url + "/ping", timeout=10)


def test_wss_with_the_server_ca(server: MockServer) -> None:
    url = server.url.replace("https://", "wss://") + "/echo"
    with connect(url, ssl=server.ssl_context(), proxy=None, open_timeout=10) as conn:
        conn.send("over tls")
        assert conn.recv(10) == "over tls"


def test_a_given_certificate_and_key(tmp_path) -> None:
    ca = trustme.CA()
    leaf = ca.issue_cert("127.0.0.1", "localhost")
    cert, key, ca_file = tmp_path / "cert.pem", tmp_path / "key.pem", tmp_path / "ca.pem"
    leaf.cert_chain_pems[0].write_to_path(str(cert))
    leaf.private_key_pem.write_to_path(str(key))
    ca.cert_pem.write_to_path(str(ca_file))
    with MockServer(mocks=MOCKS[:1], tls=(cert, key), tls_ca=ca_file) as server:
        assert server.ca_path == ca_file
        with server.client() as client:
            assert client.get("/ping").text == "pong"
    # The key of another certificate: a start error naming the file, nothing left running.
    other = ca.issue_cert("localhost")
    other.private_key_pem.write_to_path(str(key))
    broken = MockServer(tls=(cert, key), tls_ca=ca_file)
    with pytest.raises(ServerStartError, match="key.pem: does not match the certificate"):
        broken.start()
    assert not broken.running


@pytest.mark.parametrize(("options", "message"), [
    ({"tls": "yes"}, "tls: expected True, False or a"),
    ({"tls": True, "tls_ca": "ca.pem"}, "tls_ca: only with tls=\\(cert, key\\)"),
])
def test_bad_tls_arguments(options, message) -> None:
    with pytest.raises(TypeError, match=message):
        MockServer(**options)
