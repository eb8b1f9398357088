"""The data plane's WebSocket entry checks ``Origin`` against the CORS origin list before any
handler sees the upgrade (behavior notes §4; docs/websocket.md "Origins")."""
from __future__ import annotations

from typing import Any

import pytest

from mocks.engine.core import Engine
from mocks.engine.cors import CorsPolicy
from mocks.engine.websocket import WebSocketRouterApp, upgrade_origin
from tests.helpers import asgi_upgrade, engine_with

ECHO = {"id": "echo", "type": "websocket", "websocket": {"path": "/ws", "echoMode": True}}
REFUSED = [{"type": "websocket.close", "code": 1008}]


async def _upgrade(engine: Engine, origin: str | None) -> list[dict[str, Any]]:
    headers = [(b"host", b"localhost:4280")]
    if origin is not None:
        headers.append((b"origin", origin.encode("latin-1")))
    return await asgi_upgrade(WebSocketRouterApp(engine), "/ws", headers)


def _engine(cors: CorsPolicy) -> Engine:
    engine = engine_with(ECHO)
    engine.cors = cors
    return engine


@pytest.mark.parametrize("cors, origin, admitted", [
    pytest.param(CorsPolicy(), None, True, id="no origin header"),
    pytest.param(CorsPolicy(), "http://localhost:5173", True, id="loopback name"),
    pytest.param(CorsPolicy(), "http://127.0.0.1:8080", True, id="loopback v4"),
    pytest.param(CorsPolicy(), "http://[::1]:3000", True, id="loopback v6"),
    pytest.param(CorsPolicy(), "https://evil.example", False, id="foreign"),
    pytest.param(CorsPolicy(), "null", False, id="opaque origin"),
    pytest.param(CorsPolicy({"allowOrigins": ["https://app.example"]}), "https://app.example",
                 True, id="configured"),
    pytest.param(CorsPolicy({"allowOrigins": ["https://app.example"]}),
                 "http://localhost:5173", False, id="configured list replaces loopback"),
    pytest.param(CorsPolicy({"allowOrigins": ["*"]}), "https://anywhere.example", True,
                 id="star"),
    pytest.param(CorsPolicy(origins=["https://flag.example"]), "https://flag.example", True,
                 id="cors-origins flag"),
    pytest.param(CorsPolicy({"enabled": False}), "https://evil.example", False,
                 id="disabled cors still refuses foreign"),
    pytest.param(CorsPolicy({"enabled": False}), "http://localhost:5173", True,
                 id="disabled cors still admits loopback"),
])
async def test_websocket_upgrade_origin_follows_the_cors_origin_list(cors, origin, admitted):
    sent = await _upgrade(_engine(cors), origin)
    if admitted:
        assert sent[0]["type"] == "websocket.accept"
    else:
        assert sent == REFUSED


def test_upgrade_origin_reads_the_header_or_none():
    assert upgrade_origin({"headers": [(b"origin", b"http://a.example")]}) == "http://a.example"
    assert upgrade_origin({"headers": [(b"host", b"x")]}) is None
    assert upgrade_origin({}) is None
