"""WebSocket mocks in a full server: served under a workspace's base path, exported and
imported back through ``GET/POST /config`` unchanged, and robust to whatever frames a client
throws at them (hypothesis): the server keeps serving and no exception reaches the event
loop's handler."""
from __future__ import annotations

import time

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from tests.helpers import start_server

pytestmark = pytest.mark.integration

CHAT = {"id": "chat", "type": "websocket", "websocket": {
    "path": "/chat", "matchers": [
        {"match": {"type": "exact", "value": "ping"},
         "response": {"type": "text", "value": "pong"}},
        {"match": {"type": "json", "path": "$.n", "value": 1},
         "response": {"type": "json", "value": {"seen": "{{message.n}}"}}},
        {"match": {"type": "regex", "value": "(?i)^hello"},
         "response": {"type": "text", "value": "hi {{uuid}}", "delay": 5}}],
    "defaultResponse": {"type": "text", "value": "got {{message}}"},
    "maxMessageSize": 4096}}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    directory = tmp_path_factory.mktemp("ws-robust")
    with start_server(directory, {"version": "1.0", "mocks": [CHAT]}) as process:
        process.ws = process.base.replace("http://", "ws://")
        yield process


def test_mock_in_a_workspace_is_served_under_its_base_path(server):
    with httpx.Client(base_url=server.admin, timeout=10) as admin:
        workspace = admin.post("/workspaces", json={"name": "Games Team"}).json()
        created = admin.post("/mocks", params={"workspaceId": workspace["id"]}, json={
            "id": "lobby", "type": "websocket",
            "websocket": {"path": "/lobby", "echoMode": True}})
        assert created.status_code in (200, 201), created.text
    with connect(server.ws + "/games-team/lobby", open_timeout=10) as ws:
        ws.send("in the workspace")
        assert ws.recv(timeout=5) == "in the workspace"
    with httpx.Client(base_url=server.base, timeout=10) as data:
        assert data.get("/games-team/lobby").status_code == 404  # plain HTTP: no mock


def test_export_and_import_round_trip_keeps_websocket_mocks(server, tmp_path):
    with httpx.Client(base_url=server.admin, timeout=10) as admin:
        exported = admin.get("/config").json()
        [chat] = [mock for mock in exported["mocks"] if mock["id"] == "chat"]
        assert chat["type"] == "websocket" and chat["websocket"] == CHAT["websocket"]
        answer = admin.post("/config", json={"config": exported, "replace": True})
        assert answer.status_code == 200, answer.text
        again = admin.get("/config").json()
        [back] = [mock for mock in again["mocks"] if mock["id"] == "chat"]
        assert back["websocket"] == CHAT["websocket"]
    with connect(server.ws + "/chat", open_timeout=10) as ws:
        ws.send("ping")
        assert ws.recv(timeout=5) == "pong"


FRAMES = st.one_of(st.text(max_size=300), st.binary(max_size=300),
                   st.sampled_from(["ping", '{"n": 1}', '{"n": "1"}', "{", "hello", "HELLO x",
                                    "\x00", "[]", '{"n": [1]}']),
                   st.text(min_size=4097, max_size=4200))


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(frames=st.lists(FRAMES, min_size=1, max_size=8))
def test_random_frames_never_break_the_server(server, frames):
    try:
        with connect(server.ws + "/chat", open_timeout=10, close_timeout=2) as ws:
            for frame in frames:
                ws.send(frame)
                size = len(frame.encode() if isinstance(frame, str) else frame)
                if size > 4096:  # over maxMessageSize: closed with 1009
                    with pytest.raises(ConnectionClosed) as closed:
                        ws.recv(timeout=5)
                    assert closed.value.rcvd.code == 1009
                    break
                answer = ws.recv(timeout=5)
                assert isinstance(answer, str) and answer
    except ConnectionClosed as closed:  # only the size limit may close the connection
        pytest.fail(f"connection closed unexpectedly: {closed}")
    with connect(server.ws + "/chat", open_timeout=10) as ws:  # still serving
        ws.send("ping")
        assert ws.recv(timeout=5) == "pong"


def test_no_exception_reached_the_event_loop(server):
    time.sleep(0.3)
    log = server.log_path.read_text(errors="replace")
    for marker in ("Traceback", "exception was never retrieved", "Exception in ASGI"):
        assert marker not in log, log[-3000:]
