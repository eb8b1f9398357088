"""The proxy's Django-free core: the CA and its leaves, recording filters, body caps,
redaction of recordings, the SSE and WebSocket parsers, playback lookup, and the admin-side
manager's validation (caPath, start options).

Source: SPEC "Proxy", "Admin-side records" (redaction defaults); behavior notes §1.
"""
from __future__ import annotations

import base64
import ssl
import stat

import pytest
from cryptography import x509

from mocks.core.redaction import Redaction
from proxy.ca import ca_exists, fingerprint_of, generate_ca, load_ca
from proxy.manager import ProxyError, ProxyManager, relative_ca_dir
from proxy.playback import find_recording, playback_response
from proxy.recording import BodyTap, Filters, RecordingRedaction, SSEParser, WebSocketTap
from recordings.store import RecordingStore


def test_ca_generate_writes_a_private_key_and_loads_back(tmp_path):
    authority = generate_ca(tmp_path / "ca")
    assert stat.S_IMODE((tmp_path / "ca" / "ca.key").stat().st_mode) == 0o600
    loaded = load_ca(tmp_path / "ca")
    assert fingerprint_of(loaded.cert) == authority.info().fingerprint
    assert authority.info().organization == "mockd"
    assert ca_exists(tmp_path / "ca")
    with pytest.raises(FileExistsError):
        generate_ca(tmp_path / "ca")


def test_ca_leaf_verifies_against_the_ca_for_names_and_addresses(tmp_path):
    authority = generate_ca(tmp_path)
    for host, kind in (("api.example.com", x509.DNSName), ("127.0.0.1", x509.IPAddress)):
        leaf = authority.mint(host)
        leaf.verify_directly_issued_by(authority.cert)
        names = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert [str(value) for value in names.get_values_for_type(kind)] == [host]
    assert authority.server_context("a.test") is authority.server_context("A.test")
    assert isinstance(authority.server_context("b.test"), ssl.SSLContext)


def test_ca_load_rejects_a_key_of_another_ca(tmp_path):
    generate_ca(tmp_path / "one")
    generate_ca(tmp_path / "two")
    (tmp_path / "one" / "ca.key").write_bytes((tmp_path / "two" / "ca.key").read_bytes())
    from proxy.ca import CAError

    with pytest.raises(CAError, match="does not belong"):
        load_ca(tmp_path / "one")


@pytest.mark.parametrize("value", ["../x", "/abs", "a/../../b", "", "a\x00b", 5])
def test_relative_ca_dir_refuses_paths_leaving_the_data_dir(tmp_path, value):
    with pytest.raises(ProxyError) as raised:
        relative_ca_dir(tmp_path, value)
    assert raised.value.status == 400
    assert "caPath" in raised.value.message


def test_relative_ca_dir_refuses_a_symlink_out(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "link").symlink_to(tmp_path)
    with pytest.raises(ProxyError):
        relative_ca_dir(tmp_path / "data", "link/ca")
    assert relative_ca_dir(tmp_path / "data", "ca/sub") == (tmp_path / "data" / "ca" / "sub")


def test_filters_include_and_exclude_globs():
    filters = Filters.from_document({"includePaths": ["/api/*"], "excludePaths": ["/api/health"],
                                     "includeHosts": ["*.example.com"],
                                     "excludeHosts": ["ads.example.com"]})
    assert filters.records("API.example.com", "/api/users")
    assert not filters.records("api.example.com", "/api/health")
    assert not filters.records("api.example.com", "/web")
    assert not filters.records("ads.example.com", "/api/users")
    assert not filters.host_passes("other.org")
    assert Filters().records("any", "/thing")
    with pytest.raises(ValueError, match="includeHosts"):
        Filters.from_document({"includeHosts": "x"})
    with pytest.raises(ValueError, match="paths"):
        Filters.from_document({"paths": []})


def test_body_tap_keeps_the_cap_and_counts_everything():
    tap = BodyTap(5)
    for chunk in (b"abc", b"defg", b"hi"):
        tap.feed(chunk)
    assert tap.value() == b"abcde"
    assert tap.size == 9
    assert tap.truncated


def test_recording_redaction_of_url_form_and_json_bodies():
    redaction = RecordingRedaction(Redaction.from_settings(
        filter_body_keys=["password", "$.card.number"]))
    assert redaction.url("http://h/p?api_key=k&page=2") == \
        "http://h/p?api_key=[REDACTED]&page=2"
    form = redaction.body(b"user=a&password=b", {"Content-Type": ["application/x-www-form-"
                                                                  "urlencoded"]}, False)
    assert form == b"user=a&password=[REDACTED]"
    body = redaction.body(b'{"user": {"password": "p"}, "card": {"number": "4242"}}',
                          {"content-type": ["application/json"]}, False)
    assert b"4242" not in body and b'"p"' not in body
    assert redaction.body(b'{"password": "p"', {"content-type": ["application/json"]},
                          True) == b'{"password": "p"'
    assert redaction.headers({"Authorization": ["Basic abc"]}) == \
        {"Authorization": ["Basic [REDACTED]"]}


def test_sse_parser_across_chunks():
    parser = SSEParser()
    assert parser.feed(b"event: a\nid: 1\nda") == []
    assert parser.feed(b"ta: x\ndata: y\n\n: comment\n\ndata: z\r\n\r\n") == [
        ("a", "x\ny", "1"), (None, "z", "1")]


class _Recorder:
    def __init__(self):
        self.frames = []
        self.closed = None

    def websocket_frame(self, direction, frame_type, data):
        self.frames.append((direction, frame_type, data))

    def close(self, code=None, reason=""):
        self.closed = (code, reason)


def test_websocket_tap_records_messages_fragments_and_close():
    from wsproto.frame_protocol import FrameProtocol

    client = FrameProtocol(client=True, extensions=[])
    recorder = _Recorder()
    tap = WebSocketTap(recorder, "c2s")
    wire = client.send_data("hel", fin=False) + client.send_data("lo", fin=True) + \
        client.send_data(b"\x00\x01", fin=True) + client.ping(b"p") + client.close(1001, "bye")
    for index in range(0, len(wire), 3):  # byte by byte-ish
        tap.feed(wire[index:index + 3])
    assert recorder.frames == [("c2s", "text", "hello"), ("c2s", "binary", b"\x00\x01"),
                               ("c2s", "ping", b"p"), ("c2s", "close", "1001 bye")]
    assert recorder.closed == (1001, "bye")
    broken = WebSocketTap(_Recorder(), "c2s")
    broken.feed(b"\x81\x05hello")  # unmasked frame from a client
    assert broken.failed


def _record(store, session_id, method, url, path, body=b"", answer=b"ok"):
    store.add("http", {"request": {"method": method, "url": url, "path": path,
                                   "body": base64.b64encode(body).decode()},
                       "response": {"statusCode": 200, "statusText": "OK",
                                    "headers": {"Content-Type": ["text/plain"],
                                                "Transfer-Encoding": ["chunked"]},
                                    "body": base64.b64encode(answer).decode()}},
              session_id=session_id, columns={"method": method, "path": path, "status": 200})


def test_playback_prefers_exact_url_and_body_then_method_and_path():
    store = RecordingStore()
    older = store.create_session("s")["id"]
    _record(store, older, "GET", "http://h/a?x=1", "/a", answer=b"old-exact")
    current = store.create_session("s")["id"]
    _record(store, current, "POST", "http://h/a", "/a", b"one", b"first")
    _record(store, current, "POST", "http://h/a", "/a", b"two", b"second")
    found = find_recording(store, current, "s", "POST", "http://h/a", "/a", b"one")
    assert playback_response(found)[2] == b"first"
    found = find_recording(store, current, "s", "POST", "http://h/a", "/a", b"three")
    assert playback_response(found)[2] == b"second"  # newest of method + path
    found = find_recording(store, current, "s", "GET", "http://h/a?x=1", "/a", b"")
    assert playback_response(found)[2] == b"old-exact"  # a same-name session
    assert find_recording(store, current, "s", "DELETE", "http://h/a", "/a", b"") is None
    status, headers, _ = playback_response(found)
    names = [name.lower() for name, _ in headers]
    assert status == 200 and b"transfer-encoding" not in names
    assert b"content-length" in names


@pytest.mark.parametrize("body, code", [
    ({"port": 70000}, "port_error"), ({"port": "80"}, "port_error"),
    ({"mode": "spy"}, "invalid_mode"), ({"sessionName": ""}, "validation_error"),
    ({"filters": {"includePaths": [1]}}, "validation_error"),
    ({"fallthrough": "teapot"}, "validation_error"), ({"colour": 1}, "validation_error"),
    ({"insecureUpstream": "yes"}, "validation_error"),
    ({"upstreamCa": "/no/such/ca.pem"}, "validation_error"),
])
async def test_manager_start_validates_options(tmp_path, body, code):
    manager = ProxyManager(store=RecordingStore)
    with pytest.raises(ProxyError) as raised:
        await manager.start(body, data_dir=tmp_path)
    assert raised.value.code == code
    assert manager.server is None


async def test_manager_start_stop_runs_the_shutdown_hook_list(tmp_path):
    store = RecordingStore()
    manager = ProxyManager(store=lambda: store)
    hooks = []
    status = await manager.start({"port": 0, "sessionName": "u"}, data_dir=tmp_path,
                                 on_started=hooks.append)
    assert status["running"] and status["port"] > 0 and status["caEnabled"] is False
    assert store.get_session(status["sessionId"])["name"] == "u"
    assert manager.set_mode("playback")["mode"] == "playback"
    await hooks[0]()
    assert manager.status() == {"running": False}
    assert store.get_session(status["sessionId"])["endTime"] is not None
