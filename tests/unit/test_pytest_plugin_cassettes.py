"""Cassettes of the pytest plugin (``mockd.cassettes``): file names, reading and writing,
converting recordings (an SSE answer once, as a stream mock), and the plugin module staying
light to import (it is loaded in every pytest session where mockd is installed)."""
from __future__ import annotations

import base64
import subprocess
import sys

import pytest

from mockd.cassettes import (CassetteError, cassette_name, convert_recordings, load_cassette,
                             write_cassette)


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _http(method: str, path: str, status: int, body: str,
          content_type: str = "application/json") -> dict:
    return {"request": {"method": method, "path": path, "url": f"http://api.test{path}",
                        "headers": {}, "body": ""},
            "response": {"statusCode": status, "headers": {"Content-Type": [content_type]},
                         "body": _b64(body)},
            "timestamp": "2026-11-27T10:00:00Z"}


@pytest.mark.parametrize(("node", "expected"), [
    ("test_users", "test_users.yaml"),
    ("test_get[user 1/2]", "test_get[user_1_2].yaml"),
    ("test_ünïcode", "test__n_code.yaml"),
    ("...", "test.yaml"),
])
def test_cassette_names_are_safe_file_names(node: str, expected: str) -> None:
    assert cassette_name(node) == expected


def test_a_long_name_is_cut() -> None:
    assert len(cassette_name("t" * 500)) == 205


def test_a_missing_cassette_says_to_record(tmp_path) -> None:
    with pytest.raises(CassetteError, match="--mockd-record"):
        load_cassette(tmp_path / "cassettes" / "test_x.yaml")


@pytest.mark.parametrize(("text", "message"), [
    ("mocks: [", "not valid YAML"),
    ("- 1\n- 2\n", "expected a mapping with a 'mocks' list"),
    ("mocks: 3\n", "expected a mapping with a 'mocks' list"),
])
def test_a_bad_cassette_is_refused(tmp_path, text: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(CassetteError, match=message):
        load_cassette(path)


def test_written_cassettes_read_back(tmp_path) -> None:
    fragment = convert_recordings([_http("GET", "/users/1", 200, '{"id": 1}'),
                                   _http("GET", "/users/2", 200, '{"id": 2}')], [])
    path = write_cassette(tmp_path / "cassettes" / "test_users.yaml", fragment)
    assert path.read_text().startswith("# Recorded by mockd --mockd-record")
    assert not list(path.parent.glob("*.partial"))
    mocks = load_cassette(path)
    assert mocks == fragment["mocks"]
    assert {mock["http"]["matcher"]["path"] for mock in mocks} == {"/users/1", "/users/2"}


def test_an_sse_answer_becomes_one_stream_mock() -> None:
    stream = {"id": "rec-1", "name": "GET http://api.test/events", "protocol": "sse",
              "metadata": {"path": "/events"},
              "sse": {"events": [{"type": "message", "data": "one", "relativeMs": 0.0},
                                 {"type": "tick", "data": "two", "id": "2",
                                  "relativeMs": 240.0}]}}
    fragment = convert_recordings(
        [_http("GET", "/events", 200, "data: one\n\n", "text/event-stream"),
         _http("GET", "/health", 200, '{"ok": true}')], [stream])
    paths = sorted(mock["http"]["matcher"]["path"] for mock in fragment["mocks"])
    assert paths == ["/events", "/health"]
    [sse] = [mock for mock in fragment["mocks"] if mock["http"]["matcher"]["path"] == "/events"]
    assert sse["http"]["sse"]["events"] == [{"data": "one", "delay": 0},
                                            {"type": "tick", "data": "two", "id": "2",
                                             "delay": 200}]
    assert "warnings" not in fragment


def test_an_empty_stream_is_left_out_with_a_warning() -> None:
    stream = {"id": "rec-2", "name": "empty", "protocol": "sse",
              "metadata": {"path": "/quiet"}, "sse": {"events": []}}
    fragment = convert_recordings([], [stream])
    assert fragment["mocks"] == []
    assert fragment["warnings"] == ["stream recording 'empty' left out: the recording has no "
                                    "events to convert"]


def test_the_plugin_imports_nothing_heavy() -> None:
    code = ("import sys, mockd.pytest_plugin\n"
            "heavy = [name for name in ('mockd.cassettes', 'mocks', 'proxy',"
            " 'recordings', 'httpx', 'yaml', 'uvicorn', 'django') if name in sys.modules]\n"
            "print(heavy)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60, check=True)
    assert result.stdout.strip() == "[]"


class _Server:
    """What MockdFixture reads of a server: its URL and CA."""

    url = "http://127.0.0.1:4100"
    ca_path = None


@pytest.mark.parametrize(("upstream", "recording", "base", "socket"), [
    ("ws://chat.test:81/", True, "http://chat.test:81", "ws://chat.test:81/chat"),
    ("wss://chat.test", True, "https://chat.test", "wss://chat.test/chat"),
    ("https://api.test", True, "https://api.test", "wss://api.test/chat"),
    ("https://api.test", False, "http://127.0.0.1:4100", "ws://127.0.0.1:4100/chat"),
])
def test_the_fixture_urls_while_recording_and_replaying(upstream, recording, base,
                                                        socket) -> None:
    from mockd.pytest_plugin import MockdFixture

    fixture = MockdFixture(_Server(), upstream=upstream, recording=recording)
    assert fixture.base_url == base
    assert fixture.websocket_url("chat") == socket
    assert fixture.ca_path is None and fixture.ssl_context() is True


def test_the_recording_ca_is_made_once_and_trusted_by_the_fixture(tmp_path) -> None:
    import ssl

    from mockd.cassettes import recording_ca
    from mockd.pytest_plugin import MockdFixture

    ca = recording_ca()
    assert recording_ca() is ca
    assert (ca.directory / "ca.crt").is_file() and (ca.directory / "ca.key").stat().st_mode \
        & 0o077 == 0
    fixture = MockdFixture(_Server(), upstream="https://api.test", recording=True)
    fixture.proxy_ca_path = ca.directory / "ca.crt"
    context = fixture.ssl_context()
    assert isinstance(context, ssl.SSLContext)
    assert any(cert["subject"] == ((("commonName", "mockd recording CA"),),
                                   (("organizationName", "mockd"),))
               for cert in context.get_ca_certs())
