"""API key storage and checks, and the admin gateway (behavior notes §2, §3), without a
server: the gateway is driven as a plain ASGI app."""
from __future__ import annotations

import asyncio
import re
import stat

import pytest

from mockd_project import auth
from mockd_project.middleware import AdminGateway, loopback_origin
from mockd_project.runtime import runtime


def test_new_key_is_stored_0600_and_announced(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("MOCKD_API_KEY", raising=False)
    data_dir = tmp_path / "data"
    key = auth.load_or_create_api_key(data_dir)
    assert re.fullmatch(r"mk_[0-9a-f]{64}", key)
    path = data_dir / "admin-api-key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
    # captured stderr is not a terminal: the line names the file, never the key
    announced = capsys.readouterr().err
    assert f"Admin API key: stored in {path}" in announced and key not in announced
    assert auth.load_or_create_api_key(data_dir) == key  # read back, not regenerated


def test_environment_key_wins(tmp_path, monkeypatch):
    monkeypatch.setenv("MOCKD_API_KEY", "from-env")
    assert auth.load_or_create_api_key(tmp_path) == "from-env"
    assert not (tmp_path / "admin-api-key").exists()


@pytest.mark.parametrize("headers, query, expected", [
    pytest.param({b"x-api-key": b"k1"}, b"", "k1", id="X-API-Key"),
    pytest.param({b"authorization": b"Bearer k2"}, b"", "k2", id="bearer"),
    pytest.param({}, b"a=1&api_key=k3", "k3", id="query"),
    pytest.param({b"authorization": b"Basic abc"}, b"", None, id="basic is not a key"),
    pytest.param({}, b"", None, id="none"),
])
def test_presented_key_sources(headers, query, expected):
    assert auth.presented_key(headers, query) == expected


@pytest.mark.parametrize("path, method, exempt", [
    ("/health", "GET", True), ("/metrics", "GET", True), ("/ready", "GET", True),
    ("/", "GET", True), ("/static/app.js", "GET", True), ("/mocks", "OPTIONS", True),
    ("/mocks", "GET", False), ("/admin/api-key", "GET", False), ("/requests", "DELETE", False),
])
def test_exempt_paths(path, method, exempt):
    assert auth.is_exempt(path, method) is exempt


@pytest.mark.parametrize("origin, allowed", [
    (b"http://localhost:3000", True), (b"http://127.0.0.1", True), (b"https://[::1]:8443", True),
    (b"http://evil.example", False), (b"http://localhost.evil.example", False), (None, False),
])
def test_loopback_origins(origin, allowed):
    assert loopback_origin(origin) is allowed


async def _inner_app(scope, receive, send):
    message = await receive()
    body = message.get("body", b"")
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"echo:" + body})


def call(gateway, path="/mocks", method="GET", headers=None, body=b"", chunks=None):
    """Drive the gateway once; returns (status, headers dict, body)."""
    messages = ([{"type": "http.request", "body": chunk, "more_body": True} for chunk in chunks]
                + [{"type": "http.request", "body": b"", "more_body": False}]) if chunks else [
        {"type": "http.request", "body": body, "more_body": False}]
    sent = []

    async def receive():
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": method, "path": path, "query_string": b"",
             "headers": list((headers or {}).items()), "client": ("127.0.0.1", 1)}
    asyncio.run(gateway(scope, receive, send))
    start = sent[0]
    return (start["status"], dict(start["headers"]),
            b"".join(message.get("body", b"") for message in sent[1:]))


@pytest.fixture
def gateway(monkeypatch):
    monkeypatch.setattr(runtime, "api_key", "secret")
    return AdminGateway(_inner_app, auth_enabled=True, max_body_size=10, rate_per_second=0)


def test_gateway_answers_401_without_and_with_a_wrong_key(gateway):
    status, _, body = call(gateway)
    assert status == 401 and b'"missing_api_key"' in body
    status, _, body = call(gateway, headers={b"x-api-key": b"nope"})
    assert status == 401 and b'"invalid_api_key"' in body
    assert call(gateway, headers={b"authorization": b"Bearer secret"})[0] == 200


def test_gateway_adds_security_headers_to_every_answer(gateway):
    status, headers, _ = call(gateway, path="/health")
    assert status == 200
    assert headers[b"x-content-type-options"] == b"nosniff"
    assert headers[b"x-frame-options"] == b"DENY"
    assert headers[b"cache-control"] == b"no-store" and headers[b"vary"] == b"Origin"


def test_gateway_rejects_large_bodies_by_length_and_by_stream(gateway):
    key = {b"x-api-key": b"secret"}
    status, _, body = call(gateway, method="POST",
                           headers={**key, b"content-length": b"11"}, body=b"x" * 11)
    assert status == 413 and b"body_too_large" in body
    status, _, _ = call(gateway, method="POST", headers=key, chunks=[b"123456", b"789012"])
    assert status == 413
    assert call(gateway, method="POST", headers=key, chunks=[b"12", b"34"])[2] == b"echo:1234"


def test_gateway_cors_preflight(gateway):
    preflight = {b"access-control-request-method": b"POST"}
    status, headers, _ = call(gateway, method="OPTIONS",
                              headers={**preflight, b"origin": b"http://localhost:5173"})
    assert status == 200
    assert headers[b"access-control-allow-origin"] == b"http://localhost:5173"
    assert headers[b"access-control-max-age"] == b"86400"
    status, headers, _ = call(gateway, method="OPTIONS",
                              headers={**preflight, b"origin": b"http://evil.example"})
    assert status == 403 and b"access-control-allow-origin" not in headers


def test_gateway_rate_limit_answers_429(monkeypatch):
    monkeypatch.setattr(runtime, "api_key", None)
    limited = AdminGateway(_inner_app, auth_enabled=False, rate_per_second=1)
    statuses = [call(limited, path="/health")[0] for _ in range(4)]
    assert statuses[:2] == [200, 200] and statuses[-1] == 429
