"""The data plane's WebSocket entry on a real server: upgrades reach the protocol handlers'
WebSocket routes through Channels' router; a path no mock serves is refused before accept."""
from __future__ import annotations

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

from tests.helpers import http_mock, make_config, start_engine, start_server

pytestmark = pytest.mark.integration


def test_upgrade_at_a_path_no_mock_serves_is_refused_with_403(tmp_path):
    config = make_config(http_mock("plain", "GET", "/plain", body="hi"))
    with start_engine(tmp_path, config) as engine:
        url = engine.base.replace("http://", "ws://") + "/plain"
        with pytest.raises(InvalidStatus) as refused:
            with connect(url, open_timeout=5):
                pass
        assert refused.value.response.status_code == 403
        with engine.client() as client:
            assert client.get("/plain").text == "hi"  # plain HTTP still reaches the mock
            assert client.get("/chat").status_code == 404


def test_full_mode_routes_websocket_scopes_too(tmp_path):
    with start_server(tmp_path, make_config(http_mock("a", "GET", "/a"))) as server:
        with pytest.raises(InvalidStatus) as refused:
            with connect(server.base.replace("http://", "ws://") + "/ws", open_timeout=5):
                pass
        assert refused.value.response.status_code == 403
