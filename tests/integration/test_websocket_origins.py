"""WebSocket origins on a real ``mockd engine`` with the ``websockets`` client: an upgrade
whose ``Origin`` the data plane's CORS list refuses gets HTTP 403 before accept, on WebSocket
mocks and GraphQL subscriptions alike; no ``Origin`` (non-browser clients) is admitted
(behavior notes §4; docs/websocket.md "Origins")."""
from __future__ import annotations

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.helpers import make_config, start_engine

pytestmark = pytest.mark.integration

ECHO = {"id": "echo", "type": "websocket", "websocket": {"path": "/ws", "echoMode": True}}
GRAPHQL = {"id": "gql", "type": "graphql", "graphql": {
    "path": "/graphql", "schema": "type Query { hi: String } type Subscription { tick: Int }"}}
#: The WebSocket route of each protocol and the subprotocol its handshake needs.
ROUTES = [("/ws", None), ("/graphql", "graphql-transport-ws")]


def _status(base: str, path: str, subprotocol: str | None, origin: str | None) -> int:
    """101 when the upgrade is accepted, else the refusing HTTP status."""
    url = base.replace("http://", "ws://") + path
    try:
        with connect(url, origin=origin, open_timeout=5,
                     subprotocols=[subprotocol] if subprotocol else None) as socket:
            if subprotocol is None:
                socket.send("ping")
                assert socket.recv(timeout=5) == "ping"
            return socket.response.status_code
    except InvalidStatus as refused:
        return refused.response.status_code


def test_default_policy_admits_loopback_and_no_origin_and_refuses_foreign(tmp_path):
    with start_engine(tmp_path, make_config(ECHO, GRAPHQL)) as engine:
        for path, subprotocol in ROUTES:
            assert _status(engine.base, path, subprotocol, "https://evil.example") == 403, path
            assert _status(engine.base, path, subprotocol, "http://localhost:5173") == 101, path
            assert _status(engine.base, path, subprotocol, "http://127.0.0.1:8080") == 101, path
            assert _status(engine.base, path, subprotocol, None) == 101, path
        with engine.client() as client:
            # The refusal is WebSocket-only: plain HTTP from that origin is answered as before.
            answer = client.get("/nothing", headers={"Origin": "https://evil.example"})
        assert answer.status_code == 404


def test_configured_origins_replace_the_loopback_default(tmp_path):
    config = make_config(ECHO, serverConfig={"cors": {"allowOrigins": ["https://app.example"]}})
    with start_engine(tmp_path, config) as engine:
        assert _status(engine.base, "/ws", None, "https://app.example") == 101
        assert _status(engine.base, "/ws", None, "http://localhost:5173") == 403
        assert _status(engine.base, "/ws", None, "https://evil.example") == 403
        assert _status(engine.base, "/ws", None, None) == 101


def test_star_admits_any_origin(tmp_path):
    config = make_config(ECHO, serverConfig={"cors": {"allowOrigins": ["*"]}})
    with start_engine(tmp_path, config) as engine:
        assert _status(engine.base, "/ws", None, "https://anywhere.example") == 101
